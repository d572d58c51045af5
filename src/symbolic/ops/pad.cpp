// Padding and spatial rearrangement: pad modes, pixel_(un)shuffle, im2col/col2im, distances.
//
// PyTorch lists pads from the last dim backwards ([last_begin, last_end, prev_begin, ...]); ONNX
// Pad takes [begin of every dim..., end of every dim...]. Negative pads crop: they become a Slice
// (exact for every mode), the non-negative part a Pad (constant/reflect/edge) or, for circular
// padding, Pad's wrap mode from opset 19 and Slice + Concat of the wrapped borders below.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <limits>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kPadIntMax = std::numeric_limits<int64_t>::max();

bool is_float(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf;
}

// Per-dim (begin, end) pads for a tensor of `rank` from PyTorch's reversed pad list.
struct DimPads {
  Ints begin, end;
};

DimPads dim_pads(GraphContext& g, const Ints& pad, int64_t rank) {
  if (pad.size() % 2 != 0) g.fail("the pad list must have an even number of elements");
  const int64_t n = static_cast<int64_t>(pad.size()) / 2;
  if (n > rank) g.fail("the pad list pads more dims than the input has");
  DimPads p{Ints(rank, 0), Ints(rank, 0)};
  for (int64_t k = 0; k < n; ++k) {
    p.begin[rank - 1 - k] = pad[2 * k];
    p.end[rank - 1 - k] = pad[2 * k + 1];
  }
  return p;
}

// Crops the dims with negative pads (Slice) and zeroes those pads in `p`.
Value crop_negative(GraphContext& g, Value x, DimPads& p) {
  Ints axes, starts, ends;
  for (size_t d = 0; d < p.begin.size(); ++d) {
    if (p.begin[d] >= 0 && p.end[d] >= 0) continue;
    axes.push_back(static_cast<int64_t>(d));
    starts.push_back(std::max<int64_t>(0, -p.begin[d]));
    ends.push_back(p.end[d] < 0 ? p.end[d] : kPadIntMax);
    p.begin[d] = std::max<int64_t>(0, p.begin[d]);
    p.end[d] = std::max<int64_t>(0, p.end[d]);
  }
  if (axes.empty()) return x;
  return slice(g, x, axes, starts, ends);
}

// ONNX Pad with the non-negative pads of `p` (helpers.h, pad).
Value onnx_pad(GraphContext& g, const Value& x, const DimPads& p, const std::string& mode,
               double value, at::ScalarType type) {
  Ints pads = p.begin;
  pads.insert(pads.end(), p.end.begin(), p.end.end());
  return pad(g, x, pads, mode, value, type);
}

// How circular padding is lowered: Slice + Concat of the wrapped borders (every opset), or one
// Pad in mode wrap (opset 19).
enum class Circular { kSliceConcat, kWrap };

// Circular padding of the (non-negative) pads: each padded dim gets its last `begin` elements
// prepended and its first `end` elements appended (PyTorch wraps the cropped tensor).
Value circular_pad(GraphContext& g, Value x, const DimPads& p) {
  for (size_t d = 0; d < p.begin.size(); ++d) {
    if (p.begin[d] == 0 && p.end[d] == 0) continue;
    const int64_t axis = static_cast<int64_t>(d);
    Values parts;
    if (p.begin[d] > 0) parts.push_back(slice(g, x, {axis}, {-p.begin[d]}, {kPadIntMax}));
    parts.push_back(x);
    if (p.end[d] > 0) parts.push_back(slice(g, x, {axis}, {0}, {p.end[d]}));
    x = g.op("Concat", parts, {{"axis", axis}});
  }
  return x;
}

