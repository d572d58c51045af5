// Indexing reads and writes: select, slice, index, gather, index_select, index_put, scatter*,
// index_* (masked_*, nonzero and where: masked.cpp).
//
// Advanced indexing (aten::index / aten::index_put) is lowered for every opset without GatherND or
// ScatterND: the indexed dims are moved to the front and flattened into one, the index tensors
// combine into one linear index, and a plain Gather / Scatter(Elements) on that dim does the work.
// This supports, unlike torch.onnx, negative tensor indices, index tensors of any rank on write,
// non-consecutive indices on write, n-D bool masks and implicit broadcasting of the new values.
//
// Accumulating writes (index_put accumulate, scatter_add, index_add, scatter reduce="add") use
// ScatterElements(reduction="add") from opset 16, and below it an exact one-hot lowering:
// Equal(index, arange) selects, for every target position, the updates that land there, and a
// ReduceSum adds them (duplicate indices add up as in PyTorch; memory is |updates| x |dim|).
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

// A negative index made non-negative: Where(idx < 0, idx + n, idx), n a 0-d size.
Value wrap_negative(GraphContext& g, const Value& idx, const Value& n) {
  Value zero = g.constant(at::scalar_tensor(0, at::kLong));
  return g.op("Where", {g.op("Less", {idx, zero}), g.op("Add", {idx, n}), idx});
}

// Whether jit value `v` is a constant tensor/int with no negative element (nothing to wrap).
bool known_non_negative(const torch::jit::Value* v) {
  auto c = torch::jit::toIValue(v);
  if (!c) return false;
  if (c->isInt()) return c->toInt() >= 0;
  if (c->isTensor()) {
    const at::Tensor& t = c->toTensor();
    return t.numel() == 0 || t.min().item<int64_t>() >= 0;
  }
  return false;
}

// Reshape a 1-D (or 0-d) index to rank `rank` with its elements along `dim` (1 elsewhere).
Value index_along(GraphContext& g, const Value& index, int64_t rank, int64_t dim) {
  std::vector<int64_t> shape(rank, 1);
  shape[dim] = -1;
  return g.op("Reshape", {index, g.constant_ints(shape)});
}

// The element type ReduceSum can add for `type` (bool is added as int64 and cast back).
at::ScalarType summable(at::ScalarType type) {
  return type == at::kBool ? at::kLong : type;
}

// The one-hot form of a scatter along `axis`: each update compared with every position of the
// axis (Equal(index, arange(n))), the positions it does not hit given `fill`, and `reduce_op`
// (ReduceSum, ReduceMax, ...) over the updates: each position's reduction, n at `axis`. With
// `pad` (an index smaller than `data` in a non-indexed dim), padded with `fill` to data's shape
// (Pad with computed pads: opset 11).
Value onehot_reduce(GraphContext& g, const Value& data, const Value& index, const Value& updates,
                    int64_t axis, int64_t rank, const std::string& reduce_op, const Value& fill,
                    bool pad) {
  Value n = dim_size(g, data, axis);
  std::vector<int64_t> ar_shape(rank + 1, 1);
  ar_shape[axis + 1] = -1;
  Value ar = g.op("Reshape", {arange(g, n), g.constant_ints(ar_shape)});
  Value hit = g.op("Equal", {unsqueeze(g, index, {axis + 1}), ar});  // index dims + n at axis+1
  Value picked = g.op("Where", {hit, unsqueeze(g, updates, {axis + 1}), fill});
  Value out = reduce(g, reduce_op, picked, {axis}, /*keepdims=*/false);  // n at axis
  if (pad) {
    g.require_opset(11, "an index smaller than the input in a non-indexed dim", "Pad inputs");
    Value missing = g.op("Sub", {shape_of(g, data), shape_of(g, out)});
    Value pads = g.op("Concat", {g.constant_ints(std::vector<int64_t>(rank, 0)), missing},
                      {{"axis", int64_t{0}}});
    out = g.op("Pad", {out, pads, fill});
  }
  return out;
}

// data + (updates scattered along `axis` at `index`, duplicates added), without ScatterElements
// reduction: the one-hot lowering described at the top. `index` and `updates` have one shape;
// when it is smaller than `data`'s in dims other than `axis` (`pad`), the sums are padded with
// zeros (Pad with computed pads: opset 11).
Value scatter_add_onehot(GraphContext& g, const Value& data, const Value& index,
                         const Value& updates, int64_t axis, int64_t rank, at::ScalarType type,
                         bool pad) {
  at::ScalarType st = summable(type);
  Value upd = st == type ? updates : g.cast(updates, st);
  Value zero = g.constant_scalar(0, st);
  Value sums = onehot_reduce(g, data, index, upd, axis, rank, "ReduceSum", zero, pad);
  Value d = st == type ? data : g.cast(data, st);
  Value out = type == at::kBool ? g.op("Or", {g.cast(d, at::kBool), g.cast(sums, at::kBool)})
                                : g.op("Add", {d, sums});
  return out;
}

