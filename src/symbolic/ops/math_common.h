// Helpers the math families share (math.cpp, polynomial.cpp).
#pragma once

#include <ATen/ATen.h>

#include <cstddef>

#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

// The floating dtype a float function of inputs [0, n) computes in: the node's result dtype,
// else the promoted inputs' (integers and bools: float, the default dtype).
at::ScalarType float_type(GraphContext& g, const Args& a, size_t n = 1);

// x == 0 (false for NaN) with Less/Greater, which take every numeric type at every opset.
Value is_zero(GraphContext& g, const Value& x, at::ScalarType type);

// a == b for floating a, b (false where either is NaN; a + b is NaN only then, as a + b = inf -
// inf needs a != b).
Value equal_floats(GraphContext& g, const Value& a, const Value& b);

// x == v for a floating x (false for NaN).
Value x_equals(GraphContext& g, const Value& x, double v, at::ScalarType type);

// a mod b for integers a >= 0, b > 0 at every opset (Mod only from 10): a - (a / b) · b, Div
// truncating.
Value nonnegative_mod(GraphContext& g, const Value& a, const Value& b);

}  // namespace torchonnx::symbolic::ops