// Pads computed in the graph (opset 11: Pad takes them as an input, negative ones crop): the
// reversed [begin, end] pairs of the last n dims become ONNX's [begins..., ends...] for all dims.
// Circular padding needs Pad's wrap mode (opset 19): ONNX Runtime crops the negative pads first
// and wraps the cropped tensor, as PyTorch does.
Value dynamic_pad(GraphContext& g, const Args& a, const std::string& mode, double value,
                  Circular circular) {
  if (!g.has(OnnxFeature::kPadInputs)) {
    // torch.onnx's words too (test_unsupported_pad matches them).
    g.fail(
        fmt::format("Unsupported: ONNX export of Pad in opset {}. The sizes of the padding must "
                    "be constant: pads computed in the graph need opset 11; export with "
                    "opset >= 11",
                    g.opset()));
  }
  if (mode == "circular" && circular != Circular::kWrap) {
    g.fail(
        "circular padding with pads computed in the graph needs Pad's wrap mode (opset 19); "
        "export with opset >= 19");
  }
  const int64_t rank = a.require_rank(0);
  auto len = list_length(a, 1);
  if (len && (*len % 2 != 0 || *len / 2 > rank)) {
    g.fail("the pad list has an odd length or pads more dims than the input has");
  }
  at::ScalarType type = a.dtype(0);
  if (type == at::ScalarType::Undefined) g.fail("the input's dtype is unknown");
  Value list = a.tensor_as(1, at::kLong);
  // Note [Pad list of run-time length]: a List[int] argument (or a list built in a loop) has no
  // static length. As torch.onnx does, the list is extended with zeros to 2·rank elements
  // (ConstantOfShape(2·rank − len)) so every dim gets a [begin, end] pair; an odd or too long
  // list then fails in ONNX Runtime's Reshape/ConstantOfShape, as PyTorch fails on it.
  if (!len) {
    Value extension = g.op("Sub", {g.constant_ints({2 * rank}), shape_of(g, list)});
    Value zeros = g.op("ConstantOfShape", {extension}, {{"value", at::zeros({1}, at::kLong)}});
    list = g.op("Concat", {list, zeros}, {{"axis", int64_t{0}}});
  }
  const int64_t n = len ? *len / 2 : rank;
  Value pairs = g.op("Reshape", {list, g.constant_ints({n, 2})});
  // [last, ..., first padded dim] × [begin, end] → [begin, end] × [first, ..., last]
  Value ordered =
      transpose(g, slice(g, pairs, {0}, {-1}, {std::numeric_limits<int64_t>::min()}, {-1}), {1, 0});
  if (n < rank) {
    ordered = g.op("Concat", {g.constant(at::zeros({2, rank - n}, at::kLong)), ordered},
                   {{"axis", int64_t{1}}});
  }
  Value pads = g.op("Reshape", {ordered, g.constant_ints({-1})});
  const std::string onnx_mode = mode == "replicate" ? "edge" : mode == "circular" ? "wrap" : mode;
  return pad_computed(g, a.tensor(0), pads, onnx_mode, value, type);
}

Value pad_tensor(GraphContext& g, const Args& a, const Ints& pad, const std::string& mode,
                 double value, Circular circular) {
  const int64_t rank = a.require_rank(0);
  at::ScalarType type = a.dtype(0);
  if (type == at::ScalarType::Undefined) g.fail("the input's dtype is unknown");
  DimPads p = dim_pads(g, pad, rank);
  Value x = crop_negative(g, a.tensor(0), p);
  if (mode == "circular") {
    return circular == Circular::kWrap ? onnx_pad(g, x, p, "wrap", 0.0, type)
                                       : circular_pad(g, x, p);
  }
  if (mode == "reflect") {
    for (size_t d = 0; d < p.begin.size(); ++d) {
      auto sizes = a.sizes(0);
      if (sizes && (*sizes)[d] >= 0 && (*sizes)[d] <= std::max(p.begin[d], p.end[d])) {
        g.fail("reflection padding must be smaller than the padded dim");
      }
    }
  }
  return onnx_pad(g, x, p, mode == "replicate" ? "edge" : mode, value, type);
}

// ----- pixel shuffle ---------------------------------------------------------------------------

