// Numeric tests of the normalization converters: batch_norm (inference and training),
// instance_norm, layer_norm, native_layer_norm, group_norm, native_group_norm, _weight_norm, and
// the decompositions of F.normalize and local_response_norm.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <torch/nn/functional/normalization.h>

#include "ops/op_test_util.h"
#include "symbolic/registry.h"

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
        {at::randn(shape)}, kMinOpset, highest_opset(), p.named());
  }
}

TEST_F(Norm, BatchNormWithoutAffineParamsAndCustomEps) {
  BatchNormParams p(4);
  expect_op_matches("aten::batch_norm",
                    [p](const Inputs& in) {
                      return at::batch_norm(arg(in, 0), {}, {}, p.mean, p.var, false, 0.3, 1e-2,
                                            false);
                    },
                    {at::randn({2, 4, 3, 3})}, kMinOpset, highest_opset(),
                    {{"running_mean", p.mean}, {"running_var", p.var}});
}

TEST_F(Norm, BatchNormTrainingUsesBatchStatistics) {
  BatchNormParams p(3);
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{6, 3}, {2, 3, 5}, {2, 3, 4, 4}, {2, 3, 2, 3, 2}}) {
    SCOPED_TRACE(::testing::Message() << "input " << at::IntArrayRef(shape));
    // The running statistics are updated in place by libtorch (a side effect the model does not
    // reproduce); each trace gets its own copies.
    expect_op_matches("aten::batch_norm",
                      [p](const Inputs& in) {
                        return at::batch_norm(arg(in, 0), p.weight, p.bias, p.mean.clone(),
                                              p.var.clone(), true, 0.1, 1e-5, false);
                      },
                      {at::randn(shape) * 2 + 1}, kMinOpset, highest_opset(),
                      {{"weight", p.weight}, {"bias", p.bias}});
  }
}

TEST_F(Norm, BatchNormTrainingWithoutRunningStatsOrAffine) {
  expect_op_matches("aten::batch_norm",
                    [](const Inputs& in) {
                      return at::batch_norm(arg(in, 0), {}, {}, {}, {}, true, 0.1, 1e-3, false);
                    },
                    {at::randn({4, 2, 3}) * 3 - 1});
}

TEST_F(Norm, BatchNormDouble) {
  BatchNormParams p(3);
  auto d = [](const at::Tensor& t) { return t.to(at::kDouble); };
  expect_op_matches(
      "aten::batch_norm",
      [=](const Inputs& in) {
        return at::batch_norm(arg(in, 0), d(p.weight), {}, {}, {}, true, 0.1, 1e-5, false);
      },
      {at::randn({2, 3, 4}, at::kDouble)}, kMinOpset, highest_opset(), {{"weight", d(p.weight)}});
}

TEST_F(Norm, InstanceNormWithInputStats) {
  at::Tensor w = at::randn({3}), b = at::randn({3});
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{2, 3, 5}, {2, 3, 4, 4}, {1, 3, 2, 3, 2}}) {
    SCOPED_TRACE(::testing::Message() << "input " << at::IntArrayRef(shape));
    expect_op_matches("aten::instance_norm",
                      [=](const Inputs& in) {
                        return at::instance_norm(arg(in, 0), w, b, {}, {}, true, 0.1, 1e-5, false);
                      },
                      {at::randn(shape) * 2 + 1}, kMinOpset, highest_opset(),
                      {{"weight", w}, {"bias", b}});
  }
  expect_op_matches("aten::instance_norm",
                    [=](const Inputs& in) {
                      return at::instance_norm(arg(in, 0), {}, {}, {}, {}, true, 0.1, 1e-3, false);
                    },
                    {at::randn({2, 4, 6})});
}

TEST_F(Norm, InstanceNormWithRunningStats) {
  BatchNormParams p(3);
  expect_op_matches(
      "aten::instance_norm",
      [=](const Inputs& in) {
        return at::instance_norm(arg(in, 0), p.weight, p.bias, p.mean, p.var, false, 0.1, 1e-5,
                                 false);
      },
      {at::randn({2, 3, 4, 5})}, kMinOpset, highest_opset(), p.named());
  expect_op_matches("aten::instance_norm",
                    [=](const Inputs& in) {
                      return at::instance_norm(arg(in, 0), {}, {}, p.mean, p.var, false, 0.1, 1e-5,
                                               false);
                    },
                    {at::randn({2, 3, 4})}, kMinOpset, highest_opset(),
                    {{"running_mean", p.mean}, {"running_var", p.var}});
}

