// Resampling: upsample_* / interpolate (Resize/Upsample), grid_sampler, affine_grid.
//
// PyTorch maps output index `dst` of a spatial dim to an input coordinate with a scale that is
// 1/scale_factor when a scale factor is given and in/out otherwise (align_corners: (in-1)/(out-1)).
// ONNX Resize (opset 11+) expresses that exactly: given scales are passed as `scales` (ONNX then
// maps with 1/scale), otherwise the output sizes as `sizes` (ONNX maps with in/out):
//   nearest           asymmetric + nearest_mode floor   src = floor(dst * scale)
//   linear / cubic    half_pixel                        src = (dst + 0.5) * scale - 0.5
//                     align_corners                     src = dst * (in-1)/(out-1)
// (half_pixel rather than pytorch_half_pixel: PyTorch maps an output of length 1 with the same
// formula, pytorch_half_pixel maps it to 0.) Cubic uses cubic_coeff_a -0.75 and clamps its taps to
// the border (exclude_outside 0), as PyTorch does.
//
// Antialiased interpolation (F.interpolate(antialias=True): _upsample_bilinear2d_aa /
// _upsample_bicubic2d_aa, PIL's filters) is Resize-18 with antialias 1, half_pixel, exclude_outside
// 1 (the taps that fall outside are dropped and the weights renormalized) and, for cubic, a = -0.5:
// ONNX Runtime matches libtorch to float rounding, down- and upsampling. With align_corners=True
// PyTorch centres its filter at (dst + 0.5) * (in-1)/(out-1), which no Resize coordinate mode
// expresses (every mode tried is off by up to ~1 on N(0, 1) data): that case fails.
//
// Below opset 11 ONNX has only Upsample-9/Resize-10 with asymmetric coordinates: exact for nearest
// upsampling by integer factors. Other cases: nearest as a Gather of PyTorch's source indices
// (computed in the graph when the output sizes are), linear/cubic with static shapes as a MatMul
// per spatial dim with the interpolation weights PyTorch uses (computed here from the sizes).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;

enum class Mode { kNearest, kLinear, kCubic };

const char* onnx_mode(Mode m) {
  switch (m) {
    case Mode::kNearest:
      return "nearest";
    case Mode::kLinear:
      return "linear";
    case Mode::kCubic:
      return "cubic";
  }
  return "";
}

// What to compute, read from any of the upsample overloads or __interpolate.
struct Resample {
  Mode mode = Mode::kNearest;
  int64_t n = 0;  // spatial dims
  bool align_corners = false;
  // Exactly one of: scale factors for every spatial dim (PyTorch maps with 1/scale and the output
  // size is floor(in * scale)), constant output sizes, or output sizes computed in the graph.
  std::optional<std::vector<double>> scales;
  std::optional<Ints> sizes;
  Value sizes_value;
  bool antialias = false;  // linear/cubic with PyTorch's antialiasing filter
};

// Output sizes from argument i (constant int[] or built in the graph).
void read_sizes(GraphContext& g, const Args& a, size_t i, Resample& r) {
  if (a.is_constant(i)) {
    r.sizes = a.int_list(i);
    if (static_cast<int64_t>(r.sizes->size()) != r.n) {
      g.fail("output_size has " + std::to_string(r.sizes->size()) + " elements; expected " +
             std::to_string(r.n));
    }
  } else {
    r.sizes_value = a.tensor_as(i, at::kLong);
  }
}

// Whether the scale matters for the coordinate mapping (align_corners ignores it).
bool scale_maps(const Resample& r) {
  return r.mode == Mode::kNearest || !r.align_corners;
}

// The arguments of aten::upsample_<mode><n>d.vec(input, output_size?, [align_corners,]
// scale_factors?).
Resample read_upsample_vec(GraphContext& g, const Args& a, Mode mode, int64_t n) {
  Resample r;
  r.mode = mode;
  r.n = n;
  const bool has_align = mode != Mode::kNearest;
  if (has_align) r.align_corners = a.bool_arg(2);
  const size_t scales_at = has_align ? 3 : 2;
  if (!a.is_none(1)) {
    read_sizes(g, a, 1, r);
    return r;
  }
  if (a.is_none(scales_at)) g.fail("neither output_size nor scale_factors is given");
  r.scales = a.constant(scales_at).toDoubleVector();
  if (static_cast<int64_t>(r.scales->size()) != n) {
    g.fail("scale_factors has " + std::to_string(r.scales->size()) + " elements; expected " +
           std::to_string(n));
  }
  return r;
}

