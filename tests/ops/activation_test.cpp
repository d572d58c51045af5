// Numeric tests of the activation converters: export at every opset, run in ORT, compare.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

c10::IValue tuple(std::vector<at::Tensor> parts) {
  return c10::ivalue::Tuple::create(std::vector<c10::IValue>(parts.begin(), parts.end()));
}

class Activation : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Activation, Relu) {
  expect_op_matches("aten::relu", [](const Inputs& in) { return at::relu(arg(in, 0)); },
                    {at::randn({2, 3, 4})});
  // Integers: Where(x < 0, 0, x), ONNX Runtime having no integer Relu kernel (found by the OpInfo
  // sweep).
  expect_op_matches("aten::relu", [](const Inputs& in) { return at::relu(arg(in, 0)); },
                    {at::randint(-5, 5, {2, 3})});
}

// In-place ops reach the converters as their out-of-place twins (the RemoveInplaceOps pass).
TEST_F(Activation, InPlaceReluUsesTheOutOfPlaceConverter) {
  expect_op_matches("aten::relu",
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) * 2;
                      y.relu_();
                      return y;
                    },
                    {at::randn({2, 3})});
}

TEST_F(Activation, SigmoidAndTanh) {
  expect_op_matches("aten::sigmoid", [](const Inputs& in) { return at::sigmoid(arg(in, 0)); },
                    {at::randn({3, 4}) * 4});
  expect_op_matches("aten::tanh", [](const Inputs& in) { return at::tanh(arg(in, 0)); },
                    {at::randn({3, 4}) * 2});
  // Of integers: float results, as in PyTorch (the model was invalid; found by the OpInfo sweep).
  for (const char* op : {"aten::sigmoid", "aten::tanh"}) {
    expect_op_matches(op,
                      [op](const Inputs& in) {
                        return std::string(op) == "aten::tanh" ? at::tanh(arg(in, 0))
                                                               : at::sigmoid(arg(in, 0));
                      },
                      {at::randint(-3, 3, {2, 3})});
  }
}

TEST_F(Activation, Hardsigmoid) {
  expect_op_matches("aten::hardsigmoid",
                    [](const Inputs& in) { return at::hardsigmoid(arg(in, 0)); },
                    {at::randn({2, 8}) * 4});
}

TEST_F(Activation, HardswishBeforeOpset14) {
  expect_op_matches(
      "aten::hardswish", [](const Inputs& in) { return at::hardswish(arg(in, 0)); },
      {at::randn({2, 8}) * 4}, kMinOpset, 13);
}

TEST_F(Activation, HardswishFromOpset14) {
  expect_op_matches(
      "aten::hardswish", [](const Inputs& in) { return at::hardswish(arg(in, 0)); },
      {at::randn({2, 8}) * 4}, 14, highest_opset());
}

TEST_F(Activation, Silu) {
  expect_op_matches("aten::silu", [](const Inputs& in) { return at::silu(arg(in, 0)); },
                    {at::randn({3, 5}) * 3});
}

TEST_F(Activation, Hardtanh) {
  expect_op_matches("aten::hardtanh",
                    [](const Inputs& in) { return at::hardtanh(arg(in, 0), -0.5, 2.0); },
                    {at::randn({3, 5}) * 3});
}

TEST_F(Activation, HardtanhDefaultsInPlaceAndDouble) {
  expect_op_matches("aten::hardtanh", [](const Inputs& in) { return at::hardtanh(arg(in, 0)); },
                    {at::randn({3, 5}) * 3});
  // ONNX Runtime implements Clip-6 and Clip-11 for float only: double from Clip-12.
  expect_op_matches(
      "aten::hardtanh", [](const Inputs& in) { return at::hardtanh(arg(in, 0)); },
      {at::randn({3, 5}, at::kDouble) * 3}, 12, highest_opset());
  expect_op_matches("aten::hardtanh",  // hardtanh_, made out-of-place by RemoveInplaceOps
                    [](const Inputs& in) {
                      at::Tensor y = arg(in, 0) + 0;
                      at::hardtanh_(y, 0.0, 1.0);
                      return y;
                    },
                    {at::randn({3, 5}) * 3});
}

TEST_F(Activation, Relu6) {
  expect_op_matches("aten::relu6", [](const Inputs& in) { return at::relu6(arg(in, 0)); },
                    {at::randn({3, 5}) * 5});
}

