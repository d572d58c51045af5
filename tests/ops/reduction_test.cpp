// Numeric tests of the reduction converters: mean and sum over all dims or some, keepdim, dtype.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Reduction : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Reduction, MeanOverAllDims) {
  expect_op_matches("aten::mean", [](const Inputs& in) { return at::mean(arg(in, 0)); },
                    {at::randn({2, 3, 4})});
}

TEST_F(Reduction, MeanOverAllDimsWithDtype) {
  expect_op_matches("aten::mean",
                    [](const Inputs& in) { return at::mean(arg(in, 0), at::kDouble); },
                    {at::randn({2, 3, 4})});
}

TEST_F(Reduction, MeanOverDims) {
  at::Tensor x = at::randn({2, 3, 4, 5});
  for (bool keepdim : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {-1}, {0, 2}, {-1, -3}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dims " << at::IntArrayRef(dims) << " keepdim " << keepdim);
      expect_op_matches(
          "aten::mean",
          [dims, keepdim](const Inputs& in) { return at::mean(arg(in, 0), dims, keepdim); }, {x});
    }
  }
}

TEST_F(Reduction, MeanOverDimsWithDtype) {
  expect_op_matches("aten::mean",
                    [](const Inputs& in) {
                      return at::mean(arg(in, 0), {2, 3}, true, at::kDouble);
                    },
                    {at::randn({2, 3, 4, 5})});
}

TEST_F(Reduction, SumOverAllDims) {
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0)); },
                    {at::randn({2, 3, 4})});
}

TEST_F(Reduction, SumOverDims) {
  at::Tensor x = at::randn({2, 3, 4, 5});
  for (bool keepdim : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {-2}, {1, 3}, {-1, 0}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dims " << at::IntArrayRef(dims) << " keepdim " << keepdim);
      expect_op_matches(
          "aten::sum",
          [dims, keepdim](const Inputs& in) { return at::sum(arg(in, 0), dims, keepdim); }, {x});
    }
  }
}

TEST_F(Reduction, SumOverAnEmptyDimListIsOverAllDims) {
  for (bool keepdim : {false, true}) {
    expect_op_matches(
        "aten::sum",
        [keepdim](const Inputs& in) { return at::sum(arg(in, 0), at::IntArrayRef{}, keepdim); },
        {at::randn({2, 3})});
  }
}

TEST_F(Reduction, SumWithDtype) {
  expect_op_matches("aten::sum",
                    [](const Inputs& in) { return at::sum(arg(in, 0), {1}, false, at::kDouble); },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0), at::kFloat); },
                    {at::randint(-9, 9, {2, 3})});
}

TEST_F(Reduction, SumOfInt64) {
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0), {0}); },
                    {at::randint(-9, 9, {4, 3})});
}

TEST_F(Reduction, SumOfInt32AndBoolIsInt64) {
  // PyTorch sums integral and bool tensors in int64.
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0)); },
                    {at::randint(-9, 9, {4, 3}, at::kInt)});
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0), {1}); },
                    {at::randn({4, 3}) > 0});
}

TEST_F(Reduction, ReductionsOfAZeroDimTensor) {
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0)); },
                    {at::scalar_tensor(2.5)});
  expect_op_matches("aten::mean", [](const Inputs& in) { return at::mean(arg(in, 0)); },
                    {at::scalar_tensor(2.5)});
}

}  // namespace
}  // namespace torchonnx::testing
