// Transcendental and special functions that have an exact ONNX form: hyperbolic functions and
// their inverses, rounding (trunc/frac), hypot, logaddexp, xlogy, copysign, heaviside, ...;
// floating-point decomposition (frexp, nextafter), isclose, gcd/lcm (a Loop of Euclid's steps) and
// torch.special's orthogonal polynomials (a Loop of their recurrence).
// Functions ONNX has no exact form for stay unconvertible: lgamma, digamma, polygamma, mvlgamma,
// erfinv, ndtri, erfc/erfcx and log_ndtr (the tails need erfc, which ONNX lacks), zeta, igamma,
// i0/i0e/i1/i1e and the Bessel and Airy functions (Cephes' piecewise approximations).
//
// Semantics follow PyTorch's CPU kernels (aten/src/ATen/native/cpu/BinaryOpsKernel.cpp,
// UnaryOpsKernel.cpp, Math.h), checked by experiment on 1.13 and 2.6:
//  - integer and bool inputs of the float functions compute in the (floating) result dtype;
//  - x == 0 is tested with Less/Greater (Equal takes floats only from opset 11), so every lowering
//    here serves every opset from 9;
//  - log1p and expm1 have no ONNX operator; Log(1 + y) and Exp(x) - 1 lose all digits of a small
//    argument, so they are computed with the classic corrections (log1p_of, expm1_of);
//  - the sign bit of a NaN is not observable in ONNX (no bit cast up to opset 21): copysign and
//    signbit read a NaN as positive, where PyTorch reads its bit (x86's 0/0 is a negative NaN).
#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "common/compat.h"
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/math_common.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

at::ScalarType float_type(GraphContext& g, const Args& a, size_t n) {
  at::ScalarType out = a.output_dtype();
  if (out != at::ScalarType::Undefined && at::isFloatingType(out)) return out;
  at::ScalarType type = a.dtype(0);
  for (size_t i = 1; i < n; ++i) type = at::promote_types(type, a.dtype(i));
  if (type == at::ScalarType::Undefined) {
    g.fail("the operands' dtypes are unknown (type propagation could not run the producer)");
  }
  return at::isFloatingType(type) ? type : at::kFloat;
}

Value is_zero(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = g.constant_scalar(0, type);
  Value nonzero = g.op("Or", {g.op("Less", {x, zero}), g.op("Greater", {x, zero})});
  if (at::isFloatingType(type)) nonzero = g.op("Or", {nonzero, g.op("IsNaN", {x})});
  return g.op("Not", {nonzero});
}

Value equal_floats(GraphContext& g, const Value& a, const Value& b) {
  Value differ = g.op("Or", {g.op("Less", {a, b}), g.op("Greater", {a, b})});
  return g.op("Not", {g.op("Or", {differ, g.op("IsNaN", {g.op("Add", {a, b})})})});
}

Value x_equals(GraphContext& g, const Value& x, double v, at::ScalarType type) {
  return equal_floats(g, x, g.constant_scalar(v, type));
}

Value nonnegative_mod(GraphContext& g, const Value& a, const Value& b) {
  return g.op("Sub", {a, g.op("Mul", {g.op("Div", {a, b}), b})});
}

