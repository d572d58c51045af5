// Numeric tests of the math converters (src/symbolic/ops/math.cpp): hyperbolic functions, trunc
// and frac, hypot, logaddexp, xlogy, copysign, heaviside, ... Each op is exported at every opset,
// run in ONNX Runtime and compared with libtorch on float32, on int64/bool where the op takes them,
// and on the edge values the op defines (0, -0, ±inf, NaN, overflow and underflow).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Math : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// Relative error only: for results far below 1, where the default tolerance's absolute floor
// would accept a result that lost all its digits (log1p of a tiny argument computed as Log(1+y)).
const Tolerance kRelative{/*rtol=*/1e-5, /*atol=*/0, /*atol_scale=*/0};
// Bit-exact results (nextafter: one unit in the last place is the whole answer).
const Tolerance kExact{/*rtol=*/0, /*atol=*/0, /*atol_scale=*/0};

using UnaryFn = std::function<at::Tensor(const at::Tensor&)>;
using BinaryFn = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

std::string describe(const at::Tensor& t) {
  std::string sizes;
  for (int64_t s : t.sizes()) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
  return std::string(c10::toString(t.scalar_type())) + "[" + sizes + "]";
}

void expect_unary(const std::string& op, UnaryFn fn, const at::Tensor& x, Tolerance tol = {}) {
  SCOPED_TRACE(op + " of " + describe(x));
  expect_op_matches(
      op, [fn](const Inputs& in) { return fn(arg(in, 0)); }, {x}, kMinOpset, highest_opset(), {},
      tol);
}

void expect_binary(const std::string& op, BinaryFn fn, const at::Tensor& x, const at::Tensor& y,
                   Tolerance tol = {}) {
  SCOPED_TRACE(op + " of " + describe(x) + ", " + describe(y));
  expect_op_matches(
      op, [fn](const Inputs& in) { return fn(arg(in, 0), arg(in, 1)); }, {x, y}, kMinOpset,
      highest_opset(), {}, tol);
}

// ----- hyperbolic functions ---------------------------------------------------------------------

TEST_F(Math, HyperbolicOnFloat) {
  at::Tensor any = at::randn({3, 4}) * 3;
  at::Tensor edges = floats({0, -0.0f, 1e-3f, -2.5f, 10, 88, -88, kInf, -kInf, kNaN});
  for (const at::Tensor& x : {any, edges, at::scalar_tensor(-1.25)}) {
    expect_unary("aten::sinh", at::sinh, x);
    expect_unary("aten::cosh", at::cosh, x);
    expect_unary("aten::asinh", at::asinh, x);
  }
  // acosh: NaN below 1, +inf at +inf; atanh: ±inf at ±1, NaN beyond.
  expect_unary("aten::acosh", at::acosh, at::rand({2, 3, 4}) * 20 + 1);
  expect_unary("aten::acosh", at::acosh, floats({1, 1.5f, 0.5f, -2, 1e30f, kInf, kNaN}));
  expect_unary("aten::atanh", at::atanh, at::rand({2, 5}) * 1.98 - 0.99);
  expect_unary("aten::atanh", at::atanh, floats({0, -0.5f, 1, -1, 1.5f, -kInf, kNaN}));
  expect_unary("aten::atanh", at::atanh, at::scalar_tensor(0.25));
}

TEST_F(Math, HyperbolicPromotesInt64AndBoolToFloat) {
  at::Tensor x = longs({-3, 0, 2, 5});
  expect_unary("aten::sinh", at::sinh, x);
  expect_unary("aten::cosh", at::cosh, x);
  expect_unary("aten::asinh", at::asinh, x);
  expect_unary("aten::acosh", at::acosh, longs({1, 2, 10, 0}));
  expect_unary("aten::atanh", at::atanh, longs({-1, 0, 1}));
  expect_unary("aten::sinh", at::sinh, bools({1, 0}));
}

TEST_F(Math, InPlaceHyperbolicUsesTheOutOfPlaceConverter) {
  expect_op_matches("aten::sinh",
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) * 2;
                      y.sinh_();
                      return y;
                    },
                    {at::randn({2, 3})});
}

// ----- trunc / fix / frac -----------------------------------------------------------------------