// The arguments of aten::upsample_<mode><n>d(self, output_size, [align_corners,] scales_0?, ...,
// scales_{n-1}?).
Resample read_upsample(GraphContext& g, const Args& a, Mode mode, int64_t n) {
  Resample r;
  r.mode = mode;
  r.n = n;
  const bool has_align = mode != Mode::kNearest;
  if (has_align) r.align_corners = a.bool_arg(2);
  const size_t scales_at = has_align ? 3 : 2;
  // (self, output_size, [align_corners,] scales_0?, ..., scales_{n-1}?): PyTorch takes the output
  // size from output_size and maps coordinates with the scales that are given.
  read_sizes(g, a, 1, r);
  std::vector<std::optional<double>> given;
  for (int64_t k = 0; k < n; ++k) given.push_back(a.optional_float(scales_at + k));
  bool any = std::any_of(given.begin(), given.end(), [](const auto& s) { return s && *s > 0; });
  if (!any || !scale_maps(r)) return r;
  // A given scale equal to out/in maps like no scale: keep the sizes.
  auto in = a.sizes(0);
  if (in && r.sizes) {
    bool all_equal = true;
    for (int64_t k = 0; k < n; ++k) {
      double ratio = static_cast<double>((*r.sizes)[k]) / static_cast<double>((*in)[2 + k]);
      if (given[k] && *given[k] > 0 && *given[k] != ratio) all_equal = false;
    }
    if (all_equal) return r;
  }
  bool all = std::all_of(given.begin(), given.end(), [](const auto& s) { return s && *s > 0; });
  if (!all) {
    g.fail(
        "scales given for some spatial dims only (and different from output/input) cannot be "
        "expressed by ONNX Resize, which takes scales for all dims or sizes");
  }
  std::vector<double> scales;
  for (const auto& s : given) scales.push_back(*s);
  if (in && r.sizes) {
    for (int64_t k = 0; k < n; ++k) {
      if (static_cast<int64_t>(std::floor((*in)[2 + k] * scales[k])) != (*r.sizes)[k]) {
        g.fail("output_size " + std::to_string((*r.sizes)[k]) + " of spatial dim " +
               std::to_string(k) + " is not floor(input size * scale) for scale " +
               std::to_string(scales[k]) + "; ONNX Resize cannot take both");
      }
    }
  }
  r.scales = std::move(scales);
  r.sizes.reset();
  r.sizes_value.clear();
  return r;
}

// The arguments of the antialiased overloads: those of upsample_bilinear2d / bicubic2d.
Resample read_upsample_aa(GraphContext& g, const Args& a, Mode mode, int64_t n) {
  Resample r = read_upsample(g, a, mode, n);
  r.antialias = true;
  return r;
}

Resample read_upsample_vec_aa(GraphContext& g, const Args& a, Mode mode, int64_t n) {
  Resample r = read_upsample_vec(g, a, mode, n);
  r.antialias = true;
  return r;
}

// ----- opset 11+: Resize

Value empty_float(GraphContext& g) {
  return g.constant(at::empty({0}, at::kFloat));
}

// Resize of `x` to the scales or sizes of `r`, with `attrs`.
Value resize(GraphContext& g, const Value& x, const Resample& r, ir::Attributes attrs) {
  const bool optional_inputs = g.has(OnnxFeature::kResizeOptionalInputs);
  Value roi = optional_inputs ? "" : empty_float(g);
  if (r.scales) {
    std::vector<float> s{1.0f, 1.0f};
    for (double v : *r.scales) s.push_back(static_cast<float>(v));
    return g.op("Resize", {x, roi, g.constant(at::tensor(s, at::kFloat))}, attrs);
  }
  Value spatial = r.sizes ? g.constant_ints(*r.sizes) : r.sizes_value;
  Value sizes = g.op("Concat", {dims_of(g, x, {0, 1}), spatial}, {{"axis", 0}});
  Value scales = optional_inputs ? "" : empty_float(g);
  return g.op("Resize", {x, roi, scales, sizes}, attrs);
}