namespace {

constexpr double kMathPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;

Value math_scalar(GraphContext& g, double value, at::ScalarType type) {
  return g.constant_scalar(value, type);
}

// x == +inf (x > the largest finite value; IsInf only from opset 10).
Value is_pos_inf(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Greater", {x, math_scalar(g, max_finite(type), type)});
}

// x == -inf.
Value is_neg_inf(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Less", {x, math_scalar(g, -max_finite(type), type)});
}

// x's sign bit for a floating x: x < 0, or x == -0 (whose reciprocal is -inf). NaN: false.
Value sign_bit(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = math_scalar(g, 0, type);
  return g.op("Or", {g.op("Less", {x, zero}), g.op("Less", {g.op("Reciprocal", {x}), zero})});
}

// trunc(x) for a floating x: Ceil below 0, Floor otherwise (-0.5 → -0, NaN and ±inf kept).
Value trunc_of(GraphContext& g, const Value& x, at::ScalarType type) {
  Value negative = g.op("Less", {x, math_scalar(g, 0, type)});
  return g.op("Where", {negative, g.op("Ceil", {x}), g.op("Floor", {x})});
}

// log1p(y) to a few ulps also for |y| below an ulp of 1, where Log(1 + y) is 0: with u = 1 + y
// rounded, log(u) · y / (u - 1) — the rounding error of u cancels in the ratio (Goldberg, "What
// every computer scientist should know about floating-point arithmetic", theorem 4). y itself
// where u == 1 (log1p(y) = y to working precision) and where y = +inf (inf/inf).
Value log1p_of(GraphContext& g, const Value& y, at::ScalarType type) {
  Value one = math_scalar(g, 1, type);
  Value u = g.op("Add", {y, one});
  Value d = g.op("Sub", {u, one});
  Value ratio = g.op("Mul", {g.op("Log", {u}), g.op("Div", {y, d})});
  Value exact = g.op("Or", {is_zero(g, d, type), is_pos_inf(g, y, type)});
  return g.op("Where", {exact, y, ratio});
}

// expm1(x) to a few ulps also for small |x|, where Exp(x) - 1 cancels: with u = exp(x) rounded,
// (u - 1) · x / log(u) (Kahan's correction, the same cancellation of u's rounding as log1p_of).
// x itself where u == 1, -1 where u == 0 (x → -inf), +inf where u overflows.
Value expm1_of(GraphContext& g, const Value& x, at::ScalarType type) {
  Value u = g.op("Exp", {x});
  Value d = g.op("Sub", {u, math_scalar(g, 1, type)});
  Value ratio = g.op("Mul", {d, g.op("Div", {x, g.op("Log", {u})})});
  Value y = g.op("Where", {is_zero(g, d, type), x, ratio});
  y = g.op("Where", {is_zero(g, u, type), math_scalar(g, -1, type), y});
  return g.op("Where", {is_pos_inf(g, u, type), u, y});
}

// ----- unary ------------------------------------------------------------------------------------

// A unary function of a floating tensor: input 0 in the (floating) result dtype.
template <Value (*body)(GraphContext&, const Value&, at::ScalarType)>
Values float_unary(GraphContext& g, const Args& a) {
  at::ScalarType type = float_type(g, a);
  return {body(g, a.tensor_as(0, type), type)};
}

// aten::sinh / cosh / asinh / acosh / atanh(Tensor self)  ⇒  the ONNX op of that name (opset 9)
template <const char* onnx_op>
Value onnx_unary(GraphContext& g, const Value& x, at::ScalarType) {
  return g.op(onnx_op, {x});
}
constexpr char kSinh[] = "Sinh", kCosh[] = "Cosh", kAsinh[] = "Asinh", kAcosh[] = "Acosh",
               kAtanh[] = "Atanh";

// aten::trunc(Tensor self), aten::fix (its alias)  ⇒  Where(x < 0, Ceil(x), Floor(x));
// integers: themselves
Values trunc(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  if (at::isIntegralType(type, /*includeBool=*/true)) return {a.tensor(0)};
  return {trunc_of(g, a.tensor(0), type)};
}

// aten::frac(Tensor self)  ⇒  x - trunc(x) (±inf: NaN, as PyTorch); floating only in PyTorch
Values frac(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) g.fail("frac of an integer tensor (PyTorch takes floating ones)");
  Value x = a.tensor(0);
  return {g.op("Sub", {x, trunc_of(g, x, type)})};
}

// aten::expm1(Tensor self)  ⇒  expm1_of (Exp with Kahan's correction for small |x|)
Value expm1(GraphContext& g, const Value& x, at::ScalarType type) {
  return expm1_of(g, x, type);
}

// aten::special_entr(Tensor self)  ⇒  -x·Log(x) for x > 0, -inf for x < 0, 0 at 0, NaN kept
Value entr(GraphContext& g, const Value& x, at::ScalarType type) {
  Value positive = g.op("Neg", {g.op("Mul", {x, g.op("Log", {x})})});
  // x · 0: 0 at x == 0, NaN at NaN.
  Value rest = g.op("Where", {g.op("Less", {x, math_scalar(g, 0, type)}),
                              math_scalar(g, -std::numeric_limits<double>::infinity(), type),
                              g.op("Mul", {x, math_scalar(g, 0, type)})});
  return g.op("Where", {g.op("Greater", {x, math_scalar(g, 0, type)}), positive, rest});
}

// aten::sinc(Tensor self)  ⇒  Sin(πx) / (πx) with π in the dtype (as ATen), 1 at x == 0
Value sinc(GraphContext& g, const Value& x, at::ScalarType type) {
  Value product = g.op("Mul", {x, math_scalar(g, kMathPi, type)});
  Value ratio = g.op("Div", {g.op("Sin", {product}), product});
  return g.op("Where", {is_zero(g, x, type), math_scalar(g, 1, type), ratio});
}