const at::Tensor& rounding_edges() {
  static const at::Tensor x = floats({0.5f, -0.5f, 2.7f, -2.7f, -0.0f, 3, -3, 8388607.5f, -1e30f,
                                      0.99999994f, -0.99999994f, kInf, -kInf, kNaN});
  return x;
}

TEST_F(Math, TruncRoundsTowardZero) {
  for (const at::Tensor& x : {rounding_edges(), rounding_edges().to(at::kDouble),
                              at::randn({2, 3, 4}) * 10, at::scalar_tensor(-6.5)}) {
    expect_unary("aten::trunc", at::trunc, x);
  }
}

TEST_F(Math, TruncKeepsInt64) {
  expect_unary("aten::trunc", at::trunc, longs({-5, 0, 7}));
}

TEST_F(Math, FixIsTrunc) {
  // The script compiler and the tracer record torch.fix as aten::trunc; a graph written as IR (or
  // saved by another tool) may still hold aten::fix.
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %y : Tensor = aten::fix(%x)
  return (%y))IR");
  expect_script_matches("aten::fix", m, {rounding_edges()});
}

TEST_F(Math, Frac) {
  for (const at::Tensor& x : {rounding_edges(), at::randn({3, 4}) * 10, at::scalar_tensor(-2.25)}) {
    expect_unary("aten::frac", at::frac, x);
  }
}

// ----- unary functions ---------------------------------------------------------------------------

TEST_F(Math, Expm1) {
  expect_unary("aten::expm1", at::expm1, at::randn({3, 4}) * 3);
  expect_unary("aten::expm1", at::expm1,
               floats({0, -0.0f, 88, 100, -100, -20, kInf, -kInf, kNaN, 1, -1}));
  expect_unary("aten::expm1", at::expm1, longs({-3, 0, 2}));
  expect_unary("aten::expm1", at::expm1, at::scalar_tensor(0.5));
}

TEST_F(Math, Expm1OfSmallArgumentsKeepsItsDigits) {
  // Exp(x) - 1 is 0 or off by its rounding for |x| near an ulp of 1.
  expect_unary("aten::expm1", at::expm1,
               floats({1e-10f, -1e-10f, 3e-8f, -3e-8f, 1e-5f, -1e-5f, 1e-3f, -2e-4f}), kRelative);
}

TEST_F(Math, Entr) {
  expect_unary("aten::special_entr", at::special_entr, at::rand({3, 4}) * 5);
  expect_unary("aten::special_entr", at::special_entr, floats({0, -0.0f, -1, 1, 2, kInf, kNaN}));
  expect_unary("aten::special_entr", at::special_entr, longs({0, 1, 2, -3}));
  expect_unary("aten::special_entr", at::special_entr, at::scalar_tensor(0.3));
}

TEST_F(Math, Sinc) {
  expect_unary("aten::sinc", at::sinc, at::randn({3, 4}) * 3);
  expect_unary("aten::sinc", at::sinc, floats({0, -0.0f, 0.5f, -1.5f, 1e-3f, 100.3f, kInf, kNaN}));
  expect_unary("aten::sinc", at::sinc, longs({0, 1, -2}));
  expect_unary("aten::sinc", at::sinc, at::scalar_tensor(0.0));
}

TEST_F(Math, SphericalBesselJ0) {
  UnaryFn j0 = [](const at::Tensor& x) { return at::special_spherical_bessel_j0(x); };
  expect_unary("aten::special_spherical_bessel_j0", j0, at::randn({3, 4}) * 5);
  // Both sides of the Taylor branch (|x| < 0.5), ±inf (0) and NaN.
  expect_unary(
      "aten::special_spherical_bessel_j0", j0,
      floats({0, -0.0f, 0.1f, -0.4999f, 0.5f, -0.5001f, 3.14159265f, 1e4f, kInf, -kInf, kNaN}));
  expect_unary("aten::special_spherical_bessel_j0", j0, at::rand({50}) - 0.5, kRelative);
  expect_unary("aten::special_spherical_bessel_j0", j0, longs({0, 1, -4}));
  expect_unary("aten::special_spherical_bessel_j0", j0, at::scalar_tensor(0.25));
}

