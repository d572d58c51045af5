// Numeric tests of the shape converters: view/reshape/flatten, cat/stack, transpose/permute/t,
// chunk/split, squeeze/unsqueeze, expand, select/slice, to/type_as.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

c10::IValue tuple(std::vector<at::Tensor> parts) {
  return c10::ivalue::Tuple::create(std::vector<c10::IValue>(parts.begin(), parts.end()));
}

class Shape : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- view / reshape / flatten
// -------------------------------------------------------------------

TEST_F(Shape, ViewWithInferredDim) {
  expect_op_matches("aten::view",
                    [](const Inputs& in) {
                      return arg(in, 0).view({-1, 4});
                    },
                    {at::randn({2, 3, 4})});
}

TEST_F(Shape, ViewOfSizeDerivedShape) {
  // In C++ x.size(0) is an int64_t: the trace holds a constant shape list.
  expect_op_matches("aten::view",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0);
                      return x.view({x.size(0), -1});
                    },
                    {at::randn({2, 3, 4})});
}

TEST_F(Shape, ViewOfInt64Tensor) {
  expect_op_matches("aten::view",
                    [](const Inputs& in) {
                      return arg(in, 0).view({3, 2});
                    },
                    {at::randint(-9, 9, {2, 3})});
}

TEST_F(Shape, ViewWithAZeroSizedDimNeedsOpset14) {
  auto fn = [](const Inputs& in) { return arg(in, 0).view({0, 6}); };
  Inputs inputs{at::randn({2, 0, 3})};
  expect_op_matches("aten::view", fn, inputs, 14, kMaxOpset);
  expect_export_fails(fn, inputs, 13, "allowzero");
}

TEST_F(Shape, ReshapeToZeroDim) {
  expect_op_matches("aten::reshape", [](const Inputs& in) { return arg(in, 0).reshape({}); },
                    {at::randn({1, 1})});
}

TEST_F(Shape, Reshape) {
  expect_op_matches("aten::reshape",
                    [](const Inputs& in) {
                      return arg(in, 0).reshape({4, -1});
                    },
                    {at::randn({2, 3, 4})});
}

TEST_F(Shape, ViewAsAndReshapeAs) {
  Inputs inputs{at::randn({2, 3, 4}), at::randn({6, 4})};
  expect_op_matches(
      "aten::view_as", [](const Inputs& in) { return arg(in, 0).view_as(arg(in, 1)); }, inputs);
  expect_op_matches(
      "aten::reshape_as", [](const Inputs& in) { return arg(in, 0).reshape_as(arg(in, 1)); },
      inputs);
}

TEST_F(Shape, FlattenVariants) {
  at::Tensor x = at::randn({2, 3, 4, 5});
  for (auto [start, end] : std::vector<std::pair<int64_t, int64_t>>{
           {1, -1}, {0, -1}, {1, 2}, {-3, -2}, {0, 1}, {2, 2}, {2, 3}}) {
    SCOPED_TRACE(::testing::Message() << "flatten(" << start << ", " << end << ")");
    expect_op_matches(
        "aten::flatten",
        [start = start, end = end](const Inputs& in) { return arg(in, 0).flatten(start, end); },
        {x});
  }
}

TEST_F(Shape, FlattenZeroDim) {
  expect_op_matches("aten::flatten", [](const Inputs& in) { return arg(in, 0).flatten(); },
                    {at::scalar_tensor(3.5)});
}

// ----- cat / stack
// --------------------------------------------------------------------------------

TEST_F(Shape, Cat) {
  expect_op_matches("aten::cat",
                    [](const Inputs& in) {
                      return at::cat({arg(in, 0), arg(in, 1)}, 1);
                    },
                    {at::randn({2, 3, 4}), at::randn({2, 1, 4})});
}

TEST_F(Shape, CatWithNegativeDim) {
  expect_op_matches("aten::cat",
                    [](const Inputs& in) {
                      return at::cat({arg(in, 0), arg(in, 1)}, -1);
                    },
                    {at::randn({2, 3, 4}), at::randn({2, 3, 2})});
}

