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

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;

Value scalar(GraphContext& g, double value, at::ScalarType type) {
  return g.constant_scalar(value, type);
}

// The floating dtype a float function of inputs [0, n) computes in: the node's result dtype,
// else the promoted inputs' (integers and bools: float, the default dtype).
at::ScalarType float_type(GraphContext& g, const Args& a, size_t n = 1) {
  at::ScalarType out = a.output_dtype();
  if (out != at::ScalarType::Undefined && at::isFloatingType(out)) return out;
  at::ScalarType type = a.dtype(0);
  for (size_t i = 1; i < n; ++i) type = at::promote_types(type, a.dtype(i));
  if (type == at::ScalarType::Undefined) {
    g.fail("the operands' dtypes are unknown (type propagation could not run the producer)");
  }
  return at::isFloatingType(type) ? type : at::kFloat;
}

// x == 0 (false for NaN) with Less/Greater, which take every numeric type at every opset.
Value is_zero(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = scalar(g, 0, type);
  Value nonzero = g.op("Or", {g.op("Less", {x, zero}), g.op("Greater", {x, zero})});
  if (at::isFloatingType(type)) nonzero = g.op("Or", {nonzero, g.op("IsNaN", {x})});
  return g.op("Not", {nonzero});
}

// x == +inf (x > the largest finite value; IsInf only from opset 10).
Value is_pos_inf(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Greater", {x, scalar(g, max_finite(type), type)});
}

// x == -inf.
Value is_neg_inf(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Less", {x, scalar(g, -max_finite(type), type)});
}

// x's sign bit for a floating x: x < 0, or x == -0 (whose reciprocal is -inf). NaN: false.
Value sign_bit(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = scalar(g, 0, type);
  return g.op("Or", {g.op("Less", {x, zero}), g.op("Less", {g.op("Reciprocal", {x}), zero})});
}

// trunc(x) for a floating x: Ceil below 0, Floor otherwise (-0.5 → -0, NaN and ±inf kept).
Value trunc_of(GraphContext& g, const Value& x, at::ScalarType type) {
  Value negative = g.op("Less", {x, scalar(g, 0, type)});
  return g.op("Where", {negative, g.op("Ceil", {x}), g.op("Floor", {x})});
}

// log1p(y) to a few ulps also for |y| below an ulp of 1, where Log(1 + y) is 0: with u = 1 + y
// rounded, log(u) · y / (u - 1) — the rounding error of u cancels in the ratio (Goldberg, "What
// every computer scientist should know about floating-point arithmetic", theorem 4). y itself
// where u == 1 (log1p(y) = y to working precision) and where y = +inf (inf/inf).
Value log1p_of(GraphContext& g, const Value& y, at::ScalarType type) {
  Value one = scalar(g, 1, type);
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
  Value d = g.op("Sub", {u, scalar(g, 1, type)});
  Value ratio = g.op("Mul", {d, g.op("Div", {x, g.op("Log", {u})})});
  Value y = g.op("Where", {is_zero(g, d, type), x, ratio});
  y = g.op("Where", {is_zero(g, u, type), scalar(g, -1, type), y});
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
  Value rest = g.op("Where", {g.op("Less", {x, scalar(g, 0, type)}),
                              scalar(g, -std::numeric_limits<double>::infinity(), type),
                              g.op("Mul", {x, scalar(g, 0, type)})});
  return g.op("Where", {g.op("Greater", {x, scalar(g, 0, type)}), positive, rest});
}

// aten::sinc(Tensor self)  ⇒  Sin(πx) / (πx) with π in the dtype (as ATen), 1 at x == 0
Value sinc(GraphContext& g, const Value& x, at::ScalarType type) {
  Value product = g.op("Mul", {x, scalar(g, kPi, type)});
  Value ratio = g.op("Div", {g.op("Sin", {product}), product});
  return g.op("Where", {is_zero(g, x, type), scalar(g, 1, type), ratio});
}

