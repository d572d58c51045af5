// Small queries on TorchScript IR shared by the passes and the converters.
#pragma once

#include <cstddef>

namespace torch::jit {
struct Node;
struct Value;
}  // namespace torch::jit

namespace torchonnx {

// Whether `node` writes its input `i` (schema alias annotation `(a!)`, as in aten::append).
bool writes_input(const torch::jit::Node* node, size_t i);

// Whether some node writes `v` in place (then `v` is not a constant, whatever its initial value).
bool is_mutated(const torch::jit::Value* v);

}  // namespace torchonnx