// (*, C·r², H, W) → (*, C, H·r, W·r) for shuffle, the inverse for unshuffle: Reshape, Transpose,
// Reshape with the sizes computed in the graph (only the rank is static).
Value pixel_shuffle(GraphContext& g, const Args& a, bool inverse) {
  const int64_t rank = a.require_rank(0);
  if (rank < 3) g.fail("pixel_(un)shuffle needs an input with at least 3 dims");
  const int64_t r = a.int_arg(1);
  const int64_t lead = rank - 3;
  Value x = a.tensor(0);
  Value shape = shape_of(g, x);
  Value lead_dims = lead > 0 ? slice(g, shape, {0}, {0}, {lead}) : "";
  Value c = slice(g, shape, {0}, {lead}, {lead + 1});
  Value h = slice(g, shape, {0}, {lead + 1}, {lead + 2});
  Value w = slice(g, shape, {0}, {lead + 2}, {lead + 3});
  Value rr = g.constant_ints({r});
  Value r2 = g.constant_ints({r * r});
  auto with_lead = [&](Values parts) {
    if (lead > 0) parts.insert(parts.begin(), lead_dims);
    return concat_1d(g, parts);
  };
  Ints perm(lead);
  for (int64_t i = 0; i < lead; ++i) perm[i] = i;
  const int64_t L = lead;
  if (!inverse) {
    Value c_out = g.op("Div", {c, r2});
    Value y = reshape_exact(g, x, with_lead({c_out, rr, rr, h, w}));
    // [*, C, r1, r2, H, W] → [*, C, H, r1, W, r2]
    for (int64_t i : {L, L + 3, L + 1, L + 4, L + 2}) perm.push_back(i);
    y = transpose(g, y, perm);
    return reshape_exact(g, y, with_lead({c_out, g.op("Mul", {h, rr}), g.op("Mul", {w, rr})}));
  }
  Value h_out = g.op("Div", {h, rr});
  Value w_out = g.op("Div", {w, rr});
  Value y = reshape_exact(g, x, with_lead({c, h_out, rr, w_out, rr}));
  // [*, C, H, r1, W, r2] → [*, C, r1, r2, H, W]
  for (int64_t i : {L, L + 2, L + 4, L + 1, L + 3}) perm.push_back(i);
  y = transpose(g, y, perm);
  return reshape_exact(g, y, with_lead({g.op("Mul", {c, r2}), h_out, w_out}));
}

// ----- im2col / col2im -------------------------------------------------------------------------

// One-hot kernels [kh·kw, 1, kh, kw]: output channel i·kw + j picks kernel offset (i, j).
at::Tensor one_hot_kernels(int64_t kh, int64_t kw, at::ScalarType type) {
  at::Tensor k = at::zeros({kh * kw, 1, kh, kw}, at::TensorOptions().dtype(type));
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) k[i * kw + j][0][i][j] = 1;
  return k;
}

// The input's dtype, float32: the only one ONNX Runtime's `kernel` (Conv, ConvTranspose, Col2Im)
// takes.
at::ScalarType conv_type(GraphContext& g, const Args& a, const std::string& kernel = "Conv") {
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat) {
    g.fail("im2col/col2im are exported for float32 inputs only (ONNX Runtime's " + kernel +
           "); cast the input to float");
  }
  return type;
}