Value resize11(GraphContext& g, const Value& x, const Resample& r) {
  ir::Attributes attrs{{"mode", onnx_mode(r.mode)}};
  if (r.mode == Mode::kNearest) {
    attrs.emplace_back("coordinate_transformation_mode", "asymmetric");
    attrs.emplace_back("nearest_mode", "floor");
  } else {
    attrs.emplace_back("coordinate_transformation_mode",
                       r.align_corners ? "align_corners" : "half_pixel");
  }
  if (r.mode == Mode::kCubic) attrs.emplace_back("cubic_coeff_a", -0.75);
  return resize(g, x, r, attrs);
}

// Resize-18 antialiased as PyTorch's _upsample_*_aa (see the header). The caller has checked
// align_corners.
Value resize_antialias18(GraphContext& g, const Value& x, const Resample& r) {
  ir::Attributes attrs{{"mode", onnx_mode(r.mode)},
                       {"coordinate_transformation_mode", "half_pixel"},
                       {"antialias", int64_t{1}},
                       {"exclude_outside", int64_t{1}}};
  if (r.mode == Mode::kCubic) attrs.emplace_back("cubic_coeff_a", -0.5);
  return resize(g, x, r, attrs);
}

// ----- below opset 11: static lowerings

// PyTorch's coordinate scale of one dim (area_pixel_compute_scale), in float as its kernels.
float coordinate_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) {
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  }
  if (scale && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// PyTorch's nearest source index of each output index.
Ints nearest_indices(int64_t in, int64_t out, std::optional<double> scale) {
  float s = coordinate_scale(in, out, false, scale);
  Ints idx(out);
  for (int64_t d = 0; d < out; ++d) {
    idx[d] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(d) * s)), in - 1);
  }
  return idx;
}

