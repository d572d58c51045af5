// Numeric tests of the matrix-product converters: linear, addmm, matmul, mm, bmm.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Linear : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Linear, LinearOn2dInputWithBias) {
  at::Tensor w = at::randn({5, 4}), b = at::randn({5});
  expect_op_matches("aten::linear",
                    [w, b](const Inputs& in) { return at::linear(arg(in, 0), w, b); },
                    {at::randn({3, 4})}, kMinOpset, kMaxOpset, {{"weight", w}, {"bias", b}});
}

TEST_F(Linear, LinearOn2dInputWithoutBias) {
  // Gemm without C from opset 11, MatMul before.
  at::Tensor w = at::randn({5, 4});
  expect_op_matches("aten::linear", [w](const Inputs& in) { return at::linear(arg(in, 0), w); },
                    {at::randn({3, 4})}, kMinOpset, kMaxOpset, {{"weight", w}});
}

TEST_F(Linear, LinearOnBatchedAnd1dInput) {
  at::Tensor w = at::randn({5, 4}), b = at::randn({5});
  auto fn = [w, b](const Inputs& in) { return at::linear(arg(in, 0), w, b); };
  NamedTensors params{{"weight", w}, {"bias", b}};
  expect_op_matches("aten::linear", fn, {at::randn({2, 3, 4})}, kMinOpset, kMaxOpset, params);
  expect_op_matches("aten::linear", fn, {at::randn({4})}, kMinOpset, kMaxOpset, params);
}

TEST_F(Linear, LinearWithWeightAsInput) {
  expect_op_matches("aten::linear",
                    [](const Inputs& in) { return at::linear(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}), at::randn({6, 4})});
}

TEST_F(Linear, Addmm) {
  expect_op_matches("aten::addmm",
                    [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {at::randn({3, 5}), at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, AddmmWithBetaAlphaAndBroadcastBias) {
  expect_op_matches(
      "aten::addmm",
      [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2), 0.5, -2.0); },
      {at::randn({5}), at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, Matmul) {
  struct Case {
    std::vector<int64_t> a, b;
  };
  for (const auto& c : std::vector<Case>{{{3, 4}, {4, 5}},
                                         {{4}, {4, 5}},
                                         {{3, 4}, {4}},
                                         {{4}, {4}},
                                         {{2, 3, 4}, {4, 5}},
                                         {{2, 1, 3, 4}, {5, 4, 2}}}) {
    SCOPED_TRACE(::testing::Message() << at::IntArrayRef(c.a) << " @ " << at::IntArrayRef(c.b));
    expect_op_matches("aten::matmul",
                      [](const Inputs& in) { return at::matmul(arg(in, 0), arg(in, 1)); },
                      {at::randn(c.a), at::randn(c.b)});
  }
}

TEST_F(Linear, Mm) {
  expect_op_matches("aten::mm", [](const Inputs& in) { return at::mm(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::randn({4, 2})});
}

TEST_F(Linear, Bmm) {
  expect_op_matches("aten::bmm", [](const Inputs& in) { return at::bmm(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}), at::randn({2, 4, 5})});
}

}  // namespace
}  // namespace torchonnx::testing
