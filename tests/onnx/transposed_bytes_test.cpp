// for_each_transposed_block (src/onnx/transposed_bytes.h): the bytes of a transposed matrix, a
// block of rows at a time, are those of its contiguous copy, for every element size, for shapes
// that are and are not multiples of the 4x4 tiles, and for blocks of one row up to the whole
// matrix; only 2-D transposes of contiguous matrices take this path.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "onnx/transposed_bytes.h"

namespace torchonnx::testing {
namespace {

std::string bytes_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

std::string streamed(const at::Tensor& t, size_t block_bytes, size_t* blocks = nullptr) {
  std::string out;
  size_t count = 0;
  for_each_transposed_block(t, block_bytes, [&](const char* p, size_t n) {
    out.append(p, n);
    ++count;
  });
  if (blocks) *blocks = count;
  return out;
}

TEST(TransposedBytes, MatchTheContiguousCopy) {
  const std::vector<at::ScalarType> dtypes = {at::kFloat, at::kInt,  at::kHalf, at::kDouble,
                                              at::kLong,  at::kChar, at::kBool, at::kBFloat16};
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 4},  {8, 12},    {5, 7},     {3, 9},
                                                           {13, 2}, {64, 1000}, {1023, 17}, {2, 3}};
  for (const auto dtype : dtypes) {
    for (const auto& [rows, cols] : shapes) {
      // W is cols x rows and contiguous; T = W.t() is rows x cols with strides (1, rows).
      at::Tensor w = at::randn({cols, rows}).mul(100);
      w = dtype == at::kBool ? w.gt(0) : w.to(dtype);
      const at::Tensor t = w.t();
      ASSERT_TRUE(is_transposed_matrix(t)) << t.sizes() << " " << dtype;
      const std::string expected = bytes_of(t);
      for (size_t block : {size_t{1}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
        size_t blocks = 0;
        EXPECT_EQ(streamed(t, block, &blocks), expected)
            << dtype << " " << rows << "x" << cols << ", blocks of " << block << " bytes";
        EXPECT_GE(blocks, 1u);
      }
    }
  }
}

TEST(TransposedBytes, BlocksAreWholeRowsOfAboutTheAskedSize) {
  const at::Tensor t = at::randn({1000, 64}).t();  // 64 x 1000 float: rows of 4000 bytes
  std::vector<size_t> sizes;
  for_each_transposed_block(t, 16000, [&](const char*, size_t n) { sizes.push_back(n); });
  // 16000 bytes = 4 rows (a multiple of the 4-row tile): 16 blocks of 4 rows.
  ASSERT_EQ(sizes.size(), 16u);
  for (size_t n : sizes) EXPECT_EQ(n, 16000u);
}

// A failed write (the sink throws) stops the worker that transposes ahead: the exception comes
// out, nothing hangs, and the blocks before it were whole.
TEST(TransposedBytes, ASinkThatThrowsStopsTheWorker) {
  const at::Tensor t = at::randn({1000, 64}).t();
  size_t calls = 0;
  EXPECT_THROW(for_each_transposed_block(t, 16000,
                                         [&](const char*, size_t n) {
                                           EXPECT_EQ(n, 16000u);
                                           if (++calls == 2) throw std::runtime_error("disk full");
                                         }),
               std::runtime_error);
  EXPECT_EQ(calls, 2u);
}

TEST(TransposedBytes, OnlyTwoDimensionalTransposesOfContiguousMatrices) {
  EXPECT_FALSE(is_transposed_matrix(at::randn({4, 5})));                        // contiguous
  EXPECT_FALSE(is_transposed_matrix(at::randn({1, 5}).t()));                    // contiguous too
  EXPECT_FALSE(is_transposed_matrix(at::randn({2, 3, 4}).permute({2, 1, 0})));  // 3-D
  EXPECT_FALSE(is_transposed_matrix(at::randn({6, 5}).t().narrow(0, 1, 3)));    // a slice of one
  EXPECT_FALSE(is_transposed_matrix(at::Tensor()));
  EXPECT_TRUE(is_transposed_matrix(at::randn({6, 5}).t()));
  // A transpose of a row-slice of a matrix: strides (1, 5) with size(0) 5: still W.t() of the
  // contiguous rows 2..4.
  const at::Tensor rows = at::randn({6, 5}).narrow(0, 2, 3);
  ASSERT_TRUE(is_transposed_matrix(rows.t()));
  EXPECT_EQ(streamed(rows.t(), 64), bytes_of(rows.t()));
}

}  // namespace
}  // namespace torchonnx::testing