// The (out × in) interpolation matrix PyTorch's linear/cubic kernel applies along one dim.
at::Tensor interpolation_weights(Mode mode, int64_t in, int64_t out, bool align_corners,
                                 std::optional<double> scale) {
  float s = coordinate_scale(in, out, align_corners, scale);
  at::Tensor w = at::zeros({out, in}, at::kDouble);
  auto acc = w.accessor<double, 2>();
  for (int64_t d = 0; d < out; ++d) {
    float src =
        align_corners ? s * static_cast<float>(d) : s * (static_cast<float>(d) + 0.5f) - 0.5f;
    if (mode == Mode::kLinear) {
      if (!align_corners && src < 0) src = 0;
      int64_t i0 = static_cast<int64_t>(src);
      int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      double l1 = std::min(std::max(static_cast<double>(src) - i0, 0.0), 1.0);
      acc[d][i0] += 1.0 - l1;
      acc[d][i1] += l1;
    } else {
      const double A = -0.75;
      int64_t i = static_cast<int64_t>(std::floor(src));
      double t = static_cast<double>(src) - i;
      auto near = [&](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
      auto far = [&](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
      double c[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
      for (int k = 0; k < 4; ++k) {
        int64_t j = std::min(std::max<int64_t>(i - 1 + k, 0), in - 1);
        acc[d][j] += c[k];
      }
    }
  }
  return w;
}

// Input sizes of the spatial dims and PyTorch's output sizes, for the static lowerings.
// static shape: the indices and weights depend on the sizes.
void static_sizes(GraphContext& g, const Args& a, const Resample& r, Ints& in, Ints& out) {
  auto sizes = a.sizes(0);
  if (!sizes || (!r.sizes && !r.scales)) {
    g.fail(std::string("upsampling (") + onnx_mode(r.mode) +
           ") at this opset needs static input and output sizes; export with opset >= 11");
  }
  for (int64_t k = 0; k < r.n; ++k) {
    in.push_back((*sizes)[2 + k]);
    out.push_back(r.sizes ? (*r.sizes)[k]
                          : static_cast<int64_t>(std::floor(in.back() * (*r.scales)[k])));
  }
}

std::optional<double> scale_of(const Resample& r, int64_t k) {
  if (!r.scales) return std::nullopt;
  return (*r.scales)[k];
}

// Nearest below opset 11 with output sizes computed in the graph: per spatial dim a Gather of
// PyTorch's source indices, computed as its kernel does (in float):
//   src = min(floor(dst * (in / out)), in - 1),  dst = 0 .. out-1
// dst is NonZero of ones of the output's length (Range is opset 11). Exact for every ratio and
// dtype, where Upsample with scales out/in is not: ONNX Runtime takes floor(in * scale) for the
// output size, which float rounding makes out - 1 for some ratios (in 11, out 13: 12 in ONNX
// Runtime 1.21).
Value nearest_gather_computed(GraphContext& g, const Value& x, const Resample& r) {
  Value y = x;
  for (int64_t k = 0; k < r.n; ++k) {
    Value out = slice(g, r.sizes_value, {0}, {k}, {k + 1});  // [out]
    Value ones = g.op("ConstantOfShape", {out}, {{"value", at::ones({1}, at::kFloat)}});
    Value dst = g.cast(squeeze(g, g.op("NonZero", {ones}), {0}), at::kFloat);
    Value in = g.cast(dims_of(g, x, {2 + k}), at::kFloat);
    Value scale = g.op("Div", {in, g.cast(out, at::kFloat)});
    Value src = g.op("Floor", {g.op("Mul", {dst, scale})});
    Value last = g.op("Sub", {in, g.constant(at::ones({1}, at::kFloat))});
    Value index = g.cast(g.op("Min", {src, last}), at::kLong);
    y = g.op("Gather", {y, index}, {{"axis", 2 + k}});
  }
  return y;
}

// Nearest at opset 9/10 (or a double input): Upsample/Resize-10 (asymmetric, floor when
// upsampling) for integer factors of a float input, else a Gather of PyTorch's indices per dim
// (computed in the graph when the output sizes are).
Value resize_low_nearest(GraphContext& g, const Args& a, const Value& x, const Resample& r) {
  if (!r.sizes_value.empty()) return nearest_gather_computed(g, x, r);
  std::vector<float> factors{1.0f, 1.0f};
  bool integer = true;
  auto in = a.sizes(0);
  for (int64_t k = 0; k < r.n; ++k) {
    double f = 0;
    if (r.scales) {
      f = (*r.scales)[k];
    } else if (r.sizes && in && (*in)[2 + k] > 0 && (*r.sizes)[k] % (*in)[2 + k] == 0) {
      f = static_cast<double>((*r.sizes)[k] / (*in)[2 + k]);
    }
    if (f < 1 || f != std::floor(f)) integer = false;
    factors.push_back(static_cast<float>(f));
  }
  // ONNX Runtime's Upsample/Resize-10 take float (not double).
  if (integer && !g.has(OnnxFeature::kResizeSizes) && a.dtype(0) == at::kFloat) {
    Value scales = g.constant(at::tensor(factors, at::kFloat));
    return g.op(g.has(OnnxFeature::kResize) ? "Resize" : "Upsample", {x, scales},
                {{"mode", "nearest"}});
  }
  Ints in_sizes, out_sizes;
  static_sizes(g, a, r, in_sizes, out_sizes);
  Value y = x;
  for (int64_t k = 0; k < r.n; ++k) {
    Ints idx = nearest_indices(in_sizes[k], out_sizes[k], scale_of(r, k));
    y = g.op("Gather", {y, g.constant_ints(idx)}, {{"axis", 2 + k}});
  }
  return y;
}

// Opset 9/10 linear/cubic: one MatMul with PyTorch's weights per spatial dim.
Value resize_low_matmul(GraphContext& g, const Args& a, const Value& x, const Resample& r) {
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble) {
    g.fail(std::string("upsampling (") + onnx_mode(r.mode) +
           ") of this dtype below opset 11 is not supported; export with opset >= 11");
  }
  Ints in_sizes, out_sizes;
  static_sizes(g, a, r, in_sizes, out_sizes);
  const int64_t rank = 2 + r.n;
  Value y = x;
  for (int64_t k = 0; k < r.n; ++k) {
    if (in_sizes[k] == out_sizes[k] && (r.align_corners || !r.scales || (*r.scales)[k] == 1.0)) {
      continue;  // identity
    }
    at::Tensor w =
        interpolation_weights(r.mode, in_sizes[k], out_sizes[k], r.align_corners, scale_of(r, k));
    Value wt = g.constant(w.t().contiguous().to(type));  // in × out
    Ints perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[2 + k], perm[rank - 1]);
    y = transpose(g, g.op("MatMul", {transpose(g, y, perm), wt}), perm);
  }
  return y;
}

// ----- the lowerings of one Resample, by opset

using Lowering = Value (*)(GraphContext& g, const Args& a, const Value& x, const Resample& r);

// Below opset 11: the static lowerings (Upsample/Resize-10 for integer nearest factors).
Value resample9(GraphContext& g, const Args& a, const Value& x, const Resample& r) {
  if (r.mode == Mode::kNearest) return resize_low_nearest(g, a, x, r);
  return resize_low_matmul(g, a, x, r);
}

// From opset 11: Resize. ONNX Runtime's Resize takes float (and 8-bit/int32) only: a double input
// takes the exact static lowerings when the sizes are known, else a round trip through float.
Value resample11(GraphContext& g, const Args& a, const Value& x, const Resample& r) {
  at::ScalarType type = a.dtype(0);
  if (type == at::kDouble || type == at::kHalf || type == at::kBFloat16) {
    if (a.sizes(0) && (r.sizes || r.scales)) {
      return r.mode == Mode::kNearest ? resize_low_nearest(g, a, x, r)
                                      : resize_low_matmul(g, a, x, r);
    }
    return g.cast(resize11(g, g.cast(x, at::kFloat), r), type);
  }
  return resize11(g, x, r);
}

// From opset 18: antialiased interpolation is Resize antialias (float: a double or half input
// goes through float, as ONNX Runtime's Resize takes no other); the rest as from 11.
Value resample18(GraphContext& g, const Args& a, const Value& x, const Resample& r) {
  if (!r.antialias) return resample11(g, a, x, r);
  if (r.align_corners) {
    g.fail(
        "antialiased interpolation with align_corners=True: PyTorch centres its filter at "
        "(dst + 0.5) * (in-1)/(out-1), which ONNX Resize cannot express; use "
        "align_corners=False");
  }
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat) return g.cast(resize_antialias18(g, g.cast(x, at::kFloat), r), type);
  return resize_antialias18(g, x, r);
}

