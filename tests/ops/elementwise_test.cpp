// Numeric tests of the elementwise converters (arithmetic with PyTorch's type promotion, unary
// math): export at every opset, run in ORT, compare with libtorch (values and dtypes).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

const ScriptOptions kUnfolded{kMinOpset, highest_opset(), /*fold=*/false};

class Elementwise : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- add / sub / rsub -------------------------------------------------------------------------

TEST_F(Elementwise, AddBroadcastTensors) {
  expect_op_matches("aten::add", [](const Inputs& in) { return at::add(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}), at::randn({3, 1})});
}

TEST_F(Elementwise, AddWithAlpha) {
  expect_op_matches("aten::add",
                    [](const Inputs& in) { return at::add(arg(in, 0), arg(in, 1), 2.5); },
                    {at::randn({3, 4}), at::randn({3, 4})});
}

TEST_F(Elementwise, AddInt64TensorsWithIntAlpha) {
  expect_op_matches("aten::add",
                    [](const Inputs& in) { return at::add(arg(in, 0), arg(in, 1), 3); },
                    {at::randint(-50, 50, {2, 5}), at::randint(-50, 50, {2, 5})});
}

// uint8, int8 and int16 arithmetic (Note [Low-precision arithmetic]): int32 below opset 14, the
// type itself from 14; results wrap around as PyTorch's do. Pow's base is computed in int64.
TEST_F(Elementwise, LowPrecisionIntegerArithmetic) {
  for (at::ScalarType type : {at::kByte, at::kChar, at::kShort}) {
    SCOPED_TRACE(c10::toString(type));
    const int64_t lo = type == at::kByte ? 0 : -100;
    at::Tensor b = at::randint(lo, 120, {2, 5}, type);
    Inputs in{at::randint(lo, 120, {2, 5}, type), b.masked_fill(b == 0, 3)};  // no x / 0
    expect_op_matches(
        "aten::add", [](const Inputs& x) { return at::add(arg(x, 0), arg(x, 1), 3); }, in);
    expect_op_matches(
        "aten::sub", [](const Inputs& x) { return at::sub(arg(x, 0), arg(x, 1)); }, in);
    expect_op_matches(
        "aten::rsub", [](const Inputs& x) { return at::rsub(arg(x, 0), 7, 2); }, in);
    expect_op_matches(
        "aten::mul", [](const Inputs& x) { return at::mul(arg(x, 0), arg(x, 1)); }, in);
    expect_op_matches(
        "aten::div", [](const Inputs& x) { return at::div(arg(x, 0), arg(x, 1)); }, in);
    Inputs p{at::randint(0, 9, {2, 5}, type), at::randint(0, 4, {2, 5}, type)};
    expect_op_matches(
        "aten::pow", [](const Inputs& x) { return at::pow(arg(x, 0), arg(x, 1)); }, p);
  }
}

TEST_F(Elementwise, FloatTensorPlusIntScalarStaysFloat) {
  expect_op_matches("aten::add", [](const Inputs& in) { return at::add(arg(in, 0), 2); },
                    {at::randn({2, 3})});
}

TEST_F(Elementwise, Int64TensorPlusFloatScalarIsFloat) {
  expect_op_matches("aten::add", [](const Inputs& in) { return arg(in, 0) + 2.5; },
                    {at::randint(-10, 10, {2, 3})});
}

TEST_F(Elementwise, Int64TensorPlusFloatTensorIsFloat) {
  expect_op_matches("aten::add", [](const Inputs& in) { return arg(in, 0) + arg(in, 1); },
                    {at::randint(-10, 10, {2, 3}), at::randn({2, 3})});
}

TEST_F(Elementwise, Int32TensorPlusInt64TensorIsInt64) {
  expect_op_matches("aten::add", [](const Inputs& in) { return arg(in, 0) + arg(in, 1); },
                    {at::randint(-10, 10, {4}, at::kInt), at::randint(-10, 10, {4})});
}