// aten::special_spherical_bessel_j0(Tensor x)  ⇒  ATen's two branches: for |x| < 0.5 its
// Taylor polynomial 1 - x²/6 + x⁴/120 - ... (Horner in x², the same coefficients), else
// Sin(x) / x; 0 at ±inf
Value spherical_bessel_j0(GraphContext& g, const Value& x, at::ScalarType type) {
  Value x2 = g.op("Mul", {x, x});
  // Innermost first: 1/6227020800, -1/39916800, 1/362880, -1/5040, 1/120, -1/6, 1.
  const double coefficients[] = {-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0,
                                 1.0 / 120.0,       -1.0 / 6.0,     1.0};
  Value poly = math_scalar(g, 1.0 / 6227020800.0, type);
  for (double c : coefficients) {
    poly = g.op("Add", {math_scalar(g, c, type), g.op("Mul", {x2, poly})});
  }
  Value small = g.op("Less", {g.op("Abs", {x}), math_scalar(g, 0.5, type)});
  Value y = g.op("Where", {small, poly, g.op("Div", {g.op("Sin", {x}), x})});
  Value inf = g.op("Or", {is_pos_inf(g, x, type), is_neg_inf(g, x, type)});
  return g.op("Where", {inf, math_scalar(g, 0, type), y});
}

// aten::deg2rad(Tensor self)  ⇒  x · (π/180) in the dtype
Value deg2rad(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Mul", {x, math_scalar(g, kMathPi / 180.0, type)});
}

// aten::rad2deg(Tensor self)  ⇒  x · (180/π) in the dtype
Value rad2deg(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Mul", {x, math_scalar(g, 180.0 / kMathPi, type)});
}

// aten::exp2(Tensor self)  ⇒  Pow(2, x)
Value exp2(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Pow", {math_scalar(g, 2, type), x});
}

// aten::special_ndtr(Tensor self)  ⇒  (1 + Erf(x/√2)) / 2. PyTorch computes erfc(-x/√2) / 2:
// the same to an absolute error below an ulp of 1; in the far left tail (x < -5.5 in float)
// this gives 0 where PyTorch gives values below 2e-8.
Value ndtr(GraphContext& g, const Value& x, at::ScalarType type) {
  Value erf = g.op("Erf", {g.op("Mul", {x, math_scalar(g, 1.0 / std::sqrt(2.0), type)})});
  return g.op("Mul", {g.op("Add", {erf, math_scalar(g, 1, type)}), math_scalar(g, 0.5, type)});
}

// aten::angle(Tensor self) of a real tensor  ⇒  π where x < 0, else 0; NaN kept
Value angle(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = math_scalar(g, 0, type);
  Value a = g.op("Where", {g.op("Less", {x, zero}), math_scalar(g, kMathPi, type), zero});
  return g.op("Where", {g.op("IsNaN", {x}), x, a});
}

// aten::signbit(Tensor self)  ⇒  x < 0 or x == -0 (floats), x < 0 (integers), false (bool)
Values signbit(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (type == at::kBool) return {g.op("And", {x, g.op("Not", {x})})};
  if (!at::isFloatingType(type)) return {g.op("Less", {x, math_scalar(g, 0, type)})};
  return {sign_bit(g, x, type)};
}

// aten::isposinf / isneginf(Tensor self)  ⇒  x > max / x < lowest (floats); false otherwise
template <bool positive>
Values is_inf_of_sign(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (!at::isFloatingType(type)) {
    Value b = type == at::kBool ? x : g.cast(x, at::kBool);
    return {g.op("And", {b, g.op("Not", {b})})};
  }
  return {positive ? is_pos_inf(g, x, type) : is_neg_inf(g, x, type)};
}

// aten::sgn / aten::sign(Tensor self) of a real tensor  ⇒  Sign, 0 where x is NaN (as ATen's
// sign and sgn; ONNX's Sign keeps NaN); bool: itself
Values sgn(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (type == at::kBool) return {x};
  Value sign = g.op("Sign", {x});
  if (!at::isFloatingType(type)) return {sign};
  return {g.op("Where", {g.op("IsNaN", {x}), math_scalar(g, 0, type), sign})};
}

// aten::positive(Tensor self)  ⇒  the input (Identity)
Values math_identity(GraphContext& g, const Args& a) {
  return {g.op("Identity", {a.tensor(0)})};
}

