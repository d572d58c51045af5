// Activations.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// ONNX Runtime implements Elu, Selu, LeakyRelu, Softplus, HardSigmoid, HardSwish, Erf and PRelu
// (before opset 16) for float only: other dtypes get an exact composition instead.
bool needs_composition(at::ScalarType type) {
  return type != at::kFloat;
}

// x < 0 ? slope · x : x (slope a scalar or a tensor broadcast to x)  ⇒  Where
Value negative_scaled(GraphContext& g, const Value& x, const Value& slope, at::ScalarType type) {
  Value neg = g.op("Less", {x, g.constant_scalar(0, type)});
  return g.op("Where", {neg, g.op("Mul", {x, slope}), x});
}

// LeakyRelu(alpha), composed for non-float dtypes.
Value leaky_relu(GraphContext& g, const Value& x, at::ScalarType type, double alpha) {
  if (!needs_composition(type)) return g.op("LeakyRelu", {x}, {{"alpha", alpha}});
  return negative_scaled(g, x, g.constant_scalar(alpha, type), type);
}

// log(1 + exp(x)): ONNX Softplus, composed for non-float dtypes.
Value softplus(GraphContext& g, const Value& x, at::ScalarType type) {
  if (!needs_composition(type)) return g.op("Softplus", {x});
  return g.op("Log", {g.op("Add", {g.op("Exp", {x}), g.constant_scalar(1, type)})});
}

// scale · (x > 0 ? x : alpha · (exp(x · input_scale) - 1)): ONNX Elu when input_scale is 1 (and
// the dtype float), else Where.
Value elu(GraphContext& g, const Value& x, at::ScalarType type, double alpha, double scale,
          double input_scale) {
  Value y;
  if (input_scale == 1.0 && !needs_composition(type)) {
    y = g.op("Elu", {x}, {{"alpha", alpha}});
  } else {
    Value xs = input_scale == 1.0 ? x : g.op("Mul", {x, g.constant_scalar(input_scale, type)});
    Value e = g.op("Exp", {xs});
    Value neg =
        g.op("Mul", {g.op("Sub", {e, g.constant_scalar(1, type)}), g.constant_scalar(alpha, type)});
    y = g.op("Where", {g.op("Greater", {x, g.constant_scalar(0, type)}), x, neg});
  }
  return scale == 1.0 ? y : g.op("Mul", {y, g.constant_scalar(scale, type)});
}

// clamp(x / 6 + 1/2, 0, 1): HardSigmoid (float-only in ONNX Runtime), else Max/Min.
Value hard_sigmoid(GraphContext& g, const Value& x, at::ScalarType type) {
  if (!needs_composition(type)) {
    return g.op("HardSigmoid", {x}, {{"alpha", 1.0 / 6}, {"beta", 0.5}});
  }
  Value y =
      g.op("Add", {g.op("Div", {x, g.constant_scalar(6, type)}), g.constant_scalar(0.5, type)});
  Value lo = g.op("Max", {y, g.constant_scalar(0, type)});
  return g.op("Min", {lo, g.constant_scalar(1, type)});
}

// A Scalar argument, or `fallback` when the overload has fewer arguments.
double scalar_arg(const Args& a, size_t i, double fallback) {
  return a.size() > i ? a.float_arg(i) : fallback;
}

// aten::relu / sigmoid / tanh(Tensor self) -> Tensor  ⇒  Relu / Sigmoid / Tanh, on the input
// in the result dtype (sigmoid and tanh of an integer tensor are float in PyTorch; ONNX's ops
// take floats only)
Converter simple(const std::string& onnx_op, ir::Attributes attrs = {}) {
  return [=](GraphContext& g, const Args& a) -> Values {
    const at::ScalarType out = a.output_dtype();
    const bool cast = at::isFloatingType(out) && a.dtype(0) != out;
    return {g.op(onnx_op, {cast ? a.tensor_as(0, out) : a.tensor(0)}, attrs)};
  };
}