TEST_F(Math, DegreesAndRadians) {
  for (const at::Tensor& x : {at::randn({2, 3}) * 200, floats({0, -180, 90, kInf, kNaN}),
                              longs({-180, 0, 45, 360}), at::scalar_tensor(30.0)}) {
    expect_unary("aten::deg2rad", at::deg2rad, x);
    expect_unary("aten::rad2deg", at::rad2deg, x);
  }
}

TEST_F(Math, Exp2) {
  expect_unary("aten::exp2", at::exp2, at::randn({3, 4}) * 5);
  expect_unary("aten::exp2", at::exp2, floats({0, -1, 10, 127, 128, -149, kInf, -kInf, kNaN}));
  expect_unary("aten::exp2", at::exp2, longs({-2, 0, 3, 30}));
  expect_unary("aten::exp2", at::exp2, bools({1, 0}));
  expect_unary("aten::exp2", at::exp2, at::scalar_tensor(0.5));
}

TEST_F(Math, Ndtr) {
  expect_unary("aten::special_ndtr", at::special_ndtr, at::randn({3, 4}) * 2);
  expect_unary("aten::special_ndtr", at::special_ndtr,
               floats({0, -1, 1, 5, -5, kInf, -kInf, kNaN}));
  expect_unary("aten::special_ndtr", at::special_ndtr, longs({-2, 0, 1}));
  expect_unary("aten::special_ndtr", at::special_ndtr, at::scalar_tensor(0.7));
}

TEST_F(Math, AngleOfRealTensors) {
  expect_unary("aten::angle", at::angle, at::randn({3, 4}));
  expect_unary("aten::angle", at::angle, floats({0, -0.0f, -2, 3, kInf, -kInf, kNaN}));
  expect_unary("aten::angle", at::angle, longs({-2, 0, 3}));
}

TEST_F(Math, Signbit) {
  expect_unary("aten::signbit", at::signbit, floats({0, -0.0f, -2, 3, kInf, -kInf, kNaN, -1e-40f}));
  expect_unary("aten::signbit", at::signbit, at::randn({2, 3, 2}).to(at::kDouble));
  expect_unary("aten::signbit", at::signbit, longs({-2, 0, 3}));
  expect_unary("aten::signbit", at::signbit, bools({1, 0}));
  expect_unary("aten::signbit", at::signbit, at::scalar_tensor(-0.0));
}

TEST_F(Math, Frexp) {
  auto frexp = [](const Inputs& in) {
    auto [m, e] = at::frexp(arg(in, 0));
    return c10::ivalue::Tuple::create(m, e);
  };
  // Powers of two and their neighbours (where log2 rounds across an integer), subnormals, the
  // largest float, zeros, ±inf and NaN.
  at::Tensor edges =
      floats({1, 0.5f, 2, 0.99999994f, 1.0000001f, 3.9999998f, 4, -8, 0.75f, 1.5f, 1e-40f, -3e-45f,
              1.17549435e-38f, 3.4e38f, 0, -0.0f, kInf, -kInf, kNaN});
  for (const at::Tensor& x :
       {edges, edges.to(at::kDouble), at::randn({3, 4}) * 1000,
        at::exp2(at::arange(-140, 128, 0.37, at::kFloat)), at::scalar_tensor(-6.0)}) {
    SCOPED_TRACE(describe(x));
    expect_op_matches("aten::frexp", frexp, {x});
  }
  expect_op_matches("aten::frexp", frexp,
                    {at::tensor({1e-310, 4.9e-324, 1.7e308, 0.1}, at::kDouble)});
}

TEST_F(Math, IsPosInfIsNegInf) {
  for (const at::Tensor& x : {floats({0, -2, kInf, -kInf, kNaN, 3.4e38f, -3.4e38f}),
                              floats({kInf, -kInf}).to(at::kDouble), longs({-2, 0, 3}),
                              bools({1, 0}), at::scalar_tensor(-kInf)}) {
    expect_unary("aten::isposinf", at::isposinf, x);
    expect_unary("aten::isneginf", at::isneginf, x);
  }
}