// aten::upsample_<mode><n>d[.vec]: the arguments read by `read` (one overload's), lowered by
// `lower`.
using Reader = Resample (*)(GraphContext& g, const Args& a, Mode mode, int64_t n);

Converter upsample(Mode mode, int64_t n, Reader read, Lowering lower) {
  return [=](GraphContext& g, const Args& a) -> Values {
    if (a.require_rank(0) != 2 + n) {
      g.fail("expected a " + std::to_string(2 + n) + "-D input");
    }
    Resample r = read(g, a, mode, n);
    return {lower(g, a, a.tensor(0), r)};
  };
}

// aten::__interpolate(input, size?, scale_factor?, mode, align_corners?, recompute_scale_factor?,
// antialias): F.interpolate in one op (size and scale_factor each a scalar or a list).
Values interpolate(GraphContext& g, const Args& a, Lowering lower) {
  const int64_t rank = a.require_rank(0);
  Resample r;
  r.n = rank - 2;
  if (r.n < 1 || r.n > 3) g.fail("interpolate takes a 3-D, 4-D or 5-D input");
  std::string mode = a.str_arg(3);
  // libtorch's __interpolate refuses antialias ("not yet supported"); scripted F.interpolate calls
  // _upsample_bilinear2d_aa / _upsample_bicubic2d_aa instead.
  if (a.size() > 6 && a.bool_arg(6)) g.fail("antialias interpolation is not supported");
  if (mode == "nearest") {
    r.mode = Mode::kNearest;
  } else if ((mode == "linear" && r.n == 1) || (mode == "bilinear" && r.n == 2) ||
             (mode == "trilinear" && r.n == 3)) {
    r.mode = Mode::kLinear;
  } else if (mode == "bicubic" && r.n == 2) {
    r.mode = Mode::kCubic;
  } else {
    g.fail("interpolation mode '" + mode + "' is not supported for a " + std::to_string(rank) +
           "-D input");
  }
  if (r.mode != Mode::kNearest && !a.is_none(4)) r.align_corners = a.bool_arg(4);
  if (!a.is_none(1)) {
    if (!a.is_none(2)) g.fail("only one of size and scale_factor may be given");
    if (a.jit(1)->type()->kind() == c10::TypeKind::IntType) {
      r.sizes = Ints(r.n, a.int_arg(1));
    } else {
      read_sizes(g, a, 1, r);
    }
  } else {
    if (a.is_none(2)) g.fail("either size or scale_factor must be given");
    std::vector<double> scales;
    if (a.jit(2)->type()->kind() == c10::TypeKind::FloatType) {
      scales.assign(r.n, a.float_arg(2));
    } else {
      scales = a.constant(2).toDoubleVector();
    }
    if (static_cast<int64_t>(scales.size()) != r.n) g.fail("scale_factor has the wrong length");
    // libtorch's __interpolate maps coordinates with the given scales only when
    // recompute_scale_factor is False; None recomputes them from the sizes, like True.
    bool recompute = a.is_none(5) || a.bool_arg(5);
    if (recompute) {
      // The output size is floor(in * scale), and coordinates map with in/out.
      if (auto in = a.sizes(0)) {
        Ints out;
        for (int64_t k = 0; k < r.n; ++k) {
          out.push_back(static_cast<int64_t>(std::floor((*in)[2 + k] * scales[k])));
        }
        r.sizes = out;
      } else {
        Value spatial = g.cast(slice(g, shape_of(g, a.tensor(0)), {0}, {2}, {rank}), at::kDouble);
        std::vector<double> s = scales;
        Value prod = g.op("Mul", {spatial, g.constant(at::tensor(s, at::kDouble))});
        r.sizes_value = g.cast(g.op("Floor", {prod}), at::kLong);
      }
    } else {
      r.scales = scales;
    }
  }
  return {lower(g, a, a.tensor(0), r)};
}

