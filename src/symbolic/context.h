// What a converter sees: GraphContext builds ONNX nodes (torch.onnx's `g`), Args reads the
// TorchScript node's arguments by schema position with typed accessors.
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/jit_util.h"
#include "onnx/ir.h"
#include "symbolic/onnx_features.h"
#include "symbolic/registry.h"

namespace torch::jit {
struct Block;
struct Node;
struct Value;
}  // namespace torch::jit

namespace torchonnx {
struct ExportConfig;
}

namespace torchonnx::symbolic {

struct GraphSignature;

class GraphContext {
 public:
  // `config` and `signature`: those of the export being converted (Note [One resolved
  // configuration] in common/export_config.h; the custom symbolics' context reads them); null for
  // a graph built outside an export.
  GraphContext(ir::Graph& graph, int opset, const ExportConfig* config = nullptr,
               const GraphSignature* signature = nullptr)
      : graph_(&graph), opset_(opset), config_(config), signature_(signature) {}

  int opset() const { return opset_; }
  // Whether the export's opset has `feature` (Note [ONNX features by opset]): what a lowering
  // that changes with the opset branches on.
  bool has(OnnxFeature feature) const { return opset_ >= onnx_feature_opset(feature); }
  const ExportConfig* config() const { return config_; }
  const GraphSignature* signature() const { return signature_; }

  // Adds a node of the default domain (or "domain::Type") with one output; returns its name.
  Value op(const std::string& type, const Values& inputs, ir::Attributes attributes = {});
  // The same with `num_outputs` outputs.
  Values op(const std::string& type, const Values& inputs, ir::Attributes attributes,
            size_t num_outputs);

  // Constants: a Constant node holding a copy of `tensor`.
  Value constant(const at::Tensor& tensor);
  Value constant_ints(const std::vector<int64_t>& values);   // 1-D int64
  Value constant_scalar(double value, at::ScalarType type);  // 0-d
  Value cast(const Value& v, at::ScalarType to);

  // The ONNX values bound to a TorchScript value (a tensor has one, a list one per element).
  const Values* lookup(const torch::jit::Value* v) const;
  void bind(const torch::jit::Value* v, Values values);
  // A list whose length is known only at run time, bound to one ONNX sequence value (opset 11+).
  void bind_sequence(const torch::jit::Value* v, const Value& sequence);
  bool is_sequence(const torch::jit::Value* v) const { return sequences_.count(v) > 0; }
  // An Optional value that may be None at run time (a branch or loop output of Optional type),
  // bound to one ONNX optional value (opset 15+, Note [Optional values] in ops/control.cpp).
  void bind_optional(const torch::jit::Value* v, const Value& optional);
  bool is_optional(const torch::jit::Value* v) const { return optionals_.count(v) > 0; }
  // A quantized tensor (made by quantize_per_tensor, a quantized:: op, or an aten op on quantized
  // inputs), bound to the output of a QuantizeLinear (ops/quantized.h).
  void mark_quantized(const torch::jit::Value* v) { quantized_.insert(v); }
  bool is_quantized(const torch::jit::Value* v) const { return quantized_.count(v) > 0; }
  // The scale (float) and zero point of quantized ONNX value `q` that no QuantizeLinear made (a
  // quantized graph input, Note [Quantized graph inputs and outputs] in ops/quantized.cpp).
  void set_qparams(const Value& q, const Value& scale, const Value& zero_point) {
    qparams_[q] = {scale, zero_point};
  }
  const std::pair<Value, Value>* qparams(const Value& q) const {
    auto it = qparams_.find(q);
    return it == qparams_.end() ? nullptr : &it->second;
  }

  // Control flow (Note [Control flow] in ops/control.cpp): converts the nodes of `block` into the
  // current graph; inside a SubgraphScope that is a subgraph, whose nodes may read any value
  // converted so far (ONNX's outer-scope references).
  void convert_block(const torch::jit::Block* block);
  void set_block_converter(std::function<void(GraphContext&, const torch::jit::Block*)> fn) {
    block_converter_ = std::move(fn);
  }

  // The node being converted, for error messages.
  const torch::jit::Node* current_node() const { return node_; }
  void set_current_node(const torch::jit::Node* node) { node_ = node; }
  // Throws ExportError(kConversion) naming the current node, its source location and the opset.
  [[noreturn]] void fail(const std::string& message) const;
  // Fails ("`what` needs opset N (`needs`). Remedy: export with opset >= N[, or `otherwise`]")
  // when the export's opset is below `opset`: for inputs only a newer opset can express (a size
  // computed at run time, a reduction ONNX added later). A requirement, not a lowering choice:
  // those go through registration ranges and the builders of symbolic/helpers.h.
  void require_opset(int opset, const std::string& what, const std::string& needs = "",
                     const std::string& otherwise = "") const;

  // The graph nodes are added to: the model's graph, or the subgraph being converted.
  ir::Graph& graph() { return *graph_; }
  std::string fresh_name(const std::string& hint);