TEST_F(Elementwise, Int64TensorPlusZeroDimDoubleTensorIsFloat) {
  // A 0-d tensor of a higher category promotes to the default dtype (float), not to double.
  expect_op_matches("aten::add", [](const Inputs& in) { return arg(in, 0) + arg(in, 1); },
                    {at::randint(-10, 10, {2, 3}), at::scalar_tensor(0.25, at::kDouble)});
}

TEST_F(Elementwise, FloatTensorTimesZeroDimDoubleTensorStaysFloat) {
  expect_op_matches("aten::mul", [](const Inputs& in) { return arg(in, 0) * arg(in, 1); },
                    {at::randn({2, 3}), at::scalar_tensor(1.5, at::kDouble)});
}

TEST_F(Elementwise, ZeroDimTensors) {
  expect_op_matches("aten::add", [](const Inputs& in) { return arg(in, 0) + arg(in, 1); },
                    {at::scalar_tensor(1.5), at::scalar_tensor(-4.0)});
}

TEST_F(Elementwise, BoolMaskTimesFloatIsFloat) {
  expect_op_matches("aten::mul", [](const Inputs& in) { return arg(in, 0) * arg(in, 1); },
                    {at::randn({3, 4}) > 0, at::randn({3, 4})});
}

TEST_F(Elementwise, SubWithAlpha) {
  expect_op_matches("aten::sub",
                    [](const Inputs& in) { return at::sub(arg(in, 0), arg(in, 1), -0.5); },
                    {at::randn({3, 4}), at::randn({4})});
}

TEST_F(Elementwise, SubInt64ByIntScalar) {
  expect_op_matches("aten::sub", [](const Inputs& in) { return arg(in, 0) - 7; },
                    {at::randint(-10, 10, {5})});
}

TEST_F(Elementwise, RsubScalar) {
  expect_op_matches("aten::rsub", [](const Inputs& in) { return at::rsub(arg(in, 0), 2); },
                    {at::randn({2, 3})});
}

TEST_F(Elementwise, RsubScalarWithAlpha) {
  expect_op_matches("aten::rsub", [](const Inputs& in) { return at::rsub(arg(in, 0), 1.5, 2); },
                    {at::randn({2, 3})});
}

TEST_F(Elementwise, RsubInt64TensorFloatScalarIsFloat) {
  expect_op_matches("aten::rsub", [](const Inputs& in) { return at::rsub(arg(in, 0), 2.5); },
                    {at::randint(-10, 10, {2, 3})});
}

TEST_F(Elementwise, RsubTensorsWithAlpha) {
  // at::rsub(Tensor, Tensor) is recorded as aten::sub, and the script compiler rewrites
  // torch.rsub to sub too: the Tensor overload is written in IR.
  auto m = ir_module(R"IR(
graph(%x : Tensor, %y : Tensor):
  %alpha : int = prim::Constant[value=2]()
  %z : Tensor = aten::rsub(%x, %y, %alpha)
  return (%z))IR");
  expect_script_matches("aten::rsub", m, {at::randn({2, 3}), at::randn({3})});
}

// ----- mul / div
// ----------------------------------------------------------------------------------

TEST_F(Elementwise, MulTensors) {
  expect_op_matches("aten::mul", [](const Inputs& in) { return at::mul(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 1, 4}), at::randn({3, 1})});
}

TEST_F(Elementwise, MulInt64TensorByIntScalarStaysInt64) {
  expect_op_matches("aten::mul", [](const Inputs& in) { return arg(in, 0) * 3; },
                    {at::randint(-100, 100, {2, 3})});
}

