// Numeric tests of the reduction converters: sum, mean, prod, amax/amin/aminmax, max/min (all
// overloads), argmax/argmin, all/any, logsumexp, cumsum, count_nonzero, nansum/nanmean,
// sum_to_size; float, int64 and bool inputs, keepdim, negative dims, 0-d tensors, dtype arguments.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

using TensorPair = std::tuple<at::Tensor, at::Tensor>;

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

// ----- sum / mean: more overloads -------------------------------------------------------------

TEST_F(Reduction, SumOfBoolOverAllDimsAndWithDtype) {
  expect_op_matches("aten::sum", [](const Inputs& in) { return at::sum(arg(in, 0)); },
                    {at::randn({3, 4}) > 0});
  expect_op_matches("aten::sum",
                    [](const Inputs& in) { return at::sum(arg(in, 0), {0}, true, at::kFloat); },
                    {at::randn({3, 4}) > 0});
}

TEST_F(Reduction, SumAndMeanWithDimNoneInScript) {
  expect_script_matches("aten::sum",
                        "def forward(self, x):\n  return torch.sum(x, dim=None, keepdim=True)\n",
                        {at::randn({2, 3, 4})});
  expect_script_matches("aten::mean", "def forward(self, x):\n  return torch.mean(x, dim=None)\n",
                        {at::randn({2, 3, 4})});
}

TEST_F(Reduction, SumWithANarrowDtypeWraps) {
  // The input is cast to the dtype first and summed in it, wrapping around (computed in int64
  // here and cast back: the same result modulo 2^8).
  expect_op_matches("aten::sum",
                    [](const Inputs& in) { return at::sum(arg(in, 0), {1}, false, at::kChar); },
                    {at::randint(-100, 100, {3, 6})});
  expect_op_matches("aten::prod",
                    [](const Inputs& in) { return at::prod(arg(in, 0), 0, false, at::kByte); },
                    {at::randint(1, 20, {4, 3})});
}

TEST_F(Reduction, MeanOfIntegersWithDtype) {
  expect_op_matches("aten::mean",
                    [](const Inputs& in) { return at::mean(arg(in, 0), {1}, false, at::kFloat); },
                    {at::randint(-9, 9, {3, 4})});
}

TEST_F(Reduction, SumOverDimZeroOfAZeroDimTensor) {
  for (bool keepdim : {false, true}) {
    expect_op_matches("aten::sum",
                      [keepdim](const Inputs& in) { return at::sum(arg(in, 0), {-1}, keepdim); },
                      {at::scalar_tensor(-3.5)});
  }
}

// ----- prod ------------------------------------------------------------------------------------

TEST_F(Reduction, ProdOverAllDims) {
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0)); },
                    {at::rand({2, 3}) + 0.5});
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0)); },
                    {at::randint(-4, 4, {2, 3})});
  // prod of bool is int64
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0)); },
                    {at::ones({2, 3}, at::kBool)});
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0)); },
                    {at::randn({4}) > 0});
}

TEST_F(Reduction, ProdOverADim) {
  at::Tensor x = at::rand({2, 3, 4}) + 0.5;
  for (bool keepdim : {false, true}) {
    for (int64_t dim : {0, 2, -2}) {
      SCOPED_TRACE(::testing::Message() << "dim " << dim << " keepdim " << keepdim);
      expect_op_matches(
          "aten::prod",
          [dim, keepdim](const Inputs& in) { return at::prod(arg(in, 0), dim, keepdim); }, {x});
    }
  }
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0), 1, true); },
                    {at::randint(-5, 5, {3, 4}, at::kInt)});
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0), -1); },
                    {at::randn({3, 4}) > -1});
}

TEST_F(Reduction, ProdWithDtype) {
  expect_op_matches("aten::prod",
                    [](const Inputs& in) { return at::prod(arg(in, 0), at::kDouble); },
                    {at::randint(-4, 4, {2, 3})});
  expect_op_matches("aten::prod",
                    [](const Inputs& in) { return at::prod(arg(in, 0), 0, false, at::kLong); },
                    {at::rand({3, 2}) * 4});
}

TEST_F(Reduction, ProdOfAZeroDimTensor) {
  expect_op_matches("aten::prod", [](const Inputs& in) { return at::prod(arg(in, 0), 0, true); },
                    {at::scalar_tensor(4.0)});
}