// aten::relu(Tensor self) -> Tensor  ⇒  Relu; integers: Where(self < 0, 0, self) (ONNX
// Runtime has no integer Relu kernel, and Max takes integers only from opset 12)
Values relu(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  if (at::isIntegralType(type, /*includeBool=*/false)) {
    Value x = a.tensor(0);
    Value zero = g.constant_scalar(0, type);
    return {g.op("Where", {g.op("Less", {x, zero}), zero, x})};
  }
  return {g.op("Relu", {a.tensor(0)})};
}

// aten::softmax(Tensor self, int dim, ScalarType? dtype) / log_softmax(same) -> Tensor
// aten::_softmax / _log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
//   ⇒  Softmax / LogSoftmax over `dim` (13+); before 13 the op flattens to 2-D at `axis`, which
//      equals PyTorch's softmax only over the last dim: other dims are transposed to the end and
//      back (9–12). ONNX needs rank >= 1: a 0-d input is unsqueezed to [1] and back.
// `half_to_float`: argument 2 is _softmax's bool half_to_float (Half computed as Float) rather
// than softmax's ScalarType? dtype. `any_axis`: the op takes any axis (opset 13+).
Converter softmax(const std::string& onnx_op, bool half_to_float, bool any_axis) {
  return [=](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    int64_t dim = normalize_dim(a.int_arg(1), rank);
    Value x = a.tensor(0);
    if (half_to_float) {
      if (a.bool_arg(2) && a.dtype(0) == at::kHalf) x = g.cast(x, at::kFloat);
    } else if (a.size() > 2 && !a.is_none(2)) {
      x = g.cast(x, c10::ScalarType(a.int_arg(2)));
    }
    if (rank == 0) {
      Value y = g.op(onnx_op, {unsqueeze(g, x, {0})}, {{"axis", int64_t{0}}});
      return {squeeze(g, y, {0})};
    }
    if (any_axis || dim == rank - 1) return {g.op(onnx_op, {x}, {{"axis", dim}})};
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    std::swap(perm[dim], perm[rank - 1]);
    Value t = g.op("Transpose", {x}, {{"perm", perm}});
    Value y = g.op(onnx_op, {t}, {{"axis", rank - 1}});
    return {g.op("Transpose", {y}, {{"perm", perm}})};
  };
}

// aten::_safe_softmax(Tensor self, int dim, ScalarType? dtype) -> Tensor (PyTorch >= 2.5: SDPA's
//   masked softmax)  ⇒  Softmax, and 0 along a row that is -inf throughout (where Softmax gives
//   NaN): Where(all(x == -inf along dim), 0, y), as PyTorch computes it
Converter safe_softmax(bool any_axis) {
  return [plain = softmax("Softmax", false, any_axis)](GraphContext& g, const Args& a) -> Values {
    Value y = plain(g, a)[0];
    const int64_t rank = a.require_rank(0);
    if (rank == 0) return {y};
    const int64_t dim = normalize_dim(a.int_arg(1), rank);
    at::ScalarType type =
        a.size() > 2 && !a.is_none(2) ? c10::ScalarType(a.int_arg(2)) : a.dtype(0);
    Value x = a.size() > 2 && !a.is_none(2) ? g.cast(a.tensor(0), type) : a.tensor(0);
    // x == -inf as x < lowest (Equal takes no floats before 11); a row is masked when all are.
    const double lowest = type == at::kDouble ? std::numeric_limits<double>::lowest()
                                              : std::numeric_limits<float>::lowest();
    Value neg_inf = g.cast(g.op("Less", {x, g.constant_scalar(lowest, type)}), at::kFloat);
    Value all = reduce(g, "ReduceMin", neg_inf, {dim}, /*keepdims=*/true);
    return {g.op("Where", {g.cast(all, at::kBool), g.constant_scalar(0, type), y})};
  };
}

// aten::hardsigmoid(Tensor self) -> Tensor  ⇒  HardSigmoid(alpha=1/6, beta=1/2) (float; Max/Min
//   else)
Values hardsigmoid(GraphContext& g, const Args& a) {
  return {hard_sigmoid(g, a.tensor(0), a.dtype(0))};
}

