// Numeric tests of the indexing converters (reads: select, slice, index, gather, take,
// masked_select, nonzero, where; writes: index_put, masked_fill/scatter, scatter*,
// index_copy/fill/add): export at every opset, run in ORT, compare with libtorch (values and
// dtypes). Includes every indexing pattern the torch.onnx docs list as unsupported (they work in
// torchonnx).
#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <gtest/gtest.h>

#include <fstream>

#include "onnx/model_proto.h"
#include "ops/op_test_util.h"
#include "symbolic/context.h"
#include "symbolic/convert.h"
#include "symbolic/registry.h"

namespace torchonnx::testing {
namespace {

using at::indexing::Slice;
using OptList = c10::List<c10::optional<at::Tensor>>;

class Index : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- select / slice ----------------------------------------------------------------------------

// aten::_unsafe_index.Tensor (PyTorch >= 2.1): the core ATen form of index in upsampling
// decompositions.
TEST_F(Index, UnsafeIndex) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::_unsafe_index");
  expect_script_matches("aten::_unsafe_index",
                        "def forward(self, x, i):\n"
                        "  return torch._unsafe_index(x, [None, i])\n",
                        {at::randn({3, 5}), at::tensor({4, 0, 2, 2})});
}

TEST_F(Index, SelectNegativeIndex) {
  auto fn = [](const Inputs& in) { return arg(in, 0).select(1, -1); };
  expect_op_matches("aten::select", fn, {at::randn({3, 4, 2})});
  expect_op_matches("aten::select", fn, {at::randint(-9, 9, {3, 4})});
  expect_op_matches("aten::select", fn, {at::randn({3, 4}) > 0});
}

TEST_F(Index, SelectNegativeDim) {
  expect_op_matches("aten::select", [](const Inputs& in) { return arg(in, 0).select(-2, 2); },
                    {at::randn({2, 3, 4})});
}

TEST_F(Index, SelectIndexComputedInGraph) {
  // The index is a value computed in the graph (negative here, so wrapped before opset 11). Sizes
  // stand in for data-dependent ints (int(t)), which type propagation cannot type yet.
  ScriptOptions unfolded;
  unfolded.fold = false;
  expect_script_matches("aten::select",
                        "def forward(self, x):\n  return x.select(0, x.size(1) - x.size(0))\n",
                        {at::randn({4, 3})}, unfolded);
  expect_script_matches("aten::select", "def forward(self, x):\n  return x[x.size(0) - 2]\n",
                        {at::randint(-9, 9, {4, 3})}, unfolded);
}

TEST_F(Index, SliceWithStep) {
  auto fn = [](const Inputs& in) { return arg(in, 0).slice(1, 0, 5, 2); };
  expect_op_matches("aten::slice", fn, {at::randn({2, 6})}, 10);
  expect_op_matches("aten::slice", fn, {at::randint(-9, 9, {2, 6})}, 10);
  expect_export_fails(fn, {at::randn({2, 6})}, 9, "slicing with a step needs opset 10");
}

TEST_F(Index, SliceNegativeStartEnd) {
  auto fn = [](const Inputs& in) { return arg(in, 0).slice(-1, -3, -1); };
  expect_op_matches("aten::slice", fn, {at::randn({2, 5})});
  expect_op_matches("aten::slice", fn, {at::randn({2, 5}) > 0});
}

TEST_F(Index, SliceEndBeyondSize) {
  expect_op_matches("aten::slice", [](const Inputs& in) { return arg(in, 0).slice(0, 1, 100); },
                    {at::randint(-9, 9, {4, 2})});
}

TEST_F(Index, SliceBoundsComputedInScript) {
  ScriptOptions unfolded{10, highest_opset(), /*fold=*/false};
  const std::string src = "def forward(self, x):\n  s = x.size(1) - 4\n  return x[s:s + 2]\n";
  Inputs in{at::randn({5, 3})};
  expect_script_matches("aten::slice", src, in, unfolded);
  expect_script_fails(src, in, 9, "needs opset 10", ErrorCode::kConversion, /*fold=*/false);
  expect_script_matches("aten::slice", "def forward(self, x):\n  return x[:, -x.size(0):]\n",
                        {at::randn({2, 5})}, unfolded);
}

// ----- index (reads) -----------------------------------------------------------------------------

TEST_F(Index, IndexOneTensor) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index({arg(in, 1)}); };
  expect_op_matches("aten::index", fn, {at::randn({4, 3}), longs({2, 0, 2})});
  expect_op_matches("aten::index", fn, {at::randint(-9, 9, {4, 3}), longs({3, 1})});
  expect_op_matches("aten::index", fn, {at::randn({4, 3}) > 0, longs({1})});
  // a 2-D index tensor
  expect_op_matches("aten::index", fn, {at::randn({4, 3}), longs({0, 1, 3, 2}).view({2, 2})});
}

TEST_F(Index, IndexNegativeTensorIndices) {
  // Unsupported by torch.onnx (spec: "Tensor indices that includes negative values").
  auto one = [](const Inputs& in) { return arg(in, 0).index({arg(in, 1)}); };
  expect_op_matches("aten::index", one, {at::randn({4, 3}), longs({-1, 0, -4})});
  auto two = [](const Inputs& in) { return arg(in, 0).index({arg(in, 1), arg(in, 2)}); };
  expect_op_matches("aten::index", two,
                    {at::randn({4, 5}), longs({1, 2, 2, -3}).view({2, 2}), longs({-2, 3})});
}