TEST_F(Activation, LeakyRelu) {
  expect_op_matches("aten::leaky_relu", [](const Inputs& in) { return at::leaky_relu(arg(in, 0)); },
                    {at::randn({3, 5})});
  expect_op_matches("aten::leaky_relu",
                    [](const Inputs& in) { return at::leaky_relu(arg(in, 0), 0.3); },
                    {at::randn({3, 5})});
}

TEST_F(Activation, GeluBothApproximations) {
  for (const char* approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    expect_op_matches("aten::gelu",
                      [approximate](const Inputs& in) { return at::gelu(arg(in, 0), approximate); },
                      {at::randn({4, 6})});
  }
}

// From opset 20 gelu is one Gelu node with the same approximation (float); double inputs keep the
// composition, which ONNX Runtime runs in double.
TEST_F(Activation, GeluIsOneGeluNodeFromOpset20) {
  TORCHONNX_SKIP_BELOW_OPSET(20);
  const Inputs x{at::randn({4, 6}) * 3};
  for (const char* approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    auto fn = [approximate](const Inputs& in) { return at::gelu(arg(in, 0), approximate); };
    expect_op_matches("aten::gelu", fn, x, 20);
    EXPECT_EQ(onnx_op_counts(fn, x, 20), (std::map<std::string, int>{{"Gelu", 1}}));
    EXPECT_EQ(onnx_op_counts(fn, x, 19).count("Gelu"), 0u);
    const Inputs d{at::randn({4, 6}, at::kDouble)};
    expect_op_matches("aten::gelu", fn, d, 20);
    EXPECT_EQ(onnx_op_counts(fn, d, 20).count("Gelu"), 0u);
  }
}

TEST_F(Activation, SoftmaxOverEachDim) {
  for (int64_t dim : {0, 1, 2, -1, -2}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::softmax",
                      [dim](const Inputs& in) { return at::softmax(arg(in, 0), dim); },
                      {at::randn({2, 5, 3})});
  }
}

TEST_F(Activation, SoftmaxWithDtype) {
  expect_op_matches("aten::softmax",
                    [](const Inputs& in) { return at::softmax(arg(in, 0), 1, at::kDouble); },
                    {at::randn({2, 5, 3})});
}

// aten::_safe_softmax (PyTorch >= 2.5; SDPA's masked softmax): a row that is -inf throughout
// gives 0, not NaN; a row with one finite value its softmax.
TEST_F(Activation, SafeSoftmaxZeroesFullyMaskedRows) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::_safe_softmax");
  at::Tensor x = at::randn({2, 3, 4});
  x.index_put_({0, 1}, -INFINITY);
  x.index_put_({1, 2, at::indexing::Slice(0, 3)}, -INFINITY);
  expect_script_matches("aten::_safe_softmax",
                        "def forward(self, x):\n"
                        "  return torch._safe_softmax(x, -1), "
                        "torch._safe_softmax(x, 1, 7)\n",
                        {x});
}

TEST_F(Activation, SoftmaxOfZeroDimTensor) {
  expect_op_matches("aten::softmax", [](const Inputs& in) { return at::softmax(arg(in, 0), 0); },
                    {at::scalar_tensor(0.3)});
}

TEST_F(Activation, LogSoftmax) {
  for (int64_t dim : {0, -1}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::log_softmax",
                      [dim](const Inputs& in) { return at::log_softmax(arg(in, 0), dim); },
                      {at::randn({4, 3, 5})});
  }
  expect_op_matches("aten::log_softmax",
                    [](const Inputs& in) { return at::log_softmax(arg(in, 0), 1, at::kDouble); },
                    {at::randn({4, 3})});
}

// ----- torch.nn activations lowered to ONNX ops or exact compositions ---------------------------

// Inputs every activation is checked on: a float matrix, a double vector, a 0-d tensor.
std::vector<at::Tensor> activation_inputs() {
  return {at::randn({3, 4}) * 3, at::randn({6}, at::kDouble) * 3, at::scalar_tensor(-0.7)};
}

void expect_activation_matches(const std::string& op, const TracedFunction& fn,
                               int first = kMinOpset, int last = highest_opset()) {
  for (const at::Tensor& x : activation_inputs()) {
    SCOPED_TRACE(x.toString());
    expect_op_matches(op, fn, {x}, first, last);
  }
}

