// Numeric tests of the linalg converters: norm, frobenius_norm, linalg_norm / vector_norm /
// matrix_norm, det / linalg_det / logdet, std / var / std_mean / var_mean.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Linalg : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

c10::IValue pair(const std::tuple<at::Tensor, at::Tensor>& t) {
  return c10::ivalue::Tuple::create({std::get<0>(t), std::get<1>(t)});
}

// ----- norm -------------------------------------------------------------------------------------

TEST_F(Linalg, NormOfEveryPOverDims) {
  at::Tensor x = at::randn({3, 4, 5});
  x.index_put_({0, 0}, 0);  // zeros for p = 0
  for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5}) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " keepdim=" << keepdim);
      expect_op_matches("aten::norm",
                        [p, keepdim](const Inputs& in) {
                          return at::norm(arg(in, 0), p, {-1, 0}, keepdim);
                        },
                        {x});
    }
  }
}

TEST_F(Linalg, NormOfAllElements) {
  expect_op_matches("aten::norm", [](const Inputs& in) { return at::norm(arg(in, 0)); },
                    {at::randn({3, 4})});
  expect_op_matches("aten::norm", [](const Inputs& in) { return at::norm(arg(in, 0), 3); },
                    {at::randn({3, 4})});
  expect_op_matches("aten::norm", [](const Inputs& in) { return at::norm(arg(in, 0), kInf); },
                    {at::randn({3, 4})});
}

TEST_F(Linalg, NormWithNonePAndEmptyDims) {
  // p None is 2; an empty dim list reduces every dim.
  expect_op_matches("aten::norm",
                    [](const Inputs& in) { return at::norm(arg(in, 0), c10::nullopt, {1}); },
                    {at::randn({3, 4})});
  expect_op_matches(
      "aten::norm",
      [](const Inputs& in) { return at::norm(arg(in, 0), 1, at::IntArrayRef{}, true); },
      {at::randn({3, 4})});
}

TEST_F(Linalg, NormWithDtype) {
  expect_op_matches(
      "aten::norm",
      [](const Inputs& in) { return at::norm(arg(in, 0), 2, at::ScalarType::Double); },
      {at::randn({3, 4})});
  expect_op_matches(
      "aten::norm",
      [](const Inputs& in) { return at::norm(arg(in, 0), 1, {1}, true, at::ScalarType::Double); },
      {at::randn({3, 4})});
}

TEST_F(Linalg, NormOfDoubleAnd0dInputs) {
  expect_op_matches("aten::norm", [](const Inputs& in) { return at::norm(arg(in, 0), 2, {0}); },
                    {at::randn({3, 4}, at::kDouble)});
  expect_op_matches("aten::norm", [](const Inputs& in) { return at::norm(arg(in, 0), 1.5); },
                    {at::randn({3, 4}, at::kDouble)});
  expect_op_matches("aten::norm", [](const Inputs& in) { return at::norm(arg(in, 0)); },
                    {at::scalar_tensor(-2.5)});
}

TEST_F(Linalg, FrobeniusNorm) {
  // frobenius_norm(Tensor self): libtorch 1.13 has it, 2.x only the overload with dims.
  if (c10::Dispatcher::singleton().findSchema({"aten::frobenius_norm", ""})) {
    expect_script_matches("aten::frobenius_norm",
                          "def forward(self, x):\n  return torch.frobenius_norm(x)\n",
                          {at::randn({3, 4})});
  }
  expect_op_matches("aten::frobenius_norm",
                    [](const Inputs& in) {
                      return at::frobenius_norm(arg(in, 0), {0, 1}, false);
                    },
                    {at::randn({3, 4})});
  expect_op_matches("aten::frobenius_norm",
                    [](const Inputs& in) {
                      return at::frobenius_norm(arg(in, 0), {0, -1}, true);
                    },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::frobenius_norm",
                    [](const Inputs& in) { return at::frobenius_norm(arg(in, 0), {1}); },
                    {at::randn({2, 3, 4})});
}

// ----- linalg_vector_norm -----------------------------------------------------------------------

