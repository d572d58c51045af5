// Numeric tests of the sorting and selection converters: sort, argsort, msort, topk, kthvalue,
// median/nanmedian, mode, quantile/nanquantile, searchsorted, isin, _unique, _unique2, unique_dim,
// unique_consecutive, unique_dim_consecutive. Values and indices are compared; inputs have no ties
// except where the test is about ties (equal elements keep their order, as in PyTorch's stable sort
// and ONNX TopK).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

class Sort : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- sort / argsort ----------------------------------------------------------------------------

TEST_F(Sort, SortAlongEachDim) {
  for (at::Tensor x : {distinct({3, 4, 5}), distinct_longs({4, 6})}) {
    for (bool descending : {false, true}) {
      for (int64_t dim : {0, 1, -1}) {
        SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " dim " << dim
                                          << " descending " << descending);
        expect_op_matches("aten::sort",
                          [dim, descending](const Inputs& in) -> c10::IValue {
                            return at::sort(arg(in, 0), dim, descending);
                          },
                          {x});
      }
    }
  }
}

TEST_F(Sort, StableSortKeepsTiesInOrder) {
  at::Tensor ties = longs({3, 1, 3, 2, 1, 3, 0, 2}).reshape({2, 4});
  at::Tensor flags = bools({1, 0, 1, 0, 0, 1});
  at::Tensor floats = at::tensor({0.5, -1.0, 0.5, 2.0, -1.0, 0.5}, at::kFloat);
  for (at::Tensor x : {ties, flags, floats}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "dtype " << x.scalar_type() << " descending " << descending);
      expect_op_matches("aten::sort",
                        [descending](const Inputs& in) -> c10::IValue {
                          return at::sort(arg(in, 0), /*stable=*/true, -1, descending);
                        },
                        {x});
    }
  }
}

TEST_F(Sort, SortAndTopkOfNarrowIntegers) {
  // Before opset 11 integers are sorted as double, from 11 as int32/int64.
  for (at::ScalarType t : {at::kInt, at::kByte, at::kChar, at::kShort}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << t);
    at::Tensor x = (at::randperm(12) + (t == at::kByte ? 0 : -6)).reshape({3, 4}).to(t);
    expect_op_matches("aten::sort",
                      [](const Inputs& in) -> c10::IValue { return at::sort(arg(in, 0), 0, true); },
                      {x});
    expect_op_matches(
        "aten::topk",
        [](const Inputs& in) -> c10::IValue { return at::topk(arg(in, 0), 2, -1, false); }, {x});
  }
}

TEST_F(Sort, SortOfAZeroDimTensor) {
  expect_op_matches("aten::sort",
                    [](const Inputs& in) -> c10::IValue { return at::sort(arg(in, 0), 0); },
                    {at::scalar_tensor(1.5)});
}

TEST_F(Sort, SortInScriptWithKeywordArguments) {
  expect_script_matches(
      "aten::sort",
      "def forward(self, x):\n  v, i = torch.sort(x, dim=0, descending=True)\n  return v, i\n",
      {distinct({5, 2})});
}

TEST_F(Sort, Argsort) {
  for (at::Tensor x : {distinct({3, 4}), distinct_longs({2, 5})}) {
    for (bool descending : {false, true}) {
      for (int64_t dim : {0, -1}) {
        SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " dim " << dim
                                          << " descending " << descending);
        expect_op_matches("aten::argsort",
                          [dim, descending](const Inputs& in) {
                            return at::argsort(arg(in, 0), dim, descending);
                          },
                          {x});
      }
    }
  }
}

TEST_F(Sort, StableArgsortOfTies) {
  for (bool descending : {false, true}) {
    expect_op_matches("aten::argsort",
                      [descending](const Inputs& in) {
                        return at::argsort(arg(in, 0), /*stable=*/true, 0, descending);
                      },
                      {longs({2, 0, 2, 1, 0, 2})});
  }
}

// ----- topk --------------------------------------------------------------------------------------