// Note [Scatter max/min before opset 18]: ScatterElements reduces by max/min from opset 18 only
// (its reduction attribute takes "none", "add" and "mul" at 16 and 17; torch.onnx writes "max"
// there anyway, which ONNX Runtime happens to run). Below 18 the lowering is the one-hot form of
// scatter_add_onehot with ReduceMax/Min for ReduceSum: each update is compared with every
// position of `axis` (Equal(index, arange(n))), positions it does not hit get the reduction's
// identity (the lowest value of `type` for max, the highest for min; ±inf for floats), the
// reduction over the updates gives each position's extremum, and Max/Min with `data` folds it in
// (positions no update hits keep `data`). Exact; its memory is the index's size times n.
// `type` is a dtype ReduceMax/Min and Max/Min take at the opset (see scatter_reduce).
Value scatter_extremum_onehot(GraphContext& g, const Value& data, const Value& index,
                              const Value& updates, int64_t axis, int64_t rank, at::ScalarType type,
                              bool max, bool pad) {
  at::Scalar identity = AT_DISPATCH_ALL_TYPES_AND2(
      at::kHalf, at::kBFloat16, type, "scatter_extremum_identity", [&]() -> at::Scalar {
        using Limits = std::numeric_limits<scalar_t>;
        if (Limits::has_infinity) return max ? -Limits::infinity() : Limits::infinity();
        return max ? Limits::lowest() : Limits::max();
      });
  Value fill = g.constant(at::scalar_tensor(identity, type));
  Value ext = onehot_reduce(g, data, index, updates, axis, rank, max ? "ReduceMax" : "ReduceMin",
                            fill, pad);
  return extreme(g, max, data, ext, type);
}

// Whether static shapes `a` and `b` agree in every dim except `skip` (false when unknown).
bool same_except(const std::optional<std::vector<int64_t>>& a,
                 const std::optional<std::vector<int64_t>>& b, int64_t skip) {
  if (!a || !b || a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i) {
    if (static_cast<int64_t>(i) != skip && (*a)[i] != (*b)[i]) return false;
  }
  return true;
}

// Argument `src` cut to the shape of argument `index` (PyTorch's scatter reads only that part;
// ONNX wants updates shaped like indices).
Value fit_to_index(GraphContext& g, const Args& a, size_t src, size_t index) {
  Value s = a.tensor(src);
  if (a.sizes(src) && a.sizes(index) && *a.sizes(src) == *a.sizes(index)) return s;
  int64_t rank = a.require_rank(index);
  std::vector<int64_t> axes(rank), zeros(rank, 0);
  std::iota(axes.begin(), axes.end(), 0);
  if (!g.has(OnnxFeature::kSliceInputs)) {
    auto sizes = a.sizes(index);
    if (!sizes) g.fail("scatter with src larger than index needs static shapes below opset 10");
    // static shape: Slice takes its ends as attributes before opset 10.
    return g.op("Slice", {s}, {{"axes", axes}, {"starts", zeros}, {"ends", *sizes}});
  }
  return g.op("Slice",
              {s, g.constant_ints(zeros), shape_of(g, a.tensor(index)), g.constant_ints(axes)});
}

// ----- advanced indexing
// --------------------------------------------------------------------------

// One entry of a Tensor?[] index list after bool masks are expanded into one index per mask dim.
struct IndexEntry {
  bool none = true;
  Value index;        // int64
  int64_t rank = 0;   // of the index tensor
  bool wrap = false;  // may hold negative values
};

std::vector<IndexEntry> read_indices(GraphContext& g, const Args& a, size_t i) {
  const torch::jit::Node* list = a.jit(i)->node();
  if (list->kind() != c10::prim::ListConstruct) {
    g.fail("the index list must be built in the graph (prim::ListConstruct)");
  }
  Args la(g, list);
  std::vector<IndexEntry> out;
  for (size_t k = 0; k < la.size(); ++k) {
    if (la.is_none(k)) {
      out.push_back({});
      continue;
    }
    at::ScalarType type = la.dtype(k);
    int64_t rank = la.require_rank(k);
    if (type == at::kBool || type == at::kByte) {
      // A mask of rank m indexes m dims with the m rows of NonZero(mask).
      if (rank == 0) g.fail("indexing with a 0-d bool mask is not supported; use unsqueeze");
      Value mask = type == at::kBool ? la.tensor(k) : la.tensor_as(k, at::kBool);
      Value nz = g.op("NonZero", {mask});
      for (int64_t j = 0; j < rank; ++j) {
        Value row = g.op("Gather", {nz, g.constant(at::scalar_tensor(j, at::kLong))},
                         {{"axis", int64_t{0}}});
        out.push_back({false, row, 1, false});
      }
      continue;
    }
    out.push_back({false, la.tensor_as(k, at::kLong), rank, !known_non_negative(la.jit(k))});
  }
  return out;
}

