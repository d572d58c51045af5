// Numeric tests of the normalization converters: batch_norm (inference), layer_norm.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Norm : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

struct BatchNormParams {
  at::Tensor weight, bias, mean, var;
  explicit BatchNormParams(int64_t c)
      : weight(at::randn({c})),
        bias(at::randn({c})),
        mean(at::randn({c})),
        var(at::rand({c}) + 0.5) {}
  NamedTensors named() const {
    return {{"weight", weight}, {"bias", bias}, {"running_mean", mean}, {"running_var", var}};
  }
};

TEST_F(Norm, BatchNormInference) {
  BatchNormParams p(3);
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{4, 3}, {2, 3, 5}, {2, 3, 4, 4}, {1, 3, 2, 3, 2}}) {
    SCOPED_TRACE(::testing::Message() << "input " << at::IntArrayRef(shape));
    expect_op_matches(
        "aten::batch_norm",
        [p](const Inputs& in) {
          return at::batch_norm(arg(in, 0), p.weight, p.bias, p.mean, p.var, false, 0.1, 1e-5,
                                false);
        },
        {at::randn(shape)}, kMinOpset, kMaxOpset, p.named());
  }
}

TEST_F(Norm, BatchNormWithoutAffineParamsAndCustomEps) {
  BatchNormParams p(4);
  expect_op_matches("aten::batch_norm",
                    [p](const Inputs& in) {
                      return at::batch_norm(arg(in, 0), {}, {}, p.mean, p.var, false, 0.3, 1e-2,
                                            false);
                    },
                    {at::randn({2, 4, 3, 3})}, kMinOpset, kMaxOpset,
                    {{"running_mean", p.mean}, {"running_var", p.var}});
}

TEST_F(Norm, BatchNormInTrainingModeIsRefused) {
  BatchNormParams p(3);
  expect_export_fails(
      [p](const Inputs& in) {
        return at::batch_norm(arg(in, 0), p.weight, p.bias, p.mean.clone(), p.var.clone(), true,
                              0.1, 1e-5, false);
      },
      {at::randn({2, 3, 4})}, 13, "training mode");
}

struct LayerNormCase {
  std::vector<int64_t> input, normalized;
  bool weight, bias;
};

void expect_layer_norm(int first, int last) {
  for (const auto& c : std::vector<LayerNormCase>{{{2, 3, 8}, {8}, true, true},
                                                  {{2, 3, 4}, {3, 4}, true, true},
                                                  {{4, 6}, {6}, false, false},
                                                  {{2, 5}, {5}, true, false},
                                                  {{2, 5}, {5}, false, true}}) {
    SCOPED_TRACE(::testing::Message()
                 << "input " << at::IntArrayRef(c.input) << " normalized "
                 << at::IntArrayRef(c.normalized) << " weight " << c.weight << " bias " << c.bias);
    at::Tensor w = at::randn(c.normalized), b = at::randn(c.normalized);
    NamedTensors params;
    if (c.weight) params.push_back({"weight", w});
    if (c.bias) params.push_back({"bias", b});
    auto normalized = c.normalized;
    bool has_w = c.weight, has_b = c.bias;
    expect_op_matches(
        "aten::layer_norm",
        [=](const Inputs& in) {
          return at::layer_norm(arg(in, 0), normalized, has_w ? w : at::Tensor(),
                                has_b ? b : at::Tensor(), 1e-4);
        },
        {at::randn(c.input) * 3 + 1}, first, last, params);
  }
}

TEST_F(Norm, LayerNormDecomposedBeforeOpset17) {
  expect_layer_norm(kMinOpset, 16);
}

TEST_F(Norm, LayerNormalizationFromOpset17) {
  expect_layer_norm(17, kMaxOpset);
}

}  // namespace
}  // namespace torchonnx::testing