// aten::special_spherical_bessel_j0(Tensor x)  ⇒  ATen's two branches: for |x| < 0.5 its
// Taylor polynomial 1 - x²/6 + x⁴/120 - ... (Horner in x², the same coefficients), else
// Sin(x) / x; 0 at ±inf
Value spherical_bessel_j0(GraphContext& g, const Value& x, at::ScalarType type) {
  Value x2 = g.op("Mul", {x, x});
  // Innermost first: 1/6227020800, -1/39916800, 1/362880, -1/5040, 1/120, -1/6, 1.
  const double coefficients[] = {-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0,
                                 1.0 / 120.0,       -1.0 / 6.0,     1.0};
  Value poly = scalar(g, 1.0 / 6227020800.0, type);
  for (double c : coefficients) {
    poly = g.op("Add", {scalar(g, c, type), g.op("Mul", {x2, poly})});
  }
  Value small = g.op("Less", {g.op("Abs", {x}), scalar(g, 0.5, type)});
  Value y = g.op("Where", {small, poly, g.op("Div", {g.op("Sin", {x}), x})});
  Value inf = g.op("Or", {is_pos_inf(g, x, type), is_neg_inf(g, x, type)});
  return g.op("Where", {inf, scalar(g, 0, type), y});
}

// aten::deg2rad(Tensor self)  ⇒  x · (π/180) in the dtype
Value deg2rad(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Mul", {x, scalar(g, kPi / 180.0, type)});
}

// aten::rad2deg(Tensor self)  ⇒  x · (180/π) in the dtype
Value rad2deg(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Mul", {x, scalar(g, 180.0 / kPi, type)});
}

// aten::exp2(Tensor self)  ⇒  Pow(2, x)
Value exp2(GraphContext& g, const Value& x, at::ScalarType type) {
  return g.op("Pow", {scalar(g, 2, type), x});
}

// aten::special_ndtr(Tensor self)  ⇒  (1 + Erf(x/√2)) / 2. PyTorch computes erfc(-x/√2) / 2:
// the same to an absolute error below an ulp of 1; in the far left tail (x < -5.5 in float)
// this gives 0 where PyTorch gives values below 2e-8.
Value ndtr(GraphContext& g, const Value& x, at::ScalarType type) {
  Value erf = g.op("Erf", {g.op("Mul", {x, scalar(g, 1.0 / std::sqrt(2.0), type)})});
  return g.op("Mul", {g.op("Add", {erf, scalar(g, 1, type)}), scalar(g, 0.5, type)});
}

// aten::angle(Tensor self) of a real tensor  ⇒  π where x < 0, else 0; NaN kept
Value angle(GraphContext& g, const Value& x, at::ScalarType type) {
  Value zero = scalar(g, 0, type);
  Value a = g.op("Where", {g.op("Less", {x, zero}), scalar(g, kPi, type), zero});
  return g.op("Where", {g.op("IsNaN", {x}), x, a});
}

// aten::signbit(Tensor self)  ⇒  x < 0 or x == -0 (floats), x < 0 (integers), false (bool)
Values signbit(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (type == at::kBool) return {g.op("And", {x, g.op("Not", {x})})};
  if (!at::isFloatingType(type)) return {g.op("Less", {x, scalar(g, 0, type)})};
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
  return {g.op("Where", {g.op("IsNaN", {x}), scalar(g, 0, type), sign})};
}

// aten::positive(Tensor self)  ⇒  the input (Identity)
Values identity(GraphContext& g, const Args& a) {
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
  Value zero = scalar(g, 0, type), one = scalar(g, 1, type), two = scalar(g, 2, type);
  Value ax = g.op("Abs", {x});
  Value regular =
      g.op("And", {g.op("Greater", {ax, zero}), g.op("Not", {is_pos_inf(g, ax, type)})});
  Value safe = g.op("Where", {regular, ax, one});
  Value log2 = g.op("Div", {g.op("Log", {safe}), scalar(g, kLn2, type)});
  Value e = g.op("Add", {g.op("Floor", {log2}), one});
  // x · 2^-e as x · 2^h · 2^(-e-h), h = floor(-e/2): each factor within range.
  Value neg_e = g.op("Neg", {e});
  Value h = g.op("Floor", {g.op("Div", {neg_e, two})});
  Value m = g.op("Mul", {g.op("Mul", {x, g.op("Pow", {two, h})}),
                         g.op("Pow", {two, g.op("Sub", {neg_e, h})})});
  // |m| in [0.5, 1): one step down or up where the estimate was one off.
  Value am = g.op("Abs", {m});
  Value too_big = g.op("Not", {g.op("Less", {am, one})});
  Value too_small = g.op("Less", {am, scalar(g, 0.5, type)});
  m = g.op("Where", {too_big, g.op("Mul", {m, scalar(g, 0.5, type)}), m});
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
  Value e = g.op("Where", {f.regular, f.e, scalar(g, 0, type)});
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
      g.op("Mul", {m, g.op("Sqrt", {g.op("Add", {scalar(g, 1, type), g.op("Mul", {r, r})})})});
  h = g.op("Where", {is_zero(g, m, type), m, h});
  Value sum = g.op("Add", {ax, ay});  // NaN iff either is NaN
  h = g.op("Where", {g.op("IsNaN", {sum}), sum, h});
  Value inf = g.op("Or", {is_pos_inf(g, ax, type), is_pos_inf(g, ay, type)});
  return g.op("Where", {inf, scalar(g, std::numeric_limits<double>::infinity(), type), h});
}