// ----- amax / amin / aminmax ---------------------------------------------------------------------

TEST_F(Reduction, AmaxAminOverDims) {
  at::Tensor x = at::randn({2, 3, 4});
  for (bool keepdim : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {1}, {-1}, {0, 2}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dims " << at::IntArrayRef(dims) << " keepdim " << keepdim);
      expect_op_matches(
          "aten::amax",
          [dims, keepdim](const Inputs& in) { return at::amax(arg(in, 0), dims, keepdim); }, {x});
      expect_op_matches(
          "aten::amin",
          [dims, keepdim](const Inputs& in) { return at::amin(arg(in, 0), dims, keepdim); }, {x});
    }
  }
}

TEST_F(Reduction, AmaxAminOfIntegersAndBools) {
  for (at::Tensor x : {at::randint(-50, 50, {3, 4}), at::randint(-50, 50, {3, 4}, at::kInt),
                       at::randint(0, 200, {3, 4}, at::kByte),
                       at::randint(-50, 50, {3, 4}, at::kChar), at::randn({3, 4}) > 0}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type());
    expect_op_matches("aten::amax", [](const Inputs& in) { return at::amax(arg(in, 0), {1}); },
                      {x});
    expect_op_matches("aten::amin",
                      [](const Inputs& in) { return at::amin(arg(in, 0), {0}, true); }, {x});
  }
}

TEST_F(Reduction, Aminmax) {
  at::Tensor x = at::randn({3, 4});
  for (bool keepdim : {false, true}) {
    expect_op_matches("aten::aminmax",
                      [keepdim](const Inputs& in) -> c10::IValue {
                        return at::aminmax(arg(in, 0), c10::nullopt, keepdim);
                      },
                      {x});
    expect_op_matches(
        "aten::aminmax",
        [keepdim](const Inputs& in) -> c10::IValue { return at::aminmax(arg(in, 0), -1, keepdim); },
        {x});
  }
  expect_op_matches("aten::aminmax",
                    [](const Inputs& in) -> c10::IValue { return at::aminmax(arg(in, 0), 0); },
                    {at::randint(-9, 9, {3, 4})});
  expect_op_matches("aten::aminmax",
                    [](const Inputs& in) -> c10::IValue { return at::aminmax(arg(in, 0)); },
                    {at::randn({3, 4}) > 0});
}

// ----- max / min ---------------------------------------------------------------------------------

TEST_F(Reduction, NaNPropagatesThroughMaxMinAndIsTheirArgExtreme) {
  // PyTorch: max/min/amax/amin are NaN where a NaN is reduced, argmax/argmin point at it.
  const double nan = std::nan("");
  at::Tensor x = at::tensor({1.0, nan, 3.0, -1.0, 2.0, 0.5}, at::kFloat).reshape({2, 3});
  std::vector<std::pair<std::string, TracedFunction>> fns = {
      {"aten::max", [](const Inputs& in) -> c10::IValue { return at::max(arg(in, 0)); }},
      {"aten::amax", [](const Inputs& in) -> c10::IValue { return at::amax(arg(in, 0), {1}); }},
      {"aten::amin", [](const Inputs& in) -> c10::IValue { return at::amin(arg(in, 0), {0}); }},
      {"aten::min", [](const Inputs& in) -> c10::IValue { return at::min(arg(in, 0), 1); }},
      {"aten::max", [](const Inputs& in) -> c10::IValue { return at::max(arg(in, 0), 1, true); }},
      {"aten::argmax", [](const Inputs& in) -> c10::IValue { return at::argmax(arg(in, 0), 1); }},
      {"aten::argmin", [](const Inputs& in) -> c10::IValue { return at::argmin(arg(in, 0)); }},
      {"aten::aminmax", [](const Inputs& in) -> c10::IValue { return at::aminmax(arg(in, 0)); }},
      {"aten::max",
       [](const Inputs& in) -> c10::IValue {
         return at::max(arg(in, 0), at::flip(arg(in, 0), {1}));
       }},
  };
  for (const auto& [op, fn] : fns) {
    SCOPED_TRACE(op);
    expect_op_matches(op, fn, {x});
  }
}