TEST_F(Elementwise, DivFloat) {
  expect_op_matches("aten::div", [](const Inputs& in) { return at::div(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::rand({3, 4}) + 0.5});
}

TEST_F(Elementwise, DivInt64TensorsIsTrueDivision) {
  expect_op_matches("aten::div", [](const Inputs& in) { return at::div(arg(in, 0), arg(in, 1)); },
                    {longs({7, -7, 9, 0, -12}), longs({2, 2, -4, 3, 5})});
}

TEST_F(Elementwise, DivRoundingModesOnFloat) {
  for (const char* mode : {"trunc", "floor"}) {
    expect_op_matches("aten::div",
                      [mode](const Inputs& in) { return at::div(arg(in, 0), arg(in, 1), mode); },
                      {at::randn({4, 5}) * 10, at::rand({4, 5}) + 0.5});
  }
}

TEST_F(Elementwise, DivRoundingModesOnInt64) {
  for (const char* mode : {"trunc", "floor"}) {
    expect_op_matches("aten::div",
                      [mode](const Inputs& in) { return at::div(arg(in, 0), arg(in, 1), mode); },
                      {longs({7, -7, 7, -7, 0, 100, -101}), longs({2, 2, -2, -2, 5, 7, 10})});
  }
}

TEST_F(Elementwise, DivInt64ByIntScalarWithRoundingMode) {
  for (const char* mode : {"trunc", "floor"}) {
    expect_op_matches("aten::div",
                      [mode](const Inputs& in) { return at::div(arg(in, 0), 3, mode); },
                      {longs({-7, -6, -1, 0, 1, 8})});
  }
}

TEST_F(Elementwise, FloorDivideFloat) {
  expect_op_matches("aten::floor_divide",
                    [](const Inputs& in) { return at::floor_divide(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}) * 10, at::rand({3, 4}) + 0.5});
}

TEST_F(Elementwise, FloorDivideInt64) {
  expect_op_matches("aten::floor_divide",
                    [](const Inputs& in) { return at::floor_divide(arg(in, 0), arg(in, 1)); },
                    {longs({7, -7, 7, -7, 0, 9}), longs({2, 2, -2, -2, 3, 3})});
}

TEST_F(Elementwise, FloorDivideInt64ByScalar) {
  expect_op_matches("aten::floor_divide",
                    [](const Inputs& in) { return at::floor_divide(arg(in, 0), 4); },
                    {longs({-9, -4, -1, 0, 3, 9})});
}

TEST_F(Elementwise, TrueDivide) {
  // The tracer and the script compiler both normalize true_divide to div: only a graph written
  // in IR (or saved by an old PyTorch) holds aten::true_divide.
  auto m = ir_module(R"IR(
graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::true_divide(%x, %y)
  return (%z))IR");
  expect_script_matches("aten::true_divide", m, {longs({7, -7, 9}), longs({2, 4, -3})});
  expect_script_matches("aten::true_divide", m, {at::randn({2, 3}), at::rand({3}) + 0.5});
}

// ----- pow
// ------------------------------------------------------------------------------------------

TEST_F(Elementwise, PowTensorExponent) {
  expect_op_matches("aten::pow", [](const Inputs& in) { return at::pow(arg(in, 0), arg(in, 1)); },
                    {at::rand({3, 4}) + 0.1, at::randn({3, 4})});
}

TEST_F(Elementwise, PowScalarExponents) {
  for (double e : {2.0, 0.5, -1.0}) {
    expect_op_matches("aten::pow", [e](const Inputs& in) { return at::pow(arg(in, 0), e); },
                      {at::rand({3, 4}) + 0.1});
  }
}

TEST_F(Elementwise, PowFloatByIntScalar) {
  expect_op_matches("aten::pow", [](const Inputs& in) { return at::pow(arg(in, 0), 3); },
                    {at::randn({3, 4})});
}

TEST_F(Elementwise, PowInt64ByIntScalarStaysInt64) {
  expect_op_matches("aten::pow", [](const Inputs& in) { return at::pow(arg(in, 0), 3); },
                    {longs({-3, -1, 0, 2, 5, 11})});
}

TEST_F(Elementwise, PowInt64ByFloatScalarIsFloat) {
  expect_op_matches("aten::pow", [](const Inputs& in) { return at::pow(arg(in, 0), 0.5); },
                    {longs({0, 1, 4, 9, 10})});
}

// ----- unary
// --------------------------------------------------------------------------------------