TEST_F(Shape, CatOfInt64AndOneTensor) {
  expect_op_matches("aten::cat",
                    [](const Inputs& in) {
                      return at::cat({arg(in, 0), arg(in, 1)}, -2);
                    },
                    {at::randint(-9, 9, {1, 3}), at::randint(-9, 9, {2, 3})});
  expect_op_matches("aten::cat", [](const Inputs& in) { return at::cat({arg(in, 0)}, 0) * 2; },
                    {at::randn({2, 3})});
}

TEST_F(Shape, Stack) {
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::stack",
                      [dim](const Inputs& in) {
                        return at::stack({arg(in, 0), arg(in, 1), arg(in, 0)}, dim);
                      },
                      {at::randn({2, 3}), at::randn({2, 3})});
  }
}

// ----- transpose / permute / t
// --------------------------------------------------------------------

TEST_F(Shape, Transpose) {
  for (auto [d0, d1] : std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {-1, -2}, {1, 1}}) {
    SCOPED_TRACE(::testing::Message() << "transpose(" << d0 << ", " << d1 << ")");
    expect_op_matches(
        "aten::transpose",
        [d0 = d0, d1 = d1](const Inputs& in) { return arg(in, 0).transpose(d0, d1) * 2; },
        {at::randn({2, 3, 4})});
  }
}

TEST_F(Shape, PermuteWithNegativeDims) {
  expect_op_matches("aten::permute",
                    [](const Inputs& in) {
                      return arg(in, 0).permute({-1, 0, 1});
                    },
                    {at::randn({2, 3, 4})});
}

TEST_F(Shape, T) {
  expect_op_matches("aten::t", [](const Inputs& in) { return arg(in, 0).t(); },
                    {at::randn({2, 3})});
  expect_op_matches("aten::t", [](const Inputs& in) { return arg(in, 0).t() + 1; },
                    {at::randn({4})});
}

// ----- chunk / split
// ------------------------------------------------------------------------------

TEST_F(Shape, ChunkUneven) {
  expect_op_matches("aten::chunk",
                    [](const Inputs& in) {
                      auto parts = at::chunk(arg(in, 0), 3, 1);  // 3, 3, 1
                      return tuple(parts);
                    },
                    {at::randn({2, 7})});
}

TEST_F(Shape, ChunkGivesFewerPiecesThanAsked) {
  expect_op_matches("aten::chunk",
                    [](const Inputs& in) {
                      auto parts = at::chunk(arg(in, 0), 4, -1);  // 2, 2, 1
                      EXPECT_EQ(parts.size(), 3u);
                      return tuple(parts);
                    },
                    {at::randn({3, 5})});
}

TEST_F(Shape, SplitBySize) {
  expect_op_matches("aten::split",
                    [](const Inputs& in) { return tuple(at::split(arg(in, 0), 3, 0)); },
                    {at::randn({8, 2})});
}

TEST_F(Shape, SplitBySizes) {
  expect_op_matches("aten::split",
                    [](const Inputs& in) {
                      return tuple(at::split(arg(in, 0), {1, 4, 3}, -1));
                    },
                    {at::randn({2, 8})});
}

TEST_F(Shape, SplitWithSizes) {
  expect_op_matches("aten::split_with_sizes",
                    [](const Inputs& in) {
                      return tuple(at::split_with_sizes(arg(in, 0), {2, 1}, 1));
                    },
                    {at::randint(-9, 9, {2, 3, 2})});
}

// ----- squeeze / unsqueeze
// ------------------------------------------------------------------------

TEST_F(Shape, Unsqueeze) {
  for (int64_t dim : {0, 2, -1, -3}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::unsqueeze",
                      [dim](const Inputs& in) { return arg(in, 0).unsqueeze(dim); },
                      {at::randn({2, 3})});
  }
}

TEST_F(Shape, UnsqueezeZeroDim) {
  expect_op_matches("aten::unsqueeze", [](const Inputs& in) { return arg(in, 0).unsqueeze(-1); },
                    {at::scalar_tensor(2.0)});
}

TEST_F(Shape, SqueezeAllSizeOneDims) {
  expect_op_matches("aten::squeeze", [](const Inputs& in) { return arg(in, 0).squeeze(); },
                    {at::randn({1, 3, 1, 2})});
}

TEST_F(Shape, SqueezeDim) {
  for (int64_t dim : {0, 2, -2, 1, -1}) {  // 1 and -1 are dims of size 3 and 2: no-ops
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::squeeze",
                      [dim](const Inputs& in) { return arg(in, 0).squeeze(dim) * 3; },
                      {at::randn({1, 3, 1, 2})});
  }
}

