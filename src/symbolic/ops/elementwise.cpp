// Elementwise arithmetic with PyTorch's type promotion: operands are cast to the result's dtype
// (known from type propagation), so `x + 2` on a float tensor adds a float 2.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <functional>
#include <limits>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

constexpr double kPi = 3.14159265358979323846;

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

// The logical form of Add/Mul for bools, which ONNX's Add and Mul do not take: PyTorch's `a * b`
// of bools is `a and b`, `a + b` is `a or b`.
std::string bool_form(const std::string& onnx_op) {
  if (onnx_op == "Mul") return "And";
  if (onnx_op == "Add") return "Or";
  return onnx_op;
}

// Note [Low-precision arithmetic]: Add, Sub, Mul and Div take uint8, int8 and int16
// from opset 14 only. Below, such operands are computed in int32 and cast back: exact, as int32
// holds every sum, difference and product of two 16-bit values and the Cast back keeps the low
// bits (PyTorch's wrap-around). torch.onnx computes them in float.
at::ScalarType arithmetic_work_type(GraphContext& g, at::ScalarType type) {
  if (!g.has(OnnxFeature::kArithmeticOf8And16Bit) &&
      (type == at::kByte || type == at::kChar || type == at::kShort)) {
    return at::kInt;
  }
  return type;
}

Converter binary(const std::string& onnx_op, bool with_alpha = false) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = compute_dtype(g, a);
    if (type == at::kBool && bool_form(onnx_op) != onnx_op) {
      return {g.op(bool_form(onnx_op), {a.tensor_as(0, type), a.tensor_as(1, type)})};
    }
    const at::ScalarType work = arithmetic_work_type(g, type);
    Value rhs = a.tensor_as(1, work);
    if (with_alpha) rhs = scaled(g, rhs, a, 2, work);
    return {cast_if(g, g.op(onnx_op, {a.tensor_as(0, work), rhs}), work, type)};
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
// The scalar overloads (aten::floor.float(float a) -> int) return an int: Cast to int64.
Converter rounding(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    if (at::isIntegralType(a.dtype(0), /*includeBool=*/true)) return {a.tensor(0)};
    Value rounded = g.op(onnx_op, {a.tensor(0)});
    const at::ScalarType out = a.output_dtype();
    if (out != at::ScalarType::Undefined && at::isIntegralType(out, /*includeBool=*/false)) {
      rounded = g.cast(rounded, out);
    }
    return {rounded};
  };
}

// Input i in the node's result dtype (unchanged when that dtype is unknown).
Value in_result_type(const Args& a, size_t i) {
  at::ScalarType type = a.output_dtype();
  return type == at::ScalarType::Undefined ? a.tensor(i) : a.tensor_as(i, type);
}

Value scalar_like(GraphContext& g, double value, at::ScalarType type) {
  return g.constant_scalar(value, type);
}

// A tensor of x's shape filled with `value` of `type` (shape computed in the graph).
Value filled(GraphContext& g, const Value& x, double value, at::ScalarType type) {
  at::Tensor v = at::full({1}, value, at::TensorOptions().dtype(type));
  return g.op("ConstantOfShape", {g.op("Shape", {x})}, {{"value", v}});
}

// Unary float math: integer inputs are cast to the (floating) result dtype first.
Converter float_unary(std::function<Value(GraphContext&, const Value&, at::ScalarType)> body) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = a.output_dtype();
    if (type == at::ScalarType::Undefined) type = a.dtype(0);
    return {body(g, a.tensor_as(0, type), type)};
  };
}

// r != 0 and sign(r) != sign(y): the remainder of a truncating division must be shifted by y to
// get Python's (floor) remainder. Written with Less/Greater only (Equal takes floats from 11).
Value needs_floor_fix(GraphContext& g, const Value& r, const Value& y, at::ScalarType type) {
  Value zero = scalar_like(g, 0, type);
  Value r_neg = g.op("Less", {r, zero});
  Value r_pos = g.op("Greater", {r, zero});
  Value y_neg = g.op("Less", {y, zero});
  return g.op("Or", {g.op("And", {r_neg, g.op("Not", {y_neg})}), g.op("And", {r_pos, y_neg})});
}

