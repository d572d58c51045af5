// Numeric tests of the cumulative converters: cumprod, cummax, cummin, logcumsumexp, diff,
// trapezoid/trapz/cumulative_trapezoid.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

c10::IValue tuple(std::vector<at::Tensor> parts) {
  return c10::ivalue::Tuple::create(std::vector<c10::IValue>(parts.begin(), parts.end()));
}

// Exports TorchScript `source` (one input, x) once with every dim of x dynamic, on the first of
// `cases`, then runs the model in ONNX Runtime on each case (at opsets 9, 11, 13, 17 and the
// newest) and expects libtorch's outputs.
void expect_dynamic_shapes_match(const std::string& op, const std::string& source,
                                 const std::vector<at::Tensor>& cases) {
  torch::jit::Module m = script_module(source);
  for (int opset : with_newest_opsets({9, 11, 13, 17})) {
    ExportOptions options;
    options.opset_version = opset;
    options.input_names = {"x"};
    DynamicAxes::mapped_type axes;
    for (int64_t d = 0; d < cases[0].dim(); ++d) axes[d] = "";
    options.dynamic_axes = {{"x", axes}};
    const std::string dir = temp_dir("dynamic");
    export_model(m, {cases[0]}, dir + "/model.onnx", options);
    EXPECT_TRUE(model_has_node_from(read_model_file(dir + "/model.onnx"), op)) << opset;
    for (size_t c = 0; c < cases.size(); ++c) {
      const std::string data = dir + "/case" + std::to_string(c);
      std::filesystem::create_directories(data);
      write_test_data(data, {cases[c]}, frontend::run_module(m, {cases[c].clone()}));
      OrtResult r = run_in_ort(dir + "/model.onnx", data);
      EXPECT_TRUE(r.ok) << "opset " << opset << ", shape " << cases[c].sizes() << ": " << r.report;
    }
  }
}

class Cumulative : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// A float tensor with zeros, negatives, infinities and a NaN among random values.
at::Tensor with_edge_values(std::vector<int64_t> shape) {
  at::Tensor x = at::randn(shape);
  auto flat = x.view({-1});
  const int64_t n = flat.numel();
  flat[0] = 0.0;
  if (n > 3) flat[3] = -kInf;
  if (n > 5) flat[5] = kInf;
  if (n > 8) flat[8] = kNaN;
  if (n > 10) flat[10] = -0.0;
  return x;
}

// ----- cumprod --------------------------------------------------------------------------------

TEST_F(Cumulative, CumprodFloatEachDim) {
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(dim);
    auto fn = [dim](const Inputs& in) { return at::cumprod(arg(in, 0), dim); };
    expect_op_matches("aten::cumprod", fn, {at::randn({3, 4, 5})});
  }
}

TEST_F(Cumulative, CumprodZerosSignsInfNaN) {
  auto fn = [](const Inputs& in) { return at::cumprod(arg(in, 0), 1); };
  expect_op_matches("aten::cumprod", fn, {with_edge_values({3, 6})});
  expect_op_matches("aten::cumprod", fn,
                    {floats({-2, 0, 3, -1, kInf, 0, -kInf, 2, 1, -1, kNaN, 1}).view({2, 6})});
}

// PyTorch's CPU kernel multiplies float in double: 1e30 · 1e30 is inf only once rounded to
// float, and the next step is 1e30 again (a float running product would stay inf).
TEST_F(Cumulative, CumprodFloatAccumulatesInDouble) {
  auto fn = [](const Inputs& in) { return at::cumprod(arg(in, 0), 0); };
  at::Tensor x = floats({1e30f, 1e30f, 1e-30f, 1e-30f, 3e-39f, 1e30f});
  at::Tensor expected = at::cumprod(x, 0);
  ASSERT_TRUE(std::isinf(expected[1].item<float>()));
  ASSERT_FALSE(std::isinf(expected[2].item<float>()));
  expect_op_matches("aten::cumprod", fn, {x});
}

