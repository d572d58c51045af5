// What the files of the type propagation share (Note [Type propagation on meta tensors] in
// src/passes/propagate_types.cpp). The Propagator is declared here and defined by job:
//   propagate_types.cpp   the pass's entry point; the walk over the nodes, the facts it records
//                         and the folding of known values
//   type_propagation/
//     meta_eval.cpp       running one node on meta tensors, the zeros fallback and the
//                         process-wide memory of ops without a meta kernel
//     shape_rules.cpp     output sizes of ops that have no meta kernel
//     control_flow.cpp    If and Loop: merged branches, the loop's fixed point and the inlining
//                         of a branch whose condition is known
//     dynamic_shadow.cpp  the dynamic-axes shadow runs (Note [Dynamic axes])
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/passes.h"
#include "passes/type_propagation/value_maps.h"

namespace torchonnx::passes::type_propagation {

using torch::jit::Node;
using torch::jit::Value;

// A set of op kinds, interned once: per-node lookups hash a Symbol instead of building and hashing
// the qualified name's std::string.
using SymbolSet = std::unordered_set<c10::Symbol>;
SymbolSet symbols(std::initializer_list<const char*> names);

// ---- meta_eval.cpp ----
// `v` with its tensors on the meta device (quantized tensors stay real).
c10::IValue to_meta(const c10::IValue& v);
// _shape_as_tensor and prim::shape (Note [Shapes as tensors]).
bool is_shape_tensor(const Node* node);
bool holds_tensor(const c10::IValue& v);
// The value of ops decided at export (grad mode, autocast, nested tensors): Note [Facts known at
// export]; nullopt for other ops.
std::optional<bool> known_at_export(const Node* node);
// Whether `v` is or holds (in lists and tuples) a tensor on the meta device.
bool holds_meta_tensor(const c10::IValue& v);
// Ops that read only the rank, dtype or device of their tensor input.
bool reads_rank_or_dtype(const Node* node);
// A list value of its own (list ops mutate the list they are given).
c10::IValue copy_list(const c10::IValue& v);

// ---- shape_rules.cpp ----
// The output of a convolution on a meta input, from the sizes of its input and weight: false when
// `stack` is not that; throws when the arguments do not fit.
bool apply_convolution_rule(const Node* node, torch::jit::Stack& stack);
// In a shadow run, gives a convolution's meta input the channels its weight takes (Note
// [Channels of a convolution]).
void fit_convolution_channels(const Node* node, torch::jit::Stack& stack);
// Shape rules for common ops without a meta kernel: replaces the inputs on `stack` by meta
// outputs; false when `node` has none or its inputs do not fit.
bool apply_shape_rule(Node* node, torch::jit::Stack& stack);
// Results of split and cat on placeholders that disagree (Note [Placeholders that disagree]).
bool split_placeholders(const Node* node, const torch::jit::Stack& inputs,
                        torch::jit::Stack& outputs);

// What a shadow run found about one value: whether it varies with the dynamic axes, and which
// dims of a tensor do (Note [Varying in another shadow run]).
struct VaryInfo {
  bool varies = false;
  std::vector<bool> unknown_dims;
};

struct Propagator {
  torch::jit::Graph& graph;
  bool fold;
  ValueMap env{};
  ValueSet concrete{};     // content known, not just type
  ValueSet approximate{};  // dtype and rank known, sizes not
  // Note [Maybe None]: Optional values that are None on one path (branch, iteration) and
  // something else on another; `env` holds what they are when not None (approximate).
  ValueSet maybe_none{};
  // Note [Dynamic axes]: values that vary with the dynamic axes, with what they are when those
  // axes have other sizes (None: not known, every dim of a tensor varies).
  ValueMap shadow{};
  int shadow_failures = 0;
  // Depth of inline_taken_branch, and the constants that replaced outputs folded inside it.
  int inlining = 0;
  std::unordered_map<Value*, Value*> folded_to{};
  // Note [Varying in another shadow run]: what other shadow runs found varying, by value.
  std::unordered_map<const Value*, VaryInfo> forced{};
  // The example inputs' real values, by graph input (Note [Running on the example values]).
  std::unordered_map<const Value*, at::Tensor> examples{};
  // Node visits left for loops run iteration by iteration (Note [Loops of a known trip count]).
  int64_t exact_loop_budget = 50000;