struct LayerNormCase {
  std::vector<int64_t> input, normalized;
  bool weight, bias;
  // An eps that matters: with inputs of variance ~0.01, eps=0.1 changes the output by ~3x, so a
  // converter that drops eps (LayerNormalization's default 1e-5) fails (the eps mutant).
  double eps = 1e-4, scale = 3;
};

void expect_layer_norm(int first, int last) {
  for (const auto& c : std::vector<LayerNormCase>{{{2, 3, 8}, {8}, true, true},
                                                  {{2, 3, 4}, {3, 4}, true, true},
                                                  {{4, 6}, {6}, false, false},
                                                  {{2, 5}, {5}, true, false},
                                                  {{2, 5}, {5}, false, true},
                                                  {{2, 3, 8}, {8}, true, true, 0.1, 0.1}}) {
    SCOPED_TRACE(::testing::Message() << "input " << at::IntArrayRef(c.input) << " normalized "
                                      << at::IntArrayRef(c.normalized) << " weight " << c.weight
                                      << " bias " << c.bias << " eps " << c.eps);
    at::Tensor w = at::randn(c.normalized), b = at::randn(c.normalized);
    NamedTensors params;
    if (c.weight) params.push_back({"weight", w});
    if (c.bias) params.push_back({"bias", b});
    auto normalized = c.normalized;
    bool has_w = c.weight, has_b = c.bias;
    double eps = c.eps;
    expect_op_matches(
        "aten::layer_norm",
        [=](const Inputs& in) {
          return at::layer_norm(arg(in, 0), normalized, has_w ? w : at::Tensor(),
                                has_b ? b : at::Tensor(), eps);
        },
        {at::randn(c.input) * c.scale + 1}, first, last, params);
  }
}

TEST_F(Norm, LayerNormDecomposedBeforeOpset17) {
  expect_layer_norm(kMinOpset, 16);
}

TEST_F(Norm, LayerNormalizationFromOpset17) {
  expect_layer_norm(17, highest_opset());
}

}  // namespace
}  // namespace torchonnx::testing

namespace torchonnx::testing {
namespace {

TEST_F(Norm, NativeLayerNormReturnsMeanAndRstd) {
  for (const auto& c : std::vector<LayerNormCase>{{{2, 3, 8}, {8}, true, true},
                                                  {{2, 3, 4}, {3, 4}, true, false},
                                                  {{4, 6}, {6}, false, false}}) {
    SCOPED_TRACE(::testing::Message() << "input " << at::IntArrayRef(c.input));
    at::Tensor w = at::randn(c.normalized), b = at::randn(c.normalized);
    NamedTensors params;
    if (c.weight) params.push_back({"weight", w});
    if (c.bias) params.push_back({"bias", b});
    auto normalized = c.normalized;
    bool has_w = c.weight, has_b = c.bias;
    double eps = c.eps;
    expect_op_matches(
        "aten::native_layer_norm",
        [=](const Inputs& in) {
          auto [y, mean, rstd] = at::native_layer_norm(
              arg(in, 0), normalized, has_w ? w : at::Tensor(), has_b ? b : at::Tensor(), 1e-5);
          return c10::ivalue::Tuple::create({y, mean, rstd});
        },
        {at::randn(c.input) * 2 + 0.5}, kMinOpset, highest_opset(), params);
  }
}

TEST_F(Norm, NativeLayerNormDouble) {
  expect_op_matches("aten::native_layer_norm",
                    [=](const Inputs& in) {
                      auto [y, mean, rstd] = at::native_layer_norm(arg(in, 0), {5}, {}, {}, 1e-5);
                      return c10::ivalue::Tuple::create({y, mean, rstd});
                    },
                    {at::randn({3, 5}, at::kDouble)});
}

TEST_F(Norm, GroupNorm) {
  at::Tensor w = at::randn({6}), b = at::randn({6});
  for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 6}, {2, 6, 5}, {2, 6, 3, 4}}) {
    for (int64_t groups : {1, 2, 3, 6}) {
      SCOPED_TRACE(::testing::Message()
                   << "input " << at::IntArrayRef(shape) << " groups " << groups);
      expect_op_matches(
          "aten::group_norm",
          [=](const Inputs& in) { return at::group_norm(arg(in, 0), groups, w, b, 1e-5); },
          {at::randn(shape) * 2 + 1}, kMinOpset, highest_opset(), {{"weight", w}, {"bias", b}});
    }
  }
  expect_op_matches("aten::group_norm",
                    [=](const Inputs& in) { return at::group_norm(arg(in, 0), 2, {}, {}, 1e-3); },
                    {at::randn({3, 4, 5})});
}

