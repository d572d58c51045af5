// Numeric tests of the loss converters with reductions none/mean/sum: nll_loss (1-D, 2-D, N-D,
// weights, ignore_index), cross_entropy (index and probability targets, label smoothing), mse/l1,
// smooth_l1/huber, binary_cross_entropy(_with_logits), kl_div, soft_margin, margin_ranking,
// hinge_embedding, cosine_embedding, triplet_margin, multi_margin, multilabel_margin, poisson_nll.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

constexpr int64_t kReductions[] = {0, 1, 2};  // none, mean, sum

class Loss : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

at::Tensor log_probs(std::vector<int64_t> shape) {
  return at::log_softmax(at::randn(shape), 1);
}

// Targets in [0, classes) with some set to `ignore`.
at::Tensor targets(std::vector<int64_t> shape, int64_t classes, int64_t ignore) {
  at::Tensor t = at::randint(0, classes, shape);
  t.view(-1)[0] = ignore;
  return t;
}

// ----- nll_loss --------------------------------------------------------------------------------

TEST_F(Loss, NllLoss) {
  for (int64_t reduction : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    expect_op_matches("aten::nll_loss",
                      [reduction](const Inputs& in) {
                        return at::nll_loss(arg(in, 0), arg(in, 1), {}, reduction, -100);
                      },
                      {log_probs({6, 5}), at::randint(0, 5, {6})});
  }
}

TEST_F(Loss, NllLossWeightAndIgnoreIndex) {
  for (int64_t reduction : kReductions) {
    for (int64_t ignore : {-100, 2}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " ignore " << ignore);
      expect_op_matches("aten::nll_loss",
                        [reduction, ignore](const Inputs& in) {
                          return at::nll_loss(arg(in, 0), arg(in, 1), arg(in, 2), reduction,
                                              ignore);
                        },
                        {log_probs({6, 5}), targets({6}, 5, ignore), at::rand({5}) + 0.1});
    }
  }
}

TEST_F(Loss, NllLossUnbatched) {
  for (int64_t reduction : kReductions) {
    expect_op_matches(
        "aten::nll_loss",
        [reduction](const Inputs& in) {
          return at::nll_loss(arg(in, 0), arg(in, 1), arg(in, 2), reduction, -100);
        },
        {at::log_softmax(at::randn({5}), 0), at::scalar_tensor(3, at::kLong), at::rand({5}) + 0.1});
  }
}

TEST_F(Loss, NllLoss2dAndNd) {
  for (int64_t reduction : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    expect_op_matches("aten::nll_loss2d",
                      [reduction](const Inputs& in) {
                        return at::nll_loss2d(arg(in, 0), arg(in, 1), arg(in, 2), reduction, 1);
                      },
                      {log_probs({2, 4, 3, 5}), targets({2, 3, 5}, 4, 1), at::rand({4}) + 0.1});
    expect_op_matches("aten::nll_loss_nd",
                      [reduction](const Inputs& in) {
                        return at::nll_loss_nd(arg(in, 0), arg(in, 1), {}, reduction, -100);
                      },
                      {log_probs({2, 3, 4}), targets({2, 4}, 3, -100)});
  }
}

TEST_F(Loss, NllLossDoubleUsesComposition) {
  expect_op_matches(
      "aten::nll_loss",
      [](const Inputs& in) { return at::nll_loss(arg(in, 0), arg(in, 1), arg(in, 2), 1, 0); },
      {at::log_softmax(at::randn({6, 5}, at::kDouble), 1), targets({6}, 5, 0),
       at::rand({5}, at::kDouble) + 0.1});
}

// ----- cross_entropy ---------------------------------------------------------------------------

TEST_F(Loss, CrossEntropyIndexTargets) {
  for (int64_t reduction : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    expect_op_matches("aten::cross_entropy_loss",
                      [reduction](const Inputs& in) {
                        return at::cross_entropy_loss(arg(in, 0), arg(in, 1), {}, reduction, -100,
                                                      0.0);
                      },
                      {at::randn({6, 5}), at::randint(0, 5, {6})});
    expect_op_matches("aten::cross_entropy_loss",
                      [reduction](const Inputs& in) {
                        return at::cross_entropy_loss(arg(in, 0), arg(in, 1), arg(in, 2), reduction,
                                                      2, 0.0);
                      },
                      {at::randn({2, 4, 3, 5}), targets({2, 3, 5}, 4, 2), at::rand({4}) + 0.1});
  }
}

