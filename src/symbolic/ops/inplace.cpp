// Functional forms of in-place writes: copy (copy_), zero (zero_), select_scatter and
// slice_scatter, which RemoveInplaceOps inserts to write a view back into its base (Note
// [Removing in-place ops] in passes/remove_inplace_ops.cpp).
//
// A scatter along `dim` is a Concat of the base's part before the written run, the new part and
// the base's part after it, when the run is contiguous (step 1) and starts at a known index.
// Otherwise (a step, a start computed in the graph or negative with an unknown size) it is a
// Scatter(Elements) with the indices start + step * arange(m) along `dim` (m: the new part's size
// there), which needs only the ranks.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

constexpr int64_t kEnd = INT64_MAX;

// Where a write along a dim starts: a constant, or a value computed in the graph (int64, 0-d).
struct Start {
  std::optional<int64_t> known;  // non-negative
  Value computed;                // when !known: may be negative
};

// The step of a write: a constant (positive), or a value computed in the graph (int64, 0-d; PyTorch
// requires it positive).
struct Step {
  std::optional<int64_t> known;
  Value computed;
};

// `self` with `src` (of self's rank) written along `dim` from `start` every `step` elements.
Value write_along(GraphContext& g, const Value& self, const Value& src,
                  const std::optional<std::vector<int64_t>>& src_sizes, int64_t dim, int64_t rank,
                  const Start& start, const Step& step) {
  const bool static_run = src_sizes.has_value() && (*src_sizes)[dim] >= 0;
  if (step.known == 1 && start.known && (static_run || g.has(OnnxFeature::kSliceInputs))) {
    const int64_t s = *start.known;
    Values parts;
    if (s > 0) parts.push_back(slice(g, self, {dim}, {0}, {s}));
    parts.push_back(src);
    if (static_run) {
      parts.push_back(slice(g, self, {dim}, {s + (*src_sizes)[dim]}, {kEnd}));
    } else {
      Value end = g.op("Add", {g.constant_ints({s}), dims_of(g, src, {dim})});
      parts.push_back(g.op("Slice", {self, end, g.constant_ints({kEnd}), g.constant_ints({dim})}));
    }
    return g.op("Concat", parts, {{"axis", dim}});
  }
  // Scatter(Elements) with indices start + step * arange(m) along dim, expanded to src's shape.
  Value first;
  if (start.known) {
    first = g.constant_ints({*start.known});
  } else {
    // A negative start counts from the end; one still negative clamps to 0 (PyTorch's slice).
    Value s = g.op("Reshape", {start.computed, g.constant_ints({1})});
    Value zero = g.constant_ints({0});
    Value wrapped =
        g.op("Where", {g.op("Less", {s, zero}), g.op("Add", {s, dims_of(g, self, {dim})}), s});
    first = g.op("Where", {g.op("Less", {wrapped, zero}), zero, wrapped});
  }
  Value offsets = arange(g, dim_size(g, src, dim));
  if (!step.known) {
    offsets = g.op("Mul", {offsets, step.computed});
  } else if (*step.known != 1) {
    offsets = g.op("Mul", {offsets, g.constant_ints({*step.known})});
  }
  std::vector<int64_t> along(rank, 1);
  along[dim] = -1;
  Value index = g.op("Reshape", {g.op("Add", {offsets, first}), g.constant_ints(along)});
  index = g.op("Expand", {index, g.op("Shape", {src})});
  return scatter_elements(g, self, index, src, dim);
}

// The start of a write along `dim` of input `self_i` from argument `i` (an int, None = `none`).
Start read_start(GraphContext& g, const Args& a, size_t self_i, size_t i, int64_t dim,
                 int64_t none) {
  if (a.is_none(i)) return {none, {}};
  if (a.is_constant(i)) {
    int64_t s = a.int_arg(i);
    if (s >= 0) return {s, {}};
    if (auto sizes = a.sizes(self_i); sizes && (*sizes)[dim] >= 0) {
      return {std::max<int64_t>(s + (*sizes)[dim], 0), {}};
    }
  }
  return {std::nullopt, a.tensor_as(i, at::kLong)};
}

// aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor (copy_, and
//   copy_.Tensor/.int/.float(Tensor self, Tensor|int|float other))
//   ⇒  Expand(Cast(src, self's dtype), Shape(self))
// Python's `x[:, n:] = v` traces v expanded to the sizes of the example's slice (constants), which
// another shape of a dynamic axis contradicts; the Expand to self's shape broadcasts v as that
// expand did, so the expand is skipped: an aten::expand src is read before it, and a constant src
// (the expand folded) is cut to one element along its broadcast dims (stride 0).
Value copy_source(GraphContext& g, const Args& a, at::ScalarType type) {
  const torch::jit::Node* producer = a.jit(1)->node();
  if (producer->kind() == c10::aten::expand && a.rank(1) && a.rank(0) && *a.rank(1) <= *a.rank(0)) {
    return Args(g, producer).tensor_as(0, type);
  }
  if (a.is_constant(1) && a.constant(1).isTensor()) {
    at::Tensor t = a.constant(1).toTensor();
    bool broadcast = false;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (t.stride(d) == 0 && t.size(d) > 1) {
        t = t.narrow(d, 0, 1);
        broadcast = true;
      }
    }
    if (broadcast) return g.constant(t.to(type).contiguous());
  }
  return a.tensor_as(1, type);
}

