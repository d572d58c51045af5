// Tests of the dropout family. Eval mode is exact (identity); training mode draws random masks
// that cannot match libtorch's, so the traced functions return properties of the dropout output
// (deterministic up to a negligible probability) that both libtorch and ONNX Runtime must satisfy:
// every output value is either dropped or x · 1/(1-p) (alpha: a·x + alpha·a·p), the dropped
// fraction is within bounds around p, and feature masks are all-or-nothing per channel.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

constexpr double kSeluAlpha = 1.7580993408473766;

class Dropout : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

using DropoutFn = std::function<at::Tensor(const at::Tensor&, double, bool)>;

// Inputs away from 0 so that "dropped" is recognizable.
at::Tensor away_from_zero(std::vector<int64_t> shape, at::ScalarType type = at::kFloat) {
  at::Tensor x = at::rand(shape, at::TensorOptions().dtype(type)) + 0.5;
  return x * (at::randint(0, 2, shape).to(type) * 2 - 1);
}

// y = kept · (x · scale + shift) + (1 - kept) · dropped_value, elementwise.
c10::IValue properties(const at::Tensor& x, const at::Tensor& y, double p, double scale,
                       double shift, double dropped_value, bool feature) {
  at::Tensor kept_value = x * scale + shift;
  auto close = [](const at::Tensor& a, const at::Tensor& b) {
    return at::le(at::abs(a - b), at::abs(b) * 1e-5 + 1e-6);
  };
  at::Tensor dropped = close(y, at::full_like(y, dropped_value));
  at::Tensor kept = close(y, kept_value);
  at::Tensor each_valid = at::all(at::logical_or(dropped, kept));
  at::Tensor fraction = at::mean(dropped.to(at::kFloat));
  // 4000+ draws (elements, or 400 channels): 8+ standard deviations around p.
  at::Tensor fraction_ok = at::logical_and(at::gt(fraction, p - 0.1), at::lt(fraction, p + 0.1));
  if (!feature) return c10::ivalue::Tuple::create({each_valid, fraction_ok});
  // All-or-nothing per (sample, channel): the fraction dropped in each channel is 0 or 1.
  at::Tensor per_channel = at::mean(dropped.to(at::kFloat).flatten(2), {2});
  at::Tensor whole = at::all(at::logical_or(at::eq(per_channel, 0.0), at::eq(per_channel, 1.0)));
  return c10::ivalue::Tuple::create({each_valid, fraction_ok, whole});
}

void expect_training_properties(const std::string& op, const DropoutFn& dropout, double p,
                                bool feature, bool alpha, const at::Tensor& x,
                                int first = kMinOpset, int last = highest_opset()) {
  double scale = 1 / (1 - p), shift = 0, dropped_value = 0;
  if (alpha) {
    const double a = 1.0 / std::sqrt((kSeluAlpha * kSeluAlpha * p + 1) * (1 - p));
    scale = a;
    shift = kSeluAlpha * a * p;
    dropped_value = kSeluAlpha * a * (p - 1);
  }
  expect_op_matches(
      op,
      [=](const Inputs& in) {
        at::Tensor x = arg(in, 0);
        return properties(x, dropout(x, p, true), p, scale, shift, dropped_value, feature);
      },
      {x}, first, last);
}

TEST_F(Dropout, DropoutTraining) {
  DropoutFn fn = [](const at::Tensor& x, double p, bool t) { return at::dropout(x, p, t); };
  for (double p : {0.2, 0.5, 0.8}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    expect_training_properties("aten::dropout", fn, p, false, false, away_from_zero({40, 100}));
  }
  expect_training_properties("aten::dropout", fn, 0.3, false, false,
                             away_from_zero({10, 20, 30}, at::kDouble));
}

TEST_F(Dropout, DropoutTrainingEdgeProbabilities) {
  // p = 0 keeps everything; p = 1 multiplies by 0.
  expect_op_matches("aten::dropout",
                    [](const Inputs& in) { return at::dropout(arg(in, 0), 1.0, true); },
                    {at::randn({3, 4})});
  // p = 0 returns the input: the node reaches the converter, which returns its input.
  expect_op_matches("aten::dropout",
                    [](const Inputs& in) { return at::dropout(arg(in, 0), 0.0, true) * 2; },
                    {at::randn({3, 4})});
}