TEST_F(Loss, CrossEntropyLabelSmoothing) {
  for (int64_t reduction : kReductions) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " weighted " << weighted);
      expect_op_matches("aten::cross_entropy_loss",
                        [reduction, weighted](const Inputs& in) {
                          return at::cross_entropy_loss(
                              arg(in, 0), arg(in, 1),
                              weighted ? c10::optional<at::Tensor>(arg(in, 2)) : c10::nullopt,
                              reduction, 1, 0.2);
                        },
                        {at::randn({3, 4, 5}), targets({3, 5}, 4, 1), at::rand({4}) + 0.1});
    }
  }
}

TEST_F(Loss, CrossEntropyProbabilityTargets) {
  for (int64_t reduction : kReductions) {
    for (double smoothing : {0.0, 0.1}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " ls " << smoothing);
      expect_op_matches(
          "aten::cross_entropy_loss",
          [reduction, smoothing](const Inputs& in) {
            return at::cross_entropy_loss(arg(in, 0), arg(in, 1), arg(in, 2), reduction, -100,
                                          smoothing);
          },
          {at::randn({2, 4, 3}), at::softmax(at::randn({2, 4, 3}), 1), at::rand({4}) + 0.1});
    }
  }
}

TEST_F(Loss, CrossEntropyUnbatched) {
  for (int64_t reduction : kReductions) {
    expect_op_matches("aten::cross_entropy_loss",
                      [reduction](const Inputs& in) {
                        return at::cross_entropy_loss(arg(in, 0), arg(in, 1), {}, reduction, -100,
                                                      0.0);
                      },
                      {at::randn({5}), at::scalar_tensor(2, at::kLong)});
    expect_op_matches("aten::cross_entropy_loss",
                      [reduction](const Inputs& in) {
                        return at::cross_entropy_loss(arg(in, 0), arg(in, 1), {}, reduction, -100,
                                                      0.0);
                      },
                      {at::randn({5}), at::softmax(at::randn({5}), 0)});
  }
}

// ----- pointwise regression losses -------------------------------------------------------------

TEST_F(Loss, MseAndL1) {
  for (int64_t reduction : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    expect_op_matches(
        "aten::mse_loss",
        [reduction](const Inputs& in) { return at::mse_loss(arg(in, 0), arg(in, 1), reduction); },
        {at::randn({3, 4, 5}), at::randn({3, 4, 5})});
    expect_op_matches(
        "aten::l1_loss",
        [reduction](const Inputs& in) { return at::l1_loss(arg(in, 0), arg(in, 1), reduction); },
        {at::randn({3, 4, 5}), at::randn({3, 4, 5})});
  }
}

TEST_F(Loss, SmoothL1AndHuber) {
  for (int64_t reduction : kReductions) {
    for (double beta : {1.0, 0.5, 0.0}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " beta " << beta);
      expect_op_matches("aten::smooth_l1_loss",
                        [reduction, beta](const Inputs& in) {
                          return at::smooth_l1_loss(arg(in, 0), arg(in, 1), reduction, beta);
                        },
                        {at::randn({3, 4}) * 2, at::randn({3, 4})});
      if (beta > 0) {
        expect_op_matches("aten::huber_loss",
                          [reduction, beta](const Inputs& in) {
                            return at::huber_loss(arg(in, 0), arg(in, 1), reduction, beta);
                          },
                          {at::randn({3, 4}) * 2, at::randn({3, 4})});
      }
    }
  }
}

// ----- binary cross entropy --------------------------------------------------------------------

TEST_F(Loss, BinaryCrossEntropy) {
  for (int64_t reduction : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    expect_op_matches("aten::binary_cross_entropy",
                      [reduction](const Inputs& in) {
                        return at::binary_cross_entropy(arg(in, 0), arg(in, 1), arg(in, 2),
                                                        reduction);
                      },
                      {at::rand({4, 3}) * 0.98 + 0.01, at::rand({4, 3}), at::rand({4, 3})});
  }
}

TEST_F(Loss, BinaryCrossEntropyClampsLogAtMinus100) {
  // Inputs 0 and 1 make log(x) or log(1 - x) -inf: ATen clamps them at -100.
  expect_op_matches(
      "aten::binary_cross_entropy",
      [](const Inputs& in) { return at::binary_cross_entropy(arg(in, 0), arg(in, 1), {}, 0); },
      {at::tensor({0.0f, 1.0f, 0.5f, 0.0f}), at::tensor({0.3f, 0.6f, 1.0f, 0.0f})});
}

TEST_F(Loss, BinaryCrossEntropyWithLogits) {
  for (int64_t reduction : kReductions) {
    for (bool pos : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " pos_weight " << pos);
      expect_op_matches(
          "aten::binary_cross_entropy_with_logits",
          [reduction, pos](const Inputs& in) {
            return at::binary_cross_entropy_with_logits(
                arg(in, 0), arg(in, 1), arg(in, 2),
                pos ? c10::optional<at::Tensor>(arg(in, 3)) : c10::nullopt, reduction);
          },
          {at::randn({4, 3}) * 30, at::rand({4, 3}), at::rand({3}), at::rand({3}) * 3});
    }
  }
}