TEST_F(Sort, TopkLargestAndSmallest) {
  for (at::Tensor x : {distinct({3, 6}), distinct_longs({4, 5})}) {
    for (bool largest : {true, false}) {
      for (int64_t dim : {0, 1, -1}) {
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " largest " << largest);
        expect_op_matches("aten::topk",
                          [dim, largest](const Inputs& in) -> c10::IValue {
                            return at::topk(arg(in, 0), 2, dim, largest);
                          },
                          {x});
      }
    }
  }
}

// No ties test for topk: PyTorch's topk orders equal elements as its partial sort leaves them
// (e.g. the last of three equal values first), ONNX TopK by index; stable sort covers ties.

TEST_F(Sort, TopkUnsortedIsSortedHere) {
  // PyTorch leaves the order of sorted=False unspecified: compare the sorted result.
  expect_op_matches(
      "aten::topk",
      [](const Inputs& in) -> c10::IValue {
        auto [v, i] = at::topk(arg(in, 0), 3, 1, true, /*sorted=*/false);
        auto [sv, order] = at::sort(v, 1, true);
        return std::make_tuple(sv, at::gather(i, 1, order));
      },
      {distinct({2, 7})}, 11);
}

TEST_F(Sort, TopkWithKFromTheShape) {
  expect_script_matches(
      "aten::topk",
      "def forward(self, x):\n  v, i = torch.topk(x, x.size(1) // 2, dim=1)\n  return v, i\n",
      {distinct({3, 6})}, {.first = 10, .fold = false});
}

TEST_F(Sort, TopkWithKFromTheShapeFailsAtOpset9) {
  auto m = script_module(
      "def forward(self, x):\n  v, i = torch.topk(x, x.size(1) // 2, dim=1)\n  return v, i\n");
  ExportOptions options;
  options.opset_version = 9;
  options.do_constant_folding = false;
  Inputs inputs{distinct({3, 6})};
  EXPECT_TRUE(ThrowsExportError(
      [&] { export_model(m, inputs, temp_dir("topk9") + "/m.onnx", options); },
      ErrorCode::kConversion,
      {"cannot export aten::topk", "topk with a k computed at run time needs opset >= 10"}));
}

TEST_F(Sort, TopkOfAZeroDimTensor) {
  expect_op_matches("aten::topk",
                    [](const Inputs& in) -> c10::IValue { return at::topk(arg(in, 0), 1); },
                    {at::scalar_tensor(1.5)});
}

TEST_F(Sort, NaNIsAboveEveryNumberFromOpset11) {
  // PyTorch sorts NaN last (ascending) / first (descending) and topk takes it as the largest.
  // Before opset 11 (no GatherElements to recover the NaN values) NaN is not handled.
  const double nan = std::nan("");
  at::Tensor x = at::tensor({1.0, nan, 3.0, -1.0, 2.0, 0.5}, at::kFloat).reshape({2, 3});
  std::vector<TracedFunction> fns = {
      [](const Inputs& in) -> c10::IValue { return at::sort(arg(in, 0), 1); },
      [](const Inputs& in) -> c10::IValue { return at::sort(arg(in, 0), 1, true); },
      [](const Inputs& in) -> c10::IValue { return at::topk(arg(in, 0), 2, 1); },
      [](const Inputs& in) -> c10::IValue { return at::topk(arg(in, 0), 2, 1, false); },
  };
  for (size_t i = 0; i < fns.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "case " << i);
    expect_op_matches(i < 2 ? "aten::sort" : "aten::topk", fns[i], {x}, 11);
  }
}

// ----- unique ------------------------------------------------------------------------------------

TEST_F(Sort, Unique2Sorted) {
  std::vector<at::Tensor> inputs = {longs({3, 1, 3, 2, 5, 1, 2, 2}).reshape({2, 4}),
                                    at::tensor({0.5, -1.0, 0.5, 2.0, 2.0, -3.5}, at::kFloat),
                                    bools({1, 0, 1, 1})};
  for (const at::Tensor& x : inputs) {
    for (bool inverse : {false, true}) {
      for (bool counts : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " return_inverse "
                                          << inverse << " return_counts " << counts);
        expect_op_matches("aten::_unique2",
                          [inverse, counts](const Inputs& in) -> c10::IValue {
                            auto [v, inv, c] = at::_unique2(arg(in, 0), true, inverse, counts);
                            // PyTorch 1.13 computes the inverse for return_counts too, 2.x not;
                            // unrequested are empty
                            return std::make_tuple(v, inv, c);
                          },
                          {x});
      }
    }
  }
}

