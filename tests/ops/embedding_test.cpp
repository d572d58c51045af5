// Numeric tests of the embedding converters: embedding, embedding_renorm (max_norm),
// embedding_bag (sum/mean/max, offsets, per_sample_weights, include_last_offset, padding_idx).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/embedding.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Embedding : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Embedding, Gather) {
  at::Tensor w = at::randn({10, 4});
  for (at::Tensor idx :
       {longs({3, 0, 9, 3}), at::randint(0, 10, {2, 3}), at::scalar_tensor(7, at::kLong),
        at::randint(0, 10, {2, 0}), at::randint(0, 10, {3, 4}, at::kInt)}) {
    SCOPED_TRACE(::testing::Message() << "indices " << idx.sizes() << " " << idx.dtype());
    expect_op_matches("aten::embedding",
                      [](const Inputs& in) { return at::embedding(arg(in, 0), arg(in, 1)); },
                      {w, idx});
  }
}

TEST_F(Embedding, PaddingIdxDoesNotChangeTheForward) {
  at::Tensor w = at::randn({6, 3});
  expect_op_matches(
      "aten::embedding",
      [](const Inputs& in) { return at::embedding(arg(in, 1), arg(in, 0), 2, true, false); },
      {longs({2, 1, 2, 5}), w}, kMinOpset, highest_opset());
  expect_op_matches("aten::embedding",
                    [w](const Inputs& in) { return at::embedding(w, arg(in, 0), 0); },
                    {longs({0, 1, 0})}, kMinOpset, highest_opset(), {{"weight", w}});
}

TEST_F(Embedding, MaxNormRenormalizesReferencedRows) {
  namespace F = torch::nn::functional;
  at::Tensor w = at::randn({8, 5}) * 2;
  for (double norm_type : {2.0, 1.0, 3.0}) {
    SCOPED_TRACE(::testing::Message() << "norm_type " << norm_type);
    // Returns the looked-up rows and the renormalized weight (rows 1, 4, 6 are written in place,
    // with 4 referenced twice; the others keep their values).
    expect_op_matches(
        "aten::embedding_renorm",
        [norm_type](const Inputs& in) {
          at::Tensor weight = arg(in, 0).clone();
          at::Tensor y = F::embedding(arg(in, 1), weight,
                                      F::EmbeddingFuncOptions().max_norm(1.5).norm_type(norm_type));
          return c10::ivalue::Tuple::create({y, weight});
        },
        {w, longs({4, 1, 4, 6})}, 11, highest_opset());
  }
}

TEST_F(Embedding, MaxNormBeforeOpset11IsRefused) {
  namespace F = torch::nn::functional;
  expect_export_fails(
      [](const Inputs& in) {
        at::Tensor weight = arg(in, 0).clone();
        return F::embedding(arg(in, 1), weight, F::EmbeddingFuncOptions().max_norm(1.0));
      },
      {at::randn({5, 3}), longs({1, 2})}, 10, "embedding_renorm", ErrorCode::kUnsupportedOp);
}

struct BagCase {
  int64_t mode;
  bool include_last;
  bool per_sample_weights;
  std::optional<int64_t> padding_idx;
};

