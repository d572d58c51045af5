// Losses: nll_loss, cross_entropy, mse/l1, binary_cross_entropy(_with_logits), kl_div,
// soft_margin, margin_ranking, hinge_embedding, cosine_embedding, triplet_margin, multi_margin,
// multilabel_margin, poisson_nll.
//
// `reduction` is ATen's enum: 0 none, 1 mean, 2 sum. The class dim is 1 (0 for an unbatched
// input, which is unsqueezed to a batch of one). Index targets pick their class with a one-hot
// mask Equal(target, arange(C)) and Where (exact, works at every opset, and -inf log-probabilities
// of other classes do not leak in as 0·-inf); from opset 12 NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss take over for float32 inputs.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cmath>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;

const char* reduction_name(GraphContext& g, int64_t reduction) {
  switch (reduction) {
    case 0:
      return "none";
    case 1:
      return "mean";
    case 2:
      return "sum";
  }
  g.fail("unknown loss reduction " + std::to_string(reduction));
}

// ATen's apply_loss_reduction: none, mean or sum over all elements.
Value reduce_loss(GraphContext& g, const Value& loss, int64_t reduction) {
  std::string name = reduction_name(g, reduction);
  if (name == "none") return loss;
  return reduce(g, name == "mean" ? "ReduceMean" : "ReduceSum", loss, {}, /*keepdims=*/false);
}

at::ScalarType loss_float_type(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type != at::kFloat && type != at::kDouble && type != at::kHalf) {
    g.fail("the loss's dtype is unknown or not floating point");
  }
  return type;
}

Value loss_scalar(GraphContext& g, double v, at::ScalarType type) {
  return g.constant_scalar(v, type);
}

// LogSoftmax over dim 1 of a tensor of `rank` (before opset 13 LogSoftmax flattens at its axis,
// so dim 1 of a rank > 2 tensor is moved last and back).
Value log_softmax_dim1(GraphContext& g, const Value& x, int64_t rank) {
  if (g.has(OnnxFeature::kLogSoftmaxAnyAxis) || rank == 2)
    return g.op("LogSoftmax", {x}, {{"axis", int64_t{1}}});
  Ints perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[1], perm[rank - 1]);
  Value y = g.op("LogSoftmax", {transpose(g, x, perm)}, {{"axis", rank - 1}});
  return transpose(g, y, perm);
}

// A per-class vector [C] shaped [1, C, 1, ...] to broadcast against an input of `rank`.
Value class_shaped(GraphContext& g, const Value& v, int64_t rank) {
  Ints shape(rank, 1);
  shape[1] = -1;
  return g.op("Reshape", {v, g.constant_ints(shape)});
}

// The inputs of an index-target loss with the unbatched case made a batch of one.
struct IndexLoss {
  Value input;   // [N, C, d...]
  Value target;  // [N, d...] int64
  Value weight;  // [C] or ""
  int64_t rank;
  bool unbatched;
  int64_t reduction;
  int64_t ignore_index;
  at::ScalarType type;
};

IndexLoss index_loss(GraphContext& g, const Args& a, const Value& input, at::ScalarType type) {
  IndexLoss l;
  l.rank = a.require_rank(0);
  l.unbatched = l.rank == 1;
  l.input = l.unbatched ? unsqueeze(g, input, {0}) : input;
  l.target = a.tensor_as(1, at::kLong);
  if (l.unbatched) l.target = unsqueeze(g, l.target, {0});
  if (l.unbatched) l.rank = 2;
  l.weight = a.is_none(2) ? "" : a.tensor_as(2, type);
  l.reduction = a.int_arg(3);
  l.ignore_index = a.int_arg(4);
  l.type = type;
  return l;
}

Value finish(GraphContext& g, const IndexLoss& l, const Value& loss) {
  return l.unbatched && l.reduction == 0 ? squeeze(g, loss, {0}) : loss;
}

// The parts of an index-target loss shared by nll and label smoothing: the class mask, the
// non-ignored targets and their weights (0 where ignored).
struct Picked {
  Value mask;   // bool [N, C, d...]: class == target
  Value valid;  // bool [N, d...]: target != ignore_index
  Value wt;     // [N, d...]: weight[target] where valid, else 0
};