TEST_F(Linalg, LinalgVectorNorm) {
  at::Tensor x = at::randn({3, 4, 5});
  x.index_put_({1, 2}, 0);
  for (double ord : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, -1.5}) {
    SCOPED_TRACE(::testing::Message() << "ord=" << ord);
    expect_op_matches("aten::linalg_vector_norm",
                      [ord](const Inputs& in) {
                        return at::linalg_vector_norm(arg(in, 0), ord, {{1, -1}});
                      },
                      {x});
  }
}

TEST_F(Linalg, LinalgVectorNormOfAllElementsWithKeepdim) {
  expect_op_matches("aten::linalg_vector_norm",
                    [](const Inputs& in) { return at::linalg_vector_norm(arg(in, 0)); },
                    {at::randn({3, 4})});
  expect_op_matches(
      "aten::linalg_vector_norm",
      [](const Inputs& in) { return at::linalg_vector_norm(arg(in, 0), 1, c10::nullopt, true); },
      {at::randn({2, 3, 4})});
  expect_op_matches(
      "aten::linalg_vector_norm",
      [](const Inputs& in) { return at::linalg_vector_norm(arg(in, 0), 4, {{0}}, true); },
      {at::randn({2, 3})});
}

TEST_F(Linalg, LinalgVectorNormWithDtype) {
  expect_op_matches("aten::linalg_vector_norm",
                    [](const Inputs& in) {
                      return at::linalg_vector_norm(arg(in, 0), 2, {{0}}, false, at::kDouble);
                    },
                    {at::randn({3, 4})});
}

// ----- linalg_matrix_norm -----------------------------------------------------------------------

TEST_F(Linalg, LinalgMatrixNormNumericOrds) {
  at::Tensor x = at::randn({2, 3, 4});
  for (double ord : {1.0, -1.0, kInf, -kInf}) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "ord=" << ord << " keepdim=" << keepdim);
      expect_op_matches("aten::linalg_matrix_norm",
                        [ord, keepdim](const Inputs& in) {
                          return at::linalg_matrix_norm(arg(in, 0), ord, {-1, 0}, keepdim);
                        },
                        {x});
    }
  }
  expect_op_matches("aten::linalg_matrix_norm",
                    [](const Inputs& in) { return at::linalg_matrix_norm(arg(in, 0), 1); }, {x});
}

TEST_F(Linalg, LinalgMatrixNormFro) {
  expect_op_matches("aten::linalg_matrix_norm",
                    [](const Inputs& in) { return at::linalg_matrix_norm(arg(in, 0), "fro"); },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::linalg_matrix_norm",
                    [](const Inputs& in) {
                      return at::linalg_matrix_norm(arg(in, 0), "fro", {0, 2}, true, at::kDouble);
                    },
                    {at::randn({2, 3, 4})});
}

TEST_F(Linalg, LinalgMatrixNormNucAnd2NeedAnSvd) {
  at::Tensor x = at::randn({3, 3});
  expect_export_fails([](const Inputs& in) { return at::linalg_matrix_norm(arg(in, 0), "nuc"); },
                      {x}, 17, "needs singular values");
  expect_export_fails([](const Inputs& in) { return at::linalg_matrix_norm(arg(in, 0), 2); }, {x},
                      17, "needs singular values");
  expect_export_fails([](const Inputs& in) { return at::linalg_matrix_norm(arg(in, 0), -2); }, {x},
                      13, "linalg_matrix_norm");
}

// ----- linalg_norm ------------------------------------------------------------------------------

TEST_F(Linalg, LinalgNormDefaultIsTwoNormOfAllElements) {
  expect_op_matches("aten::linalg_norm",
                    [](const Inputs& in) { return at::linalg_norm(arg(in, 0)); },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::linalg_norm",
                    [](const Inputs& in) {
                      return at::linalg_norm(arg(in, 0), c10::nullopt, c10::nullopt, true);
                    },
                    {at::randn({2, 3, 4})});
}