TEST_F(Math, SgnOfRealTensorsIsSign) {
  expect_unary("aten::sgn", at::sgn, floats({-2, -0.0f, 0, 3, kInf, -kInf, kNaN}));
  expect_unary("aten::sgn", at::sgn, longs({-2, 0, 3}));
  expect_unary("aten::sgn", at::sgn, bools({1, 0}));
}

TEST_F(Math, SignIsZeroForNaN) {
  expect_unary("aten::sign", at::sign, floats({-2, -0.0f, 0, 3, kInf, -kInf, kNaN}));
  expect_unary("aten::sign", at::sign, longs({-2, 0, 3}));
}

TEST_F(Math, Log1pOfSmallArgumentsKeepsItsDigits) {
  // Log(1 + x) is 0 or off by its rounding for |x| near an ulp of 1.
  expect_unary("aten::log1p", at::log1p,
               floats({1e-10f, -1e-10f, 3e-8f, -3e-8f, 1e-5f, -1e-5f, 1e-3f, -2e-4f}), kRelative);
  expect_unary("aten::log1p", at::log1p, floats({0, -0.0f, -1, 1e30f, kInf, kNaN, 2, -0.5f}));
  expect_unary("aten::log1p", at::log1p, longs({0, 1, 7}));
}

TEST_F(Math, PositiveIsTheInput) {
  for (const at::Tensor& x : {at::randn({2, 3}), longs({-2, 0, 3})}) {
    expect_unary("aten::positive", at::positive, x);
  }
}

TEST_F(Math, InPlaceFormsUseTheOutOfPlaceConverters) {
  // x.op_(...) on a copy of the input: RemoveInplaceOps makes each the out-of-place op.
  using Step = std::function<void(at::Tensor&, const at::Tensor&)>;
  for (const auto& [op, step] : std::vector<std::pair<std::string, Step>>{
           {"aten::trunc", [](at::Tensor&x, const at::Tensor&) { x.trunc_(); }},
           {"aten::frac", [](at::Tensor&x, const at::Tensor&) { x.frac_(); }},
           {"aten::hypot", [](at::Tensor&x, const at::Tensor&y) { x.hypot_(y); }},
           {"aten::copysign", [](at::Tensor&x, const at::Tensor&y) { x.copysign_(y); }},
           {"aten::xlogy", [](at::Tensor&x, const at::Tensor&y) { x.xlogy_(y); }},
           {"aten::heaviside", [](at::Tensor&x, const at::Tensor&y) { x.heaviside_(y); }},
           {"aten::addcdiv", [](at::Tensor&x, const at::Tensor&y) { x.addcdiv_(y, y + 3); }},
       }) {
    SCOPED_TRACE(op);
    Step fn = step;
    expect_op_matches(op,
                      [fn](const Inputs& in) {
                        at::Tensor x = arg(in, 0) * 1;
                        fn(x, arg(in, 1));
                        return x;
                      },
                      {at::randn({2, 3}) * 3, at::rand({3}) * 2});
  }
}

// ----- binary functions --------------------------------------------------------------------------

TEST_F(Math, Hypot) {
  expect_binary("aten::hypot", at::hypot, at::randn({2, 3}) * 3, at::randn({3}) * 3);
  expect_binary("aten::hypot", at::hypot, floats({3, -3, 0, -0.0f, kInf, kNaN, kNaN, -kInf, 1, 5}),
                floats({4, -4, 0, 0, kNaN, kInf, 1, 2, kNaN, -kInf}));
  expect_binary("aten::hypot", at::hypot, at::randn({4}).to(at::kDouble),
                at::randn({4}).to(at::kDouble));
  expect_binary("aten::hypot", at::hypot, at::scalar_tensor(1.5), at::scalar_tensor(-2.0));
}

TEST_F(Math, HypotOfLargeAndTinyValuesNeitherOverflowsNorUnderflows) {
  // x² overflows float above 1.8e19 and underflows below 1e-23.
  expect_binary("aten::hypot", at::hypot, floats({3e30f, 2e38f, 1e20f, 3e-30f, 1e-40f, 1e-30f}),
                floats({4e30f, 2e38f, 1, 4e-30f, 1e-40f, 0}), kRelative);
}