// a == b for floating a, b (false where either is NaN; a + b is NaN only then, as a + b = inf -
// inf needs a != b).
Value equal_floats(GraphContext& g, const Value& a, const Value& b) {
  Value differ = g.op("Or", {g.op("Less", {a, b}), g.op("Greater", {a, b})});
  return g.op("Not", {g.op("Or", {differ, g.op("IsNaN", {g.op("Add", {a, b})})})});
}

// x == v for a floating x (false for NaN).
Value x_equals(GraphContext& g, const Value& x, double v, at::ScalarType type) {
  return equal_floats(g, x, scalar(g, v, type));
}

// aten::logaddexp(Tensor self, Tensor other)  ⇒  max + log1p(Exp(-|a - b|)) (log1p_of);
// a + ln 2 where a == b (also ±inf, where a - b is NaN)
Value logaddexp(GraphContext& g, const Value& a, const Value& b, at::ScalarType type) {
  Value m = g.op("Max", {a, b});
  Value t = g.op("Exp", {g.op("Neg", {g.op("Abs", {g.op("Sub", {a, b})})})});
  Value general = g.op("Add", {m, log1p_of(g, t, type)});
  return g.op("Where", {equal_floats(g, a, b), g.op("Add", {a, scalar(g, kLn2, type)}), general});
}

// aten::logaddexp2(Tensor self, Tensor other)  ⇒  max + log1p(Pow(2, -|a - b|)) / ln 2;
// a + 1 where a == b
Value logaddexp2(GraphContext& g, const Value& a, const Value& b, at::ScalarType type) {
  Value m = g.op("Max", {a, b});
  Value t = g.op("Pow", {scalar(g, 2, type), g.op("Neg", {g.op("Abs", {g.op("Sub", {a, b})})})});
  Value general =
      g.op("Add", {m, g.op("Mul", {log1p_of(g, t, type), scalar(g, 1.0 / kLn2, type)})});
  return g.op("Where", {equal_floats(g, a, b), g.op("Add", {a, scalar(g, 1, type)}), general});
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
  Value r = g.op("Where", {is_zero(g, x, type), scalar(g, 0, type), g.op("Mul", {x, fy})});
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
  Value step = g.cast(g.op("Greater", {x, scalar(g, 0, type)}), type);
  return {g.op("Where", {is_zero(g, x, type), values, step})};
}

// aten::float_power(Tensor|Scalar self, Tensor|Scalar exponent)  ⇒  Pow in double (the result is
// double)
Values float_power(GraphContext& g, const Args& a) {
  return {g.op("Pow", {a.tensor_as(0, at::kDouble), a.tensor_as(1, at::kDouble)})};
}