Picked pick(GraphContext& g, const IndexLoss& l) {
  Value c = dim_size(g, l.input, 1);
  Value classes = class_shaped(g, arange(g, c), l.rank);
  Picked p;
  p.mask = g.op("Equal", {unsqueeze(g, l.target, {1}), classes});
  p.valid = g.op(
      "Not", {g.op("Equal", {l.target, g.constant(at::scalar_tensor(l.ignore_index, at::kLong))})});
  Value zero = loss_scalar(g, 0, l.type);
  Value w =
      l.weight.empty()
          ? loss_scalar(g, 1, l.type)
          : reduce(g, "ReduceSum", g.op("Where", {p.mask, class_shaped(g, l.weight, l.rank), zero}),
                   {1}, false);
  p.wt = g.op("Where", {p.valid, w, zero});
  return p;
}

// -logp[target] · weight[target], reduced as nll_loss (mean divides by the sum of the weights).
Value nll_composed(GraphContext& g, const IndexLoss& l, const Value& logp, const Picked& p) {
  Value zero = loss_scalar(g, 0, l.type);
  Value picked = reduce(g, "ReduceSum", g.op("Where", {p.mask, logp, zero}), {1}, false);
  Value loss = g.op("Where", {p.valid, g.op("Neg", {g.op("Mul", {picked, p.wt})}), zero});
  if (l.reduction != 1) return reduce_loss(g, loss, l.reduction);
  return g.op("Div",
              {reduce(g, "ReduceSum", loss, {}, false), reduce(g, "ReduceSum", p.wt, {}, false)});
}

bool use_onnx_loss(GraphContext& g, const IndexLoss& l) {
  return g.has(OnnxFeature::kNegativeLogLikelihood) && l.type == at::kFloat;
}

Value nll(GraphContext& g, const IndexLoss& l, const Value& logp) {
  if (use_onnx_loss(g, l)) {
    Values inputs{logp, l.target};
    if (!l.weight.empty()) inputs.push_back(l.weight);
    return g.op("NegativeLogLikelihoodLoss", inputs,
                {{"reduction", std::string(reduction_name(g, l.reduction))},
                 {"ignore_index", l.ignore_index}});
  }
  return nll_composed(g, l, logp, pick(g, l));
}

// aten::nll_loss{,2d,_nd}(Tensor self, Tensor target, Tensor? weight, int reduction,
//   int ignore_index)  ⇒  NegativeLogLikelihoodLoss from 12 (float32); one-hot Equal + Where +
//   ReduceSum before 12 and for other dtypes
Values nll_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  IndexLoss l = index_loss(g, a, a.tensor_as(0, type), type);
  return {finish(g, l, nll(g, l, l.input))};
}

// aten::cross_entropy_loss with class-index targets: SoftmaxCrossEntropyLoss from opset 12, else
// LogSoftmax + nll; label smoothing adds ls/C · the (weighted) sum of -logp over the classes.
Value cross_entropy_index(GraphContext& g, const Args& a, at::ScalarType type, double smoothing) {
  IndexLoss l = index_loss(g, a, a.tensor_as(0, type), type);
  if (smoothing == 0 && use_onnx_loss(g, l)) {
    Values inputs{l.input, l.target};
    if (!l.weight.empty()) inputs.push_back(l.weight);
    return finish(g, l,
                  g.op("SoftmaxCrossEntropyLoss", inputs,
                       {{"reduction", std::string(reduction_name(g, l.reduction))},
                        {"ignore_index", l.ignore_index}}));
  }
  Value logp = log_softmax_dim1(g, l.input, l.rank);
  if (smoothing == 0) return finish(g, l, nll(g, l, logp));
  Picked p = pick(g, l);
  Value nll_loss = use_onnx_loss(g, l) ? nll(g, l, logp) : nll_composed(g, l, logp, p);
  Value weighted = l.weight.empty() ? logp : g.op("Mul", {logp, class_shaped(g, l.weight, l.rank)});
  Value smooth = g.op("Neg", {reduce(g, "ReduceSum", weighted, {1}, false)});
  smooth = g.op("Where", {p.valid, smooth, loss_scalar(g, 0, type)});
  Value ret;
  if (l.reduction == 1) {
    // ATen normalizes by the (weights of the) non-ignored targets, as nll_loss does.
    ret = g.op("Div", {reduce(g, "ReduceSum", smooth, {}, false),
                       reduce(g, "ReduceSum", p.wt, {}, false)});
  } else {
    ret = reduce_loss(g, smooth, l.reduction);
  }
  Value n_classes = g.cast(dim_size(g, l.input, 1), type);
  Value smooth_part = g.op("Div", {g.op("Mul", {ret, loss_scalar(g, smoothing, type)}), n_classes});
  Value loss =
      g.op("Add", {g.op("Mul", {nll_loss, loss_scalar(g, 1 - smoothing, type)}), smooth_part});
  return finish(g, l, loss);
}