TEST_F(Cumulative, CumprodIntegersAndBoolGiveInt64) {
  auto fn = [](const Inputs& in) { return at::cumprod(arg(in, 0), -1); };
  // Large enough products to wrap int64 as PyTorch does.
  expect_op_matches("aten::cumprod", fn, {at::randint(-1000, 1000, {3, 9}, at::kLong)});
  expect_op_matches("aten::cumprod", fn, {at::randint(-5, 5, {2, 4}, at::kInt)});
  expect_op_matches("aten::cumprod", fn, {bools({1, 1, 0, 1, 1, 1, 1, 0}).view({2, 4})});
}

TEST_F(Cumulative, CumprodDtypeArgument) {
  expect_op_matches("aten::cumprod",
                    [](const Inputs& in) { return at::cumprod(arg(in, 0), 1, at::kDouble); },
                    {at::randn({2, 5})});
  expect_op_matches("aten::cumprod",
                    [](const Inputs& in) { return at::cumprod(arg(in, 0), 0, at::kFloat); },
                    {at::randint(-4, 4, {5, 2}, at::kLong)});
  // float → int64 truncates first.
  expect_op_matches("aten::cumprod",
                    [](const Inputs& in) { return at::cumprod(arg(in, 0), 0, at::kLong); },
                    {floats({2.7f, -1.5f, 3.9f, 0.5f})});
}

TEST_F(Cumulative, CumprodZeroDOneDAndEmpty) {
  expect_op_matches("aten::cumprod",
                    [](const Inputs& in) { return at::cumprod(arg(in, 0), 0) * 1; },
                    {at::scalar_tensor(-3.5)});
  expect_op_matches("aten::cumprod", [](const Inputs& in) { return at::cumprod(arg(in, 0), -1); },
                    {at::randn({7})});
  expect_op_matches("aten::cumprod", [](const Inputs& in) { return at::cumprod(arg(in, 0), 1); },
                    {at::randn({2, 0, 3})});
  expect_op_matches("aten::cumprod", [](const Inputs& in) { return at::cumprod(arg(in, 0), 0); },
                    {at::randn({4, 0})});
}

// The scan's start state takes the input's run-time shape; a scanned dim of size 0 is padded.
TEST_F(Cumulative, CumprodDynamicShapes) {
  expect_dynamic_shapes_match("aten::cumprod",
                              "def forward(self, x):\n  return torch.cumprod(x, dim=1)\n",
                              {at::randn({2, 3, 4}), at::randn({1, 5, 2}), at::randn({3, 1, 6}),
                               at::randn({2, 0, 3}), at::randn({0, 3, 2})});
}

// dtype=7 is torch.float64 (the script compiler here resolves no torch.float64).
TEST_F(Cumulative, ScriptedWithKeywordsAndInPlace) {
  expect_script_matches("aten::cumprod",
                        "def forward(self, x):\n  return torch.cumprod(x, 1, dtype=7)\n",
                        {at::randint(-3, 4, {2, 5}, at::kLong)});
  expect_script_matches("aten::cumprod",
                        "def forward(self, x):\n  y = x * 2\n  y.cumprod_(0)\n  return y\n",
                        {at::randn({4, 3})});
  expect_script_matches("aten::cummin",
                        "def forward(self, x):\n  r = torch.cummin(x, dim=0)\n"
                        "  return r.values, r.indices\n",
                        {at::randint(-3, 3, {6, 2}, at::kLong)});
  expect_script_matches("aten::diff",
                        "def forward(self, x, p):\n  return torch.diff(x, n=2, dim=0, prepend=p)\n",
                        {at::randn({4, 3}), at::randn({2, 3})});
}

// ----- cummax / cummin ------------------------------------------------------------------------