TEST_F(Reduction, MaxMinOverAllDims) {
  for (at::Tensor x : {at::randn({2, 3, 4}), at::randint(-50, 50, {5}), at::randn({3, 2}) > 0,
                       at::scalar_tensor(1.5)}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " sizes " << x.sizes());
    expect_op_matches("aten::max", [](const Inputs& in) { return at::max(arg(in, 0)); }, {x});
    expect_op_matches("aten::min", [](const Inputs& in) { return at::min(arg(in, 0)); }, {x});
  }
}

TEST_F(Reduction, MaxMinAlongADimGiveValuesAndIndices) {
  for (at::Tensor x : {distinct({2, 3, 4}), distinct_longs({3, 5})}) {
    for (bool keepdim : {false, true}) {
      for (int64_t dim : {0, 1, -1}) {
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " keepdim " << keepdim);
        expect_op_matches("aten::max",
                          [dim, keepdim](const Inputs& in) -> c10::IValue {
                            return at::max(arg(in, 0), dim, keepdim);
                          },
                          {x});
        expect_op_matches("aten::min",
                          [dim, keepdim](const Inputs& in) -> c10::IValue {
                            return at::min(arg(in, 0), dim, keepdim);
                          },
                          {x});
      }
    }
  }
}

TEST_F(Reduction, MaxMinAlongADimOfBoolsAndTiesGiveTheFirstIndex) {
  // PyTorch and ONNX ArgMax/ArgMin (select_last_index=0) both pick the first extreme element.
  at::Tensor b = bools({0, 1, 1, 0, 0, 0}).reshape({2, 3});
  at::Tensor ties = longs({3, 7, 7, 1, -2, -2, 5, 5}).reshape({2, 4});
  for (at::Tensor x : {b, ties}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type());
    expect_op_matches("aten::max",
                      [](const Inputs& in) -> c10::IValue { return at::max(arg(in, 0), 1); }, {x});
    expect_op_matches("aten::min",
                      [](const Inputs& in) -> c10::IValue { return at::min(arg(in, 0), -1, true); },
                      {x});
  }
}

TEST_F(Reduction, MaxMinAlongADimOfAZeroDimTensor) {
  expect_op_matches("aten::max",
                    [](const Inputs& in) -> c10::IValue { return at::max(arg(in, 0), 0); },
                    {at::scalar_tensor(2.5)});
}

TEST_F(Reduction, MaxMinOfTwoTensorsPromote) {
  std::vector<Inputs> cases = {
      {at::randn({2, 3}), at::randn({3})},
      {at::randint(-9, 9, {2, 3}), at::randint(-9, 9, {2, 3})},
      {at::randint(-9, 9, {2, 3}, at::kInt), at::randint(-9, 9, {3})},
      {at::randint(-9, 9, {2, 3}), at::randn({2, 3})},
      {at::randn({4}) > 0, at::randn({4}) > 0},
      {at::randn({4}) > 0, at::randint(-2, 2, {4})},
      {at::randn({2, 3}), at::scalar_tensor(0.5, at::kDouble)},
  };
  for (const auto& inputs : cases) {
    SCOPED_TRACE(::testing::Message() << "dtypes " << inputs[0].toTensor().scalar_type() << ", "
                                      << inputs[1].toTensor().scalar_type());
    expect_op_matches(
        "aten::max", [](const Inputs& in) { return at::max(arg(in, 0), arg(in, 1)); }, inputs);
    expect_op_matches(
        "aten::min", [](const Inputs& in) { return at::min(arg(in, 0), arg(in, 1)); }, inputs);
  }
}

TEST_F(Reduction, MaxMinOfNarrowIntegersAreComputedWider) {
  // int8/uint8/int16 take a detour through int32 where ONNX (or ORT) lacks them.
  for (at::ScalarType t : {at::kByte, at::kChar, at::kShort}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << t);
    at::Tensor x = (at::randperm(12) + (t == at::kByte ? 0 : -6)).reshape({3, 4}).to(t);
    at::Tensor y = at::randint(0, 5, {4}).to(t);
    expect_op_matches("aten::max",
                      [](const Inputs& in) -> c10::IValue { return at::max(arg(in, 0), 1); }, {x});
    expect_op_matches("aten::min", [](const Inputs& in) { return at::min(arg(in, 0)); }, {x});
    expect_op_matches("aten::max", [](const Inputs& in) { return at::max(arg(in, 0), arg(in, 1)); },
                      {x, y});
    expect_op_matches("aten::min", [](const Inputs& in) { return at::min(arg(in, 0), arg(in, 1)); },
                      {x, y});
    expect_op_matches("aten::argmin",
                      [](const Inputs& in) { return at::argmin(arg(in, 0), 0, true); }, {x});
  }
}