TEST_F(Dropout, FeatureDropoutTraining) {
  DropoutFn fn = [](const at::Tensor& x, double p, bool t) { return at::feature_dropout(x, p, t); };
  for (double p : {0.3, 0.6}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    expect_training_properties("aten::feature_dropout", fn, p, true, false,
                               away_from_zero({20, 20, 3, 4}));
    expect_training_properties("aten::feature_dropout", fn, p, true, false,
                               away_from_zero({40, 10, 7}));
  }
}

TEST_F(Dropout, AlphaDropoutTraining) {
  DropoutFn fn = [](const at::Tensor& x, double p, bool t) { return at::alpha_dropout(x, p, t); };
  for (double p : {0.2, 0.5}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    expect_training_properties("aten::alpha_dropout", fn, p, false, true,
                               away_from_zero({50, 100}));
  }
}

TEST_F(Dropout, FeatureAlphaDropoutTraining) {
  DropoutFn fn = [](const at::Tensor& x, double p, bool t) {
    return at::feature_alpha_dropout(x, p, t);
  };
  expect_training_properties("aten::feature_alpha_dropout", fn, 0.4, true, true,
                             away_from_zero({20, 20, 5, 2}));
}

TEST_F(Dropout, InPlaceDropoutsInTraining) {
  // TorchScript's in-place forms become the out-of-place ones (RemoveInplaceOps).
  const std::string check =
      "  kept = torch.abs(y - x / (1 - 0.5)) <= 1e-5 * torch.abs(x) + 1e-6\n"
      "  frac = (y == 0).float().mean()\n"
      "  return torch.all((y == 0) | kept), (frac > 0.4) & (frac < 0.6)\n";
  expect_script_matches("aten::dropout",
                        "def forward(self, x):\n"
                        "  y = x.clone()\n"
                        "  torch.dropout_(y, 0.5, True)\n" +
                            check,
                        {away_from_zero({50, 100})});
  expect_script_matches("aten::feature_dropout",
                        "def forward(self, x):\n"
                        "  y = x.clone()\n"
                        "  torch.feature_dropout_(y, 0.5, True)\n" +
                            check,
                        {away_from_zero({100, 40, 3})});
}

TEST_F(Dropout, NativeDropoutTraining) {
  for (double p : {0.25, 0.7}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    expect_op_matches(
        "aten::native_dropout",
        [p](const Inputs& in) {
          at::Tensor x = arg(in, 0);
          auto [y, mask] = at::native_dropout(x, p, true);
          // The mask marks exactly the kept values, which are x / (1 - p).
          at::Tensor expected = at::where(mask, x * (1 / (1 - p)), at::zeros_like(x));
          at::Tensor same = at::all(at::le(at::abs(y - expected), at::abs(x) * 1e-5 + 1e-6));
          at::Tensor kept = at::mean(mask.to(at::kFloat));
          return c10::ivalue::Tuple::create(
              {same, at::logical_and(at::gt(kept, 1 - p - 0.1), at::lt(kept, 1 - p + 0.1))});
        },
        {away_from_zero({40, 100})});
  }
}

TEST_F(Dropout, NativeDropoutEval) {
  expect_op_matches("aten::native_dropout",
                    [](const Inputs& in) {
                      auto [y, mask] = at::native_dropout(arg(in, 0), 0.5, false);
                      return c10::ivalue::Tuple::create({y, mask});
                    },
                    {at::randn({3, 4, 5})});
}

TEST_F(Dropout, EvalDropoutsAreIdentity) {
  // Removed before conversion (RemoveEvalNoOps): compared exactly with libtorch.
  for (auto fn : std::vector<DropoutFn>{
           [](const at::Tensor&x, double p, bool t) { return at::dropout(x, p, t); },
           [](const at::Tensor&x, double p, bool t) { return at::feature_dropout(x, p, t); },
           [](const at::Tensor&x, double p, bool t) { return at::alpha_dropout(x, p, t); },
           [](const at::Tensor&x, double p, bool t) {
             return at::feature_alpha_dropout(x, p, t);
           }}) {
    expect_matches_at_opsets([fn](const Inputs& in) { return fn(arg(in, 0), 0.5, false) + 1; },
                             {at::randn({2, 3, 4})});
  }
}

}  // namespace
}  // namespace torchonnx::testing