// aten::ldexp(Tensor self, Tensor other)  ⇒  x · Pow(2, other) in the (floating) result dtype
Value ldexp(GraphContext& g, const Value& x, const Value& e, at::ScalarType type) {
  return g.op("Mul", {x, g.op("Pow", {scalar(g, 2, type), e})});
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
  Value zero = scalar(g, 0, type), two = scalar(g, 2, type);
  Frexp f = frexp_of(g, x, type);
  auto power = [&](const Value& exponent) {
    return g.op("Pow", {two, g.op("Max", {exponent, scalar(g, lowest, type)})});
  };
  Value up = power(g.op("Sub", {f.e, scalar(g, digits, type)}));
  Value at_power = x_equals(g, g.op("Abs", {f.m}), 0.5, type);
  Value down =
      g.op("Where", {at_power, power(g.op("Sub", {f.e, scalar(g, digits + 1, type)})), up});
  Value positive = g.op("Greater", {x, zero});
  // Away from zero: x > 0 toward a larger y, or x < 0 toward a smaller one.
  Value away = g.op("Not", {g.op("Xor", {positive, g.op("Greater", {y, x})})});
  Value ax = g.op("Abs", {x});
  Value stepped = g.op("Where", {away, g.op("Add", {ax, up}), g.op("Sub", {ax, down})});
  Value r = g.op("Where", {positive, stepped, g.op("Neg", {stepped})});
  Value tiny = scalar(g, std::pow(2.0, lowest), type);
  r = g.op("Where", {is_zero(g, x, type),
                     g.op("Where", {g.op("Greater", {y, zero}), tiny, g.op("Neg", {tiny})}), r});
  Value max = scalar(g, max_finite(type), type);
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
    if (value != 1.0) t1 = g.op("Mul", {scalar(g, value, type), t1});
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
  Value allowed =
      g.op("Add", {scalar(g, atol, work),
                   g.op("Abs", {g.op("Mul", {scalar(g, rtol, work), cast_if(g, y, type, work)})})});
  Value finite = g.op("Less", {actual, scalar(g, std::numeric_limits<double>::infinity(), work)});
  Value within = g.op("And", {finite, g.op("Not", {g.op("Greater", {actual, allowed})})});
  return {g.op("Or", {close, within})};
}

// a mod b for integers a >= 0, b > 0 at every opset (Mod only from 10): a - (a / b) · b, Div
// truncating.
Value nonnegative_mod(GraphContext& g, const Value& a, const Value& b) {
  return g.op("Sub", {a, g.op("Mul", {g.op("Div", {a, b}), b})});
}

// Whether any element of a non-negative integer tensor is positive (false for an empty one).
Value any_positive(GraphContext& g, const Value& a, at::ScalarType type) {
  // In int64: ReduceMax takes 8-bit integers only from opset 12, 16-bit ones never.
  Value flat = cast_if(g, g.op("Reshape", {a, g.constant_ints({-1})}), type, at::kLong);
  Value with_zero = g.op("Concat", {flat, g.constant_ints({0})}, {{"axis", int64_t{0}}});
  return g.op("Greater", {reduce(g, "ReduceMax", with_zero, {}, false), scalar(g, 0, at::kLong)});
}

// The greatest common divisor of integer tensors x and y (broadcast), non-negative, as ATen's
// calc_gcd: a = |x|, b = |y|; while a != 0: (a, b) = (b mod a, a); the result is b. A Loop while
// any element's a is non-zero, each step taking only the elements not finished (Euclid's steps
// are at most ~92 for int64).
Value gcd_of(GraphContext& g, const Value& x, const Value& y, at::ScalarType type) {
  Value zero = scalar(g, 0, type);
  // Both operands broadcast to the result's shape, so the loop's carried values keep it.
  Value shape = g.op("Shape", {g.op("Add", {x, y})});
  Value a0 = g.op("Abs", {g.op("Expand", {x, shape})});
  Value b0 = g.op("Abs", {g.op("Expand", {y, shape})});
  auto body = std::make_shared<ir::Graph>();
  body->name = g.fresh_name("gcd_body");
  {
    SubgraphScope scope(g, *body);
    Value iteration = g.fresh_name("iteration"), cond = g.fresh_name("cond");
    Value a = g.fresh_name("a"), b = g.fresh_name("b");
    body->inputs.push_back({iteration, {at::kLong, std::vector<int64_t>{}}});
    body->inputs.push_back({cond, {at::kBool, std::vector<int64_t>{}}});
    body->inputs.push_back({a, {type}});
    body->inputs.push_back({b, {type}});
    Value active = g.op("Greater", {a, zero});
    Value divisor = g.op("Where", {active, a, scalar(g, 1, type)});
    Value next_a = g.op("Where", {active, nonnegative_mod(g, b, divisor), a});
    Value next_b = g.op("Where", {active, a, b});
    body->outputs.push_back({any_positive(g, next_a, type), {at::kBool, std::vector<int64_t>{}}});
    body->outputs.push_back({next_a, {type}});
    body->outputs.push_back({next_b, {type}});
  }
  // No step when every a is 0 (or there are no elements).
  Values loop = g.op("Loop", {"", any_positive(g, a0, type), a0, b0}, {{"body", body}}, 2);
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
  Value zero = scalar(g, 0, type);
  Value none = g.op("Not", {g.op("Greater", {d, zero})});
  Value safe = g.op("Where", {none, scalar(g, 1, type), d});
  Value l = g.op("Abs", {g.op("Mul", {g.op("Div", {x, safe}), y})});
  return {g.op("Where", {none, zero, l})};
}