// aten::cross_entropy_loss with class-probability targets (same shape as the input):
// -Σ_c w_c · t_c · logp_c, mean over the N·d... positions.
Value cross_entropy_prob(GraphContext& g, const Args& a, at::ScalarType type, double smoothing) {
  int64_t rank = a.require_rank(0);
  Value x = a.tensor_as(0, type), t = a.tensor_as(1, type);
  bool unbatched = rank == 1;
  if (unbatched) {
    x = unsqueeze(g, x, {0});
    t = unsqueeze(g, t, {0});
    rank = 2;
  }
  Value logp = log_softmax_dim1(g, x, rank);
  if (smoothing > 0) {
    Value n_classes = g.cast(dim_size(g, x, 1), type);
    t = g.op("Add", {g.op("Mul", {t, loss_scalar(g, 1 - smoothing, type)}),
                     g.op("Div", {loss_scalar(g, smoothing, type), n_classes})});
  }
  Value prod = g.op("Mul", {logp, t});
  if (!a.is_none(2)) prod = g.op("Mul", {prod, class_shaped(g, a.tensor_as(2, type), rank)});
  Value loss = g.op("Neg", {reduce(g, "ReduceSum", prod, {1}, false)});
  int64_t reduction = a.int_arg(3);
  if (unbatched && reduction == 0) return squeeze(g, loss, {0});
  return reduce_loss(g, loss, reduction);
}

// aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight, int reduction,
//   int ignore_index, float label_smoothing)  ⇒  SoftmaxCrossEntropyLoss from 12 (index targets,
//   no smoothing); LogSoftmax + nll composition otherwise; probability targets composed
Values cross_entropy_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  double smoothing = a.size() > 5 ? a.float_arg(5) : 0.0;
  at::ScalarType target_type = a.dtype(1);
  if (target_type == at::ScalarType::Undefined) g.fail("the target's dtype is unknown");
  if (at::isFloatingType(target_type)) return {cross_entropy_prob(g, a, type, smoothing)};
  return {cross_entropy_index(g, a, type, smoothing)};
}

// Elementwise losses of d = input - target.
using Pointwise = std::function<Value(GraphContext&, const Value& d, at::ScalarType, const Args&)>;

Converter pointwise_loss(Pointwise f) {
  return [f](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = loss_float_type(g, a);
    Value d = g.op("Sub", {a.tensor_as(0, type), a.tensor_as(1, type)});
    return {reduce_loss(g, f(g, d, type, a), a.int_arg(2))};
  };
}

// |d| < beta ? 0.5·d²·scale : |d| · slope - offset (smooth_l1: scale 1/beta, slope 1, offset
// beta/2; huber: scale 1, slope delta, offset delta²/2).
Value quadratic_below(GraphContext& g, const Value& d, at::ScalarType type, double beta,
                      double scale, double slope, double offset) {
  Value abs = g.op("Abs", {d});
  Value quad = g.op("Mul", {g.op("Mul", {d, d}), loss_scalar(g, 0.5 * scale, type)});
  Value lin =
      g.op("Sub", {g.op("Mul", {abs, loss_scalar(g, slope, type)}), loss_scalar(g, offset, type)});
  return g.op("Where", {g.op("Less", {abs, loss_scalar(g, beta, type)}), quad, lin});
}

// aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight, int reduction)  ⇒
//   (t - 1)·max(log(1 - x), -100) - t·max(log x, -100), · weight; Reduce
Values binary_cross_entropy(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  Value x = a.tensor_as(0, type), t = a.tensor_as(1, type);
  Value floor = loss_scalar(g, -100, type), one = loss_scalar(g, 1, type);
  Value log_x = g.op("Max", {g.op("Log", {x}), floor});
  Value log_1mx = g.op("Max", {g.op("Log", {g.op("Sub", {one, x})}), floor});
  Value loss =
      g.op("Sub", {g.op("Mul", {g.op("Sub", {t, one}), log_1mx}), g.op("Mul", {t, log_x})});
  if (!a.is_none(2)) loss = g.op("Mul", {loss, a.tensor_as(2, type)});
  return {reduce_loss(g, loss, a.int_arg(3))};
}

// aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight,
//   Tensor? pos_weight, int reduction)  ⇒  ATen's stable form: m = max(-x, 0),
//   (1 - t)·x + lw·(m + log(exp(-m) + exp(-x - m))), lw = 1 + (pos_weight - 1)·t, · weight
Values binary_cross_entropy_with_logits(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  Value x = a.tensor_as(0, type), t = a.tensor_as(1, type);
  Value one = loss_scalar(g, 1, type);
  Value neg_x = g.op("Neg", {x});
  Value m = g.op("Max", {neg_x, loss_scalar(g, 0, type)});
  Value softplus =
      g.op("Add", {m, g.op("Log", {g.op("Add", {g.op("Exp", {g.op("Neg", {m})}),
                                                g.op("Exp", {g.op("Sub", {neg_x, m})})})})});
  if (!a.is_none(3)) {
    Value lw = g.op("Add", {g.op("Mul", {g.op("Sub", {a.tensor_as(3, type), one}), t}), one});
    softplus = g.op("Mul", {lw, softplus});
  }
  Value loss = g.op("Add", {g.op("Mul", {g.op("Sub", {one, t}), x}), softplus});
  if (!a.is_none(2)) loss = g.op("Mul", {loss, a.tensor_as(2, type)});
  return {reduce_loss(g, loss, a.int_arg(4))};
}

// aten::kl_div(Tensor self, Tensor target, int reduction, *, bool log_target)  ⇒
//   log_target ? exp(t)·(t - x) : xlogy(t, t) - t·x, Reduce ('batchmean' reaches the graph as sum
//   followed by a div). xlogy(t, t) = t·log(t == 0 ? 1 : t), with t == 0 as !(t < 0 || t > 0)
//   (float Equal needs opset 11; NaN stays NaN).
Values kl_div(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  Value x = a.tensor_as(0, type), t = a.tensor_as(1, type);
  bool log_target = a.size() > 3 && a.bool_arg(3);
  Value loss;
  if (log_target) {
    loss = g.op("Mul", {g.op("Exp", {t}), g.op("Sub", {t, x})});
  } else {
    Value zero = loss_scalar(g, 0, type);
    Value nonzero = g.op("Or", {g.op("Less", {t, zero}), g.op("Greater", {t, zero})});
    Value safe = g.op("Where", {nonzero, t, loss_scalar(g, 1, type)});
    loss = g.op("Sub", {g.op("Mul", {t, g.op("Log", {safe})}), g.op("Mul", {t, x})});
  }
  return {reduce_loss(g, loss, a.int_arg(2))};
}

// aten::mse_loss(Tensor self, Tensor target, int reduction)  ⇒  Sub, Mul, Reduce
Value squared(GraphContext& g, const Value& d, at::ScalarType, const Args&) {
  return g.op("Mul", {d, d});
}

