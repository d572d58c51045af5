// Dropout family in eval and training mode.
//
// In eval mode (train is a constant False) passes/remove_eval_no_ops.cpp removes the single-output
// dropouts before conversion; the converters also return the input for it. In training mode:
//  - dropout: ONNX Dropout with training_mode = True (opset 12+), below 12 the same composition as
//    the others;
//  - the others: keep = RandomUniformLike(...) >= p (probability 1 - p, as bernoulli(1 - p)), drawn
//    per element, or per (sample, channel) on an [N, C, 1, ..., 1] shape for the feature forms,
//    then PyTorch's formulas: x · keep / (1 - p), and for alpha dropout (SELU's alpha')
//    x · keep·a + (keep - 1)·alpha·a + alpha·a·p with a = 1 / sqrt((alpha²·p + 1)(1 - p)).
// Random draws cannot match libtorch's; tests check the properties of the outputs.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "onnx/dtype.h"
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

constexpr double kSeluAlpha = 1.7580993408473766;

// The train flag: constant, or None (native_dropout: training).
bool training_flag(GraphContext& g, const Args& a) {
  if (a.is_none(2)) return true;
  if (!a.is_constant(2)) {
    g.fail(
        "dropout with a train flag computed in the graph; export with a constant train flag "
        "(module.eval() or module.train())");
  }
  return a.bool_arg(2);
}

at::ScalarType dropout_type(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) {
    g.fail("dropout in training mode of a non-floating tensor (dtype " +
           std::string(c10::toString(type)) + ")");
  }
  return type;
}

// Bool keep mask: uniform draws >= p, of x's shape or of [N, C, 1, ..., 1] (feature).
Value keep_mask(GraphContext& g, const Args& a, double p, bool feature, at::ScalarType type) {
  Value x = a.tensor(0);
  Value like = x;
  if (feature) {
    const int64_t rank = a.require_rank(0);
    if (rank < 2) g.fail("feature dropout needs an input of rank >= 2");
    Value shape = dims_of(g, x, {0, 1});
    if (rank > 2) {
      shape = g.op("Concat", {shape, g.constant_ints(std::vector<int64_t>(rank - 2, 1))},
                   {{"axis", int64_t{0}}});
    }
    like = g.op("ConstantOfShape", {shape},
                {{"value", at::zeros({1}, at::TensorOptions().dtype(type))}});
  }
  Value u = g.op("RandomUniformLike", {like}, {{"dtype", int64_t{to_onnx_dtype(type)}}});
  return g.op("Not", {g.op("Less", {u, g.constant_scalar(p, type)})});
}

// dropout_like's lowering in training mode with 0 < p (the mask drawn with RandomUniformLike).
Values dropout_composition(GraphContext& g, const Args& a, const Value& x, double p, bool feature,
                           bool alpha, at::ScalarType type) {
  Value noise = g.cast(keep_mask(g, a, p, feature, type), type);
  if (!alpha) return {g.op("Mul", {x, g.op("Div", {noise, g.constant_scalar(1 - p, type)})})};
  const double sa = 1.0 / std::sqrt((kSeluAlpha * kSeluAlpha * p + 1) * (1 - p));
  Value b = g.op("Add", {g.op("Mul", {g.op("Sub", {noise, g.constant_scalar(1, type)}),
                                      g.constant_scalar(kSeluAlpha * sa, type)}),
                         g.constant_scalar(kSeluAlpha * sa * p, type)});
  Value scaled = g.op("Mul", {noise, g.constant_scalar(sa, type)});
  return {g.op("Add", {g.op("Mul", {x, scaled}), b})};
}

// aten::dropout / feature_dropout / alpha_dropout / feature_alpha_dropout(Tensor input, float p,
//   bool train) -> Tensor  ⇒  identity (eval, p = 0); 0 · x (p = 1, but alpha); the
//   composition of the header; `onnx_dropout`: ONNX Dropout with training_mode (opset 12+, plain
//   dropout only)
Converter dropout_like(bool feature, bool alpha, bool onnx_dropout = false) {
  return [=](GraphContext& g, const Args& a) -> Values {
    if (!training_flag(g, a)) return {a.tensor(0)};
    const double p = a.float_arg(1);
    if (p < 0 || p > 1) g.fail("dropout probability has to be between 0 and 1");
    if (p == 0) return {a.tensor(0)};
    at::ScalarType type = dropout_type(g, a);
    Value x = a.tensor(0);
    if (!alpha && p == 1) return {g.op("Mul", {x, g.constant_scalar(0, type)})};
    if (onnx_dropout) {
      Value ratio = g.constant_scalar(p, type);
      Value mode = g.constant_scalar(1, at::kBool);
      return {g.op("Dropout", {x, ratio, mode}, {}, 2)[0]};
    }
    return dropout_composition(g, a, x, p, feature, alpha, type);
  };
}

// native_dropout's probability, checked.
double native_dropout_p(GraphContext& g, const Args& a) {
  const double p = a.float_arg(1);
  if (p < 0 || p > 1) g.fail("dropout probability has to be between 0 and 1");
  return p;
}

// native_dropout in eval mode: (x, ones bool).
Values native_dropout_eval(GraphContext& g, const Value& x) {
  Value ones = g.op("ConstantOfShape", {shape_of(g, x)},
                    {{"value", at::ones({1}, at::TensorOptions().dtype(at::kBool))}});
  return {x, ones};
}

// native_dropout in training mode: x · keep · 1/(1-p) with keep = RandomUniformLike(x) >= p
// (p = 1: output 0 · x, mask all false).
Values native_dropout_composition(GraphContext& g, const Args& a, const Value& x, double p,
                                  at::ScalarType type) {
  Value keep = keep_mask(g, a, p, false, type);
  const double scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
  Value y = g.op("Mul", {g.op("Mul", {x, g.cast(keep, type)}), g.constant_scalar(scale, type)});
  return {y, keep};
}

// aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor mask)
//   ⇒  (x, ones bool) in eval; x · keep · 1/(1-p) with keep = RandomUniformLike(x) >= p (9–11)
Values native_dropout_9(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  const double p = native_dropout_p(g, a);
  if (!training_flag(g, a)) return native_dropout_eval(g, x);
  at::ScalarType type = dropout_type(g, a);
  return native_dropout_composition(g, a, x, p, type);
}

// aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor mask)
//   ⇒  (x, ones bool) in eval; Dropout's (output, mask) (12+, p < 1); the composition for p = 1
Values native_dropout_12(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  const double p = native_dropout_p(g, a);
  if (!training_flag(g, a)) return native_dropout_eval(g, x);
  at::ScalarType type = dropout_type(g, a);
  if (p < 1) {
    return g.op("Dropout", {x, g.constant_scalar(p, type), g.constant_scalar(1, at::kBool)}, {}, 2);
  }
  return native_dropout_composition(g, a, x, p, type);
}

}  // namespace

void register_dropout(Registry& r) {
  r.add("aten::dropout", {9, 11}, dropout_like(false, false));
  r.add("aten::dropout", from(12), dropout_like(false, false, /*onnx_dropout=*/true));
  r.add("aten::feature_dropout", from(9), dropout_like(true, false));
  r.add("aten::alpha_dropout", from(9), dropout_like(false, true));
  r.add("aten::feature_alpha_dropout", from(9), dropout_like(true, true));
  r.add("aten::native_dropout", {9, 11}, native_dropout_9);
  r.add("aten::native_dropout", from(12), native_dropout_12);
}

}  // namespace torchonnx::symbolic::ops