// A remainder of x by y in `type`: one of the four below.
using Remainder = Value (*)(GraphContext& g, const Value& x, const Value& y, at::ScalarType type);

// C's fmod, the remainder of the division truncated toward zero (sign of x), below opset 10
// (no Mod): x - trunc(x / y) * y.
Value trunc_remainder9(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value q = g.op("Div", {x, y});  // integer Div truncates toward zero
  if (at::isFloatingType(type)) {
    q = g.op("Mul", {g.op("Sign", {q}), g.op("Floor", {g.op("Abs", {q})})});
  }
  return g.op("Sub", {x, g.op("Mul", {q, y})});
}

// C's fmod from opset 10: Mod(fmod=1).
Value trunc_remainder10(GraphContext& g, const Value& x, const Value& y, at::ScalarType) {
  return g.op("Mod", {x, y}, {{"fmod", int64_t{1}}});
}

// Python's remainder (sign of y) below opset 10: fmod, shifted by y where the signs differ
// (ATen's formula).
Value floor_remainder9(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value r = trunc_remainder9(g, x, y, type);
  return g.op("Where", {needs_floor_fix(g, r, y, type), g.op("Add", {r, y}), r});
}

// Python's remainder from opset 10: Mod for integers; Mod(fmod=1) shifted as above for floats.
Value floor_remainder10(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  if (!at::isFloatingType(type)) return g.op("Mod", {x, y});
  Value r = trunc_remainder10(g, x, y, type);
  return g.op("Where", {needs_floor_fix(g, r, y, type), g.op("Add", {r, y}), r});
}

// Python's floor division on integers, exact (no detour through double).
Value int_floor_divide(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value q = g.op("Div", {x, y});  // truncates toward zero
  Value r = g.op("Sub", {x, g.op("Mul", {q, y})});
  return g.op("Where",
              {needs_floor_fix(g, r, y, type), g.op("Sub", {q, scalar_like(g, 1, type)}), q});
}

// x rounded half to even: one of the two below.
using Rounding = Value (*)(GraphContext& g, const Value& x, at::ScalarType type);

// Round half to even below opset 11 (no Round), exactly: f = floor(x), d = x - f (exact),
// f + 1 where d > 0.5 or (d == 0.5 and f odd). NaN/inf pass through (d is NaN there).
Value round_half_even9(GraphContext& g, const Value& x, at::ScalarType type) {
  Value half = scalar_like(g, 0.5, type);
  Value f = g.op("Floor", {x});
  Value d = g.op("Sub", {x, f});
  Value two = scalar_like(g, 2, type);
  Value odd_part = g.op("Sub", {f, g.op("Mul", {two, g.op("Floor", {g.op("Div", {f, two})})})});
  Value odd = g.op("Greater", {odd_part, half});
  Value tie = g.op(
      "And", {g.op("Not", {g.op("Less", {d, half})}), g.op("Not", {g.op("Greater", {d, half})})});
  Value up = g.op("Or", {g.op("Greater", {d, half}), g.op("And", {tie, odd})});
  return g.op("Add", {f, g.cast(up, type)});
}

// Round half to even from opset 11: Round.
Value round_half_even11(GraphContext& g, const Value& x, at::ScalarType) {
  return g.op("Round", {x});
}