TEST_F(Sort, Unique2UnsortedHasTheSameElementsAndAConsistentInverse) {
  // PyTorch's sorted=False order is a hash order; ONNX gives first occurrences (or sorted before
  // 11). Compared: the sorted values with their counts, and values[inverse] (== the input).
  expect_op_matches(
      "aten::_unique2",
      [](const Inputs& in) -> c10::IValue {
        auto [v, inv, c] = at::_unique2(arg(in, 0), false, true, true);
        auto [sv, order] = at::sort(v);
        return std::make_tuple(sv, at::index_select(c, 0, order),
                               at::index_select(v, 0, inv.reshape({-1})));
      },
      // from 10: sorting the unique values (of data-dependent size) needs TopK's k input
      {longs({7, 1, 7, 4, 9, 1, 4, 4, 0})}, 10);
}

TEST_F(Sort, UniqueFromScript) {
  // torch.unique (a Python function) calls aten::_unique2.
  expect_script_matches(
      "aten::_unique2",
      "def forward(self, x):\n"
      "  v, i, c = torch._unique2(x, sorted=True, return_inverse=True, return_counts=True)\n"
      "  return v, i, c\n",
      {longs({4, 2, 4, 4, 0, 2}).reshape({3, 2})});
}

TEST_F(Sort, UniqueOfInt32AndUint8) {
  for (at::ScalarType t : {at::kInt, at::kByte}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << t);
    expect_op_matches("aten::_unique2",
                      [](const Inputs& in) -> c10::IValue {
                        auto [v, inv, c] = at::_unique2(arg(in, 0), true, true, true);
                        return std::make_tuple(v, inv, c);
                      },
                      {longs({5, 3, 5, 0, 3, 9}).to(t)});
  }
}

TEST_F(Sort, UniqueLegacy) {
  for (bool inverse : {false, true}) {
    expect_op_matches("aten::_unique",
                      [inverse](const Inputs& in) -> c10::IValue {
                        auto [v, inv] = at::_unique(arg(in, 0), true, inverse);
                        return std::make_tuple(v, inv);
                      },
                      {at::tensor({1.5, -2.0, 1.5, 0.0, -2.0, 4.0}, at::kFloat).reshape({3, 2})});
  }
}

TEST_F(Sort, UniqueOfAZeroDimTensor) {
  expect_op_matches("aten::_unique2",
                    [](const Inputs& in) -> c10::IValue {
                      auto [v, inv, c] = at::_unique2(arg(in, 0), true, true, true);
                      return std::make_tuple(v, inv, c);
                    },
                    {at::scalar_tensor(3.0)});
}

TEST_F(Sort, UniqueDim) {
  at::Tensor rows = longs({1, 2, 0, 1, 0, 5, 1, 2, 0, 1, 0, 4}).reshape({4, 3});
  for (int64_t dim : {0, 1, -2}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches(
        "aten::unique_dim",
        [dim](const Inputs& in) -> c10::IValue {
          auto [v, inv, c] = at::unique_dim(arg(in, 0), dim, true, true, true);
          return std::make_tuple(v, inv, c);
        },
        {rows}, 11);
  }
  expect_op_matches(
      "aten::unique_dim",
      [](const Inputs& in) -> c10::IValue { return std::get<0>(at::unique_dim(arg(in, 0), 1)); },
      {at::tensor({1.0, 1.0, 0.5, 2.0, 2.0, 0.5}, at::kFloat).reshape({2, 3})}, 11);
}

TEST_F(Sort, UniqueConsecutive) {
  std::vector<at::Tensor> inputs = {longs({3, 3, 1, 1, 1, 2, 3, 3}).reshape({2, 4}),
                                    at::tensor({0.5, 0.5, -1.0, 0.5, 2.0, 2.0}, at::kFloat),
                                    bools({1, 1, 0, 1})};
  for (const at::Tensor& x : inputs) {
    for (bool inverse : {false, true}) {
      for (bool counts : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " return_inverse "
                                          << inverse << " return_counts " << counts);
        expect_op_matches(
            "aten::unique_consecutive",
            [inverse, counts](const Inputs& in) -> c10::IValue {
              auto [v, inv, c] = at::unique_consecutive(arg(in, 0), inverse, counts);
              return std::make_tuple(v, inv, c);
            },
            {x}, 11);
      }
    }
  }
}