void expect_bag(const BagCase& c, const at::Tensor& indices, const at::Tensor& offsets,
                int first = kMinOpset, int last = highest_opset()) {
  SCOPED_TRACE(::testing::Message()
               << "mode " << c.mode << " include_last " << c.include_last << " psw "
               << c.per_sample_weights << " padding " << c.padding_idx.value_or(-1) << " indices "
               << indices << " offsets " << offsets);
  at::Tensor w = at::randn({10, 3});
  at::Tensor psw = at::rand({indices.size(0)}) + 0.5;
  // With include_last_offset, the offsets are a constant of the trace: type propagation runs
  // embedding_bag on zeros for graph inputs, and libtorch's CPU kernel corrupts the heap when the
  // last offset (0) is below the number of indices.
  Inputs inputs{indices};
  if (!c.include_last) inputs.emplace_back(offsets);
  if (c.per_sample_weights) inputs.emplace_back(psw);
  expect_op_matches("aten::embedding_bag",
                    [=](const Inputs& in) {
                      size_t k = 1;
                      at::Tensor offs = c.include_last ? offsets : arg(in, k++);
                      at::Tensor weights = c.per_sample_weights ? arg(in, k) : at::Tensor();
                      return std::get<0>(at::embedding_bag(
                          w, arg(in, 0), offs, false, c.mode, false, weights, c.include_last,
                          c.padding_idx ? c10::optional<int64_t>(*c.padding_idx) : c10::nullopt));
                    },
                    inputs, first, last, {{"weight", w}});
}

TEST_F(Embedding, BagModes) {
  // Bags [0, 3), [3, 3) (empty), [3, 7).
  at::Tensor idx = longs({1, 4, 4, 9, 0, 2, 1}), offsets = longs({0, 3, 3});
  for (int64_t mode : {0, 1, 2}) {
    expect_bag({mode, false, false, std::nullopt}, idx, offsets);
    expect_bag({mode, true, false, std::nullopt}, idx, longs({0, 3, 3, 7}));
    expect_bag({mode, false, false, 4}, idx, offsets);
  }
  expect_bag({0, false, true, std::nullopt}, idx, offsets);
  expect_bag({0, true, true, 1}, idx, longs({0, 2, 5, 7}));
  expect_bag({1, false, false, std::nullopt}, longs({3, 3, 8}), longs({0}));
}

TEST_F(Embedding, BagWithInt32IndicesAndEmptyLastBag) {
  expect_bag({0, false, false, std::nullopt}, at::tensor({2, 5, 7}, at::kInt),
             at::tensor({0, 1, 3}, at::kInt));
  expect_bag({2, false, false, std::nullopt}, longs({2, 5, 7}), longs({0, 1, 3}));
}

TEST_F(Embedding, PrivateEmbeddingBagOps) {
  at::Tensor w = at::randn({6, 4});
  for (int64_t mode : {0, 1, 2}) {
    SCOPED_TRACE(::testing::Message() << "mode " << mode);
    expect_op_matches("aten::_embedding_bag",
                      [=](const Inputs& in) {
                        return std::get<0>(at::_embedding_bag(w, arg(in, 0), arg(in, 1), false,
                                                              mode, false, {}, false, 3));
                      },
                      {longs({0, 3, 5, 3, 2}), longs({0, 2})}, kMinOpset, highest_opset(),
                      {{"weight", w}});
    expect_op_matches("aten::_embedding_bag_forward_only",
                      [=](const Inputs& in) {
                        return std::get<0>(at::_embedding_bag_forward_only(
                            w, arg(in, 0), arg(in, 1), false, mode, false, {}, false, -1));
                      },
                      {longs({0, 3, 5, 3, 2}), longs({0, 2})}, kMinOpset, highest_opset(),
                      {{"weight", w}});
  }
}

TEST_F(Embedding, BagSizeAndOffset2bagOutputs) {
  // The secondary outputs in max mode, where libtorch's CPU kernel fills them all.
  at::Tensor w = at::randn({10, 3});
  expect_op_matches("aten::embedding_bag",
                    [=](const Inputs& in) {
                      auto [out, offset2bag, bag_size, max_indices] =
                          at::embedding_bag(w, arg(in, 0), arg(in, 1), false, 2, false, {}, false);
                      return c10::ivalue::Tuple::create({out, offset2bag, bag_size, max_indices});
                    },
                    {longs({1, 4, 6, 9, 0, 2, 1}), longs({0, 3, 4})}, kMinOpset, highest_opset(),
                    {{"weight", w}});
}

}  // namespace
}  // namespace torchonnx::testing