// From opset 21 group_norm of a float (N, C, ...) input is one GroupNormalization node (absent
// weight and bias: ones and zeros of C); (N, C) inputs and doubles keep the composition.
TEST_F(Norm, GroupNormIsGroupNormalizationFromOpset21) {
  TORCHONNX_SKIP_BELOW_OPSET(21);
  at::Tensor w = at::randn({6}), b = at::randn({6});
  auto affine = [=](const Inputs& in) { return at::group_norm(arg(in, 0), 3, w, b, 1e-5); };
  const Inputs x{at::randn({2, 6, 3, 4}) * 2 + 1};
  EXPECT_EQ(onnx_op_counts(affine, x, 21, {{"weight", w}, {"bias", b}}),
            (std::map<std::string, int>{{"GroupNormalization", 1}}));
  EXPECT_EQ(onnx_op_counts(affine, x, 20, {{"weight", w}, {"bias", b}}).count("GroupNormalization"),
            0u);
  for (int64_t groups : {1, 2, 6}) {
    auto plain = [=](const Inputs& in) { return at::group_norm(arg(in, 0), groups, {}, {}, 1e-3); };
    expect_op_matches("aten::group_norm", plain, {at::randn({2, 6, 5})}, 21);
    EXPECT_EQ(onnx_op_counts(plain, {at::randn({2, 6, 5})}, 21).count("GroupNormalization"), 1u);
  }
  at::Tensor wd = w.to(at::kDouble), bd = b.to(at::kDouble);
  expect_op_matches("aten::group_norm",
                    [=](const Inputs& in) { return at::group_norm(arg(in, 0), 3, wd, bd, 1e-5); },
                    {at::randn({2, 6, 3, 4}, at::kDouble)}, 21, highest_opset(),
                    {{"weight", wd}, {"bias", bd}});
}

TEST_F(Norm, NativeGroupNorm) {
  at::Tensor w = at::randn({4}), b = at::randn({4});
  expect_op_matches(
      "aten::native_group_norm",
      [=](const Inputs& in) {
        auto [y, mean, rstd] = at::native_group_norm(arg(in, 0), w, b, 2, 4, 15, 2, 1e-5);
        return c10::ivalue::Tuple::create({y, mean, rstd});
      },
      {at::randn({2, 4, 3, 5})}, kMinOpset, highest_opset(), {{"weight", w}, {"bias", b}});
}

TEST_F(Norm, WeightNorm) {
  at::Tensor v = at::randn({4, 3, 2});
  for (int64_t dim : {0, 1, 2, -1}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    std::vector<int64_t> gshape{1, 1, 1};
    if (dim >= 0) gshape[dim] = v.size(dim);
    at::Tensor gain = at::rand(dim == -1 ? std::vector<int64_t>{} : gshape) + 0.5;
    expect_op_matches(
        "aten::_weight_norm",
        [=](const Inputs& in) { return at::_weight_norm(arg(in, 0), arg(in, 1), dim); }, {v, gain});
  }
  expect_op_matches("aten::_weight_norm",
                    [=](const Inputs& in) { return at::_weight_norm(arg(in, 0), arg(in, 1), 0); },
                    {at::randn({5}), at::rand({5}) + 0.5});
}