// aten::im2col (nn.Unfold): each (N·C) plane convolved with one-hot kernels gives its blocks as
// channels; exact (every output is one input times 1 plus zeros).
Value im2col(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank != 3 && rank != 4) g.fail("im2col needs a 3-D or 4-D input");
  at::ScalarType type = conv_type(g, a);
  Ints k = expand_param(a.int_list(1), 2), dil = expand_param(a.int_list(2), 2),
       pad = expand_param(a.int_list(3), 2), stride = expand_param(a.int_list(4), 2);
  Value x = a.tensor(0);
  if (rank == 3) x = unsqueeze(g, x, {0});
  // The sizes are computed, not -1: an empty batch (N = 0) has no size to infer.
  Value nc = g.op("Mul", {dims_of(g, x, {0}), dims_of(g, x, {1})});
  Value hw = dims_of(g, x, {2, 3});
  Value planes = reshape_exact(g, x, concat_1d(g, {nc, g.constant_ints({1}), hw}));
  Value cols = g.op("Conv", {planes, g.constant(one_hot_kernels(k[0], k[1], type))},
                    {{"kernel_shape", k},
                     {"dilations", dil},
                     {"pads", Ints{pad[0], pad[1], pad[0], pad[1]}},
                     {"strides", stride}});
  // [N·C, kh·kw, oh, ow] → [N, C·kh·kw, oh·ow]
  Value n = dims_of(g, x, {0});
  Value ckk = g.op("Mul", {dims_of(g, x, {1}), g.constant_ints({k[0] * k[1]})});
  Value blocks = g.op("Mul", {dims_of(g, cols, {2}), dims_of(g, cols, {3})});
  Value y = reshape_exact(g, cols, concat_1d(g, {n, ckk, blocks}));
  if (rank == 3) y = squeeze(g, y, {0});
  return y;
}

// aten::col2im (nn.Fold): a ConvTranspose of each channel's blocks with one-hot kernels sums the
// overlapping blocks; output_padding makes up what the stride leaves at the end.
Value col2im(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank != 2 && rank != 3) g.fail("col2im needs a 2-D or 3-D input");
  at::ScalarType type = conv_type(g, a);
  Ints out = expand_param(a.int_list(1), 2), k = expand_param(a.int_list(2), 2),
       dil = expand_param(a.int_list(3), 2), pad = expand_param(a.int_list(4), 2),
       stride = expand_param(a.int_list(5), 2);
  Ints blocks(2), out_pad(2);
  for (int i = 0; i < 2; ++i) {
    int64_t span = out[i] + 2 * pad[i] - dil[i] * (k[i] - 1) - 1;
    if (span < 0) g.fail("col2im: the kernel does not fit in the output");
    blocks[i] = span / stride[i] + 1;
    out_pad[i] = out[i] - ((blocks[i] - 1) * stride[i] - 2 * pad[i] + dil[i] * (k[i] - 1) + 1);
  }
  Value x = a.tensor(0);
  if (rank == 2) x = unsqueeze(g, x, {0});
  // [N, C·kh·kw, L] → [N·C, kh·kw, bh, bw]
  Value planes = g.op("Reshape", {x, g.constant_ints({-1, k[0] * k[1], blocks[0], blocks[1]})});
  ir::Attributes attrs{{"kernel_shape", k},
                       {"dilations", dil},
                       {"pads", Ints{pad[0], pad[1], pad[0], pad[1]}},
                       {"strides", stride}};
  if (out_pad[0] != 0 || out_pad[1] != 0) attrs.emplace_back("output_padding", out_pad);
  Value img = g.op("ConvTranspose", {planes, g.constant(one_hot_kernels(k[0], k[1], type))}, attrs);
  Value y = g.op("Reshape",
                 {img, concat_1d(g, {dims_of(g, x, {0}), g.constant_ints({-1, out[0], out[1]})})});
  if (rank == 2) y = squeeze(g, y, {0});
  return y;
}

// aten::col2im from opset 18: Col2Im sums the blocks into the image as nn.Fold does (ONNX pads
// are [begin_h, begin_w, end_h, end_w]); the output size may be computed in the graph.
Value col2im_onnx(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank != 2 && rank != 3) g.fail("col2im needs a 2-D or 3-D input");
  conv_type(g, a, "Col2Im");
  Ints k = expand_param(a.int_list(2), 2), dil = expand_param(a.int_list(3), 2),
       pad = expand_param(a.int_list(4), 2), stride = expand_param(a.int_list(5), 2);
  Value image = a.is_constant(1) ? g.constant_ints(expand_param(a.int_list(1), 2))
                                 : a.tensor_as(1, at::kLong);
  Value x = a.tensor(0);
  if (rank == 2) x = unsqueeze(g, x, {0});
  Value y = g.op(
      "Col2Im", {x, image, g.constant_ints(k)},
      {{"dilations", dil}, {"pads", Ints{pad[0], pad[1], pad[0], pad[1]}}, {"strides", stride}});
  if (rank == 2) y = squeeze(g, y, {0});
  return y;
}