// aten::l1_loss(Tensor self, Tensor target, int reduction)  ⇒  Sub, Abs, Reduce
Value absolute(GraphContext& g, const Value& d, at::ScalarType, const Args&) {
  return g.op("Abs", {d});
}

// aten::smooth_l1_loss(Tensor self, Tensor target, int reduction, float beta)  ⇒  Where of the
//   quadratic and linear parts (beta = 0 is l1)
Value smooth_l1(GraphContext& g, const Value& d, at::ScalarType type, const Args& a) {
  double beta = a.float_arg(3);
  if (beta == 0) return g.op("Abs", {d});
  return quadratic_below(g, d, type, beta, 1 / beta, 1, beta / 2);
}

// aten::huber_loss(Tensor self, Tensor target, int reduction, float delta)  ⇒  Where
Value huber(GraphContext& g, const Value& d, at::ScalarType type, const Args& a) {
  double delta = a.float_arg(3);
  return quadratic_below(g, d, type, delta, 1, delta, delta * delta / 2);
}

// ----- margin losses ---------------------------------------------------------------------------

Value relu_of(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Max", {x, loss_scalar(g, 0, type)});
}

// t == v for a float or integer tensor t (false for NaN), without Equal (floats: opset 11+).
Value equals(GraphContext& g, const Value& t, double v, at::ScalarType t_type) {
  Value c = loss_scalar(g, v, t_type);
  Value differs = g.op("Or", {g.op("Less", {t, c}), g.op("Greater", {t, c})});
  if (at::isFloatingType(t_type)) differs = g.op("Or", {differs, g.op("IsNaN", {t})});
  return g.op("Not", {differs});
}

// The dtype a target is compared in: floats as they are (half precision as float), integers and
// bool as int64.
at::ScalarType comparison_type(at::ScalarType t) {
  if (t == at::kFloat || t == at::kDouble) return t;
  return at::isFloatingType(t) ? at::kFloat : at::kLong;
}

// aten::soft_margin_loss(Tensor self, Tensor target, int reduction)  ⇒  Log(1 + Exp(-x·t)),
//   Reduce (ATen: log1p(exp(-x·t)))
Values soft_margin_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  Value z = g.op("Neg", {g.op("Mul", {a.tensor_as(0, type), a.tensor_as(1, type)})});
  Value loss = g.op("Log", {g.op("Add", {loss_scalar(g, 1, type), g.op("Exp", {z})})});
  return {reduce_loss(g, loss, a.int_arg(2))};
}

// aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin,
//   int reduction)  ⇒  Max(-t·(x1 - x2) + margin, 0), Reduce
Values margin_ranking_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  Value d = g.op("Sub", {a.tensor_as(0, type), a.tensor_as(1, type)});
  Value z = g.op("Add", {g.op("Neg", {g.op("Mul", {a.tensor_as(2, type), d})}),
                         loss_scalar(g, a.float_arg(3), type)});
  return {reduce_loss(g, relu_of(g, z, type), a.int_arg(4))};
}

// aten::hinge_embedding_loss(Tensor self, Tensor target, float margin, int reduction)
//   ⇒  Where(t != 1, Max(margin - x, 0), 0) + Where(t != -1, x, 0), Reduce
Values hinge_embedding_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  at::ScalarType tt = comparison_type(a.dtype(1));
  Value x = a.tensor_as(0, type), t = a.tensor_as(1, tt);
  Value zero = loss_scalar(g, 0, type);
  Value clamped = relu_of(g, g.op("Sub", {loss_scalar(g, a.float_arg(2), type), x}), type);
  Value from_margin = g.op("Where", {equals(g, t, 1, tt), zero, clamped});
  Value from_self = g.op("Where", {equals(g, t, -1, tt), zero, x});
  return {reduce_loss(g, g.op("Add", {from_margin, from_self}), a.int_arg(3))};
}

