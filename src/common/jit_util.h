// Small queries on TorchScript IR shared by the passes and the converters.
#pragma once

#include <cstddef>
#include <string>

namespace torch::jit {
struct Node;
struct Value;
}  // namespace torch::jit

namespace torchonnx {

// Whether `node` writes its input `i` (schema alias annotation `(a!)`, as in aten::append).
bool writes_input(const torch::jit::Node* node, size_t i);

// "file.py:12" of the node's TorchScript source range, or "" when the graph has none (errors and
// the doc_string of the ONNX nodes made from it name it).
std::string source_location(const torch::jit::Node* node);

// Whether some node writes `v` in place (then `v` is not a constant, whatever its initial value).
bool is_mutated(const torch::jit::Value* v);

}  // namespace torchonnx