// ----- orthogonal polynomials ------------------------------------------------------------------
//
// ATen's kernels (aten/src/ATen/native/Math.h, chebyshev_polynomial_t_forward, ...) take n as the
// common dtype and truncate it to int64, then: 0 for n < 0; closed forms at the interval's ends
// (|x| == 1, or x == 0 / x == 1 for the shifted ones); for large n inside the interval a
// trigonometric form; else a three-term recurrence of n - 1 steps from p = 1 and q = P_1(x). The
// lowering computes the recurrence in a Loop for the elements that take it (as many steps as the
// largest such n needs), then selects each element's branch with Where, in ATen's order.

// x and n of a polynomial (inputs 0 and 1, either may be a Scalar) broadcast to one shape: x in
// the floating result dtype, n as that dtype truncated to int64 (as ATen), and n as that dtype.
struct PolyArgs {
  Value x, n, nf;
  at::ScalarType type;
};

PolyArgs poly_args(GraphContext& g, const Args& a) {
  const at::ScalarType type = float_type(g, a, 2);
  Value x = a.tensor_as(0, type), n = a.tensor_as(1, type);
  Value shape = g.op("Shape", {g.op("Add", {x, n})});
  x = g.op("Expand", {x, shape});
  Value n_long = g.cast(g.op("Expand", {n, shape}), at::kLong);
  return {x, n_long, g.cast(n_long, type), type};
}

// One step of a recurrence: r from p, q and the step's k (in the dtype).
using PolyStep =
    std::function<Value(GraphContext&, const Value& p, const Value& q, const Value& k)>;

// q after n - 1 steps j = 0, 1, ... of (p, q) ← (q, step(p, q, k_start + k_scale · j)) from
// p = 1, q = q1; elements where `direct` holds (or n < 2) take no step. A Loop of
// max(n - 1) steps over the stepping elements.
Value recurrence(GraphContext& g, const PolyArgs& pa, const Value& q1, const Value& direct,
                 double k_start, double k_scale, const PolyStep& step) {
  const at::ScalarType type = pa.type;
  Value zero = scalar(g, 0, at::kLong);
  Value steps = g.op("Sub", {pa.n, scalar(g, 1, at::kLong)});
  steps = g.op("Where",
               {g.op("Or", {direct, g.op("Less", {steps, scalar(g, 1, at::kLong)})}), zero, steps});
  Value flat =
      g.op("Concat", {g.op("Reshape", {steps, g.constant_ints({-1})}), g.constant_ints({0})},
           {{"axis", int64_t{0}}});
  Value trips = reduce(g, "ReduceMax", flat, {}, false);
  Value p0 = g.op("Expand", {scalar(g, 1, type), g.op("Shape", {q1})});
  auto body = std::make_shared<ir::Graph>();
  body->name = g.fresh_name("polynomial_body");
  {
    SubgraphScope scope(g, *body);
    Value j = g.fresh_name("step"), cond = g.fresh_name("cond");
    Value p = g.fresh_name("p"), q = g.fresh_name("q");
    body->inputs.push_back({j, {at::kLong, std::vector<int64_t>{}}});
    body->inputs.push_back({cond, {at::kBool, std::vector<int64_t>{}}});
    body->inputs.push_back({p, {type}});
    body->inputs.push_back({q, {type}});
    Value active = g.op("Less", {j, steps});
    Value k = g.op("Add", {g.op("Mul", {g.cast(j, type), scalar(g, k_scale, type)}),
                           scalar(g, k_start, type)});
    Value r = step(g, p, q, k);
    body->outputs.push_back({g.op("Identity", {cond}), {at::kBool, std::vector<int64_t>{}}});
    body->outputs.push_back({g.op("Where", {active, q, p}), {type}});
    body->outputs.push_back({g.op("Where", {active, r, q}), {type}});
  }
  Values loop = g.op("Loop", {trips, "", p0, q1}, {{"body", body}}, 2);
  return loop[1];
}