TEST_F(Index, IndexSecondDim) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index({Slice(), arg(in, 1)}); };
  expect_op_matches("aten::index", fn, {at::randn({3, 4, 2}), longs({3, 0, -1})});
  expect_op_matches("aten::index", fn, {at::randint(-9, 9, {3, 4}), longs({1, 1})});
}

TEST_F(Index, IndexSeveralConsecutiveAtFront) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index({arg(in, 1), arg(in, 2)}); };
  expect_op_matches("aten::index", fn, {at::randn({3, 4, 5}), longs({0, 2, 1}), longs({3, 3, 0})});
  expect_op_matches("aten::index", fn, {at::randn({3, 4}) > 0, longs({0, 2}), longs({3, 1})});
}

TEST_F(Index, IndexSeveralConsecutiveInMiddle) {
  // Result dims stay at the position of the first index (PyTorch/NumPy rule).
  auto fn = [](const Inputs& in) { return arg(in, 0).index({Slice(), arg(in, 1), arg(in, 2)}); };
  expect_op_matches("aten::index", fn,
                    {at::randn({2, 3, 4, 5}), longs({0, 2, 1}).view({3, 1}), longs({3, 0})});
}

TEST_F(Index, IndexNonConsecutiveMovesToFront) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index({arg(in, 1), Slice(), arg(in, 2)}); };
  expect_op_matches("aten::index", fn, {at::randn({3, 4, 5, 2}), longs({0, 2}), longs({4, -1})});
  expect_op_matches("aten::index", fn,
                    {at::randint(-9, 9, {3, 4, 5}), longs({2}), longs({1, 0, 4})});
}

TEST_F(Index, IndexBoolMask) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index({arg(in, 1)}); };
  expect_op_matches("aten::index", fn, {at::randn({5, 3}), at::randn({5}) > 0});
  // a 2-D mask covers two dims
  expect_op_matches("aten::index", fn, {at::randn({3, 4, 2}), at::randn({3, 4}) > 0});
  expect_op_matches("aten::index", fn, {at::randint(-9, 9, {3, 4}), at::randn({3, 4}) > 0});
}

TEST_F(Index, IndexBoolMaskAfterSlice) {
  auto mid = [](const Inputs& in) { return arg(in, 0).index({Slice(), arg(in, 1)}); };
  Inputs in{at::randn({2, 5, 3}), at::randn({5}) > 0};
  expect_op_matches("aten::index", mid, in);
}

TEST_F(Index, IndexScriptedGetItem) {
  expect_script_matches("aten::index", "def forward(self, x, i):\n  return x[i]\n",
                        {at::randn({4, 3}), longs({-1, 2})});
  expect_script_matches("aten::index", "def forward(self, x):\n  return x[x > 0]\n",
                        {at::randn({4, 3})});
}

TEST_F(Index, IndexScriptedGetItemWithSlices) {
  const std::string second = "def forward(self, x, i):\n  return x[:, i]\n";
  Inputs in{at::randn({4, 3}), longs({-1, 2})};
  expect_script_matches("aten::index", second, in);
  expect_script_matches("aten::index", "def forward(self, x, i, j):\n  return x[i, :, j]\n",
                        {at::randn({4, 3, 5}), longs({0, 3}), longs({4, -5})});
}

TEST_F(Index, IndexSelect) {
  auto fn = [](const Inputs& in) { return at::index_select(arg(in, 0), -1, arg(in, 1)); };
  expect_op_matches("aten::index_select", fn, {at::randn({3, 4}), longs({3, 0, 3})});
  expect_op_matches("aten::index_select", fn, {at::randint(-9, 9, {2, 4}), longs({1})});
  expect_op_matches("aten::index_select", fn, {at::randn({2, 4}) > 0, longs({2, 1})});
  expect_op_matches("aten::index_select", fn, {at::randn({3, 4}), at::tensor({2, 0}, at::kInt)});
  // a 0-d index keeps the dim (size 1)
  expect_op_matches("aten::index_select", fn, {at::randn({3, 4}), at::scalar_tensor(2, at::kLong)});
  // a 0-d self is itself (its index must be 0)
  expect_op_matches("aten::index_select", fn, {at::scalar_tensor(2.5), longs({0})});
  expect_op_matches("aten::index_select", fn, {at::scalar_tensor(7, at::kLong), longs({0})});
}

// ----- gather / take / take_along_dim -----------------------------------------------------------

TEST_F(Index, Gather) {
  auto fn = [](const Inputs& in) { return at::gather(arg(in, 0), 1, arg(in, 1)); };
  at::Tensor idx = at::randint(0, 4, {3, 6});
  expect_op_matches("aten::gather", fn, {at::randn({3, 4}), idx});
  expect_op_matches("aten::gather", fn, {at::randint(-9, 9, {3, 4}), idx});
  expect_op_matches("aten::gather", fn, {at::randn({3, 4}) > 0, idx});
  auto neg = [](const Inputs& in) { return at::gather(arg(in, 0), -3, arg(in, 1)); };
  expect_op_matches("aten::gather", neg, {at::randn({3, 4, 2}), at::randint(0, 3, {2, 4, 2})});
}

TEST_F(Index, GatherInfinityStaysExactBelowOpset11) {
  auto fn = [](const Inputs& in) { return at::gather(arg(in, 0), 0, arg(in, 1)); };
  at::Tensor x = at::randn({3, 2});
  x[1][0] = INFINITY;
  expect_op_matches("aten::gather", fn, {x, longs({1, 0, 2, 2}).view({2, 2})});
}