TEST_F(Linalg, LinalgNormVectorAndMatrix) {
  // Ord without dim: a vector norm of a 1-D input, a matrix norm of a 2-D input.
  expect_op_matches(
      "aten::linalg_norm",
      [](const Inputs& in) { return at::linalg_norm(arg(in, 0), c10::optional<at::Scalar>(3)); },
      {at::randn({5})});
  expect_op_matches(
      "aten::linalg_norm",
      [](const Inputs& in) { return at::linalg_norm(arg(in, 0), c10::optional<at::Scalar>(kInf)); },
      {at::randn({3, 4})});
  // One dim: a vector norm; two dims: a matrix norm ('fro' when ord is None).
  expect_op_matches("aten::linalg_norm",
                    [](const Inputs& in) {
                      return at::linalg_norm(arg(in, 0), c10::optional<at::Scalar>(1), {{-2}});
                    },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::linalg_norm",
                    [](const Inputs& in) {
                      return at::linalg_norm(arg(in, 0), c10::nullopt, {{2, 0}}, true);
                    },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::linalg_norm",
                    [](const Inputs& in) {
                      return at::linalg_norm(arg(in, 0), c10::optional<at::Scalar>(-1), {{0, 1}});
                    },
                    {at::randn({3, 4})});
}

TEST_F(Linalg, LinalgNormStrOrdAndDtype) {
  expect_op_matches("aten::linalg_norm",
                    [](const Inputs& in) {
                      return at::linalg_norm(arg(in, 0), "fro", {{1, 2}}, false, at::kDouble);
                    },
                    {at::randn({2, 3, 4})});
  expect_export_fails([](const Inputs& in) { return at::linalg_norm(arg(in, 0), "nuc"); },
                      {at::randn({3, 3})}, 17, "needs singular values");
}

// ----- det / logdet -----------------------------------------------------------------------------

TEST_F(Linalg, LinalgDet) {
  expect_op_matches(
      "aten::linalg_det", [](const Inputs& in) { return at::linalg_det(arg(in, 0)); },
      {at::randn({3, 3})}, 11);
  expect_op_matches(
      "aten::linalg_det", [](const Inputs& in) { return at::linalg_det(arg(in, 0)); },
      {at::randn({2, 4, 4})}, 11);
}

TEST_F(Linalg, LinalgDetOfDoubleGoesThroughFloat) {
  expect_op_matches(
      "aten::linalg_det", [](const Inputs& in) { return at::linalg_det(arg(in, 0)); },
      {at::randn({2, 3, 3}, at::kDouble)}, 11);
}

TEST_F(Linalg, DetInScriptIsLinalgDet) {
  // TorchScript's aten::det reaches the converters as aten::linalg_det (an alias).
  ScriptOptions so;
  so.first = 11;
  expect_script_matches("aten::linalg_det", "def forward(self, x):\n  return torch.det(x)\n",
                        {at::randn({2, 3, 3})}, so);
}

TEST_F(Linalg, DetNeedsOpset11) {
  expect_export_fails([](const Inputs& in) { return at::linalg_det(arg(in, 0)); },
                      {at::randn({3, 3})}, 10, "aten::linalg_det", ErrorCode::kUnsupportedOp);
}

TEST_F(Linalg, LogdetOfDouble) {
  at::Tensor m = at::randn({3, 3}, at::kDouble);
  m = at::matmul(m, m.t()) + at::eye(3, at::kDouble);  // positive definite
  expect_op_matches(
      "aten::logdet", [](const Inputs& in) { return at::logdet(arg(in, 0)); }, {m}, 11);
}

TEST_F(Linalg, LogdetIsNanForNegativeDeterminants) {
  // Determinants 6 (log 1.79), -6 (nan) and 0 (-inf).
  at::Tensor m = at::stack({at::diag(at::tensor({2.0f, 3.0f})), at::diag(at::tensor({-2.0f, 3.0f})),
                            at::diag(at::tensor({0.0f, 3.0f}))});
  expect_op_matches(
      "aten::logdet", [](const Inputs& in) { return at::logdet(arg(in, 0)); }, {m}, 11);
  expect_export_fails([](const Inputs& in) { return at::logdet(arg(in, 0)); }, {m}, 10,
                      "aten::logdet", ErrorCode::kUnsupportedOp);
}

// ----- std / var --------------------------------------------------------------------------------

TEST_F(Linalg, VarAndStdOfAllElements) {
  for (bool unbiased : {true, false}) {
    SCOPED_TRACE(unbiased);
    expect_op_matches("aten::var",
                      [unbiased](const Inputs& in) { return at::var(arg(in, 0), unbiased); },
                      {at::randn({3, 4})});
    expect_op_matches("aten::std",
                      [unbiased](const Inputs& in) { return at::std(arg(in, 0), unbiased); },
                      {at::randn({3, 4})});
  }
}