TEST_F(Sort, UniqueConsecutiveAlongADim) {
  at::Tensor x = longs({1, 1, 2, 2, 2, 0, 0, 0, 3, 3, 4, 4}).reshape({2, 6});
  for (int64_t dim : {1, 0, -1}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches(
        "aten::unique_consecutive",
        [dim](const Inputs& in) -> c10::IValue {
          auto [v, inv, c] = at::unique_consecutive(arg(in, 0), true, true, dim);
          return std::make_tuple(v, inv, c);
        },
        {x}, 11);
    expect_op_matches(
        "aten::unique_dim_consecutive",
        [dim](const Inputs& in) -> c10::IValue {
          auto [v, inv, c] = at::unique_dim_consecutive(arg(in, 0), dim, true, true);
          return std::make_tuple(v, inv, c);
        },
        {x}, 11);
  }
}

TEST_F(Sort, UniqueDimAndConsecutiveNeedOpset11) {
  Inputs inputs{longs({1, 1, 2})};
  expect_export_fails(
      [](const Inputs& in) -> c10::IValue { return std::get<0>(at::unique_dim(arg(in, 0), 0)); },
      inputs, 10, "aten::unique_dim", ErrorCode::kUnsupportedOp);
  expect_export_fails(
      [](const Inputs& in) -> c10::IValue {
        return std::get<0>(at::unique_consecutive(arg(in, 0)));
      },
      inputs, 10, "aten::unique_consecutive", ErrorCode::kUnsupportedOp);
}

// ----- msort / kthvalue / median / nanmedian
// ------------------------------------------------------

TEST_F(Sort, Msort) {
  for (at::Tensor x : {distinct({5, 3}), distinct_longs({4, 2, 3}), distinct({6})}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " rank " << x.dim());
    expect_op_matches("aten::msort", [](const Inputs& in) { return at::msort(arg(in, 0)); }, {x});
  }
  expect_op_matches("aten::msort", [](const Inputs& in) { return at::msort(arg(in, 0)); },
                    {at::scalar_tensor(1.5)});
}

TEST_F(Sort, Kthvalue) {
  for (at::Tensor x : {distinct({3, 4, 5}), distinct_longs({4, 6})}) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool keepdim : {false, true}) {
        const int64_t k = dim == 0 ? 2 : 3;
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " keepdim " << keepdim);
        expect_op_matches("aten::kthvalue",
                          [k, dim, keepdim](const Inputs& in) -> c10::IValue {
                            return at::kthvalue(arg(in, 0), k, dim, keepdim);
                          },
                          {x});
      }
    }
  }
  // k = 1 and k = the size of the dim.
  for (int64_t k : {1, 5}) {
    expect_op_matches("aten::kthvalue",
                      [k](const Inputs& in) -> c10::IValue { return at::kthvalue(arg(in, 0), k); },
                      {distinct({2, 5})});
  }
  expect_op_matches("aten::kthvalue",
                    [](const Inputs& in) -> c10::IValue { return at::kthvalue(arg(in, 0), 1); },
                    {at::scalar_tensor(2.5)});
}

TEST_F(Sort, KthvalueRanksNaNLastFromOpset11) {
  at::Tensor x = distinct({3, 4});
  x[0][1] = kNaN;
  x[2][0] = kInf;
  for (int64_t k : {1, 3, 4}) {
    expect_op_matches(
        "aten::kthvalue",
        [k](const Inputs& in) -> c10::IValue { return at::kthvalue(arg(in, 0), k, 1); }, {x}, 11);
  }
}

TEST_F(Sort, MedianOfAllElements) {
  // Odd and even counts (the lower of the two middle elements), ints, 0-d.
  for (at::Tensor x :
       {distinct({3, 5}), distinct({4, 2}), distinct_longs({2, 3, 2}), at::scalar_tensor(-1.5)}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << x.scalar_type() << " sizes " << x.sizes());
    expect_op_matches("aten::median", [](const Inputs& in) { return at::median(arg(in, 0)); }, {x});
  }
}