// frexp of a floating x: x = m · 2^e with |m| in [0.5, 1) (e in the dtype), where `regular`
// (x finite and non-zero); elsewhere m and e are unspecified. e = Floor(log2|x|) + 1, corrected by
// one where the logarithm rounded across a power of two; m = x · 2^-e in two exact power-of-two
// steps (2^-e alone overflows for subnormal x).
struct Frexp {
  Value m, e, regular;
};

Frexp frexp_of(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = math_scalar(g, 0, type), one = math_scalar(g, 1, type),
        two = math_scalar(g, 2, type);
  Value ax = g.op("Abs", {x});
  Value regular =
      g.op("And", {g.op("Greater", {ax, zero}), g.op("Not", {is_pos_inf(g, ax, type)})});
  Value safe = g.op("Where", {regular, ax, one});
  Value log2 = g.op("Div", {g.op("Log", {safe}), math_scalar(g, kLn2, type)});
  Value e = g.op("Add", {g.op("Floor", {log2}), one});
  // x · 2^-e as x · 2^h · 2^(-e-h), h = floor(-e/2): each factor within range.
  Value neg_e = g.op("Neg", {e});
  Value h = g.op("Floor", {g.op("Div", {neg_e, two})});
  Value m = g.op("Mul", {g.op("Mul", {x, g.op("Pow", {two, h})}),
                         g.op("Pow", {two, g.op("Sub", {neg_e, h})})});
  // |m| in [0.5, 1): one step down or up where the estimate was one off.
  Value am = g.op("Abs", {m});
  Value too_big = g.op("Not", {g.op("Less", {am, one})});
  Value too_small = g.op("Less", {am, math_scalar(g, 0.5, type)});
  m = g.op("Where", {too_big, g.op("Mul", {m, math_scalar(g, 0.5, type)}), m});
  m = g.op("Where", {too_small, g.op("Mul", {m, two}), m});
  e = g.op("Where", {too_big, g.op("Add", {e, one}), e});
  e = g.op("Where", {too_small, g.op("Sub", {e, one}), e});
  return {m, e, regular};
}

// aten::frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)
//   ⇒  frexp_of; x and exponent 0 where x is 0, ±inf or NaN (as ATen); the exponent is int32
Values frexp(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) g.fail("frexp of a non-floating tensor (PyTorch rejects it)");
  Value x = a.tensor(0);
  Frexp f = frexp_of(g, x, type);
  Value m = g.op("Where", {f.regular, f.m, x});
  Value e = g.op("Where", {f.regular, f.e, math_scalar(g, 0, type)});
  return {m, g.cast(e, at::kInt)};
}

// ----- binary -----------------------------------------------------------------------------------

// A binary function of floating tensors: inputs 0 and 1 in the (floating) result dtype.
template <Value (*body)(GraphContext&, const Value&, const Value&, at::ScalarType)>
Values float_binary(GraphContext& g, const Args& a) {
  at::ScalarType type = float_type(g, a, 2);
  return {body(g, a.tensor_as(0, type), a.tensor_as(1, type), type)};
}

// aten::hypot(Tensor self, Tensor other)  ⇒  m·Sqrt(1 + (n/m)²) for m = max(|x|, |y|),
// n = min(|x|, |y|): no overflow or underflow of x² (as std::hypot); 0 where m == 0, NaN where
// either is NaN, +inf where either is infinite (also with a NaN, as std::hypot)
Value hypot(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value ax = g.op("Abs", {x}), ay = g.op("Abs", {y});
  Value m = g.op("Max", {ax, ay}), n = g.op("Min", {ax, ay});
  Value r = g.op("Div", {n, m});
  Value h =
      g.op("Mul", {m, g.op("Sqrt", {g.op("Add", {math_scalar(g, 1, type), g.op("Mul", {r, r})})})});
  h = g.op("Where", {is_zero(g, m, type), m, h});
  Value sum = g.op("Add", {ax, ay});  // NaN iff either is NaN
  h = g.op("Where", {g.op("IsNaN", {sum}), sum, h});
  Value inf = g.op("Or", {is_pos_inf(g, ax, type), is_pos_inf(g, ay, type)});
  return g.op("Where", {inf, math_scalar(g, std::numeric_limits<double>::infinity(), type), h});
}