// n == v for the int64 n.
Value n_is(GraphContext& g, const PolyArgs& pa, int64_t v) {
  return is_zero(g, g.op("Sub", {pa.n, scalar(g, v, at::kLong)}), at::kLong);
}
Value n_above(GraphContext& g, const PolyArgs& pa, int64_t v) {
  return g.op("Greater", {pa.n, scalar(g, v, at::kLong)});
}
Value n_even(GraphContext& g, const PolyArgs& pa) {
  return is_zero(g, nonnegative_mod(g, pa.n, scalar(g, 2, at::kLong)), at::kLong);
}
// ATen's integer results (n + 1, n + n + 1) in the dtype, with a sign where `negative`.
Value n_plus(GraphContext& g, const PolyArgs& pa, int64_t twice, int64_t plus) {
  Value v =
      g.op("Add", {g.op("Mul", {pa.n, scalar(g, twice, at::kLong)}), scalar(g, plus, at::kLong)});
  return g.cast(v, pa.type);
}
Value signed_by(GraphContext& g, const Value& positive, const Value& v) {
  return g.op("Where", {positive, v, g.op("Neg", {v})});
}

// The value at n == 0 (1), n == 1 (q1), n < 0 (0) around the recurrence `rec` and the special
// cases already applied to it by the caller (`special`, their union: the loop skips them).
Value poly_frame(GraphContext& g, const PolyArgs& pa, const Value& q1, const Value& rec) {
  Value r = g.op("Where", {n_is(g, pa, 1), q1, rec});
  r = g.op("Where", {n_is(g, pa, 0), scalar(g, 1, pa.type), r});
  return r;
}

Value chebyshev_step(GraphContext& g, const Value& two_y, const Value& p, const Value& q) {
  return g.op("Sub", {g.op("Mul", {two_y, q}), p});
}