// aten::cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin,
//   int reduction)  ⇒  cos = Σx1·x2 / sqrt((Σx1² + 1e-12)·(Σx2² + 1e-12)) over the last dim
//   (target 1-D: inputs 2-D; target 0-d: inputs 1-D); Where(t == 1, 1 - cos, 0) +
//   Where(t == -1, Max(cos - margin, 0), 0), Reduce
Values cosine_embedding_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  at::ScalarType tt = comparison_type(a.dtype(2));
  const int64_t axis = a.require_rank(2);
  Value x1 = a.tensor_as(0, type), x2 = a.tensor_as(1, type), t = a.tensor_as(2, tt);
  auto sum = [&](const Value& u, const Value& v) {
    return reduce(g, "ReduceSum", g.op("Mul", {u, v}), {axis}, false);
  };
  Value eps = loss_scalar(g, 1e-12, type);
  Value mag1 = g.op("Add", {sum(x1, x1), eps}), mag2 = g.op("Add", {sum(x2, x2), eps});
  Value cos = g.op("Div", {sum(x1, x2), g.op("Sqrt", {g.op("Mul", {mag1, mag2})})});
  Value zero = loss_scalar(g, 0, type);
  Value pos = g.op("Sub", {loss_scalar(g, 1, type), cos});
  Value neg = relu_of(g, g.op("Sub", {cos, loss_scalar(g, a.float_arg(3), type)}), type);
  Value loss = g.op("Add", {g.op("Where", {equals(g, t, 1, tt), pos, zero}),
                            g.op("Where", {equals(g, t, -1, tt), neg, zero})});
  return {reduce_loss(g, loss, a.int_arg(4))};
}

// The p-norm of `d` over `axis`: p = 1 Σ|d|, 2 sqrt(Σd²), inf max|d|, 0 the count of nonzero
// elements, else (Σ|d|^p)^(1/p).
Value p_norm(GraphContext& g, const Value& d, double p, int64_t axis, at::ScalarType type) {
  Value abs = g.op("Abs", {d});
  if (p == 1) return reduce(g, "ReduceSum", abs, {axis}, false);
  if (p == 2) return g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {d, d}), {axis}, false)});
  if (std::isinf(p)) {
    return reduce(g, p > 0 ? "ReduceMax" : "ReduceMin", abs, {axis}, false);
  }
  if (p == 0) {
    Value nonzero = g.cast(g.cast(d, at::kBool), type);
    return reduce(g, "ReduceSum", nonzero, {axis}, false);
  }
  Value powered = g.op("Pow", {abs, loss_scalar(g, p, type)});
  return g.op("Pow", {reduce(g, "ReduceSum", powered, {axis}, false), loss_scalar(g, 1 / p, type)});
}

// aten::triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin,
//   float p, float eps, bool swap, int reduction)  ⇒  pairwise distances ‖a - b + eps‖_p over the
//   last dim; swap: the negative distance is Min(d(a, n), d(p, n)); Max(margin + d(a, p) -
//   d(a, n), 0), Reduce
Values triplet_margin_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  const double margin = a.float_arg(3), p = a.float_arg(4), eps = a.float_arg(5);
  const bool swap = a.bool_arg(6);
  int64_t rank = 0;
  for (size_t i = 0; i < 3; ++i) rank = std::max(rank, a.require_rank(i));
  Value anchor = a.tensor_as(0, type), pos = a.tensor_as(1, type), neg = a.tensor_as(2, type);
  auto dist = [&](const Value& u, const Value& v) {
    Value d = g.op("Add", {g.op("Sub", {u, v}), loss_scalar(g, eps, type)});
    return p_norm(g, d, p, rank - 1, type);
  };
  Value d_pos = dist(anchor, pos), d_neg = dist(anchor, neg);
  if (swap) d_neg = g.op("Min", {d_neg, dist(pos, neg)});
  Value z = g.op("Sub", {g.op("Add", {loss_scalar(g, margin, type), d_pos}), d_neg});
  return {reduce_loss(g, relu_of(g, z, type), a.int_arg(7))};
}

// The inputs of multi_margin/multilabel_margin with the unbatched case ([C], target [C] or 0-d;
// a 0-d input is one class) made a batch of one; reduction none gives a 0-d result then.
struct ClassScores {
  Value x;  // [N, C]
  Value c;  // the class count as a 0-d value of the loss dtype
  bool unbatched;
};