TEST_F(Activation, OnDoubleInputs) {
  // ONNX Runtime lacks double kernels for several activation ops (LeakyRelu, Elu, ...).
  const Inputs x{at::randn({3, 4}, at::kDouble) * 3};
  expect_op_matches(
      "aten::relu", [](const Inputs& in) { return at::relu(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::sigmoid", [](const Inputs& in) { return at::sigmoid(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::tanh", [](const Inputs& in) { return at::tanh(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::leaky_relu", [](const Inputs& in) { return at::leaky_relu(arg(in, 0), 0.2); }, x);
  expect_op_matches(
      "aten::hardsigmoid", [](const Inputs& in) { return at::hardsigmoid(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::hardswish", [](const Inputs& in) { return at::hardswish(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::gelu", [](const Inputs& in) { return at::gelu(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::silu", [](const Inputs& in) { return at::silu(arg(in, 0)); }, x);
  expect_op_matches(
      "aten::softmax", [](const Inputs& in) { return at::softmax(arg(in, 0), 0); }, x);
}

TEST_F(Activation, Elu) {
  expect_activation_matches("aten::elu", [](const Inputs& in) { return at::elu(arg(in, 0)); });
  expect_activation_matches("aten::elu",
                            [](const Inputs& in) { return at::elu(arg(in, 0), 0.5, 2.0); });
  // input_scale != 1: not ONNX Elu's formula.
  expect_activation_matches("aten::elu",
                            [](const Inputs& in) { return at::elu(arg(in, 0), 1.5, 0.7, 2.5); });
}

TEST_F(Activation, Selu) {
  expect_activation_matches("aten::selu", [](const Inputs& in) { return at::selu(arg(in, 0)); });
}

TEST_F(Activation, Celu) {
  expect_activation_matches("aten::celu", [](const Inputs& in) { return at::celu(arg(in, 0)); });
  expect_activation_matches("aten::celu",
                            [](const Inputs& in) { return at::celu(arg(in, 0), 2.5); });
  // A negative alpha: ATen's elu(alpha, 1, 1/alpha), not ONNX Celu's max/min formula.
  expect_activation_matches("aten::celu",
                            [](const Inputs& in) { return at::celu(arg(in, 0), -0.5); });
}

TEST_F(Activation, Glu) {
  for (int64_t dim : {0, 1, -1}) {
    SCOPED_TRACE(dim);
    expect_op_matches("aten::glu", [dim](const Inputs& in) { return at::glu(arg(in, 0), dim); },
                      {at::randn({4, 6, 2})});
  }
  expect_op_matches("aten::glu", [](const Inputs& in) { return at::glu(arg(in, 0)); },
                    {at::randn({8}, at::kDouble)});
}

TEST_F(Activation, Mish) {
  expect_activation_matches("aten::mish", [](const Inputs& in) { return at::mish(arg(in, 0)); });
}

// From opset 18 mish is one Mish node (float); double inputs keep the composition.
TEST_F(Activation, MishIsOneMishNodeFromOpset18) {
  TORCHONNX_SKIP_BELOW_OPSET(18);
  auto fn = [](const Inputs& in) { return at::mish(arg(in, 0)); };
  const Inputs x{at::randn({3, 7}) * 4};
  EXPECT_EQ(onnx_op_counts(fn, x, 18), (std::map<std::string, int>{{"Mish", 1}}));
  EXPECT_EQ(onnx_op_counts(fn, x, 17).count("Mish"), 0u);
  expect_op_matches("aten::mish", fn, {at::randn({3, 7}, at::kDouble)}, 18);
}

TEST_F(Activation, Softplus) {
  expect_activation_matches("aten::softplus",
                            [](const Inputs& in) { return at::softplus(arg(in, 0)); });
  expect_activation_matches("aten::softplus",
                            [](const Inputs& in) { return at::softplus(arg(in, 0), 2.0, 1.5); });
  expect_activation_matches("aten::softplus",
                            [](const Inputs& in) { return at::softplus(arg(in, 0), 0.5, -1.0); });
  // Beyond the default threshold the input is returned as is (no exp overflow).
  expect_op_matches("aten::softplus", [](const Inputs& in) { return at::softplus(arg(in, 0)); },
                    {at::tensor({-200.0f, -20.0f, 19.0f, 21.0f, 200.0f})});
}

TEST_F(Activation, HardshrinkAndSoftshrink) {
  for (const char* op : {"aten::hardshrink", "aten::softshrink"}) {
    SCOPED_TRACE(op);
    const bool hard = std::string(op) == "aten::hardshrink";
    expect_activation_matches(op, [hard](const Inputs& in) {
      return hard ? at::hardshrink(arg(in, 0)) : at::softshrink(arg(in, 0));
    });
    expect_activation_matches(op, [hard](const Inputs& in) {
      return hard ? at::hardshrink(arg(in, 0), 1.5) : at::softshrink(arg(in, 0), 1.5);
    });
  }
  expect_op_matches("aten::hardshrink",
                    [](const Inputs& in) { return at::hardshrink(arg(in, 0), -0.5); },
                    {at::randn({3, 4})});
}

TEST_F(Activation, Threshold) {
  expect_activation_matches("aten::threshold",
                            [](const Inputs& in) { return at::threshold(arg(in, 0), 0.3, -2.0); });
  expect_activation_matches("aten::threshold",
                            [](const Inputs& in) { return at::threshold(arg(in, 0), -1, 5); });
  // Int64: the scalars are converted to int64 (0.5 → 0).
  expect_op_matches("aten::threshold",
                    [](const Inputs& in) { return at::threshold(arg(in, 0), 2, 9); },
                    {at::arange(-3, 6)});
  expect_op_matches("aten::threshold",
                    [](const Inputs& in) { return at::threshold(arg(in, 0), 0.5, -1); },
                    {at::arange(-3, 6)});
}

TEST_F(Activation, LogSigmoid) {
  expect_activation_matches("aten::log_sigmoid",
                            [](const Inputs& in) { return at::log_sigmoid(arg(in, 0)); });
  // Large magnitudes: no -inf from Log(Sigmoid(-100)).
  expect_op_matches("aten::log_sigmoid",
                    [](const Inputs& in) { return at::log_sigmoid(arg(in, 0)); },
                    {at::tensor({-100.0f, -30.0f, 0.0f, 30.0f, 100.0f})});
}

TEST_F(Activation, Logit) {
  // Inside (0, 1), at its ends (±inf without eps) and outside (NaN without eps, clamped with it).
  at::Tensor x = at::tensor({0.01f, 0.2f, 0.5f, 0.93f, 0.0f, 1.0f, -0.5f, 1.5f}).reshape({2, 4});
  expect_op_matches("aten::logit", [](const Inputs& in) { return at::logit(arg(in, 0)); }, {x});
  for (double eps : {0.0, 1e-6, 0.1, 0.3}) {
    SCOPED_TRACE(eps);
    expect_op_matches("aten::logit", [eps](const Inputs& in) { return at::logit(arg(in, 0), eps); },
                      {x});
  }
  // A negative eps is ignored, as ATen's kernel does; double inputs.
  expect_op_matches("aten::logit", [](const Inputs& in) { return at::logit(arg(in, 0), -1.0); },
                    {x.to(at::kDouble)});
  expect_op_matches("aten::logit", [](const Inputs& in) { return at::logit(arg(in, 0), 0.25); },
                    {x.to(at::kDouble)});
  expect_script_matches("aten::logit",
                        "def forward(self, x):\n  return torch.logit(x, eps=0.05), x.logit()\n",
                        {at::rand({3, 5})});
}

TEST_F(Activation, PreluOneWeight) {
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4, 5}), at::tensor({0.25f})});
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({7}), at::tensor({-0.5f})});
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::scalar_tensor(-2.0, at::kDouble), at::tensor({0.25}, at::kDouble)});
  // a 0-d weight: one slope, broadcast as it is (also over an empty tensor)
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}), at::scalar_tensor(0.25)});
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({1, 0, 3}), at::scalar_tensor(0.25)});
}