// The pieces both aten::index and aten::index_put need.
struct AdvancedIndex {
  std::vector<int64_t> adv;   // indexed dims of self
  std::vector<int64_t> perm;  // indexed dims first, then the others
  bool moves_front = true;    // result's index dims go to the front (else to adv[0])
  int64_t b = 0;              // rank of the broadcast index
  Value moved;                // self transposed by perm
  Value flat;                 // moved flattened to [prod(indexed), prod(rest)]
  Value linear;               // linear index into flat's dim 0, shape = broadcast index shape
  Value shape_br;             // 1-D shape [*broadcast index, *rest]
};

AdvancedIndex advanced_index(GraphContext& g, const Value& self, int64_t rank,
                             std::vector<IndexEntry> entries) {
  if (static_cast<int64_t>(entries.size()) > rank) {
    g.fail("too many indices (" + std::to_string(entries.size()) + ") for a tensor of rank " +
           std::to_string(rank));
  }
  AdvancedIndex r;
  for (size_t d = 0; d < entries.size(); ++d) {
    if (!entries[d].none) r.adv.push_back(static_cast<int64_t>(d));
  }
  const int64_t k = static_cast<int64_t>(r.adv.size());
  bool consecutive = r.adv.back() - r.adv.front() + 1 == k;
  r.moves_front = !consecutive || r.adv.front() == 0;
  r.perm = r.adv;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(r.adv.begin(), r.adv.end(), d) == r.adv.end()) r.perm.push_back(d);
  }
  bool identity = std::is_sorted(r.perm.begin(), r.perm.end());
  r.moved = identity ? self : g.op("Transpose", {self}, {{"perm", r.perm}});
  r.flat = g.op("Flatten", {r.moved}, {{"axis", k}});
  // linear = ((i0 * n1 + i1) * n2 + i2) ...; the Adds broadcast the index tensors together.
  for (int64_t j = 0; j < k; ++j) {
    const IndexEntry& e = entries[r.adv[j]];
    r.b = std::max(r.b, e.rank);
    Value n = dim_size(g, self, r.adv[j]);
    Value idx = e.wrap ? wrap_negative(g, e.index, n) : e.index;
    r.linear = j == 0 ? idx : g.op("Add", {g.op("Mul", {r.linear, n}), idx});
  }
  Value rest = slice(g, shape_of(g, r.moved), {0}, {k}, {INT64_MAX});
  r.shape_br = g.op("Concat", {shape_of(g, r.linear), rest}, {{"axis", int64_t{0}}});
  return r;
}

