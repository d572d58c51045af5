// Comparing an ONNX Runtime result with libtorch's: dtype, shape, values within rtol/atol, NaN and
// ±Inf at the same positions.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "torchonnx/verify.h"

namespace torchonnx::verification {

// `actual` (ONNX Runtime's) against `expected` (libtorch's). A quantized expected tensor is
// compared by its integer representation with an integer result and by its dequantized value
// otherwise; a complex one as its [..., 2] real pairs (the form the exporter gives it).
// Tolerances as VerifyOptions' (rtol, atol, atol_scale).
OutputCheck compare(const std::string& name, const at::Tensor& actual, const at::Tensor& expected,
                    const VerifyOptions& tolerance);

// The scale an output's absolute tolerance follows (VerifyOptions::atol_scale): the largest finite
// |expected|, at most 10x the median of its finite nonzero |expected| values; 0 when there are
// none.
double output_scale(const at::Tensor& expected);

// "float32", "int64", ... (ONNX's names).
std::string dtype_name(at::ScalarType type);

}  // namespace torchonnx::verification