// ----- distances -------------------------------------------------------------------------------

// The p-norm of `d` over `axis` (ATen's vector norm): p = 0 counts non-zeros, ±inf are the
// max/min of |d|.
Value p_norm(GraphContext& g, const Value& d, double p, int64_t axis, bool keepdim,
             at::ScalarType type) {
  if (p == 2) {
    return g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {d, d}), {axis}, keepdim)});
  }
  Value abs = g.op("Abs", {d});
  if (p == 1) return reduce(g, "ReduceSum", abs, {axis}, keepdim);
  if (std::isinf(p)) return reduce(g, p > 0 ? "ReduceMax" : "ReduceMin", abs, {axis}, keepdim);
  if (p == 0) {
    // Greater (not Equal: float Equal needs opset 11) counts non-zeros; NaN counts as zero.
    Value nz = g.op("Greater", {abs, g.constant_scalar(0, type)});
    return reduce(g, "ReduceSum", g.cast(nz, type), {axis}, keepdim);
  }
  Value sum =
      reduce(g, "ReduceSum", g.op("Pow", {abs, g.constant_scalar(p, type)}), {axis}, keepdim);
  return g.op("Pow", {sum, g.constant_scalar(1.0 / p, type)});
}

at::ScalarType distance_float_type(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (!is_float(type)) g.fail("the result dtype is unknown or not floating point");
  return type;
}

// aten::pairwise_distance: ‖x1 − x2 + eps‖_p over the last dim of the broadcast shape.
Value pairwise_distance(GraphContext& g, const Args& a) {
  at::ScalarType type = distance_float_type(g, a);
  const int64_t rank = std::max(a.require_rank(0), a.require_rank(1));
  double p = a.float_arg(2), eps = a.float_arg(3);
  bool keepdim = a.bool_arg(4);
  Value d = g.op("Sub", {a.tensor_as(0, type), a.tensor_as(1, type)});
  d = g.op("Add", {d, g.constant_scalar(eps, type)});
  if (rank == 0) {
    // ATen takes the norm over dim -1 of a 0-d tensor: |d| for every p but 0.
    Value abs = g.op("Abs", {d});
    return p == 0 ? g.cast(g.op("Greater", {abs, g.constant_scalar(0, type)}), type) : abs;
  }
  return p_norm(g, d, p, rank - 1, keepdim, type);
}

// aten::cosine_similarity (ATen 1.13): x1/max(‖x1‖, eps) · x2/max(‖x2‖, eps) over `dim`.
Value cosine_similarity(GraphContext& g, const Args& a) {
  at::ScalarType type = distance_float_type(g, a);
  const int64_t rank = std::max(a.require_rank(0), a.require_rank(1));
  int64_t dim = normalize_dim(a.int_arg(2), std::max<int64_t>(rank, 1));
  double eps = a.float_arg(3);
  Value x1 = a.tensor_as(0, type), x2 = a.tensor_as(1, type);
  // Broadcast both to the common shape first (Expand broadcasts both ways): the norms are taken
  // over the broadcast dim.
  auto normalized = [&](const Value& x, const Value& other) {
    Value xb = g.op("Expand", {x, shape_of(g, other)});
    Value n = g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {xb, xb}), {dim}, true)});
    n = g.op("Max", {n, g.constant_scalar(eps, type)});
    return g.op("Div", {xb, n});
  };
  return reduce(g, "ReduceSum", g.op("Mul", {normalized(x1, x2), normalized(x2, x1)}), {dim},
                false);
}

