// Small building blocks the shape and slicing families share: a 1-D shape's parts, a Reshape to
// a constant shape, and how to tell an int argument from the others.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "symbolic/context.h"
#include "symbolic/helpers.h"

namespace torchonnx::symbolic::ops {

// Whether argument `v` is an int (not an int[], a Dimname or a Tensor): tells apart overloads of
// nodes that carry no schema.
inline bool is_int_type(const torch::jit::Value* v) {
  return v->type()->kind() == c10::TypeKind::IntType;
}

// Elements [start, end) of a 1-D shape tensor.
inline Value shape_part(GraphContext& g, const Value& shape, int64_t start, int64_t end) {
  return slice(g, shape, {0}, {start}, {end});
}

inline Value reshape_const(GraphContext& g, const Value& x, const std::vector<int64_t>& shape) {
  return g.op("Reshape", {x, g.constant_ints(shape)});
}

}  // namespace torchonnx::symbolic::ops
