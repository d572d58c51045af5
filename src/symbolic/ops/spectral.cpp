// Signal processing: stft and istft (DFT, opset 17), the complex values they make or take carried
// as real/imaginary pairs (Note [Complex values]: view_as_real/view_as_complex, real, imag, abs,
// ...), and the window functions (hann, hamming, blackman, bartlett; kaiser_window has no exact
// form: it needs the Bessel function I0, which ONNX lacks).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "onnx/dtype.h"
#include "symbolic/context.h"
#include "symbolic/factory.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/spectral.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

namespace {

// A 1-D tensor of `length` elements equal to `value`.
Value filled(GraphContext& g, int64_t length, double value, at::ScalarType type) {
  at::Tensor fill = at::full({1}, value, at::TensorOptions().dtype(type));
  return g.op("ConstantOfShape", {g.constant_ints({length})}, {{"value", fill}});
}

// ----- complex values ----------------------------------------------------------------------------
// Note [Complex values]
// ONNX has no complex arithmetic (COMPLEX64 is a tensor type, but no operator computes with it).
// A complex tensor of shape S that the graph only passes along is carried as a real tensor of shape
// S + [2] (real part, imaginary part: the layout of DFT's output and of view_as_real). Complex
// values are made by stft(return_complex=True) and view_as_complex, and read by view_as_real (the
// pair itself), real / imag (the pair's halves), abs (sqrt(re² + im²)) and istft; reshape/view,
// size, type_as (of a complex value), and mul/div by a real tensor (torchaudio's Spectrogram
// reshapes its complex spectrum and may divide it by the window's norm) carry them on. Ops
// registered in other families (abs, reshape, ...) take their complex form through complex_form
// (ops/spectral.h), which the conversion consults for every node. The makers of complex values
// check that every reader is one of these: any other (a complex product, a graph output, a branch
// or loop, ...) fails the export, naming the reader, before a file is written.

bool is_complex_reader(const torch::jit::Use& use) {
  static const std::set<std::string> readers{"aten::view_as_real", "aten::real", "aten::imag",
                                             "aten::istft",        "aten::abs",  "aten::reshape",
                                             "aten::view",         "aten::size", "aten::type_as",
                                             "aten::mul",          "aten::div"};
  const std::string kind = use.user->kind().toQualString();
  const bool binary = kind == "aten::mul" || kind == "aten::div" || kind == "aten::type_as";
  return (use.offset == 0 || (binary && use.offset == 1)) && readers.count(kind) > 0;
}

// Fails unless every reader of the complex output `v` of the node being converted is one of the
// readers of Note [Complex values].
void check_complex_readers(GraphContext& g, const torch::jit::Value* v) {
  for (const torch::jit::Use& use : v->uses()) {
    if (is_complex_reader(use)) continue;
    const torch::jit::Node* user = use.user;
    const bool output = user->kind() == c10::prim::Return;
    const std::string where = source_location(user);
    g.fail("its complex result reaches " +
           (output ? std::string("an output of the graph")
                   : std::string(user->kind().toQualString())) +
           (where.empty() ? "" : " (" + where + ")") +
           ": ONNX has no complex numbers, and torchonnx carries a complex value only to "
           "view_as_real, real, imag, abs, istft, reshape/view, size, and mul/div by a real "
           "tensor. Remedy: take torch.view_as_real(x) (real and "
           "imaginary parts in a last dim of 2), x.abs(), x.real or x.imag before other ops");
  }
}

// The [..., 2] pair of input `i`, which is complex (Note [Complex values]).
Value complex_pair(GraphContext& g, const Args& a, size_t i) {
  if (!at::isComplexType(a.dtype(i))) {
    g.fail(std::string("input ") + std::to_string(i) + " is " + c10::toString(a.dtype(i)) +
           ", not complex");
  }
  return a.tensor(i);
}

// The real (part 0) or imaginary (part 1) half of a [..., 2] pair.
Value complex_part(GraphContext& g, const Value& pair, int64_t part) {
  return g.op("Gather", {pair, g.constant_scalar(part, at::kLong)}, {{"axis", int64_t{-1}}});
}

// aten::view_as_real(Tensor(a) self) -> Tensor(a)  ⇒  the pair itself
Values view_as_real(GraphContext& g, const Args& a) {
  return {complex_pair(g, a, 0)};
}

// aten::view_as_complex(Tensor(a) self) -> Tensor(a)  ⇒  the [..., 2] input itself, as the pair
// of a complex value (Note [Complex values])
Values view_as_complex(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble) {
    g.fail(std::string("view_as_complex of ") + c10::toString(type) +
           " (PyTorch takes float or double)");
  }
  if (auto last = a.dim_size(0, -1); last && *last != 2) {
    g.fail("view_as_complex needs a last dim of size 2 (as PyTorch)");
  }
  check_complex_readers(g, a.node()->output());
  return {a.tensor(0)};
}