// aten::cdist: ‖x1[..., i, :] − x2[..., j, :]‖_p from the broadcast differences (exact for every
// p; ATen's matrix-product form for p = 2 differs only by rounding).
Value cdist(GraphContext& g, const Args& a) {
  at::ScalarType type = distance_float_type(g, a);
  double p = a.float_arg(2);
  if (p < 0) g.fail("cdist only supports non-negative p");
  Value x1 = unsqueeze(g, a.tensor_as(0, type), {a.require_rank(0) - 1});  // [..., P, 1, M]
  Value x2 = unsqueeze(g, a.tensor_as(1, type), {a.require_rank(1) - 2});  // [..., 1, R, M]
  const int64_t rank = std::max(a.require_rank(0), a.require_rank(1)) + 1;
  return p_norm(g, g.op("Sub", {x1, x2}), p, rank - 1, false, type);
}

// ----- converters --------------------------------------------------------------------------

// aten::constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor  ⇒  Pad constant
//   (+ Slice for negative pads); pads/value attributes before 11, inputs from 11
Values constant_pad_nd(GraphContext& g, const Args& a) {
  double value = a.is_none(2) ? 0.0 : a.constant(2).toScalar().toDouble();
  if (!a.is_constant(1)) return {dynamic_pad(g, a, "constant", value, Circular::kSliceConcat)};
  return {pad_tensor(g, a, a.int_list(1), "constant", value, Circular::kSliceConcat)};
}

// aten::pad and aten::_pad_enum in `mode` (value: argument 3).
Values pad_mode(GraphContext& g, const Args& a, const std::string& mode, Circular circular) {
  std::optional<double> value = a.optional_float(3);
  // PyTorch takes a value of 0 with every mode (scripted F.pad of libtorch 1.13 passes value=0.0
  // whatever the mode); another value only with "constant".
  if (value && *value != 0.0 && mode != "constant") {
    g.fail("padding mode '" + mode + "' takes no value (other than 0)");
  }
  if (!a.is_constant(1)) return {dynamic_pad(g, a, mode, value.value_or(0.0), circular)};
  return {pad_tensor(g, a, a.int_list(1), mode, value.value_or(0.0), circular)};
}

std::string pad_str_mode(GraphContext& g, const Args& a) {
  std::string mode = a.str_arg(2);
  if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular") {
    g.fail("unknown padding mode '" + mode + "'");
  }
  return mode;
}

// aten::pad(Tensor self, int[] pad, str mode="constant", float? value=None) -> Tensor  ⇒  Pad
//   constant/reflect/edge, or Slice + Concat for circular (9-18)
Values pad(GraphContext& g, const Args& a) {
  return pad_mode(g, a, pad_str_mode(g, a), Circular::kSliceConcat);
}

// aten::pad  ⇒  Pad constant/reflect/edge/wrap (19+): circular is one Pad in mode wrap
Values pad19(GraphContext& g, const Args& a) {
  return pad_mode(g, a, pad_str_mode(g, a), Circular::kWrap);
}

// at::padding_mode: reflect, replicate, circular, constant.
std::string pad_enum_mode(GraphContext& g, const Args& a) {
  static const char* const kModes[] = {"reflect", "replicate", "circular", "constant"};
  const int64_t m = a.int_arg(2);
  if (m < 0 || m > 3) g.fail("unknown padding mode " + std::to_string(m));
  return kModes[m];
}

// aten::_pad_enum(Tensor self, int[] pad, int mode, float? value=None) -> Tensor  ⇒  as aten::pad;
//   what libtorch's C++ F::pad records (9-18)
Values pad_enum(GraphContext& g, const Args& a) {
  return pad_mode(g, a, pad_enum_mode(g, a), Circular::kSliceConcat);
}

// aten::_pad_enum  ⇒  as aten::pad from 19 (circular: Pad wrap)
Values pad_enum19(GraphContext& g, const Args& a) {
  return pad_mode(g, a, pad_enum_mode(g, a), Circular::kWrap);
}

// aten::reflection_pad{1,2,3}d(Tensor self, int[2n] padding) -> Tensor  ⇒  Pad reflect
// aten::replication_pad{1,2,3}d(Tensor self, int[2n] padding) -> Tensor  ⇒  Pad edge
Converter pad_in_mode(const std::string& mode) {
  return [mode](GraphContext& g, const Args& a) -> Values {
    return {pad_tensor(g, a, a.int_list(1), mode, 0.0, Circular::kSliceConcat)};
  };
}