// aten::logaddexp(Tensor self, Tensor other)  ⇒  max + log1p(Exp(-|a - b|)) (log1p_of);
// a + ln 2 where a == b (also ±inf, where a - b is NaN)
Value logaddexp(GraphContext& g, const Value& a, const Value& b, at::ScalarType type) {
  Value m = g.op("Max", {a, b});
  Value t = g.op("Exp", {g.op("Neg", {g.op("Abs", {g.op("Sub", {a, b})})})});
  Value general = g.op("Add", {m, log1p_of(g, t, type)});
  return g.op("Where",
              {equal_floats(g, a, b), g.op("Add", {a, math_scalar(g, kLn2, type)}), general});
}

// aten::logaddexp2(Tensor self, Tensor other)  ⇒  max + log1p(Pow(2, -|a - b|)) / ln 2;
// a + 1 where a == b
Value logaddexp2(GraphContext& g, const Value& a, const Value& b, at::ScalarType type) {
  Value m = g.op("Max", {a, b});
  Value t =
      g.op("Pow", {math_scalar(g, 2, type), g.op("Neg", {g.op("Abs", {g.op("Sub", {a, b})})})});
  Value general =
      g.op("Add", {m, g.op("Mul", {log1p_of(g, t, type), math_scalar(g, 1.0 / kLn2, type)})});
  return g.op("Where", {equal_floats(g, a, b), g.op("Add", {a, math_scalar(g, 1, type)}), general});
}

// aten::copysign(Tensor self, Tensor|Scalar other)  ⇒  Where(signbit(other), -|x|, |x|)
// (a NaN `other` counts as positive: see the header)
Value copysign(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value ax = g.op("Abs", {x});
  return g.op("Where", {sign_bit(g, y, type), g.op("Neg", {ax}), ax});
}

// x · f(y) with ATen's xlogy conventions: NaN where y is NaN, else 0 where x == 0.
Value x_times(GraphContext& g, const Value& x, const Value& y, const Value& fy,
              at::ScalarType type) {
  Value r = g.op("Where", {is_zero(g, x, type), math_scalar(g, 0, type), g.op("Mul", {x, fy})});
  return g.op("Where", {g.op("IsNaN", {y}), y, r});
}

// aten::xlogy(Tensor|Scalar self, Tensor|Scalar other)  ⇒  x·Log(y); 0 where x == 0, NaN where
// y is NaN (also where x == 0)
Value xlogy(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  return x_times(g, x, y, g.op("Log", {y}), type);
}

// aten::special_xlog1py(Tensor|Scalar self, Tensor|Scalar other)  ⇒  x·log1p(y) (log1p_of),
// with xlogy's conventions
Value xlog1py(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  return x_times(g, x, y, log1p_of(g, y, type), type);
}

// aten::fmax / fmin(Tensor self, Tensor other) on floats  ⇒  Max/Min, the other operand where
// one is NaN (NaN only when both are)
template <bool max>
Value fmax_fmin(GraphContext& g, const Value& a, const Value& b, at::ScalarType) {
  Value m = g.op(max ? "Max" : "Min", {a, b});
  m = g.op("Where", {g.op("IsNaN", {a}), b, m});
  return g.op("Where", {g.op("IsNaN", {b}), a, m});
}

// aten::fmax / fmin on integers and bools  ⇒  maximum/minimum (no NaN): Where(Greater/Less)
// (Max/Min take integers only from opset 12); bool: Or/And
template <bool max>
Values fmax_fmin_any(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) type = at::promote_types(a.dtype(0), a.dtype(1));
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  if (at::isFloatingType(type)) return {fmax_fmin<max>(g, x, y, type)};
  if (type == at::kBool) return {g.op(max ? "Or" : "And", {x, y})};
  return {g.op("Where", {g.op(max ? "Greater" : "Less", {x, y}), x, y})};
}

// aten::heaviside(Tensor self, Tensor values)  ⇒  values where x == 0, else Cast(x > 0) (NaN
// gives 0, as ATen); bool: Or(x, values)
Values heaviside(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) type = a.dtype(0);
  Value x = a.tensor_as(0, type), values = a.tensor_as(1, type);
  if (type == at::kBool) return {g.op("Or", {x, values})};
  Value step = g.cast(g.op("Greater", {x, math_scalar(g, 0, type)}), type);
  return {g.op("Where", {is_zero(g, x, type), values, step})};
}

// aten::float_power(Tensor|Scalar self, Tensor|Scalar exponent)  ⇒  Pow in double (the result is
// double)
Values float_power(GraphContext& g, const Args& a) {
  return {g.op("Pow", {a.tensor_as(0, at::kDouble), a.tensor_as(1, at::kDouble)})};
}