  // Complete tensor types by dtype, sizes and strides: most values share a few, and building
  // one (TensorType::create works out strides' order and contiguity) costs several allocations.
  // Types are immutable, so values may share one.
  struct TypeKeyHash {
    size_t operator()(const std::vector<int64_t>& key) const {
      size_t h = key.size();
      for (int64_t k : key) h = h * 1000003u ^ static_cast<size_t>(k);
      return h;
    }
  };
  std::unordered_map<std::vector<int64_t>, c10::TensorTypePtr, TypeKeyHash> tensor_types{};
  std::vector<int64_t> type_key{};  // reused: no allocation per lookup

  // ---- propagate_types.cpp: the walk and its facts ----
  void reserve(size_t uniques);
  bool foldable(Value* v) const;
  void set_tensor_type(Value* v, const at::Tensor& t);
  void record(Value* v, c10::IValue value, bool is_concrete, bool is_approximate = false);
  void forget(Value* v);
  void record_maybe_none(Value* v, const c10::IValue& some);
  static std::optional<c10::IValue> placeholder(const Value* v);
  void run_block(torch::jit::Block* block);
  void visit_or_inline(Node* node);
  void visit(Node* node);
  void visit_isinstance(Node* node);
  void fold_outputs(Node* node);

  // ---- meta_eval.cpp: running one node ----
  bool sizes_from_known_values(const Node* node) const;
  bool exact_on_zeros(const Node* node, bool all_concrete, const torch::jit::Stack& inputs) const;
  bool run_on_examples(Node* node, const torch::jit::Stack& zeros, torch::jit::Stack& stack,
                       const ValueMap& values);
  void execute(Node* node, torch::jit::Stack& stack, const torch::jit::Stack& inputs,
               bool all_concrete, bool& approx, bool& shapes_exact, const ValueMap& values);
  bool shapes_independent_of_scalars(Node* node, const torch::jit::Stack& inputs,
                                     const torch::jit::Stack& outputs);

  // ---- control_flow.cpp ----
  void visit_if(Node* node);
  void visit_loop(Node* node);
  std::optional<int64_t> exact_trip_count(Node* node);
  std::optional<std::vector<c10::IValue>> run_iterations(Node* node, int64_t trips);
  std::string signature(const c10::IValue& v, bool approx) const;
  bool same_signature(Value* in, Value* out) const;
  void widen(Value* in, Value* out);
  void merge_into(Value* out, Value* a, Value* b);
  void merge_values(Value* out, Value* a, Value* b);
  void forget_destroyed(Node* node);
  std::vector<Value*> inline_taken_branch(Node* node);

  // ---- dynamic_shadow.cpp ----
  void set_shadow(Value* v, c10::IValue value);
  bool picks_from_varying_list(Node* node) const;
  static std::optional<c10::IValue> union_of_elements(const at::Tensor& element,
                                                      const std::vector<c10::IValue>& lists);
  bool forced_varies(const Value* v) const;
  void apply_forced(Value* v);
  void copy_shadow(Value* to, Value* from);
};

// The sizes a dynamic input has in a shadow run: `sizes` with its dynamic `dims` changed.
using ShadowSizes =
    std::function<std::vector<int64_t>(std::vector<int64_t>, const std::vector<int64_t>&)>;

// Propagates over `graph`, with the dynamic dims of the inputs given other sizes by
// `shadow_sizes`; returns the number of nodes the shadow run failed on. `forced`: values that
// vary in other shadow runs (in the order of collect_values); `found`: receives what this run
// found varying. (propagate_types.cpp)
int propagate(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs, bool fold,
              const DynamicDims& dynamic, const ShadowSizes& shadow_sizes,
              const std::vector<VaryInfo>* forced = nullptr,
              std::vector<VaryInfo>* found = nullptr);

// Propagates over `graph` with shadow runs for its dynamic axes (Note [Dynamic axes]).
// (dynamic_shadow.cpp)
void propagate_with_shadows(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs,
                            bool fold, const DynamicDims& dynamic);

}  // namespace torchonnx::passes::type_propagation
