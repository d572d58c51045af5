// ONNX building blocks whose form changed across opsets, shared by the converter families.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "symbolic/context.h"

namespace torchonnx::symbolic {

// Unsqueeze/Squeeze: axes attribute before opset 13, input from 13.
Value unsqueeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes);
Value squeeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes);
// Split into pieces of `sizes` along `axis`: split attribute before 13, input from 13.
Values split(GraphContext& g, const Value& v, const std::vector<int64_t>& sizes, int64_t axis);
// ReduceX over `axes` (all axes when empty): ReduceSum takes axes as an input from 13, the others
// from 18.
Value reduce(GraphContext& g, const std::string& op, const Value& v,
             const std::vector<int64_t>& axes, bool keepdims);
// Clip to [min, max]: attributes before 11, inputs from 11 (either bound may be absent).
Value clip(GraphContext& g, const Value& v, std::optional<double> min, std::optional<double> max,
           at::ScalarType type);
// A dim index made non-negative for a tensor of `rank`.
int64_t normalize_dim(int64_t dim, int64_t rank);

}  // namespace torchonnx::symbolic