// aten::hardswish(Tensor self) -> Tensor  ⇒  x * HardSigmoid(x) (9–13)
Values hardswish_9(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  return {g.op("Mul", {x, hard_sigmoid(g, x, a.dtype(0))})};
}

// aten::hardswish(Tensor self) -> Tensor  ⇒  HardSwish (14+, float), x * HardSigmoid(x) otherwise
Values hardswish_14(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  if (!needs_composition(a.dtype(0))) return {g.op("HardSwish", {x})};
  return {g.op("Mul", {x, hard_sigmoid(g, x, a.dtype(0))})};
}

// aten::silu(Tensor self) -> Tensor  ⇒  x * Sigmoid(x); x / (1 + exp(-x)) for non-float dtypes
//   (ONNX Runtime fuses x * Sigmoid(x) into its float-only QuickGelu whatever the dtype)
Values silu(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  if (!needs_composition(a.dtype(0))) return {g.op("Mul", {x, g.op("Sigmoid", {x})})};
  Value denom = g.op("Add", {g.op("Exp", {g.op("Neg", {x})}), g.constant_scalar(1, a.dtype(0))});
  return {g.op("Div", {x, denom})};
}

// aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor  ⇒  Clip
Values hardtanh(GraphContext& g, const Args& a) {
  double lo = a.size() > 1 ? a.float_arg(1) : -1.0;
  double hi = a.size() > 2 ? a.float_arg(2) : 1.0;
  return {clip(g, a.tensor(0), lo, hi, a.dtype(0))};
}

// aten::relu6(Tensor self) -> Tensor  ⇒  Clip(0, 6)
Values relu6(GraphContext& g, const Args& a) {
  return {clip(g, a.tensor(0), 0.0, 6.0, a.dtype(0))};
}

// aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor  ⇒  LeakyRelu
Values leaky_relu_op(GraphContext& g, const Args& a) {
  double slope = a.size() > 1 ? a.float_arg(1) : 0.01;
  return {leaky_relu(g, a.tensor(0), a.dtype(0), slope)};
}

// aten::gelu(Tensor self, str approximate='none') -> Tensor
//   ⇒  0.5·x·(1 + erf(x/√2))  ('none'),  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))  ('tanh')
Values gelu(GraphContext& g, const Args& a) {
  std::string approximate = a.size() > 1 ? a.str_arg(1) : "none";
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  Value inner;
  if (approximate == "tanh") {
    Value cube = g.op("Mul", {g.op("Mul", {x, x}), x});
    Value poly = g.op("Add", {x, g.op("Mul", {cube, g.constant_scalar(0.044715, type)})});
    inner = g.op("Tanh", {g.op("Mul", {poly, g.constant_scalar(std::sqrt(2.0 / M_PI), type)})});
  } else if (approximate == "none") {
    Value scaled = g.op("Div", {x, g.constant_scalar(std::sqrt(2.0), type)});
    if (needs_composition(type)) {
      // ONNX Runtime's Erf is float-only: other dtypes are computed in float (rel. err ~1e-7).
      inner = g.cast(g.op("Erf", {g.cast(scaled, at::kFloat)}), type);
    } else {
      inner = g.op("Erf", {scaled});
    }
  } else {
    g.fail("unknown approximate='" + approximate + "'");
  }
  Value one_plus = g.op("Add", {inner, g.constant_scalar(1.0, type)});
  return {g.op("Mul", {g.op("Mul", {x, one_plus}), g.constant_scalar(0.5, type)})};
}

// aten::gelu from opset 20  ⇒  Gelu with the same approximate ('none' or 'tanh'; float; other
// dtypes: the composition)
Values gelu20(GraphContext& g, const Args& a) {
  std::string approximate = a.size() > 1 ? a.str_arg(1) : "none";
  if (needs_composition(a.dtype(0)) || (approximate != "none" && approximate != "tanh")) {
    return gelu(g, a);
  }
  return {g.op("Gelu", {a.tensor(0)}, {{"approximate", approximate}})};
}

// aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
//   ⇒  scale · Elu(alpha); Where(x > 0, x, alpha·(exp(x·input_scale) - 1)) for input_scale ≠ 1
Values elu_op(GraphContext& g, const Args& a) {
  return {elu(g, a.tensor(0), a.dtype(0), scalar_arg(a, 1, 1), scalar_arg(a, 2, 1),
              scalar_arg(a, 3, 1))};
}

// aten::selu(Tensor self) -> Tensor  ⇒  Selu (PyTorch's alpha and scale)
Values selu(GraphContext& g, const Args& a) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  if (needs_composition(a.dtype(0))) return {elu(g, a.tensor(0), a.dtype(0), kAlpha, kScale, 1)};
  return {g.op("Selu", {a.tensor(0)}, {{"alpha", kAlpha}, {"gamma", kScale}})};
}

// celu's alpha (PyTorch rejects 0).
double celu_alpha(GraphContext& g, const Args& a) {
  const double alpha = scalar_arg(a, 1, 1);
  if (alpha == 0) g.fail("celu with alpha=0 (PyTorch rejects it)");
  return alpha;
}

// aten::celu(Tensor self, Scalar alpha=1) -> Tensor  ⇒  ATen's elu(alpha, 1, 1/alpha): x > 0 ? x :
//   alpha·(exp(x/alpha) - 1) (9–11)
Values celu_9(GraphContext& g, const Args& a) {
  const double alpha = celu_alpha(g, a);
  return {elu(g, a.tensor(0), a.dtype(0), alpha, 1, 1 / alpha)};
}

// aten::celu(Tensor self, Scalar alpha=1) -> Tensor  ⇒  Celu (12+) for float inputs with
//   alpha > 0 (Celu is float-only), the elu composition otherwise
Values celu_12(GraphContext& g, const Args& a) {
  const double alpha = celu_alpha(g, a);
  if (a.dtype(0) == at::kFloat && alpha > 0) {
    return {g.op("Celu", {a.tensor(0)}, {{"alpha", alpha}})};
  }
  return {elu(g, a.tensor(0), a.dtype(0), alpha, 1, 1 / alpha)};
}

// aten::glu(Tensor self, int dim=-1) -> Tensor  ⇒  Split in halves (equal Split), a · Sigmoid(b)
Values glu(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) g.fail("glu of a 0-d tensor (PyTorch rejects it)");
  const int64_t dim = normalize_dim(a.size() > 1 ? a.int_arg(1) : -1, rank);
  Values halves = split_equal(g, a.tensor(0), 2, dim);
  return {g.op("Mul", {halves[0], g.op("Sigmoid", {halves[1]})})};
}

// aten::mish(Tensor self) -> Tensor  ⇒  x · Tanh(Softplus(x))
Values mish(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  return {g.op("Mul", {x, g.op("Tanh", {softplus(g, x, a.dtype(0))})})};
}

// aten::mish from opset 18  ⇒  Mish (float; other dtypes: the composition)
Values mish18(GraphContext& g, const Args& a) {
  if (needs_composition(a.dtype(0))) return mish(g, a);
  return {g.op("Mish", {a.tensor(0)})};
}

// aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
//   ⇒  Where(x·beta > threshold, x, Softplus(x·beta) / beta) (ONNX Softplus has neither)
Values softplus_op(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  const double beta = scalar_arg(a, 1, 1), threshold = scalar_arg(a, 2, 20);
  Value x = a.tensor(0);
  Value bx = beta == 1 ? x : g.op("Mul", {x, g.constant_scalar(beta, type)});
  Value soft = softplus(g, bx, type);
  if (beta != 1) soft = g.op("Div", {soft, g.constant_scalar(beta, type)});
  Value linear = g.op("Greater", {bx, g.constant_scalar(threshold, type)});
  return {g.op("Where", {linear, x, soft})};
}