using UnaryFn = at::Tensor (*)(const at::Tensor&);

struct UnaryCase {
  const char* op;
  UnaryFn fn;
  at::Tensor input;
};

void expect_unary(const UnaryCase& c) {
  SCOPED_TRACE(c.op);
  UnaryFn fn = c.fn;
  expect_op_matches(c.op, [fn](const Inputs& in) { return fn(arg(in, 0)); }, {c.input});
}

TEST_F(Elementwise, UnaryOnFloat) {
  at::Tensor any = at::randn({3, 4}) * 3;
  at::Tensor positive = at::rand({3, 4}) + 0.1;
  for (const auto& c : std::vector<UnaryCase>{
           {"aten::neg", at::neg, any},
           {"aten::abs", at::abs, any},
           {"aten::exp", at::exp, any},
           {"aten::log", at::log, positive},
           {"aten::sqrt", at::sqrt, positive},
           {"aten::reciprocal", at::reciprocal, positive},
           {"aten::floor", at::floor, any},
           {"aten::ceil", at::ceil, any},
           {"aten::sin", at::sin, any},
           {"aten::cos", at::cos, any},
           {"aten::erf", at::erf, any},
           {"aten::rsqrt", at::rsqrt, positive},
       }) {
    expect_unary(c);
  }
}

TEST_F(Elementwise, UnaryKeepsInt64) {
  at::Tensor x = longs({-5, -1, 0, 3, 8});
  for (const auto& c : std::vector<UnaryCase>{{"aten::neg", at::neg, x},
                                              {"aten::abs", at::abs, x},
                                              {"aten::floor", at::floor, x},
                                              {"aten::ceil", at::ceil, x}}) {
    expect_unary(c);
  }
}

TEST_F(Elementwise, UnaryPromotesInt64ToFloat) {
  at::Tensor x = longs({1, 2, 4, 9, 10});
  for (const auto& c : std::vector<UnaryCase>{{"aten::exp", at::exp, x},
                                              {"aten::log", at::log, x},
                                              {"aten::sqrt", at::sqrt, x},
                                              {"aten::reciprocal", at::reciprocal, x},
                                              {"aten::sin", at::sin, x},
                                              {"aten::erf", at::erf, x},
                                              {"aten::rsqrt", at::rsqrt, x}}) {
    expect_unary(c);
  }
}

TEST_F(Elementwise, UnaryOnZeroDimTensor) {
  expect_op_matches("aten::exp", [](const Inputs& in) { return at::exp(arg(in, 0)); },
                    {at::scalar_tensor(0.7)});
}

TEST_F(Elementwise, InPlaceOpsUseTheOutOfPlaceConverter) {
  expect_op_matches("aten::mul",
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) + 1;
                      y.mul_(arg(in, 1));
                      return y;
                    },
                    {at::randn({2, 3}), at::randn({2, 3})});
}

// ----- more unary math ----------------------------------------------------------------------

TEST_F(Elementwise, UnaryMathOnFloat) {
  at::Tensor unit = at::rand({3, 4}) * 1.8 - 0.9;
  at::Tensor any = at::randn({3, 4}) * 3;
  at::Tensor positive = at::rand({3, 4}) * 10 + 0.1;
  for (const auto& c : std::vector<UnaryCase>{
           {"aten::acos", at::acos, unit},
           {"aten::asin", at::asin, unit},
           {"aten::atan", at::atan, any},
           {"aten::tan", at::tan, unit},
           {"aten::log10", at::log10, positive},
           {"aten::log2", at::log2, positive},
           {"aten::log1p", at::log1p, unit},
           {"aten::sign", at::sign, floats({-2.5, -0.0, 0.0, 3, kInf, -kInf})},
           {"aten::square", at::square, any},
       }) {
    expect_unary(c);
  }
}

