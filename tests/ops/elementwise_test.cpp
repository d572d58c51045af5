// Numeric tests of the elementwise converters (arithmetic with PyTorch's type promotion, unary
// math): export at every opset, run in ORT, compare with libtorch (values and dtypes).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

at::Tensor longs(std::vector<int64_t> v) {
  return at::tensor(v, at::kLong);
}

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
  expect_op_matches("aten::mul_",
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) + 1;
                      y.mul_(arg(in, 1));
                      return y;
                    },
                    {at::randn({2, 3}), at::randn({2, 3})});
}

}  // namespace
}  // namespace torchonnx::testing