// aten::real(Tensor(a) self) -> Tensor(a)  ⇒  the input for a real tensor (PyTorch returns it);
// Gather of part 0 of a complex value's pair
Values real(GraphContext& g, const Args& a) {
  if (!at::isComplexType(a.dtype(0))) return {a.tensor(0)};
  return {complex_part(g, complex_pair(g, a, 0), 0)};
}

// aten::imag(Tensor(a) self) -> Tensor(a)  ⇒  Gather of part 1 of a complex value's pair (PyTorch
// rejects real tensors)
Values imag(GraphContext& g, const Args& a) {
  return {complex_part(g, complex_pair(g, a, 0), 1)};
}

// DFT of `signal` (real [..., 1] or complex [..., 2]) along `axis`, in double: ONNX Runtime's
// float DFT of sizes that are no power of 2 (n_fft 400 of speech models) is a direct sum whose
// rounding errors reach ~1e-5 of a frame's largest bin, 10-100 times PyTorch's float FFT, and a
// log-mel spectrogram shows them in its weak bands (errors of 5e-2 in the log, against 4e-4
// between PyTorch's float and double results). In double the export stays within PyTorch's own
// rounding. The axis is an attribute at opsets 17-19, an input (after dft_length) from 20.
Value dft(GraphContext& g, const Value& signal, int64_t axis, bool onesided, bool inverse,
          at::ScalarType type) {
  Value x = cast_if(g, signal, type, at::kDouble);
  ir::Attributes attributes{{"onesided", int64_t{onesided}}, {"inverse", int64_t{inverse}}};
  Value y;
  if (g.has(OnnxFeature::kDftAxisInput)) {
    y = g.op("DFT", {x, "", g.constant_scalar(axis, at::kLong)}, attributes);
  } else {
    attributes.emplace_back("axis", axis);
    y = g.op("DFT", {x}, attributes);
  }
  return cast_if(g, y, at::kDouble, type);
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
  bool return_complex;
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
  s.return_complex = !a.is_none(normalized_i + 2) && a.bool_arg(normalized_i + 2);
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

// ----- window functions ------------------------------------------------------------------------
// PyTorch's windows (aten/src/ATen/native/TensorFactories.cpp): length 0 gives [], length 1 gives
// [1]; a longer window is a formula of k / D for k < n, D = n - 1 (symmetric) or n (periodic: the
// first n points of the symmetric window of n + 1). Computed here in double, then cast.
//
// The cosines are written with Sin (cos(2x) = 1 - 2·sin²(x)), as torch.onnx writes hann_window
// (sin²(πk/D)): ONNX Runtime's CPU kernels of Cos are float only up to at least 1.21 (Debian 13's),
// while Sin has a double kernel.

// A window's formula, of k = 0, ..., n - 1 and D (both double).
using WindowFormula = std::function<Value(GraphContext& g, const Args& a, const FactoryArgs& f,
                                          const Value& k, const Value& d)>;

// sin²(m·πk / D): cos(2m·πk / D) = 1 - 2·sin²(m·πk / D).
Value sin_squared(GraphContext& g, const Value& k, const Value& d, double m) {
  Value s =
      g.op("Sin", {g.op("Div", {g.op("Mul", {k, g.constant_scalar(m * M_PI, at::kDouble)}), d})});
  return g.op("Mul", {s, s});
}

// alpha - beta·cos(2πk / D) = (alpha - beta) + 2·beta·sin²(πk / D), for 0-d double alpha and beta.
Value cosine_window(GraphContext& g, const Value& k, const Value& d, const Value& alpha,
                    const Value& beta) {
  Value twice_beta = g.op("Mul", {beta, g.constant_scalar(2, at::kDouble)});
  return g.op("Add",
              {g.op("Sub", {alpha, beta}), g.op("Mul", {twice_beta, sin_squared(g, k, d, 1)})});
}

// 0.5 - 0.5·cos(2πk / D) = sin²(πk / D)
Value hann_formula(GraphContext& g, const Args&, const FactoryArgs&, const Value& k,
                   const Value& d) {
  return sin_squared(g, k, d, 1);
}

// alpha (argument 2) and beta (3) from the periodic_alpha(_beta) overloads (0.54 and 0.46 when
// absent).
Value hamming_formula(GraphContext& g, const Args& a, const FactoryArgs& f, const Value& k,
                      const Value& d) {
  auto coefficient = [&](size_t i, double fallback) {
    return f.positional > i ? a.tensor_as(i, at::kDouble)
                            : g.constant_scalar(fallback, at::kDouble);
  };
  return cosine_window(g, k, d, coefficient(2, 0.54), coefficient(3, 0.46));
}

// 0.42 - 0.5·cos(2πk / D) + 0.08·cos(4πk / D) = sin²(πk / D) - 0.16·sin²(2πk / D) (the constant
// terms cancel: 0.42 - 0.5 + 0.08 = 0)
Value blackman_formula(GraphContext& g, const Args&, const FactoryArgs&, const Value& k,
                       const Value& d) {
  Value c2 = g.op("Mul", {g.constant_scalar(0.16, at::kDouble), sin_squared(g, k, d, 2)});
  return g.op("Sub", {sin_squared(g, k, d, 1), c2});
}

// x = 2k / D up to the middle, 2 - x after it: PyTorch takes 2 - x from k = D / 2 + 1 (integer
// division) on, i.e. exactly where x > 1, which is where Min(x, 2 - x) takes it.
Value bartlett_formula(GraphContext& g, const Args&, const FactoryArgs&, const Value& k,
                       const Value& d) {
  Value x = g.op("Div", {g.op("Mul", {k, g.constant_scalar(2, at::kDouble)}), d});
  return g.op("Min", {x, g.op("Sub", {g.constant_scalar(2, at::kDouble), x})});
}

// A window op: `window_length` at 0, `periodic` at 1 (when the overload has it, else true).
// `onnx_op` (HannWindow, BlackmanWindow: opset 17) computes float and double
// windows when given; otherwise, and for other dtypes, `formula` in double.
Values window_of(GraphContext& g, const Args& a, const FactoryArgs& f, const char* name,
                 const WindowFormula& formula, const char* onnx_op = nullptr) {
  at::ScalarType type = result_dtype(a, f, at::kFloat);
  if (!at::isFloatingType(type)) {
    g.fail(std::string(name) + " of " + c10::toString(type) +
           ": PyTorch's windows are floating point");
  }
  const bool periodic = f.positional >= 2 ? a.bool_arg(1) : true;
  std::optional<int64_t> length;
  if (a.is_constant(0)) {
    length = a.int_arg(0);
    if (*length < 0) g.fail(std::string(name) + " needs window_length >= 0 (as PyTorch)");
    if (*length <= 1) return {filled(g, *length, 1, type)};
  }
  Value n = a.tensor_as(0, at::kLong);
  Value w;
  if (onnx_op && (type == at::kFloat || type == at::kDouble)) {
    w = g.op(onnx_op, {n},
             {{"periodic", int64_t{periodic}}, {"output_datatype", to_onnx_dtype(type)}});
  } else {
    Value k = g.cast(arange(g, n), at::kDouble);
    Value d = g.cast(n, at::kDouble);
    if (!periodic) d = g.op("Sub", {d, g.constant_scalar(1, at::kDouble)});
    w = g.cast(formula(g, a, f, k, d), type);
  }
  if (length) return {w};
  // A computed length of 1 gives [1] in PyTorch (the formulas give 0 or NaN).
  Value is_one = g.op("Equal", {n, g.constant_scalar(1, at::kLong)});
  return {g.op("Where", {is_one, g.constant_scalar(1, type), w})};
}

// aten::hann_window(int window_length, *, dtype, ...) / hann_window.periodic(int window_length,
//   bool periodic, *, dtype, ...)  ⇒  sin²(πk/D) (9-16); HannWindow (17+, float and
//   double; the formula for other dtypes)
Values hann_window(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return window_of(g, a, f, "hann_window", hann_formula);
}
Values hann_window_17(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return window_of(g, a, f, "hann_window", hann_formula, "HannWindow");
}

// aten::hamming_window(int window_length, *, dtype, ...) / .periodic(window_length, periodic) /
//   .periodic_alpha(..., float alpha) / .periodic_alpha_beta(..., float alpha, float beta)
//   ⇒  alpha - beta·cos(2πk/D) (alpha 0.54, beta 0.46 by default). Not ONNX's HammingWindow: its
//   coefficients are 25/46 and 21/46.
Values hamming_window(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return window_of(g, a, f, "hamming_window", hamming_formula);
}

// aten::blackman_window(int window_length, *, dtype, ...) / .periodic(window_length, periodic)
//   ⇒  0.42 - 0.5·cos(2πk/D) + 0.08·cos(4πk/D) (9-16); BlackmanWindow (17+, float and double:
//   the same coefficients)
Values blackman_window(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return window_of(g, a, f, "blackman_window", blackman_formula);
}
Values blackman_window_17(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return window_of(g, a, f, "blackman_window", blackman_formula, "BlackmanWindow");
}

// aten::bartlett_window(int window_length, *, dtype, ...) / .periodic(window_length, periodic)
//   ⇒  Min(2k/D, 2 - 2k/D)
Values bartlett_window(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return window_of(g, a, f, "bartlett_window", bartlett_formula);
}

// aten::stft(Tensor self, int n_fft, int? hop_length, int? win_length, Tensor? window,
//   bool normalized, bool? onesided, bool? return_complex) / stft.center(..., Tensor? window,
//   bool center, str pad_mode, bool normalized, bool? onesided, bool? return_complex
//   [, bool? align_to_window: libtorch 2.14, None or False]) -> Tensor
//   ⇒  (center: Pad reflect/constant/edge by n_fft/2), Gather of the frames
//      (frame f = x[f·hop : f·hop + n_fft]), Mul by the window padded to n_fft, DFT (17+) along
//      the frame (onesided), Mul by n_fft^-1/2 when normalized, Transpose to
//      [batch?, freq, frames, 2], which is also the pair of the complex result of
//      return_complex=True (Note [Complex values]); real input only
Values stft_of(GraphContext& g, const Args& a, bool has_center) {
  const at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble) {
    g.fail(std::string("stft of ") + c10::toString(type) +
           " input: ONNX's DFT takes real float or double signals (complex inputs have no "
           "ONNX tensor type)");
  }
  const StftArgs s = stft_args(g, a, has_center);
  // libtorch 2.14's last argument, align_to_window (frames aligned to the window rather than to
  // n_fft when center is false): None and False frame as before.
  const size_t align = has_center ? 10 : 8;
  if (a.size() > align && !a.is_none(align) && a.bool_arg(align)) {
    g.fail(
        "stft with align_to_window=True (the frames' alignment to the window) is not "
        "converted; remedy: leave align_to_window at its default");
  }
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
  Value spectrum = dft(g, signal, 2, s.onesided, false, type);
  if (s.normalized) {
    spectrum = g.op("Mul", {spectrum, g.constant_scalar(1 / std::sqrt(double(s.n_fft)), type)});
  }
  // A complex result is the same pair (Note [Complex values]).
  if (s.return_complex) check_complex_readers(g, a.node()->output());
  Value y = g.op("Transpose", {spectrum}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  return {rank == 1 ? squeeze(g, y, {0}) : y};
}

Values stft_center(GraphContext& g, const Args& a) {
  return stft_of(g, a, true);
}

Values stft(GraphContext& g, const Args& a) {
  return stft_of(g, a, false);
}

// ----- istft -------------------------------------------------------------------------------------

// Overlap-add of `frames` [B, T, n] (frame t's sample k goes to t·hop + k): [B, (T - 1)·hop + n].
// ScatterElements with reduction add (opset 16+) of every sample into zeros at its position: exact
// up to the order of the additions. (A ConvTranspose with an identity kernel would do it too, but
// ONNX Runtime implements it for float only.)
Value overlap_add(GraphContext& g, const Value& frames, int64_t n, int64_t hop,
                  at::ScalarType type) {
  Value batch = dim_size(g, frames, 0), count = dim_size(g, frames, 1);
  Value starts = g.op("Mul", {arange(g, count), g.constant_scalar(hop, at::kLong)});
  Value positions = g.op("Add", {unsqueeze(g, starts, {1}),
                                 g.constant(at::arange(n, at::kLong).reshape({1, n}))});  // [T, n]
  Value total = g.op("Mul", {count, g.constant_scalar(n, at::kLong)});
  Value updates_shape = concat_1d(g, {unsqueeze(g, batch, {0}), unsqueeze(g, total, {0})});
  Value updates = reshape_exact(g, frames, updates_shape);  // [B, T·n]
  Value indices =
      g.op("Expand", {g.op("Reshape", {positions, g.constant_ints({1, -1})}), updates_shape});
  Value length = g.op("Add", {g.op("Mul", {g.op("Sub", {count, g.constant_scalar(1, at::kLong)}),
                                           g.constant_scalar(hop, at::kLong)}),
                              g.constant_scalar(n, at::kLong)});
  Value zeros =
      g.op("ConstantOfShape", {concat_1d(g, {unsqueeze(g, batch, {0}), unsqueeze(g, length, {0})})},
           {{"value", at::zeros({1}, at::TensorOptions().dtype(type))}});
  return g.op("ScatterElements", {zeros, indices, updates},
              {{"axis", int64_t{1}}, {"reduction", std::string("add")}});
}

// aten::istft(Tensor self, int n_fft, int? hop_length, int? win_length, Tensor? window,
//   bool center=True, bool normalized=False, bool? onesided, int? length,
//   bool return_complex=False) -> Tensor
//   ⇒  the spectrum's pair [B?, F, T, 2] (Note [Complex values]) transposed to frames [B, T, F, 2],
//      its first n_fft/2 + 1 bins extended to n_fft by conjugate symmetry (X[n - k] = X[k]*),
//      DFT inverse=1 (17+) and its real part (= PyTorch's irfft, which ignores what the extension
//      drops), Mul by √n_fft when normalized, Mul by the window padded to n_fft, overlap-add,
//      sliced as PyTorch ([n_fft/2, -n_fft/2) when centered, or `length` samples zero-padded),
//      divided by the overlap-added squared window. A real output only; where PyTorch rejects a
//      window whose overlap-added square is ~0 (NOLA), the model divides by it (inf/nan).
Values istft(GraphContext& g, const Args& a) {
  const at::ScalarType in_type = a.dtype(0);
  at::ScalarType type;
  int64_t rank;  // of the pair
  if (in_type == at::kComplexFloat || in_type == at::kComplexDouble) {
    type = in_type == at::kComplexFloat ? at::kFloat : at::kDouble;
    rank = a.require_rank(0) + 1;
  } else if (in_type == at::kFloat || in_type == at::kDouble) {
    type = in_type;  // PyTorch 1.x's real form: the pair itself
    rank = a.require_rank(0);
    if (auto last = a.dim_size(0, -1); last && *last != 2) {
      g.fail("istft of a real tensor takes the pair form [..., freq, frames, 2]");
    }
  } else {
    g.fail(std::string("istft of ") + c10::toString(in_type) + " (PyTorch takes complex input)");
  }
  if (rank != 3 && rank != 4) {
    g.fail("istft takes a 2-D (freq, frames) or 3-D (batch, freq, frames) spectrum");
  }
  const int64_t n_fft = a.int_arg(1);
  if (n_fft <= 0) g.fail("istft needs n_fft > 0");
  const int64_t hop = a.optional_int(2).value_or(n_fft / 4);
  const int64_t win_length = a.optional_int(3).value_or(n_fft);
  if (hop <= 0 || win_length <= 0 || win_length > n_fft) {
    g.fail("istft needs hop_length > 0 and 0 < win_length <= n_fft (as PyTorch)");
  }
  const bool center = a.bool_arg(5);
  const bool normalized = a.bool_arg(6);
  const std::optional<int64_t> length = a.optional_int(8);
  if (a.bool_arg(9)) {
    g.fail(
        "istft with return_complex=True gives a complex signal, which has no ONNX form here "
        "(Note [Complex values]). Remedy: return_complex=False (a real signal)");
  }
  const int64_t bins = n_fft / 2 + 1;
  const std::optional<int64_t> freq = a.dim_size(0, in_type == type ? -3 : -2);
  bool onesided;
  if (a.is_none(7)) {
    if (!freq) g.fail("istft of a spectrum whose frequency dim is unknown: give onesided");
    onesided = *freq != n_fft;
  } else {
    onesided = a.bool_arg(7);
  }
  if (freq && *freq != (onesided ? bins : n_fft)) {
    g.fail("istft of " + std::to_string(*freq) + " frequency bins with n_fft " +
           std::to_string(n_fft) + (onesided ? " (onesided)" : "") + ": PyTorch rejects it");
  }
  Value pair = rank == 3 ? unsqueeze(g, a.tensor(0), {0}) : a.tensor(0);  // [B, F, T, 2]
  Value spectrum = g.op("Transpose", {pair}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  // The first n_fft/2 + 1 bins (all of a onesided spectrum), then bins n/2+1 .. n-1 as the
  // conjugates of bins n-k: [B, T, n_fft, 2].
  spectrum = slice(g, spectrum, {2}, {0}, {bins});
  if (n_fft > bins) {
    at::Tensor mirrored = n_fft - at::arange(bins, n_fft, at::kLong);
    Value upper = g.op("Gather", {spectrum, g.constant(mirrored)}, {{"axis", int64_t{2}}});
    at::Tensor conj = at::tensor({1.0, -1.0}, at::TensorOptions().dtype(type));
    upper = g.op("Mul", {upper, g.constant(conj)});
    spectrum = g.op("Concat", {spectrum, upper}, {{"axis", int64_t{2}}});
  }
  Value signal = dft(g, spectrum, 2, false, true, type);
  Value frames = complex_part(g, signal, 0);  // [B, T, n_fft]
  if (normalized) {
    frames = g.op("Mul", {frames, g.constant_scalar(std::sqrt(double(n_fft)), type)});
  }
  // The window padded to n_fft (ones of win_length when none).
  Value window = a.is_none(4) ? g.constant(at::ones({win_length}, at::TensorOptions().dtype(type)))
                              : a.tensor_as(4, type);
  if (win_length < n_fft) {
    const int64_t left = (n_fft - win_length) / 2;
    window = g.op("Pad", {window, g.constant_ints({left, n_fft - win_length - left})});
  }
  frames = g.op("Mul", {frames, window});
  Value y = overlap_add(g, frames, n_fft, hop, type);  // [B, L]
  // The squared window overlap-added over the same T frames: [1, L].
  Value frames_shape =
      concat_1d(g, {g.constant_ints({1}), dims_of(g, frames, {1}), g.constant_ints({n_fft})});
  Value squares = g.op("Expand", {g.op("Mul", {window, window}), frames_shape});
  Value envelope = overlap_add(g, squares, n_fft, hop, type);
  const int64_t start = center ? n_fft / 2 : 0;
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  const int64_t end = length ? start + *length : (center && n_fft / 2 > 0 ? -(n_fft / 2) : kEnd);
  y = g.op("Div", {slice(g, y, {1}, {start}, {end}), slice(g, envelope, {1}, {start}, {end})});
  if (length) {
    // `length` samples: PyTorch pads with zeros past the overlap-added signal.
    y = g.op("Pad", {y, g.constant_ints({0, 0, 0, *length})});
    y = slice(g, y, {1}, {0}, {*length});
  }
  return {rank == 3 ? squeeze(g, y, {0}) : y};
}

// ----- complex forms of other families' ops (Note [Complex values]) ------------------------------

// aten::abs(Tensor self) of a complex value  ⇒  sqrt(re² + im²) of its pair, in double for a float
// pair (the squares of large floats would overflow)
Values complex_abs(GraphContext& g, const Args& a) {
  Value pair = complex_pair(g, a, 0);
  const at::ScalarType type = a.dtype(0) == at::kComplexFloat ? at::kFloat : at::kDouble;
  Value p = g.cast(pair, at::kDouble);
  Value sum = reduce(g, "ReduceSum", g.op("Mul", {p, p}), {-1}, false);
  return {cast_if(g, g.op("Sqrt", {sum}), at::kDouble, type)};
}

// aten::reshape(Tensor self, int[] shape) / aten::view(Tensor self, int[] size) of a complex value
//   ⇒  Reshape of its pair to shape + [2]
Values complex_reshape(GraphContext& g, const Args& a) {
  Value pair = complex_pair(g, a, 0);
  Value shape = a.is_constant(1) ? g.constant_ints(a.int_list(1)) : a.tensor_as(1, at::kLong);
  check_complex_readers(g, a.node()->output());
  return {reshape_exact(g, pair, concat_1d(g, {shape, g.constant_ints({2})}))};
}

// aten::size(Tensor self[, int dim]) of a complex value  ⇒  Shape of its pair without the last dim;
// its dim `dim` (normalized for the complex value's rank)
Values complex_size(GraphContext& g, const Args& a) {
  Value shape = g.op("Shape", {complex_pair(g, a, 0)});
  if (a.size() > 1) {
    const int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
    return {g.op("Gather", {shape, g.constant_scalar(dim, at::kLong)}, {{"axis", int64_t{0}}})};
  }
  return {slice(g, shape, {0}, {0}, {-1})};
}

// aten::type_as(Tensor self, Tensor other) of two complex values (RemoveInplaceOps keeps the
// dtype of `z /= x` so)  ⇒  the pair of self
Values complex_type_as(GraphContext& g, const Args& a) {
  if (!at::isComplexType(a.dtype(0)) || a.dtype(0) != a.dtype(1)) {
    g.fail("type_as between a complex and a real value, or complex values of two precisions");
  }
  check_complex_readers(g, a.node()->output());
  return {complex_pair(g, a, 0)};
}

// aten::mul(Tensor self, Tensor other) / aten::div(Tensor self, Tensor other) of a complex value
// and a real one (a tensor or a number)  ⇒  Mul / Div of the pair by the real value, unsqueezed
// to broadcast over the pair's last dim. Complex × complex has no form here.
Converter complex_by_real(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    const bool first = at::isComplexType(a.dtype(0));
    if (at::isComplexType(a.dtype(first ? 1 : 0))) {
      g.fail(
          "a product or quotient of two complex values (torchonnx carries complex values only "
          "through, Note [Complex values])");
    }
    if (onnx_op == "Div" && !first) g.fail("a real number divided by a complex value");
    if (a.size() > 2 && !a.is_none(2)) g.fail("div of a complex value with a rounding mode");
    const at::ScalarType type =
        a.dtype(first ? 0 : 1) == at::kComplexFloat ? at::kFloat : at::kDouble;
    Value pair = complex_pair(g, a, first ? 0 : 1);
    const size_t other_i = first ? 1 : 0;
    Value other = a.tensor_as(other_i, type);
    if (a.rank(other_i).value_or(0) > 0) other = unsqueeze(g, other, {a.require_rank(other_i)});
    check_complex_readers(g, a.node()->output());
    return {first ? g.op(onnx_op, {pair, other}) : g.op(onnx_op, {other, pair})};
  };
}

}  // namespace