// aten::ldexp(Tensor self, Tensor other)  ⇒  x · Pow(2, other) in the (floating) result dtype;
// where libtorch scales exactly (compat::kLdexpScalesExactly), x itself where that product is
// NaN and neither x nor the power is (0 · inf, inf · 0: ldexp keeps 0 and inf).
Value ldexp(GraphContext& g, const Value& x, const Value& e, at::ScalarType type) {
  Value scale = g.op("Pow", {math_scalar(g, 2, type), e});
  Value product = g.op("Mul", {x, scale});
  if (!compat::kLdexpScalesExactly) return product;
  Value nan_inputs = g.op("Or", {g.op("IsNaN", {x}), g.op("IsNaN", {scale})});
  Value keep = g.op("And", {g.op("IsNaN", {product}), g.op("Not", {nan_inputs})});
  return g.op("Where", {keep, x, product});
}

// aten::nextafter(Tensor self, Tensor other) on float/double  ⇒  x ± one unit in the last place
// toward y: with x = m·2^e (frexp_of) the unit is 2^max(e - p, lowest) (p = 24 or 53 digits,
// lowest = the subnormal unit), half of it below a power of two stepping toward 0; ±the smallest
// subnormal from 0; ±max from ±inf; y where x == y; NaN where either is NaN (as std::nextafter)
Values nextafter(GraphContext& g, const Args& a) {
  const at::ScalarType type = float_type(g, a, 2);
  if (type != at::kFloat && type != at::kDouble) {
    g.fail(std::string("nextafter on ") + c10::toString(type) + " (float and double only)");
  }
  const double digits = type == at::kFloat ? 24 : 53;
  const double lowest = type == at::kFloat ? -149 : -1074;
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  Value zero = math_scalar(g, 0, type), two = math_scalar(g, 2, type);
  Frexp f = frexp_of(g, x, type);
  auto power = [&](const Value& exponent) {
    return g.op("Pow", {two, g.op("Max", {exponent, math_scalar(g, lowest, type)})});
  };
  Value up = power(g.op("Sub", {f.e, math_scalar(g, digits, type)}));
  Value at_power = x_equals(g, g.op("Abs", {f.m}), 0.5, type);
  Value down =
      g.op("Where", {at_power, power(g.op("Sub", {f.e, math_scalar(g, digits + 1, type)})), up});
  Value positive = g.op("Greater", {x, zero});
  // Away from zero: x > 0 toward a larger y, or x < 0 toward a smaller one.
  Value away = g.op("Not", {g.op("Xor", {positive, g.op("Greater", {y, x})})});
  Value ax = g.op("Abs", {x});
  Value stepped = g.op("Where", {away, g.op("Add", {ax, up}), g.op("Sub", {ax, down})});
  Value r = g.op("Where", {positive, stepped, g.op("Neg", {stepped})});
  Value tiny = math_scalar(g, std::pow(2.0, lowest), type);
  r = g.op("Where", {is_zero(g, x, type),
                     g.op("Where", {g.op("Greater", {y, zero}), tiny, g.op("Neg", {tiny})}), r});
  Value max = math_scalar(g, max_finite(type), type);
  r = g.op("Where", {is_pos_inf(g, x, type), max, r});
  r = g.op("Where", {is_neg_inf(g, x, type), g.op("Neg", {max}), r});
  r = g.op("Where", {equal_floats(g, x, y), y, r});
  Value any_nan = g.op("Or", {g.op("IsNaN", {x}), g.op("IsNaN", {y})});
  return {g.op("Where", {any_nan, g.op("Add", {x, y}), r})};
}

// aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1)
//   ⇒  self + value · tensor1 / tensor2 (in that order, as ATen); integer tensor1/tensor2 are
//   rejected by PyTorch
Values addcdiv(GraphContext& g, const Args& a) {
  if (!at::isFloatingType(a.dtype(1)) || !at::isFloatingType(a.dtype(2))) {
    g.fail("addcdiv of integer tensors (PyTorch rejects integer division in addcdiv)");
  }
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) type = a.dtype(0);
  Value t1 = a.tensor_as(1, type);
  if (a.size() > 3 && !a.is_none(3)) {
    const double value = a.float_arg(3);
    if (value != 1.0) t1 = g.op("Mul", {math_scalar(g, value, type), t1});
  }
  return {g.op("Add", {a.tensor_as(0, type), g.op("Div", {t1, a.tensor_as(2, type)})})};
}