// aten::hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor  ⇒  Shrink(lambd, bias=0)
// aten::softshrink(Tensor self, Scalar lambd=0.5) -> Tensor  ⇒  Shrink(lambd, bias=lambd)
Converter shrink(bool soft) {
  return [soft](GraphContext& g, const Args& a) -> Values {
    // (A negative lambd, which only hardshrink accepts, is the identity for both.)
    const double lambd = scalar_arg(a, 1, 0.5);
    return {g.op("Shrink", {a.tensor(0)}, {{"lambd", lambd}, {"bias", soft ? lambd : 0.0}})};
  };
}

// aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor
//   ⇒  Where(x > threshold, x, value) (both scalars converted to self's dtype, as ATen does)
Values threshold(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  // ONNX Runtime's Greater takes float, double, int32 and int64.
  const bool comparable =
      type == at::kFloat || type == at::kDouble || type == at::kInt || type == at::kLong;
  const at::ScalarType cmp = comparable ? type : at::kFloat;
  Value x = a.tensor(0);
  Value th = a.tensor_as(1, type);
  Value above =
      comparable ? g.op("Greater", {x, th}) : g.op("Greater", {g.cast(x, cmp), g.cast(th, cmp)});
  return {g.op("Where", {above, x, a.tensor_as(2, type)})};
}

// aten::log_sigmoid(Tensor self) -> Tensor  ⇒  min(x, 0) - log(1 + exp(-|x|)) (no
//   overflow/underflow, where Log(Sigmoid(x)) gives -inf below about -88)
Values log_sigmoid(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  Value min0 = g.op("Neg", {g.op("Relu", {g.op("Neg", {x})})});
  Value e = g.op("Exp", {g.op("Neg", {g.op("Abs", {x})})});
  Value log1p = g.op("Log", {g.op("Add", {e, g.constant_scalar(1, type)})});
  return {g.op("Sub", {min0, log1p})};
}

// aten::logit(Tensor self, float? eps=None) -> Tensor  ⇒  Log(z / (1 - z)),
//   z = Min(Max(x, eps), 1 - eps) when eps >= 0 (ATen's kernel ignores a negative eps), z = x
//   without eps; integers as float
Values logit(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) type = a.dtype(0);
  if (!at::isFloatingType(type)) type = at::kFloat;
  Value z = a.tensor_as(0, type);
  const std::optional<double> eps = a.size() > 1 ? a.optional_float(1) : std::nullopt;
  if (eps && *eps >= 0) {
    // Max/Min rather than Clip: ONNX Runtime's Clip takes no double before opset 12.
    z = g.op("Min",
             {g.op("Max", {z, g.constant_scalar(*eps, type)}), g.constant_scalar(1 - *eps, type)});
  }
  Value odds = g.op("Div", {z, g.op("Sub", {g.constant_scalar(1, type), z})});
  return {g.op("Log", {odds})};
}

// prelu's per-channel weight (dim 1) reshaped to broadcast over the trailing dims of input 0.
Value prelu_weight(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  Value w = a.tensor_as(1, a.dtype(0));
  if (rank == 0) {
    w = g.op("Reshape", {w, g.constant_ints({})});
  } else if (rank >= 3 && a.rank(1) != std::optional<int64_t>(0)) {
    // (a 0-d weight, one slope for every channel, broadcasts as it is)
    std::vector<int64_t> axes;
    for (int64_t i = 1; i <= rank - 2; ++i) axes.push_back(i);
    w = unsqueeze(g, w, axes);
  }
  return w;
}

// aten::prelu(Tensor self, Tensor weight) -> Tensor  ⇒  PRelu with the weight unsqueezed to
//   broadcast (float); Where(x < 0, x · w, x) for other dtypes (9–15, and from 19: ONNX Runtime's
//   PRelu takes only float before opset 16, and again from opset 19 (1.30 has no double kernel
//   for a model of opset >= 19))
Values prelu_9(GraphContext& g, const Args& a) {
  Value w = prelu_weight(g, a);
  if (needs_composition(a.dtype(0))) return {negative_scaled(g, a.tensor(0), w, a.dtype(0))};
  return {g.op("PRelu", {a.tensor(0), w})};
}

