// Numeric tests of the convolution converters. Tracing records every at::conv*d, conv_transpose*d
// and at::convolution call as aten::_convolution (padding="same"/"valid" as
// aten::_convolution_mode); aten::convolution and aten::conv{1,2,3}d come from TorchScript.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Conv : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Conv, Conv2dWithBias) {
  at::Tensor w = at::randn({4, 3, 3, 3}), b = at::randn({4});
  expect_op_matches(
      "aten::_convolution", [w, b](const Inputs& in) { return at::conv2d(arg(in, 0), w, b); },
      {at::randn({2, 3, 8, 8})}, kMinOpset, highest_opset(), {{"weight", w}, {"bias", b}});
}

TEST_F(Conv, Conv2dStridePaddingDilation) {
  at::Tensor w = at::randn({4, 3, 3, 2});
  expect_op_matches("aten::_convolution",
                    [w](const Inputs& in) {
                      return at::conv2d(arg(in, 0), w, {}, {2, 1}, {1, 2}, {2, 1});
                    },
                    {at::randn({1, 3, 9, 7})}, kMinOpset, highest_opset(), {{"weight", w}});
}

TEST_F(Conv, Conv2dGroups) {
  at::Tensor grouped = at::randn({6, 2, 3, 3}), depthwise = at::randn({4, 1, 3, 3});
  expect_op_matches("aten::_convolution",
                    [grouped](const Inputs& in) {
                      return at::conv2d(arg(in, 0), grouped, {}, 1, 1, 1, /*groups=*/2);
                    },
                    {at::randn({1, 4, 6, 6})}, kMinOpset, highest_opset(), {{"weight", grouped}});
  expect_op_matches("aten::_convolution",
                    [depthwise](const Inputs& in) {
                      return at::conv2d(arg(in, 0), depthwise, {}, 2, 1, 1, /*groups=*/4);
                    },
                    {at::randn({1, 4, 6, 6})}, kMinOpset, highest_opset(), {{"weight", depthwise}});
}

TEST_F(Conv, Conv1dAndConv3d) {
  at::Tensor w1 = at::randn({4, 2, 3}), b1 = at::randn({4});
  expect_op_matches("aten::_convolution",
                    [w1, b1](const Inputs& in) { return at::conv1d(arg(in, 0), w1, b1, 2, 1); },
                    {at::randn({2, 2, 9})}, kMinOpset, highest_opset(), {{"w", w1}, {"b", b1}});
  at::Tensor w3 = at::randn({3, 2, 2, 3, 2});
  expect_op_matches("aten::_convolution",
                    [w3](const Inputs& in) {
                      return at::conv3d(arg(in, 0), w3, {}, {1, 2, 1}, {1, 0, 1});
                    },
                    {at::randn({1, 2, 4, 5, 4})}, kMinOpset, highest_opset(), {{"w", w3}});
}