TEST_F(Math, Logaddexp) {
  for (const auto& [op, fn] : std::vector<std::pair<std::string, BinaryFn>>{
           {"aten::logaddexp", at::logaddexp}, {"aten::logaddexp2", at::logaddexp2}}) {
    expect_binary(op, fn, at::randn({2, 3}) * 5, at::randn({2, 1}) * 5);
    expect_binary(op, fn, floats({kInf, -kInf, kInf, -kInf, kNaN, 1, 100, 0, -1e30f, 88}),
                  floats({kInf, -kInf, -kInf, 2, 1, kNaN, 100, -0.0f, 1e30f, 89}));
    expect_binary(op, fn, at::randn({5}).to(at::kDouble), at::randn({5}).to(at::kDouble));
    expect_binary(op, fn, at::scalar_tensor(0.5), at::scalar_tensor(-1.0));
  }
}

TEST_F(Math, LogaddexpOfDistantValuesKeepsTheSmallTerm) {
  // log1p(t) for t = exp(-|a-b|) below an ulp of 1: Log(1 + t) would give exactly max(a, b).
  // libtorch 1.13's kernel computed log(1 + t) itself (2.x: log1p), so only 2.x is the reference.
  if (TORCH_VERSION_MAJOR < 2) {
    GTEST_SKIP() << "libtorch " TORCH_VERSION
                    " computes logaddexp as m + log(1 + t), losing t "
                    "below an ulp of 1 (2.x uses log1p); the Debian 13 build tests it";
  }
  at::Tensor a = floats({0, -20, 0, -1, 1e-3f, -30});
  at::Tensor b = floats({-20, 0, -40, -25, -30, -0.5f});
  expect_binary("aten::logaddexp", at::logaddexp, a, b, kRelative);
  expect_binary("aten::logaddexp2", at::logaddexp2, a, b, kRelative);
}

TEST_F(Math, Copysign) {
  BinaryFn copysign = [](const at::Tensor& a, const at::Tensor& b) { return at::copysign(a, b); };
  expect_binary("aten::copysign", copysign, at::randn({2, 3}), at::randn({3}));
  expect_binary("aten::copysign", copysign, floats({1, 2, 3, 4, 5, 6, kNaN, kInf, -0.0f}),
                floats({-0.0f, 0, -kInf, kInf, -2, 2, -1, -1, 1}));
  expect_binary("aten::copysign", copysign, longs({1, -2, 3}), longs({-1, 0, 5}));
  expect_op_matches("aten::copysign",
                    [](const Inputs& in) { return at::copysign(arg(in, 0), -0.0); },
                    {at::randn({2, 3})});
  expect_op_matches("aten::copysign", [](const Inputs& in) { return at::copysign(arg(in, 0), 2); },
                    {longs({-3, 0, 4})});
}

TEST_F(Math, Heaviside) {
  expect_binary("aten::heaviside", at::heaviside, floats({1, 0, -0.0f, -1, kNaN, kInf, -kInf}),
                floats({0.5f}));
  expect_binary("aten::heaviside", at::heaviside, at::randn({2, 3}).round(), at::randn({2, 3}));
  expect_binary("aten::heaviside", at::heaviside, longs({-2, 0, 3, 0}), longs({7, -7, 7, 9}));
  expect_binary("aten::heaviside", at::heaviside, bools({1, 0, 0}), bools({0, 1, 0}));
  expect_binary("aten::heaviside", at::heaviside, at::scalar_tensor(0.0), at::scalar_tensor(0.25));
}

TEST_F(Math, Xlogy) {
  at::Tensor x = floats({0, 0, 1, kNaN, 2, 0, -0.0f, 3, 2, 0});
  at::Tensor y = floats({kNaN, 0, 0, 1, kInf, kInf, 5, -1, 0.5f, -1});
  BinaryFn xlogy = [](const at::Tensor& a, const at::Tensor& b) { return at::xlogy(a, b); };
  expect_binary("aten::xlogy", xlogy, x, y);
  expect_binary("aten::xlogy", xlogy, at::randn({2, 3}), at::rand({3}) * 4);
  expect_binary("aten::xlogy", xlogy, longs({0, 2, -3}), longs({0, 5, 7}));
  expect_op_matches("aten::xlogy", [](const Inputs& in) { return at::xlogy(2, arg(in, 0)); },
                    {floats({3, 0, kNaN})});
  expect_op_matches("aten::xlogy", [](const Inputs& in) { return at::xlogy(arg(in, 0), 2.5); },
                    {longs({0, 3, -1})});
}