// ----- argmax / argmin ---------------------------------------------------------------------------

TEST_F(Reduction, ArgmaxArgminOverTheFlattenedInput) {
  for (at::Tensor x : {distinct({2, 3, 4}), distinct_longs({3, 4})}) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " keepdim " << keepdim);
      expect_op_matches(
          "aten::argmax",
          [keepdim](const Inputs& in) { return at::argmax(arg(in, 0), c10::nullopt, keepdim); },
          {x});
      expect_op_matches(
          "aten::argmin",
          [keepdim](const Inputs& in) { return at::argmin(arg(in, 0), c10::nullopt, keepdim); },
          {x});
    }
  }
}

TEST_F(Reduction, ArgmaxArgminAlongADim) {
  // (PyTorch has no argmax/argmin of bool.)
  for (at::Tensor x :
       {distinct({2, 3, 4}), distinct_longs({3, 4}), at::randint(-50, 50, {3, 4}, at::kInt)}) {
    for (bool keepdim : {false, true}) {
      for (int64_t dim : {0, -1}) {
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " keepdim " << keepdim);
        expect_op_matches(
            "aten::argmax",
            [dim, keepdim](const Inputs& in) { return at::argmax(arg(in, 0), dim, keepdim); }, {x});
        expect_op_matches(
            "aten::argmin",
            [dim, keepdim](const Inputs& in) { return at::argmin(arg(in, 0), dim, keepdim); }, {x});
      }
    }
  }
}

TEST_F(Reduction, ArgmaxTiesGiveTheFirstIndex) {
  expect_op_matches("aten::argmax", [](const Inputs& in) { return at::argmax(arg(in, 0), 1); },
                    {longs({1, 5, 5, 0, 0, -1, 2, 2}).reshape({2, 4})});
  expect_op_matches("aten::argmin", [](const Inputs& in) { return at::argmin(arg(in, 0)); },
                    {longs({4, 1, 5, 1})});
}

TEST_F(Reduction, ArgmaxOfAZeroDimTensor) {
  expect_op_matches("aten::argmax", [](const Inputs& in) { return at::argmax(arg(in, 0)); },
                    {at::scalar_tensor(2.5)});
  expect_op_matches("aten::argmin", [](const Inputs& in) { return at::argmin(arg(in, 0), 0); },
                    {at::scalar_tensor(2.5)});
}

// ----- all / any ---------------------------------------------------------------------------------

TEST_F(Reduction, AllAnyOverAllDims) {
  for (at::Tensor x :
       {at::randn({3, 4}) > -1, at::ones({2, 2}, at::kBool), at::zeros({3}, at::kBool),
        at::randint(0, 3, {3, 4}), at::randint(0, 2, {3, 4}).to(at::kFloat),
        at::randint(0, 3, {5}, at::kByte), at::empty({0, 3}, at::kBool)}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " sizes " << x.sizes());
    expect_op_matches("aten::all", [](const Inputs& in) { return at::all(arg(in, 0)); }, {x});
    expect_op_matches("aten::any", [](const Inputs& in) { return at::any(arg(in, 0)); }, {x});
  }
}

TEST_F(Reduction, AllAnyAlongADim) {
  for (at::Tensor x : {at::randn({3, 4}) > -0.5, at::randint(0, 2, {3, 4}),
                       at::randn({3, 4}).relu(), at::randint(0, 2, {3, 4}, at::kByte)}) {
    for (bool keepdim : {false, true}) {
      for (int64_t dim : {0, -1}) {
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " keepdim " << keepdim);
        expect_op_matches(
            "aten::all",
            [dim, keepdim](const Inputs& in) { return at::all(arg(in, 0), dim, keepdim); }, {x});
        expect_op_matches(
            "aten::any",
            [dim, keepdim](const Inputs& in) { return at::any(arg(in, 0), dim, keepdim); }, {x});
      }
    }
  }
}

// ----- logsumexp ---------------------------------------------------------------------------------

