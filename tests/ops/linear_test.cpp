// Numeric tests of the product converters: linear, addmm, matmul, mm, bmm, baddbmm, mv, dot,
// outer, tensordot, einsum, cross/linalg_cross.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

class Linear : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Linear, LinearOn2dInputWithBias) {
  at::Tensor w = at::randn({5, 4}), b = at::randn({5});
  expect_op_matches("aten::linear",
                    [w, b](const Inputs& in) { return at::linear(arg(in, 0), w, b); },
                    {at::randn({3, 4})}, kMinOpset, highest_opset(), {{"weight", w}, {"bias", b}});
}

TEST_F(Linear, LinearOn2dInputWithoutBias) {
  // Gemm without C from opset 11, MatMul before.
  at::Tensor w = at::randn({5, 4});
  expect_op_matches("aten::linear", [w](const Inputs& in) { return at::linear(arg(in, 0), w); },
                    {at::randn({3, 4})}, kMinOpset, highest_opset(), {{"weight", w}});
}

TEST_F(Linear, LinearOnBatchedAnd1dInput) {
  at::Tensor w = at::randn({5, 4}), b = at::randn({5});
  auto fn = [w, b](const Inputs& in) { return at::linear(arg(in, 0), w, b); };
  NamedTensors params{{"weight", w}, {"bias", b}};
  expect_op_matches("aten::linear", fn, {at::randn({2, 3, 4})}, kMinOpset, highest_opset(), params);
  expect_op_matches("aten::linear", fn, {at::randn({4})}, kMinOpset, highest_opset(), params);
}

TEST_F(Linear, LinearWithWeightAsInput) {
  expect_op_matches("aten::linear",
                    [](const Inputs& in) { return at::linear(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}), at::randn({6, 4})});
}

TEST_F(Linear, Addmm) {
  expect_op_matches("aten::addmm",
                    [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {at::randn({3, 5}), at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, AddmmWithBetaAlphaAndBroadcastBias) {
  expect_op_matches(
      "aten::addmm",
      [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2), 0.5, -2.0); },
      {at::randn({5}), at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, Matmul) {
  struct Case {
    std::vector<int64_t> a, b;
  };
  for (const auto& c : std::vector<Case>{{{3, 4}, {4, 5}},
                                         {{4}, {4, 5}},
                                         {{3, 4}, {4}},
                                         {{4}, {4}},
                                         {{2, 3, 4}, {4, 5}},
                                         {{2, 1, 3, 4}, {5, 4, 2}}}) {
    SCOPED_TRACE(::testing::Message() << at::IntArrayRef(c.a) << " @ " << at::IntArrayRef(c.b));
    expect_op_matches("aten::matmul",
                      [](const Inputs& in) { return at::matmul(arg(in, 0), arg(in, 1)); },
                      {at::randn(c.a), at::randn(c.b)});
  }
}

TEST_F(Linear, Mm) {
  expect_op_matches("aten::mm", [](const Inputs& in) { return at::mm(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::randn({4, 2})});
}

TEST_F(Linear, Bmm) {
  expect_op_matches("aten::bmm", [](const Inputs& in) { return at::bmm(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4}), at::randn({2, 4, 5})});
}

// ----- integer products, beta = 0 -------------------------------------------------------------

at::Tensor ints(std::vector<int64_t> sizes) {
  return at::randint(-5, 5, sizes, at::kLong);
}

TEST_F(Linear, MatmulInt64) {
  struct Case {
    std::vector<int64_t> a, b;
  };
  for (const auto& c : std::vector<Case>{
           {{3, 4}, {4, 5}}, {{4}, {4, 5}}, {{3, 4}, {4}}, {{4}, {4}}, {{2, 1, 3, 4}, {5, 4, 2}}}) {
    SCOPED_TRACE(::testing::Message() << at::IntArrayRef(c.a) << " @ " << at::IntArrayRef(c.b));
    expect_op_matches("aten::matmul",
                      [](const Inputs& in) { return at::matmul(arg(in, 0), arg(in, 1)); },
                      {ints(c.a), ints(c.b)});
  }
}

TEST_F(Linear, MatmulBatchedTimes1d) {
  expect_op_matches("aten::matmul",
                    [](const Inputs& in) { return at::matmul(arg(in, 0), arg(in, 1)); },
                    {at::randn({4}), at::randn({2, 3, 4, 5})});
  expect_op_matches("aten::matmul",
                    [](const Inputs& in) { return at::matmul(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 4, 5}), at::randn({5})});
}

TEST_F(Linear, MmAndBmmInt64) {
  expect_op_matches("aten::mm", [](const Inputs& in) { return at::mm(arg(in, 0), arg(in, 1)); },
                    {ints({3, 4}), ints({4, 2})});
  expect_op_matches("aten::bmm", [](const Inputs& in) { return at::bmm(arg(in, 0), arg(in, 1)); },
                    {ints({2, 3, 4}), ints({2, 4, 5})});
}

TEST_F(Linear, LinearInt64) {
  // Gemm has no integer kernel in ONNX Runtime: MatMul + Add.
  expect_op_matches("aten::linear",
                    [](const Inputs& in) { return at::linear(arg(in, 0), arg(in, 1), arg(in, 2)); },
                    {ints({3, 4}), ints({5, 4}), ints({5})});
}

TEST_F(Linear, AddmmInt64WithBetaAlpha) {
  expect_op_matches(
      "aten::addmm",
      [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2), 2, -3); },
      {ints({3, 5}), ints({3, 4}), ints({4, 5})});
}