// aten::__interpolate below opset 11: the static lowerings
Values interpolate9(GraphContext& g, const Args& a) {
  return interpolate(g, a, resample9);
}

// aten::__interpolate from opset 11: Resize
Values interpolate11(GraphContext& g, const Args& a) {
  return interpolate(g, a, resample11);
}

// ----- grid_sampler / affine_grid_generator

// aten::grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
// bool align_corners) -> Tensor  ⇒  GridSample: 4-D input with modes bilinear/nearest/bicubic at
// opsets 16-19; from opset 20 any spatial rank (5-D volumes: trilinear, nearest), the modes renamed
// linear/nearest/cubic.
Values grid_sample(GraphContext& g, const Args& a, const char* const (&modes)[3]) {
  static const char* paddings[] = {"zeros", "border", "reflection"};
  int64_t mode = a.int_arg(2), padding = a.int_arg(3);
  if (mode < 0 || mode > 2) g.fail("unknown interpolation_mode " + std::to_string(mode));
  if (padding < 0 || padding > 2) g.fail("unknown padding_mode " + std::to_string(padding));
  at::ScalarType type = a.dtype(0);
  return {g.op("GridSample", {a.tensor(0), a.tensor_as(1, type)},
               {{"mode", modes[mode]},
                {"padding_mode", paddings[padding]},
                {"align_corners", static_cast<int64_t>(a.bool_arg(4))}})};
}

Values grid_sampler16(GraphContext& g, const Args& a) {
  if (a.require_rank(0) != 4) {
    g.fail("grid sampling of a " + std::to_string(a.require_rank(0)) +
           "-D input needs ONNX GridSample-20 (5-D volumes); export with opset >= 20");
  }
  static const char* const modes[] = {"bilinear", "nearest", "bicubic"};
  return grid_sample(g, a, modes);
}

Values grid_sampler20(GraphContext& g, const Args& a) {
  if (a.require_rank(0) == 5 && a.int_arg(2) == 2) {
    g.fail("bicubic grid sampling takes a 4-D input (PyTorch rejects a 5-D one)");
  }
  static const char* const modes[] = {"linear", "nearest", "cubic"};
  return grid_sample(g, a, modes);
}

// PyTorch's linspace_from_neg_one: the normalized coordinates of `steps` pixels.
at::Tensor neg_one_to_one(int64_t steps, bool align_corners, at::ScalarType type) {
  if (steps <= 1) return at::zeros({1}, at::TensorOptions().dtype(type));
  at::Tensor range = at::linspace(-1, 1, steps, at::TensorOptions().dtype(type));
  if (!align_corners) range = range * (steps - 1) / steps;
  return range;
}