TEST_F(Cumulative, CummaxCumminEachDim) {
  for (bool max : {true, false}) {
    for (int64_t dim : {0, 1, -1, -2}) {
      SCOPED_TRACE(dim);
      auto fn = [max, dim](const Inputs& in) {
        auto [values, indices] = max ? at::cummax(arg(in, 0), dim) : at::cummin(arg(in, 0), dim);
        return tuple({values, indices});
      };
      expect_op_matches(max ? "aten::cummax" : "aten::cummin", fn, {distinct({3, 5})});
    }
  }
}

// Ties give the last index (>= / <=); a NaN is taken and kept, each later NaN moves the index.
TEST_F(Cumulative, CummaxCumminTiesNaNAndInfinities) {
  at::Tensor x = floats({1,     3,     3,    2,    -kInf, 3,     1, 1, kNaN, 5,  kNaN, 1,  //
                         -kInf, -kInf, kInf, kInf, 0,     -0.0f, 0, 2, 2,    -1, -1,   -1})
                     .view({2, 12});
  at::Tensor ties = floats({2, 2, 1, 1, 2, 0, 0, 2}).view({2, 4});
  for (bool max : {true, false}) {
    SCOPED_TRACE(max);
    auto fn = [max](const Inputs& in) {
      auto [values, indices] = max ? at::cummax(arg(in, 0), 1) : at::cummin(arg(in, 0), 1);
      return tuple({values, indices});
    };
    const char* op = max ? "aten::cummax" : "aten::cummin";
    expect_op_matches(op, fn, {x});
    expect_op_matches(op, fn, {ties});
    expect_op_matches(op, fn, {with_edge_values({4, 5})});
  }
}

TEST_F(Cumulative, CummaxCumminIntegersBoolAndDouble) {
  for (bool max : {true, false}) {
    SCOPED_TRACE(max);
    auto fn = [max](const Inputs& in) {
      auto [values, indices] = max ? at::cummax(arg(in, 0), 0) : at::cummin(arg(in, 0), 0);
      return tuple({values, indices});
    };
    const char* op = max ? "aten::cummax" : "aten::cummin";
    expect_op_matches(op, fn, {at::randint(-3, 3, {6, 3}, at::kLong)});
    expect_op_matches(
        op, fn,
        {longs({std::numeric_limits<int64_t>::min(), 5, std::numeric_limits<int64_t>::max(),
                std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()})});
    expect_op_matches(op, fn, {at::randint(-3, 3, {5, 2}, at::kInt)});
    expect_op_matches(op, fn, {bools({1, 0, 0, 1, 1, 0, 0, 1})});
    expect_op_matches(op, fn, {at::randn({4, 2}, at::kDouble)});
  }
}

TEST_F(Cumulative, CummaxCumminZeroDOneDAndEmpty) {
  for (bool max : {true, false}) {
    SCOPED_TRACE(max);
    const char* op = max ? "aten::cummax" : "aten::cummin";
    for (int64_t dim : {0, -1}) {
      auto fn = [max, dim](const Inputs& in) {
        auto [values, indices] = max ? at::cummax(arg(in, 0), dim) : at::cummin(arg(in, 0), dim);
        return tuple({values * 1, indices});
      };
      expect_op_matches(op, fn, {at::scalar_tensor(2.5)});
      expect_op_matches(op, fn, {at::randn({6})});
      expect_op_matches(op, fn, {at::randn({0, 3})});
    }
  }
}

TEST_F(Cumulative, CummaxLogcumsumexpDynamicShapes) {
  expect_dynamic_shapes_match(
      "aten::cummax",
      "def forward(self, x):\n"
      "  v, i = torch.cummax(x, dim=-2)\n"
      "  return v, i\n",
      {at::randn({2, 3, 4}), at::randn({1, 5, 2}), at::randn({3, 1, 6}), at::randn({2, 0, 3})});
  expect_dynamic_shapes_match("aten::logcumsumexp",
                              "def forward(self, x):\n  return torch.logcumsumexp(x, 0)\n",
                              {at::randn({2, 3}), at::randn({7, 1}), at::randn({0, 2})});
}