TEST_F(Linear, AddmmAndLinearInDouble) {
  auto d = [](std::vector<int64_t> sizes) { return at::randn(sizes, at::kDouble); };
  expect_op_matches(
      "aten::addmm",
      [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2), 2, 0.5); },
      {d({3, 5}), d({3, 4}), d({4, 5})});
  expect_op_matches("aten::linear",
                    [](const Inputs& in) { return at::linear(arg(in, 0), arg(in, 1)); },
                    {d({3, 4}), d({5, 4})});
}

TEST_F(Linear, AddmmBetaZeroIgnoresNanInSelf) {
  at::Tensor self = at::full({3, 5}, std::nan(""));
  expect_op_matches(
      "aten::addmm",
      [](const Inputs& in) { return at::addmm(arg(in, 0), arg(in, 1), arg(in, 2), 0, 1.5); },
      {self, at::randn({3, 4}), at::randn({4, 5})});
}

// ----- baddbmm ----------------------------------------------------------------------------------

TEST_F(Linear, Baddbmm) {
  expect_op_matches(
      "aten::baddbmm",
      [](const Inputs& in) { return at::baddbmm(arg(in, 0), arg(in, 1), arg(in, 2)); },
      {at::randn({2, 3, 5}), at::randn({2, 3, 4}), at::randn({2, 4, 5})});
}

TEST_F(Linear, BaddbmmWithBetaAlphaAndBroadcastSelf) {
  expect_op_matches(
      "aten::baddbmm",
      [](const Inputs& in) { return at::baddbmm(arg(in, 0), arg(in, 1), arg(in, 2), 0.5, -2); },
      {at::randn({3, 1}), at::randn({2, 3, 4}), at::randn({2, 4, 5})});
}

// beta = 0 drops self (the converter emits no term for it). Not tested with NaN in self, and on
// matrices large enough for libtorch's BLAS path (contraction × rows × columns ≥ 400): libtorch
// 1.13's own small-matrix kernel computes beta · result on the uninitialized result, so its
// reference was NaN now and then (seen in CI and under parallel ctest).
TEST_F(Linear, BaddbmmBetaZero) {
  expect_op_matches(
      "aten::baddbmm",
      [](const Inputs& in) { return at::baddbmm(arg(in, 0), arg(in, 1), arg(in, 2), 0, 2); },
      {at::randn({2, 8, 9}), at::randn({2, 8, 10}), at::randn({2, 10, 9})});
}