TEST_F(Conv, AtConvolution) {
  at::Tensor w = at::randn({4, 3, 3, 3});
  expect_op_matches(
      "aten::_convolution",
      [w](const Inputs& in) {
        return at::convolution(arg(in, 0), w, {}, {1, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1);
      },
      {at::randn({1, 3, 6, 6})}, kMinOpset, highest_opset(), {{"weight", w}});
}

TEST_F(Conv, ConvTranspose2d) {
  // Weight layout (in, out / groups, kH, kW).
  at::Tensor w = at::randn({4, 3, 3, 3}), b = at::randn({3});
  expect_op_matches("aten::_convolution",
                    [w, b](const Inputs& in) {
                      return at::conv_transpose2d(arg(in, 0), w, b, /*stride=*/2, /*padding=*/1,
                                                  /*output_padding=*/1);
                    },
                    {at::randn({1, 4, 5, 5})}, kMinOpset, highest_opset(), {{"w", w}, {"b", b}});
}

TEST_F(Conv, ConvTranspose2dGroupsAndDilation) {
  at::Tensor w = at::randn({4, 3, 2, 3});
  expect_op_matches("aten::_convolution",
                    [w](const Inputs& in) {
                      return at::conv_transpose2d(arg(in, 0), w, {}, {2, 3}, {0, 1}, {1, 2},
                                                  /*groups=*/2, /*dilation=*/{2, 1});
                    },
                    {at::randn({1, 4, 4, 3})}, kMinOpset, highest_opset(), {{"w", w}});
}

TEST_F(Conv, ConvTranspose1dAnd3d) {
  at::Tensor w1 = at::randn({2, 3, 4});
  expect_op_matches("aten::_convolution",
                    [w1](const Inputs& in) { return at::conv_transpose1d(arg(in, 0), w1, {}, 3); },
                    {at::randn({1, 2, 5})}, kMinOpset, highest_opset(), {{"w", w1}});
  at::Tensor w3 = at::randn({2, 2, 2, 2, 2}), b3 = at::randn({2});
  expect_op_matches(
      "aten::_convolution",
      [w3, b3](const Inputs& in) { return at::conv_transpose3d(arg(in, 0), w3, b3, 2, 0, 1); },
      {at::randn({1, 2, 3, 2, 3})}, kMinOpset, highest_opset(), {{"w", w3}, {"b", b3}});
}

TEST_F(Conv, Conv2dPaddingSameAndValid) {
  // An even kernel with dilation: PyTorch pads d·(k−1) = 6 as 3 before, 3 after; k = 4 pads 1, 2.
  at::Tensor w = at::randn({2, 3, 4, 3}), b = at::randn({2});
  for (const char* padding : {"same", "valid"}) {
    SCOPED_TRACE(padding);
    expect_op_matches("aten::_convolution_mode",
                      [w, b, padding](const Inputs& in) {
                        return at::conv2d(arg(in, 0), w, b, 1, padding, {2, 1});
                      },
                      {at::randn({1, 3, 9, 8})}, kMinOpset, highest_opset(), {{"w", w}, {"b", b}});
    expect_op_matches(
        "aten::_convolution_mode",
        [w, padding](const Inputs& in) { return at::conv2d(arg(in, 0), w, {}, 1, padding); },
        {at::randn({1, 3, 7, 6})}, kMinOpset, highest_opset(), {{"w", w}});
  }
}

TEST_F(Conv, Conv1dAndConv3dPaddingSame) {
  at::Tensor w1 = at::randn({3, 2, 4}), w3 = at::randn({2, 2, 3, 2, 1});
  expect_op_matches("aten::_convolution_mode",
                    [w1](const Inputs& in) { return at::conv1d(arg(in, 0), w1, {}, 1, "same"); },
                    {at::randn({1, 2, 7})}, kMinOpset, highest_opset(), {{"w", w1}});
  expect_op_matches("aten::_convolution_mode",
                    [w3](const Inputs& in) { return at::conv3d(arg(in, 0), w3, {}, 1, "same"); },
                    {at::randn({1, 2, 4, 5, 3})}, kMinOpset, highest_opset(), {{"w", w3}});
}

TEST_F(Conv, ScriptedConvTranspose1d2d3d) {
  // conv_transpose*d(input, weight, bias, stride, padding, output_padding, groups, dilation)
  expect_script_matches("aten::conv_transpose1d",
                        "def forward(self, x, w, b):\n"
                        "  return torch.conv_transpose1d(x, w, b, [2], [1], [1], 2, [2])\n",
                        {at::randn({2, 4, 5}), at::randn({4, 3, 3}), at::randn({6})});
  expect_script_matches("aten::conv_transpose2d",
                        "def forward(self, x, w):\n"
                        "  return torch.conv_transpose2d(x, w, None, [2, 3], [1, 0], [1, 2], 1, "
                        "[1, 2])\n",
                        {at::randn({2, 3, 4, 5}), at::randn({3, 2, 3, 2})});
  expect_script_matches("aten::conv_transpose3d",
                        "def forward(self, x, w, b):\n"
                        "  return torch.conv_transpose3d(x, w, b, 2, 1, 1, 1, 1)\n",
                        {at::randn({1, 2, 3, 2, 3}), at::randn({2, 3, 3, 2, 3}), at::randn({3})});
}

TEST_F(Conv, ScriptedUnbatchedConv) {
  // conv2d accepts (C, H, W): a batch dim of 1 is added around Conv.
  expect_script_matches(
      "aten::conv2d",
      "def forward(self, x, w, b):\n  return torch.conv2d(x, w, b, [1], [1], [1], 1)\n",
      {at::randn({3, 6, 5}), at::randn({4, 3, 3, 3}), at::randn({4})});
  expect_script_matches(
      "aten::conv1d",
      "def forward(self, x, w):\n  return torch.conv1d(x, w, None, [1], 'same', [1], 1)\n",
      {at::randn({2, 7}), at::randn({3, 2, 4})});
  expect_script_matches("aten::conv_transpose2d",
                        "def forward(self, x, w):\n"
                        "  return torch.conv_transpose2d(x, w, None, 2, 0, 1, 1, 1)\n",
                        {at::randn({3, 4, 4}), at::randn({3, 2, 2, 2})});
}

TEST_F(Conv, ConvTbc) {
  // Input (time, batch, in), weight (kernel, in, out), bias (out).
  at::Tensor w = at::randn({3, 4, 5}), b = at::randn({5});
  for (int64_t pad : {0, 2}) {
    SCOPED_TRACE(pad);
    expect_op_matches("aten::conv_tbc",
                      [w, b, pad](const Inputs& in) { return at::conv_tbc(arg(in, 0), w, b, pad); },
                      {at::randn({7, 2, 4})}, kMinOpset, highest_opset(), {{"w", w}, {"b", b}});
  }
}

TEST_F(Conv, IntegerConvolutionIsRefused) {
  // ONNX Conv takes float types only; PyTorch convolves int64 on the CPU.
  at::Tensor w = at::ones({2, 3, 2, 2}, at::kLong);
  expect_export_fails([w](const Inputs& in) { return at::conv2d(arg(in, 0), w); },
                      {at::arange(48, at::kLong).reshape({1, 3, 4, 4})}, 13, "float",
                      ErrorCode::kConversion, {{"w", w}});
}

// ----- TorchScript: aten::conv{1,2,3}d and aten::convolution ------------------------------------

TEST_F(Conv, ScriptedConv1d2d3d) {
  expect_script_matches(
      "aten::conv1d",
      "def forward(self, x, w, b):\n  return torch.conv1d(x, w, b, [2], [1], [1], 2)\n",
      {at::randn({1, 4, 9}), at::randn({6, 2, 3}), at::randn({6})});
  expect_script_matches(
      "aten::conv2d",
      "def forward(self, x, w):\n  return torch.conv2d(x, w, None, [1, 2], [2, 1], [2, 1], 2)\n",
      {at::randn({1, 4, 8, 8}), at::randn({4, 2, 3, 3})});
  expect_script_matches(
      "aten::conv3d",
      "def forward(self, x, w):\n  return torch.conv3d(x, w, None, [1], [1], [1], 1)\n",
      {at::randn({1, 2, 4, 4, 4}), at::randn({3, 2, 3, 3, 3})});
}

TEST_F(Conv, ScriptedConvWithStringPadding) {
  for (const char* padding : {"same", "valid"}) {
    SCOPED_TRACE(padding);
    expect_script_matches("aten::conv2d",
                          std::string("def forward(self, x, w):\n"
                                      "  return torch.conv2d(x, w, None, [1], '") +
                              padding + "', [1, 2], 1)\n",
                          {at::randn({1, 2, 6, 7}), at::randn({3, 2, 2, 3})});
    expect_script_matches("aten::conv1d",
                          std::string("def forward(self, x, w):\n"
                                      "  return torch.conv1d(x, w, None, [1], '") +
                              padding + "', [1], 1)\n",
                          {at::randn({1, 2, 6}), at::randn({3, 2, 4})});
    expect_script_matches("aten::conv3d",
                          std::string("def forward(self, x, w):\n"
                                      "  return torch.conv3d(x, w, None, [1], '") +
                              padding + "', [1, 2, 1], 1)\n",
                          {at::randn({1, 2, 4, 6, 3}), at::randn({3, 2, 2, 3, 2})});
  }
}

TEST_F(Conv, ScriptedConvolution) {
  expect_script_matches("aten::convolution",
                        "def forward(self, x, w, b):\n"
                        "  return torch.convolution(x, w, b, [2, 2], [1, 1], [1, 1], False, "
                        "[0, 0], 1)\n",
                        {at::randn({1, 3, 7, 7}), at::randn({4, 3, 3, 3}), at::randn({4})});
  expect_script_matches("aten::convolution",
                        "def forward(self, x, w):\n"
                        "  return torch.convolution(x, w, None, [2, 2], [1, 1], [1, 1], True, "
                        "[1, 1], 1)\n",
                        {at::randn({1, 3, 4, 4}), at::randn({3, 2, 3, 3})});
}

}  // namespace
}  // namespace torchonnx::testing
