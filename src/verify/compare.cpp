#include "verify/compare.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>

namespace torchonnx::verification {

std::string dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    case at::kLong:
      return "int64";
    case at::kInt:
      return "int32";
    case at::kShort:
      return "int16";
    case at::kChar:
      return "int8";
    case at::kByte:
      return "uint8";
    case at::kBool:
      return "bool";
    default:
      return c10::toString(type);
  }
}

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  return shape.empty() ? "scalar" : fmt::format("{}", fmt::join(shape, "x"));
}

}  // namespace

OutputCheck compare(const std::string& name, const at::Tensor& actual,
                    const at::Tensor& expected_in, const VerifyOptions& tolerance) {
  const double rtol = tolerance.rtol;
  OutputCheck c;
  c.name = name;
  at::Tensor expected = expected_in;
  if (expected.is_quantized()) {
    expected =
        at::isFloatingType(actual.scalar_type()) ? expected.dequantize() : expected.int_repr();
  } else if (expected.is_complex()) {
    expected = at::view_as_real(expected.resolve_conj());
  }
  c.shape = actual.sizes().vec();
  c.expected_shape = expected.sizes().vec();
  c.dtype = dtype_name(actual.scalar_type());
  c.expected_dtype = dtype_name(expected.scalar_type());
  if (c.shape != c.expected_shape) {
    c.note = fmt::format("shape {} instead of libtorch's {}", shape_text(c.shape),
                         shape_text(c.expected_shape));
    c.mismatched = std::max(actual.numel(), expected.numel());
    return c;
  }
  if (c.dtype != c.expected_dtype) {
    c.note = fmt::format("dtype {} instead of libtorch's {}", c.dtype, c.expected_dtype);
  }
  const at::Tensor a = actual.to(at::kDouble);
  const at::Tensor e = expected.to(at::kDouble);
  const at::Tensor finite = at::isfinite(a) & at::isfinite(e);
  // NaN where libtorch has NaN, the same infinity where it has one.
  const at::Tensor special_ok = (at::isnan(a) & at::isnan(e)) | (at::isinf(e) & (a == e));
  const at::Tensor misplaced = ~finite & ~special_ok;
  c.nan_inf_match = misplaced.sum().item<int64_t>() == 0;
  const at::Tensor diff = at::where(finite, (a - e).abs(), at::zeros_like(a));
  double atol = tolerance.atol;
  if (tolerance.atol_scale > 0 && e.numel() > 0) {
    const double scale = at::where(finite, e.abs(), at::zeros_like(e)).max().item<double>();
    atol = std::max(atol, tolerance.atol_scale * scale);
  }
  const at::Tensor within = diff <= atol + rtol * e.abs();
  c.mismatched = (finite & ~within).sum().item<int64_t>() + misplaced.sum().item<int64_t>();
  if (a.numel() > 0) {
    c.max_abs_error = diff.max().item<double>();
    const at::Tensor nonzero = finite & (e != 0);
    if (nonzero.any().item<bool>()) {
      c.max_rel_error =
          (diff.masked_select(nonzero) / e.abs().masked_select(nonzero)).max().item<double>();
    }
  }
  if (!c.nan_inf_match && c.note.empty()) {
    c.note = fmt::format("{} NaN/Inf at other positions than libtorch's",
                         misplaced.sum().item<int64_t>());
  }
  c.pass = c.mismatched == 0 && c.dtype == c.expected_dtype;
  return c;
}

}  // namespace torchonnx::verification
