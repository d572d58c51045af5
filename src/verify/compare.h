// Comparing an ONNX Runtime result with libtorch's: dtype, shape, values within rtol/atol, NaN and
// ±Inf at the same positions.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

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

// The outputs `actual` (ONNX Runtime's) and `expected` (libtorch's) as detection records
// (VerifyOptions::detections): the per-detection outputs (dim 0 equal to the first expected
// output's N) are matched and compared, their checks stored at their index in `checks` (sized to
// the outputs); the others are left for compare(). Names as in `checks`.
DetectionMatch compare_detections(const std::vector<at::Tensor>& actual,
                                  const std::vector<at::Tensor>& expected,
                                  const VerifyOptions& tolerance, std::vector<OutputCheck>& checks);

// "float32", "int64", ... (ONNX's names).
std::string dtype_name(at::ScalarType type);

}  // namespace torchonnx::verification