TEST_F(Elementwise, UnaryMathPromotesInt64ToFloat) {
  at::Tensor unit = longs({-1, 0, 1});
  at::Tensor positive = longs({1, 2, 8, 10, 1000});
  for (const auto& c : std::vector<UnaryCase>{{"aten::acos", at::acos, unit},
                                              {"aten::asin", at::asin, unit},
                                              {"aten::atan", at::atan, positive},
                                              {"aten::tan", at::tan, unit},
                                              {"aten::log10", at::log10, positive},
                                              {"aten::log2", at::log2, positive},
                                              {"aten::log1p", at::log1p, positive}}) {
    expect_unary(c);
  }
}

TEST_F(Elementwise, SignSquareRoundKeepInt64) {
  at::Tensor x = longs({-5, -1, 0, 3, 8});
  for (const auto& c : std::vector<UnaryCase>{{"aten::sign", at::sign, x},
                                              {"aten::square", at::square, x},
                                              {"aten::round", at::round, x}}) {
    expect_unary(c);
  }
}

TEST_F(Elementwise, SignOfBoolIsBoolSquareOfBoolIsInt64) {
  at::Tensor b = bools({1, 0, 1});
  expect_unary({"aten::sign", at::sign, b});
  expect_unary({"aten::square", at::square, b});
}

TEST_F(Elementwise, RoundHalfToEven) {
  // Ties go to the even neighbour; below opset 11 (no Round) the Floor-based lowering must agree
  // exactly, including large values, infinities and NaN.
  at::Tensor x = floats({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 0.49999997f, -0.49999997f, 3.7,
                         -3.7, 8388607.5, 16777216, 1e30, kInf, -kInf, kNaN});
  for (const at::Tensor& t :
       {x, x.to(at::kDouble), at::randn({3, 4}) * 100, at::scalar_tensor(-6.5)}) {
    expect_op_matches(
        "aten::round", [](const Inputs& in) { return at::round(arg(in, 0)); }, {t}, kMinOpset,
        highest_opset(), {}, kExact);
  }
}

TEST_F(Elementwise, RoundDecimals) {
  // Compared exactly: the lowering (Mul, Round, Div as ATen computes it) is bitwise ATen's, and a
  // tolerance would accept floor or trunc for round (they err by < 10^-decimals).
  for (int64_t d : {2, 0, -1}) {
    expect_op_matches(
        "aten::round", [d](const Inputs& in) { return at::round(arg(in, 0), d); },
        {at::randn({3, 5}) * 100}, kMinOpset, highest_opset(), {}, kExact);
  }
}

TEST_F(Elementwise, IsNanIsInfIsFinite) {
  at::Tensor x = floats({1, -kInf, kInf, kNaN, 0, -3.5, 3.4e38f});
  for (at::Tensor t :
       {x, x.to(at::kDouble), longs({1, -3, 0}), at::scalar_tensor(kNaN), bools({1, 0})}) {
    expect_unary({"aten::isnan", at::isnan, t});
    expect_unary({"aten::isinf", at::isinf, t});
    expect_unary({"aten::isfinite", at::isfinite, t});
  }
}

TEST_F(Elementwise, NanToNumDefaults) {
  at::Tensor x = floats({1, -kInf, kInf, kNaN, 0, -3.5});
  for (at::Tensor t : {x, x.to(at::kDouble), longs({1, -3, 0})}) {
    expect_op_matches("aten::nan_to_num",
                      [](const Inputs& in) { return at::nan_to_num(arg(in, 0)); }, {t});
  }
}

TEST_F(Elementwise, NanToNumWithValues) {
  expect_op_matches("aten::nan_to_num",
                    [](const Inputs& in) { return at::nan_to_num(arg(in, 0), 2.0, 100.0, -7.5); },
                    {floats({1, -kInf, kInf, kNaN, 0, -3.5})});
  expect_op_matches("aten::nan_to_num",
                    [](const Inputs& in) { return at::nan_to_num(arg(in, 0), c10::nullopt, 1e10); },
                    {floats({kInf, kNaN, -kInf})});
}

// ----- more binary math -----------------------------------------------------------------------