// Permutation from the [*broadcast index, *rest] layout to PyTorch's result layout, where the
// index dims sit at position p (consecutive indices not at the front).
std::vector<int64_t> result_perm(int64_t b, int64_t p, int64_t out_rank) {
  std::vector<int64_t> perm;
  for (int64_t i = b; i < b + p; ++i) perm.push_back(i);
  for (int64_t i = 0; i < b; ++i) perm.push_back(i);
  for (int64_t i = b + p; i < out_rank; ++i) perm.push_back(i);
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

// GatherElements(self, index, axis) before opset 11 (one-hot, exact): for every index element,
// Where(index == arange(n), self, 0) summed over the gathered dim. Needs index's shape to equal
// self's outside `dim` (static).
Value gather_onehot(GraphContext& g, const Args& a, size_t self_i, size_t index_i, int64_t dim) {
  int64_t rank = a.require_rank(self_i);
  if (!same_except(a.sizes(self_i), a.sizes(index_i), dim)) {
    g.fail(
        "gather before opset 11 needs an index shaped like the input outside dim (static "
        "shapes); export with opset >= 11 (GatherElements)");
  }
  at::ScalarType type = a.dtype(self_i);
  at::ScalarType st = summable(type);
  Value self = st == type ? a.tensor(self_i) : a.tensor_as(self_i, st);
  Value index = a.tensor_as(index_i, at::kLong);
  std::vector<int64_t> ar_shape(rank + 1, 1);
  ar_shape[dim + 1] = -1;
  Value ar = g.op("Reshape", {arange(g, dim_size(g, self, dim)), g.constant_ints(ar_shape)});
  Value hit = g.op("Equal", {unsqueeze(g, index, {dim + 1}), ar});
  Value picked = g.op("Where", {hit, unsqueeze(g, self, {dim}), g.constant_scalar(0, st)});
  Value out = reduce(g, "ReduceSum", picked, {dim + 1}, /*keepdims=*/false);
  return st == type ? out : g.cast(out, type);
}

Value gather_elements(GraphContext& g, const Args& a, size_t self_i, size_t index_i, int64_t dim) {
  if (!g.has(OnnxFeature::kGatherElements)) return gather_onehot(g, a, self_i, index_i, dim);
  return g.op("GatherElements", {a.tensor(self_i), a.tensor_as(index_i, at::kLong)},
              {{"axis", dim}});
}

// Scatter-add of `updates` (shaped like `index`) into `data` along `dim`: ScatterElements
// reduction="add" from 16, the one-hot lowering below.
Value scatter_add(GraphContext& g, const Value& data, const Value& index, const Value& updates,
                  int64_t dim, int64_t rank, at::ScalarType type, bool pad) {
  if (g.has(OnnxFeature::kScatterAdd) && type != at::kBool) {
    return scatter_elements(g, data, index, updates, dim, "add");
  }
  return scatter_add_onehot(g, data, index, updates, dim, rank, type, pad);
}

// An index_* index (1-D over `dim`) expanded to the shape `shape` of the updates.
Value expand_index(GraphContext& g, const Value& index, int64_t rank, int64_t dim,
                   const Value& shape) {
  return g.op("Expand", {index_along(g, index, rank, dim), shape});
}

// The shape of `self` with dim `dim` replaced by the number of elements of `index`.
Value shape_with_dim(GraphContext& g, const Value& self, int64_t dim, const Value& index) {
  Value shape = shape_of(g, self);
  Value count = unsqueeze(g, g.op("Size", {index}), {0});
  return g.op(
      "Concat",
      {slice(g, shape, {0}, {0}, {dim}), count, slice(g, shape, {0}, {dim + 1}, {INT64_MAX})},
      {{"axis", int64_t{0}}});
}

// aten::select(Tensor self, int dim, int index)  ⇒  Gather with a 0-d index (a negative index
// wrapped with the dim size before opset 11, whose Gather takes none)
Values select_op(GraphContext& g, const Args& a) {
  int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
  Value self = a.tensor(0);
  if (a.is_constant(2) && a.int_arg(2) < 0 && a.sizes(0)) {
    int64_t index = a.int_arg(2) + (*a.sizes(0))[dim];
    Value i = g.constant(at::scalar_tensor(index, at::kLong));
    return {g.op("Gather", {self, i}, {{"axis", dim}})};
  }
  Value index = a.tensor_as(2, at::kLong);
  if (!g.has(OnnxFeature::kGatherNegativeIndices) && !known_non_negative(a.jit(2))) {
    index = wrap_negative(g, index, dim_size(g, self, dim));
  }
  return {g.op("Gather", {self, index}, {{"axis", dim}})};
}

// aten::slice(Tensor self, int dim=0, int? start, int? end, int step=1)  ⇒  Slice (attributes
// before opset 10: constant bounds and step 1 only; inputs from 10, bounds may be computed)
Values slice_op(GraphContext& g, const Args& a) {
  int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
  bool constant = a.is_constant(2) && a.is_constant(3) && a.is_constant(4);
  if (constant) {
    int64_t start = a.optional_int(2).value_or(0);
    int64_t end = a.optional_int(3).value_or(INT64_MAX);
    int64_t step = a.int_arg(4);
    if (start == 0 && end == INT64_MAX && step == 1) return {a.tensor(0)};
    return {slice(g, a.tensor(0), {dim}, {start}, {end}, {step})};
  }
  auto bound = [&](size_t i, int64_t none) {
    if (a.is_none(i)) return g.constant_ints({none});
    return unsqueeze(g, a.tensor_as(i, at::kLong), {0});
  };
  // (in this order: the nodes' names follow it)
  Value start = bound(2, 0), end = bound(3, INT64_MAX), axes = g.constant_ints({dim});
  return {slice_computed(g, a.tensor(0), start, end, axes, bound(4, 1),
                         "slicing with start/end/step computed in the graph")};
}

// aten::index(Tensor self, Tensor?[] indices) (and Tensor_hacked_twin: Tensor[])  ⇒  Gather for
// one index tensor; several: Transpose/Flatten + Gather of a linear index + Reshape (+ Transpose
// back for consecutive indices not at the front). Bool masks become NonZero rows, negative
// indices are wrapped (Where) at every opset.
Values index_op(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  std::vector<IndexEntry> entries = read_indices(g, a, 1);
  Value self = a.tensor(0);
  std::vector<int64_t> adv;
  for (size_t d = 0; d < entries.size(); ++d) {
    if (!entries[d].none) adv.push_back(static_cast<int64_t>(d));
  }
  if (adv.empty()) return {self};
  if (adv.size() == 1) {
    const IndexEntry& e = entries[adv[0]];
    Value idx = e.wrap ? wrap_negative(g, e.index, dim_size(g, self, adv[0])) : e.index;
    return {g.op("Gather", {self, idx}, {{"axis", adv[0]}})};
  }
  AdvancedIndex ai = advanced_index(g, self, rank, entries);
  Value out = g.op("Gather", {ai.flat, ai.linear}, {{"axis", int64_t{0}}});
  out = g.op("Reshape", {out, ai.shape_br});
  if (!ai.moves_front) {
    int64_t out_rank = ai.b + rank - static_cast<int64_t>(ai.adv.size());
    out = g.op("Transpose", {out}, {{"perm", result_perm(ai.b, ai.adv.front(), out_rank)}});
  }
  return {out};
}

// aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False)  ⇒
// Transpose/Flatten to [indexed, rest], values Expanded to the indexed shape, then
// Scatter(Elements) along dim 0 with the linear index (accumulate: reduction="add" from 16,
// one-hot sum below); Reshape and Transpose back.
Values index_put(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const at::ScalarType type = a.dtype(0);
  bool accumulate = a.bool_arg(3);
  std::vector<IndexEntry> entries = read_indices(g, a, 1);
  Value self = a.tensor(0);
  Value values = a.tensor_as(2, type);
  bool any = std::any_of(entries.begin(), entries.end(), [](auto& e) { return !e.none; });
  if (!any) {  // x[...] = v: every element
    Value v = g.op("Expand", {values, shape_of(g, self)});
    return {accumulate ? g.op(type == at::kBool ? "Or" : "Add", {self, v}) : v};
  }
  AdvancedIndex ai = advanced_index(g, self, rank, entries);
  const int64_t k = static_cast<int64_t>(ai.adv.size());
  const int64_t out_rank = ai.b + rank - k;
  // values broadcast to PyTorch's result layout, then moved to [*index, *rest].
  Value updates;
  if (ai.moves_front) {
    updates = g.op("Expand", {values, ai.shape_br});
  } else {
    std::vector<int64_t> perm = result_perm(ai.b, ai.adv.front(), out_rank);
    Value shape = g.op("Gather", {ai.shape_br, g.constant_ints(perm)}, {{"axis", int64_t{0}}});
    updates = g.op("Transpose", {g.op("Expand", {values, shape})}, {{"perm", inverse(perm)}});
  }
  updates = g.op("Flatten", {updates}, {{"axis", ai.b}});  // [N, rest]
  Value index =
      g.op("Expand", {unsqueeze(g, g.op("Reshape", {ai.linear, g.constant_ints({-1})}), {1}),
                      shape_of(g, updates)});
  Value out = accumulate ? scatter_add(g, ai.flat, index, updates, 0, 2, type, /*pad=*/false)
                         : scatter_elements(g, ai.flat, index, updates, 0);
  out = g.op("Reshape", {out, shape_of(g, ai.moved)});
  if (!std::is_sorted(ai.perm.begin(), ai.perm.end())) {
    out = g.op("Transpose", {out}, {{"perm", inverse(ai.perm)}});
  }
  return {out};
}

// aten::index_select(Tensor self, int dim, Tensor index)  ⇒  Gather of the index as 1-D
Values index_select(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  Value index = a.tensor_as(2, at::kLong);
  if (rank == 0) {
    // A 0-d self gives itself (ATen; the index must be 0).
    return {a.tensor(0)};
  }
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  if (a.require_rank(2) == 0) index = g.op("Reshape", {index, g.constant_ints({1})});
  return {g.op("Gather", {a.tensor(0), index}, {{"axis", dim}})};
}

// aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)  ⇒
// GatherElements from 11; below, an exact one-hot Where + ReduceSum (index shaped like self
// outside dim)
Values gather(GraphContext& g, const Args& a) {
  int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
  return {gather_elements(g, a, 0, 2, dim)};
}

// aten::take_along_dim(Tensor self, Tensor indices, int? dim=None)  ⇒  GatherElements (gather
// rules below 11); dim=None: Gather on both flattened. Broadcasting of self against indices
// outside dim uses static shapes.
Values take_along_dim(GraphContext& g, const Args& a) {
  if (a.is_none(2)) {
    Value flat = g.op("Reshape", {a.tensor(0), g.constant_ints({-1})});
    Value idx = g.op("Reshape", {a.tensor_as(1, at::kLong), g.constant_ints({-1})});
    return {g.op("Gather", {flat, idx}, {{"axis", int64_t{0}}})};
  }
  const int64_t rank = a.require_rank(0);
  if (a.require_rank(1) != rank) g.fail("self and indices must have the same rank");
  int64_t dim = normalize_dim(a.int_arg(2), rank);
  if (same_except(a.sizes(0), a.sizes(1), dim)) return {gather_elements(g, a, 0, 1, dim)};
  auto xs = a.sizes(0), is = a.sizes(1);
  if (!xs || !is) g.fail("take_along_dim with broadcasting needs static shapes");
  // static shape: the broadcast of self and indices outside dim.
  std::vector<int64_t> xshape(*xs), ishape(*is);
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dim) continue;
    xshape[d] = ishape[d] = std::max((*xs)[d], (*is)[d]);
  }
  Value x = g.op("Expand", {a.tensor(0), g.constant_ints(xshape)});
  Value i = g.op("Expand", {a.tensor_as(1, at::kLong), g.constant_ints(ishape)});
  g.require_opset(11, "take_along_dim with broadcasting", "GatherElements");
  return {g.op("GatherElements", {x, i}, {{"axis", dim}})};
}