// aten::affine_grid_generator(Tensor theta, int[] size, bool align_corners) -> Tensor  ⇒
// MatMul(base grid, theta^T): base grid (H*W, 3) rows (x, y, 1), or (D*H*W, 4) rows (x, y, z, 1),
// a constant of the requested size (opsets 9-19).
Values affine_grid(GraphContext& g, const Args& a) {
  if (!a.is_constant(1)) {
    g.fail(
        "affine_grid with a size computed in the graph needs ONNX AffineGrid; export with opset "
        ">= 20");
  }
  Ints size = a.int_list(1);
  bool align = a.bool_arg(2);
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble) g.fail("theta must be float or double");
  at::Tensor base;
  Ints spatial;
  auto opts = at::TensorOptions().dtype(type);
  if (size.size() == 4) {
    int64_t H = size[2], W = size[3];
    spatial = {H, W};
    base = at::empty({H, W, 3}, opts);
    base.select(-1, 0).copy_(neg_one_to_one(W, align, type));
    base.select(-1, 1).copy_(neg_one_to_one(H, align, type).unsqueeze(-1));
    base.select(-1, 2).fill_(1);
  } else if (size.size() == 5) {
    int64_t D = size[2], H = size[3], W = size[4];
    spatial = {D, H, W};
    base = at::empty({D, H, W, 4}, opts);
    base.select(-1, 0).copy_(neg_one_to_one(W, align, type));
    base.select(-1, 1).copy_(neg_one_to_one(H, align, type).unsqueeze(-1));
    base.select(-1, 2).copy_(neg_one_to_one(D, align, type).unsqueeze(-1).unsqueeze(-1));
    base.select(-1, 3).fill_(1);
  } else {
    g.fail("affine_grid takes a size of 4 (N, C, H, W) or 5 (N, C, D, H, W) elements");
  }
  const int64_t cols = base.size(-1);
  Value flat = g.constant(base.reshape({-1, cols}));
  Value theta_t = g.op("Transpose", {a.tensor(0)}, {{"perm", Ints{0, 2, 1}}});
  Value grid = g.op("MatMul", {flat, theta_t});  // (N, prod(spatial), cols - 1)
  Ints shape{size[0]};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  shape.push_back(cols - 1);
  return {g.op("Reshape", {grid, g.constant_ints(shape)})};
}

// AffineGrid with align_corners=True over a size known only at run time. Its base grid is
// PyTorch's except along a spatial dim of size 1: PyTorch's coordinate there is 0; onnx 1.17's
// reference implementation gives -1, ONNX Runtime 1.21 +1. So theta's column of that coordinate
// (x: W, y: H, z: D) is zeroed first: the dim then contributes 0 whatever the runtime puts there.
//   keep  = Cast(Not(Equal(size[-1:1:-1], 1)))   (W, H[, D]) -> 0 where the dim has size 1
//   theta' = theta * Concat(keep, [1])            (the translation column kept)
//   AffineGrid(theta', size)
Value affine_grid_dynamic_aligned(GraphContext& g, const Value& theta, const Value& size,
                                  at::ScalarType type) {
  Value reversed = slice(g, size, {0}, {-1}, {1}, {-1});
  Value unit = g.op("Equal", {reversed, g.constant_ints({1})});
  Value keep = g.cast(g.op("Not", {unit}), type);
  Value one = g.constant(at::ones({1}, at::TensorOptions().dtype(type)));
  Value columns = g.op("Concat", {keep, one}, {{"axis", 0}});
  Value masked = g.op("Mul", {theta, columns});
  return g.op("AffineGrid", {masked, size}, {{"align_corners", int64_t{1}}});
}

// aten::affine_grid_generator from opset 20: AffineGrid, whose base grid is PyTorch's except for a
// spatial size of 1 with align_corners=True (see affine_grid_dynamic_aligned): a constant size
// with such a dim keeps the MatMul form, a size computed in the graph masks theta.
Values affine_grid20(GraphContext& g, const Args& a) {
  const bool align = a.bool_arg(2);
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble) g.fail("theta must be float or double");
  Value size;
  if (a.is_constant(1)) {
    Ints sizes = a.int_list(1);
    if (sizes.size() != 4 && sizes.size() != 5) {
      g.fail("affine_grid takes a size of 4 (N, C, H, W) or 5 (N, C, D, H, W) elements");
    }
    if (align && std::find(sizes.begin() + 2, sizes.end(), 1) != sizes.end()) {
      return affine_grid(g, a);
    }
    size = g.constant_ints(sizes);
  } else {
    size = a.tensor_as(1, at::kLong);
    if (align) return {affine_grid_dynamic_aligned(g, a.tensor(0), size, type)};
  }
  return {
      g.op("AffineGrid", {a.tensor(0), size}, {{"align_corners", static_cast<int64_t>(align)}})};
}

}  // namespace