TEST_F(Sort, MedianWithANaNIsNaN) {
  at::Tensor x = distinct({3, 4});
  x[2][3] = kNaN;
  expect_op_matches("aten::median", [](const Inputs& in) { return at::median(arg(in, 0)); }, {x});
}

TEST_F(Sort, MedianAlongADim) {
  for (at::Tensor x : {distinct({3, 4, 5}), distinct_longs({4, 6})}) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " keepdim " << keepdim);
        expect_op_matches("aten::median",
                          [dim, keepdim](const Inputs& in) -> c10::IValue {
                            return at::median(arg(in, 0), dim, keepdim);
                          },
                          {x});
      }
    }
  }
  expect_op_matches("aten::median",
                    [](const Inputs& in) -> c10::IValue { return at::median(arg(in, 0), 0); },
                    {at::scalar_tensor(4.0)});
}

TEST_F(Sort, MedianAlongADimGivesNaNAndItsFirstIndex) {
  at::Tensor x = distinct({4, 5});
  x[1][3] = kNaN;
  x[2][0] = kNaN;
  x[2][4] = kNaN;
  x[3][2] = kInf;
  for (bool keepdim : {false, true}) {
    expect_op_matches(
        "aten::median",
        [keepdim](const Inputs& in) -> c10::IValue { return at::median(arg(in, 0), -1, keepdim); },
        {x});
  }
}

TEST_F(Sort, Nanmedian) {
  at::Tensor x = distinct({4, 5});
  x[1][3] = kNaN;
  x[2][0] = kNaN;
  x[2][4] = kNaN;
  x[3].fill_(kNaN);  // all NaN
  x[0][2] = -kInf;
  expect_op_matches(
      "aten::nanmedian", [](const Inputs& in) { return at::nanmedian(arg(in, 0)); }, {x}, 11);
  for (int64_t dim : {1, -1, 0}) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "dim " << dim << " keepdim " << keepdim);
      // Without the all-NaN row: which of its NaN's index PyTorch returns is unspecified.
      expect_op_matches(
          "aten::nanmedian",
          [dim, keepdim](const Inputs& in) -> c10::IValue {
            return at::nanmedian(arg(in, 0), dim, keepdim);
          },
          {x.slice(0, 0, 3).contiguous()}, 11);
    }
  }
  // The all-NaN row's value (NaN).
  expect_op_matches(
      "aten::nanmedian", [](const Inputs& in) { return std::get<0>(at::nanmedian(arg(in, 0), 1)); },
      {x}, 11);
}

TEST_F(Sort, NanmedianOfIntegersAndAllNaN) {
  expect_op_matches(
      "aten::nanmedian", [](const Inputs& in) { return at::nanmedian(arg(in, 0)); },
      {distinct_longs({3, 4})}, 11);
  expect_op_matches(
      "aten::nanmedian",
      [](const Inputs& in) -> c10::IValue { return at::nanmedian(arg(in, 0), 0, true); },
      {distinct_longs({3, 4})}, 11);
  expect_op_matches(
      "aten::nanmedian", [](const Inputs& in) { return at::nanmedian(arg(in, 0)); },
      {at::full({3}, kNaN)}, 11);
  expect_op_matches(
      "aten::nanmedian", [](const Inputs& in) { return at::nanmedian(arg(in, 0)); },
      {at::scalar_tensor(3.0)}, 11);
}

// ----- searchsorted / isin -----------------------------------------------------------------------

TEST_F(Sort, SearchsortedIn1DSequence) {
  at::Tensor seq = floats({-2, -1, -1, 0, 1.5, 3, 3, 7});
  at::Tensor v = floats({-3, -1, 0, 0.5, 3, 7, 8, kInf, -kInf, 1.5, kNaN, 2}).reshape({3, 4});
  for (bool right : {false, true}) {
    for (bool out_int32 : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "right " << right << " out_int32 " << out_int32);
      expect_op_matches("aten::searchsorted",
                        [right, out_int32](const Inputs& in) {
                          return at::searchsorted(arg(in, 0), arg(in, 1), out_int32, right);
                        },
                        {seq, v});
    }
  }
  // 0-d values, int64.
  expect_op_matches("aten::searchsorted",
                    [](const Inputs& in) { return at::searchsorted(arg(in, 0), arg(in, 1)); },
                    {longs({-5, 0, 0, 2, 9}), at::scalar_tensor(0, at::kLong)});
}