// ----- expand
// -------------------------------------------------------------------------------------

TEST_F(Shape, Expand) {
  expect_op_matches("aten::expand",
                    [](const Inputs& in) {
                      return arg(in, 0).expand({2, -1, 4});
                    },
                    {at::randn({3, 1})});
}

TEST_F(Shape, ExpandBoolAndInt64) {
  expect_op_matches("aten::expand",
                    [](const Inputs& in) {
                      return arg(in, 0).expand({3, 2});
                    },
                    {at::randn({1, 2}) > 0});
  expect_op_matches("aten::expand",
                    [](const Inputs& in) {
                      return arg(in, 0).expand({2, 2, 3});
                    },
                    {at::randint(-5, 5, {3})});
}

TEST_F(Shape, ExpandAs) {
  expect_op_matches("aten::expand_as",
                    [](const Inputs& in) { return arg(in, 0).expand_as(arg(in, 1)); },
                    {at::randn({2, 1}), at::randn({3, 2, 5})});
}

// ----- select / slice
// -----------------------------------------------------------------------------

TEST_F(Shape, Select) {
  for (auto [dim, index] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {-1, 0}}) {
    SCOPED_TRACE(::testing::Message() << "select(" << dim << ", " << index << ")");
    expect_op_matches(
        "aten::select",
        [dim = dim, index = index](const Inputs& in) { return arg(in, 0).select(dim, index); },
        {at::randn({2, 3, 4})});
  }
}

TEST_F(Shape, SelectWithNegativeIndex) {
  expect_op_matches("aten::select", [](const Inputs& in) { return arg(in, 0).select(1, -1); },
                    {at::randn({2, 3, 4})});
}

TEST_F(Shape, SliceWithoutStep) {
  // start/end beyond the size and negative are clamped / counted from the end, as in PyTorch.
  for (auto [start, end] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {-3, -1}, {2, 100}, {0, -2}}) {
    SCOPED_TRACE(::testing::Message() << "slice(" << start << ", " << end << ")");
    expect_op_matches(
        "aten::slice",
        [start = start, end = end](const Inputs& in) { return arg(in, 0).slice(1, start, end); },
        {at::randn({2, 5, 3})});
  }
}

TEST_F(Shape, SliceToTheEnd) {
  expect_op_matches("aten::slice",
                    [](const Inputs& in) {
                      using at::indexing::Slice;
                      return arg(in, 0).index({Slice(), Slice(2)});
                    },
                    {at::randn({2, 5})});
}

TEST_F(Shape, SliceWithStepNeedsOpset10) {
  auto fn = [](const Inputs& in) { return arg(in, 0).slice(-1, 1, 7, 2); };
  Inputs inputs{at::randn({3, 8})};
  expect_op_matches("aten::slice", fn, inputs, 10, kMaxOpset);
  expect_export_fails(fn, inputs, 9, "opset 10");
}

// ----- to / type_as
// -------------------------------------------------------------------------------

TEST_F(Shape, ToDtype) {
  at::Tensor x = at::randn({3, 4}) * 5;
  for (at::ScalarType t : {at::kLong, at::kDouble, at::kInt, at::kFloat}) {
    SCOPED_TRACE(toString(t));
    expect_op_matches("aten::to", [t](const Inputs& in) { return arg(in, 0).to(t); }, {x});
  }
}

TEST_F(Shape, ToBool) {
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kBool); },
                    {at::tensor({0.0, 1.5, -2.0, 0.0})});
}

TEST_F(Shape, Int64ToFloat) {
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kFloat) / 2; },
                    {at::randint(-9, 9, {5})});
}

TEST_F(Shape, ToTheDtypeOfAnotherTensor) {
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(arg(in, 1)); },
                    {at::randn({3}) * 5, at::randint(0, 3, {2})});
}

TEST_F(Shape, TypeAs) {
  expect_op_matches("aten::type_as",
                    [](const Inputs& in) { return arg(in, 0).type_as(arg(in, 1)); },
                    {at::randint(-9, 9, {2, 3}), at::randn({1})});
}

}  // namespace
}  // namespace torchonnx::testing
