// Masks and conditions: masked_select, masked_fill, masked_scatter, nonzero (and nonzero_numpy),
// where — the ops that select elements by a bool tensor.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// aten::nonzero_numpy(Tensor self) -> Tensor[] / where(Tensor condition) -> Tensor[]
//   ⇒  the rows of NonZero
//   (of a 0-d tensor: one row, [0] or empty, as of the tensor as 1-D)
Values nonzero_rows(GraphContext& g, const Args& a) {
  int64_t rank = a.require_rank(0);
  Value x = a.tensor(0);
  if (rank == 0) {
    x = g.op("Reshape", {x, g.constant_ints({1})});
    rank = 1;
  }
  Value nz = g.op("NonZero", {x});
  Values rows;
  for (int64_t j = 0; j < rank; ++j) {
    rows.push_back(
        g.op("Gather", {nz, g.constant(at::scalar_tensor(j, at::kLong))}, {{"axis", int64_t{0}}}));
  }
  return rows;
}

// aten::masked_select(Tensor self, Tensor mask)  ⇒  both broadcast (Where/Expand), flattened,
// Gather at the flat NonZero positions
Values masked_select(GraphContext& g, const Args& a) {
  Value mask = a.tensor_as(1, at::kBool);
  Value x = a.tensor(0);
  Value xb = where(g, mask, x, x, a.dtype(0));  // self broadcast against mask
  Value mb = g.op("Expand", {mask, shape_of(g, xb)});
  Value flat = g.op("Reshape", {xb, g.constant_ints({-1})});
  Value pos = squeeze(g, g.op("NonZero", {g.op("Reshape", {mb, g.constant_ints({-1})})}), {0});
  return {g.op("Gather", {flat, pos}, {{"axis", int64_t{0}}})};
}

// aten::nonzero(Tensor self)  ⇒  Transpose(NonZero); of a 0-d tensor, [1, 0] or [0, 0] (ATen):
//   NonZero of it as 1-D, transposed, its column sliced away
Values nonzero(GraphContext& g, const Args& a) {
  if (a.require_rank(0) == 0) {
    Value nz = g.op("NonZero", {g.op("Reshape", {a.tensor(0), g.constant_ints({1})})});
    Value rows = g.op("Transpose", {nz}, {{"perm", std::vector<int64_t>{1, 0}}});
    return {slice(g, rows, {1}, {0}, {0})};
  }
  return {
      g.op("Transpose", {g.op("NonZero", {a.tensor(0)})}, {{"perm", std::vector<int64_t>{1, 0}}})};
}

// aten::where.self / .ScalarSelf / .ScalarOther / .Scalar(Tensor condition, Tensor|Scalar self,
//   Tensor|Scalar other)  ⇒  Where with both branches in the promoted result dtype
Values where_select(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  return {where(g, a.tensor_as(0, at::kBool), a.tensor_as(1, type), a.tensor_as(2, type), type)};
}

// aten::masked_fill(Tensor self, Tensor mask, Scalar|Tensor value)  ⇒  Where(mask, value, self)
Values masked_fill(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  return {where(g, a.tensor_as(1, at::kBool), a.tensor_as(2, type), a.tensor(0), type)};
}

// aten::masked_scatter(Tensor self, Tensor mask, Tensor source)  ⇒  the first N source elements
// (N = mask count) scattered at the flat NonZero positions of the broadcast mask
Values masked_scatter(GraphContext& g, const Args& a) {
  Value self = a.tensor(0);
  Value shape = shape_of(g, self);
  Value mask = g.op("Expand", {a.tensor_as(1, at::kBool), shape});
  Value flat = g.op("Reshape", {self, g.constant_ints({-1})});
  Value pos = squeeze(g, g.op("NonZero", {g.op("Reshape", {mask, g.constant_ints({-1})})}), {0});
  Value src = g.op("Reshape", {a.tensor_as(2, a.dtype(0)), g.constant_ints({-1})});
  Value first = g.op("Gather", {src, arange(g, g.op("Size", {pos}))}, {{"axis", int64_t{0}}});
  return {g.op("Reshape", {scatter_elements(g, flat, pos, first, 0), shape})};
}

}  // namespace

void register_masked(Registry& r) {
  r.add("aten::masked_select", from(9), masked_select);
  r.add("aten::nonzero", from(9), nonzero);
  r.add("aten::argwhere", from(9), nonzero);
  r.add("aten::nonzero_numpy", from(9), nonzero_rows);
  r.add_unnamed("aten::where", from(9), nonzero_rows);
  for (const char* op : {"aten::where.self", "aten::where.ScalarSelf", "aten::where.ScalarOther",
                         "aten::where.Scalar"}) {
    r.add(op, from(9), where_select);
  }
  r.add("aten::masked_fill", from(9), masked_fill);
  r.add("aten::masked_scatter", from(9), masked_scatter);
}

}  // namespace torchonnx::symbolic::ops