TEST_F(Activation, PreluPerChannel) {
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({4, 3}), at::tensor({0.1f, 0.5f, -0.3f})});
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4, 5}), at::tensor({0.1f, 0.5f, 2.0f})});
  expect_op_matches("aten::prelu",
                    [](const Inputs& in) { return at::prelu(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}, at::kDouble), at::tensor({0.1, 0.5, 2.0})});
}

TEST_F(Activation, RreluInEvalIsLeakyRelu) {
  expect_activation_matches("aten::rrelu", [](const Inputs& in) { return at::rrelu(arg(in, 0)); });
  expect_activation_matches(
      "aten::rrelu", [](const Inputs& in) { return at::rrelu(arg(in, 0), 0.1, 0.6, false); });
}

// Properties of rrelu in training mode, whose random slopes ONNX Runtime draws with its own
// generator and seed (they cannot match libtorch's value by value), that every correct sampler has
// whatever its seed. `x` has elements of both signs; `neg`, 4000 negative ones. Outputs:
// - non-negative elements of x pass unchanged, negative ones are scaled by a slope y/x in
//   [lower, upper] (1e-6 for rounding);
// - the 4000 slopes y/x of neg are in [lower, upper], fill it (the smallest within 1% of the range
//   from lower, the largest from upper: each missed with probability 0.99^4000 < 10⁻¹⁷), and their
//   sample mean and std are those of U(lower, upper), (lower + upper)/2 and (upper - lower)/√12,
//   within 6 standard deviations of these statistics (by the central limit theorem, a false
//   failure with probability 2·10⁻⁹ each): a fixed slope (std 0) or another range fails.
c10::IValue rrelu_training_properties(const at::Tensor& x, const at::Tensor& neg, double lower,
                                      double upper) {
  constexpr double kSigmas = 6, kRounding = 1e-6;
  auto in_range = [&](const at::Tensor& s) {
    return at::logical_and(at::all(at::ge(s, lower - kRounding)),
                           at::all(at::le(s, upper + kRounding)));
  };
  at::Tensor y = at::rrelu(x, lower, upper, true);
  at::Tensor negative = at::lt(x, 0);
  at::Tensor unchanged = at::all(at::logical_or(negative, at::eq(y, x)));
  // The slope of each negative element; (lower + upper)/2 stands in for the others.
  at::Tensor slopes = at::where(negative, y / x, at::full_like(x, (lower + upper) / 2));

  at::Tensor s = (at::rrelu(neg, lower, upper, true) / neg).to(at::kDouble);
  const double n = static_cast<double>(s.numel()), w = upper - lower;
  const double sigma = w / std::sqrt(12.0);
  // The sample std of n uniform draws (kurtosis 1.8) has relative std √(0.8/(4n)) (delta method).
  at::Tensor mean_ok =
      at::le(at::abs(s.mean() - (lower + upper) / 2), kSigmas * sigma / std::sqrt(n));
  at::Tensor std_ok = at::le(at::abs(s.std() / sigma - 1), kSigmas * std::sqrt(0.8 / (4 * n)));
  return tuple({y * 0, unchanged, in_range(slopes), in_range(s), at::lt(s.min(), lower + w / 100),
                at::gt(s.max(), upper - w / 100), mean_ok, std_ok});
}

