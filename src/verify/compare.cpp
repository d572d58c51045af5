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

// A = max(atol, atol_scale * scale) of an output.
double output_atol(const at::Tensor& expected, const VerifyOptions& tolerance) {
  if (tolerance.atol_scale <= 0 || !at::isFloatingType(expected.scalar_type())) {
    return tolerance.atol;
  }
  return std::max(tolerance.atol, tolerance.atol_scale * output_scale(expected));
}

}  // namespace

double output_scale(const at::Tensor& expected) {
  if (expected.numel() == 0) return 0;
  const at::Tensor mags = expected.to(at::kDouble).abs().flatten();
  const at::Tensor kept = mags.masked_select(at::isfinite(mags) & (mags != 0));
  if (kept.numel() == 0) return 0;
  // The element at n / 2 of the sorted values (verify.mjs's median).
  const double median = std::get<0>(kept.kthvalue(kept.numel() / 2 + 1)).item<double>();
  return std::min(kept.max().item<double>(), 10 * median);
}

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
  // Integers and booleans match exactly (an index 10001 for 10000 is wrong at any scale).
  const bool exact = !at::isFloatingType(expected.scalar_type());
  const double atol = exact ? 0 : output_atol(expected, tolerance);
  const at::Tensor within = exact ? diff == 0 : diff <= atol + rtol * e.abs();
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