// ----- kl_div ----------------------------------------------------------------------------------

TEST_F(Loss, KlDiv) {
  for (int64_t reduction : kReductions) {
    for (bool log_target : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " log " << log_target);
      at::Tensor t = at::softmax(at::randn({3, 5}), 1);
      t[0][1] = 0;  // xlogy(0, 0) = 0
      expect_op_matches("aten::kl_div",
                        [reduction, log_target](const Inputs& in) {
                          return at::kl_div(arg(in, 0), arg(in, 1), reduction, log_target);
                        },
                        {at::log_softmax(at::randn({3, 5}), 1), log_target ? t.log() : t});
    }
  }
}

TEST_F(Loss, KlDivBatchmeanForm) {
  // F.kl_div(reduction='batchmean') is computed in Python: the graph gets kl_div(sum) / size(0).
  expect_script_matches("aten::kl_div",
                        "def forward(self, x, t):\n"
                        "  return torch.kl_div(x, t, 2) / x.size(0)\n",
                        {at::log_softmax(at::randn({4, 5}), 1), at::softmax(at::randn({4, 5}), 1)});
}

// ----- margin losses, poisson_nll ----------------------------------------------------------------

// ±1 targets (float).
at::Tensor signs(std::vector<int64_t> shape) {
  return at::where(at::rand(shape) < 0.5, -1.0, 1.0).to(at::kFloat);
}

TEST_F(Loss, SoftMarginLoss) {
  for (int64_t reduction : kReductions) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 5}, {7}, {}}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " rank " << shape.size());
      at::Tensor x = at::randn(shape) * 3;
      expect_op_matches("aten::soft_margin_loss",
                        [reduction](const Inputs& in) {
                          return at::soft_margin_loss(arg(in, 0), arg(in, 1), reduction);
                        },
                        {x, signs(shape)});
    }
  }
}

TEST_F(Loss, MarginRankingLoss) {
  for (int64_t reduction : kReductions) {
    for (double margin : {0.0, 0.7}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " margin " << margin);
      expect_op_matches("aten::margin_ranking_loss",
                        [reduction, margin](const Inputs& in) {
                          return at::margin_ranking_loss(arg(in, 0), arg(in, 1), arg(in, 2), margin,
                                                         reduction);
                        },
                        {at::randn({8}), at::randn({8}), signs({8})});
    }
  }
}

TEST_F(Loss, HingeEmbeddingLoss) {
  // Targets ±1, and other values (neither branch: 0 + 0... both branches: x + clamp).
  at::Tensor t = floats({1, -1, 1, -1, 0, 2, 1, -1, 1, -1, -1, 1}).reshape({3, 4});
  for (int64_t reduction : kReductions) {
    for (double margin : {1.0, 0.3}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " margin " << margin);
      expect_op_matches("aten::hinge_embedding_loss",
                        [reduction, margin](const Inputs& in) {
                          return at::hinge_embedding_loss(arg(in, 0), arg(in, 1), margin,
                                                          reduction);
                        },
                        {at::randn({3, 4}), t});
    }
  }
  expect_op_matches(
      "aten::hinge_embedding_loss",
      [](const Inputs& in) { return at::hinge_embedding_loss(arg(in, 0), arg(in, 1), 1.0, 0); },
      {at::randn({5}), longs({1, -1, -1, 1, 1})});
}

TEST_F(Loss, CosineEmbeddingLoss) {
  for (int64_t reduction : kReductions) {
    for (double margin : {0.0, 0.4}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " margin " << margin);
      auto fn = [reduction, margin](const Inputs& in) {
        return at::cosine_embedding_loss(arg(in, 0), arg(in, 1), arg(in, 2), margin, reduction);
      };
      at::Tensor x2 = at::randn({6, 5});
      x2[1].zero_();  // a zero vector: the 1e-12 terms keep the cosine finite
      expect_op_matches("aten::cosine_embedding_loss", fn,
                        {at::randn({6, 5}), x2, floats({1, -1, 1, -1, -1, 1})});
      expect_op_matches("aten::cosine_embedding_loss", fn,
                        {at::randn({5}), at::randn({5}), at::scalar_tensor(-1.0, at::kFloat)});
    }
  }
}

