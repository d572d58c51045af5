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
  expect_op_matches("aten::max_pool2d", fn, inputs, 10, kMaxOpset);
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
      Inputs inputs{at::randn({1, 2, 6, 6})};  // ceil_mode adds a last, overhanging window
      if (count_include_pad) {
        // Opset 9 would need extra end padding, which count_include_pad would count.
        expect_op_matches("aten::avg_pool2d", fn, inputs, 10, kMaxOpset);
        expect_export_fails(fn, inputs, 9, "needs opset 10");
      } else {
        expect_op_matches("aten::avg_pool2d", fn, inputs);
      }
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
  expect_export_fails(
      [](const Inputs& in) {
        return at::avg_pool2d(arg(in, 0), {3, 2}, {2, 2}, {0, 1}, true, true);
      },
      inputs, 13, "cannot express");
}

TEST_F(Pool, AvgPool2dCeilModeWithoutEffectAtOpset9) {
  expect_op_matches("aten::avg_pool2d",
                    [](const Inputs& in) {
                      return at::avg_pool2d(arg(in, 0), {2, 2}, {2, 2}, 0, /*ceil_mode=*/true);
                    },
                    {at::randn({1, 2, 6, 6})});
}

TEST_F(Pool, AvgPool2dDivisorOverrideIsRefused) {
  expect_export_fails(
      [](const Inputs& in) {
        return at::avg_pool2d(arg(in, 0), {2, 2}, {}, 0, false, true, 3);
      },
      {at::randn({1, 2, 4, 4})}, 13, "divisor_override");
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

TEST_F(Pool, AdaptiveAvgPoolToANonDivisorIsRefused) {
  expect_export_fails(
      [](const Inputs& in) {
        return at::adaptive_avg_pool2d(arg(in, 0), {3, 3});
      },
      {at::randn({1, 2, 8, 8})}, 13, "multiple of the output size");
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

TEST_F(Pool, AdaptiveMaxPoolIndicesAreRefused) {
  expect_export_fails(
      [](const Inputs& in) {
        auto [values, indices] = at::adaptive_max_pool2d(arg(in, 0), {2, 2});
        return c10::ivalue::Tuple::create({values, indices});
      },
      {at::randn({1, 2, 4, 4})}, 13, "indices");
}

}  // namespace
}  // namespace torchonnx::testing