TEST_F(Elementwise, RemainderFloatHasTheDivisorsSign) {
  expect_op_matches(
      "aten::remainder", [](const Inputs& in) { return at::remainder(arg(in, 0), arg(in, 1)); },
      {floats({5.5, -5.5, 5.5, -5.5, 0, 3, -4.5}), floats({2, 2, -2, -2, 3, 1.5, 1.5})});
  expect_op_matches("aten::remainder",
                    [](const Inputs& in) { return at::remainder(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}) * 10, at::randn({4}) * 3});
}

TEST_F(Elementwise, RemainderInt64) {
  expect_op_matches("aten::remainder",
                    [](const Inputs& in) { return at::remainder(arg(in, 0), arg(in, 1)); },
                    {longs({7, -7, 7, -7, 0, 6, -6}), longs({3, 3, -3, -3, 5, 3, -3})});
  expect_op_matches("aten::remainder",
                    [](const Inputs& in) { return at::remainder(arg(in, 0), 4); },
                    {longs({-9, -4, -1, 0, 3, 9})});
}

TEST_F(Elementwise, RemainderInt64ByFloatScalarIsFloat) {
  expect_op_matches("aten::remainder",
                    [](const Inputs& in) { return at::remainder(arg(in, 0), 2.5); },
                    {longs({-9, -4, -1, 0, 3, 9})});
}

TEST_F(Elementwise, RemainderScalarByTensor) {
  expect_op_matches("aten::remainder",
                    [](const Inputs& in) { return at::remainder(5, arg(in, 0)); },
                    {longs({3, -3, 2, -4, 7})});
}

TEST_F(Elementwise, Fmod) {
  expect_op_matches("aten::fmod", [](const Inputs& in) { return at::fmod(arg(in, 0), arg(in, 1)); },
                    {floats({5.5, -5.5, 5.5, -5.5, 0, 3}), floats({2, 2, -2, -2, 3, 1.5})});
  expect_op_matches("aten::fmod", [](const Inputs& in) { return at::fmod(arg(in, 0), arg(in, 1)); },
                    {longs({7, -7, 7, -7, 0}), longs({3, 3, -3, -3, 5})});
  expect_op_matches("aten::fmod", [](const Inputs& in) { return at::fmod(arg(in, 0), 2.5); },
                    {longs({-9, -4, -1, 0, 3, 9})});
  expect_op_matches("aten::fmod", [](const Inputs& in) { return at::fmod(arg(in, 0), -1.5); },
                    {at::randn({3, 4}) * 5});
}