// aten::isreal(Tensor self) of a real tensor  ⇒  all true: ConstantOfShape(Shape(x), true)
Values isreal(GraphContext& g, const Args& a) {
  at::Tensor one = at::ones({1}, at::TensorOptions().dtype(at::kBool));
  return {g.op("ConstantOfShape", {g.op("Shape", {a.tensor(0)})}, {{"value", one}})};
}

// aten::isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08,
//   bool equal_nan=False) -> Tensor
//   ⇒  x == y, or both NaN with equal_nan, or |x - y| finite and <= atol + |rtol · y| (as ATen:
//   integers compare their exact difference in float, bools compute in float)
Values isclose(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  if (a.dtype(1) != type) g.fail("isclose of tensors of different dtypes (PyTorch rejects it)");
  const double rtol = a.float_arg(2), atol = a.float_arg(3);
  const bool equal_nan = a.bool_arg(4);
  Value x = a.tensor(0), y = a.tensor(1);
  const bool floating = at::isFloatingType(type);
  Value close;
  if (type == at::kBool) {
    close = g.op("Not", {g.op("Xor", {x, y})});
  } else {
    close = g.op("Not", {g.op("Or", {g.op("Less", {x, y}), g.op("Greater", {x, y})})});
    if (floating) {
      // Not(Less or Greater) holds for NaN too: only equal_nan makes NaN close to NaN.
      Value both_nan = g.op("And", {g.op("IsNaN", {x}), g.op("IsNaN", {y})});
      Value any_nan = g.op("Or", {g.op("IsNaN", {x}), g.op("IsNaN", {y})});
      close = g.op("And", {close, g.op("Not", {any_nan})});
      if (equal_nan) close = g.op("Or", {close, both_nan});
    }
  }
  if (rtol == 0 && atol == 0) return {close};
  const at::ScalarType work = floating ? type : at::kFloat;
  Value actual;
  if (type == at::kBool) {
    actual = g.op("Abs", {g.op("Sub", {g.cast(x, work), g.cast(y, work)})});
  } else {
    actual = cast_if(g, g.op("Abs", {g.op("Sub", {x, y})}), type, work);
  }
  Value allowed = g.op(
      "Add", {math_scalar(g, atol, work),
              g.op("Abs", {g.op("Mul", {math_scalar(g, rtol, work), cast_if(g, y, type, work)})})});
  Value finite =
      g.op("Less", {actual, math_scalar(g, std::numeric_limits<double>::infinity(), work)});
  Value within = g.op("And", {finite, g.op("Not", {g.op("Greater", {actual, allowed})})});
  return {g.op("Or", {close, within})};
}

// Whether any element of a non-negative integer tensor is positive (false for an empty one).
Value any_positive(GraphContext& g, const Value& a, at::ScalarType type) {
  // In int64: ReduceMax takes 8-bit integers only from opset 12, 16-bit ones never.
  Value flat = cast_if(g, g.op("Reshape", {a, g.constant_ints({-1})}), type, at::kLong);
  Value with_zero = g.op("Concat", {flat, g.constant_ints({0})}, {{"axis", int64_t{0}}});
  return g.op("Greater",
              {reduce(g, "ReduceMax", with_zero, {}, false), math_scalar(g, 0, at::kLong)});
}

// The greatest common divisor of integer tensors x and y (broadcast), non-negative, as ATen's
// calc_gcd: a = |x|, b = |y|; while a != 0: (a, b) = (b mod a, a); the result is b. A Loop while
// any element's a is non-zero, each step taking only the elements not finished (Euclid's steps
// are at most ~92 for int64).
Value gcd_of(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value zero = math_scalar(g, 0, type);
  // Both operands broadcast to the result's shape, so the loop's carried values keep it.
  Value shape = g.op("Shape", {g.op("Add", {x, y})});
  Value a0 = g.op("Abs", {g.op("Expand", {x, shape})});
  Value b0 = g.op("Abs", {g.op("Expand", {y, shape})});
  // No step when every a is 0 (or there are no elements).
  Values loop =
      carried_loop(g, "gcd_body", "", any_positive(g, a0, type), {a0, b0}, {"a", "b"}, {type, type},
                   [&](const Value&, const Value&, const Values& ab) -> LoopStep {
                     const Value &a = ab[0], &b = ab[1];
                     Value active = g.op("Greater", {a, zero});
                     Value divisor = g.op("Where", {active, a, math_scalar(g, 1, type)});
                     Value next_a = g.op("Where", {active, nonnegative_mod(g, b, divisor), a});
                     Value next_b = g.op("Where", {active, a, b});
                     return {any_positive(g, next_a, type), {next_a, next_b}};
                   });
  return loop[1];
}