TEST_F(Linear, BaddbmmInt64) {
  expect_op_matches(
      "aten::baddbmm",
      [](const Inputs& in) { return at::baddbmm(arg(in, 0), arg(in, 1), arg(in, 2), 3, 2); },
      {ints({2, 3, 5}), ints({2, 3, 4}), ints({2, 4, 5})});
}

// beta and alpha computed in the graph: tensors given to forward() as a Python trace records them
// (aten::ScalarImplicit of an int64 and a float tensor), and float arguments of a scripted addmm
// (Gemm takes constants only: MatMul, Mul, Add).
TEST_F(Linear, BaddbmmAndAddmmWithComputedBetaAndAlpha) {
  auto m = ir_module(R"IR(
graph(%x : Tensor, %b1 : Tensor, %b2 : Tensor, %alpha : Tensor, %beta : Tensor):
  %beta_s : Scalar = aten::ScalarImplicit(%beta)
  %alpha_s : Scalar = aten::ScalarImplicit(%alpha)
  %y : Tensor = aten::baddbmm(%x, %b1, %b2, %beta_s, %alpha_s)
  return (%y))IR");
  expect_script_matches("aten::baddbmm", m,
                        {at::randn({10, 3, 5}), at::randn({10, 3, 4}), at::randn({10, 4, 5}),
                         at::scalar_tensor(5, at::kLong), at::scalar_tensor(3.5)});
  expect_script_matches("aten::addmm",
                        "def forward(self, x, m1, m2, beta: float, alpha: float):\n"
                        "  return torch.addmm(x, m1, m2, beta=beta, alpha=alpha)\n",
                        {at::randn({3, 5}), at::randn({3, 4}), at::randn({4, 5}), 0.5, -2.0});
}

// ----- mv / dot / outer -------------------------------------------------------------------------

TEST_F(Linear, Mv) {
  expect_op_matches("aten::mv", [](const Inputs& in) { return at::mv(arg(in, 0), arg(in, 1)); },
                    {at::randn({3, 4}), at::randn({4})});
  expect_op_matches("aten::mv", [](const Inputs& in) { return at::mv(arg(in, 0), arg(in, 1)); },
                    {ints({3, 4}), ints({4})});
}

TEST_F(Linear, Dot) {
  expect_op_matches("aten::dot", [](const Inputs& in) { return at::dot(arg(in, 0), arg(in, 1)); },
                    {at::randn({5}), at::randn({5})});
  expect_op_matches("aten::dot", [](const Inputs& in) { return at::dot(arg(in, 0), arg(in, 1)); },
                    {ints({5}), ints({5})});
}