TEST_F(Reduction, Logsumexp) {
  at::Tensor x = at::randn({2, 3, 4});
  for (bool keepdim : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {-1}, {0, 2}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dims " << at::IntArrayRef(dims) << " keepdim " << keepdim);
      expect_op_matches(
          "aten::logsumexp",
          [dims, keepdim](const Inputs& in) { return at::logsumexp(arg(in, 0), dims, keepdim); },
          {x});
    }
  }
}

TEST_F(Reduction, LogsumexpOfLargeValuesAndIntegers) {
  // exp(200) overflows float: the result needs the max-shifted form.
  expect_op_matches("aten::logsumexp",
                    [](const Inputs& in) { return at::logsumexp(arg(in, 0), {1}); },
                    {at::randn({3, 4}) + 200});
  // int64 inputs give the default float dtype
  expect_op_matches("aten::logsumexp",
                    [](const Inputs& in) { return at::logsumexp(arg(in, 0), {0}); },
                    {at::randint(-5, 5, {3, 4})});
}

// ----- cumsum ------------------------------------------------------------------------------------

TEST_F(Reduction, Cumsum) {
  at::Tensor x = at::randn({2, 3, 4});
  for (int64_t dim : {0, 1, 2, -1}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::cumsum",
                      [dim](const Inputs& in) { return at::cumsum(arg(in, 0), dim); }, {x});
  }
}

TEST_F(Reduction, CumsumOfIntegersAndBoolsIsInt64) {
  for (at::Tensor x : {at::randint(-100, 100, {3, 5}), at::randint(-100, 100, {3, 5}, at::kInt),
                       at::randn({3, 5}) > 0}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type());
    expect_op_matches("aten::cumsum", [](const Inputs& in) { return at::cumsum(arg(in, 0), 1); },
                      {x});
  }
}

TEST_F(Reduction, CumsumWithDtype) {
  expect_op_matches("aten::cumsum",
                    [](const Inputs& in) { return at::cumsum(arg(in, 0), 0, at::kDouble); },
                    {at::randint(-9, 9, {4, 2})});
  expect_op_matches("aten::cumsum",
                    [](const Inputs& in) { return at::cumsum(arg(in, 0), -1, at::kLong); },
                    {at::rand({2, 4}) * 10});
}

TEST_F(Reduction, CumsumOfAZeroDimTensor) {
  expect_op_matches("aten::cumsum", [](const Inputs& in) { return at::cumsum(arg(in, 0), 0); },
                    {at::scalar_tensor(3.0)});
}

// ----- count_nonzero / nansum / nanmean / sum_to_size -----------------------------------------

// Floats with zeros, NaN and infinities among them.
at::Tensor with_zeros_and_nan(std::vector<int64_t> shape) {
  at::Tensor x = at::randn(shape);
  x.masked_fill_(at::rand(shape) < 0.3, 0.0);
  x.view(-1)[1] = kNaN;
  x.view(-1)[2] = kInf;
  x.view(-1)[4] = -kInf;
  return x;
}

TEST_F(Reduction, CountNonzero) {
  for (const at::Tensor& x :
       {with_zeros_and_nan({3, 4, 5}), at::randint(-2, 3, {3, 4, 5}), at::randn({3, 4, 5}) > 0.5}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type());
    expect_op_matches("aten::count_nonzero",
                      [](const Inputs& in) { return at::count_nonzero(arg(in, 0)); }, {x});
    for (int64_t dim : {0, -1, 1}) {
      expect_op_matches("aten::count_nonzero",
                        [dim](const Inputs& in) {
                          return at::count_nonzero(arg(in, 0), c10::optional<int64_t>(dim));
                        },
                        {x});
    }
    for (std::vector<int64_t> dims : {std::vector<int64_t>{0, 2}, {-1, -2}, {}}) {
      SCOPED_TRACE(::testing::Message() << "dims " << at::IntArrayRef(dims));
      expect_op_matches("aten::count_nonzero",
                        [dims](const Inputs& in) { return at::count_nonzero(arg(in, 0), dims); },
                        {x});
    }
  }
}

TEST_F(Reduction, CountNonzeroOfAZeroDimTensor) {
  for (double v : {0.0, -1.5}) {
    expect_op_matches("aten::count_nonzero",
                      [](const Inputs& in) { return at::count_nonzero(arg(in, 0)); },
                      {at::scalar_tensor(v)});
  }
}