// Chebyshev polynomials of the four kinds, plain (y = x, ends at |x| == 1) or shifted
// (y = 2x - 1, ends at x == 1 and x == 0). `kind` is 'T', 'U', 'V' or 'W'.
Value chebyshev(GraphContext& g, const PolyArgs& pa, char kind, bool shifted) {
  const at::ScalarType type = pa.type;
  const Value& x = pa.x;
  auto c = [&](double v) { return scalar(g, v, type); };
  Value y = shifted ? g.op("Sub", {g.op("Add", {x, x}), c(1)}) : x;
  Value two_y = g.op("Add", {y, y});
  Value q1 = kind == 'T'   ? y
             : kind == 'U' ? two_y
                           : g.op(kind == 'V' ? "Sub" : "Add", {two_y, c(1)});
  Value even = n_even(g, pa);
  Value positive_x = g.op("Greater", {x, c(0)});
  // The trigonometric form for large n inside the interval.
  const int64_t threshold = shifted ? (kind == 'W' ? 4 : 6) : (kind == 'T' ? 6 : 8);
  Value trig = g.op("And", {n_above(g, pa, threshold), g.op("Less", {g.op("Abs", {y}), c(1)})});
  Value angle = g.op("Acos", {y});
  Value trig_value;
  switch (kind) {
    case 'T':
      trig_value = g.op("Cos", {g.op("Mul", {pa.nf, angle})});
      break;
    case 'U': {
      Value n1 = g.op("Add", {pa.nf, c(1)});
      Value s = g.op("Sin", {angle});
      Value main = g.op("Div", {g.op("Sin", {g.op("Mul", {n1, angle})}), s});
      Value alt = g.op("Div", {g.op("Mul", {n1, g.op("Cos", {g.op("Mul", {n1, angle})})}), y});
      trig_value = g.op("Where", {is_zero(g, s, type), alt, main});
      break;
    }
    case 'V': {
      Value half = g.op("Div", {angle, c(2)});
      Value main = g.op("Div", {g.op("Cos", {g.op("Mul", {g.op("Add", {pa.nf, c(0.5)}), angle})}),
                                g.op("Cos", {half})});
      Value alt = signed_by(g, even, n_plus(g, pa, 2, 1));
      trig_value = g.op("Where", {x_equals(g, g.op("Sin", {half}), 1, type), alt, main});
      break;
    }
    default: {  // 'W'
      Value half = g.op("Div", {angle, c(2)});
      Value main = g.op("Div", {g.op("Sin", {g.op("Mul", {g.op("Add", {pa.nf, c(0.5)}), angle})}),
                                g.op("Sin", {half})});
      Value alt = g.op("Where", {even, c(1), c(-1)});
      if (!shifted) alt = g.op("Where", {positive_x, n_plus(g, pa, 2, 1), alt});
      trig_value = g.op("Where", {x_equals(g, g.op("Cos", {half}), 1, type), alt, main});
      break;
    }
  }
  // The closed forms at the ends: `upper` (x == 1 resp. x == 1 shifted) and `lower` (x == -1
  // resp. x == 0 shifted). Unshifted T/U take the upper form also at -1 for even n.
  Value upper_value, lower_value;
  switch (kind) {
    case 'T':
      upper_value = c(1);
      lower_value = g.op("Where", {even, c(1), c(-1)});
      break;
    case 'U':
      upper_value = n_plus(g, pa, 1, 1);
      lower_value = signed_by(g, even, n_plus(g, pa, 1, 1));
      break;
    case 'V':
      upper_value = c(1);
      lower_value = signed_by(g, even, n_plus(g, pa, 2, 1));
      break;
    default:
      upper_value = n_plus(g, pa, 2, 1);
      lower_value = g.op("Where", {even, c(1), c(-1)});
      break;
  }
  Value upper, lower;
  if (shifted) {
    upper = x_equals(g, x, 1, type);
    lower = x_equals(g, x, 0, type);
  } else {
    Value end = x_equals(g, g.op("Abs", {x}), 1, type);
    upper = g.op("And", {end, positive_x});
    lower = g.op("And", {end, g.op("Not", {positive_x})});
  }
  Value direct = g.op("Or", {g.op("Or", {upper, lower}), trig});
  Value rec = recurrence(g, pa, q1, direct, 2, 1,
                         [two_y](GraphContext& b, const Value& p, const Value& q, const Value&) {
                           return chebyshev_step(b, two_y, p, q);
                         });
  Value r = poly_frame(g, pa, q1, rec);
  r = g.op("Where", {trig, trig_value, r});
  r = g.op("Where", {lower, lower_value, r});
  r = g.op("Where", {upper, upper_value, r});
  return g.op("Where", {g.op("Less", {pa.n, scalar(g, 0, at::kLong)}), scalar(g, 0, type), r});
}

// aten::special_chebyshev_polynomial_{t,u,v,w}(Tensor|Scalar x, Tensor|Scalar n) and
// aten::special_shifted_chebyshev_polynomial_{t,u,v,w}  ⇒  chebyshev (Loop recurrence, closed
// forms at the ends, trigonometric form for large n), as ATen
template <char kind, bool shifted>
Values chebyshev_polynomial(GraphContext& g, const Args& a) {
  return {chebyshev(g, poly_args(g, a), kind, shifted)};
}

// The polynomials without closed forms at the ends but Legendre's: `end` (or none) and its value.
Value simple_polynomial(GraphContext& g, const PolyArgs& pa, const Value& q1,
                        std::optional<std::pair<Value, Value>> end, double k_start, double k_scale,
                        const PolyStep& step) {
  Value direct = end ? end->first : g.op("Less", {pa.n, scalar(g, 0, at::kLong)});
  Value r = poly_frame(g, pa, q1, recurrence(g, pa, q1, direct, k_start, k_scale, step));
  if (end) r = g.op("Where", {end->first, end->second, r});
  return g.op("Where", {g.op("Less", {pa.n, scalar(g, 0, at::kLong)}), scalar(g, 0, pa.type), r});
}

// aten::special_hermite_polynomial_h(x, n)  ⇒  r = 2x·q - k·p, k = 2, 4, ..., from q = 2x
Values hermite_polynomial_h(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  Value two_x = g.op("Add", {pa.x, pa.x});
  return {
      simple_polynomial(g, pa, two_x, std::nullopt, 2, 2,
                        [two_x](GraphContext& b, const Value& p, const Value& q, const Value& k) {
                          return b.op("Sub", {b.op("Mul", {two_x, q}), b.op("Mul", {k, p})});
                        })};
}