ClassScores class_scores(GraphContext& g, const Args& a, at::ScalarType type) {
  ClassScores s;
  const int64_t rank = a.require_rank(0);
  s.unbatched = rank <= 1;
  s.x = a.tensor_as(0, type);
  if (rank == 0) s.x = g.op("Reshape", {s.x, g.constant_ints({1, 1})});  // one class
  if (rank == 1) s.x = unsqueeze(g, s.x, {0});
  s.c = g.cast(dim_size(g, s.x, 1), type);
  return s;
}

Value finish_scores(GraphContext& g, const ClassScores& s, const Value& loss, int64_t reduction) {
  if (reduction == 0) return s.unbatched ? squeeze(g, loss, {0}) : loss;
  return reduce_loss(g, loss, reduction);
}

// aten::multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1,
//   Tensor? weight=None, int reduction=Mean)  ⇒  with the one-hot mask m = Equal(arange(C), y):
//   x_y = ReduceSum(Where(m, x, 0)); h = Max(margin - x_y + x, 0) (squared for p = 2),
//   · weight[y]; Σ over the classes other than y, / C; Reduce over the batch
Values multi_margin_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  const double p = a.float_arg(2), margin = a.float_arg(3);
  if (p != 1 && p != 2) g.fail("multi_margin_loss takes p = 1 or 2 (as PyTorch)");
  ClassScores s = class_scores(g, a, type);
  Value y = g.op("Reshape", {a.tensor_as(1, at::kLong), g.constant_ints({-1, 1})});
  Value mask = g.op("Equal", {y, unsqueeze(g, arange(g, dim_size(g, s.x, 1)), {0})});
  Value zero = loss_scalar(g, 0, type);
  Value x_y = reduce(g, "ReduceSum", g.op("Where", {mask, s.x, zero}), {1}, true);
  Value h = relu_of(g, g.op("Add", {g.op("Sub", {loss_scalar(g, margin, type), x_y}), s.x}), type);
  if (p == 2) h = g.op("Mul", {h, h});
  if (!a.is_none(4)) {
    Value w = unsqueeze(g, a.tensor_as(4, type), {0});  // [1, C]
    h = g.op("Mul", {h, reduce(g, "ReduceSum", g.op("Where", {mask, w, zero}), {1}, true)});
  }
  h = g.op("Where", {mask, zero, h});
  Value loss = g.op("Div", {reduce(g, "ReduceSum", h, {1}, false), s.c});
  return {finish_scores(g, s, loss, a.int_arg(5))};
}

// aten::multilabel_margin_loss(Tensor self, Tensor target, int reduction)  ⇒  the target lists
//   classes up to its first -1: valid_k = CumSum(t == -1)_k == 0 (opset 11+); is_target[c] =
//   any_k valid_k ∧ t_k == c; for each valid k and each class d not a target,
//   Max(1 - x[t_k] + x[d], 0) (a class listed twice counts twice, as in ATen); Σ / C, Reduce
Values multilabel_margin_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  ClassScores s = class_scores(g, a, type);
  Value t = a.tensor_as(1, at::kLong);
  if (s.unbatched) t = g.op("Reshape", {t, g.constant_ints({1, -1})});  // [N, C]
  Value minus_one = g.constant(at::scalar_tensor(-1, at::kLong));
  Value ended = g.op("CumSum", {g.cast(g.op("Equal", {t, minus_one}), at::kLong),
                                g.constant(at::scalar_tensor(1, at::kLong))});
  Value valid = g.op("Equal", {ended, g.constant(at::scalar_tensor(0, at::kLong))});  // [N, K]
  Value classes = unsqueeze(g, arange(g, dim_size(g, s.x, 1)), {0, 1});               // [1, 1, C]
  Value listed = g.op("And", {g.op("Equal", {unsqueeze(g, t, {2}), classes}),
                              unsqueeze(g, valid, {2})});  // [N, K, C]
  Value is_target = g.cast(reduce(g, "ReduceMax", g.cast(listed, at::kInt), {1}, false),
                           at::kBool);  // [N, C]
  Value safe_t = g.op("Where", {valid, t, g.constant(at::scalar_tensor(0, at::kLong))});
  Value x_t = g.op("GatherElements", {s.x, safe_t}, {{"axis", int64_t{1}}});  // [N, K]
  Value zero = loss_scalar(g, 0, type);
  Value z = g.op("Add", {g.op("Sub", {loss_scalar(g, 1, type), unsqueeze(g, x_t, {2})}),
                         unsqueeze(g, s.x, {1})});  // [N, K, C]
  Value counted =
      g.op("And", {unsqueeze(g, valid, {2}), g.op("Not", {unsqueeze(g, is_target, {1})})});
  Value h = g.op("Where", {counted, relu_of(g, z, type), zero});
  Value loss = g.op("Div", {reduce(g, "ReduceSum", h, {1, 2}, false), s.c});
  return {finish_scores(g, s, loss, a.int_arg(2))};
}