TEST_F(Elementwise, Atan2AllQuadrantsAndZeros) {
  at::Tensor y = floats({1, 1, -1, -1, 0, 0, -0.0, 0, 3, -3, 0, kNaN});
  at::Tensor x = floats({1, -1, -1, 1, -2, 2, -2, 0, 0, 0, -0.0, 1});
  expect_op_matches("aten::atan2",
                    [](const Inputs& in) { return at::atan2(arg(in, 0), arg(in, 1)); }, {y, x});
  expect_op_matches("aten::atan2",
                    [](const Inputs& in) { return at::atan2(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::randn({4})});
}

TEST_F(Elementwise, Atan2Int64IsFloat) {
  expect_op_matches("aten::atan2",
                    [](const Inputs& in) { return at::atan2(arg(in, 0), arg(in, 1)); },
                    {longs({1, -2, 0, 3}), longs({2, -1, 5, 0})});
}

TEST_F(Elementwise, MaximumMinimum) {
  using BinaryFn = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
  for (auto [op, fn] : std::vector<std::pair<const char*, BinaryFn>>{
           {"aten::maximum", at::maximum}, {"aten::minimum", at::minimum}}) {
    SCOPED_TRACE(op);
    auto f = [fn = fn](const Inputs& in) { return fn(arg(in, 0), arg(in, 1)); };
    expect_op_matches(op, f, {at::randn({2, 3, 4}), at::randn({3, 1})});
    expect_op_matches(op, f, {longs({-5, 3, 0, 7}), longs({2, 3, -1, 9})});
    expect_op_matches(op, f, {longs({-5, 3, 0, 7}), at::randn({4})});  // promotes to float
    expect_op_matches(op, f, {bools({1, 0, 0}), bools({1, 1, 0})});
    expect_op_matches(op, f, {at::randint(-9, 9, {4}, at::kInt), longs({2, 3, -1, 9})});
  }
}

TEST_F(Elementwise, Addcmul) {
  expect_op_matches(
      "aten::addcmul",
      [](const Inputs& in) { return at::addcmul(arg(in, 0), arg(in, 1), arg(in, 2), 0.5); },
      {at::randn({2, 3}), at::randn({3}), at::randn({2, 1})});
  expect_op_matches(
      "aten::addcmul",
      [](const Inputs& in) { return at::addcmul(arg(in, 0), arg(in, 1), arg(in, 2)); },
      {at::randn({2, 3}), at::randn({2, 3}), at::randn({2, 3})});
  expect_op_matches(
      "aten::addcmul",
      [](const Inputs& in) { return at::addcmul(arg(in, 0), arg(in, 1), arg(in, 2), 2); },
      {longs({1, -2, 3}), longs({4, 5, -6}), longs({7, 0, 2})});
}

TEST_F(Elementwise, LerpScalarWeights) {
  for (double w : {0.3, 0.7, -0.6, 1.0}) {
    expect_op_matches("aten::lerp",
                      [w](const Inputs& in) { return at::lerp(arg(in, 0), arg(in, 1), w); },
                      {at::randn({3, 4}), at::randn({4})});
  }
}

TEST_F(Elementwise, LerpTensorWeight) {
  expect_op_matches("aten::lerp",
                    [](const Inputs& in) { return at::lerp(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {at::randn({3, 4}), at::randn({3, 4}), floats({-0.7, 0.2, 0.5, 0.9})});
}

TEST_F(Elementwise, FloordivOnInts) {
  // x.size(0) // k is an int op: unfolded, it reaches the converter (sizes 7 and -7 + 5 = -2).
  expect_script_matches("aten::floordiv",
                        "def forward(self, x):\n  n = (x.size(0) - 9) // 4\n  m = x.size(1) // 2\n"
                        "  return x + n * 10 + m\n",
                        {at::randn({7, 5})}, kUnfolded);
  expect_script_matches("aten::floordiv",
                        "def forward(self, x):\n  n = (x.size(0) - 9) // -4\n  return x + n\n",
                        {at::randn({6, 2})}, kUnfolded);
}

TEST_F(Elementwise, RemainderOnInts) {
  expect_script_matches("aten::remainder",
                        "def forward(self, x):\n  n = (x.size(0) - 9) % 4\n  m = x.size(1) % -3\n"
                        "  return x + n * 10 + m\n",
                        {at::randn({7, 5})}, kUnfolded);
}

TEST_F(Elementwise, FloordivOnFloats) {
  expect_script_matches("aten::floordiv",
                        "def forward(self, x):\n  n = (x.size(0) * -1.5) // 2.0\n  return x + n\n",
                        {at::randn({7, 5})}, kUnfolded);
}

// ----- clamp ---------------------------------------------------------------------------------

TEST_F(Elementwise, ClampScalarBounds) {
  auto x = at::randn({3, 4}) * 3;
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), -1.0, 0.5); }, {x});
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), -1.0, c10::nullopt); },
                    {x});
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), c10::nullopt, 2); }, {x});
  // min > max: everything is max.
  expect_op_matches("aten::clamp", [](const Inputs& in) { return at::clamp(arg(in, 0), 1, -1); },
                    {x});
}

TEST_F(Elementwise, ClampInt64) {
  // Clip takes integers from 12; below, Where(Less/Greater).
  auto x = longs({-7, -1, 0, 2, 5, 9});
  expect_op_matches("aten::clamp", [](const Inputs& in) { return at::clamp(arg(in, 0), -2, 4); },
                    {x});
  expect_op_matches("aten::clamp_min",
                    [](const Inputs& in) { return at::clamp_min(arg(in, 0), 0); }, {x});
  expect_op_matches("aten::clamp_max",
                    [](const Inputs& in) { return at::clamp_max(arg(in, 0), 3); }, {x});
}

