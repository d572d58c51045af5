// Numeric tests of the pooling converters: max/avg pooling 1-D/2-D/3-D (padding, stride,
// dilation, ceil_mode, count_include_pad) and adaptive average/max pooling.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Pool : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- max pooling
// --------------------------------------------------------------------------------

TEST_F(Pool, MaxPool2dDefaultStride) {
  expect_op_matches("aten::max_pool2d",
                    [](const Inputs& in) {
                      return at::max_pool2d(arg(in, 0), {2, 2});
                    },
                    {at::randn({2, 3, 8, 8})});
}

TEST_F(Pool, MaxPool2dPaddingAndCeilMode) {
  struct Case {
    std::vector<int64_t> input, kernel, stride, padding;
  };
  for (const auto& c : std::vector<Case>{{{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}},
                                         {{1, 2, 6, 5}, {3, 2}, {2, 2}, {0, 1}},
                                         {{1, 2, 5, 5}, {2, 2}, {2, 2}, {1, 1}},
                                         {{1, 1, 8, 9}, {3, 3}, {3, 2}, {1, 0}}}) {
    for (bool ceil_mode : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "input " << at::IntArrayRef(c.input) << " kernel "
                   << at::IntArrayRef(c.kernel) << " stride " << at::IntArrayRef(c.stride)
                   << " padding " << at::IntArrayRef(c.padding) << " ceil " << ceil_mode);
      expect_op_matches("aten::max_pool2d",
                        [c, ceil_mode](const Inputs& in) {
                          return at::max_pool2d(arg(in, 0), c.kernel, c.stride, c.padding, 1,
                                                ceil_mode);
                        },
                        {at::randn(c.input)});
    }
  }
}

TEST_F(Pool, MaxPool2dDilationNeedsOpset10) {
  auto fn = [](const Inputs& in) { return at::max_pool2d(arg(in, 0), {2, 3}, {1, 2}, 1, {2, 1}); };
  Inputs inputs{at::randn({1, 2, 8, 8})};
  expect_op_matches("aten::max_pool2d", fn, inputs, 10, highest_opset());
  expect_export_fails(fn, inputs, 9, "opset 10");
}

TEST_F(Pool, MaxPool1dAnd3d) {
  for (bool ceil_mode : {false, true}) {
    expect_op_matches("aten::max_pool1d",
                      [ceil_mode](const Inputs& in) {
                        return at::max_pool1d(arg(in, 0), {3}, {2}, {1}, 1, ceil_mode);
                      },
                      {at::randn({2, 3, 10})});
    expect_op_matches(
        "aten::max_pool3d",
        [ceil_mode](const Inputs& in) {
          return at::max_pool3d(arg(in, 0), {2, 3, 2}, {2, 2, 1}, {0, 1, 1}, 1, ceil_mode);
        },
        {at::randn({1, 2, 5, 6, 4})});
  }
}

// ----- average pooling
// ----------------------------------------------------------------------------

TEST_F(Pool, AvgPool2dDefaultStride) {
  expect_op_matches("aten::avg_pool2d",
                    [](const Inputs& in) {
                      return at::avg_pool2d(arg(in, 0), {2, 2});
                    },
                    {at::randn({2, 3, 8, 8})});
}

TEST_F(Pool, AvgPool2dPaddingCountIncludePad) {
  for (bool count_include_pad : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "count_include_pad " << count_include_pad);
    expect_op_matches(
        "aten::avg_pool2d",
        [count_include_pad](const Inputs& in) {
          return at::avg_pool2d(arg(in, 0), {3, 3}, {2, 2}, {1, 1}, false, count_include_pad);
        },
        {at::randn({1, 2, 7, 7})});
  }
}

TEST_F(Pool, AvgPool2dCeilMode) {
  for (bool count_include_pad : {false, true}) {
    for (std::vector<int64_t> padding : {std::vector<int64_t>{0, 0}, {1, 1}}) {
      SCOPED_TRACE(::testing::Message() << "count_include_pad " << count_include_pad << " padding "
                                        << at::IntArrayRef(padding));
      auto fn = [count_include_pad, padding](const Inputs& in) {
        return at::avg_pool2d(arg(in, 0), {3, 3}, {2, 2}, padding, true, count_include_pad);
      };
      // ceil_mode adds a last, overhanging window; with count_include_pad its divisor is the
      // part inside the padded input (at opset 9: sum pooling divided by PyTorch's counts).
      expect_op_matches("aten::avg_pool2d", fn, {at::randn({2, 2, 6, 6})});
    }
  }
}