 private:
  ir::Graph* graph_;
  int opset_;
  const ExportConfig* config_;
  const GraphSignature* signature_;
  const torch::jit::Node* node_ = nullptr;
  std::unordered_map<const torch::jit::Value*, Values> env_;
  std::unordered_map<std::string, int> name_counts_;
  std::unordered_set<const torch::jit::Value*> sequences_;
  std::unordered_set<const torch::jit::Value*> optionals_;
  std::unordered_set<const torch::jit::Value*> quantized_;
  std::unordered_map<Value, std::pair<Value, Value>> qparams_;
  // Bindings a subgraph made, undone when it is left: a list mutated in one branch keeps its
  // elements in the other branch and after the node (SubgraphScope).
  struct Binding {
    const torch::jit::Value* value;
    std::optional<Values> before;
    bool was_sequence;
    bool was_optional;
  };
  std::vector<std::vector<Binding>> undo_;
  void remember(const torch::jit::Value* v);
  std::function<void(GraphContext&, const torch::jit::Block*)> block_converter_;
  friend class SubgraphScope;
};

// Sends the nodes converters add to `body` while it lives (then back to the enclosing graph).
class SubgraphScope {
 public:
  SubgraphScope(GraphContext& g, ir::Graph& body)
      : g_(g), outer_(g.graph_), node_(g.current_node()) {
    g.graph_ = &body;
    g.undo_.emplace_back();
  }
  ~SubgraphScope() {
    g_.graph_ = outer_;
    g_.set_current_node(node_);
    auto log = std::move(g_.undo_.back());
    g_.undo_.pop_back();
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      if (it->before) {
        g_.env_[it->value] = std::move(*it->before);
      } else {
        g_.env_.erase(it->value);
      }
      if (it->was_sequence) {
        g_.sequences_.insert(it->value);
      } else {
        g_.sequences_.erase(it->value);
      }
      if (it->was_optional) {
        g_.optionals_.insert(it->value);
      } else {
        g_.optionals_.erase(it->value);
      }
    }
  }
  SubgraphScope(const SubgraphScope&) = delete;
  SubgraphScope& operator=(const SubgraphScope&) = delete;

 private:
  GraphContext& g_;
  ir::Graph* outer_;
  const torch::jit::Node* node_;
};

// The overload name of `node`'s schema, resolved when the node matches none exactly (Note
// [Overloads resolved once] in common/jit_util.h); "" for none or the unnamed overload.
std::string overload_name(const torch::jit::Node* node);

class Args {
 public:
  Args(GraphContext& g, const torch::jit::Node* node) : g_(g), node_(node) {}

  size_t size() const;
  const torch::jit::Node* node() const { return node_; }
  // The overload name of the schema the node matched ("Tensor_mode" of aten::div.Tensor_mode;
  // "" for the unnamed overload or a node without a schema).
  std::string overload() const { return overload_name(node_); }
  const torch::jit::Value* jit(size_t i) const;

  // --- values ---
  // Input i as an ONNX tensor (tensors as they are, constant scalars as 0-d constants).
  Value tensor(size_t i) const;
  // Input i as an ONNX tensor of element type `type` (constants are made in that type, other
  // values cast when their type differs).
  Value tensor_as(size_t i, at::ScalarType type) const;
  // The elements of a Tensor[] input (fails for a list of run-time length: is_sequence).
  Values tensor_list(size_t i) const;
  // The same, each element cast to `dtype` where its known dtype differs.
  Values tensor_list_as(size_t i, at::ScalarType dtype) const;
  // Whether input i is a list of run-time length, bound to an ONNX sequence.
  bool is_sequence(size_t i) const;
  // Input i (a Tensor[]) as an ONNX sequence of tensors of `dtype` (SequenceConstruct of a list of
  // static length, SequenceEmpty of an empty one).
  Value sequence(size_t i, at::ScalarType dtype) const;

  // --- constant arguments (ExportError when not constant) ---
  bool is_none(size_t i) const;
  bool is_constant(size_t i) const;
  c10::IValue constant(size_t i) const;
  int64_t int_arg(size_t i) const;
  double float_arg(size_t i) const;
  bool bool_arg(size_t i) const;
  std::string str_arg(size_t i) const;
  std::vector<int64_t> int_list(size_t i) const;
  std::optional<int64_t> optional_int(size_t i) const;
  std::optional<double> optional_float(size_t i) const;
  std::optional<std::vector<int64_t>> optional_int_list(size_t i) const;

  // --- types, from type propagation ---
  // Tensor dtype; for an int/float/bool scalar the dtype it has as a tensor (Long/Double/Bool).
  at::ScalarType dtype(size_t i) const;
  std::optional<std::vector<int64_t>> sizes(size_t i) const;
  // The size of dim `dim` (negative counts from the end) of tensor argument i when it is known at
  // export, also when other dims are dynamic.
  std::optional<int64_t> dim_size(size_t i, int64_t dim) const;
  std::optional<int64_t> rank(size_t i) const;
  int64_t require_rank(size_t i) const;  // fails with a clear message when unknown
  at::ScalarType output_dtype(size_t k = 0) const;
  std::optional<std::vector<int64_t>> output_sizes(size_t k = 0) const;

 private:
  GraphContext& g_;
  const torch::jit::Node* node_;
};

}  // namespace torchonnx::symbolic

namespace torchonnx::symbolic {
// A prim::Constant's value, or a list built by prim::ListConstruct from constants (nested); never
// a list mutated in place (append, ...).
std::optional<c10::IValue> constant_value(const torch::jit::Value* v);
// The element type a TorchScript type has in ONNX: a tensor's dtype, Long/Double/Bool for an
// int/float/bool; Undefined otherwise (or for a tensor of unknown dtype).
at::ScalarType dtype_of(const c10::TypePtr& type);
// Whether `v` is a Tensor[].
bool is_tensor_list(const torch::jit::Value* v);
// What the exporter knows of a value's ONNX type: a tensor's dtype and sizes (-1 unknown), an
// int/float/bool as a 0-d Long/Double/Bool tensor, a scalar list as a 1-D tensor, a tensor list as
// a sequence (its element dtype when type propagation found one).
ir::TypeInfo value_type(const torch::jit::Value* v);
using torchonnx::source_location;  // common/jit_util.h
}  // namespace torchonnx::symbolic