TEST_F(Sort, SearchsortedInNDSequenceWithSideAndSorter) {
  at::Tensor seq = std::get<0>(at::randint(-5, 5, {2, 3, 6}).sort(-1));
  at::Tensor v = at::randint(-6, 6, {2, 3, 4});
  for (const char* side : {"left", "right"}) {
    SCOPED_TRACE(side);
    expect_op_matches("aten::searchsorted",
                      [side](const Inputs& in) {
                        return at::searchsorted(arg(in, 0), arg(in, 1), false, false, side);
                      },
                      {seq, v});
  }
  // An unsorted sequence with the permutation that sorts it.
  at::Tensor raw = distinct({3, 5});
  at::Tensor sorter = raw.argsort(int64_t{-1});
  expect_op_matches("aten::searchsorted",
                    [](const Inputs& in) {
                      return at::searchsorted(arg(in, 0), arg(in, 1), false, true, c10::nullopt,
                                              arg(in, 2));
                    },
                    {raw, distinct({3, 2}) * 0.5, sorter});
}

TEST_F(Sort, SearchsortedOfAScalar) {
  expect_script_matches("aten::searchsorted",
                        "def forward(self, s):\n  return torch.searchsorted(s, 0.5, right=True)\n",
                        {floats({-1, 0, 0.5, 0.5, 2})});
}

TEST_F(Sort, Isin) {
  at::Tensor x = at::randint(-4, 4, {3, 5});
  at::Tensor test = longs({-2, 0, 3, 3, 7});
  for (bool invert : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "invert " << invert);
    expect_op_matches(
        "aten::isin",
        [invert](const Inputs& in) { return at::isin(arg(in, 0), arg(in, 1), false, invert); },
        {x, test}, 11);
    expect_op_matches(
        "aten::isin",
        [invert](const Inputs& in) { return at::isin(arg(in, 0), arg(in, 1), false, invert); },
        {floats({0.5, kNaN, -kInf, 2, 0}), floats({kNaN, 0.5, -kInf, 1}).reshape({2, 2})}, 11);
  }
  // Empty test elements, 0-d elements.
  expect_op_matches(
      "aten::isin", [](const Inputs& in) { return at::isin(arg(in, 0), arg(in, 1)); },
      {x, at::empty({0}, at::kLong)}, 11);
  expect_op_matches(
      "aten::isin", [](const Inputs& in) { return at::isin(arg(in, 0), arg(in, 1)); },
      {at::scalar_tensor(3, at::kLong), test}, 11);
}

TEST_F(Sort, IsinOfAScalarTestElement) {
  expect_script_matches("aten::isin", "def forward(self, x):\n  return torch.isin(x, 2)\n",
                        {longs({1, 2, 3, 2})}, {11, highest_opset()});
}

// ----- quantile / nanquantile --------------------------------------------------------------------

constexpr const char* kInterpolations[] = {"linear", "lower", "higher", "midpoint", "nearest"};

TEST_F(Sort, QuantileOfAScalarAndATensorQ) {
  at::Tensor x = at::randn({4, 6});
  x[1][2] = kInf;
  at::Tensor qs = floats({0.0, 0.25, 0.5, 0.7, 1.0});
  for (const char* mode : kInterpolations) {
    for (c10::optional<int64_t> dim :
         {c10::optional<int64_t>(), c10::optional<int64_t>(1), c10::optional<int64_t>(-2)}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << mode << " dim " << (dim ? *dim : 99) << " keepdim " << keepdim);
        expect_op_matches(
            "aten::quantile",
            [=](const Inputs& in) {
              return at::quantile(arg(in, 0), arg(in, 1), dim, keepdim, mode);
            },
            {x, qs}, 11);
        expect_op_matches(
            "aten::quantile",
            [=](const Inputs& in) { return at::quantile(arg(in, 0), 0.3, dim, keepdim, mode); },
            {x}, 11);
      }
    }
  }
}