TEST_F(Pool, CeilModeDropsALastWindowStartingInThePadding) {
  // 5 + 2·1 with kernel 2, stride 2: ONNX's ceil_mode makes 4 windows, PyTorch drops the last
  // (it would start in the right padding) and makes 3, the floor-mode count.
  for (bool count_include_pad : {false, true}) {
    expect_op_matches(
        "aten::avg_pool2d",
        [count_include_pad](const Inputs& in) {
          return at::avg_pool2d(arg(in, 0), {2, 2}, {2, 2}, {1, 1}, true, count_include_pad);
        },
        {at::randn({1, 2, 5, 5})});
  }
  expect_op_matches(
      "aten::max_pool1d",
      [](const Inputs& in) { return at::max_pool1d(arg(in, 0), {2}, {2}, {1}, 1, true); },
      {at::randn({1, 2, 5})});
}

TEST_F(Pool, CeilModeDroppingInOneDimAndAddingInAnother) {
  // Height 6, kernel 3, stride 2: ceil adds a window; width 5, kernel 2, stride 2, padding 1:
  // PyTorch drops the last one. No single ceil_mode attribute gives both.
  Inputs inputs{at::randn({1, 2, 6, 5})};
  expect_op_matches(
      "aten::max_pool2d",
      [](const Inputs& in) {
        return at::max_pool2d(arg(in, 0), {3, 2}, {2, 2}, {0, 1}, 1, true);
      },
      inputs);
  expect_op_matches(
      "aten::avg_pool2d",
      [](const Inputs& in) {
        return at::avg_pool2d(arg(in, 0), {3, 2}, {2, 2}, {0, 1}, true, false);
      },
      inputs);
  // count_include_pad: sum pooling divided by PyTorch's per-window counts.
  expect_op_matches(
      "aten::avg_pool2d",
      [](const Inputs& in) {
        return at::avg_pool2d(arg(in, 0), {3, 2}, {2, 2}, {0, 1}, true, true);
      },
      inputs);
}

TEST_F(Pool, AvgPool2dCeilModeWithoutEffectAtOpset9) {
  expect_op_matches("aten::avg_pool2d",
                    [](const Inputs& in) {
                      return at::avg_pool2d(arg(in, 0), {2, 2}, {2, 2}, 0, /*ceil_mode=*/true);
                    },
                    {at::randn({1, 2, 6, 6})});
}