TEST_F(Math, Xlog1py) {
  BinaryFn xlog1py = [](const at::Tensor& a, const at::Tensor& b) {
    return at::special_xlog1py(a, b);
  };
  expect_binary("aten::special_xlog1py", xlog1py, floats({0, 0, 1, kNaN, 2, 0, 3, 2, 1, 0}),
                floats({kNaN, -1, -1, 1, kInf, kInf, -2, 0.5f, -kInf, 0}));
  expect_binary("aten::special_xlog1py", xlog1py, at::randn({2, 3}), at::rand({3}) * 4);
  expect_binary("aten::special_xlog1py", xlog1py, longs({0, 2, -3}), longs({-1, 5, 7}));
  // log1p of arguments near an ulp of 1.
  expect_binary("aten::special_xlog1py", xlog1py, floats({1, 2, -1, 1, 3}),
                floats({1e-10f, -3e-8f, 1e-5f, -2e-4f, 1e-3f}), kRelative);
}

TEST_F(Math, FmaxFminIgnoreNaN) {
  for (const auto& [op, fn] : std::vector<std::pair<std::string, BinaryFn>>{
           {"aten::fmax", at::fmax}, {"aten::fmin", at::fmin}}) {
    expect_binary(op, fn, floats({1, kNaN, kNaN, 3, -kInf, -0.0f}),
                  floats({kNaN, 2, kNaN, -4, 5, 0}));
    expect_binary(op, fn, at::randn({2, 3}), at::randn({3}));
    expect_binary(op, fn, longs({-5, 0, 7}), longs({3, 0, -9}));
    expect_binary(op, fn, longs({-5, 0, 7}), floats({kNaN, 1, 8}));
    expect_binary(op, fn, bools({1, 0, 0}), bools({0, 1, 0}));
  }
}

TEST_F(Math, Ldexp) {
  BinaryFn ldexp = [](const at::Tensor& a, const at::Tensor& b) { return at::ldexp(a, b); };
  expect_binary("aten::ldexp", ldexp, at::randn({2, 3}), longs({-2, 0, 5}));
  expect_binary("aten::ldexp", ldexp, floats({1, 3, -1, 0, kInf, kNaN}),
                longs({200, -200, 3, 500, 1, 1}));
  expect_binary("aten::ldexp", ldexp, longs({1, 3, -5}), longs({2, 3, 0}));
  expect_binary("aten::ldexp", ldexp, at::randn({3}), at::randn({3}));
}

TEST_F(Math, Nextafter) {
  BinaryFn nextafter = [](const at::Tensor& a, const at::Tensor& b) { return at::nextafter(a, b); };
  // Powers of two both ways (the unit halves below them), zeros, the smallest and largest values,
  // subnormals, ±inf, NaN, x == y.
  at::Tensor x = floats({1, 1, -1, -1, 0, 0, -0.0f, 1e-45f, 1.17549435e-38f, 3.4028235e38f,
                         -3.4028235e38f, kInf, -kInf, 2.5f, kNaN, 1, 0.75f, 1e-40f});
  at::Tensor y = floats({2, 0, -2, 0, 1, -1, 0, 0, 0, kInf, 0, 0, 0, 2.5f, 1, kNaN, -kInf, 1});
  expect_binary("aten::nextafter", nextafter, x, y, kExact);
  expect_binary("aten::nextafter", nextafter, x.to(at::kDouble), y.to(at::kDouble), kExact);
  at::Tensor powers = at::exp2(at::arange(-130, 128, at::kFloat));
  expect_binary("aten::nextafter", nextafter, powers, at::zeros({1}), kExact);
  expect_binary("aten::nextafter", nextafter, -powers, at::full({1}, kInf), kExact);
  expect_binary("aten::nextafter", nextafter, at::randn({3, 4}) * 100, at::randn({4}) * 100,
                kExact);
}