// aten::special_hermite_polynomial_he(x, n)  ⇒  r = x·q - k·p, k = 1, 2, ..., from q = x
Values hermite_polynomial_he(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  Value x = pa.x;
  return {simple_polynomial(g, pa, x, std::nullopt, 1, 1,
                            [x](GraphContext& b, const Value& p, const Value& q, const Value& k) {
                              return b.op("Sub", {b.op("Mul", {x, q}), b.op("Mul", {k, p})});
                            })};
}

// aten::special_laguerre_polynomial_l(x, n)  ⇒  1 at x == 0; r = ((2k + (1 - x))·q - k·p) / (k +
// 1), k = 1, 2, ..., from q = 1 - x
Values laguerre_polynomial_l(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  const at::ScalarType type = pa.type;
  Value one_minus_x = g.op("Sub", {scalar(g, 1, type), pa.x});
  Value at_zero = x_equals(g, g.op("Abs", {pa.x}), 0, type);
  return {simple_polynomial(
      g, pa, one_minus_x, std::make_pair(at_zero, scalar(g, 1, type)), 1, 1,
      [one_minus_x, type](GraphContext& b, const Value& p, const Value& q, const Value& k) {
        Value factor = b.op("Add", {b.op("Add", {k, k}), one_minus_x});
        Value num = b.op("Sub", {b.op("Mul", {factor, q}), b.op("Mul", {k, p})});
        return b.op("Div", {num, b.op("Add", {k, b.constant_scalar(1, type)})});
      })};
}

// aten::special_legendre_polynomial_p(x, n)  ⇒  ±1 at |x| == 1 (-1 for x = -1 and odd n);
// r = ((2k + 1)·x·q - k·p) / (k + 1), k = 1, 2, ..., from q = x
Values legendre_polynomial_p(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  const at::ScalarType type = pa.type;
  Value x = pa.x;
  Value end = x_equals(g, g.op("Abs", {x}), 1, type);
  Value plus = g.op("Or", {g.op("Greater", {x, scalar(g, 0, type)}), n_even(g, pa)});
  Value end_value = g.op("Where", {plus, scalar(g, 1, type), scalar(g, -1, type)});
  return {simple_polynomial(
      g, pa, x, std::make_pair(end, end_value), 1, 1,
      [x, type](GraphContext& b, const Value& p, const Value& q, const Value& k) {
        Value one = b.constant_scalar(1, type);
        Value factor = b.op("Add", {b.op("Add", {k, k}), one});
        Value num = b.op("Sub", {b.op("Mul", {b.op("Mul", {factor, x}), q}), b.op("Mul", {k, p})});
        return b.op("Div", {num, b.op("Add", {k, one})});
      })};
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
  r.add("aten::positive", from(9), identity);
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
  r.add("aten::special_chebyshev_polynomial_t", from(9), chebyshev_polynomial<'T', false>);
  r.add("aten::special_chebyshev_polynomial_u", from(9), chebyshev_polynomial<'U', false>);
  r.add("aten::special_chebyshev_polynomial_v", from(9), chebyshev_polynomial<'V', false>);
  r.add("aten::special_chebyshev_polynomial_w", from(9), chebyshev_polynomial<'W', false>);
  r.add("aten::special_shifted_chebyshev_polynomial_t", from(9), chebyshev_polynomial<'T', true>);
  r.add("aten::special_shifted_chebyshev_polynomial_u", from(9), chebyshev_polynomial<'U', true>);
  r.add("aten::special_shifted_chebyshev_polynomial_v", from(9), chebyshev_polynomial<'V', true>);
  r.add("aten::special_shifted_chebyshev_polynomial_w", from(9), chebyshev_polynomial<'W', true>);
  r.add("aten::special_hermite_polynomial_h", from(9), hermite_polynomial_h);
  r.add("aten::special_hermite_polynomial_he", from(9), hermite_polynomial_he);
  r.add("aten::special_laguerre_polynomial_l", from(9), laguerre_polynomial_l);
  r.add("aten::special_legendre_polynomial_p", from(9), legendre_polynomial_p);
}

}  // namespace torchonnx::symbolic::ops