Values copy(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  return {g.op("Expand", {copy_source(g, a, type), g.op("Shape", {a.tensor(0)})})};
}

// aten::zero(Tensor self) -> Tensor (zero_)  ⇒  ConstantOfShape(Shape(self), 0 of self's dtype)
Values zero(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  return {g.op("ConstantOfShape", {g.op("Shape", {a.tensor(0)})},
               {{"value", at::zeros({1}, at::TensorOptions().dtype(type))}})};
}

// aten::select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor
//   ⇒  Concat(Slice before, Unsqueeze(src), Slice after) for a known index; Scatter(Elements)
//   for one computed in the graph or negative with an unknown size
Values select_scatter(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const int64_t dim = normalize_dim(a.int_arg(2), rank);
  Value src = unsqueeze(g, a.tensor_as(1, a.dtype(0)), {dim});
  std::optional<std::vector<int64_t>> src_sizes;
  if (auto sizes = a.sizes(1)) {
    src_sizes = *sizes;
    src_sizes->insert(src_sizes->begin() + dim, 1);
  }
  Start start = read_start(g, a, 0, 3, dim, 0);
  return {write_along(g, a.tensor(0), src, src_sizes, dim, rank, start, Step{1, {}})};
}

// aten::slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None,
//   int step=1) -> Tensor  ⇒  Concat(Slice before, src, Slice after) for step 1 and a known
//   start; Scatter(Elements) at start + step * arange otherwise (the end follows from src's size;
//   start and step may be computed in the graph)
Values slice_scatter(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const int64_t dim = normalize_dim(a.int_arg(2), rank);
  Step step;
  if (a.is_constant(5)) {
    step.known = a.int_arg(5);
    if (*step.known < 1) g.fail("slice_scatter takes a positive step");
  } else {
    step.computed = a.tensor_as(5, at::kLong);
  }
  Value src = a.tensor_as(1, a.dtype(0));
  Start start = read_start(g, a, 0, 3, dim, 0);
  return {write_along(g, a.tensor(0), src, a.sizes(1), dim, rank, start, step)};
}

// aten::diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1)
//   ⇒  self transposed to [dim1, dim2, others...], ScatterND of src (its diagonal dim, the last,
//   moved first) at the constant positions (i, i + offset) (or (i - offset, i)), transposed back
//   (opset 11; static sizes of dim1 and dim2)
Values diagonal_scatter(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank < 2) g.fail("diagonal_scatter needs a tensor of at least 2 dims");
  const int64_t offset = a.int_arg(2);
  const int64_t d1 = normalize_dim(a.int_arg(3), rank), d2 = normalize_dim(a.int_arg(4), rank);
  std::optional<int64_t> rows = a.dim_size(0, d1), cols = a.dim_size(0, d2);
  if (!rows || !cols) g.fail("diagonal_scatter needs the sizes of dim1 and dim2 at export");
  const int64_t row0 = std::max<int64_t>(-offset, 0), col0 = std::max<int64_t>(offset, 0);
  const int64_t length = std::max<int64_t>(0, std::min(*rows - row0, *cols - col0));
  if (length == 0) return {a.tensor(0)};
  std::vector<int64_t> perm{d1, d2};
  for (int64_t d = 0; d < rank; ++d) {
    if (d != d1 && d != d2) perm.push_back(d);
  }
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  std::vector<int64_t> src_perm{rank - 2};
  for (int64_t d = 0; d < rank - 2; ++d) src_perm.push_back(d);
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < length; ++i) {
    positions.push_back(row0 + i);
    positions.push_back(col0 + i);
  }
  Value index = g.constant(at::tensor(positions, at::kLong).reshape({length, 2}));
  Value self = transpose(g, a.tensor(0), perm);
  Value src = transpose(g, a.tensor_as(1, a.dtype(0)), src_perm);
  return {transpose(g, g.op("ScatterND", {self, index, src}), inverse)};
}

}  // namespace

void register_inplace(Registry& r) {
  r.add("aten::copy", from(9), copy);
  r.add("aten::zero", from(9), zero);
  r.add("aten::select_scatter", from(9), select_scatter);
  r.add("aten::slice_scatter", from(9), slice_scatter);
  r.add("aten::diagonal_scatter", from(11), diagonal_scatter);
}

}  // namespace torchonnx::symbolic::ops