TEST_F(Linalg, VarAndStdOverDimsWithUnbiased) {
  for (bool keepdim : {false, true}) {
    SCOPED_TRACE(keepdim);
    expect_op_matches("aten::var",
                      [keepdim](const Inputs& in) {
                        return at::var(arg(in, 0), at::IntArrayRef{-1, 0}, false, keepdim);
                      },
                      {at::randn({3, 4, 5})});
    expect_op_matches("aten::std",
                      [keepdim](const Inputs& in) {
                        return at::std(arg(in, 0), at::IntArrayRef{1}, true, keepdim);
                      },
                      {at::randn({3, 4, 5}, at::kDouble)});
  }
}

TEST_F(Linalg, VarAndStdWithCorrection) {
  for (int64_t correction : {0, 1, 2}) {
    SCOPED_TRACE(correction);
    expect_op_matches("aten::var",
                      [correction](const Inputs& in) {
                        return at::var(arg(in, 0), at::OptionalIntArrayRef(at::IntArrayRef{1}),
                                       c10::optional<int64_t>(correction), true);
                      },
                      {at::randn({3, 4, 5})});
    expect_op_matches("aten::std",
                      [correction](const Inputs& in) {
                        return at::std(arg(in, 0), c10::nullopt, c10::optional<int64_t>(correction),
                                       false);
                      },
                      {at::randn({3, 4, 5})});
  }
  // correction None is 1.
  expect_op_matches("aten::var",
                    [](const Inputs& in) {
                      return at::var(arg(in, 0), at::OptionalIntArrayRef(at::IntArrayRef{0}),
                                     c10::optional<int64_t>(), false);
                    },
                    {at::randn({3, 4})});
}

TEST_F(Linalg, VarWithEmptyDimsReducesAll) {
  expect_op_matches(
      "aten::var",
      [](const Inputs& in) { return at::var(arg(in, 0), at::IntArrayRef{}, true, true); },
      {at::randn({3, 4})});
}

TEST_F(Linalg, VarOfOneElementIsNanWhenUnbiased) {
  // N - correction <= 0: PyTorch divides by max(N - correction, 0).
  expect_op_matches("aten::var",
                    [](const Inputs& in) { return at::var(arg(in, 0), at::IntArrayRef{0}, true); },
                    {at::randn({1, 3})});
  expect_op_matches("aten::var", [](const Inputs& in) { return at::var(arg(in, 0), true); },
                    {at::scalar_tensor(2.5)});
  expect_op_matches("aten::var",
                    [](const Inputs& in) {
                      return at::var(arg(in, 0), at::OptionalIntArrayRef(at::IntArrayRef{0}),
                                     c10::optional<int64_t>(3), false);
                    },
                    {at::randn({2, 3})});
}

TEST_F(Linalg, VarMeanAndStdMean) {
  expect_op_matches("aten::var_mean",
                    [](const Inputs& in) { return pair(at::var_mean(arg(in, 0), false)); },
                    {at::randn({3, 4})});
  expect_op_matches("aten::std_mean",
                    [](const Inputs& in) { return pair(at::std_mean(arg(in, 0))); },
                    {at::randn({3, 4})});
  expect_op_matches("aten::var_mean",
                    [](const Inputs& in) {
                      return pair(at::var_mean(arg(in, 0), at::IntArrayRef{0, 2}, true, true));
                    },
                    {at::randn({3, 4, 5})});
  expect_op_matches(
      "aten::std_mean",
      [](const Inputs& in) {
        return pair(at::std_mean(arg(in, 0), at::OptionalIntArrayRef(at::IntArrayRef{-1}),
                                 c10::optional<int64_t>(0), false));
      },
      {at::randn({3, 4, 5})});
  // The overloads by `unbiased` over dims (std_mean.dim) and by `correction` (var_mean.correction)
  expect_op_matches("aten::std_mean",
                    [](const Inputs& in) {
                      return pair(at::std_mean(arg(in, 0), at::IntArrayRef{1}, false, true));
                    },
                    {at::randn({3, 4, 5})});
  expect_op_matches(
      "aten::var_mean",
      [](const Inputs& in) {
        return pair(at::var_mean(arg(in, 0), at::OptionalIntArrayRef(at::IntArrayRef{0, 2}),
                                 c10::optional<int64_t>(2), true));
      },
      {at::randn({4, 3, 5})});
}