TEST_F(Elementwise, ClampInt64WithFloatBoundIsFloat) {
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), 2.5, c10::nullopt); },
                    {longs({-7, -1, 0, 2, 5, 9})});
}

TEST_F(Elementwise, ClampTensorBounds) {
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {at::randn({3, 4}) * 3, at::randn({4}) - 1, at::randn({3, 1}) + 1});
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) {
                      return at::clamp(arg(in, 0), arg(in, 1), c10::optional<at::Tensor>());
                    },
                    {at::randn({3, 4}), at::randn({2, 3, 4})});  // broadcasts to the bound's shape
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) {
                      return at::clamp(arg(in, 0), c10::optional<at::Tensor>(), arg(in, 1));
                    },
                    {longs({-7, -1, 0, 2, 5, 9}), longs({0, 0, 0, 1, 1, 1})});
}

TEST_F(Elementwise, ClampZeroDimTensorBounds) {
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {at::randn({3, 4}), at::scalar_tensor(-0.5), at::scalar_tensor(0.5)});
  expect_op_matches("aten::clamp",
                    [](const Inputs& in) { return at::clamp(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {longs({-7, -1, 0, 2, 5, 9}), at::scalar_tensor(-2, at::kLong),
                     at::scalar_tensor(4, at::kLong)});
}

TEST_F(Elementwise, ClampMinMaxTensor) {
  expect_op_matches("aten::clamp_min",
                    [](const Inputs& in) { return at::clamp_min(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::randn({4})});
  expect_op_matches("aten::clamp_max",
                    [](const Inputs& in) { return at::clamp_max(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::randn({2, 1, 4})});
  expect_op_matches("aten::clamp_max",
                    [](const Inputs& in) { return at::clamp_max(arg(in, 0), -0.25); },
                    {at::randn({3, 4})});
}

// bool: clamp_min is Or, clamp_max And (ONNX Clip takes no bool).
TEST_F(Elementwise, ClampOfBool) {
  at::Tensor x = at::randn({3, 4}) > 0;
  expect_op_matches("aten::clamp_min",
                    [](const Inputs& in) { return at::clamp_min(arg(in, 0), arg(in, 1)); },
                    {x, at::randn({4}) > 0});
  expect_op_matches("aten::clamp_max",
                    [](const Inputs& in) { return at::clamp_max(arg(in, 0), arg(in, 1)); },
                    {x, at::randn({3, 1}) > 0});
}

TEST_F(Elementwise, ClampInScriptWithNoneBound) {
  expect_script_matches("aten::clamp", "def forward(self, x):\n  return x.clamp(max=1)\n",
                        {longs({-3, 0, 1, 4})});
  expect_script_matches("aten::clamp", "def forward(self, x):\n  return x.clamp(min=0.5)\n",
                        {at::randn({2, 3})});
}

// ----- implicit scalar casts (spec FAQ) -------------------------------------------------------

TEST_F(Elementwise, ImplicitScalarCastFaqExample) {
  const char* source = "def forward(self, x):\n  y = x + 2\n  return y + 3\n";
  expect_script_matches("aten::add", source, {at::randn({2, 3})});
  expect_script_matches("aten::add", source, {longs({-4, 0, 7})});
}

TEST_F(Elementwise, ImplicitScalarCastToFloatInScript) {
  expect_script_matches("aten::add", "def forward(self, x):\n  return x + 2.5\n",
                        {longs({-4, 0, 7})});
  expect_script_matches("aten::remainder", "def forward(self, x):\n  return x % 2.5\n",
                        {longs({-4, 0, 7})});
  expect_script_matches("aten::remainder", "def forward(self, x):\n  return x % 3\n",
                        {longs({-4, 0, 7})});
}

}  // namespace
}  // namespace torchonnx::testing