// aten::gcd(Tensor self, Tensor other) on integers  ⇒  gcd_of (a Loop of Euclid's steps)
Values gcd(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) type = at::promote_types(a.dtype(0), a.dtype(1));
  if (!at::isIntegralType(type, /*includeBool=*/false)) {
    g.fail("gcd of non-integer tensors (PyTorch takes integer ones)");
  }
  return {gcd_of(g, a.tensor_as(0, type), a.tensor_as(1, type), type)};
}

// aten::lcm(Tensor self, Tensor other) on integers  ⇒  |x / gcd · y|, 0 where the gcd is 0 (as
// ATen: the division first)
Values lcm(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) type = at::promote_types(a.dtype(0), a.dtype(1));
  if (!at::isIntegralType(type, /*includeBool=*/false)) {
    g.fail("lcm of non-integer tensors (PyTorch takes integer ones)");
  }
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  Value d = gcd_of(g, x, y, type);
  Value zero = math_scalar(g, 0, type);
  Value none = g.op("Not", {g.op("Greater", {d, zero})});
  Value safe = g.op("Where", {none, math_scalar(g, 1, type), d});
  Value l = g.op("Abs", {g.op("Mul", {g.op("Div", {x, safe}), y})});
  return {g.op("Where", {none, zero, l})};
}

}  // namespace

void register_math(Registry& r) {
  r.add("aten::sinh", from(9), float_unary<onnx_unary<kSinh>>);
  r.add("aten::cosh", from(9), float_unary<onnx_unary<kCosh>>);
  r.add("aten::asinh", from(9), float_unary<onnx_unary<kAsinh>>);
  r.add("aten::acosh", from(9), float_unary<onnx_unary<kAcosh>>);
  r.add("aten::atanh", from(9), float_unary<onnx_unary<kAtanh>>);
  r.add("aten::trunc", from(9), trunc);
  r.add("aten::fix", from(9), trunc);
  r.add("aten::frac", from(9), frac);
  r.add("aten::expm1", from(9), float_unary<expm1>);
  r.add("aten::special_entr", from(9), float_unary<entr>);
  r.add("aten::sinc", from(9), float_unary<sinc>);
  r.add("aten::special_spherical_bessel_j0", from(9), float_unary<spherical_bessel_j0>);
  r.add("aten::deg2rad", from(9), float_unary<deg2rad>);
  r.add("aten::rad2deg", from(9), float_unary<rad2deg>);
  r.add("aten::exp2", from(9), float_unary<exp2>);
  r.add("aten::special_ndtr", from(9), float_unary<ndtr>);
  r.add("aten::angle", from(9), float_unary<angle>);
  r.add("aten::signbit", from(9), signbit);
  r.add("aten::frexp", from(9), frexp);
  r.add("aten::isposinf", from(9), is_inf_of_sign<true>);
  r.add("aten::isneginf", from(9), is_inf_of_sign<false>);
  r.add("aten::sgn", from(9), sgn);
  r.add("aten::sign", from(9), sgn);
  r.add("aten::log1p", from(9), float_unary<log1p_of>);
  r.add("aten::positive", from(9), math_identity);
  r.add("aten::hypot", from(9), float_binary<hypot>);
  r.add("aten::logaddexp", from(9), float_binary<logaddexp>);
  r.add("aten::logaddexp2", from(9), float_binary<logaddexp2>);
  r.add("aten::copysign", from(9), float_binary<copysign>);
  r.add("aten::xlogy", from(9), float_binary<xlogy>);
  r.add("aten::special_xlog1py", from(9), float_binary<xlog1py>);
  r.add("aten::ldexp", from(9), float_binary<ldexp>);
  r.add("aten::nextafter", from(9), nextafter);
  r.add("aten::fmax", from(9), fmax_fmin_any<true>);
  r.add("aten::fmin", from(9), fmax_fmin_any<false>);
  r.add("aten::heaviside", from(9), heaviside);
  r.add("aten::float_power", from(9), float_power);
  r.add("aten::addcdiv", from(9), addcdiv);
  r.add("aten::isreal", from(9), isreal);
  r.add("aten::isclose", from(9), isclose);
  r.add("aten::gcd", from(9), gcd);
  r.add("aten::lcm", from(9), lcm);
}

}  // namespace torchonnx::symbolic::ops