TEST_F(Linear, Outer) {
  auto fn = [](const Inputs& in) { return at::outer(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::outer", fn, {at::randn({3}), at::randn({4})});
  expect_op_matches("aten::outer", fn, {ints({3}), ints({4})});
}

TEST_F(Linear, OuterPromotesTypes) {
  auto fn = [](const Inputs& in) { return at::outer(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::outer", fn, {ints({3}), at::randn({4})});
  expect_op_matches("aten::outer", fn, {at::randn({3}) > 0, at::randn({4}) > 0});
}

// ----- tensordot --------------------------------------------------------------------------------

TEST_F(Linear, Tensordot) {
  struct Case {
    std::vector<int64_t> a, b, dims_a, dims_b;
  };
  for (const auto& c :
       std::vector<Case>{{{2, 3, 4}, {3, 4, 5}, {1, 2}, {0, 1}},  // last dims of a with first of b
                         {{2, 3, 4}, {4, 2, 5}, {-1, 0}, {0, -2}},  // negative, out of order
                         {{3, 4}, {4, 5}, {1}, {0}},                // mm
                         {{2, 3}, {4}, {}, {}},                     // outer product
                         {{2, 3}, {2, 3}, {0, 1}, {0, 1}},          // full contraction: 0-d
                         {{3, 4}, {4, 3}, {0, 1}, {1, 0}}}) {
    SCOPED_TRACE(::testing::Message()
                 << at::IntArrayRef(c.a) << " . " << at::IntArrayRef(c.b) << " over "
                 << at::IntArrayRef(c.dims_a) << ", " << at::IntArrayRef(c.dims_b));
    expect_op_matches(
        "aten::tensordot",
        [c](const Inputs& in) { return at::tensordot(arg(in, 0), arg(in, 1), c.dims_a, c.dims_b); },
        {at::randn(c.a), at::randn(c.b)});
  }
}

TEST_F(Linear, TensordotInt64) {
  expect_op_matches("aten::tensordot",
                    [](const Inputs& in) {
                      return at::tensordot(arg(in, 0), arg(in, 1), {0, 2}, {2, 1});
                    },
                    {ints({2, 3, 4}), ints({5, 4, 2})});
}

TEST_F(Linear, TensordotInScript) {
  // Python's torch.tensordot(a, b, dims=2) turns int dims into these lists before aten; in
  // TorchScript tensordot is the aten builtin, which takes the lists only.
  expect_script_matches(
      "aten::tensordot",
      "def forward(self, x, y):\n  return torch.tensordot(x, y, [1, 2], [0, 1])\n",
      {at::randn({2, 3, 4}), at::randn({3, 4, 5})});
  expect_script_matches(
      "aten::tensordot",
      "def forward(self, x, y):\n  return torch.tensordot(x, y, [1, 0], [0, 1])\n",
      {at::randn({2, 3, 4}), at::randn({3, 2, 5})});
}

// ----- einsum -----------------------------------------------------------------------------------

void expect_einsum_matches(const std::string& equation, const std::vector<at::Tensor>& operands,
                           int first = kMinOpset) {
  SCOPED_TRACE(equation);
  Inputs inputs(operands.begin(), operands.end());
  expect_op_matches(
      "aten::einsum",
      [equation](const Inputs& in) {
        std::vector<at::Tensor> ts;
        for (const auto& v : in) ts.push_back(v.toTensor());
        return at::einsum(equation, ts);
      },
      inputs, first);
}

TEST_F(Linear, EinsumExplicitOutput) {
  expect_einsum_matches("ij,jk->ik", {at::randn({3, 4}), at::randn({4, 5})});
  expect_einsum_matches("bij,bjk->bik", {at::randn({2, 3, 4}), at::randn({2, 4, 5})});
  expect_einsum_matches("ij->ji", {at::randn({3, 4})});
  expect_einsum_matches("ij,ij->", {at::randn({3, 4}), at::randn({3, 4})});
  expect_einsum_matches("i,j->ij", {at::randn({3}), at::randn({4})});
  expect_einsum_matches("ijk->j", {at::randn({2, 3, 4})});
  expect_einsum_matches("i j , j k -> k i", {at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, EinsumImplicitOutput) {
  expect_einsum_matches("ij,jk", {at::randn({3, 4}), at::randn({4, 5})});
  expect_einsum_matches("ba", {at::randn({3, 4})});
  expect_einsum_matches("i,i", {at::randn({4}), at::randn({4})});
  expect_einsum_matches("bA,Ac", {at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, EinsumEllipsis) {
  expect_einsum_matches("...ij,...jk->...ik", {at::randn({2, 3, 4}), at::randn({2, 4, 5})});
  // Ellipsis dims broadcast: (2, 1) with (3,).
  expect_einsum_matches("...ij,...jk->...ik", {at::randn({2, 1, 3, 4}), at::randn({3, 4, 5})});
  expect_einsum_matches("i...->...", {at::randn({3, 2, 4})});
  expect_einsum_matches("...ij", {at::randn({2, 3, 4})});
}

TEST_F(Linear, EinsumRepeatedOperandAndThreeOperands) {
  at::Tensor x = at::randn({3, 4});
  expect_op_matches("aten::einsum",
                    [](const Inputs& in) {
                      return at::einsum("ij,ij->ij", {arg(in, 0), arg(in, 0)});
                    },
                    {x});
  expect_einsum_matches("ij,jk,kl->il", {at::randn({2, 3}), at::randn({3, 4}), at::randn({4, 5})});
}

TEST_F(Linear, EinsumInt64) {
  expect_einsum_matches("bij,bjk->bik", {ints({2, 3, 4}), ints({2, 4, 5})});
}

// Bool operands (no ONNX op of einsum takes bool): a transpose and a product stay bool, a label
// summed out gives int64 as in PyTorch, a batch diagonal (Einsum only: 12+).
TEST_F(Linear, EinsumOfBools) {
  auto bools = [](at::IntArrayRef sizes) { return at::randn(sizes) > 0; };
  expect_einsum_matches("ij->ji", {bools({3, 4})});
  expect_einsum_matches("ij,ij->ij", {bools({3, 4}), bools({3, 4})});
  expect_einsum_matches("ij->j", {bools({3, 4})});
  expect_einsum_matches("...ii->...i", {bools({3, 5, 5})}, 12);
}

TEST_F(Linear, EinsumDiagonalFromOpset12) {
  expect_einsum_matches("ii->i", {at::randn({4, 4})}, 12);
  expect_einsum_matches("ii", {at::randn({4, 4})}, 12);
  expect_export_fails([](const Inputs& in) { return at::einsum("ii->i", {arg(in, 0)}); },
                      {at::randn({4, 4})}, 11, "opset >= 12");
}

// ----- cross / linalg_cross ---------------------------------------------------------------------

// nn.Bilinear: Einsum from opset 12, MatMul/ReduceSum before.
TEST_F(Linear, BilinearWithAndWithoutBias) {
  at::Tensor w = at::randn({5, 3, 4}), b = at::randn({5});
  auto with_bias = [w, b](const Inputs& in) { return at::bilinear(arg(in, 0), arg(in, 1), w, b); };
  auto without = [w](const Inputs& in) { return at::bilinear(arg(in, 0), arg(in, 1), w, {}); };
  NamedTensors params{{"weight", w}, {"bias", b}};
  expect_op_matches("aten::bilinear", with_bias, {at::randn({2, 3}), at::randn({2, 4})}, kMinOpset,
                    highest_opset(), params);
  expect_op_matches("aten::bilinear", without, {at::randn({6, 3}), at::randn({6, 4})}, kMinOpset,
                    highest_opset(), {{"weight", w}});
}

TEST_F(Linear, BilinearBatched1dAndEmptyBatch) {
  at::Tensor w = at::randn({2, 4, 3}), b = at::randn({2});
  auto fn = [w, b](const Inputs& in) { return at::bilinear(arg(in, 0), arg(in, 1), w, b); };
  NamedTensors params{{"weight", w}, {"bias", b}};
  for (const auto& batch : std::vector<std::vector<int64_t>>{{2, 3}, {2, 1, 5}, {}, {0}}) {
    std::vector<int64_t> s1(batch), s2(batch);
    s1.push_back(4);
    s2.push_back(3);
    expect_op_matches("aten::bilinear", fn, {at::randn(s1), at::randn(s2)}, kMinOpset,
                      highest_opset(), params);
  }
}

TEST_F(Linear, BilinearInputsAsWeightsAndInt64) {
  auto fn = [](const Inputs& in) {
    return at::bilinear(arg(in, 0), arg(in, 1), arg(in, 2), arg(in, 3));
  };
  expect_op_matches("aten::bilinear", fn,
                    {at::randn({3, 2}), at::randn({3, 5}), at::randn({4, 2, 5}), at::randn({4})});
  expect_op_matches("aten::bilinear", fn,
                    {at::randint(-3, 3, {3, 2}, at::kLong), at::randint(-3, 3, {3, 5}, at::kLong),
                     at::randint(-3, 3, {4, 2, 5}, at::kLong), at::randint(-3, 3, {4}, at::kLong)});
  expect_script_matches("aten::bilinear",
                        "def forward(self, a, b, w):\n  return torch.bilinear(a, b, w, None)\n",
                        {at::randn({3, 2}), at::randn({3, 5}), at::randn({4, 2, 5})});
}

TEST_F(Linear, CrossWithoutDimTakesFirstDimOfSize3) {
  expect_op_matches("aten::cross",
                    [](const Inputs& in) { return at::cross(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 3, 3}), at::randn({2, 3, 3})});
}

TEST_F(Linear, CrossWithDim) {
  auto fn = [](const Inputs& in) { return at::cross(arg(in, 0), arg(in, 1), -1); };
  expect_op_matches("aten::cross", fn, {at::randn({3, 3}), at::randn({3, 3})});
  expect_op_matches("aten::cross", fn, {ints({4, 3}), ints({4, 3})});
}

TEST_F(Linear, LinalgCross) {
  auto fn = [](const Inputs& in) { return at::linalg_cross(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::linalg_cross", fn, {at::randn({4, 3}), at::randn({4, 3})});
  expect_op_matches("aten::linalg_cross", fn, {ints({3}), ints({3})});
}

TEST_F(Linear, LinalgCrossBroadcastsWithDim) {
  // linalg_cross broadcasts inputs of the same rank.
  expect_op_matches("aten::linalg_cross",
                    [](const Inputs& in) { return at::linalg_cross(arg(in, 0), arg(in, 1), 1); },
                    {at::randn({2, 3, 4}), at::randn({1, 3, 1})});
  expect_op_matches("aten::linalg_cross",
                    [](const Inputs& in) { return at::linalg_cross(arg(in, 0), arg(in, 1), -2); },
                    {at::randn({1, 3, 4}), at::randn({5, 3, 1})});
}

// ----- addmv / addbmm / addr -----------------------------------------------------------------

TEST_F(Linear, Addmv) {
  auto fn = [](const Inputs& in) { return at::addmv(arg(in, 0), arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::addmv", fn, {at::randn({3}), at::randn({3, 4}), at::randn({4})});
  expect_op_matches("aten::addmv", fn, {at::randn({1}), at::randn({2, 5}), at::randn({5})});
  auto scaled = [](const Inputs& in) {
    return at::addmv(arg(in, 0), arg(in, 1), arg(in, 2), /*beta=*/0.5, /*alpha=*/-2);
  };
  expect_op_matches("aten::addmv", scaled, {at::randn({3}), at::randn({3, 4}), at::randn({4})});
  // beta = 0: self's nan does not propagate
  auto no_self = [](const Inputs& in) {
    return at::addmv(arg(in, 0), arg(in, 1), arg(in, 2), /*beta=*/0, /*alpha=*/3);
  };
  expect_op_matches("aten::addmv", no_self,
                    {at::full({3}, NAN), at::randn({3, 4}), at::randn({4})});
  expect_op_matches("aten::addmv", fn,
                    {at::randint(-5, 5, {2}), at::randint(-5, 5, {2, 3}), at::randint(-5, 5, {3})});
}

TEST_F(Linear, Addbmm) {
  auto fn = [](const Inputs& in) {
    return at::addbmm(arg(in, 0), arg(in, 1), arg(in, 2), /*beta=*/0.5, /*alpha=*/2);
  };
  expect_op_matches("aten::addbmm", fn,
                    {at::randn({3, 5}), at::randn({4, 3, 2}), at::randn({4, 2, 5})});
  expect_op_matches("aten::addbmm", fn,
                    {at::randn({5}), at::randn({2, 3, 4}), at::randn({2, 4, 5})});
}

TEST_F(Linear, Addr) {
  auto fn = [](const Inputs& in) { return at::addr(arg(in, 0), arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::addr", fn, {at::randn({3, 4}), at::randn({3}), at::randn({4})});
  expect_op_matches("aten::addr", fn, {at::randn({4}), at::randn({2}), at::randn({4})});
  auto scaled = [](const Inputs& in) {
    return at::addr(arg(in, 0), arg(in, 1), arg(in, 2), /*beta=*/2, /*alpha=*/-1);
  };
  expect_op_matches("aten::addr", scaled,
                    {at::randint(-5, 5, {3, 2}), at::randint(-5, 5, {3}), at::randint(-5, 5, {2})});
  expect_op_matches("aten::addr", fn,
                    {at::randn({3, 2}) > 0, at::randn({3}) > 0, at::randn({2}) > 0});
}

// ----- vdot / inner / kron / vecdot -----------------------------------------------------------

TEST_F(Linear, VdotAndInner) {
  expect_op_matches("aten::vdot", [](const Inputs& in) { return at::vdot(arg(in, 0), arg(in, 1)); },
                    {at::randn({5}), at::randn({5})});
  expect_op_matches("aten::vdot", [](const Inputs& in) { return at::vdot(arg(in, 0), arg(in, 1)); },
                    {at::randint(-9, 9, {4}), at::randint(-9, 9, {4})});
  auto inner = [](const Inputs& in) { return at::inner(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::inner", inner, {at::randn({4}), at::randn({4})});
  expect_op_matches("aten::inner", inner, {at::randn({2, 3, 4}), at::randn({5, 4})});
  expect_op_matches("aten::inner", inner, {at::randn({4}), at::randn({2, 3, 4})});
  expect_op_matches("aten::inner", inner, {at::randn({2, 3}), at::scalar_tensor(1.5)});
  expect_op_matches("aten::inner", inner, {at::randint(-9, 9, {3, 2}), at::randint(-9, 9, {2})});
}

TEST_F(Linear, Kron) {
  auto fn = [](const Inputs& in) { return at::kron(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::kron", fn, {at::randn({2, 3}), at::randn({4, 5})});
  expect_op_matches("aten::kron", fn, {at::randn({3}), at::randn({2, 2})});
  expect_op_matches("aten::kron", fn, {at::randn({2, 1, 3}), at::randn({2})});
  expect_op_matches("aten::kron", fn, {at::randint(-9, 9, {2, 2}), at::randint(-9, 9, {3, 1})});
  expect_op_matches("aten::kron", fn, {at::randn({2, 2}) > 0, at::randn({2, 3}) > 0});
  expect_op_matches("aten::kron", fn, {at::scalar_tensor(2.0), at::scalar_tensor(3.0)});
}

TEST_F(Linear, LinalgVecdot) {
  auto fn = [](const Inputs& in) { return at::linalg_vecdot(arg(in, 0), arg(in, 1), -1); };
  expect_op_matches("aten::linalg_vecdot", fn, {at::randn({3, 4}), at::randn({4})});
  auto dim0 = [](const Inputs& in) { return at::linalg_vecdot(arg(in, 0), arg(in, 1), 0); };
  expect_op_matches("aten::linalg_vecdot", dim0, {at::randn({3, 4}), at::randn({3, 1})});
}

// ----- block_diag / multi_dot / matrix_power / trace ------------------------------------------

TEST_F(Linear, BlockDiag) {
  auto fn = [](const Inputs& in) { return at::block_diag({arg(in, 0), arg(in, 1), arg(in, 2)}); };
  expect_op_matches("aten::block_diag", fn,
                    {at::randn({2, 3}), at::randn({4}), at::scalar_tensor(5.0)});
  // empty blocks: no rows, or no columns
  expect_op_matches("aten::block_diag", fn,
                    {at::randn({0, 2}), at::randn({3, 0}), at::randn({1, 2})});
  expect_op_matches(
      "aten::block_diag", fn,
      {at::randint(-9, 9, {1, 1}), at::randint(-9, 9, {2, 2}), at::randint(-9, 9, {3})});
  // dtypes promote: int64 and float32 give float32
  expect_op_matches("aten::block_diag", fn,
                    {at::randint(-9, 9, {2, 2}), at::randn({1, 3}), at::randn({2, 1}) > 0});
}

TEST_F(Linear, MultiDotAndChainMatmul) {
  auto fn = [](const Inputs& in) {
    return at::linalg_multi_dot({arg(in, 0), arg(in, 1), arg(in, 2)});
  };
  expect_op_matches("aten::linalg_multi_dot", fn,
                    {at::randn({2, 3}), at::randn({3, 4}), at::randn({4, 5})});
  // a 1-D first (row) and last (column) operand
  expect_op_matches("aten::linalg_multi_dot", fn,
                    {at::randn({3}), at::randn({3, 4}), at::randn({4})});
  expect_op_matches(
      "aten::linalg_multi_dot", fn,
      {at::randint(-3, 3, {2, 2}), at::randint(-3, 3, {2, 3}), at::randint(-3, 3, {3, 1})});
}

TEST_F(Linear, ChainMatmulAndMatrixPower) {
  expect_op_matches("aten::chain_matmul",
                    [](const Inputs& in) {
                      return at::chain_matmul({arg(in, 0), arg(in, 1), arg(in, 2)});
                    },
                    {at::randn({2, 3}), at::randn({3, 4}), at::randn({4, 2})});
  // matrix_power reaches the converters as linalg_matrix_power (libtorch normalizes it)
  expect_op_matches("aten::linalg_matrix_power",
                    [](const Inputs& in) { return at::matrix_power(arg(in, 0), 3); },
                    {at::randn({2, 3, 3}) * 0.5});
}

TEST_F(Linear, MatrixPower) {
  for (int64_t n : {0, 1, 2, 3, 6}) {
    SCOPED_TRACE(::testing::Message() << "power " << n);
    auto fn = [n](const Inputs& in) { return at::linalg_matrix_power(arg(in, 0), n); };
    expect_op_matches("aten::linalg_matrix_power", fn, {at::randn({3, 3}) * 0.5});
    expect_op_matches("aten::linalg_matrix_power", fn, {at::randn({2, 4, 4}) * 0.5});
    expect_op_matches("aten::linalg_matrix_power", fn, {at::randint(-2, 3, {3, 3})});
  }
  auto m = script_module("def forward(self, x):\n  return torch.matrix_power(x, -1)\n");
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model_to_bytes(m, {at::randn({3, 3})});
      },
      ErrorCode::kConversion, {"negative exponent", "inverse"}));
}

TEST_F(Linear, Trace) {
  auto fn = [](const Inputs& in) { return at::trace(arg(in, 0)); };
  expect_op_matches("aten::trace", fn, {at::randn({3, 3})});
  expect_op_matches("aten::trace", fn, {at::randn({2, 5})});
  expect_op_matches("aten::trace", fn, {at::randn({5, 2})});
  expect_op_matches("aten::trace", fn, {at::randint(-9, 9, {4, 4}, at::kInt)});  // sums as int64
  expect_op_matches("aten::trace", fn, {at::randn({0, 3})});
}

// ----- cartesian_prod / combinations ----------------------------------------------------------

TEST_F(Linear, CartesianProd) {
  auto two = [](const Inputs& in) { return at::cartesian_prod({arg(in, 0), arg(in, 1)}); };
  expect_op_matches("aten::cartesian_prod", two, {at::randn({3}), at::randn({2})});
  auto three = [](const Inputs& in) {
    return at::cartesian_prod({arg(in, 0), arg(in, 1), arg(in, 2)});
  };
  expect_op_matches("aten::cartesian_prod", three,
                    {at::randint(0, 9, {2}), at::randint(0, 9, {3}), at::randint(0, 9, {2})});
  auto one = [](const Inputs& in) { return at::cartesian_prod({arg(in, 0)}) * 2; };
  expect_op_matches("aten::cartesian_prod", one, {at::randn({4})});
}

TEST_F(Linear, Combinations) {
  for (int64_t r : {1, 2, 3, 5}) {
    for (bool replace : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "r " << r << (replace ? " with replacement" : ""));
      auto fn = [r, replace](const Inputs& in) { return at::combinations(arg(in, 0), r, replace); };
      expect_op_matches("aten::combinations", fn, {at::randn({4})});
      expect_op_matches("aten::combinations", fn, {at::randint(0, 9, {3})});
    }
  }
}

}  // namespace
}  // namespace torchonnx::testing