// aten::take(Tensor self, Tensor index)  ⇒  Gather on the flattened input (negative indices
// wrapped)
// aten::put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor
//   ⇒  self flattened, the source's elements scattered (accumulate: added, as scatter_add) at the
//   flat indices (negative ones wrapped), reshaped back
Values put(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  Value self = a.tensor(0);
  Value flat = g.op("Reshape", {self, g.constant_ints({-1})});
  Value idx = g.op("Reshape", {a.tensor_as(1, at::kLong), g.constant_ints({-1})});
  if (!known_non_negative(a.jit(1))) idx = wrap_negative(g, idx, g.op("Size", {self}));
  Value src = g.op("Reshape", {a.tensor_as(2, type), g.constant_ints({-1})});
  Value out = a.bool_arg(3) ? scatter_add(g, flat, idx, src, 0, 1, type, false)
                            : scatter_elements(g, flat, idx, src, 0);
  return {g.op("Reshape", {out, shape_of(g, self)})};
}

Values take(GraphContext& g, const Args& a) {
  Value self = a.tensor(0);
  Value flat = g.op("Reshape", {self, g.constant_ints({-1})});
  Value idx = a.tensor_as(1, at::kLong);
  if (!known_non_negative(a.jit(1))) idx = wrap_negative(g, idx, g.op("Size", {self}));
  return {g.op("Gather", {flat, idx}, {{"axis", int64_t{0}}})};
}