TEST_F(Math, FloatPowerComputesInDouble) {
  BinaryFn float_power = [](const at::Tensor& a, const at::Tensor& b) {
    return at::float_power(a, b);
  };
  expect_binary("aten::float_power", float_power, at::rand({2, 3}) * 4, at::randn({3}) * 3);
  expect_binary("aten::float_power", float_power, longs({2, -3, 0, 10}), longs({3, 3, 0, 20}));
  expect_binary("aten::float_power", float_power, floats({-2, 0, kInf, kNaN, 1}),
                floats({0.5f, -1, -1, 0, kNaN}));
  expect_op_matches("aten::float_power",
                    [](const Inputs& in) { return at::float_power(arg(in, 0), 2.5); },
                    {at::rand({2, 3}) * 3});
  expect_op_matches("aten::float_power",
                    [](const Inputs& in) { return at::float_power(3, arg(in, 0)); },
                    {longs({-1, 0, 4})});
}

TEST_F(Math, Addcdiv) {
  auto with_value = [](double value) {
    return [value](const Inputs& in) {
      return at::addcdiv(arg(in, 0), arg(in, 1), arg(in, 2), value);
    };
  };
  for (double value : {1.0, 0.5, -3.0}) {
    SCOPED_TRACE(value);
    expect_op_matches("aten::addcdiv", with_value(value),
                      {at::randn({2, 3}), at::randn({3}), at::rand({2, 1}) + 0.5});
  }
  expect_op_matches("aten::addcdiv", with_value(2.0),
                    {floats({1, 2, 3, 4}), floats({1, 0, -1, kInf}), floats({0, 0, 0, 2})});
  expect_op_matches("aten::addcdiv", with_value(1.0),
                    {at::scalar_tensor(1.0), at::scalar_tensor(3.0), at::scalar_tensor(4.0)});
}

TEST_F(Math, IsrealOfRealTensorsIsAllTrue) {
  for (const at::Tensor& x :
       {at::randn({2, 3}), longs({-2, 0, 3}), bools({1, 0}), at::scalar_tensor(kNaN)}) {
    expect_unary("aten::isreal", at::isreal, x);
  }
}

// isclose with (rtol, atol, equal_nan).
BinaryFn isclose_with(double rtol, double atol, bool equal_nan) {
  return [=](const at::Tensor& a, const at::Tensor& b) {
    return at::isclose(a, b, rtol, atol, equal_nan);
  };
}

TEST_F(Math, Isclose) {
  at::Tensor x = floats({1, 1, 1, kNaN, kNaN, kInf, kInf, -kInf, 0, 1e-9f, 100, 100, -0.0f});
  at::Tensor y = floats({1, 1.001f, 1.1f, kNaN, 1, kInf, -kInf, 1e38f, 1e-9f, 0, 100.01f, 101, 0});
  for (bool equal_nan : {false, true}) {
    SCOPED_TRACE(equal_nan);
    expect_binary("aten::isclose", isclose_with(1e-5, 1e-8, equal_nan), x, y);
    expect_binary("aten::isclose", isclose_with(1e-2, 0, equal_nan), x, y);
    expect_binary("aten::isclose", isclose_with(0, 0, equal_nan), x, y);
    expect_binary("aten::isclose", isclose_with(0, 1e-8, equal_nan), x, y);
  }
  expect_binary("aten::isclose", isclose_with(1e-5, 1e-8, false), at::randn({2, 3}),
                at::randn({3}));
  expect_binary("aten::isclose", isclose_with(1e-5, 1e-8, false), x.to(at::kDouble),
                y.to(at::kDouble));
}

TEST_F(Math, IscloseOfInt64AndBool) {
  at::Tensor x = longs({10, 10, 100, -5, 1000000});
  at::Tensor y = longs({10, 11, 101, 5, 1000009});
  expect_binary("aten::isclose", isclose_with(1e-5, 1e-8, false), x, y);
  expect_binary("aten::isclose", isclose_with(0.01, 0, false), x, y);
  expect_binary("aten::isclose", isclose_with(0, 1, false), x, y);
  expect_binary("aten::isclose", isclose_with(0, 0, false), x, y);
  at::Tensor b = bools({1, 0, 1, 0});
  at::Tensor c = bools({1, 1, 0, 0});
  expect_binary("aten::isclose", isclose_with(1e-5, 1e-8, false), b, c);
  expect_binary("aten::isclose", isclose_with(0, 1, false), b, c);
}