// ----- logcumsumexp ---------------------------------------------------------------------------

TEST_F(Cumulative, LogcumsumexpEachDim) {
  for (int64_t dim : {0, 1, 2, -1}) {
    SCOPED_TRACE(dim);
    auto fn = [dim](const Inputs& in) { return at::logcumsumexp(arg(in, 0), dim); };
    expect_op_matches("aten::logcumsumexp", fn, {at::randn({3, 4, 5})});
  }
}

// Large magnitudes (exp overflows and underflows: the stable form is needed), -inf (empty sums),
// inf, NaN, and terms far below the running sum (log1p of a tiny number).
TEST_F(Cumulative, LogcumsumexpStableAndEdgeValues) {
  auto fn = [](const Inputs& in) { return at::logcumsumexp(arg(in, 0), -1); };
  expect_op_matches("aten::logcumsumexp", fn, {at::randn({3, 8}) * 300});
  expect_op_matches("aten::logcumsumexp", fn,
                    {floats({-kInf, -kInf, 1,     kInf, 2,      kNaN,    1,     0,  //
                             0,     -50,   -60,   -80,  100,    100,     -kInf, kInf,
                             -kInf, 3,     -kInf, 3,    1e-30f, -1e-30f, 80,    -100})
                         .view({3, 8})});
  expect_op_matches("aten::logcumsumexp", fn, {at::randn({2, 6}, at::kDouble) * 50});
}

TEST_F(Cumulative, LogcumsumexpZeroDOneDAndEmpty) {
  auto fn = [](const Inputs& in) { return at::logcumsumexp(arg(in, 0), 0) * 1; };
  expect_op_matches("aten::logcumsumexp", fn, {at::scalar_tensor(-1.5)});
  expect_op_matches("aten::logcumsumexp", fn, {at::randn({9})});
  expect_op_matches("aten::logcumsumexp", fn, {at::randn({0, 2})});
}

// ----- diff -----------------------------------------------------------------------------------

TEST_F(Cumulative, DiffOrdersAndDims) {
  for (int64_t n : {0, 1, 2, 3}) {
    for (int64_t dim : {0, 1, -1}) {
      SCOPED_TRACE(n * 10 + dim);
      auto fn = [n, dim](const Inputs& in) { return at::diff(arg(in, 0), n, dim) * 1; };
      expect_op_matches("aten::diff", fn, {with_edge_values({4, 5})});
    }
  }
}

TEST_F(Cumulative, DiffIntegersBoolAndBeyondTheLength) {
  auto fn = [](const Inputs& in) { return at::diff(arg(in, 0), 1, -1); };
  expect_op_matches("aten::diff", fn, {at::randint(-9, 9, {3, 6}, at::kLong)});
  expect_op_matches("aten::diff", fn, {bools({1, 0, 0, 1, 1, 1, 0, 1, 0, 0}).view({2, 5})});
  auto twice = [](const Inputs& in) { return at::diff(arg(in, 0), 2, 0); };
  expect_op_matches("aten::diff", twice, {bools({1, 0, 0, 1, 1, 1})});
  auto far = [](const Inputs& in) { return at::diff(arg(in, 0), 5, 0); };
  expect_op_matches("aten::diff", far, {at::randn({3, 2})});
}