TEST_F(Index, GatherSmallerIndex) {
  auto fn = [](const Inputs& in) { return at::gather(arg(in, 0), 1, arg(in, 1)); };
  Inputs in{at::randn({4, 5}), at::randint(0, 5, {2, 3})};
  expect_op_matches("aten::gather", fn, in, 11);
  expect_export_fails(fn, in, 10, "export with opset >= 11");
}

TEST_F(Index, Take) {
  auto fn = [](const Inputs& in) { return at::take(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::take", fn, {at::randn({3, 4}), longs({0, -1, 5, -12}).view({2, 2})});
  expect_op_matches("aten::take", fn, {at::randint(-9, 9, {3, 4}), longs({11})});
  expect_op_matches("aten::take", fn, {at::randn({3, 4}) > 0, longs({3, 3})});
}

TEST_F(Index, TakeAlongDim) {
  auto fn = [](const Inputs& in) { return at::take_along_dim(arg(in, 0), arg(in, 1), 1); };
  expect_op_matches("aten::take_along_dim", fn, {at::randn({3, 4}), at::randint(0, 4, {3, 2})});
  expect_op_matches("aten::take_along_dim", fn,
                    {at::randint(-9, 9, {3, 4}), at::randint(0, 4, {3, 5})});
  auto flat = [](const Inputs& in) { return at::take_along_dim(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::take_along_dim", flat, {at::randn({3, 4}), longs({11, 0, 5})});
  // indices broadcast against self outside dim
  Inputs bc{at::randn({3, 4}), at::randint(0, 4, {1, 2})};
  expect_op_matches("aten::take_along_dim", fn, bc, 11);
  expect_export_fails(fn, bc, 10, "needs opset 11");
}

// ----- masked_select / nonzero / where
// ------------------------------------------------------------

TEST_F(Index, MaskedSelect) {
  auto fn = [](const Inputs& in) { return at::masked_select(arg(in, 0), arg(in, 1)); };
  expect_op_matches("aten::masked_select", fn, {at::randn({3, 4}), at::randn({3, 4}) > 0});
  expect_op_matches("aten::masked_select", fn, {at::randint(-9, 9, {3, 4}), at::randn({4}) > 0});
  expect_op_matches("aten::masked_select", fn, {at::randn({4}) > 0, at::randn({3, 1}) > 0});
  // Below opset 9, NonZero at a static shape takes its form in opset 7's ops (Note [Opset 9 ops
  // below opset 9]); an all-false mask selects nothing.
  expect_op_matches("aten::masked_select", fn, {at::randn({3, 4}), at::randn({3, 4}) > 0}, 7, 8);
  expect_op_matches("aten::masked_select", fn, {at::randn({2, 3}), at::zeros({2, 3}) > 0}, 7, 8);
}

TEST_F(Index, Nonzero) {
  auto fn = [](const Inputs& in) { return at::nonzero(arg(in, 0)); };
  expect_op_matches("aten::nonzero", fn, {at::randint(-1, 2, {3, 4}).to(at::kFloat)});
  expect_op_matches("aten::nonzero", fn, {at::randint(-1, 2, {5})});
  expect_op_matches("aten::nonzero", fn, {at::randn({2, 3, 2}) > 0});
  // 0-d: [1, 0] when it is not zero, [0, 0] when it is
  expect_op_matches("aten::nonzero", fn, {at::scalar_tensor(3.0)});
  expect_op_matches("aten::nonzero", fn, {at::scalar_tensor(0, at::kLong)});
  // Below opset 9 (Note [Opset 9 ops below opset 9]): NaN is non-zero, -0 is zero, in row-major
  // order at every rank.
  at::Tensor f = at::randint(-1, 2, {3, 4}).to(at::kFloat);
  f.index_put_({0, 1}, std::numeric_limits<float>::quiet_NaN());
  f.index_put_({2, 2}, -0.0);
  expect_op_matches("aten::nonzero", fn, {f}, 7, 8);
  expect_op_matches("aten::nonzero", fn, {at::randint(-1, 2, {5})}, 7, 8);
  expect_op_matches("aten::nonzero", fn, {at::randn({2, 3, 2}) > 0}, 7, 8);
}

TEST_F(Index, Argwhere) {
  auto fn = [](const Inputs& in) { return at::argwhere(arg(in, 0)); };
  expect_op_matches("aten::argwhere", fn, {at::randint(-1, 2, {3, 4}).to(at::kFloat)});
  expect_op_matches("aten::argwhere", fn, {at::randn({2, 3, 2}) > 0});
  expect_op_matches("aten::argwhere", fn, {at::scalar_tensor(0.5)});
}

TEST_F(Index, NonzeroNumpy) {
  auto fn = [](const Inputs& in) {
    auto rows = at::nonzero_numpy(arg(in, 0));
    return c10::ivalue::Tuple::create(rows[0], rows[1]);
  };
  expect_op_matches("aten::nonzero_numpy", fn, {at::randint(-1, 2, {3, 4}).to(at::kFloat)});
  expect_op_matches("aten::nonzero_numpy", fn, {at::randn({3, 4}) > 0});
  // 0-d: one row, [0] or empty
  auto one = [](const Inputs& in) { return at::nonzero_numpy(arg(in, 0))[0]; };
  expect_op_matches("aten::nonzero_numpy", one, {at::scalar_tensor(2.0)});
  expect_op_matches("aten::nonzero_numpy", one, {at::scalar_tensor(false)});
}

TEST_F(Index, WhereTensors) {
  auto fn = [](const Inputs& in) { return at::where(arg(in, 0), arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::where", fn, {at::randn({3, 4}) > 0, at::randn({3, 4}), at::randn({4})});
  // type promotion: int64 with float is float
  expect_op_matches("aten::where", fn,
                    {at::randn({3, 1}) > 0, at::randint(-9, 9, {3, 4}), at::randn({3, 4})});
  expect_op_matches("aten::where", fn,
                    {at::randn({4}) > 0, at::randn({4}) > 0, at::randn({3, 4}) > 0});
}

TEST_F(Index, WhereScalarOperands) {
  expect_op_matches("aten::where",
                    [](const Inputs& in) { return at::where(arg(in, 0), arg(in, 1), 2.5); },
                    {at::randn({3, 4}) > 0, at::randint(-9, 9, {3, 4})});
  expect_op_matches("aten::where",
                    [](const Inputs& in) { return at::where(arg(in, 0), 3, arg(in, 1)); },
                    {at::randn({3, 4}) > 0, at::randn({3, 4})});
  expect_script_matches("aten::where", "def forward(self, c):\n  return torch.where(c, 1.0, 0.0)\n",
                        {at::randn({3, 4}) > 0});
  expect_script_matches("aten::where", "def forward(self, c):\n  return torch.where(c, 1, 0)\n",
                        {at::randn({3, 4}) > 0});
}

TEST_F(Index, WhereConditionOnly) {
  auto fn = [](const Inputs& in) {
    auto rows = at::where(arg(in, 0));
    return c10::ivalue::Tuple::create(rows[0], rows[1]);
  };
  expect_op_matches("aten::where", fn, {at::randn({3, 4}) > 0});
}

// ----- index_put
// ----------------------------------------------------------------------------------

at::Tensor put_at(const at::Tensor& x, OptList idx, const at::Tensor& v, bool acc = false) {
  return at::index_put(x, idx, v, acc);
}

TEST_F(Index, IndexPutInPlaceOnClone) {
  auto fn = [](const Inputs& in) {
    at::Tensor y = arg(in, 0).clone();
    y.index_put_({arg(in, 1)}, arg(in, 2));
    return y;
  };
  expect_op_matches("aten::index_put", fn, {at::randn({4, 3}), longs({2, 0}), at::randn({2, 3})});
  expect_op_matches("aten::index_put", fn,
                    {at::randint(-9, 9, {4, 3}), longs({-1}), at::randint(-9, 9, {3})});
  expect_op_matches("aten::index_put", fn,
                    {at::randn({4, 3}) > 0, longs({1, 3}), at::randn({2, 3}) > 0});
}

TEST_F(Index, IndexPutMask) {
  auto scalar = [](const Inputs& in) {
    return put_at(arg(in, 0), {arg(in, 1)}, at::scalar_tensor(-7.0));
  };
  expect_op_matches("aten::index_put", scalar, {at::randn({3, 4}), at::randn({3, 4}) > 0});
  expect_op_matches("aten::index_put", scalar, {at::randint(-9, 9, {3, 4}), at::randn({3}) > 0});
  auto values = [](const Inputs& in) { return put_at(arg(in, 0), {arg(in, 1)}, arg(in, 2)); };
  at::Tensor mask = longs({1, 0, 1, 1}).to(at::kBool);
  expect_op_matches("aten::index_put", values, {at::randn({4, 2}), mask, at::randn({3, 2})});
}

TEST_F(Index, IndexPutAccumulateDuplicates) {
  auto fn = [](const Inputs& in) { return put_at(arg(in, 0), {arg(in, 1)}, arg(in, 2), true); };
  expect_op_matches("aten::index_put", fn,
                    {at::randn({4, 3}), longs({2, 0, 2, -2}), at::randn({4, 3})});
  expect_op_matches("aten::index_put", fn,
                    {at::randint(-9, 9, {4}), longs({1, 1, 1}), at::randint(-9, 9, {3})});
}

TEST_F(Index, IndexPutSeveralIndicesWithRank2) {
  // Unsupported by torch.onnx: "Multiple tensor indices if any has rank >= 2".
  auto fn = [](const Inputs& in) {
    return put_at(arg(in, 0), {arg(in, 1), arg(in, 2)}, arg(in, 3));
  };
  expect_op_matches("aten::index_put", fn,
                    {at::randn({3, 4, 2}), longs({1, 2, 2, 0}).view({2, 2}), longs({2, 3}),
                     at::randn({2, 2, 2})});
}

TEST_F(Index, IndexPutNonConsecutive) {
  // Unsupported by torch.onnx: "Multiple tensor indices that are not consecutive".
  auto fn = [](const Inputs& in) {
    return put_at(arg(in, 0), OptList{arg(in, 1), c10::nullopt, arg(in, 2)}, arg(in, 3));
  };
  expect_op_matches("aten::index_put", fn,
                    {at::randn({4, 3, 5}), longs({2, 3}), longs({1, 2}), at::randn({2, 3})});
}

TEST_F(Index, IndexPutNegativeIndices) {
  // Unsupported by torch.onnx: "Tensor indices that includes negative values".
  auto fn = [](const Inputs& in) {
    return put_at(arg(in, 0), {arg(in, 1), arg(in, 2)}, arg(in, 3));
  };
  expect_op_matches("aten::index_put", fn,
                    {at::randn({4, 5}), longs({1, -2}), longs({-2, 3}), at::randn({2})});
}

TEST_F(Index, IndexPutImplicitBroadcast) {
  // Unsupported by torch.onnx: "Implicit broadcasting required for new_data" (data [3, 4, 5],
  // new_data [5] broadcast over the indexed [2, 2, 4, 5]).
  auto fn = [](const Inputs& in) { return put_at(arg(in, 0), {arg(in, 1)}, arg(in, 2)); };
  expect_op_matches("aten::index_put", fn,
                    {at::randn({3, 4, 5}), longs({0, 2, 1, 1}).view({2, 2}), at::randn({5})});
}

TEST_F(Index, IndexPutImplicitBroadcastAfterSlice) {
  // consecutive indices in the middle: values are laid out as PyTorch's result [2, 2, 5]
  auto mid = [](const Inputs& in) {
    return put_at(arg(in, 0), OptList{c10::nullopt, arg(in, 1), arg(in, 2)}, arg(in, 3));
  };
  Inputs in{at::randn({2, 3, 4, 5}), longs({0, 2}), longs({3, 1}), at::randn({2, 1, 5})};
  expect_op_matches("aten::index_put", mid, in);
}

TEST_F(Index, NoneEntriesInIndexLists) {
  expect_op_matches("aten::index",
                    [](const Inputs& in) {
                      return arg(in, 0).index({Slice(), arg(in, 1)});
                    },
                    {at::randn({3, 4, 2}), longs({3, 0, -1})});
  expect_op_matches("aten::index",
                    [](const Inputs& in) {
                      return arg(in, 0).index({Slice(), arg(in, 1), arg(in, 2)});
                    },
                    {at::randn({2, 3, 4, 5}), longs({0, 2, 1}).view({3, 1}), longs({3, 0})});
  expect_op_matches("aten::index",
                    [](const Inputs& in) {
                      return arg(in, 0).index({arg(in, 1), Slice(), arg(in, 2)});
                    },
                    {at::randn({3, 4, 5, 2}), longs({0, 2}), longs({4, -1})});
  expect_op_matches("aten::index",
                    [](const Inputs& in) {
                      return arg(in, 0).index({Slice(), arg(in, 1)});
                    },
                    {at::randint(-9, 9, {2, 5, 3}), at::randn({5}) > 0});
  expect_op_matches(
      "aten::index_put",
      [](const Inputs& in) {
        return put_at(arg(in, 0), OptList{arg(in, 1), c10::nullopt, arg(in, 2)}, arg(in, 3));
      },
      {at::randn({4, 3, 5}), longs({2, 3}), longs({1, -2}), at::randn({2, 3})});
  expect_op_matches(
      "aten::index_put",
      [](const Inputs& in) {
        return put_at(arg(in, 0), OptList{c10::nullopt, arg(in, 1), arg(in, 2)}, arg(in, 3));
      },
      {at::randn({2, 3, 4, 5}), longs({0, 2}), longs({3, 1}), at::randn({2, 1, 5})});
  expect_op_matches(
      "aten::index_put",
      [](const Inputs& in) {
        return put_at(arg(in, 0), OptList{c10::nullopt, arg(in, 1)}, arg(in, 2), true);
      },
      {at::randint(-9, 9, {2, 4}), longs({3, 3, 0}), at::randint(-9, 9, {3})});
}

// ----- masked_fill / masked_scatter
// ------------------------------------------------------------------

TEST_F(Index, MaskedFill) {
  auto fn = [](const Inputs& in) { return arg(in, 0).masked_fill(arg(in, 1), -1.5); };
  expect_op_matches("aten::masked_fill", fn, {at::randn({3, 4}), at::randn({3, 4}) > 0});
  expect_op_matches("aten::masked_fill", fn, {at::randn({3, 4}), at::randn({4}) > 0});
  auto i = [](const Inputs& in) { return arg(in, 0).masked_fill(arg(in, 1), 7); };
  expect_op_matches("aten::masked_fill", i, {at::randint(-9, 9, {3, 4}), at::randn({3, 1}) > 0});
  // bool data filled with an int Scalar stays bool
  expect_script_matches("aten::masked_fill",
                        "def forward(self, x, m):\n  return x.masked_fill(m, 1)\n",
                        {at::randn({3, 4}) > 0, at::randn({3, 4}) > 0});
  auto t = [](const Inputs& in) { return arg(in, 0).masked_fill(arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::masked_fill", t,
                    {at::randn({3, 4}), at::randn({3, 4}) > 0, at::scalar_tensor(2.0)});
}

TEST_F(Index, MaskedScatter) {
  auto fn = [](const Inputs& in) { return arg(in, 0).masked_scatter(arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::masked_scatter", fn,
                    {at::randn({3, 4}), at::randn({3, 4}) > 0, at::randn({3, 4})});
  expect_op_matches("aten::masked_scatter", fn,
                    {at::randint(-9, 9, {3, 4}), at::randn({4}) > 0, at::randint(-9, 9, {20})});
  expect_op_matches("aten::masked_scatter", fn,
                    {at::randn({3, 4}) > 0, at::randn({3, 4}) > 0, at::randn({3, 4}) > 0});
}

// ----- scatter family
// -----------------------------------------------------------------------------

TEST_F(Index, ScatterSrc) {
  auto fn = [](const Inputs& in) { return arg(in, 0).scatter(1, arg(in, 1), arg(in, 2)); };
  at::Tensor idx = longs({0, 3, 1, 2, 2, 0}).view({3, 2});
  expect_op_matches("aten::scatter", fn, {at::randn({3, 4}), idx, at::randn({3, 2})});
  expect_op_matches("aten::scatter", fn,
                    {at::randint(-9, 9, {3, 4}), idx, at::randint(-9, 9, {3, 5})});
  expect_op_matches("aten::scatter", fn, {at::randn({3, 4}) > 0, idx, at::randn({3, 2}) > 0});
}

TEST_F(Index, ScatterValue) {
  auto fn = [](const Inputs& in) { return arg(in, 0).scatter(-2, arg(in, 1), 4.5); };
  expect_op_matches("aten::scatter", fn, {at::randn({3, 4}), longs({2, 0, 1, 1}).view({1, 4})});
  auto zero_d = [](const Inputs& in) { return arg(in, 0).scatter(0, arg(in, 1), 3); };
  expect_op_matches("aten::scatter", zero_d,
                    {at::randint(-9, 9, {3, 4}), longs({2, 0}).view({1, 2})});
}

TEST_F(Index, ScatterReduce) {
  at::Tensor idx = longs({0, 0, 1, 0, 0, 1}).view({3, 2});
  auto add = [](const Inputs& in) { return arg(in, 0).scatter(1, arg(in, 1), arg(in, 2), "add"); };
  expect_op_matches("aten::scatter", add, {at::randn({3, 4}), idx, at::randn({3, 2})});
  auto mul = [](const Inputs& in) {
    return arg(in, 0).scatter(1, arg(in, 1), arg(in, 2), "multiply");
  };
  Inputs m{at::randn({3, 4}), idx, at::randn({3, 2})};
  expect_op_matches("aten::scatter", mul, m, 16);
  expect_export_fails(mul, m, 15, "needs opset 16");
  auto value_add = [](const Inputs& in) { return arg(in, 0).scatter(1, arg(in, 1), 2.0, "add"); };
  expect_op_matches("aten::scatter", value_add, {at::randn({3, 4}), idx});
}

TEST_F(Index, ScatterAddDuplicates) {
  auto fn = [](const Inputs& in) { return arg(in, 0).scatter_add(0, arg(in, 1), arg(in, 2)); };
  at::Tensor idx = longs({1, 1, 2, 1, 1, 0}).view({2, 3});
  expect_op_matches("aten::scatter_add", fn, {at::randn({3, 3}), idx, at::randn({2, 3})});
  expect_op_matches("aten::scatter_add", fn,
                    {at::randint(-9, 9, {3, 3}), idx, at::randint(-9, 9, {2, 4})});
}

TEST_F(Index, ScatterAddIndexSmallerThanSelf) {
  auto fn = [](const Inputs& in) { return arg(in, 0).scatter_add(1, arg(in, 1), arg(in, 2)); };
  Inputs in{at::randn({3, 5}), longs({4, 4, 0, 1}).view({2, 2}), at::randn({3, 3})};
  expect_op_matches("aten::scatter_add", fn, in, 11);
  expect_export_fails(fn, in, 10, "needs opset 11");
}

TEST_F(Index, ScatterReduceTwo) {
  at::Tensor idx = longs({0, 2, 0, 1, 1, 1}).view({2, 3});
  for (bool include_self : {true, false}) {
    auto sum = [include_self](const Inputs& in) {
      return arg(in, 0).scatter_reduce(1, arg(in, 1), arg(in, 2), "sum", include_self);
    };
    expect_op_matches("aten::scatter_reduce", sum, {at::randn({2, 3}), idx, at::randn({2, 3})});
    expect_op_matches("aten::scatter_reduce", sum,
                      {at::randint(-9, 9, {2, 3}), idx, at::randint(-9, 9, {2, 3})});
    auto prod = [include_self](const Inputs& in) {
      return arg(in, 0).scatter_reduce(1, arg(in, 1), arg(in, 2), "prod", include_self);
    };
    Inputs p{at::randn({2, 3}), idx, at::randn({2, 3})};
    expect_op_matches("aten::scatter_reduce", prod, p, 16);
    expect_export_fails(prod, p, 15, "needs opset 16");
  }
}

// amax/amin below opset 18: the one-hot ReduceMax/Min (Note [Scatter max/min before opset 18]),
// exact for every dtype; positions no index hits keep self. Bools reduce as integers.
TEST_F(Index, ScatterReduceMaxMinBeforeOpset18) {
  at::Tensor idx = longs({0, 2, 0, 1, 1, 1, 3, 3}).view({2, 4});
  for (const char* mode : {"amax", "amin"}) {
    for (bool include_self : {true, false}) {
      SCOPED_TRACE(std::string(mode) + (include_self ? " with self" : " without self"));
      auto fn = [mode, include_self](const Inputs& in) {
        return arg(in, 0).scatter_reduce(1, arg(in, 1), arg(in, 2), mode, include_self);
      };
      expect_op_matches("aten::scatter_reduce", fn, {at::randn({2, 5}), idx, at::randn({2, 4})},
                        kMinOpset, 17);
      expect_op_matches("aten::scatter_reduce", fn,
                        {at::randint(-9, 9, {2, 5}), idx, at::randint(-9, 9, {2, 4})}, kMinOpset,
                        17);
      expect_op_matches(
          "aten::scatter_reduce", fn,
          {at::randint(-9, 9, {2, 5}).to(at::kInt), idx, at::randint(-9, 9, {2, 4}).to(at::kInt)},
          kMinOpset, 17);
      expect_op_matches("aten::scatter_reduce", fn,
                        {at::randint(0, 200, {2, 5}).to(at::kByte), idx,
                         at::randint(0, 200, {2, 4}).to(at::kByte)},
                        kMinOpset, 17);
      expect_op_matches("aten::scatter_reduce", fn,
                        {at::randn({2, 5}) > 0, idx, at::randn({2, 4}) > 0}, kMinOpset, 17);
    }
  }
  // An index smaller than self outside dim (the extrema are padded: opset 11), along dim 0.
  auto dim0 = [](const Inputs& in) {
    return arg(in, 0).scatter_reduce(0, arg(in, 1), arg(in, 2), "amax");
  };
  Inputs small{at::randn({4, 5}), longs({3, 0, 3, 1, 0, 0}).view({2, 3}), at::randn({2, 3})};
  expect_op_matches("aten::scatter_reduce", dim0, small, 11, 17);
  // Empty 1-D tensors (PyTorch's test_scatter_reduce_self_rank_zero).
  auto amin = [](const Inputs& in) {
    return arg(in, 0).scatter_reduce(0, arg(in, 1), arg(in, 2), "amin");
  };
  expect_op_matches("aten::scatter_reduce", amin,
                    {at::empty({0}), at::empty({0}, at::kLong), at::empty({0})}, 16);
}

// amax/amin: ScatterElements reduction max/min (opset 18). Without self, positions no index hits
// keep self and hit ones reduce only src (the identity -inf/+inf, or the dtype's extremes, first).
TEST_F(Index, ScatterReduceMaxMinFromOpset18) {
  TORCHONNX_SKIP_BELOW_OPSET(18);
  at::Tensor idx = longs({0, 2, 0, 1, 1, 1, 3, 3}).view({2, 4});
  for (const char* mode : {"amax", "amin"}) {
    for (bool include_self : {true, false}) {
      auto fn = [mode, include_self](const Inputs& in) {
        return arg(in, 0).scatter_reduce(1, arg(in, 1), arg(in, 2), mode, include_self);
      };
      expect_op_matches("aten::scatter_reduce", fn, {at::randn({2, 5}), idx, at::randn({2, 4})},
                        18);
      expect_op_matches("aten::scatter_reduce", fn,
                        {at::randint(-9, 9, {2, 5}), idx, at::randint(-9, 9, {2, 4})}, 18);
      expect_op_matches(
          "aten::scatter_reduce", fn,
          {at::randint(-9, 9, {2, 5}).to(at::kInt), idx, at::randint(-9, 9, {2, 4}).to(at::kInt)},
          18);
      // Bools: max is Or, min is And.
      expect_op_matches("aten::scatter_reduce", fn,
                        {at::randn({2, 5}) > 0, idx, at::randn({2, 4}) > 0}, 18);
    }
  }
}

// mean: the sum over the number of values reduced into each position (floored for integers);
// positions no index hits keep self. Exact at every opset scatter_add serves.
TEST_F(Index, ScatterReduceMean) {
  at::Tensor idx = longs({0, 2, 0, 1, 1, 1, 3, 3}).view({2, 4});
  for (bool include_self : {true, false}) {
    SCOPED_TRACE(include_self ? "with self" : "without self");
    auto mean = [include_self](const Inputs& in) {
      return arg(in, 0).scatter_reduce(1, arg(in, 1), arg(in, 2), "mean", include_self);
    };
    expect_op_matches("aten::scatter_reduce", mean, {at::randn({2, 5}), idx, at::randn({2, 4})});
    expect_op_matches("aten::scatter_reduce", mean,
                      {at::randint(-9, 9, {2, 5}), idx, at::randint(-9, 9, {2, 4})});
    auto dim0 = [include_self](const Inputs& in) {
      return arg(in, 0).scatter_reduce(0, arg(in, 1), arg(in, 2), "mean", include_self);
    };
    expect_op_matches("aten::scatter_reduce", dim0,
                      {at::randn({3, 2}), longs({2, 0, 2, 2}).view({2, 2}), at::randn({2, 2})});
  }
}

// ----- index_copy / index_fill / index_add ------------------------------------------------------

TEST_F(Index, IndexCopy) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index_copy(1, arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::index_copy", fn, {at::randn({2, 4}), longs({3, 0}), at::randn({2, 2})});
  expect_op_matches("aten::index_copy", fn,
                    {at::randint(-9, 9, {2, 4, 2}), longs({1}), at::randint(-9, 9, {2, 1, 2})});
  expect_op_matches("aten::index_copy", fn,
                    {at::randn({2, 4}) > 0, longs({2, 1}), at::randn({2, 2}) > 0});
}

TEST_F(Index, IndexFill) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index_fill(-1, arg(in, 1), 2.5); };
  expect_op_matches("aten::index_fill", fn, {at::randn({3, 4}), longs({3, -4})});
  auto i = [](const Inputs& in) { return arg(in, 0).index_fill(0, arg(in, 1), -3); };
  expect_op_matches("aten::index_fill", i, {at::randint(-9, 9, {3, 4}), longs({1})});
  expect_script_matches("aten::index_fill",
                        "def forward(self, x, i):\n  return x.index_fill(1, i, 0)\n",
                        {at::randn({3, 4}) > 0, longs({0, 2})});
  auto t = [](const Inputs& in) { return arg(in, 0).index_fill(1, arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::index_fill", t,
                    {at::randn({3, 4}), longs({2}), at::scalar_tensor(-1.0)});
  expect_op_matches("aten::index_fill", t,
                    {at::randn({3, 4}) > 0, longs({1}), at::scalar_tensor(true)});
  // a 0-d self: filled when the index selects its element, kept for an empty index
  expect_op_matches("aten::index_fill", fn, {at::scalar_tensor(1.5), longs({0})});
  expect_op_matches("aten::index_fill", fn, {at::scalar_tensor(1.5), longs({-1, 0})});
  expect_op_matches("aten::index_fill", fn, {at::scalar_tensor(1.5), at::zeros({0}, at::kLong)});
  auto t0 = [](const Inputs& in) { return arg(in, 0).index_fill(0, arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::index_fill", t0,
                    {at::scalar_tensor(false), longs({0}), at::scalar_tensor(true)});
}

TEST_F(Index, IndexAdd) {
  auto fn = [](const Inputs& in) { return arg(in, 0).index_add(0, arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::index_add", fn,
                    {at::randn({3, 2}), longs({2, 0, 2}), at::randn({3, 2})});
  expect_op_matches(
      "aten::index_add", fn,
      {at::randint(-9, 9, {3, 2}), at::tensor({1, 1}, at::kInt), at::randint(-9, 9, {2, 2})});
  auto alpha = [](const Inputs& in) {
    return arg(in, 0).index_add(-1, arg(in, 1), arg(in, 2), 0.5);
  };
  expect_op_matches("aten::index_add", alpha,
                    {at::randn({2, 4}), longs({3, 3, 0}), at::randn({2, 3})});
}

// PyTorch adds each source slice to its self slice with broadcasting: a source of size 1 (or
// missing, trailing) in the other dims adds to the whole slice. Repeated indices add up.
// libtorch 1.13 adds each source slice to its self slice with broadcasting (torch.onnx's test of
// a [n, 1, 1] source); libtorch 2.x requires the source's shape to match: the cases this libtorch
// rejects are skipped.
TEST_F(Index, IndexAddBroadcastsSourceSlices) {
  auto along = [](int64_t dim) {
    return [dim](const Inputs& in) { return arg(in, 0).index_add(dim, arg(in, 1), arg(in, 2)); };
  };
  auto accepted = [](const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const at::Tensor& source) {
    try {
      self.index_add(dim, index, source);
      return true;
    } catch (const c10::Error&) {
      return false;
    }
  };
  at::Tensor self = at::randn({5, 4, 3});
  at::Tensor rows = longs({0, 2, 3, 2, 4}), cols = longs({1, 1, 3});
  int tested = 0;
  // Size-1 dims of the source's slices broadcast; so do missing leading dims of its slices.
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{5, 1, 1}, {5, 1, 3}, {5}, {5, 1}, {5, 3}, {5, 4, 3}}) {
    SCOPED_TRACE(::testing::Message() << "dim 0, source " << at::IntArrayRef(shape));
    at::Tensor source = at::randn(shape);
    if (!accepted(self, 0, rows, source)) continue;
    expect_op_matches("aten::index_add", along(0), {self, rows, source});
    ++tested;
  }
  for (std::vector<int64_t> shape : {std::vector<int64_t>{5, 3, 1}, {1, 3, 1}, {1, 3, 3}}) {
    SCOPED_TRACE(::testing::Message() << "dim 1, source " << at::IntArrayRef(shape));
    at::Tensor source = at::randn(shape);
    if (!accepted(self, 1, cols, source)) continue;
    expect_op_matches("aten::index_add", along(1), {self, cols, source});
    ++tested;
  }
  EXPECT_GE(tested, 1);
  // The index and source as module constants, scripted (folding must not lose the broadcast).
  at::Tensor source = floats({1, 4, 7, 3, 2}).view({5, 1, 1});
  if (accepted(at::ones({5, 4, 3}), 0, longs({0, 2, 3, 1, 2}), source)) {
    expect_script_matches(
        "aten::index_add",
        script_module("def forward(self, x):\n  return x.index_add(0, self.index, self.source)\n",
                      {{"index", longs({0, 2, 3, 1, 2})}, {"source", source}}),
        {at::ones({5, 4, 3})});
  }
}

// put: the source's elements written (or added) at flat indices of self.
TEST_F(Index, Put) {
  auto fn = [](const Inputs& in) { return arg(in, 0).put(arg(in, 1), arg(in, 2)); };
  expect_op_matches("aten::put", fn, {at::randn({3, 4}), longs({0, -1, 5}), at::randn({3})});
  expect_op_matches(
      "aten::put", fn,
      {at::randint(-9, 9, {2, 3}), longs({4, 1}).view({2, 1}), longs({7, 8}).view({1, 2})});
  auto acc = [](const Inputs& in) { return arg(in, 0).put(arg(in, 1), arg(in, 2), true); };
  expect_op_matches("aten::put", acc, {at::randn({3, 4}), longs({2, 2, -10, 0}), at::randn({4})});
  expect_op_matches("aten::put", acc,
                    {at::randint(-9, 9, {5}), longs({1, 1, 1}), at::randint(-9, 9, {3})});
}

}  // namespace
}  // namespace torchonnx::testing