// aten::_pad_circular(Tensor self, int[] pad) -> Tensor  ⇒  Slice + Concat per padded dim (9-18)
Values pad_circular(GraphContext& g, const Args& a) {
  return {pad_tensor(g, a, a.int_list(1), "circular", 0.0, Circular::kSliceConcat)};
}

// aten::_pad_circular  ⇒  Pad wrap (19+; negative pads crop first, a Slice)
Values pad_circular19(GraphContext& g, const Args& a) {
  return {pad_tensor(g, a, a.int_list(1), "circular", 0.0, Circular::kWrap)};
}

// aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor  ⇒  Reshape, Transpose, Reshape
Values pixel_shuffle_op(GraphContext& g, const Args& a) {
  return {pixel_shuffle(g, a, false)};
}

// aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor  ⇒  Reshape, Transpose,
//   Reshape
Values pixel_unshuffle_op(GraphContext& g, const Args& a) {
  return {pixel_shuffle(g, a, true)};
}

// aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride)
//   -> Tensor  ⇒  Conv of each plane with one-hot kernels + Reshape
Values im2col_op(GraphContext& g, const Args& a) {
  return {im2col(g, a)};
}

// aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation,
//   int[2] padding, int[2] stride) -> Tensor  ⇒  ConvTranspose with one-hot kernels + Reshape
//   (9-17)
Values col2im_op(GraphContext& g, const Args& a) {
  return {col2im(g, a)};
}

// aten::col2im  ⇒  Col2Im (18+)
Values col2im18(GraphContext& g, const Args& a) {
  return {col2im_onnx(g, a)};
}

// aten::pairwise_distance(Tensor x1, Tensor x2, float p, float eps, bool keepdim) -> Tensor
//   ⇒  Sub, Add eps, p-norm reductions
Values pairwise_distance_op(GraphContext& g, const Args& a) {
  return {pairwise_distance(g, a)};
}

// aten::cosine_similarity(Tensor x1, Tensor x2, int dim, float eps) -> Tensor  ⇒  per-vector
//   clamped norms (ReduceSum, Sqrt, Max), Div, ReduceSum
Values cosine_similarity_op(GraphContext& g, const Args& a) {
  return {cosine_similarity(g, a)};
}

// aten::cdist(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor  ⇒  Unsqueeze, Sub,
//   p-norm
Values cdist_op(GraphContext& g, const Args& a) {
  return {cdist(g, a)};
}

}  // namespace

void register_pad(Registry& r) {
  r.add("aten::constant_pad_nd", from(9), constant_pad_nd);
  r.add("aten::pad", {9, 18}, pad);
  r.add("aten::pad", from(19), pad19);
  r.add("aten::_pad_enum", {9, 18}, pad_enum);
  r.add("aten::_pad_enum", from(19), pad_enum19);
  for (const std::string d : {"1d", "2d", "3d"}) {
    r.add("aten::reflection_pad" + d, from(9), pad_in_mode("reflect"));
    r.add("aten::replication_pad" + d, from(9), pad_in_mode("replicate"));
  }
  r.add("aten::_pad_circular", {9, 18}, pad_circular);
  r.add("aten::_pad_circular", from(19), pad_circular19);
  r.add("aten::pixel_shuffle", from(9), pixel_shuffle_op);
  r.add("aten::pixel_unshuffle", from(9), pixel_unshuffle_op);
  r.add("aten::im2col", from(9), im2col_op);
  r.add("aten::col2im", {9, 17}, col2im_op);
  r.add("aten::col2im", from(18), col2im18);
  r.add("aten::pairwise_distance", from(9), pairwise_distance_op);
  r.add("aten::cosine_similarity", from(9), cosine_similarity_op);
  r.add("aten::cdist", from(9), cdist_op);
}

}  // namespace torchonnx::symbolic::ops