// std_mean(x, unbiased): the overload PyTorch 2's own code no longer calls (its at::std_mean
// records std_mean.correction), as an older graph holds it.
TEST_F(Linalg, StdMeanByUnbiased) {
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %u : bool = prim::Constant[value=0]()
  %s : Tensor, %m : Tensor = aten::std_mean(%x, %u)
  return (%s, %m))IR");
  expect_script_matches("aten::std_mean", m, {at::randn({3, 4})});
}

TEST_F(Linalg, StdInScriptWithKeywords) {
  expect_script_matches(
      "aten::std",
      "def forward(self, x):\n  return torch.std(x, dim=[1], correction=2, keepdim=True)\n",
      {at::randn({3, 6})});
  expect_script_matches(
      "aten::var_mean",
      "def forward(self, x):\n  return torch.var_mean(x, [0, 1], unbiased=False)\n",
      {at::randn({3, 6, 2})});
}

TEST_F(Linalg, Dist) {
  for (double p : std::vector<double>{2.0, 1.0, 0.0, 3.0, INFINITY, -INFINITY}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    auto fn = [p](const Inputs& in) { return at::dist(arg(in, 0), arg(in, 1), p); };
    expect_op_matches("aten::dist", fn, {at::randn({3, 4}), at::randn({4})});
  }
  expect_op_matches("aten::dist", [](const Inputs& in) { return at::dist(arg(in, 0), arg(in, 1)); },
                    {at::randn({2, 1, 3}), at::randn({2, 3})});
}

TEST_F(Linalg, Renorm) {
  for (double p : std::vector<double>{2.0, 1.0, 3.0}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    auto fn = [p](const Inputs& in) { return at::renorm(arg(in, 0), p, 1, 1.5); };
    expect_op_matches("aten::renorm", fn, {at::randn({3, 4, 2})});
  }
  auto last = [](const Inputs& in) { return at::renorm(arg(in, 0), 2, -1, 0.5); };
  expect_op_matches("aten::renorm", last, {at::randn({5, 3})});
}

TEST_F(Linalg, CovAndCorrcoef) {
  auto cov = [](const Inputs& in) { return at::cov(arg(in, 0)); };
  expect_op_matches("aten::cov", cov, {at::randn({3, 5})});
  expect_op_matches("aten::cov", cov, {at::randn({6})});
  expect_op_matches("aten::cov", cov, {at::randint(-9, 9, {2, 4})});
  auto population = [](const Inputs& in) { return at::cov(arg(in, 0), /*correction=*/0); };
  expect_op_matches("aten::cov", population, {at::randn({4, 3})});
  auto corrcoef = [](const Inputs& in) { return at::corrcoef(arg(in, 0)); };
  expect_op_matches("aten::corrcoef", corrcoef, {at::randn({3, 5})});
  expect_op_matches("aten::corrcoef", corrcoef, {at::randn({7})});
  // one variable (a row): ATen squeezes the result to 0-d
  expect_op_matches("aten::corrcoef", corrcoef, {at::randn({1, 4})});
  expect_op_matches("aten::cov", cov, {at::randn({1, 4})});
  // a constant variable: its row and column are nan, as in ATen
  expect_op_matches("aten::corrcoef", corrcoef, {at::cat({at::randn({2, 4}), at::ones({1, 4})})});
}

TEST_F(Linalg, Pdist) {
  for (double p : std::vector<double>{2.0, 1.0, 0.0, 3.0, INFINITY}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    auto fn = [p](const Inputs& in) { return at::pdist(arg(in, 0), p); };
    expect_op_matches("aten::pdist", fn, {at::randn({4, 3})});
  }
  expect_op_matches("aten::pdist", [](const Inputs& in) { return at::pdist(arg(in, 0)); },
                    {at::randn({2, 5})});
}

}  // namespace
}  // namespace torchonnx::testing
