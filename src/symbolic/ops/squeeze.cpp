// squeeze and unsqueeze, at dims given, at every dim of size 1, and at dims known only at run time
// (a dim computed in the graph, or a size decided by the input).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <memory>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/shape_util.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;

// aten::unsqueeze(Tensor self, int dim)  ⇒  Unsqueeze; a dim computed in the graph (an int
//   argument of forward()) is an axes input, made non-negative in the graph (opset 13+)
Values unsqueeze_op(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (!a.is_constant(1)) {
    g.require_opset(13, "unsqueeze at a dim computed in the graph", "Unsqueeze's axes as an input",
                    "make the dim a constant");
    Value d = a.tensor_as(1, at::kLong);
    Value wrapped = g.op("Add", {d, g.constant_scalar(static_cast<double>(rank + 1), at::kLong)});
    d = g.op("Where", {g.op("Less", {d, g.constant_scalar(0, at::kLong)}), wrapped, d});
    return {g.op("Unsqueeze", {a.tensor(0), unsqueeze(g, d, {0})})};
  }
  int64_t dim = normalize_dim(a.int_arg(1), rank + 1);
  return {unsqueeze(g, a.tensor(0), {dim})};
}

// aten::squeeze(Tensor self)
//   ⇒  Squeeze of the size-1 dims (identity if none); without a static shape, Squeeze with no
//      axes (all size-1 dims) from opset 13, below it Reshape to the sizes that are not 1
//      (Note [Squeezing dims of run-time size])
Values squeeze_all(GraphContext& g, const Args& a) {
  auto sizes = a.sizes(0);
  Value x = a.tensor(0);
  if (!sizes && !g.has(OnnxFeature::kSqueezeAxesInput) && a.rank(0)) {
    // Note [Squeezing dims of run-time size]: which dims squeeze() removes is known at run time
    // only, and so is the result's rank. ONNX's shape inference of Squeeze without axes before
    // opset 13 takes dims of unknown size as removed (rank 0 for a tensor of dynamic dims), which
    // contradicts the rank type propagation declares (the example's) and fails the checker.
    // Reshape to Shape(x) without its 1s computes the same and leaves the rank to run time.
    Value shape = shape_of(g, x);
    Value kept = g.op("NonZero", {g.op("Not", {g.op("Equal", {shape, g.constant_ints({1})})})});
    Value sizes_kept = g.op("Gather", {shape, g.op("Reshape", {kept, g.constant_ints({-1})})},
                            {{"axis", int64_t{0}}});
    return {g.op("Reshape", {x, sizes_kept})};
  }
  if (!sizes) return {g.op("Squeeze", {x})};
  Ints axes;
  for (size_t i = 0; i < sizes->size(); ++i) {
    if ((*sizes)[i] == 1) axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.empty()) return {x};
  return {squeeze(g, x, axes)};
}

// If(Shape(x)[dim] == 1, Squeeze(x, dim), x) for a 0-d int64 `dim` (non-negative) computed in
// the graph: the branches differ in rank (allowed from opset 11). `squeezed` builds the Squeeze.
Value squeeze_at_run_time(GraphContext& g, const Args& a, const Value& x, const Value& dim,
                          const std::function<Value(GraphContext&)>& squeezed) {
  return if_else(
      g, "squeezed", [&] { return Values{squeezed(g)}; }, "kept",
      [&] { return Values{g.op("Identity", {x})}; }, {a.dtype(0)},
      [&] {
        Value size = g.op("Gather", {shape_of(g, x), dim}, {{"axis", int64_t{0}}});
        return g.op("Equal", {size, g.constant_scalar(1, at::kLong)});
      })[0];
}