// clamp / clamp_min / clamp_max: bounds at positions lo, hi (npos = absent), all overloads.
Values clamp_bounds(GraphContext& g, const Args& a, std::optional<size_t> lo_index,
                    std::optional<size_t> hi_index) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) g.fail("the result dtype is unknown");
  auto present = [&](std::optional<size_t> i) { return i && !a.is_none(*i); };
  bool has_lo = present(lo_index), has_hi = present(hi_index);
  if (!has_lo && !has_hi) g.fail("clamp needs at least one of min and max");
  Value x = a.tensor_as(0, type);
  if (type == at::kBool) {
    // bool: max(x, min) is x or min, min(x, max) is x and max (ATen: max first, then min).
    if (has_lo) x = g.op("Or", {x, a.tensor_as(*lo_index, type)});
    if (has_hi) x = g.op("And", {x, a.tensor_as(*hi_index, type)});
    return {x};
  }
  const bool clip_ok = at::isFloatingType(type) || g.has(OnnxFeature::kClipIntegers);
  auto constant_bound = [&](bool has, std::optional<size_t> i) -> std::optional<double> {
    if (!has) return std::nullopt;
    c10::IValue c = a.constant(*i);
    if (c.isTensor()) return c.toTensor().item<double>();
    return c.toScalar().to<double>();
  };
  auto is_scalar_constant = [&](bool has, std::optional<size_t> i) {
    if (!has) return true;
    if (!a.is_constant(*i)) return false;
    c10::IValue c = a.constant(*i);
    return !c.isTensor() || c.toTensor().dim() == 0;
  };
  // Clip takes 0-d bounds: constant ones as attributes (< 11) or inputs (11+); graph-computed 0-d
  // bounds as inputs from 11.
  if (clip_ok && is_scalar_constant(has_lo, lo_index) && is_scalar_constant(has_hi, hi_index)) {
    std::optional<double> lo = constant_bound(has_lo, lo_index);
    std::optional<double> hi = constant_bound(has_hi, hi_index);
    if (lo && hi && *lo > *hi) lo = hi;  // ATen: max then min, so all max; ORT rejects min > max
    return {clip(g, x, lo, hi, type)};
  }
  auto zero_dim = [&](bool has, std::optional<size_t> i) {
    return !has || (a.rank(*i) && *a.rank(*i) == 0);
  };
  if (clip_ok && g.has(OnnxFeature::kClipInputs) && zero_dim(has_lo, lo_index) &&
      zero_dim(has_hi, hi_index)) {
    Values inputs{x, has_lo ? a.tensor_as(*lo_index, type) : ""};
    if (has_hi) inputs.push_back(a.tensor_as(*hi_index, type));
    return {g.op("Clip", inputs)};
  }
  // Tensor bounds (broadcasting) or integers below 12: max then min, as ATen does (min > max
  // gives max).
  Value y = x;
  if (has_lo) y = extreme(g, true, y, a.tensor_as(*lo_index, type), type);
  if (has_hi) y = extreme(g, false, y, a.tensor_as(*hi_index, type), type);
  return {y};
}

// ----- arithmetic -----------------------------------------------------------------------------

// aten::rsub(Tensor self, Tensor|Scalar other, Scalar alpha=1)  ⇒  Sub(other, alpha * self)
Values rsub(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  const at::ScalarType work = arithmetic_work_type(g, type);  // Note [Low-precision arithmetic]
  Value out = g.op("Sub", {a.tensor_as(1, work), scaled(g, a.tensor_as(0, work), a, 2, work)});
  return {cast_if(g, out, work, type)};
}

// aten::div.Tensor_mode / div.Scalar_mode(Tensor self, Tensor|Scalar other, *, str? rounding_mode)
//   ⇒  Div, then Floor ("floor") or Sign * Floor(Abs) ("trunc"); integers divide in double
Values div_rounding(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  if (a.is_none(2)) return {g.op("Div", {a.tensor_as(0, type), a.tensor_as(1, type)})};
  const std::string mode = a.str_arg(2);
  const bool floating = at::isFloatingType(type);
  // Integer inputs are divided in double so that floor/trunc round the true quotient.
  at::ScalarType work = floating ? type : at::kDouble;
  Value q = g.op("Div", {a.tensor_as(0, work), a.tensor_as(1, work)});
  if (mode == "floor") {
    q = g.op("Floor", {q});
  } else if (mode == "trunc") {
    q = g.op("Mul", {g.op("Sign", {q}), g.op("Floor", {g.op("Abs", {q})})});
  } else {
    g.fail("unknown rounding_mode '" + mode + "'");
  }
  return {floating ? q : g.cast(q, type)};
}

