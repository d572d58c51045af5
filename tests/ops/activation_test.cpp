// Numeric tests of the activation converters: export at every opset, run in ORT, compare.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "support/harness.h"

namespace torchonnx::testing {
namespace {

using Inputs = std::vector<c10::IValue>;

at::Tensor arg(const Inputs& in, size_t i) { return in.at(i).toTensor(); }

TEST(Activation, Relu) {
  expect_matches_at_opsets([](const Inputs& in) { return at::relu(arg(in, 0)); },
                           {at::randn({2, 3, 4})});
}

TEST(Activation, HardswishAcrossTheOpset14Change) {
  expect_matches_at_opsets([](const Inputs& in) { return at::hardswish(arg(in, 0)); },
                           {at::randn({2, 8}) * 4});
}

TEST(Activation, Hardtanh) {
  expect_matches_at_opsets([](const Inputs& in) { return at::hardtanh(arg(in, 0), -0.5, 2.0); },
                           {at::randn({3, 5}) * 3});
}

TEST(Activation, GeluBothApproximations) {
  for (const char* approximate : {"none", "tanh"}) {
    expect_matches_at_opsets(
        [approximate](const Inputs& in) { return at::gelu(arg(in, 0), approximate); },
        {at::randn({4, 6})});
  }
}

TEST(Activation, SoftmaxOverANonLastDim) {
  expect_matches_at_opsets([](const Inputs& in) { return at::softmax(arg(in, 0), 1); },
                           {at::randn({2, 5, 3})});
}

}  // namespace
}  // namespace torchonnx::testing