TEST_F(Activation, RreluInTrainingDrawsUniformSlopes) {
  for (auto [lower, upper] : {std::pair{0.1, 0.6}, {1.0 / 8, 1.0 / 3}}) {
    SCOPED_TRACE(::testing::Message() << "lower " << lower << ", upper " << upper);
    auto fn = [lower = lower, upper = upper](const Inputs& in) {
      return rrelu_training_properties(arg(in, 0), arg(in, 1), lower, upper);
    };
    const Inputs inputs{at::randn({20, 30}), -(at::rand({4000}) + 0.1)};
    // libtorch's samples have the properties (else ONNX Runtime's could lack them too and pass).
    for (const at::Tensor& out : traced_outputs(fn, inputs)) {
      if (out.scalar_type() == at::kBool) EXPECT_TRUE(out.item<bool>());
    }
    expect_op_matches("aten::rrelu", fn, inputs);
  }
}

TEST_F(Activation, InternalSoftmaxAndLogSoftmax) {
  for (const char* op : {"aten::_softmax", "aten::_log_softmax"}) {
    SCOPED_TRACE(op);
    auto m = ir_module(std::string(R"IR(
graph(%x : Tensor):
  %d : int = prim::Constant[value=1]()
  %h : bool = prim::Constant[value=0]()
  %y : Tensor = )IR") + op +
                       R"IR((%x, %d, %h)
  return (%y))IR");
    expect_script_matches(op, m, {at::randn({2, 5, 3})});
    expect_script_matches(op, m, {at::randn({4, 3}, at::kDouble)});
  }
}

}  // namespace
}  // namespace torchonnx::testing