// aten::poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps,
//   int reduction)  ⇒  log_input ? Exp(x) - t·x : x - t·Log(x + eps); full adds the Stirling
//   term t·Log(t) - t + 0.5·Log(2π·t) where t > 1; Reduce
Values poisson_nll_loss(GraphContext& g, const Args& a) {
  at::ScalarType type = loss_float_type(g, a);
  Value x = a.tensor_as(0, type), t = a.tensor_as(1, type);
  Value loss =
      a.bool_arg(2)
          ? g.op("Sub", {g.op("Exp", {x}), g.op("Mul", {t, x})})
          : g.op("Sub",
                 {x, g.op("Mul", {t, g.op("Log", {g.op("Add", {x, loss_scalar(g, a.float_arg(4),
                                                                              type)})})})});
  if (a.bool_arg(3)) {
    Value stirling = g.op(
        "Add", {g.op("Sub", {g.op("Mul", {t, g.op("Log", {t})}), t}),
                g.op("Mul", {loss_scalar(g, 0.5, type),
                             g.op("Log", {g.op("Mul", {loss_scalar(g, 2 * M_PI, type), t})})})});
    stirling = g.op("Where", {g.op("Greater", {t, loss_scalar(g, 1, type)}), stirling,
                              loss_scalar(g, 0, type)});
    loss = g.op("Add", {loss, stirling});
  }
  return {reduce_loss(g, loss, a.int_arg(5))};
}

}  // namespace

void register_loss(Registry& r) {
  r.add("aten::nll_loss", from(9), nll_loss);
  r.add("aten::nll_loss2d", from(9), nll_loss);
  r.add("aten::nll_loss_nd", from(9), nll_loss);
  r.add("aten::cross_entropy_loss", from(9), cross_entropy_loss);
  r.add("aten::mse_loss", from(9), pointwise_loss(squared));
  r.add("aten::l1_loss", from(9), pointwise_loss(absolute));
  r.add("aten::smooth_l1_loss", from(9), pointwise_loss(smooth_l1));
  r.add("aten::huber_loss", from(9), pointwise_loss(huber));
  r.add("aten::binary_cross_entropy", from(9), binary_cross_entropy);
  r.add("aten::binary_cross_entropy_with_logits", from(9), binary_cross_entropy_with_logits);
  r.add("aten::kl_div", from(9), kl_div);
  r.add("aten::soft_margin_loss", from(9), soft_margin_loss);
  r.add("aten::margin_ranking_loss", from(9), margin_ranking_loss);
  r.add("aten::hinge_embedding_loss", from(9), hinge_embedding_loss);
  r.add("aten::cosine_embedding_loss", from(9), cosine_embedding_loss);
  r.add("aten::triplet_margin_loss", from(9), triplet_margin_loss);
  r.add("aten::multi_margin_loss", from(9), multi_margin_loss);
  r.add("aten::multilabel_margin_loss", from(11), multilabel_margin_loss);
  r.add("aten::poisson_nll_loss", from(9), poisson_nll_loss);
}

}  // namespace torchonnx::symbolic::ops