TEST_F(Norm, FunctionalNormalize) {
  // F.normalize records norm (keepdim) / clamp_min(eps) / expand_as / div.
  namespace F = torch::nn::functional;
  expect_op_matches("aten::clamp_min",
                    [](const Inputs& in) {
                      return F::normalize(arg(in, 0),
                                          F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12));
                    },
                    {at::randn({3, 4, 2})});
  expect_op_matches("aten::clamp_min",
                    [](const Inputs& in) {
                      return F::normalize(arg(in, 0),
                                          F::NormalizeFuncOptions().p(1).dim(-1).eps(1e-6));
                    },
                    {at::randn({3, 4})});
}

// aten::rms_norm (nn.RMSNorm, PyTorch >= 2.4; skipped on libtorch 1.13).
TEST_F(Norm, RmsNormWithWeightAndEps) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::rms_norm");
  expect_script_matches("aten::rms_norm",
                        script_module("def forward(self, x):\n"
                                      "  return torch.rms_norm(x, [8], self.weight, 1e-5)\n",
                                      {{"weight", at::randn({8})}}),
                        {at::randn({2, 3, 8})});
}

TEST_F(Norm, RmsNormOverTwoAxesWithDefaultEps) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::rms_norm");
  // eps None: the dtype's machine epsilon; tiny inputs make it count.
  expect_script_matches("aten::rms_norm",
                        "def forward(self, x):\n  return torch.rms_norm(x, [3, 4])\n",
                        {at::randn({2, 3, 4}) * 1e-3});
}

TEST_F(Norm, RmsNormDouble) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::rms_norm");
  expect_script_matches("aten::rms_norm",
                        "def forward(self, x, w):\n  return torch.rms_norm(x, [5], w)\n",
                        {at::randn({4, 5}, at::kDouble), at::randn({5}, at::kDouble)});
}

// aten::_native_batch_norm_legit_no_training (torch.export's core ATen form; PyTorch >= 2.0):
// output 0 read, and the empty saved statistics returned beside it.
TEST_F(Norm, NativeBatchNormLegitNoTraining) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::_native_batch_norm_legit_no_training");
  expect_script_matches(
      "aten::_native_batch_norm_legit_no_training",
      script_module("def forward(self, x):\n"
                    "  y, m, s = torch._native_batch_norm_legit_no_training(x, self.w, self.b, "
                    "self.mean, self.var, 0.1, 1e-3)\n"
                    "  return y, s\n",
                    {{"w", at::randn({4})},
                     {"b", at::randn({4})},
                     {"mean", at::randn({4})},
                     {"var", at::rand({4}) + 0.5}}),
      {at::randn({2, 4, 3, 3})});
  expect_script_matches("aten::_native_batch_norm_legit_no_training",
                        script_module("def forward(self, x):\n"
                                      "  return torch._native_batch_norm_legit_no_training(x, "
                                      "None, None, self.mean, self.var, 0.1, 1e-5)[0]\n",
                                      {{"mean", at::randn({3})}, {"var", at::rand({3}) + 0.5}}),
                        {at::randn({5, 3})});
}

TEST_F(Norm, LocalResponseNormDecomposition) {
  // No aten op: libtorch's functional decomposes into mul/unsqueeze/pad/avg_pool/pow/div.
  namespace F = torch::nn::functional;
  // The decomposition pads with F::pad, recorded as aten::_pad_enum (the padding family's).
  if (symbolic::Registry::builtin().find("aten::_pad_enum", highest_opset()) == nullptr) {
    GTEST_SKIP() << "aten::_pad_enum (F::pad in libtorch's local_response_norm) has no converter";
  }
  for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 5, 4}, {2, 5, 3, 4}}) {
    SCOPED_TRACE(::testing::Message() << "input " << at::IntArrayRef(shape));
    const std::string pool = shape.size() == 3 ? "aten::avg_pool2d" : "aten::avg_pool3d";
    expect_op_matches(pool,
                      [](const Inputs& in) {
                        return F::local_response_norm(
                            arg(in, 0),
                            F::LocalResponseNormFuncOptions(3).alpha(1e-2).beta(0.75).k(2));
                      },
                      {at::randn(shape)});
  }
}

}  // namespace
}  // namespace torchonnx::testing