TEST_F(Loss, TripletMarginLoss) {
  for (int64_t reduction : kReductions) {
    for (double p : {2.0, 1.0, 3.0, static_cast<double>(kInf)}) {
      for (bool swap : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "reduction " << reduction << " p " << p << " swap " << swap);
        expect_op_matches("aten::triplet_margin_loss",
                          [reduction, p, swap](const Inputs& in) {
                            return at::triplet_margin_loss(arg(in, 0), arg(in, 1), arg(in, 2), 1.0,
                                                           p, 1e-6, swap, reduction);
                          },
                          {at::randn({5, 4}), at::randn({5, 4}), at::randn({5, 4})});
      }
    }
  }
  // Unbatched, another margin and eps.
  expect_op_matches("aten::triplet_margin_loss",
                    [](const Inputs& in) {
                      return at::triplet_margin_loss(arg(in, 0), arg(in, 1), arg(in, 2), 0.3, 2.0,
                                                     0.1, false, 0);
                    },
                    {at::randn({6}), at::randn({6}), at::randn({6})});
}

TEST_F(Loss, MultiMarginLoss) {
  at::Tensor x = at::randn({6, 5});
  at::Tensor y = longs({0, 4, 2, 2, 1, 3});
  for (int64_t reduction : kReductions) {
    for (int64_t p : {1, 2}) {
      for (double margin : {1.0, 0.5}) {
        SCOPED_TRACE(::testing::Message()
                     << "reduction " << reduction << " p " << p << " margin " << margin);
        expect_op_matches("aten::multi_margin_loss",
                          [reduction, p, margin](const Inputs& in) {
                            return at::multi_margin_loss(arg(in, 0), arg(in, 1), p, margin, {},
                                                         reduction);
                          },
                          {x, y});
        expect_op_matches("aten::multi_margin_loss",
                          [reduction, p, margin](const Inputs& in) {
                            return at::multi_margin_loss(arg(in, 0), arg(in, 1), p, margin,
                                                         arg(in, 2), reduction);
                          },
                          {x, y, at::rand({5}) + 0.5});
      }
    }
    // Unbatched: [C] and a 0-d target.
    expect_op_matches("aten::multi_margin_loss",
                      [reduction](const Inputs& in) {
                        return at::multi_margin_loss(arg(in, 0), arg(in, 1), 1, 1.0, {}, reduction);
                      },
                      {at::randn({4}), at::scalar_tensor(2, at::kLong)});
    // A 0-d input: one class.
    expect_op_matches("aten::multi_margin_loss",
                      [reduction](const Inputs& in) {
                        return at::multi_margin_loss(arg(in, 0), arg(in, 1), 1, 1.0, {}, reduction);
                      },
                      {at::scalar_tensor(0.7), at::scalar_tensor(0, at::kLong)});
  }
}

TEST_F(Loss, MultilabelMarginLoss) {
  // Targets padded with -1 after their classes; one lists a class twice, one is all -1, one has
  // classes after its -1 (ignored).
  at::Tensor t =
      longs({3, 0, -1, 1, 2, 2, -1, 0, -1, -1, -1, -1, 1, 2, 3, 0, 0, -1, 1, 3}).reshape({5, 4});
  for (int64_t reduction : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    expect_op_matches(
        "aten::multilabel_margin_loss",
        [reduction](const Inputs& in) {
          return at::multilabel_margin_loss(arg(in, 0), arg(in, 1), reduction);
        },
        {at::randn({5, 4}), t}, 11);
    expect_op_matches(
        "aten::multilabel_margin_loss",
        [reduction](const Inputs& in) {
          return at::multilabel_margin_loss(arg(in, 0), arg(in, 1), reduction);
        },
        {at::randn({4}), longs({2, 1, -1, 0})}, 11);
    expect_op_matches(
        "aten::multilabel_margin_loss",
        [reduction](const Inputs& in) {
          return at::multilabel_margin_loss(arg(in, 0), arg(in, 1), reduction);
        },
        {at::scalar_tensor(0.7), at::scalar_tensor(0, at::kLong)}, 11);
  }
}

TEST_F(Loss, PoissonNllLoss) {
  for (int64_t reduction : kReductions) {
    for (bool log_input : {true, false}) {
      for (bool full : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "reduction " << reduction << " log_input " << log_input
                                          << " full " << full);
        at::Tensor x = log_input ? at::randn({4, 5}) : at::rand({4, 5}) + 0.1;
        x.view(-1)[0] = log_input ? 0.0 : 0.0;  // log(0 + eps)
        at::Tensor t = at::randint(0, 6, {4, 5}).to(at::kFloat);
        t.view(-1)[1] = 1.0;
        t.view(-1)[2] = 0.0;
        expect_op_matches("aten::poisson_nll_loss",
                          [reduction, log_input, full](const Inputs& in) {
                            return at::poisson_nll_loss(arg(in, 0), arg(in, 1), log_input, full,
                                                        1e-8, reduction);
                          },
                          {x, t});
      }
    }
  }
}

}  // namespace
}  // namespace torchonnx::testing