TEST_F(Math, GcdLcm) {
  for (const auto& [op, fn] : std::vector<std::pair<std::string, BinaryFn>>{
           {"aten::gcd", at::gcd}, {"aten::lcm", at::lcm}}) {
    expect_binary(op, fn, longs({12, -12, 0, 0, 7, 1071, 832040, -9, 1000000007}),
                  longs({18, 18, 5, 0, -7, 462, 514229, -6, 3}));
    // Broadcast, with steps that differ per element.
    expect_binary(op, fn, at::randint(-1000, 1000, {3, 4}), at::randint(-50, 50, {4}));
    expect_binary(op, fn, at::randint(-100, 100, {5}, at::kInt),
                  at::randint(-100, 100, {5}, at::kInt));
    expect_binary(op, fn, at::scalar_tensor(84, at::kLong), longs({36, 0, -35}));
    expect_binary(op, fn, longs({0, 0}), longs({0, 0}));  // no Loop step
  }
}

// ----- orthogonal polynomials ------------------------------------------------------------------

struct PolynomialCase {
  const char* op;
  BinaryFn fn;
  std::function<at::Tensor(const at::Tensor&, const at::Scalar&)> with_scalar_n;
};

#define TORCHONNX_POLYNOMIAL(name)                                                         \
  PolynomialCase {                                                                         \
    "aten::special_" #name,                                                                \
        [](const at::Tensor& x, const at::Tensor& n) { return at::special_##name(x, n); }, \
        [](const at::Tensor& x, const at::Scalar& n) { return at::special_##name(x, n); }  \
  }

TEST_F(Math, OrthogonalPolynomials) {
  // x at and around the ends of [-1, 1] and [0, 1] (the shifted ones), outside, NaN; n negative,
  // small, past each trigonometric threshold (4, 6, 8), and fractional (truncated).
  at::Tensor x =
      floats({-1, 1, 0, 0.5f, -0.3f, 0.25f, 0.75f, 0.99f, 1.5f, -2, kNaN}).reshape({11, 1});
  at::Tensor n = floats({-1, 0, 1, 2, 3, 5, 6, 7, 9, 12, 2.7f});
  for (const PolynomialCase& c : {
           TORCHONNX_POLYNOMIAL(chebyshev_polynomial_t),
           TORCHONNX_POLYNOMIAL(chebyshev_polynomial_u),
           TORCHONNX_POLYNOMIAL(chebyshev_polynomial_v),
           TORCHONNX_POLYNOMIAL(chebyshev_polynomial_w),
           TORCHONNX_POLYNOMIAL(shifted_chebyshev_polynomial_t),
           TORCHONNX_POLYNOMIAL(shifted_chebyshev_polynomial_u),
           TORCHONNX_POLYNOMIAL(shifted_chebyshev_polynomial_v),
           TORCHONNX_POLYNOMIAL(shifted_chebyshev_polynomial_w),
           TORCHONNX_POLYNOMIAL(hermite_polynomial_h),
           TORCHONNX_POLYNOMIAL(hermite_polynomial_he),
           TORCHONNX_POLYNOMIAL(laguerre_polynomial_l),
           TORCHONNX_POLYNOMIAL(legendre_polynomial_p),
       }) {
    expect_binary(c.op, c.fn, x, n);
    expect_binary(c.op, c.fn, at::rand({2, 3}) * 2.2 - 1.1, longs({0, 4, 10}));
    auto scalar_n = c.with_scalar_n;
    SCOPED_TRACE(std::string(c.op) + " with a Scalar n");
    expect_op_matches(c.op, [scalar_n](const Inputs& in) { return scalar_n(arg(in, 0), 7); },
                      {at::rand({5}) * 2 - 1});
    expect_op_matches(c.op, [scalar_n](const Inputs& in) { return scalar_n(arg(in, 0), 0); },
                      {longs({-1, 0, 2})});
  }
}

}  // namespace
}  // namespace torchonnx::testing