// aten::div(Tensor self, Tensor|Scalar other)  ⇒  Div in the result dtype
Values div(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  const at::ScalarType work = arithmetic_work_type(g, type);  // Note [Low-precision arithmetic]
  return {cast_if(g, g.op("Div", {a.tensor_as(0, work), a.tensor_as(1, work)}), work, type)};
}

// aten::floor_divide(Tensor self, Tensor|Scalar other)  ⇒  Floor(Div) (integers via double)
Values floor_divide(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  if (at::isFloatingType(type)) {
    return {g.op("Floor", {g.op("Div", {a.tensor_as(0, type), a.tensor_as(1, type)})})};
  }
  Value q = g.op("Div", {a.tensor_as(0, at::kDouble), a.tensor_as(1, at::kDouble)});
  return {g.cast(g.op("Floor", {q}), type)};
}

// aten::pow(Tensor|Scalar self, Tensor|Scalar exponent)  ⇒  Pow for floating results;
// Cast(Pow(double, double)) for integers (Pow takes integers from 12)
Values pow9(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  if (at::isFloatingType(type)) {
    return {g.op("Pow", {a.tensor_as(0, type), a.tensor_as(1, type)})};
  }
  Value p = g.op("Pow", {a.tensor_as(0, at::kDouble), a.tensor_as(1, at::kDouble)});
  return {g.cast(p, type)};
}

// aten::pow(Tensor|Scalar self, Tensor|Scalar exponent)  ⇒  Pow in the result dtype; Pow's base
// is never uint8, int8 or int16 (int64, cast back: the low bits, as PyTorch wraps)
Values pow12(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  at::ScalarType work = type;
  if (type == at::kByte || type == at::kChar || type == at::kShort) {
    work = at::kLong;
  }
  return {cast_if(g, g.op("Pow", {a.tensor_as(0, work), a.tensor_as(1, work)}), work, type)};
}

// aten::rsqrt(Tensor self)  ⇒  Reciprocal(Sqrt(self))
Values rsqrt(GraphContext& g, const Args& a) {
  return {g.op("Reciprocal", {g.op("Sqrt", {a.tensor_as(0, a.output_dtype())})})};
}

// ----- unary math ------------------------------------------------------------------------------

// aten::log10(Tensor self)  ⇒  Log(self) / ln(10)
Value log10(GraphContext& g, const Value& x, at::ScalarType t) {
  return g.op("Div", {g.op("Log", {x}), scalar_like(g, std::log(10.0), t)});
}

// aten::log2(Tensor self)  ⇒  Log(self) / ln(2)
Value log2(GraphContext& g, const Value& x, at::ScalarType t) {
  return g.op("Div", {g.op("Log", {x}), scalar_like(g, std::log(2.0), t)});
}

// aten::square(Tensor self)  ⇒  Mul(self, self) in the result dtype (bool → int64)
Values square(GraphContext& g, const Args& a) {
  Value x = in_result_type(a, 0);
  return {g.op("Mul", {x, x})};
}

// x rounded half to even with `decimals` digits: ATen scales by 10^d (x * 10^d for d >= 0,
// x / 10^-d for d < 0); integers are themselves.
Values round_to(GraphContext& g, const Args& a, int64_t decimals, Rounding round_half_even) {
  at::ScalarType type = a.dtype(0);
  if (at::isIntegralType(type, /*includeBool=*/true)) {
    if (decimals != 0) g.fail("round with decimals takes floating tensors only (as PyTorch)");
    return {in_result_type(a, 0)};  // round.int(int a) -> float
  }
  Value x = a.tensor(0);
  if (decimals == 0) return {round_half_even(g, x, type)};
  // ATen computes 10^|d| in double and casts it to the tensor's type.
  Value scale = scalar_like(g, std::pow(10.0, static_cast<double>(std::abs(decimals))), type);
  if (decimals > 0) {
    return {g.op("Div", {round_half_even(g, g.op("Mul", {x, scale}), type), scale})};
  }
  return {g.op("Mul", {round_half_even(g, g.op("Div", {x, scale}), type), scale})};
}