TEST_F(Pool, AvgPoolDivisorOverride) {
  struct Case {
    std::vector<int64_t> input, kernel, stride, padding;
    bool ceil_mode, count_include_pad;
    int64_t divisor;
  };
  for (const auto& c : std::vector<Case>{{{2, 3, 4, 4}, {2, 2}, {}, {0, 0}, false, true, 3},
                                         {{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false, false, 5},
                                         {{1, 2, 6, 5}, {3, 2}, {2, 2}, {0, 1}, true, true, 2},
                                         {{2, 1, 6, 6}, {3, 3}, {2, 2}, {1, 1}, true, false, 7}}) {
    SCOPED_TRACE(::testing::Message()
                 << "input " << at::IntArrayRef(c.input) << " kernel " << at::IntArrayRef(c.kernel)
                 << " ceil " << c.ceil_mode << " count_include_pad " << c.count_include_pad);
    expect_op_matches("aten::avg_pool2d",
                      [c](const Inputs& in) {
                        return at::avg_pool2d(arg(in, 0), c.kernel, c.stride, c.padding,
                                              c.ceil_mode, c.count_include_pad, c.divisor);
                      },
                      {at::randn(c.input)});
  }
  expect_op_matches(
      "aten::avg_pool3d",
      [](const Inputs& in) {
        return at::avg_pool3d(arg(in, 0), {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, true, true, 4);
      },
      {at::randn({2, 2, 4, 5, 5})});
}

TEST_F(Pool, AvgPool3dCeilModeCountIncludePad) {
  expect_op_matches(
      "aten::avg_pool3d",
      [](const Inputs& in) {
        return at::avg_pool3d(arg(in, 0), {3, 2, 2}, {2, 2, 2}, {1, 1, 0}, true, true);
      },
      {at::randn({2, 2, 6, 5, 5})});
}

TEST_F(Pool, UnbatchedPooling) {
  expect_op_matches("aten::max_pool2d",
                    [](const Inputs& in) {
                      return at::max_pool2d(arg(in, 0), {2, 2}, {1, 2});
                    },
                    {at::randn({3, 6, 5})});
  expect_op_matches(
      "aten::avg_pool1d",
      [](const Inputs& in) { return at::avg_pool1d(arg(in, 0), {3}, {2}, {1}, true, true); },
      {at::randn({3, 8})});
  expect_op_matches("aten::adaptive_avg_pool2d",
                    [](const Inputs& in) {
                      return at::adaptive_avg_pool2d(arg(in, 0), {3, 2});
                    },
                    {at::randn({2, 7, 5})});
  expect_op_matches("aten::max_pool2d_with_indices",
                    [](const Inputs& in) {
                      auto [v, i] = at::max_pool2d_with_indices(arg(in, 0), {2, 2}, {2, 2}, 1);
                      return c10::ivalue::Tuple::create({v, i});
                    },
                    {at::randn({3, 5, 6})});
}

TEST_F(Pool, DoublePooling) {
  at::Tensor x = at::randn({2, 3, 7, 6}, at::kDouble);
  expect_op_matches("aten::max_pool2d",
                    [](const Inputs& in) {
                      return at::max_pool2d(arg(in, 0), {3, 2}, {2, 2}, {1, 0});
                    },
                    {x});
  // ORT has no double AveragePool; adaptive pooling to non-divisors uses ReduceMean.
  expect_op_matches("aten::max_pool2d_with_indices",
                    [](const Inputs& in) {
                      auto [v, i] = at::max_pool2d_with_indices(arg(in, 0), {2, 2}, {2, 1}, 1);
                      return c10::ivalue::Tuple::create({v, i});
                    },
                    {x});
  expect_op_matches("aten::adaptive_max_pool2d",
                    [](const Inputs& in) {
                      auto [v, i] = at::adaptive_max_pool2d(arg(in, 0), {3, 4});
                      return c10::ivalue::Tuple::create({v, i});
                    },
                    {x});
  expect_op_matches("aten::adaptive_avg_pool2d",
                    [](const Inputs& in) {
                      return at::adaptive_avg_pool2d(arg(in, 0), {3, 4});
                    },
                    {x});
}

TEST_F(Pool, IntegerAvgPool) {
  // PyTorch sums integers and truncates the quotient toward zero.
  at::Tensor x = at::randint(-50, 50, {2, 3, 7, 6}, at::kLong);
  struct Case {
    std::vector<int64_t> kernel, stride, padding;
    bool ceil_mode, count_include_pad;
    c10::optional<int64_t> divisor;
  };
  for (const auto& c : std::vector<Case>{{{2, 2}, {}, {0, 0}, false, true, c10::nullopt},
                                         {{3, 3}, {2, 2}, {1, 1}, false, false, c10::nullopt},
                                         {{3, 2}, {2, 2}, {1, 1}, true, true, c10::nullopt},
                                         {{3, 3}, {2, 2}, {1, 0}, true, false, c10::nullopt},
                                         {{2, 3}, {1, 2}, {1, 1}, true, true, 4}}) {
    SCOPED_TRACE(::testing::Message()
                 << "kernel " << at::IntArrayRef(c.kernel) << " ceil " << c.ceil_mode
                 << " count_include_pad " << c.count_include_pad);
    expect_op_matches("aten::avg_pool2d",
                      [c](const Inputs& in) {
                        return at::avg_pool2d(arg(in, 0), c.kernel, c.stride, c.padding,
                                              c.ceil_mode, c.count_include_pad, c.divisor);
                      },
                      {x});
  }
  expect_op_matches(
      "aten::avg_pool1d",
      [](const Inputs& in) { return at::avg_pool1d(arg(in, 0), {3}, {2}, {1}, true, false); },
      {at::randint(-50, 50, {2, 3, 8}, at::kLong)});
  expect_op_matches("aten::avg_pool3d",
                    [](const Inputs& in) {
                      return at::avg_pool3d(arg(in, 0), {2, 2, 2});
                    },
                    {at::randint(-50, 50, {1, 2, 4, 4, 6}, at::kLong)});
}

// ----- max pooling with indices -----------------------------------------------------------------

TEST_F(Pool, MaxPoolWithIndices) {
  // ONNX counts the indices over N·C·H·W, PyTorch over each channel's H·W.
  for (bool ceil_mode : {false, true}) {
    SCOPED_TRACE(ceil_mode);
    expect_op_matches("aten::max_pool2d_with_indices",
                      [ceil_mode](const Inputs& in) {
                        auto [v, i] = at::max_pool2d_with_indices(arg(in, 0), {3, 2}, {2, 2},
                                                                  {1, 1}, 1, ceil_mode);
                        return c10::ivalue::Tuple::create({v, i});
                      },
                      {at::randn({2, 3, 7, 6})});
    expect_op_matches("aten::max_pool1d_with_indices",
                      [ceil_mode](const Inputs& in) {
                        auto [v, i] =
                            at::max_pool1d_with_indices(arg(in, 0), {3}, {2}, {1}, 1, ceil_mode);
                        return c10::ivalue::Tuple::create({v, i});
                      },
                      {at::randn({2, 3, 10})});
    expect_op_matches("aten::max_pool3d_with_indices",
                      [ceil_mode](const Inputs& in) {
                        auto [v, i] = at::max_pool3d_with_indices(arg(in, 0), {2, 3, 2}, {2, 2, 1},
                                                                  {0, 1, 1}, 1, ceil_mode);
                        return c10::ivalue::Tuple::create({v, i});
                      },
                      {at::randn({2, 2, 5, 6, 4})});
  }
}

TEST_F(Pool, MaxPoolWithIndicesDilated) {
  auto fn = [](const Inputs& in) {
    auto [v, i] = at::max_pool2d_with_indices(arg(in, 0), {2, 3}, {1, 2}, 1, {2, 1});
    return c10::ivalue::Tuple::create({v, i});
  };
  Inputs inputs{at::randn({2, 2, 8, 8})};
  expect_op_matches("aten::max_pool2d_with_indices", fn, inputs, 10, highest_opset());
  expect_export_fails(fn, inputs, 9, "opset >= 10");
}

TEST_F(Pool, AvgPool1dAnd3d) {
  for (bool count_include_pad : {false, true}) {
    expect_op_matches("aten::avg_pool1d",
                      [count_include_pad](const Inputs& in) {
                        return at::avg_pool1d(arg(in, 0), {3}, {2}, {1}, false, count_include_pad);
                      },
                      {at::randn({2, 3, 9})});
    expect_op_matches("aten::avg_pool3d",
                      [count_include_pad](const Inputs& in) {
                        return at::avg_pool3d(arg(in, 0), {2, 2, 3}, {2, 1, 2}, {1, 0, 1}, false,
                                              count_include_pad);
                      },
                      {at::randn({1, 2, 4, 5, 6})});
  }
}

// ----- adaptive pooling
// ---------------------------------------------------------------------------

TEST_F(Pool, AdaptiveAvgPool2d) {
  for (std::vector<int64_t> out : {std::vector<int64_t>{1, 1}, {2, 3}, {4, 6}, {8, 1}}) {
    SCOPED_TRACE(::testing::Message() << "output " << at::IntArrayRef(out));
    expect_op_matches("aten::adaptive_avg_pool2d",
                      [out](const Inputs& in) { return at::adaptive_avg_pool2d(arg(in, 0), out); },
                      {at::randn({2, 3, 8, 6})});
  }
}

// aten::_adaptive_avg_pool2d/3d: the core ATen form torch.export's decompositions give.
TEST_F(Pool, UnderscoreAdaptiveAvgPool) {
  expect_op_matches("aten::_adaptive_avg_pool2d",
                    [](const Inputs& in) {
                      return at::_adaptive_avg_pool2d(arg(in, 0), {2, 3});
                    },
                    {at::randn({2, 3, 8, 6})});
  expect_op_matches("aten::_adaptive_avg_pool3d",
                    [](const Inputs& in) {
                      return at::_adaptive_avg_pool3d(arg(in, 0), {1, 2, 2});
                    },
                    {at::randn({1, 2, 4, 4, 6})});
}

TEST_F(Pool, AdaptiveAvgPoolToANonDivisor) {
  // PyTorch's windows [floor(i·in/out), ceil((i+1)·in/out)) overlap and differ in size.
  for (std::vector<int64_t> out : {std::vector<int64_t>{3, 3}, {5, 4}, {3, 2}, {7, 6}}) {
    SCOPED_TRACE(::testing::Message() << "output " << at::IntArrayRef(out));
    expect_op_matches("aten::adaptive_avg_pool2d",
                      [out](const Inputs& in) { return at::adaptive_avg_pool2d(arg(in, 0), out); },
                      {at::randn({2, 3, 8, 6})});
  }
  expect_op_matches("aten::adaptive_avg_pool1d",
                    [](const Inputs& in) { return at::adaptive_avg_pool1d(arg(in, 0), {5}); },
                    {at::randn({2, 3, 7})});
  // Output sizes equal to and larger than the input's.
  for (std::vector<int64_t> out : {std::vector<int64_t>{8, 6}, {11, 6}, {8, 9}}) {
    SCOPED_TRACE(::testing::Message() << "output " << at::IntArrayRef(out));
    expect_op_matches("aten::adaptive_avg_pool2d",
                      [out](const Inputs& in) { return at::adaptive_avg_pool2d(arg(in, 0), out); },
                      {at::randn({2, 3, 8, 6})});
    expect_op_matches("aten::adaptive_max_pool2d",
                      [out](const Inputs& in) {
                        auto [values, indices] = at::adaptive_max_pool2d(arg(in, 0), out);
                        return c10::ivalue::Tuple::create({values, indices});
                      },
                      {at::randn({2, 3, 8, 6})});
  }
  expect_op_matches("aten::adaptive_avg_pool3d",
                    [](const Inputs& in) {
                      return at::adaptive_avg_pool3d(arg(in, 0), {3, 2, 4});
                    },
                    {at::randn({2, 2, 5, 4, 6})});
}

TEST_F(Pool, AdaptiveMaxPoolToANonDivisor) {
  expect_op_matches("aten::adaptive_max_pool2d",
                    [](const Inputs& in) {
                      return std::get<0>(at::adaptive_max_pool2d(arg(in, 0), {3, 4}));
                    },
                    {at::randn({2, 3, 8, 6})});
  expect_op_matches(
      "aten::adaptive_max_pool1d",
      [](const Inputs& in) { return std::get<0>(at::adaptive_max_pool1d(arg(in, 0), {3})); },
      {at::randn({2, 3, 7})});
  expect_op_matches("aten::adaptive_max_pool3d",
                    [](const Inputs& in) {
                      return std::get<0>(at::adaptive_max_pool3d(arg(in, 0), {2, 3, 3}));
                    },
                    {at::randn({1, 2, 5, 4, 6})});
}

TEST_F(Pool, AdaptiveAvgPool1dAnd3d) {
  for (int64_t out : {1, 4}) {
    expect_op_matches(
        "aten::adaptive_avg_pool1d",
        [out](const Inputs& in) { return at::adaptive_avg_pool1d(arg(in, 0), {out}); },
        {at::randn({2, 3, 8})});
  }
  for (std::vector<int64_t> out : {std::vector<int64_t>{1, 1, 1}, {2, 1, 3}}) {
    expect_op_matches("aten::adaptive_avg_pool3d",
                      [out](const Inputs& in) { return at::adaptive_avg_pool3d(arg(in, 0), out); },
                      {at::randn({1, 2, 4, 5, 6})});
  }
}

TEST_F(Pool, AdaptiveMaxPool) {
  for (std::vector<int64_t> out : {std::vector<int64_t>{1, 1}, {2, 3}}) {
    expect_op_matches(
        "aten::adaptive_max_pool2d",
        [out](const Inputs& in) { return std::get<0>(at::adaptive_max_pool2d(arg(in, 0), out)); },
        {at::randn({2, 3, 8, 6})});
  }
  expect_op_matches(
      "aten::adaptive_max_pool1d",
      [](const Inputs& in) { return std::get<0>(at::adaptive_max_pool1d(arg(in, 0), {2})); },
      {at::randn({2, 3, 8})});
  expect_op_matches("aten::adaptive_max_pool3d",
                    [](const Inputs& in) {
                      return std::get<0>(at::adaptive_max_pool3d(arg(in, 0), {1, 1, 1}));
                    },
                    {at::randn({1, 2, 4, 5, 6})});
}

TEST_F(Pool, AdaptiveMaxPoolWithIndices) {
  // Divisible sizes: MaxPool's indices; others: per-cell ArgMax mapped to PyTorch's indices.
  for (std::vector<int64_t> out : {std::vector<int64_t>{2, 2}, {3, 4}, {1, 1}}) {
    SCOPED_TRACE(::testing::Message() << "output " << at::IntArrayRef(out));
    expect_op_matches("aten::adaptive_max_pool2d",
                      [out](const Inputs& in) {
                        auto [values, indices] = at::adaptive_max_pool2d(arg(in, 0), out);
                        return c10::ivalue::Tuple::create({values, indices});
                      },
                      {at::randn({2, 3, 8, 6})});
  }
  expect_op_matches("aten::adaptive_max_pool1d",
                    [](const Inputs& in) {
                      auto [values, indices] = at::adaptive_max_pool1d(arg(in, 0), {3});
                      return c10::ivalue::Tuple::create({values, indices});
                    },
                    {at::randn({2, 3, 7})});
  expect_op_matches("aten::adaptive_max_pool3d",
                    [](const Inputs& in) {
                      auto [values, indices] = at::adaptive_max_pool3d(arg(in, 0), {2, 3, 2});
                      return c10::ivalue::Tuple::create({values, indices});
                    },
                    {at::randn({1, 2, 5, 4, 6})});
}

// max_unpool: the values scattered at max_pool's indices into zeros of the output size.
TEST_F(Pool, MaxUnpool) {
  {
    auto [y, i] = at::max_pool2d_with_indices(at::randn({2, 3, 6, 5}), {2, 2}, {2, 2});
    auto fn = [](const Inputs& in) { return at::max_unpool2d(arg(in, 0), arg(in, 1), {6, 5}); };
    expect_op_matches("aten::max_unpool2d", fn, {y, i});
    auto unbatched = [](const Inputs& in) {
      return at::max_unpool2d(arg(in, 0), arg(in, 1), {7, 6});  // a larger output
    };
    expect_op_matches("aten::max_unpool2d", unbatched, {y[0], i[0]});
  }
  {
    auto [y, i] = at::max_pool3d_with_indices(at::randn({1, 2, 4, 4, 6}), {2, 2, 3}, {2, 2, 3});
    auto fn = [](const Inputs& in) {
      return at::max_unpool3d(arg(in, 0), arg(in, 1), {4, 4, 6}, {2, 2, 3}, {0, 0, 0});
    };
    expect_op_matches("aten::max_unpool3d", fn, {y, i});
  }
  {
    // F.max_unpool1d: max_unpool2d of the unsqueezed input, in TorchScript
    auto [y, i] = at::max_pool1d_with_indices(at::randn({2, 3, 8}), {2}, {2});
    expect_script_matches("aten::max_unpool2d",
                          "def forward(self, y, i):\n"
                          "  return torch.max_unpool2d(y.unsqueeze(-1), i.unsqueeze(-1), [8, 1])"
                          ".squeeze(-1)\n",
                          {y, i});
  }
}

}  // namespace
}  // namespace torchonnx::testing