// aten::scatter(Tensor self, int dim, Tensor index, Tensor src | Scalar value[, str reduce]) with
// `mode` the reduce argument ("" without).
Values scatter_with(GraphContext& g, const Args& a, const std::string& mode) {
  const int64_t rank = a.require_rank(0);
  const at::ScalarType type = a.dtype(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value index = a.tensor_as(2, at::kLong);
  bool is_value = a.jit(3)->type()->cast<c10::TensorType>() == nullptr;
  Value src = is_value ? g.op("Expand", {a.tensor_as(3, type), shape_of(g, index)})
                       : fit_to_index(g, a, 3, 2);
  if (!is_value && a.dtype(3) != type) src = g.cast(src, type);
  if (mode.empty()) return {scatter_elements(g, a.tensor(0), index, src, dim)};
  if (mode == "add") {
    return {scatter_add(g, a.tensor(0), index, src, dim, rank, type,
                        !same_except(a.sizes(0), a.sizes(2), dim))};
  }
  if (mode == "multiply") {
    g.require_opset(16, "scatter with reduce='multiply'", "ScatterElements reduction='mul'");
    return {scatter_elements(g, a.tensor(0), index, src, dim, "mul")};
  }
  g.fail("scatter reduce='" + mode + "' is not supported");
}

// aten::scatter.src / .value(Tensor self, int dim, Tensor index, Tensor src | Scalar value)
//   ⇒  ScatterElements (Scatter before 11)
Values scatter(GraphContext& g, const Args& a) {
  return scatter_with(g, a, "");
}

// aten::scatter.reduce / .value_reduce(Tensor self, int dim, Tensor index, Tensor src | Scalar
//   value, *, str reduce)  ⇒  reduce="add": ScatterElements reduction add from 16, one-hot below;
//   reduce="multiply": reduction mul, opset 16
Values scatter_reduce_arg(GraphContext& g, const Args& a) {
  return scatter_with(g, a, a.str_arg(4));
}

// aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src)  ⇒  ScatterElements
// reduction="add" from 16; below, the exact one-hot sum (duplicate indices add up)
Values scatter_add_op(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const at::ScalarType type = a.dtype(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value src = fit_to_index(g, a, 3, 2);
  return {scatter_add(g, a.tensor(0), a.tensor_as(2, at::kLong), src, dim, rank, type,
                      !same_except(a.sizes(0), a.sizes(2), dim))};
}

// aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *,
//   bool include_self=True)  ⇒  sum: as scatter_add; prod: ScatterElements reduction="mul"
//   (opset 16); amax/amin: ScatterElements reduction="max"/"min" (opset 18), the one-hot
//   ReduceMax/Min below (Note [Scatter max/min before opset 18]); mean: the sum over
//   the count of values scattered into each position (floored for integers); include_self=False:
//   the hit positions are first set to the reduction's identity
Values scatter_reduce(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const at::ScalarType type = a.dtype(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  std::string mode = a.str_arg(4);
  bool include_self = a.bool_arg(5);
  Value index = a.tensor_as(2, at::kLong);
  Value src = fit_to_index(g, a, 3, 2);
  Value self = a.tensor(0);
  at::ScalarType work = type;  // the dtype self and src are reduced in
  auto reset = [&](const at::Scalar& identity) {
    Value fill =
        g.op("Expand", {g.constant(at::scalar_tensor(identity, work)), shape_of(g, index)});
    return scatter_elements(g, self, index, fill, dim);
  };
  if (mode == "sum") {
    if (!include_self) self = reset(0);
    return {scatter_add(g, self, index, src, dim, rank, type,
                        !same_except(a.sizes(0), a.sizes(2), dim))};
  }
  if (mode == "mean" && type != at::kBool) {
    // ATen: the sum (self included or not) divided by the number of values reduced into each
    // position, floored for integers; positions no index hits keep self (count 0 taken as 1).
    const bool pad = !same_except(a.sizes(0), a.sizes(2), dim);
    if (!include_self) self = reset(0);
    Value sum = scatter_add(g, self, index, src, dim, rank, type, pad);
    Value start =
        g.op("Expand", {g.constant_scalar(include_self ? 1 : 0, type), shape_of(g, self)});
    Value ones = g.op("Expand", {g.constant_scalar(1, type), shape_of(g, index)});
    Value count = scatter_add(g, start, index, ones, dim, rank, type, pad);
    if (at::isFloatingType(type)) {
      count = g.op("Max", {count, g.constant_scalar(1, type)});
      return {g.op("Div", {sum, count})};
    }
    // integers (Max takes them from opset 12 only): a count of 0 becomes 1
    count = g.op("Add", {count, g.cast(g.op("Equal", {count, g.constant_scalar(0, type)}), type)});
    // floor(sum / count) for a positive count: the truncated quotient, less 1 where the
    // remainder is negative
    Value q = g.op("Div", {sum, count});
    Value r = g.op("Sub", {sum, g.op("Mul", {q, count})});
    return {g.op("Sub", {q, g.cast(g.op("Less", {r, g.constant_scalar(0, type)}), type)})};
  }
  auto require = [&](int opset, const char* reduction) {
    g.require_opset(opset, fmt::format("scatter_reduce with reduce='{}'", mode),
                    fmt::format("ScatterElements reduction='{}'", reduction));
  };
  if (mode == "prod") {
    require(16, "mul");
    if (!include_self) self = reset(1);
    return {scatter_elements(g, self, index, src, dim, "mul")};
  }
  if (mode == "amax" || mode == "amin") {
    const bool max = mode == "amax";
    const bool onehot = !g.has(OnnxFeature::kScatterMaxMin);
    if (type == at::kBool) {
      // Bools reduce as uint8 (max is Or, min is And); as int32 where ReduceMax/Min take no
      // uint8 (before 12).
      work = g.has(OnnxFeature::kReduceMaxMin8Bit) ? at::kByte : at::kInt;
    } else if (onehot && !g.has(OnnxFeature::kReduceMaxMin8Bit) &&
               (type == at::kByte || type == at::kChar || type == at::kShort)) {
      work = at::kInt;  // ReduceMax/Min take 8-bit integers from 12 only; int16 never
    } else if (onehot && type == at::kShort) {
      work = at::kInt;
    } else if (onehot && !g.has(OnnxFeature::kReduceMaxMinBFloat16) && type == at::kBFloat16) {
      work = at::kFloat;  // bfloat16 from 13
    }
    if (work != type) {
      self = g.cast(self, work);
      src = g.cast(src, work);
    }
    if (!include_self) {
      // The identity of max is the lowest value of the dtype (-inf for floats), of min the highest.
      at::Scalar identity = AT_DISPATCH_ALL_TYPES_AND2(
          at::kHalf, at::kBFloat16, work, "scatter_reduce_identity", [&]() -> at::Scalar {
            using Limits = std::numeric_limits<scalar_t>;
            if (Limits::has_infinity) return max ? -Limits::infinity() : Limits::infinity();
            return max ? Limits::lowest() : Limits::max();
          });
      self = reset(identity);
    }
    Value out = onehot ? scatter_extremum_onehot(g, self, index, src, dim, rank, work, max,
                                                 !same_except(a.sizes(0), a.sizes(2), dim))
                       : scatter_elements(g, self, index, src, dim, max ? "max" : "min");
    return {work == type ? out : g.cast(out, type)};
  }
  g.fail("scatter_reduce with reduce='" + mode +
         "' is not supported (sum, prod, mean, amax and amin are)");
}

// aten::index_copy(Tensor self, int dim, Tensor index, Tensor source)  ⇒  ScatterElements
// (Scatter before 11) with the index expanded to source's shape
Values index_copy(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value source = a.tensor_as(3, a.dtype(0));
  if (rank == 0) return {source};
  Value index = expand_index(g, a.tensor_as(2, at::kLong), rank, dim, shape_of(g, source));
  return {scatter_elements(g, a.tensor(0), index, source, dim)};
}

// aten::index_fill(Tensor self, int dim, Tensor index, Scalar|Tensor value)  ⇒  ScatterElements
// (Scatter before 11) of the value expanded over the selected slices (negative indices wrapped)
Values index_fill(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) {
    // A 0-d self: its one element is the slice of index 0 (-1), which any index selects.
    Value fill = a.tensor_as(3, a.dtype(0));
    Value any = g.op("Greater", {g.op("Size", {a.tensor(2)}), g.constant_scalar(0, at::kLong)});
    return {where(g, any, fill, a.tensor(0), a.dtype(0))};
  }
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value self = a.tensor(0);
  Value idx = a.tensor_as(2, at::kLong);
  if (!known_non_negative(a.jit(2))) idx = wrap_negative(g, idx, dim_size(g, self, dim));
  Value shape = shape_with_dim(g, self, dim, idx);
  Value fill = g.op("Expand", {a.tensor_as(3, a.dtype(0)), shape});
  return {scatter_elements(g, self, expand_index(g, idx, rank, dim, shape), fill, dim)};
}

// aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1)  ⇒
// ScatterElements reduction="add" from 16 with the index expanded to source's shape; one-hot
// sum below (duplicate indices add up). PyTorch adds each source slice (source.select(dim, i)) to
// its self slice with broadcasting (a source [n, 1, 1], [n] or [n, k] into self [m, j, k] along
// dim 0): the source is first broadcast to self's shape with dim sized n — its slices aligned
// from the right, as broadcasting does, when it has fewer dims than self.
Values index_add(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const at::ScalarType type = a.dtype(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value source = a.tensor_as(3, type);
  if (!a.is_constant(4) || a.float_arg(4) != 1.0) {
    source = g.op("Mul", {source, a.tensor_as(4, type)});
  }
  if (rank == 0) return {g.op("Add", {a.tensor(0), source})};
  const int64_t source_rank = a.require_rank(3);
  if (source_rank > rank || dim >= source_rank) {
    g.fail("index_add's source must have dim " + std::to_string(dim) +
           " and at most self's dims (PyTorch rejects it otherwise)");
  }
  const Value target = shape_with_dim(g, a.tensor(0), dim, a.tensor(2));
  if (source_rank < rank) {
    // [.., n at dim, ..] → [n, 1 (missing dims), source slice dims], expanded to [n, self slice],
    // then n moved back to dim.
    std::vector<int64_t> to_front{dim}, back;
    for (int64_t d = 0; d < source_rank; ++d) {
      if (d != dim) to_front.push_back(d);
    }
    std::vector<int64_t> missing;
    for (int64_t d = 1; d <= rank - source_rank; ++d) missing.push_back(d);
    Value front = unsqueeze(g, transpose(g, source, to_front), missing);
    std::vector<int64_t> self_to_front{dim};
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim) self_to_front.push_back(d);
    }
    Value expanded = g.op("Expand", {front, g.op("Gather", {target, g.constant_ints(self_to_front)},
                                                 {{"axis", int64_t{0}}})});
    for (int64_t d = 0; d < rank; ++d) back.push_back(d < dim ? d + 1 : d == dim ? 0 : d);
    source = transpose(g, expanded, back);
  } else if (!same_except(a.sizes(0), a.sizes(3), dim)) {
    source = g.op("Expand", {source, target});
  }
  Value index = expand_index(g, a.tensor_as(2, at::kLong), rank, dim, shape_of(g, source));
  return {scatter_add(g, a.tensor(0), index, source, dim, rank, type, /*pad=*/false)};
}
}  // namespace