void register_resample(Registry& r) {
  // Each upsample_* op: its two overloads, each below opset 11 (static lowerings) and from 11
  // (Resize).
  auto add_upsample = [&r](const std::string& op, Mode mode, int64_t n) {
    r.add(op, {9, 10}, upsample(mode, n, read_upsample, resample9));
    r.add(op, from(11), upsample(mode, n, read_upsample, resample11));
    r.add(op + ".vec", {9, 10}, upsample(mode, n, read_upsample_vec, resample9));
    r.add(op + ".vec", from(11), upsample(mode, n, read_upsample_vec, resample11));
  };
  // aten::upsample_nearest1d(Tensor self, int[1] output_size, float? scales) /
  // .vec(Tensor input, int[]? output_size, float[]? scale_factors) -> Tensor  ⇒  Resize
  // (asymmetric, floor) from 11; Upsample/Resize-10 for integer factors, else Gather (static)
  add_upsample("aten::upsample_nearest1d", Mode::kNearest, 1);
  // aten::upsample_nearest2d(self, output_size, scales_h?, scales_w?) / .vec  ⇒  as nearest1d
  add_upsample("aten::upsample_nearest2d", Mode::kNearest, 2);
  // aten::upsample_nearest3d(self, output_size, scales_d?, scales_h?, scales_w?) / .vec  ⇒  as 1d
  add_upsample("aten::upsample_nearest3d", Mode::kNearest, 3);
  // aten::upsample_linear1d(self, output_size, align_corners, scales?) / .vec(input,
  // output_size?, align_corners, scale_factors?)  ⇒  Resize linear from 11 (half_pixel /
  // align_corners); below, MatMul with PyTorch's weights (static shape)
  add_upsample("aten::upsample_linear1d", Mode::kLinear, 1);
  // aten::upsample_bilinear2d(self, output_size, align_corners, scales_h?, scales_w?) / .vec  ⇒
  // as linear1d
  add_upsample("aten::upsample_bilinear2d", Mode::kLinear, 2);
  // aten::upsample_trilinear3d(self, output_size, align_corners, scales_d?, scales_h?, scales_w?)
  // / .vec  ⇒  as linear1d
  add_upsample("aten::upsample_trilinear3d", Mode::kLinear, 3);
  // aten::upsample_bicubic2d(self, output_size, align_corners, scales_h?, scales_w?) / .vec  ⇒
  // Resize cubic (a = -0.75) from 11; below, MatMul with PyTorch's weights (static shape)
  add_upsample("aten::upsample_bicubic2d", Mode::kCubic, 2);
  // aten::__interpolate(input, size?, scale_factor?, mode, align_corners?,
  // recompute_scale_factor?, antialias) (4 overloads)  ⇒  as the upsample_* of its mode
  r.add("aten::__interpolate", {9, 10}, interpolate9);
  r.add("aten::__interpolate", from(11), interpolate11);
  // aten::_upsample_bilinear2d_aa(self, output_size, align_corners, scales_h?, scales_w?) /
  // .vec(input, output_size?, align_corners, scale_factors?)  ⇒  Resize linear, antialias 1,
  // exclude_outside 1 (18+); align_corners=True fails
  // aten::_upsample_bicubic2d_aa (the same arguments)  ⇒  Resize cubic (a = -0.5), as bilinear
  for (auto [op, mode] : {std::pair{"aten::_upsample_bilinear2d_aa", Mode::kLinear},
                          std::pair{"aten::_upsample_bicubic2d_aa", Mode::kCubic}}) {
    r.add(op, from(18), upsample(mode, 2, read_upsample_aa, resample18));
    r.add(std::string(op) + ".vec", from(18), upsample(mode, 2, read_upsample_vec_aa, resample18));
  }
  // aten::grid_sampler(input, grid, int interpolation_mode, int padding_mode, bool align_corners)
  // ⇒  GridSample (opset 16+, 4-D)
  r.add("aten::grid_sampler", {16, 19}, grid_sampler16);
  r.add("aten::grid_sampler", from(20), grid_sampler20);
  // aten::affine_grid_generator(Tensor theta, int[] size, bool align_corners)  ⇒  MatMul of a
  // constant base grid with theta^T (9-19); AffineGrid (20+)
  r.add("aten::affine_grid_generator", {9, 19}, affine_grid);
  r.add("aten::affine_grid_generator", from(20), affine_grid20);
}

}  // namespace torchonnx::symbolic::ops
