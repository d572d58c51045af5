// Complex values carried as [..., 2] pairs (Note [Complex values] in ops/spectral.cpp): the
// conversion of nodes that read one.
#pragma once

#include "symbolic/context.h"
#include "symbolic/registry.h"

namespace torch::jit {
struct Node;
}

namespace torchonnx::symbolic::ops {

// The converter of `node` when it reads a complex value and has a complex form (abs, reshape,
// view, size, mul and div by a real tensor); `fn`, the registry's converter, otherwise.
Converter complex_form(const torch::jit::Node* node, Converter fn);

}  // namespace torchonnx::symbolic::ops