void register_index(Registry& r) {
  r.add("aten::select", from(9), select_op);
  r.add("aten::slice", from(9), slice_op);
  r.add("aten::index", from(9), index_op);
  // aten::_unsafe_index.Tensor(Tensor self, Tensor?[] indices): torch.export's core form of
  // index (upsampling decompositions)
  r.add("aten::_unsafe_index", from(9), index_op);
  r.add("aten::index_put", from(9), index_put);
  r.add("aten::index_select", from(9), index_select);
  r.add("aten::gather", from(9), gather);
  r.add("aten::take_along_dim", from(9), take_along_dim);
  r.add("aten::take", from(9), take);
  r.add("aten::put", from(9), put);
  // aten::argwhere(Tensor self) -> Tensor  ⇒  as nonzero
  r.add("aten::scatter.src", from(9), scatter);
  r.add("aten::scatter.value", from(9), scatter);
  r.add("aten::scatter.reduce", from(9), scatter_reduce_arg);
  r.add("aten::scatter.value_reduce", from(9), scatter_reduce_arg);
  r.add("aten::scatter_add", from(9), scatter_add_op);
  r.add("aten::scatter_reduce", from(9), scatter_reduce);
  r.add("aten::index_copy", from(9), index_copy);
  r.add("aten::index_fill", from(9), index_fill);
  r.add("aten::index_add", from(9), index_add);
}

}  // namespace torchonnx::symbolic::ops