// aten::round.decimals(Tensor self, *, int decimals)  ⇒  round of x·10^d, scaled back
template <Rounding round_half_even>
Values round_decimals(GraphContext& g, const Args& a) {
  return round_to(g, a, a.int_arg(1), round_half_even);
}

// aten::round(Tensor self)  ⇒  Round (11+) or an exact Floor-based half-to-even below 11
template <Rounding round_half_even>
Values round(GraphContext& g, const Args& a) {
  return round_to(g, a, 0, round_half_even);
}

// aten::isnan(Tensor self)  ⇒  IsNaN (floats; other dtypes: all false)
Values isnan(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) return {filled(g, a.tensor(0), 0, at::kBool)};
  return {g.op("IsNaN", {a.tensor(0)})};
}

// |x| > the largest finite value of `type`: exact for ±inf (NaN compares false).
Value beyond_finite(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Greater", {g.op("Abs", {x}), scalar_like(g, max_finite(type), type)});
}

// aten::isinf(Tensor self)  ⇒  Greater(Abs(x), max) (floats); integers: all false
Values isinf9(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) return {filled(g, a.tensor(0), 0, at::kBool)};
  return {beyond_finite(g, a.tensor(0), type)};
}

// aten::isinf(Tensor self)  ⇒  IsInf (float/double), Greater(Abs(x), max) for half/bfloat16;
// integers: all false
Values isinf10(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) return {filled(g, a.tensor(0), 0, at::kBool)};
  if (type == at::kFloat || type == at::kDouble) return {g.op("IsInf", {a.tensor(0)})};
  return {beyond_finite(g, a.tensor(0), type)};
}

// aten::isfinite(Tensor self)  ⇒  Less(Abs(x), inf) (false for ±inf and NaN); ints: all true
Values isfinite(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) return {filled(g, a.tensor(0), 1, at::kBool)};
  Value inf = scalar_like(g, std::numeric_limits<double>::infinity(), type);
  return {g.op("Less", {g.op("Abs", {a.tensor(0)}), inf})};
}

// aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None)
//   ⇒  Where(IsNaN) then Where(x > max) / Where(x < lowest) for ±inf; defaults 0, the dtype's
//   max and lowest; integers: themselves
Values nan_to_num(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (!at::isFloatingType(type)) return {x};
  const double max = max_finite(type);
  double nan = a.optional_float(1).value_or(0.0);
  double posinf = a.optional_float(2).value_or(max);
  double neginf = a.optional_float(3).value_or(-max);
  Value y = g.op("Where", {g.op("IsNaN", {x}), scalar_like(g, nan, type), x});
  y = g.op("Where",
           {g.op("Greater", {y, scalar_like(g, max, type)}), scalar_like(g, posinf, type), y});
  y = g.op("Where",
           {g.op("Less", {y, scalar_like(g, -max, type)}), scalar_like(g, neginf, type), y});
  return {y};
}

// ----- binary math -----------------------------------------------------------------------------

// aten::remainder(Tensor|Scalar self, Tensor|Scalar other)  ⇒  Python remainder (sign of
//   other): Mod (10+, integers); fmod + sign fix like ATen for floats and below 10
// aten::fmod(Tensor self, Tensor|Scalar other)  ⇒  Mod(fmod=1) (10+); x - trunc(x/y)*y below
// Both: `remainder` of the operands in their promoted dtype.
template <Remainder remainder>
Values remainder_of(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  return {remainder(g, a.tensor_as(0, type), a.tensor_as(1, type), type)};
}

