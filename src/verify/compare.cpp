#include "verify/compare.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

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
  // Integers and booleans match exactly (an index 10001 for 10000 is wrong at any scale), compared
  // as themselves: int64 values beyond 2^53 are not all doubles (2^53 + 1 would equal 2^53).
  const bool exact = !at::isFloatingType(expected.scalar_type());
  const double atol = exact ? 0 : output_atol(expected, tolerance);
  const at::Tensor within = exact ? actual == expected : diff <= atol + rtol * e.abs();
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

namespace {

bool close(double actual, double expected, double rtol, double atol) {
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  return actual == expected || std::abs(actual - expected) <= atol + rtol * std::abs(expected);
}

}  // namespace

DetectionMatch compare_detections(const std::vector<at::Tensor>& actual,
                                  const std::vector<at::Tensor>& expected, const VerifyOptions& v,
                                  std::vector<OutputCheck>& checks) {
  DetectionMatch m;
  if (expected.empty() || expected[0].dim() == 0) {
    m.note = "the first output has no dimension 0 to count detections by";
    return m;
  }
  m.count = expected[0].size(0);
  const int64_t n = m.count;
  for (size_t k = 0; k < expected.size() && k < actual.size(); ++k) {
    if (expected[k].dim() > 0 && expected[k].size(0) == n) m.outputs.push_back(k);
  }
  m.needed = n < 50 ? n : static_cast<int64_t>(std::ceil(0.98 * static_cast<double>(n)));
  const double pixel_atol = v.pixel_atol > 0 ? v.pixel_atol : v.atol;
  // Shapes and dtypes first: records of other sizes cannot be matched.
  bool comparable = true;
  for (size_t k : m.outputs) {
    OutputCheck& c = checks[k];
    c.shape = actual[k].sizes().vec();
    c.expected_shape = expected[k].sizes().vec();
    c.dtype = dtype_name(actual[k].scalar_type());
    c.expected_dtype = dtype_name(expected[k].scalar_type());
    if (c.shape != c.expected_shape) {
      c.note = fmt::format("shape {} instead of libtorch's {}", shape_text(c.shape),
                           shape_text(c.expected_shape));
      c.mismatched = std::max(actual[k].numel(), expected[k].numel());
    } else if (c.dtype != c.expected_dtype) {
      c.note = fmt::format("dtype {} instead of libtorch's {}", c.dtype, c.expected_dtype);
    }
    comparable = comparable && c.note.empty();
  }
  if (!comparable) {
    m.note = fmt::format(
        "the {} detection records of ONNX Runtime and libtorch differ in shape or "
        "dtype",
        n);
    return m;
  }
  auto rows = [n](const at::Tensor& t) { return t.to(at::kDouble).reshape({n, -1}).contiguous(); };
  std::optional<size_t> boxes, labels, scores;
  for (size_t k : m.outputs) {
    const at::Tensor& e = expected[k];
    const bool floating = at::isFloatingType(e.scalar_type());
    if (!boxes && e.dim() == 2 && e.size(1) == 4 && floating) boxes = k;
    if (!labels && e.dim() == 1 && !floating) labels = k;
    if (!scores && e.dim() == 1 && floating) scores = k;
  }
  if (!boxes || !labels || !scores) {
    m.note =
        "cannot tell boxes (Nx4 float), labels (N integer) and scores (N float) among the "
        "outputs whose dim 0 is the first output's";
    for (size_t k : m.outputs) checks[k].note = m.note;
    return m;
  }
  const at::Tensor e_box = rows(expected[*boxes]), a_box = rows(actual[*boxes]);
  const at::Tensor e_lab = rows(expected[*labels]), a_lab = rows(actual[*labels]);
  const at::Tensor e_sc = rows(expected[*scores]), a_sc = rows(actual[*scores]);
  const double* eb = e_box.data_ptr<double>();
  const double* ab = a_box.data_ptr<double>();
  const double* el = e_lab.data_ptr<double>();
  const double* al = a_lab.data_ptr<double>();
  const double* es = e_sc.data_ptr<double>();
  const double* as = a_sc.data_ptr<double>();
  const double score_atol = output_atol(expected[*scores], v);
  // Greedy, in libtorch's order: the unused detection of the same label and a close score whose
  // box is within tolerance, the closest box when several.
  std::vector<char> used(n, 0);
  std::vector<int64_t> match(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = -1;
    double best_error = INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      if (used[j] || el[i] != al[j] || !close(as[j], es[i], v.rtol, score_atol)) continue;
      double error = 0;
      bool fits = true;
      for (int c = 0; c < 4 && fits; ++c) {
        fits = close(ab[4 * j + c], eb[4 * i + c], v.rtol, pixel_atol);
        error = std::max(error, std::abs(ab[4 * j + c] - eb[4 * i + c]));
      }
      if (fits && error < best_error) {
        best = j;
        best_error = error;
      }
    }
    if (best >= 0) {
      used[best] = 1;
      match[i] = best;
      ++m.matched;
    }
  }
  // Every per-detection output under the matching. A matched detection whose other outputs (mask,
  // keypoints) are out of tolerance counts as unmatched: they depend discontinuously on its box
  // (RoiAlign samples at box-relative points, keypoints are a heatmap argmax).
  std::vector<char> differs(n, 0);
  for (size_t k : m.outputs) {
    const at::Tensor& et = expected[k];
    const bool floating = at::isFloatingType(et.scalar_type());
    const bool pixels = k == *boxes || (et.dim() == 3 && et.size(2) == 3);
    const double atol = pixels ? pixel_atol : output_atol(et, v);
    const at::Tensor e = rows(et), a = rows(actual[k]);
    const int64_t len = e.size(1);
    const double* ep = e.data_ptr<double>();
    const double* ap = a.data_ptr<double>();
    OutputCheck& c = checks[k];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = match[i];
      if (j < 0) continue;
      for (int64_t x = 0; x < len; ++x) {
        const double want = ep[i * len + x], got = ap[j * len + x];
        const bool ok = floating ? close(got, want, v.rtol, atol) : got == want;
        if (!ok) {
          ++c.mismatched;
          differs[i] = 1;
        }
        if (std::isfinite(got - want)) {
          c.max_abs_error = std::max(c.max_abs_error, std::abs(got - want));
          if (want != 0) {
            c.max_rel_error = std::max(c.max_rel_error, std::abs(got - want) / std::abs(want));
          }
        } else if (!(std::isnan(got) && std::isnan(want)) && got != want) {
          c.nan_inf_match = false;
        }
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) m.differing += differs[i];
  m.matched -= m.differing;
  m.pass = m.matched >= m.needed;
  for (size_t k : m.outputs) {
    checks[k].pass = m.pass;
    if (!m.pass && checks[k].note.empty()) {
      checks[k].note =
          fmt::format("{} of {} detections matched, {} needed", m.matched, n, m.needed);
    }
  }
  return m;
}

}  // namespace torchonnx::verification
