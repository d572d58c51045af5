// Embeddings: embedding (padding_idx), embedding_renorm (max_norm), embedding_bag.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <limits>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

at::ScalarType weight_type(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) {
    g.fail("embedding_renorm/embedding_bag of a non-floating weight (dtype " +
           std::string(c10::toString(type)) + ")");
  }
  return type;
}

// The p-norm of each row of `rows` [K, D] as [K, 1].
Value row_norms(GraphContext& g, const Value& rows, double p, at::ScalarType type) {
  Value abs = g.op("Abs", {rows});
  if (std::isinf(p) && p > 0) return reduce(g, "ReduceMax", abs, {1}, true);
  if (p == 1) return reduce(g, "ReduceSum", abs, {1}, true);
  if (p == 2) return g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {rows, rows}), {1}, true)});
  if (p <= 0) g.fail("embedding max_norm with norm_type <= 0 is not supported");
  Value powered = g.op("Pow", {abs, g.constant_scalar(p, type)});
  return g.op("Pow", {reduce(g, "ReduceSum", powered, {1}, true), g.constant_scalar(1 / p, type)});
}

// One embedding_bag lowering for aten::embedding_bag (both overloads), aten::_embedding_bag and
// aten::_embedding_bag_forward_only: weight 0, indices 1, offsets 2, mode 4, per_sample_weights 6,
// include_last_offset 7, padding_idx 8 (int?, or int with -1 for none).
//
// Bag membership is a [B, L] bool matrix M[b, i] = starts[b] <= i < ends[b] (and indices[i] is
// not padding_idx), computed in the graph; then sum = MatMul(M, rows), mean = sum / max(count, 1),
// max = ReduceMax over L of Where(M, rows, -inf) (0 for empty bags).
// Outputs: output (exact), offset2bag = the bag of each index [L], bag_size = the count of indices
// in each bag [B] (both int64; libtorch's CPU kernels leave them empty/partial for some modes),
// max_indices = the weight row of each max [B, D] in max mode (first of ties; bag_size otherwise).
//   ⇒  bag-membership matrix, MatMul / masked ReduceMax
Values embedding_bag(GraphContext& g, const Args& a) {
  at::ScalarType type = weight_type(g, a);
  if (a.require_rank(1) != 1) {
    g.fail("embedding_bag with indices of rank != 1 (pass 1-D indices and offsets)");
  }
  const int64_t mode = a.int_arg(4);
  if (mode < 0 || mode > 2) g.fail("embedding_bag mode must be 0 (sum), 1 (mean) or 2 (max)");
  const bool has_psw = a.size() > 6 && !a.is_none(6);
  if (has_psw && mode != 0) {
    g.fail("embedding_bag: per_sample_weights is only supported for mode='sum'");
  }
  const bool include_last = a.size() > 7 && a.bool_arg(7);
  std::optional<int64_t> padding_idx;
  if (a.size() > 8 && !a.is_none(8)) {
    int64_t p = a.int_arg(8);
    if (p >= 0) padding_idx = p;
  }

  Value weight = a.tensor(0);
  Value idx = a.tensor_as(1, at::kLong);
  Value offsets = a.tensor_as(2, at::kLong);
  Value length = dim_size(g, idx, 0);
  Value pos = arange(g, length);  // [L]
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  Value starts = include_last ? slice(g, offsets, {0}, {0}, {-1}) : offsets;
  Value ends = slice(g, offsets, {0}, {1}, {kEnd});
  if (!include_last) {
    ends = g.op("Concat", {ends, unsqueeze(g, length, {0})}, {{"axis", int64_t{0}}});
  }
  Value pos_row = unsqueeze(g, pos, {0});  // [1, L]
  Value after_start = g.op("Not", {g.op("Less", {pos_row, unsqueeze(g, starts, {1})})});
  Value before_end = g.op("Less", {pos_row, unsqueeze(g, ends, {1})});
  Value member = g.op("And", {after_start, before_end});  // [B, L]
  if (padding_idx) {
    Value is_pad = g.op("Equal", {idx, g.constant_scalar(*padding_idx, at::kLong)});
    member = g.op("And", {member, unsqueeze(g, g.op("Not", {is_pad}), {0})});
  }
  Value member_f = g.cast(member, type);
  Value count = reduce(g, "ReduceSum", g.cast(member, at::kLong), {1}, false);  // [B]
  Value count_f = reduce(g, "ReduceSum", member_f, {1}, true);                  // [B, 1]

  Value rows = g.op("Gather", {weight, idx}, {{"axis", int64_t{0}}});  // [L, D]
  Value out, max_indices = count;
  if (mode == 2) {
    Value neg_inf = g.constant_scalar(-std::numeric_limits<double>::infinity(), type);
    Value masked = g.op("Where", {unsqueeze(g, member, {2}), unsqueeze(g, rows, {0}), neg_inf});
    Value nonempty = g.op("Greater", {count_f, g.constant_scalar(0, type)});
    out = g.op("Where",
               {nonempty, reduce(g, "ReduceMax", masked, {1}, false), g.constant_scalar(0, type)});
    Value arg = g.op("ArgMax", {masked}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
    max_indices = g.op("Gather", {idx, arg}, {{"axis", int64_t{0}}});
  } else {
    if (has_psw) rows = g.op("Mul", {rows, unsqueeze(g, a.tensor_as(6, type), {1})});
    out = g.op("MatMul", {member_f, rows});
    if (mode == 1) {
      out = g.op("Div", {out, g.op("Max", {count_f, g.constant_scalar(1, type)})});
    }
  }
  // offset2bag: the number of bag starts at or before each index, minus one.
  Value started = g.op("Not", {g.op("Less", {unsqueeze(g, pos, {1}), unsqueeze(g, starts, {0})})});
  Value offset2bag = g.op("Sub", {reduce(g, "ReduceSum", g.cast(started, at::kLong), {1}, false),
                                  g.constant_scalar(1, at::kLong)});
  return {out, offset2bag, count, max_indices};
}

// aten::embedding(Tensor weight, Tensor indices, int padding_idx, bool scale_grad_by_freq,
//                 bool sparse) -> Tensor  ⇒  Gather(weight, indices, axis 0) (padding_idx,
//   scale_grad_by_freq and sparse only affect the gradient)
Values embedding(GraphContext& g, const Args& a) {
  return {g.op("Gather", {a.tensor(0), a.tensor(1)}, {{"axis", int64_t{0}}})};
}

// aten::embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor
//   (RemoveInplaceOps' form of embedding_renorm_, what F.embedding(max_norm=) records)
//   ⇒  ScatterND(weight, indices, rows · (norm > max_norm ? max_norm / (norm + 1e-7) : 1))
//   (11+: ScatterND; repeated indices write the same row twice)
Values embedding_renorm(GraphContext& g, const Args& a) {
  at::ScalarType type = weight_type(g, a);
  const double max_norm = a.float_arg(2);
  Value weight = a.tensor(0);
  Value idx = g.op("Reshape", {a.tensor_as(1, at::kLong), g.constant_ints({-1})});
  Value rows = g.op("Gather", {weight, idx}, {{"axis", int64_t{0}}});
  Value norm = row_norms(g, rows, a.float_arg(3), type);
  Value scale = g.op("Div", {g.constant_scalar(max_norm, type),
                             g.op("Add", {norm, g.constant_scalar(1e-7, type)})});
  Value too_big = g.op("Greater", {norm, g.constant_scalar(max_norm, type)});
  scale = g.op("Where", {too_big, scale, g.constant_scalar(1, type)});
  Value renormed = g.op("Mul", {rows, scale});
  return {g.op("ScatterND", {weight, unsqueeze(g, idx, {1}), renormed})};
}

}  // namespace

void register_embedding(Registry& r) {
  r.add("aten::embedding", from(9), embedding);
  r.add("aten::embedding_renorm", from(11), embedding_renorm);
  // aten::embedding_bag(weight, indices, offsets, bool scale_grad_by_freq, int mode, bool sparse,
  //   Tensor? per_sample_weights, bool include_last_offset[, int? padding_idx]) (both overloads),
  // aten::_embedding_bag / _embedding_bag_forward_only(..., int padding_idx=-1)
  //   -> (Tensor, Tensor, Tensor, Tensor)  ⇒  bag-membership matrix, MatMul / masked ReduceMax
  r.add("aten::embedding_bag", from(9), embedding_bag);
  r.add("aten::_embedding_bag", from(9), embedding_bag);
  r.add("aten::_embedding_bag_forward_only", from(9), embedding_bag);
}

}  // namespace torchonnx::symbolic::ops