// aten::atan2(Tensor self, Tensor other)  ⇒  Atan(self/other), ±pi where other < 0 (the sign
// of self, -0 included via 1/self); atan2(±0, 0) = 0
Values atan2(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  Value y = a.tensor_as(0, type), x = a.tensor_as(1, type);
  Value zero = scalar_like(g, 0, type);
  // |x| + |y| is 0 only when both are zero, NaN when either is NaN.
  Value norm = g.op("Add", {g.op("Abs", {x}), g.op("Abs", {y})});
  Value both_zero = g.op(
      "And", {g.op("Not", {g.op("Greater", {norm, zero})}), g.op("Not", {g.op("IsNaN", {norm})})});
  Value one = scalar_like(g, 1, type);
  Value safe_x = g.op("Where", {both_zero, one, x});
  Value base = g.op("Atan", {g.op("Div", {y, safe_x})});
  // The sign of a zero shows in its reciprocal: +0 → +inf, -0 → -inf.
  Value y_positive = g.op("Greater", {g.op("Reciprocal", {y}), zero});
  Value x_negative =
      g.op("Or", {g.op("Less", {x, zero}), g.op("Less", {g.op("Reciprocal", {x}), zero})});
  Value pi = g.op("Where", {y_positive, scalar_like(g, kPi, type), scalar_like(g, -kPi, type)});
  return {g.op("Where", {x_negative, g.op("Add", {base, pi}), base})};
}

// aten::maximum(Tensor self, Tensor other)  ⇒  Max in the promoted dtype (integers below 12:
// Where(Greater); bool: Or)
Values maximum(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  return {extreme(g, true, a.tensor_as(0, type), a.tensor_as(1, type), type)};
}

// aten::minimum(Tensor self, Tensor other)  ⇒  Min in the promoted dtype (integers below 12:
// Where(Less); bool: And)
Values minimum(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  return {extreme(g, false, a.tensor_as(0, type), a.tensor_as(1, type), type)};
}

// aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1)
//   ⇒  self + value * tensor1 * tensor2
Values addcmul(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  Value prod = g.op("Mul", {a.tensor_as(1, type), a.tensor_as(2, type)});
  if (a.size() > 3 && !a.is_none(3)) {
    double value = a.float_arg(3);
    if (value != 1.0) prod = g.op("Mul", {scalar_like(g, value, type), prod});
  }
  return {g.op("Add", {a.tensor_as(0, type), prod})};
}

// aten::lerp(Tensor self, Tensor end, Scalar|Tensor weight)
//   ⇒  |w| < 0.5 ? self + w * (end - self) : end - (end - self) * (1 - w), as ATen
Values lerp(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  Value self = a.tensor_as(0, type), end = a.tensor_as(1, type);
  Value diff = g.op("Sub", {end, self});
  Value w = a.tensor_as(2, type);
  Value one = scalar_like(g, 1, type);
  auto low = [&] { return g.op("Add", {self, g.op("Mul", {w, diff})}); };
  auto high = [&] { return g.op("Sub", {end, g.op("Mul", {diff, g.op("Sub", {one, w})})}); };
  if (a.is_constant(2) && !a.constant(2).isTensor()) {
    return {std::abs(a.float_arg(2)) < 0.5 ? low() : high()};
  }
  Value small = g.op("Less", {g.op("Abs", {w}), scalar_like(g, 0.5, type)});
  return {g.op("Where", {small, low(), high()})};
}

// aten::floordiv(int|float a, int|float b)  ⇒  Python's a // b: exact integer floor division,
// Floor(Div) for floats
Values floordiv(GraphContext& g, const Args& a) {
  at::ScalarType type = compute_dtype(g, a);
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  if (at::isFloatingType(type)) return {g.op("Floor", {g.op("Div", {x, y})})};
  return {int_floor_divide(g, x, y, type)};
}

// aten::clamp(Tensor self, Scalar? min, Scalar? max) / clamp.Tensor(Tensor? min, Tensor? max)
//   ⇒  Clip for 0-d bounds (attributes < 11, inputs 11+; integers from 12); Max/Min (or
//   Where for integers below 12) for tensor bounds
Values clamp(GraphContext& g, const Args& a) {
  return clamp_bounds(g, a, size_t{1}, a.size() > 2 ? std::optional<size_t>(2) : std::nullopt);
}

// aten::clamp_min(Tensor self, Scalar|Tensor min)  ⇒  as clamp
Values clamp_min(GraphContext& g, const Args& a) {
  return clamp_bounds(g, a, size_t{1}, std::nullopt);
}

// aten::clamp_max(Tensor self, Scalar|Tensor max)  ⇒  as clamp
Values clamp_max(GraphContext& g, const Args& a) {
  return clamp_bounds(g, a, std::nullopt, size_t{1});
}

}  // namespace

