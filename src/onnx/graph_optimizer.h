// The optimizer of onnx/optimize.cpp (Note [Graph optimization]): one forward sweep over a graph's
// nodes that shares its bookkeeping (use counts, producers, aliases, known constants and types)
// between the rewrites. The class is declared here and defined by job:
//   optimize.cpp        the sweep, its bookkeeping and the rebuilding of the graph (dead code,
//                       folded constants stored once)
//   peephole.cpp        the peepholes (Identity, Dropout, BatchNormalization into Conv, Cast,
//                       Transpose, Reshape, Squeeze/Unsqueeze, Expand chains, MatMul+Add → Gemm)
//   fold_constants.cpp  constant folding and the op evaluator it uses
//   infer_shapes.cpp    the light dtype/shape inference along the sweep
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/ir.h"
#include "onnx/node_util.h"
#include "onnx/optimize.h"

namespace torchonnx::optimizer {

// A folded tensor may always be this large; beyond, only as large as the constants it frees.
constexpr int64_t kSmallFoldBytes = 64 * 1024;

class GraphOptimizer {
 public:
  // `outer` is the optimizer of the graph that holds this subgraph (nullptr for the main graph):
  // a subgraph reads the outer constants known when the sweep reaches its node.
  GraphOptimizer(ir::Graph& g, const OptimizeOptions& options, int opset,
                 const GraphOptimizer* outer, std::unordered_set<std::string>& names)
      : g_(g),
        options_(options),
        opset_(opset),
        outer_(outer),
        main_(outer == nullptr),
        names_(names) {}

  void run();
  // Types the values of a converted graph (and of its subgraphs) that the converters did not:
  // the shape rules' types, recorded in ir::Graph::rule_types (type_values in optimize.h).
  void type_values();

 private:
  // ---- bookkeeping (optimize.cpp) ----
  void index();
  std::string fresh(const std::string& base);
  const ir::Node* producer(const std::string& v) const;
  // The producer of `v` when `v` is read only once (by the node being simplified) and may go.
  const ir::Node* sole_producer(const std::string& v, const char* op) const;
  const at::Tensor* constant(const std::string& v) const;
  const ir::TypeInfo* type(const std::string& v) const;
  void release(const std::string& v);
  void remove(size_t i);
  // Node i computes the same as `to`: later readers of its output read `to` instead.
  bool replace_by(size_t i, const std::string& to);
  void set_input(ir::Node& n, size_t k, const std::string& v);
  // A new constant (an initializer of the main graph, a Constant node of a subgraph).
  std::string add_constant(const std::string& base, at::Tensor t);
  void record_constant(const std::string& name, at::Tensor t);
  // ---- rebuilding the graph (optimize.cpp) ----
  void finish();
  // The nodes and output Identities that replace If node `n` when its condition is a constant
  // (Note [If of a constant condition]); false when `n` is not such an If.
  bool inline_constant_if(ir::Node& n, std::vector<ir::Node>& nodes);

  // ---- before the sweep (peephole.cpp) ----
  void fold_gemm_transposes();

  // ---- peepholes (peephole.cpp): true when node i was removed ----
  bool simplify(size_t i);
  bool drop_dropout(size_t i);
  bool fold_batch_norm(size_t i);
  bool simplify_cast(size_t i);
  bool simplify_transpose(size_t i);
  bool simplify_reshape(size_t i);
  bool simplify_squeeze(size_t i);
  bool simplify_expand(size_t i);
  bool fuse_gemm(size_t i);

  // ---- constant folding (fold_constants.cpp) ----
  bool fold(size_t i);

  // ---- light type inference (infer_shapes.cpp) ----
  void set_type(const std::string& name, at::ScalarType dtype, std::optional<Shape> shape);
  void infer(const ir::Node& n);
  // The types of n's outputs in the sweep: those recorded when conversion ended
  // (ir::Graph::value_types, rule_types), or inferred again when `changed` (the sweep rewrote n)
  // or when a rewrite changed what n reads (changed_reads).
  void type_outputs(const ir::Node& n, bool changed);
  // n's outputs that type propagation typed take those types; true when its first output is one.
  bool propagated_types(const ir::Node& n);
  // Whether the sweep changed the type or the constness of a value n reads since conversion.
  bool changed_reads(const ir::Node& n) const;
  // The type value `v`, made by a node of this graph, had when conversion ended (nullopt:
  // unknown).
  std::optional<ir::TypeInfo> converted_type(const std::string& v) const;
  // A value this graph's sweep or an enclosing graph's folded into a constant.
  bool is_folded(const std::string& v) const;
  std::optional<std::vector<int64_t>> perm_of(const ir::Node& n) const;
  // The shape a Reshape gives, with 0s resolved and -1 computed when the input shape is known.
  std::optional<Shape> reshape_target(const ir::Node& n) const;

  ir::Graph& g_;
  const OptimizeOptions& options_;
  int opset_;
  const GraphOptimizer* outer_;
  bool main_;
  std::unordered_set<std::string>& names_;

  std::vector<bool> removed_;
  std::unordered_map<std::string, int64_t> uses_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::string> alias_;
  std::unordered_set<std::string> protected_;
  std::unordered_set<std::string> graph_inputs_;
  std::unordered_set<std::string> graph_outputs_;
  std::unordered_map<size_t, std::vector<std::string>> subgraph_reads_;
  std::unordered_map<std::string, at::Tensor> consts_;
  std::unordered_map<std::string, ir::TypeInfo> types_;
  std::vector<std::string> folded_;
  std::unordered_set<std::string> folded_names_;
  // Nodes (by name) a rewrite before the sweep changed (fold_gemm_transposes).
  std::unordered_set<std::string> touched_;
};

}  // namespace torchonnx::optimizer