Converter complex_form(const torch::jit::Node* node, Converter fn) {
  bool reads_complex = false;
  for (const torch::jit::Value* in : node->inputs()) {
    reads_complex = reads_complex || at::isComplexType(dtype_of(in->type()));
  }
  if (!reads_complex) return fn;
  static const std::map<std::string, Converter> forms{
      {"aten::abs", complex_abs},           {"aten::reshape", complex_reshape},
      {"aten::view", complex_reshape},      {"aten::size", complex_size},
      {"aten::type_as", complex_type_as},   {"aten::mul", complex_by_real("Mul")},
      {"aten::div", complex_by_real("Div")}};
  auto form = forms.find(node->kind().toQualString());
  return form != forms.end() ? form->second : fn;
}

void register_spectral(Registry& r) {
  // The window overloads (Note [Factory overloads] in symbolic/factory.h).
  const std::initializer_list<FactoryOverload> windows = {
      {"", 1, kDtype}, {"periodic", 2, kDtype}, {"out", 1, kOut}, {"periodic_out", 2, kOut}};
  add_factory(r, "aten::hann_window", {9, 16}, windows, hann_window);
  add_factory(r, "aten::hann_window", from(17), windows, hann_window_17);
  add_factory(r, "aten::hamming_window", from(9),
              {{"", 1, kDtype},
               {"periodic", 2, kDtype},
               {"periodic_alpha", 3, kDtype},
               {"periodic_alpha_beta", 4, kDtype},
               {"out", 1, kOut},
               {"periodic_out", 2, kOut},
               {"periodic_alpha_out", 3, kOut},
               {"periodic_alpha_beta_out", 4, kOut}},
              hamming_window);
  add_factory(r, "aten::blackman_window", {9, 16}, windows, blackman_window);
  add_factory(r, "aten::blackman_window", from(17), windows, blackman_window_17);
  add_factory(r, "aten::bartlett_window", from(9), windows, bartlett_window);
  r.add_unnamed("aten::stft", from(17), stft);
  r.add("aten::stft.center", from(17), stft_center);
  r.add("aten::view_as_real", from(9), view_as_real);
  r.add("aten::view_as_complex", from(9), view_as_complex);
  r.add("aten::real", from(9), real);
  r.add("aten::imag", from(9), imag);
  r.add("aten::istft", from(17), istft);
}

}  // namespace torchonnx::symbolic::ops