TEST_F(Reduction, CountNonzeroInScript) {
  expect_script_matches("aten::count_nonzero",
                        "def forward(self, x):\n  return torch.count_nonzero(x, dim=(0, -1))\n",
                        {with_zeros_and_nan({2, 3, 4})});
}

TEST_F(Reduction, Nansum) {
  at::Tensor x = with_zeros_and_nan({3, 4, 5});
  x.view(-1)[4] = kInf;  // no inf - inf: a NaN sum would hide a converter that drops nothing
  expect_op_matches("aten::nansum", [](const Inputs& in) { return at::nansum(arg(in, 0)); }, {x});
  for (bool keepdim : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {-1}, {0, 2}, {}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dims " << at::IntArrayRef(dims) << " keepdim " << keepdim);
      expect_op_matches(
          "aten::nansum",
          [dims, keepdim](const Inputs& in) { return at::nansum(arg(in, 0), dims, keepdim); }, {x});
    }
  }
  expect_op_matches(
      "aten::nansum",
      [](const Inputs& in) { return at::nansum(arg(in, 0), {0}, false, at::kDouble); }, {x});
}

TEST_F(Reduction, NansumOfIntegersBoolsAndZeroDim) {
  expect_op_matches("aten::nansum", [](const Inputs& in) { return at::nansum(arg(in, 0), {-1}); },
                    {at::randint(-9, 9, {3, 4}, at::kInt)});
  expect_op_matches("aten::nansum", [](const Inputs& in) { return at::nansum(arg(in, 0)); },
                    {at::randint(-9, 9, {3, 4})});
  expect_op_matches("aten::nansum", [](const Inputs& in) { return at::nansum(arg(in, 0), {0}); },
                    {at::randn({3, 4}) > 0});
  for (double v : {kNaN, 2.5f}) {
    expect_op_matches("aten::nansum", [](const Inputs& in) { return at::nansum(arg(in, 0)); },
                      {at::scalar_tensor(v, at::kFloat)});
  }
}

TEST_F(Reduction, Nanmean) {
  at::Tensor x = with_zeros_and_nan({3, 4, 5});
  x.view(-1)[4] = 1.0;
  x.select(0, 2).select(0, 1).fill_(kNaN);  // a row of NaN only: 0/0
  expect_op_matches("aten::nanmean", [](const Inputs& in) { return at::nanmean(arg(in, 0)); }, {x});
  for (bool keepdim : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{2}, {-1}, {0, -1}, {}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dims " << at::IntArrayRef(dims) << " keepdim " << keepdim);
      expect_op_matches(
          "aten::nanmean",
          [dims, keepdim](const Inputs& in) { return at::nanmean(arg(in, 0), dims, keepdim); },
          {x});
    }
  }
  expect_op_matches(
      "aten::nanmean",
      [](const Inputs& in) { return at::nanmean(arg(in, 0), {1}, true, at::kDouble); }, {x});
  expect_op_matches("aten::nanmean", [](const Inputs& in) { return at::nanmean(arg(in, 0)); },
                    {at::scalar_tensor(kNaN, at::kFloat)});
}

TEST_F(Reduction, SumToSize) {
  at::Tensor x = at::randn({2, 3, 4});
  for (std::vector<int64_t> size :
       {std::vector<int64_t>{3, 4}, {1, 4}, {3, 1}, {1, 3, 1}, {4}, {1}, {}, {2, 3, 4}}) {
    SCOPED_TRACE(::testing::Message() << "size " << at::IntArrayRef(size));
    expect_op_matches("aten::sum_to_size",
                      [size](const Inputs& in) { return arg(in, 0).sum_to_size(size); }, {x});
  }
}

TEST_F(Reduction, SumToSizeOfIntegersAndOnesDims) {
  expect_op_matches("aten::sum_to_size",
                    [](const Inputs& in) {
                      return arg(in, 0).sum_to_size({1, 4});
                    },
                    {at::randint(-9, 9, {3, 4})});
  expect_op_matches("aten::sum_to_size",
                    [](const Inputs& in) {
                      return arg(in, 0).sum_to_size({1, 1, 5});
                    },
                    {at::randn({1, 3, 5})});
}

}  // namespace
}  // namespace torchonnx::testing
