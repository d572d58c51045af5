// Numeric tests of the activation converters: export at every opset, run in ORT, compare.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Activation : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Activation, Relu) {
  expect_op_matches("aten::relu", [](const Inputs& in) { return at::relu(arg(in, 0)); },
                    {at::randn({2, 3, 4})});
}

TEST_F(Activation, InPlaceReluUsesTheOutOfPlaceConverter) {
  expect_op_matches("aten::relu_",
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) * 2;
                      y.relu_();
                      return y;
                    },
                    {at::randn({2, 3})});
}

TEST_F(Activation, SigmoidAndTanh) {
  expect_op_matches("aten::sigmoid", [](const Inputs& in) { return at::sigmoid(arg(in, 0)); },
                    {at::randn({3, 4}) * 4});
  expect_op_matches("aten::tanh", [](const Inputs& in) { return at::tanh(arg(in, 0)); },
                    {at::randn({3, 4}) * 2});
}

TEST_F(Activation, Hardsigmoid) {
  expect_op_matches("aten::hardsigmoid",
                    [](const Inputs& in) { return at::hardsigmoid(arg(in, 0)); },
                    {at::randn({2, 8}) * 4});
}

TEST_F(Activation, HardswishBeforeOpset14) {
  expect_op_matches(
      "aten::hardswish", [](const Inputs& in) { return at::hardswish(arg(in, 0)); },
      {at::randn({2, 8}) * 4}, kMinOpset, 13);
}

TEST_F(Activation, HardswishFromOpset14) {
  expect_op_matches(
      "aten::hardswish", [](const Inputs& in) { return at::hardswish(arg(in, 0)); },
      {at::randn({2, 8}) * 4}, 14, kMaxOpset);
}

TEST_F(Activation, Silu) {
  expect_op_matches("aten::silu", [](const Inputs& in) { return at::silu(arg(in, 0)); },
                    {at::randn({3, 5}) * 3});
}

TEST_F(Activation, Hardtanh) {
  expect_op_matches("aten::hardtanh",
                    [](const Inputs& in) { return at::hardtanh(arg(in, 0), -0.5, 2.0); },
                    {at::randn({3, 5}) * 3});
}

TEST_F(Activation, HardtanhDefaultsInPlaceAndDouble) {
  expect_op_matches("aten::hardtanh", [](const Inputs& in) { return at::hardtanh(arg(in, 0)); },
                    {at::randn({3, 5}) * 3});
  // ONNX Runtime implements Clip-6 and Clip-11 for float only: double from Clip-12.
  expect_op_matches(
      "aten::hardtanh", [](const Inputs& in) { return at::hardtanh(arg(in, 0)); },
      {at::randn({3, 5}, at::kDouble) * 3}, 12, kMaxOpset);
  expect_op_matches("aten::hardtanh_",
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) + 0;
                      at::hardtanh_(y, 0.0, 1.0);
                      return y;
                    },
                    {at::randn({3, 5}) * 3});
}

TEST_F(Activation, Relu6) {
  expect_op_matches("aten::relu6", [](const Inputs& in) { return at::relu6(arg(in, 0)); },
                    {at::randn({3, 5}) * 5});
}

TEST_F(Activation, LeakyRelu) {
  expect_op_matches("aten::leaky_relu", [](const Inputs& in) { return at::leaky_relu(arg(in, 0)); },
                    {at::randn({3, 5})});
  expect_op_matches("aten::leaky_relu",
                    [](const Inputs& in) { return at::leaky_relu(arg(in, 0), 0.3); },
                    {at::randn({3, 5})});
}

TEST_F(Activation, GeluBothApproximations) {
  for (const char* approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    expect_op_matches("aten::gelu",
                      [approximate](const Inputs& in) { return at::gelu(arg(in, 0), approximate); },
                      {at::randn({4, 6})});
  }
}

TEST_F(Activation, SoftmaxOverEachDim) {
  for (int64_t dim : {0, 1, 2, -1, -2}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::softmax",
                      [dim](const Inputs& in) { return at::softmax(arg(in, 0), dim); },
                      {at::randn({2, 5, 3})});
  }
}

TEST_F(Activation, SoftmaxWithDtype) {
  expect_op_matches("aten::softmax",
                    [](const Inputs& in) { return at::softmax(arg(in, 0), 1, at::kDouble); },
                    {at::randn({2, 5, 3})});
}

TEST_F(Activation, SoftmaxOfZeroDimTensor) {
  expect_op_matches("aten::softmax", [](const Inputs& in) { return at::softmax(arg(in, 0), 0); },
                    {at::scalar_tensor(0.3)});
}

TEST_F(Activation, LogSoftmax) {
  for (int64_t dim : {0, -1}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::log_softmax",
                      [dim](const Inputs& in) { return at::log_softmax(arg(in, 0), dim); },
                      {at::randn({4, 3, 5})});
  }
  expect_op_matches("aten::log_softmax",
                    [](const Inputs& in) { return at::log_softmax(arg(in, 0), 1, at::kDouble); },
                    {at::randn({4, 3})});
}

}  // namespace
}  // namespace torchonnx::testing