TEST_F(Cumulative, DiffPrependAppend) {
  auto both = [](const Inputs& in) { return at::diff(arg(in, 0), 2, 1, arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::diff", both, {at::randn({3, 4}), at::randn({3, 1}), at::randn({3, 2})});
  auto prepend = [](const Inputs& in) {
    return at::diff(arg(in, 0), 1, 0, arg(in, 1), c10::optional<at::Tensor>());
  };
  expect_op_matches("aten::diff", prepend,
                    {at::randint(0, 9, {2, 3}, at::kLong), at::randint(0, 9, {1, 3}, at::kLong)});
  auto append = [](const Inputs& in) {
    return at::diff(arg(in, 0), 1, -1, c10::optional<at::Tensor>(), arg(in, 1));
  };
  expect_op_matches("aten::diff", append, {bools({1, 0, 1}), bools({1, 1})});
  // A float prepend to an int64 input: the concatenation (and the result) is float.
  expect_op_matches("aten::diff", prepend,
                    {at::randint(0, 9, {2, 3}, at::kLong), at::randn({2, 3})});
}

// ----- trapezoid / trapz / cumulative_trapezoid ------------------------------------------------

TEST_F(Cumulative, TrapezoidWithSpacing) {
  auto x1 = [](const Inputs& in) { return at::trapezoid(arg(in, 0), arg(in, 1), 1); };
  auto trapz = [](const Inputs& in) { return at::trapz(arg(in, 0), arg(in, 1), -1); };
  auto cumulative = [](const Inputs& in) {
    return at::cumulative_trapezoid(arg(in, 0), arg(in, 1), 1);
  };
  // A 1-D x along dim, an x of y's shape, and a lower-rank x broadcast from the right.
  for (const Inputs& in : std::vector<Inputs>{
           {at::randn({2, 5}), at::randn({5}).cumsum(0)},
           {at::randn({3, 4}), at::randn({3, 4})},
           {at::randn({2, 3, 4}), at::randn({3, 4})},
           {at::randint(-9, 9, {2, 4}, at::kLong), at::randint(0, 9, {4}, at::kLong)}}) {
    expect_op_matches("aten::trapezoid", x1, in);
    expect_op_matches("aten::trapz", trapz, in);
    expect_op_matches("aten::cumulative_trapezoid", cumulative, in);
  }
  // An empty dim: zeros (trapezoid) and an empty result (cumulative).
  expect_op_matches("aten::trapezoid", x1, {at::randn({2, 0}), at::randn({0})});
  expect_op_matches("aten::cumulative_trapezoid", cumulative, {at::randn({2, 0}), at::randn({0})});
}

// Before opset 11 the cumulative sum is a Scan: a dim of size 1 leaves nothing to sum.
TEST_F(Cumulative, CumulativeTrapezoidDynamicShapes) {
  expect_dynamic_shapes_match(
      "aten::cumulative_trapezoid",
      "def forward(self, x):\n  return torch.cumulative_trapezoid(x, dx=0.5, dim=1)\n",
      {at::randn({2, 3}), at::randn({1, 1}), at::randn({3, 6}), at::randn({0, 4})});
}

TEST_F(Cumulative, TrapezoidWithConstantDx) {
  for (double dx : {1.0, 0.5, -2.0}) {
    for (int64_t dim : {0, -1}) {
      SCOPED_TRACE(dim);
      auto t = [dx, dim](const Inputs& in) { return at::trapezoid(arg(in, 0), dx, dim); };
      auto tz = [dx, dim](const Inputs& in) { return at::trapz(arg(in, 0), dx, dim); };
      auto c = [dx, dim](const Inputs& in) {
        return at::cumulative_trapezoid(arg(in, 0), dx, dim);
      };
      for (const at::Tensor& y :
           {with_edge_values({3, 4}), at::randn({5}), at::randint(-9, 9, {4, 3}, at::kLong)}) {
        expect_op_matches("aten::trapezoid", t, {y});
        expect_op_matches("aten::trapz", tz, {y});
        expect_op_matches("aten::cumulative_trapezoid", c, {y});
      }
    }
  }
  auto t = [](const Inputs& in) { return at::trapezoid(arg(in, 0), 2, 1); };
  expect_op_matches("aten::trapezoid", t, {at::randn({3, 0})});
  expect_op_matches("aten::trapezoid", t, {at::randn({3, 1}, at::kDouble)});
}

}  // namespace
}  // namespace torchonnx::testing