void register_elementwise(Registry& r) {
  // aten::add / sub(Tensor self, Tensor|Scalar other, Scalar alpha=1)  ⇒  Add/Sub(self,
  // alpha * other)
  r.add("aten::add", from(9), binary("Add", /*with_alpha=*/true));
  r.add("aten::sub", from(9), binary("Sub", /*with_alpha=*/true));
  r.add("aten::rsub", from(9), rsub);
  r.add("aten::mul", from(9), binary("Mul"));
  r.add("aten::div", from(9), div);
  r.add("aten::div.Tensor_mode", from(9), div_rounding);
  r.add("aten::div.Scalar_mode", from(9), div_rounding);
  r.add("aten::floor_divide", from(9), floor_divide);
  // aten::true_divide  ⇒  Div in the (floating) result type
  r.add("aten::true_divide", from(9), binary("Div"));
  r.add("aten::pow", {9, 11}, pow9);
  r.add("aten::pow", from(12), pow12);
  // aten::neg/abs/exp/log/sqrt/reciprocal/sin/cos/erf/acos/asin/atan/tan(Tensor self)  ⇒  the ONNX
  // op of that name in the result dtype (ints cast to float where the result is)
  r.add("aten::neg", from(9), unary("Neg"));
  r.add("aten::abs", from(9), unary("Abs"));
  r.add("aten::exp", from(9), unary("Exp"));
  r.add("aten::log", from(9), unary("Log"));
  r.add("aten::sqrt", from(9), unary("Sqrt"));
  r.add("aten::reciprocal", from(9), unary("Reciprocal"));
  r.add("aten::sin", from(9), unary("Sin"));
  r.add("aten::cos", from(9), unary("Cos"));
  r.add("aten::erf", from(9), unary("Erf"));
  r.add("aten::acos", from(9), unary("Acos"));
  r.add("aten::asin", from(9), unary("Asin"));
  r.add("aten::atan", from(9), unary("Atan"));
  r.add("aten::tan", from(9), unary("Tan"));
  // aten::floor/ceil(Tensor self)  ⇒  Floor/Ceil (integers: themselves)
  r.add("aten::floor", from(9), rounding("Floor"));
  r.add("aten::ceil", from(9), rounding("Ceil"));
  r.add("aten::rsqrt", from(9), rsqrt);
  r.add("aten::log10", from(9), float_unary(log10));
  r.add("aten::log2", from(9), float_unary(log2));
  r.add("aten::square", from(9), square);
  r.add("aten::round", {9, 10}, round<round_half_even9>);
  r.add("aten::round", from(11), round<round_half_even11>);
  r.add("aten::round.decimals", {9, 10}, round_decimals<round_half_even9>);
  r.add("aten::round.decimals", from(11), round_decimals<round_half_even11>);
  r.add("aten::isnan", from(9), isnan);
  r.add("aten::isinf", {9, 9}, isinf9);
  r.add("aten::isinf", from(10), isinf10);
  r.add("aten::isfinite", from(9), isfinite);
  r.add("aten::nan_to_num", from(9), nan_to_num);
  r.add("aten::remainder", {9, 9}, remainder_of<floor_remainder9>);
  r.add("aten::remainder", from(10), remainder_of<floor_remainder10>);
  r.add("aten::fmod", {9, 9}, remainder_of<trunc_remainder9>);
  r.add("aten::fmod", from(10), remainder_of<trunc_remainder10>);
  r.add("aten::atan2", from(9), atan2);
  r.add("aten::maximum", from(9), maximum);
  r.add("aten::minimum", from(9), minimum);
  r.add("aten::addcmul", from(9), addcmul);
  r.add("aten::lerp", from(9), lerp);
  r.add("aten::floordiv", from(9), floordiv);
  r.add("aten::clamp", from(9), clamp);
  r.add("aten::clamp_min", from(9), clamp_min);
  r.add("aten::clamp_max", from(9), clamp_max);
}

}  // namespace torchonnx::symbolic::ops