// Squeeze of `dim` of argument 0 when its size is 1. A static size decides at export; a dynamic
// one (dynamic axes) at run time, as torch.onnx does from opset 11: If(Shape(x)[dim] == 1,
// Squeeze(x, dim), x), whose branches differ in rank (allowed from opset 11).
Value squeeze_if_one(GraphContext& g, const Args& a, const Value& x, int64_t dim) {
  if (std::optional<int64_t> size = a.dim_size(0, dim)) {
    return *size == 1 ? squeeze(g, x, {dim}) : x;
  }
  g.require_opset(11, fmt::format("squeeze({}) of a dynamic dim", dim),
                  "whether the dim is removed is decided at run time, by an If whose branches "
                  "differ in rank",
                  "keep that dim static, or squeeze with a reshape of the wanted shape");
  return squeeze_at_run_time(g, a, x, g.constant_scalar(static_cast<double>(dim), at::kLong),
                             [&](GraphContext& b) { return squeeze(b, x, {dim}); });
}

// squeeze(x, dim) of a dim computed in the graph (an int argument of forward()): made
// non-negative in the graph, then squeezed at run time when its size is 1 (Squeeze's axes as an
// input: opset 13+). torch.onnx squeezes it unconditionally; PyTorch keeps a dim whose size is not
// 1, and so does the If. Without any dim that can be 1 (a static shape without 1s), x itself.
Value squeeze_computed_dim(GraphContext& g, const Args& a, const Value& x, int64_t rank) {
  if (auto sizes = a.sizes(0); sizes && std::count(sizes->begin(), sizes->end(), 1) == 0) {
    return x;
  }
  g.require_opset(13, "squeeze at a dim computed in the graph", "Squeeze's axes as an input",
                  "make the dim a constant");
  Value d = a.tensor_as(1, at::kLong);
  Value wrapped = g.op("Add", {d, g.constant_scalar(static_cast<double>(rank), at::kLong)});
  d = g.op("Where", {g.op("Less", {d, g.constant_scalar(0, at::kLong)}), wrapped, d});
  return squeeze_at_run_time(g, a, x, d, [&](GraphContext& b) {
    return b.op("Squeeze", {x, unsqueeze(b, d, {0})});
  });
}

// aten::squeeze.dim(Tensor self, int dim)
//   ⇒  Squeeze of the dim if its size is 1, else identity (If on its size when it is dynamic or
//      the dim is computed in the graph)
Values squeeze_dim(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  if (!is_int_type(a.jit(1))) g.fail("squeeze with a named dim is not supported");
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {x};
  if (!a.is_constant(1)) return {squeeze_computed_dim(g, a, x, rank)};
  return {squeeze_if_one(g, a, x, normalize_dim(a.int_arg(1), rank))};
}

// aten::squeeze.dims(Tensor self, int[] dim) -> Tensor (PyTorch 2.0+)  ⇒  Squeeze of those of
//   the dims whose size is 1; with dynamic dims among them, one dim at a time from the last (an
//   If for each dynamic one), so that each index still names its dim
Values squeeze_dims(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {x};
  Ints dims;
  bool dynamic = false;
  for (int64_t d : a.int_list(1)) {
    const int64_t dim = normalize_dim(d, rank);
    if (std::find(dims.begin(), dims.end(), dim) != dims.end()) continue;
    std::optional<int64_t> size = a.dim_size(0, dim);
    dynamic = dynamic || !size;
    if (!size || *size == 1) dims.push_back(dim);
  }
  if (dims.empty()) return {x};
  std::sort(dims.begin(), dims.end());
  if (!dynamic) return {squeeze(g, x, dims)};
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) x = squeeze_if_one(g, a, x, *it);
  return {x};
}

}  // namespace

void register_squeeze(Registry& r) {
  r.add("aten::unsqueeze", from(9), unsqueeze_op);
  r.add_unnamed("aten::squeeze", from(9), squeeze_all);
  r.add("aten::squeeze.dim", from(9), squeeze_dim);
  r.add("aten::squeeze.dims", from(9), squeeze_dims);
}

}  // namespace torchonnx::symbolic::ops