TEST_F(Sort, QuantileWithHalfwayRanksAndNaN) {
  // 5 elements: q = 0.125 and 0.375 give ranks 0.5 and 1.5 (nearest rounds half to even).
  at::Tensor x = floats({3, -1, 2, 7, 0, 4, kNaN, 1, 5, 6}).reshape({2, 5});
  for (const char* mode : kInterpolations) {
    SCOPED_TRACE(mode);
    expect_op_matches(
        "aten::quantile",
        [=](const Inputs& in) { return at::quantile(arg(in, 0), arg(in, 1), -1, false, mode); },
        {x, floats({0.125, 0.375, 0.875})}, 11);
    expect_op_matches(
        "aten::nanquantile",
        [=](const Inputs& in) { return at::nanquantile(arg(in, 0), arg(in, 1), 1, true, mode); },
        {x, floats({0.125, 0.5, 1.0})}, 11);
  }
}

TEST_F(Sort, Nanquantile) {
  at::Tensor x = at::randn({3, 5, 4});
  x[0][1][2] = kNaN;
  x[2][3][0] = kNaN;
  x.select(2, 3).select(0, 1).fill_(kNaN);  // slices of NaN only along dim 1 and along dim 2
  x[1][4].fill_(kNaN);
  for (const char* mode : kInterpolations) {
    for (c10::optional<int64_t> dim :
         {c10::optional<int64_t>(), c10::optional<int64_t>(1), c10::optional<int64_t>(-1)}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << mode << " dim " << (dim ? *dim : 99) << " keepdim " << keepdim);
        expect_op_matches(
            "aten::nanquantile",
            [=](const Inputs& in) {
              return at::nanquantile(arg(in, 0), arg(in, 1), dim, keepdim, mode);
            },
            {x, floats({0.1, 0.5, 0.9})}, 11);
        expect_op_matches(
            "aten::nanquantile",
            [=](const Inputs& in) { return at::nanquantile(arg(in, 0), 0.75, dim, keepdim, mode); },
            {x}, 11);
      }
    }
  }
}

TEST_F(Sort, QuantileOfAZeroDimTensorAndDoubles) {
  expect_op_matches(
      "aten::quantile",
      [](const Inputs& in) { return at::quantile(arg(in, 0), arg(in, 1), 0, true); },
      {at::scalar_tensor(2.5, at::kFloat), floats({0.2, 0.9})}, 11);
  expect_op_matches(
      "aten::quantile", [](const Inputs& in) { return at::quantile(arg(in, 0), 0.4, 0); },
      {at::randn({5, 3}, at::kDouble)}, 11);
}

// ----- mode
// ------------------------------------------------------------------------------------------

// Slices under 16 elements: libtorch's index is then the last position of the mode (see the
// converter).
TEST_F(Sort, Mode) {
  at::Tensor ints = longs({3, 1, 3, 2, 1, 0, 2, 2, 5, 5, 4, 4, 1, 1, 1, 1, 7, 6, 7, 6, 0, 9, 8, 9})
                        .reshape({2, 3, 4});
  at::Tensor fl =
      floats({0.5, -1, 0.5, 2, -1, 2, kInf, kInf, -kInf, 3, 3, 3, 0, -0.0, 1, 2}).reshape({4, 4});
  for (at::Tensor x : {ints, fl, ints.to(at::kInt), distinct({3, 5})}) {
    for (int64_t dim : {-1, 0, 1}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "dtype " << x.scalar_type() << " dim " << dim << " keepdim " << keepdim);
        expect_op_matches(
            "aten::mode",
            [dim, keepdim](const Inputs& in) -> c10::IValue {
              return at::mode(arg(in, 0), dim, keepdim);
            },
            {x}, 11);
      }
    }
  }
  expect_op_matches(
      "aten::mode", [](const Inputs& in) -> c10::IValue { return at::mode(arg(in, 0)); },
      {at::scalar_tensor(2.0)}, 11);
}

}  // namespace
}  // namespace torchonnx::testing
