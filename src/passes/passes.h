// Passes over the TorchScript graph that prepare it for conversion. One pass per file; the order is
// in pipeline.cpp. Every pass takes the graph and mutates it in place.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/named_parameter.h"

namespace torch::jit {
struct Graph;
struct Module;
struct Node;
struct Value;
}  // namespace torch::jit

namespace torchonnx {

namespace passes {

// Removes the nodes no graph output depends on that have no side effects, as
// torch::jit::EliminateDeadCode does, in linear time where it can (Note [Linear dead code
// elimination]) and without an AliasDb where the graph mutates nothing (Note [Dead code
// elimination without AliasDb]).
void RemoveDeadNodes(const std::shared_ptr<torch::jit::Graph>& graph);

// Replaces `prim::GetAttr` chains that start at `self` (graph input 0) with new graph inputs, one
// per distinct tensor, named by its state_dict path ("features.0.weight"); non-tensor attributes
// become constants. Erases the `self` input. Returns the lifted tensors in graph-input order.
//
//   %features = prim::GetAttr[name="features"](%self)      graph(%x, %features.0.weight):
//   %w = prim::GetAttr[name="weight"](%0)            ⇒       %y = aten::relu(%features.0.weight)
std::vector<NamedParameter> LiftModuleAttributes(torch::jit::Graph& graph,
                                                 const torch::jit::Module& module);

// Makes the graph functional: every in-place write (add_, index_put_, copy_, fill_, ... also
// through views such as x[0] or x[:, 1:3]) becomes its out-of-place form, written back into the
// view's base (select_scatter, slice_scatter, ...), and later reads take the new values. Throws
// ExportError for writes it cannot make exact. Note [Removing in-place ops].
void RemoveInplaceOps(torch::jit::Graph& graph);

// Makes every list mutation (append, insert, pop, l[i] = v, ...) produce a new list value,
// `aten::list(l)` after the mutating node, which later reads read instead (also across loop and
// if blocks, Note [Mutation in control flow]).
void FunctionalizeLists(torch::jit::Graph& graph);

// Makes the reads of `old_value` after `anchor` read `new_value`; when `anchor` is in a block
// nested below `old_value`'s, threads `new_value` out through the blocks' outputs (If outputs,
// Loop-carried values). Note [Mutation in control flow] in thread_mutations.cpp.
void ReplaceUsesAfter(torch::jit::Graph& graph, torch::jit::Value* old_value,
                      torch::jit::Value* new_value, torch::jit::Node* anchor);

// Resolves the variables of `graph` (prim::Store and prim::Load nodes, named by attr::name; each
// variable of the type `types` gives) into SSA values: a variable stored in an If branch or a Loop
// body and defined outside it becomes an If output or a loop-carried value, and each load reads
// the value last stored in its scope. Erases the loads and stores. With `at_entry`, every variable
// is defined before the graph's first node: a load that no store reaches reads at_entry(name),
// called once per variable. Note [Mutation in control flow].
void ResolveVariables(torch::jit::Graph& graph, const std::map<std::string, c10::TypePtr>& types,
                      const std::function<torch::jit::Value*(const std::string&)>& at_entry = {});

// Replaces each `for` loop with a constant trip count (at most 256) that computes no tensor — a
// list or number built in a loop, as F.interpolate's scale factors — or that iterates over a
// constant list (`for p in [[0, 1], [1, 0]]`) by its body repeated, so that a type propagation
// run after it folds the results. Whether any loop was unrolled. Note [Unrolling foldable loops].
bool UnrollFoldableLoops(torch::jit::Graph& graph);

// Resolves the reads of dicts built with constant keys and read with constant keys (d["a"],
// "a" in d, len(d), d.get("a", default)) and removes the dicts: ONNX has no dict type. Note
// [Dicts with constant keys].
void LowerConstantKeyDicts(torch::jit::Graph& graph);

// Splits each tuple output of an If, and each tuple a Loop carries, into one value per element,
// rebuilt after the node, so that LowerSimpleTuples forwards the elements (Note [Tuples out of
// branches]). Whether any was.
bool LowerBranchTuples(torch::jit::Graph& graph);

// Replaces a nested tensor packed from a padding mask (a scripted nn.TransformerEncoder's fast
// path) by the padded tensor, the mask passed to the encoder layers as a key padding mask, and
// zeros where it is padded back. Note [Nested tensors from a padding mask].
void LowerNestedFromMask(torch::jit::Graph& graph);

// Splits each If output that is a list of tensors both branches build with the same number of
// elements into its elements, the list built again after the If. Whether any was. Note [Lists
// out of branches].
bool LowerBranchLists(torch::jit::Graph& graph);

// Resolves the reads of lists of lists whose contents are known at export (built by ListConstruct
// and appends in straight-line code: a stacked RNN's per-layer states) to their inner lists, makes
// a returned one its inner lists, and removes them. Whether any was. Note [Lists of lists].
bool LowerNestedLists(torch::jit::Graph& graph);

// Forwards the readers of prim::unchecked_cast of a tuple-typed value to the value, so that
// LowerSimpleTuples sees them (Note [Tuple refinements]).
void ForwardTupleCasts(torch::jit::Block* block);

// Drops ops that do nothing at inference: dropout with train=False, detach, contiguous, clone, ...
void RemoveEvalNoOps(torch::jit::Graph& graph);

// Makes the graph's outputs a flat list of tensors/scalars: tuples, lists and dict values are
// expanded in order. None outputs are dropped, as torch.onnx drops them, unless `keep_none`
// (opset 15+, where torch.onnx returns a scripted model's None as an empty optional). With
// `keep_tensor_lists` (opset 11+), a list of tensors built by ListConstruct stays one output, an
// ONNX sequence, as torch.onnx returns a ScriptModule's list (a graph the exporter traced returns
// a tuple: torch.onnx's tracing and frontend::capture_trace flatten the outputs).
void FlattenOutputs(torch::jit::Graph& graph, bool keep_none = false,
                    bool keep_tensor_lists = false);

// Drops the outputs that are None constants (an Optional that type propagation found None), as
// FlattenOutputs without keep_none does.
void DropNoneOutputs(torch::jit::Graph& graph);

// Gives every value a complete type by running each node on meta tensors (no arithmetic on weights)
// starting from `inputs` (one per graph input). Values computable from constants and static shapes
// (x.size(0), arithmetic on them, shape lists) become constants when `fold` is set.
// `dynamic` maps graph input indices to their dynamic dims (dynamic_axes): values computed from
// those dims are never folded, and those dims are unknown in the types (Note [Dynamic axes]).
using DynamicDims = std::map<size_t, std::vector<int64_t>>;
void PropagateTypes(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs, bool fold,
                    const DynamicDims& dynamic = {});

}  // namespace passes
}  // namespace torchonnx
