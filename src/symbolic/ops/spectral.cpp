// Signal processing: stft/istft (ONNX STFT and DFT, opset 17), view_as_real/view_as_complex
// where the graph only passes complex values through, and window functions.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "onnx/dtype.h"
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

namespace {

// The schema position of the argument called `name`, when the node's schema has one.
std::optional<size_t> arg_index(const Args& a, const std::string& name) {
  const c10::FunctionSchema* schema = a.node()->maybeSchema();
  if (schema == nullptr) return std::nullopt;
  const auto& args = schema->arguments();
  for (size_t i = 0; i < args.size() && i < a.size(); ++i) {
    if (args[i].name() == name) return i;
  }
  return std::nullopt;
}

// The result dtype: the `dtype` argument, else the output's type from type propagation, else
// `fallback` (PyTorch's default for the op).
at::ScalarType result_dtype(const Args& a, at::ScalarType fallback) {
  at::ScalarType out = a.output_dtype();
  if (auto i = arg_index(a, "dtype"); i && !a.is_none(*i)) {
    // A computed dtype (dtype=x.dtype, unfolded) is the one type propagation gave the output.
    if (!a.is_constant(*i) && out != at::ScalarType::Undefined) return out;
    return static_cast<at::ScalarType>(a.int_arg(*i));
  }
  return out != at::ScalarType::Undefined ? out : fallback;
}

// A 1-D tensor of `length` elements equal to `value`.
Value filled(GraphContext& g, int64_t length, double value, at::ScalarType type) {
  at::Tensor fill = at::full({1}, value, at::TensorOptions().dtype(type));
  return g.op("ConstantOfShape", {g.constant_ints({length})}, {{"value", fill}});
}

// torch.hann_window of a 0-d int64 length `n`, in double: 0.5 - 0.5·cos(2πk / D), k < n,
// D = n (periodic) or n - 1 (symmetric).
Value hann_cos(GraphContext& g, const Value& n, bool periodic) {
  Value k = g.cast(arange(g, n), at::kDouble);
  Value d = g.cast(n, at::kDouble);
  if (!periodic) d = g.op("Sub", {d, g.constant_scalar(1, at::kDouble)});
  Value angle = g.op("Div", {g.op("Mul", {k, g.constant_scalar(2 * M_PI, at::kDouble)}), d});
  Value half = g.constant_scalar(0.5, at::kDouble);
  return g.op("Sub", {half, g.op("Mul", {half, g.op("Cos", {angle})})});
}

// torch.stft's arguments, from either overload:
//   stft(self, n_fft, hop_length?, win_length?, window?, normalized, onesided?, return_complex?)
//   stft.center(self, n_fft, hop_length?, win_length?, window?, center, pad_mode, normalized,
//               onesided?, return_complex?)
struct StftArgs {
  int64_t n_fft, hop, win_length;
  bool center = false;
  std::string pad_mode = "reflect";
  bool normalized, onesided;
};

StftArgs stft_args(GraphContext& g, const Args& a, bool has_center) {
  const size_t normalized_i = has_center ? 7 : 5;
  StftArgs s;
  s.n_fft = a.int_arg(1);
  if (s.n_fft <= 0) g.fail("stft needs n_fft > 0");
  s.hop = a.optional_int(2).value_or(s.n_fft / 4);
  s.win_length = a.optional_int(3).value_or(s.n_fft);
  if (s.hop <= 0 || s.win_length <= 0 || s.win_length > s.n_fft) {
    g.fail("stft needs hop_length > 0 and 0 < win_length <= n_fft (as PyTorch)");
  }
  if (has_center) {
    s.center = a.bool_arg(5);
    s.pad_mode = a.str_arg(6);
  }
  s.normalized = a.bool_arg(normalized_i);
  s.onesided = a.is_none(normalized_i + 1) || a.bool_arg(normalized_i + 1);
  if (!a.is_none(normalized_i + 2) && a.bool_arg(normalized_i + 2)) {
    g.fail(
        "stft with return_complex=True returns a complex tensor, which ONNX cannot represent. "
        "Remedy: return_complex=False (the real and imaginary parts in a last dim of 2)");
  }
  return s;
}

// The window of length n_fft that multiplies each frame: `window` (or ones) of win_length, padded
// with zeros on both sides to n_fft as torch.stft centers it; nullopt for a rectangular window of
// n_fft (no multiplication).
std::optional<Value> stft_window(GraphContext& g, const Args& a, const StftArgs& s,
                                 at::ScalarType type) {
  if (a.is_none(4) && s.win_length == s.n_fft) return std::nullopt;
  Value w;
  if (a.is_none(4)) {
    w = g.constant(at::ones({s.win_length}, at::TensorOptions().dtype(type)));
  } else {
    if (auto sizes = a.sizes(4); sizes && (sizes->size() != 1 || (*sizes)[0] != s.win_length)) {
      g.fail("stft's window must be 1-D of win_length elements (as PyTorch requires)");
    }
    w = a.tensor_as(4, type);
  }
  if (s.win_length == s.n_fft) return w;
  const int64_t left = (s.n_fft - s.win_length) / 2;
  return g.op("Pad", {w, g.constant_ints({left, s.n_fft - s.win_length - left})});
}

// aten::hann_window(int window_length[, bool periodic=True], *, dtype, ...)
//   ⇒  HannWindow (17+); 0.5 - 0.5·cos(2πk/D) below; length 1 gives [1] as in PyTorch
Values hann_window(GraphContext& g, const Args& a) {
  at::ScalarType type = result_dtype(a, at::kFloat);
  if (!at::isFloatingType(type)) g.fail("hann_window needs a floating dtype");
  auto periodic_i = arg_index(a, "periodic");
  const bool periodic = periodic_i ? a.bool_arg(*periodic_i) : true;
  std::optional<int64_t> length;
  if (a.is_constant(0)) {
    length = a.int_arg(0);
    if (*length == 0) return {filled(g, 0, 0, type)};
    if (*length == 1) return {filled(g, 1, 1, type)};
  }
  Value n = a.tensor_as(0, at::kLong);
  Value w;
  if (g.opset() >= 17 && (type == at::kFloat || type == at::kDouble)) {
    w = g.op("HannWindow", {n},
             {{"periodic", int64_t{periodic}}, {"output_datatype", to_onnx_dtype(type)}});
  } else {
    w = g.cast(hann_cos(g, n, periodic), type);
  }
  if (length) return {w};
  // A computed length of 1 gives [1] in PyTorch (the formulas give 0 or NaN).
  Value is_one = g.op("Equal", {n, g.constant_scalar(1, at::kLong)});
  return {g.op("Where", {is_one, g.constant_scalar(1, type), w})};
}

// aten::stft(Tensor self, int n_fft, int? hop_length, int? win_length, Tensor? window,
//   bool normalized, bool? onesided, bool? return_complex) / stft.center(..., Tensor? window,
//   bool center, str pad_mode, bool normalized, bool? onesided, bool? return_complex) -> Tensor
//   ⇒  (center: Pad reflect/constant/edge by n_fft/2), Gather of the frames
//      (frame f = x[f·hop : f·hop + n_fft]), Mul by the window padded to n_fft, DFT (17+) along
//      the frame (onesided), Mul by n_fft^-1/2 when normalized, Transpose to
//      [batch?, freq, frames, 2]; real input, return_complex=False only
Values stft_of(GraphContext& g, const Args& a, bool has_center) {
  const at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble) {
    g.fail(std::string("stft of ") + c10::toString(type) +
           " input: ONNX's DFT takes real float or double signals (complex inputs have no "
           "ONNX tensor type)");
  }
  const StftArgs s = stft_args(g, a, has_center);
  const int64_t rank = a.require_rank(0);
  if (rank != 1 && rank != 2) g.fail("stft takes a 1-D or a 2-D (batch, time) input");
  Value x = rank == 1 ? unsqueeze(g, a.tensor(0), {0}) : a.tensor(0);  // [B, L]
  if (s.center) {
    const std::map<std::string, std::string> modes{
        {"reflect", "reflect"}, {"constant", "constant"}, {"replicate", "edge"}};
    auto mode = modes.find(s.pad_mode);
    if (mode == modes.end()) {
      g.fail("stft with center=True and pad_mode '" + s.pad_mode +
             "': ONNX Pad has reflect, constant and replicate (edge) only");
    }
    const int64_t p = s.n_fft / 2;
    x = g.op("Pad", {x, g.constant_ints({0, p, 0, p})}, {{"mode", mode->second}});
  }
  // Frame starts f·hop for f < 1 + (L - n_fft) / hop, plus offsets 0..n_fft-1: [F, n_fft].
  Value length = dim_size(g, x, 1);
  Value frames =
      g.op("Add", {g.op("Div", {g.op("Sub", {length, g.constant_scalar(s.n_fft, at::kLong)}),
                                g.constant_scalar(s.hop, at::kLong)}),
                   g.constant_scalar(1, at::kLong)});
  Value starts = g.op("Mul", {arange(g, frames), g.constant_scalar(s.hop, at::kLong)});
  Value offsets = g.constant(at::arange(s.n_fft, at::kLong));
  Value index = g.op("Add", {unsqueeze(g, starts, {1}), unsqueeze(g, offsets, {0})});
  Value framed = g.op("Gather", {x, index}, {{"axis", int64_t{1}}});  // [B, F, n_fft]
  if (auto w = stft_window(g, a, s, type)) framed = g.op("Mul", {framed, *w});
  // DFT along the frame: an attribute at opsets 17-19, an input (after dft_length) from 20.
  Value signal = unsqueeze(g, framed, {3});  // [B, F, n_fft, 1]: real
  Value spectrum =
      g.opset() >= 20
          ? g.op("DFT", {signal, "", g.constant_scalar(2, at::kLong)},
                 {{"onesided", int64_t{s.onesided}}})
          : g.op("DFT", {signal}, {{"axis", int64_t{2}}, {"onesided", int64_t{s.onesided}}});
  if (s.normalized) {
    spectrum = g.op("Mul", {spectrum, g.constant_scalar(1 / std::sqrt(double(s.n_fft)), type)});
  }
  Value y = g.op("Transpose", {spectrum}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  return {rank == 1 ? squeeze(g, y, {0}) : y};
}

Values stft_center(GraphContext& g, const Args& a) {
  return stft_of(g, a, true);
}

// Either overload, told apart by the number of arguments (nodes without a schema).
Values stft_any(GraphContext& g, const Args& a) {
  return stft_of(g, a, a.size() == 10);
}

}  // namespace

void register_spectral(Registry& r) {
  r.add("aten::hann_window", from(9), hann_window);
  r.add("aten::stft", from(17), stft_any);
  r.add("aten::stft.center", from(17), stft_center);
}

}  // namespace torchonnx::symbolic::ops
