// Small queries on TorchScript IR shared by the passes and the converters.
#pragma once

#include <cstddef>
#include <string>

namespace c10 {
struct FunctionSchema;
}  // namespace c10
namespace torch::jit {
struct Node;
struct Value;
}  // namespace torch::jit

namespace torchonnx {

// Note [Overloads resolved once]
// A node's overload is its schema's (Node::maybeSchema()). A node whose argument types match no
// schema exactly (a graph of an older PyTorch, a node a pass built with looser types) takes the
// first overload of its op, in libtorch's order, whose arguments fit its inputs by count and by
// kind (tensor, list, number, string, None for an Optional). The converters' side asks this one
// function: the dispatcher looks converters up by that overload, the doc_string names it, and
// converters read arguments by its positions, so they need not dispatch again by argument count
// or type. (writes_input below keeps maybeSchema(): a node matching no schema is taken to write
// none of its inputs, as before.)
// The schema of `node`'s overload (see the note), or nullptr when none fits.
const c10::FunctionSchema* node_schema(const torch::jit::Node* node);

// Whether `node` writes its input `i` (schema alias annotation `(a!)`, as in aten::append).
bool writes_input(const torch::jit::Node* node, size_t i);

// "file.py:12" of the node's TorchScript source range, or "" when the graph has none (errors and
// the doc_string of the ONNX nodes made from it name it).
std::string source_location(const torch::jit::Node* node);

// Whether some node writes `v` in place (then `v` is not a constant, whatever its initial value).
bool is_mutated(const torch::jit::Value* v);

// Note [Identity at export]
// `a is b` between two values that are never None (tensors, modules, tuples: MultiheadAttention's
// `query is key` self-attention check) is decided at export: the same TorchScript value (through
// the refinements prim::unchecked_cast makes) is the same object; two different values are taken
// as different objects. That is exact for values computed apart, and for two graph inputs the
// export keeps them apart (two ONNX inputs), so the path taken for different objects is the one
// that computes right for any inputs — the fast paths these checks guard compute the same.
// Whether `a` and `b` are known to be the same object (see the note).
bool same_object(const torch::jit::Value* a, const torch::jit::Value* b);
// Whether `v`'s type excludes None (not None, Optional or Any).
bool never_none(const torch::jit::Value* v);

// Note [Scalars recorded as tensors]
// The tracer records a Python number of the model (`x * 1.5 + 1`) as a 0-d tensor constant
// (Double or Long). Eager PyTorch computes with the number as a wrapped number, which takes part
// in type promotion by its category only (int64 * 1.5 is float32), and so does libtorch's
// optimizing graph executor; the graph run as saved promotes a 0-d float64 tensor constant fully
// (int64 * 1.5 would be float64). Here, as in torch.onnx's scalar type analysis, a 0-d tensor
// constant is a wrapped number: the export and the reference run (frontend::run_module) both
// compute what eager PyTorch computes.
// Marks the 0-d tensor constants of `block` and its sub-blocks as wrapped numbers (on a copy of
// the constant's tensor: the module's own graph keeps its tensor).
void wrap_scalar_constants(torch::jit::Block* block);

}  // namespace torchonnx
