// Elementwise arithmetic with PyTorch's type promotion: operands are cast to the result's dtype
// (known from type propagation), so `x + 2` on a float tensor adds a float 2.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// The dtype both operands are computed in: the result's, except for comparisons (Bool results).
at::ScalarType compute_dtype(GraphContext& g, const Args& a) {
  at::ScalarType out = a.output_dtype();
  if (out != at::ScalarType::Undefined && out != at::kBool) return out;
  if (a.dtype(0) == at::ScalarType::Undefined || a.dtype(1) == at::ScalarType::Undefined) {
    g.fail("the operands' dtypes are unknown (type propagation could not run the producer)");
  }
  return at::promote_types(a.dtype(0), a.dtype(1));
}

// `scale * v`, skipping the multiplication when scale is 1 (add/sub's alpha).
Value scaled(GraphContext& g, const Value& v, const Args& a, size_t alpha_index,
             at::ScalarType type) {
  if (a.size() <= alpha_index || a.is_none(alpha_index)) return v;
  double alpha = a.float_arg(alpha_index);
  if (alpha == 1.0) return v;
  return g.op("Mul", {v, g.constant_scalar(alpha, type)});
}

Converter binary(const std::string& onnx_op, bool with_alpha = false) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = compute_dtype(g, a);
    Value rhs = a.tensor_as(1, type);
    if (with_alpha) rhs = scaled(g, rhs, a, 2, type);
    return {g.op(onnx_op, {a.tensor_as(0, type), rhs})};
  };
}

Converter unary(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = a.output_dtype();
    Value x = type == at::ScalarType::Undefined ? a.tensor(0) : a.tensor_as(0, type);
    return {g.op(onnx_op, {x})};
  };
}

// Floor/Ceil: ONNX takes floating types only; on integers PyTorch returns the input's values.
Converter rounding(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    if (at::isIntegralType(a.dtype(0), /*includeBool=*/true)) return {a.tensor(0)};
    return {g.op(onnx_op, {a.tensor(0)})};
  };
}

}  // namespace

void register_elementwise(Registry& r) {
  // aten::add(Tensor self, Tensor|Scalar other, Scalar alpha=1)  ⇒  Add(self, alpha * other)
  r.add("aten::add", {}, binary("Add", /*with_alpha=*/true));
  // aten::sub(Tensor self, Tensor|Scalar other, Scalar alpha=1)  ⇒  Sub(self, alpha * other)
  r.add("aten::sub", {}, binary("Sub", /*with_alpha=*/true));
  // aten::rsub(Tensor self, Tensor|Scalar other, Scalar alpha=1)  ⇒  Sub(other, alpha * self)
  r.add("aten::rsub", {}, [](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = compute_dtype(g, a);
    return {g.op("Sub", {a.tensor_as(1, type), scaled(g, a.tensor_as(0, type), a, 2, type)})};
  });
  r.add("aten::mul", {}, binary("Mul"));
  // aten::div(Tensor self, Tensor|Scalar other, str? rounding_mode)  ⇒  Div [+ Floor / trunc]
  r.add("aten::div", {}, [](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = compute_dtype(g, a);
    std::optional<std::string> mode;
    if (a.size() > 2 && !a.is_none(2)) mode = a.str_arg(2);
    if (!mode) return {g.op("Div", {a.tensor_as(0, type), a.tensor_as(1, type)})};
    const bool floating = at::isFloatingType(type);
    // Integer inputs are divided in double so that floor/trunc round the true quotient.
    at::ScalarType work = floating ? type : at::kDouble;
    Value q = g.op("Div", {a.tensor_as(0, work), a.tensor_as(1, work)});
    if (*mode == "floor") {
      q = g.op("Floor", {q});
    } else if (*mode == "trunc") {
      q = g.op("Mul", {g.op("Sign", {q}), g.op("Floor", {g.op("Abs", {q})})});
    } else {
      g.fail("unknown rounding_mode '" + *mode + "'");
    }
    return {floating ? q : g.cast(q, type)};
  });
  // aten::floor_divide(Tensor self, Tensor|Scalar other)  ⇒  Floor(Div) (integers via double)
  r.add("aten::floor_divide", {}, [](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = compute_dtype(g, a);
    if (at::isFloatingType(type)) {
      return {g.op("Floor", {g.op("Div", {a.tensor_as(0, type), a.tensor_as(1, type)})})};
    }
    Value q = g.op("Div", {a.tensor_as(0, at::kDouble), a.tensor_as(1, at::kDouble)});
    return {g.cast(g.op("Floor", {q}), type)};
  });
  // aten::true_divide  ⇒  Div in the (floating) result type
  r.add("aten::true_divide", {}, binary("Div"));
  // aten::pow(Tensor self, Tensor|Scalar exponent)
  //   ⇒  Pow (12+, or floating results); Cast(Pow(double, double)) for integers before 12
  r.add("aten::pow", {}, [](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = compute_dtype(g, a);
    if (g.opset() >= 12 || at::isFloatingType(type)) {
      return {g.op("Pow", {a.tensor_as(0, type), a.tensor_as(1, type)})};
    }
    Value p = g.op("Pow", {a.tensor_as(0, at::kDouble), a.tensor_as(1, at::kDouble)});
    return {g.cast(p, type)};
  });
  r.add("aten::neg", {}, unary("Neg"));
  r.add("aten::abs", {}, unary("Abs"));
  r.add("aten::exp", {}, unary("Exp"));
  r.add("aten::log", {}, unary("Log"));
  r.add("aten::sqrt", {}, unary("Sqrt"));
  r.add("aten::reciprocal", {}, unary("Reciprocal"));
  r.add("aten::floor", {}, rounding("Floor"));
  r.add("aten::ceil", {}, rounding("Ceil"));
  r.add("aten::sin", {}, unary("Sin"));
  r.add("aten::cos", {}, unary("Cos"));
  r.add("aten::erf", {}, unary("Erf"));
  // aten::rsqrt(Tensor self)  ⇒  Reciprocal(Sqrt(self))
  r.add("aten::rsqrt", {}, [](GraphContext& g, const Args& a) -> Values {
    return {g.op("Reciprocal", {g.op("Sqrt", {a.tensor_as(0, a.output_dtype())})})};
  });
}

}  // namespace torchonnx::symbolic::ops