// aten::prelu(Tensor self, Tensor weight) -> Tensor  ⇒  PRelu with the weight unsqueezed to
//   broadcast (16-18, every dtype)
Values prelu_16(GraphContext& g, const Args& a) {
  Value w = prelu_weight(g, a);
  return {g.op("PRelu", {a.tensor(0), w})};
}

// aten::rrelu(Tensor self, Scalar lower=1/8, Scalar upper=1/3, bool training=False, generator)
//   -> Tensor  ⇒  LeakyRelu((lower + upper) / 2) in eval; x < 0 ? x · RandomUniformLike(lower,
//   upper) : x in training
Values rrelu(GraphContext& g, const Args& a) {
  const double lower = scalar_arg(a, 1, 1.0 / 8), upper = scalar_arg(a, 2, 1.0 / 3);
  const bool training = a.size() > 3 && a.bool_arg(3);
  if (a.size() > 4 && !a.is_none(4)) g.fail("an explicit torch.Generator cannot be exported");
  Value x = a.tensor(0);
  if (!training) return {leaky_relu(g, x, a.dtype(0), (lower + upper) / 2)};
  Value slope = g.op("RandomUniformLike", {x}, {{"low", lower}, {"high", upper}});
  return {negative_scaled(g, x, slope, a.dtype(0))};
}

}  // namespace

void register_activation(Registry& r) {
  r.add("aten::relu", from(9), relu);
  r.add("aten::sigmoid", from(9), simple("Sigmoid"));
  r.add("aten::tanh", from(9), simple("Tanh"));
  r.add("aten::hardsigmoid", from(9), hardsigmoid);
  r.add("aten::hardswish", {9, 13}, hardswish_9);
  r.add("aten::hardswish", from(14), hardswish_14);
  r.add("aten::silu", from(9), silu);
  r.add("aten::hardtanh", from(9), hardtanh);
  r.add("aten::relu6", from(9), relu6);
  r.add("aten::leaky_relu", from(9), leaky_relu_op);
  r.add("aten::gelu", {9, 19}, gelu);
  r.add("aten::gelu", from(20), gelu20);
  for (auto [op, onnx_op, half_to_float] : {std::tuple{"aten::softmax", "Softmax", false},
                                            {"aten::log_softmax", "LogSoftmax", false},
                                            {"aten::_softmax", "Softmax", true},
                                            {"aten::_log_softmax", "LogSoftmax", true}}) {
    r.add(op, {9, 12}, softmax(onnx_op, half_to_float, /*any_axis=*/false));
    r.add(op, from(13), softmax(onnx_op, half_to_float, /*any_axis=*/true));
  }
  r.add("aten::_safe_softmax", {9, 12}, safe_softmax(/*any_axis=*/false));
  r.add("aten::_safe_softmax", from(13), safe_softmax(/*any_axis=*/true));
  r.add("aten::elu", from(9), elu_op);
  r.add("aten::selu", from(9), selu);
  r.add("aten::celu", {9, 11}, celu_9);
  r.add("aten::celu", from(12), celu_12);
  r.add("aten::glu", from(9), glu);
  r.add("aten::mish", {9, 17}, mish);
  r.add("aten::mish", from(18), mish18);
  r.add("aten::softplus", from(9), softplus_op);
  r.add("aten::hardshrink", from(9), shrink(/*soft=*/false));
  r.add("aten::softshrink", from(9), shrink(/*soft=*/true));
  r.add("aten::threshold", from(9), threshold);
  r.add("aten::log_sigmoid", from(9), log_sigmoid);
  r.add("aten::logit", from(9), logit);
  r.add("aten::prelu", {9, 15}, prelu_9);
  r.add("aten::prelu", {16, 18}, prelu_16);
  r.add("aten::prelu", from(19), prelu_9);
  r.add("aten::rrelu", from(9), rrelu);
}

}  // namespace torchonnx::symbolic::ops
