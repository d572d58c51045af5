// Shape manipulation: view/reshape/flatten/ravel/unflatten, cat/stack/hstack/vstack/column_stack/
// dstack, atleast_Nd, transpose/permute/movedim/mT/mH/channel_shuffle, expand/broadcast_to/
// repeat/tile/repeat_interleave, broadcast_tensors/meshgrid, and the ops that return their input
// (clone, detach, ...). squeeze/unsqueeze are in squeeze.cpp; the ops that cut a tensor into
// pieces or take part of it in slicing.cpp.
//
// Output shapes are computed in the graph (Shape, Slice, Concat) where the op allows it, so that
// the lowering needs only the input's rank; ops whose number of outputs or gather indices depend
// on a dim size read it from type propagation (marked "static shape").
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/shape_util.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;

// The rank of output k, from type propagation.
std::optional<int64_t> output_rank(const Args& a, size_t k = 0) {
  if (auto t = a.node()->output(k)->type()->cast<c10::TensorType>()) {
    if (auto d = t->dim()) return static_cast<int64_t>(*d);
  }
  return std::nullopt;
}

int64_t require_output_rank(GraphContext& g, const Args& a, size_t k = 0) {
  auto r = output_rank(a, k);
  if (!r) g.fail("the rank of the result is unknown; type propagation could not compute it");
  return *r;
}

// Reshape to a shape given as argument `i` (constant int[] or a 1-D tensor built in the graph).
Value reshape_to(GraphContext& g, const Args& a, const Value& x, size_t i) {
  if (a.is_constant(i)) {
    Ints shape = a.int_list(i);
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      // PyTorch's 0 is a size (the result is empty): allowzero from opset 14; before, an empty
      // tensor of that shape (its values do not matter).
      if (g.has(OnnxFeature::kReshapeAllowZero)) {
        return g.op("Reshape", {x, g.constant_ints(shape)}, {{"allowzero", 1}});
      }
      at::ScalarType type = a.dtype(0);
      if (type == at::ScalarType::Undefined) g.fail("the input's dtype is unknown");
      return g.op("ConstantOfShape", {g.constant_ints(shape)},
                  {{"value", at::zeros({1}, at::TensorOptions().dtype(type))}});
    }
    return g.op("Reshape", {x, g.constant_ints(shape)});
  }
  return g.op("Reshape", {x, a.tensor_as(i, at::kLong)});
}

Ints identity_perm(int64_t rank) {
  Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

// Repeats given as argument `i` (constant int[] or a list built in the graph) applied to `x`,
// unsqueezed first when the repeats outnumber its dims (Tile needs equal ranks).
Value tile_by(GraphContext& g, const Args& a, size_t i, int64_t reps_count, bool pad_front) {
  const int64_t rank = a.require_rank(0);
  Value x = a.tensor(0);
  Value reps;
  if (a.is_constant(i)) {
    Ints r = a.int_list(i);
    if (pad_front && static_cast<int64_t>(r.size()) < rank) r.insert(r.begin(), rank - r.size(), 1);
    reps_count = static_cast<int64_t>(r.size());
    reps = g.constant_ints(r);
  } else {
    reps = a.tensor_as(i, at::kLong);
    if (pad_front && reps_count < rank) {
      reps = concat_1d(g, {g.constant_ints(Ints(rank - reps_count, 1)), reps});
      reps_count = rank;
    }
  }
  if (reps_count > rank) {
    Ints axes(reps_count - rank);
    std::iota(axes.begin(), axes.end(), 0);
    x = unsqueeze(g, x, axes);
  }
  return g.op("Tile", {x, reps});
}

// Indices j repeated repeats[j] times (repeats: 1-D int64 of n elements), computed in the graph:
// out[p] = #{j : cumsum(repeats)[j] <= p}. Needs opset 11 (CumSum, Range).
Value repeated_indices(GraphContext& g, const Value& repeats) {
  Value cs = g.op("CumSum", {repeats, g.constant(at::scalar_tensor(0, at::kLong))});
  Value total = reduce(g, "ReduceSum", repeats, {0}, /*keepdims=*/false);
  Value one = g.constant(at::scalar_tensor(1, at::kLong));
  Value next = g.op("Range", {one, g.op("Add", {total, one}), one});  // p + 1
  Value below = g.op("Less", {unsqueeze(g, cs, {0}), unsqueeze(g, next, {1})});
  return reduce(g, "ReduceSum", g.cast(below, at::kLong), {1}, /*keepdims=*/false);
}

// movedim's permutation: source dims go to destination, the others keep their order.
Ints movedim_perm(GraphContext& g, int64_t rank, Ints src, Ints dst) {
  if (src.size() != dst.size()) g.fail("movedim needs as many source as destination dims");
  Ints perm(rank, -1);
  std::vector<bool> used(rank, false);
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t s = normalize_dim(src[i], rank), d = normalize_dim(dst[i], rank);
    perm[d] = s;
    used[s] = true;
  }
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] != -1) continue;
    while (used[next]) ++next;
    perm[d] = next++;
  }
  return perm;
}

// The elements of a Tensor[] argument with their dtypes and sizes (when the list is built in the
// graph by prim::ListConstruct; otherwise the list's own element type).
struct ListItem {
  Value value;
  at::ScalarType dtype;
  std::optional<Ints> sizes;
};

std::vector<ListItem> list_items(GraphContext& g, const Args& a, size_t i) {
  Values values = a.tensor_list(i);
  std::vector<ListItem> items;
  const torch::jit::Node* producer = a.jit(i)->node();
  for (size_t k = 0; k < values.size(); ++k) {
    if (producer->kind() == c10::prim::ListConstruct && k < producer->inputs().size()) {
      Args inner(g, producer);
      items.push_back({values[k], inner.dtype(k), inner.sizes(k)});
    } else {
      items.push_back({values[k], at::ScalarType::Undefined, std::nullopt});
    }
  }
  return items;
}

// `x` (of `rank`) with the unit dims torch.atleast_{1,2,3}d add to reach rank `n`: 0-d becomes
// [1]*n, 1-D [N] becomes [1, N] (n = 2) or [1, N, 1] (n = 3), 2-D [M, N] becomes [M, N, 1].
Value at_least(GraphContext& g, const Value& x, int64_t rank, int64_t n) {
  if (rank >= n) return x;
  Ints axes;
  if (rank == 0) {
    axes.resize(n);
    std::iota(axes.begin(), axes.end(), 0);
  } else if (rank == 1) {
    axes = n == 2 ? Ints{0} : Ints{0, 2};
  } else {
    axes = {2};
  }
  return unsqueeze(g, x, axes);
}

// The elements of Tensor[] argument `i` with their ranks (a list of static length built by
// prim::ListConstruct, whose elements' ranks type propagation knows).
std::vector<std::pair<Value, int64_t>> ranked_items(GraphContext& g, const Args& a, size_t i) {
  const std::string op = a.node()->kind().toUnqualString();
  if (a.is_sequence(i) || a.jit(i)->node()->kind() != c10::prim::ListConstruct) {
    g.fail(op +
           " needs a list of tensors built in the graph (a list literal) to know each tensor's "
           "rank; lists of run-time length are not supported");
  }
  Values values = a.tensor_list(i);
  Args inner(g, a.jit(i)->node());
  std::vector<std::pair<Value, int64_t>> items;
  for (size_t k = 0; k < values.size(); ++k) items.emplace_back(values[k], inner.require_rank(k));
  return items;
}

// aten::atleast_Nd(Tensor self) / .Sequence(Tensor[] tensors): each tensor with at least n dims.
Converter at_least_nd(int64_t n) {
  return [n](GraphContext& g, const Args& a) -> Values {
    if (!is_tensor_list(a.jit(0))) return {at_least(g, a.tensor(0), a.require_rank(0), n)};
    Values out;
    for (const auto& [v, rank] : ranked_items(g, a, 0)) out.push_back(at_least(g, v, rank, n));
    return out;
  };
}

// hstack (horizontal) / vstack: atleast_1d / atleast_2d of each tensor, then Concat along dim 1
// (hstack of tensors of rank >= 2) or dim 0, in the promoted dtype.
Converter stack_along(bool horizontal) {
  return [horizontal](GraphContext& g, const Args& a) -> Values {
    const at::ScalarType type = a.output_dtype();
    const int64_t n = horizontal ? 1 : 2;
    Values parts;
    int64_t first_rank = -1;
    for (const auto& [v, rank] : ranked_items(g, a, 0)) {
      const torch::jit::Value* item = a.jit(0)->node()->input(parts.size());
      parts.push_back(cast_if(g, at_least(g, v, rank, n), dtype_of(item->type()), type));
      if (first_rank < 0) first_rank = std::max(rank, n);
    }
    if (parts.empty()) g.fail(std::string(a.node()->kind().toUnqualString()) + " of no tensors");
    const int64_t axis = horizontal && first_rank > 1 ? 1 : 0;
    if (parts.size() == 1) return {parts[0]};
    return {g.op("Concat", parts, {{"axis", axis}})};
  };
}

// column_stack (each 0-d/1-D tensor as a column [N, 1], others as they are; Concat along dim 1)
// and dstack (atleast_3d of each; Concat along dim 2), in the promoted dtype.
Converter stack_reshaped(bool columns) {
  return [columns](GraphContext& g, const Args& a) -> Values {
    const at::ScalarType type = a.output_dtype();
    Values parts;
    for (const auto& [v, rank] : ranked_items(g, a, 0)) {
      const torch::jit::Value* item = a.jit(0)->node()->input(parts.size());
      Value part =
          columns ? (rank <= 1 ? reshape_const(g, v, {-1, 1}) : v) : at_least(g, v, rank, 3);
      parts.push_back(cast_if(g, part, dtype_of(item->type()), type));
    }
    if (parts.empty()) g.fail(std::string(a.node()->kind().toUnqualString()) + " of no tensors");
    if (parts.size() == 1) return {parts[0]};
    return {g.op("Concat", parts, {{"axis", int64_t{columns ? 1 : 2}}})};
  };
}

// ----- view / reshape / flatten ---------------------------------------------------------------

// aten::view.dtype(Tensor self, ScalarType dtype)  ⇒  identity for its own dtype only
Values view_dtype(GraphContext& g, const Args& a) {
  if (a.output_dtype() == a.dtype(0)) return {a.tensor(0)};
  g.fail(
      "view(dtype) reinterprets the bits of another dtype, which ONNX cannot express; "
      "use .to(dtype) for a value conversion");
}

// aten::view(Tensor self, SymInt[] size) / aten::reshape(Tensor self, SymInt[] shape)
//   ⇒  Reshape (a 0 in the shape: allowzero from 14, an empty ConstantOfShape before); a node
//      without a schema whose argument 1 is an int is view.dtype
Values view(GraphContext& g, const Args& a) {
  if (is_int_type(a.jit(1))) return view_dtype(g, a);
  return {reshape_to(g, a, a.tensor(0), 1)};
}

// aten::_reshape_from_tensor(Tensor self, Tensor shape)  ⇒  Reshape(self, Cast(shape, int64))
Values reshape_from_tensor(GraphContext& g, const Args& a) {
  return {g.op("Reshape", {a.tensor(0), a.tensor_as(1, at::kLong)})};
}

// aten::view_as / reshape_as(Tensor self, Tensor other)  ⇒  Reshape(self, Shape(other))
Values view_as(GraphContext& g, const Args& a) {
  return {reshape_exact(g, a.tensor(0), shape_of(g, a.tensor(1)))};
}

// aten::flatten.using_ints(Tensor self, int start_dim=0, int end_dim=-1)
//   ⇒  Flatten(axis=1) for (1, -1), Reshape(-1) for all dims, otherwise Reshape to
//      Concat(Shape[:start], ReduceProd(Shape[start:end+1]), Shape[end+1:])
Values flatten(GraphContext& g, const Args& a) {
  if (!is_int_type(a.jit(1))) g.fail("flatten with named dims is not supported");
  const int64_t rank = a.require_rank(0);
  Value x = a.tensor(0);
  if (rank == 0) return {reshape_const(g, x, {1})};
  int64_t start = normalize_dim(a.int_arg(1), rank);
  int64_t end = normalize_dim(a.int_arg(2), rank);
  if (start == end) return {x};
  if (start == 1 && end == rank - 1) return {g.op("Flatten", {x}, {{"axis", 1}})};
  if (start == 0 && end == rank - 1) return {reshape_const(g, x, {-1})};
  Value shape = shape_of(g, x);
  Values parts;
  if (start > 0) parts.push_back(shape_part(g, shape, 0, start));
  parts.push_back(reduce(g, "ReduceProd", shape_part(g, shape, start, end + 1), {0}, true));
  if (end + 1 < rank) parts.push_back(shape_part(g, shape, end + 1, rank));
  return {reshape_exact(g, x, concat_1d(g, parts))};
}

// aten::ravel(Tensor self)  ⇒  Reshape to [-1]
Values ravel(GraphContext& g, const Args& a) {
  return {reshape_const(g, a.tensor(0), {-1})};
}

// aten::unflatten.int(Tensor self, int dim, int[] sizes)
//   ⇒  Reshape to Concat(Shape[:dim], sizes, Shape[dim+1:])
Values unflatten(GraphContext& g, const Args& a) {
  if (!is_int_type(a.jit(1))) g.fail("unflatten with named dims is not supported");
  const int64_t rank = a.require_rank(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  Ints sizes = a.int_list(2);
  Value x = a.tensor(0);
  Value shape = shape_of(g, x);
  Values parts;
  if (dim > 0) parts.push_back(shape_part(g, shape, 0, dim));
  bool infers = std::find(sizes.begin(), sizes.end(), -1) != sizes.end();
  if (infers) {
    // -1: the unflattened dim's size divided by the product of the others.
    int64_t known = 1;
    for (int64_t s : sizes) known *= s == -1 ? 1 : s;
    Value inferred = g.op("Div", {shape_part(g, shape, dim, dim + 1), g.constant_ints({known})});
    for (int64_t s : sizes) parts.push_back(s == -1 ? inferred : g.constant_ints({s}));
  } else {
    parts.push_back(g.constant_ints(sizes));
  }
  if (dim + 1 < rank) parts.push_back(shape_part(g, shape, dim + 1, rank));
  return {reshape_exact(g, x, concat_1d(g, parts))};
}

// ----- cat / stack ----------------------------------------------------------------------------

// aten::cat(Tensor[] tensors, int dim=0)  ⇒  Concat in the promoted dtype; 1-D empty tensors
// (which torch.cat skips whatever the others' rank) left out; ConcatFromSequence for a list of
// run-time length
Values cat(GraphContext& g, const Args& a) {
  if (!is_int_type(a.jit(1))) g.fail("cat with a named dim is not supported");
  const int64_t rank = require_output_rank(g, a);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  at::ScalarType type = a.output_dtype();
  if (a.is_sequence(0)) {  // a list of run-time length
    return {g.op("ConcatFromSequence", {a.sequence(0, type)}, {{"axis", dim}})};
  }
  Values parts;
  for (const ListItem& item : list_items(g, a, 0)) {
    if (rank != 1 && item.sizes && *item.sizes == Ints{0}) continue;
    parts.push_back(cast_if(g, item.value, item.dtype, type));
  }
  if (parts.empty()) g.fail("cat of no tensors");
  if (parts.size() == 1) return {parts[0]};
  return {g.op("Concat", parts, {{"axis", dim}})};
}

// aten::stack(Tensor[] tensors, int dim=0)  ⇒  Unsqueeze each, Concat (promoted dtype);
// ConcatFromSequence(new_axis=1) for a list of run-time length
Values stack(GraphContext& g, const Args& a) {
  const int64_t rank = require_output_rank(g, a);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  at::ScalarType type = a.output_dtype();
  if (a.is_sequence(0)) {  // a list of run-time length
    return {g.op("ConcatFromSequence", {a.sequence(0, type)}, {{"axis", dim}, {"new_axis", 1}})};
  }
  Values parts;
  for (const ListItem& item : list_items(g, a, 0)) {
    parts.push_back(unsqueeze(g, cast_if(g, item.value, item.dtype, type), {dim}));
  }
  if (parts.size() == 1) return {parts[0]};
  return {g.op("Concat", parts, {{"axis", dim}})};
}

// ----- transpose / permute / movedim ---------------------------------------------------------

// aten::transpose.int(Tensor self, int dim0, int dim1)  ⇒  Transpose(perm)
// (the script compiler normalizes swapaxes/swapdims to transpose)
Values transpose_op(GraphContext& g, const Args& a) {
  if (!is_int_type(a.jit(1))) g.fail("transpose with named dims is not supported");
  const int64_t rank = a.require_rank(0);
  if (rank < 2) return {a.tensor(0)};
  Ints perm = identity_perm(rank);
  std::swap(perm[normalize_dim(a.int_arg(1), rank)], perm[normalize_dim(a.int_arg(2), rank)]);
  return {transpose(g, a.tensor(0), perm)};
}

// aten::permute(Tensor self, int[] dims)  ⇒  Transpose(perm)
Values permute(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  Ints perm = a.int_list(1);
  for (auto& d : perm) d = normalize_dim(d, rank);
  return {transpose(g, a.tensor(0), perm)};
}

// aten::t(Tensor self)  ⇒  Transpose for 2-D, identity below
Values t(GraphContext& g, const Args& a) {
  if (a.require_rank(0) < 2) return {a.tensor(0)};
  return {transpose(g, a.tensor(0), {1, 0})};
}

// aten::numpy_T(Tensor self)  ⇒  Transpose reversing all dims
Values numpy_T(GraphContext& g, const Args& a) {
  Ints perm = identity_perm(a.require_rank(0));
  std::reverse(perm.begin(), perm.end());
  return {transpose(g, a.tensor(0), perm)};
}

// aten::mT / mH / matrix_H (x.H of a matrix) (Tensor self)  ⇒  Transpose of the last two dims (rank
// >= 2; mH also conjugates, which is nothing for real tensors; a 0-d tensor is itself, as in
// ATen). adjoint() is normalized to mH before the converters.
Values matrix_transpose(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {a.tensor(0)};
  if (rank < 2) g.fail("a matrix transpose of a 1-D tensor (PyTorch requires rank 0 or >= 2)");
  if (at::isComplexType(a.dtype(0))) g.fail("the conjugate transpose of a complex tensor");
  Ints perm = identity_perm(rank);
  std::swap(perm[rank - 2], perm[rank - 1]);
  return {transpose(g, a.tensor(0), perm)};
}

// aten::channel_shuffle / native_channel_shuffle(Tensor self, int groups)
//   ⇒  Reshape [N, groups, C/groups, rest], Transpose groups and C/groups, Reshape back to the
//      input's shape (static channel count; the rest as themselves when static, as one dim
//      otherwise)
Values channel_shuffle(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank < 3) g.fail("channel_shuffle of a tensor of rank < 3 (PyTorch requires > 2)");
  const int64_t groups = a.int_arg(1);
  const auto channels = a.dim_size(0, 1);
  if (!channels || *channels < 0) g.fail("channel_shuffle needs the static number of channels");
  if (groups <= 0 || *channels % groups != 0) {
    g.fail("channel_shuffle: groups must be positive and divide the number of channels");
  }
  auto sizes = a.sizes(0);
  const bool all_static =
      sizes && std::all_of(sizes->begin(), sizes->end(), [](int64_t d) { return d >= 0; });
  Ints split{all_static ? (*sizes)[0] : 0, groups, *channels / groups};
  if (all_static) {
    split.insert(split.end(), sizes->begin() + 2, sizes->end());
  } else {
    split.push_back(-1);
  }
  Value x = a.tensor(0);
  Value y = g.op("Reshape", {x, g.constant_ints(split)});
  Ints perm = identity_perm(static_cast<int64_t>(split.size()));
  std::swap(perm[1], perm[2]);
  y = transpose(g, y, perm);
  return {all_static ? g.op("Reshape", {y, g.constant_ints(*sizes)})
                     : reshape_exact(g, y, shape_of(g, x))};
}

// aten::movedim.int / movedim.intlist(Tensor self, int[] | int source, int[] | int destination)
//   ⇒  Transpose(perm) (moveaxis is normalized to movedim)
Values movedim(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  return {transpose(g, a.tensor(0), movedim_perm(g, rank, a.int_list(1), a.int_list(2)))};
}

// ----- expand / repeat -----------------------------------------------------------------------

// aten::expand(Tensor self, SymInt[] size, *, bool implicit) / broadcast_to(Tensor self,
//   SymInt[] size)  ⇒  Expand(self, |size|): a -1 becomes 1, which Expand broadcasts to the
//   input's size (no static shape needed)
Values expand(GraphContext& g, const Args& a) {
  Value shape;
  if (a.is_constant(1)) {
    Ints sizes = a.int_list(1);
    for (auto& s : sizes) s = s == -1 ? 1 : s;
    shape = g.constant_ints(sizes);
  } else {
    shape = g.op("Abs", {a.tensor_as(1, at::kLong)});
  }
  return {g.op("Expand", {a.tensor(0), shape})};
}

// aten::expand_as(Tensor self, Tensor other)  ⇒  Expand(self, Shape(other))
Values expand_as(GraphContext& g, const Args& a) {
  return {g.op("Expand", {a.tensor(0), shape_of(g, a.tensor(1))})};
}

// aten::repeat(Tensor self, SymInt[] repeats)  ⇒  Tile (Unsqueeze first for extra leading dims)
Values repeat(GraphContext& g, const Args& a) {
  auto n = list_length(a, 1);
  if (!n) n = output_rank(a);
  if (!n) g.fail("the number of repeats is unknown");
  return {tile_by(g, a, 1, *n, /*pad_front=*/false)};
}

// aten::tile(Tensor self, int[] dims)  ⇒  Tile (dims padded with leading 1s to the rank)
Values tile(GraphContext& g, const Args& a) {
  auto n = list_length(a, 1);
  if (!n) g.fail("the number of repeats is unknown");
  return {tile_by(g, a, 1, *n, /*pad_front=*/true)};
}

// aten::repeat_interleave.Tensor(Tensor repeats, *, int? output_size)
//   ⇒  the repeated indices: a constant for constant repeats, else computed with CumSum/Range
//      (opset 11)
Values repeat_interleave_indices(GraphContext& g, const Args& a) {
  if (a.is_constant(0)) {
    at::Tensor reps = a.constant(0).toTensor().to(at::kLong);
    return {g.constant(at::repeat_interleave(reps))};
  }
  g.require_opset(11, "repeat_interleave of repeats computed in the graph", "CumSum");
  return {repeated_indices(g, reshape_const(g, a.tensor_as(0, at::kLong), {-1}))};
}

// aten::repeat_interleave.self_int(Tensor self, int repeats, int? dim, *, int? output_size)
//   ⇒  Unsqueeze, Tile, Reshape (all opsets);
// aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim, *, int? output_size)
//   ⇒  Gather of the repeated indices: constants for constant repeats (Tile as for an int for a
//      single count along a dynamic dim), else computed with CumSum/Range (opset 11)
Values repeat_interleave_self(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  int64_t rank = a.require_rank(0);
  std::optional<int64_t> dim_arg = a.optional_int(2);
  std::optional<Ints> sizes = a.sizes(0);
  int64_t dim = 0;
  if (!dim_arg) {
    x = reshape_const(g, x, {-1});
    if (sizes) {
      sizes = Ints{
          std::accumulate(sizes->begin(), sizes->end(), int64_t{1}, std::multiplies<int64_t>())};
    }
    rank = 1;
  } else {
    if (rank == 0) {
      x = reshape_const(g, x, {1});
      rank = 1;
      if (sizes) sizes = Ints{1};
    }
    dim = normalize_dim(*dim_arg, rank);
  }
  // One repeat count for every element (an int, or a constant tensor of one element along a dim
  // whose size is dynamic): Tile.
  std::optional<int64_t> one_count;
  if (is_int_type(a.jit(1)) && a.is_constant(1)) {
    one_count = a.int_arg(1);
  } else if (a.is_constant(1) && a.constant(1).toTensor().numel() == 1 &&
             (!sizes || (*sizes)[dim] < 0)) {
    one_count = a.constant(1).toTensor().item<int64_t>();
  }
  if (one_count) {
    const int64_t reps = *one_count;
    Ints tiles(rank + 1, 1);
    tiles[dim + 1] = reps;
    Value tiled = g.op("Tile", {unsqueeze(g, x, {dim + 1}), g.constant_ints(tiles)});
    Value shape = shape_of(g, x);
    Values parts;
    if (dim > 0) parts.push_back(shape_part(g, shape, 0, dim));
    parts.push_back(g.op("Mul", {shape_part(g, shape, dim, dim + 1), g.constant_ints({reps})}));
    if (dim + 1 < rank) parts.push_back(shape_part(g, shape, dim + 1, rank));
    return {reshape_exact(g, tiled, concat_1d(g, parts))};
  }
  if (a.is_constant(1) && !is_int_type(a.jit(1))) {
    // Constant repeats: the gather indices are constants.
    at::Tensor reps = a.constant(1).toTensor().to(at::kLong).reshape({-1});
    int64_t n = reps.numel();
    if (n == 1) {
      // static size (a dynamic one took the Tile above): one count for every element of the dim.
      n = (*sizes)[dim];
      reps = reps.expand({n}).contiguous();
    }
    at::Tensor idx = at::repeat_interleave(at::arange(n), reps);
    return {g.op("Gather", {x, g.constant(idx)}, {{"axis", dim}})};
  }
  g.require_opset(11, "repeat_interleave with repeats computed in the graph", "CumSum");
  Value n = shape_part(g, shape_of(g, x), dim, dim + 1);
  Value reps = g.op("Expand", {reshape_const(g, a.tensor_as(1, at::kLong), {-1}), n});
  return {g.op("Gather", {x, repeated_indices(g, reps)}, {{"axis", dim}})};
}

// ----- broadcast_tensors / meshgrid -----------------------------------------------------------

// aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]
//   ⇒  Expand each to the common shape, itself Shape of the tensors expanded in a chain
Values broadcast_tensors(GraphContext& g, const Args& a) {
  Values items = a.tensor_list(0);
  if (items.size() <= 1) return items;
  Value common = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    common = g.op("Expand", {common, shape_of(g, items[i])});
  }
  Value shape = shape_of(g, common);
  Values out;
  for (const Value& t : items) out.push_back(g.op("Expand", {t, shape}));
  return out;
}

// aten::meshgrid(Tensor[] tensors) / meshgrid.indexing(Tensor[] tensors, *, str indexing)
//   ⇒  each 1-D tensor reshaped along its own axis and expanded to Concat of their sizes
//      ('xy' swaps the first two axes)
Values meshgrid(GraphContext& g, const Args& a) {
  Values items = a.tensor_list(0);
  std::string indexing = a.size() > 1 ? a.str_arg(1) : "ij";
  if (indexing != "ij" && indexing != "xy") g.fail("unknown meshgrid indexing '" + indexing + "'");
  const auto n = static_cast<int64_t>(items.size());
  Ints axis = identity_perm(n);
  if (indexing == "xy" && n >= 2) std::swap(axis[0], axis[1]);
  Values flat(n), lengths(n);
  for (int64_t i = 0; i < n; ++i) {
    flat[i] = reshape_const(g, items[i], {-1});
    lengths[axis[i]] = shape_of(g, flat[i]);
  }
  Value shape = concat_1d(g, lengths);
  Values out;
  for (int64_t i = 0; i < n; ++i) {
    Ints view(n, 1);
    view[axis[i]] = -1;
    out.push_back(g.op("Expand", {reshape_const(g, flat[i], view), shape}));
  }
  return out;
}

// ----- shape as tensor, identities ----------------------------------------------------------

// aten::_shape_as_tensor(Tensor self) / prim::shape(Tensor self)  ⇒  Shape
Values shape_as_tensor(GraphContext& g, const Args& a) {
  return {shape_of(g, a.tensor(0))};
}

// aten::alias/clone/contiguous/detach/lift/resolve_conj/resolve_neg/_conj/conj_physical
//   ⇒  the input (real tensors only: conjugation and negation bits are no-ops on them)
Values identity(GraphContext& g, const Args& a) {
  if (at::isComplexType(a.dtype(0))) g.fail("complex tensors are not supported by ONNX");
  return {a.tensor(0)};
}

}  // namespace

void register_shape(Registry& r) {
  r.add("aten::view", from(9), view);
  r.add("aten::view.dtype", from(9), view_dtype);
  r.add("aten::reshape", from(9), view);
  // aten::_unsafe_view(Tensor self, SymInt[] size): torch.export's core form of view/reshape
  r.add("aten::_unsafe_view", from(9), view);
  r.add("aten::_reshape_from_tensor", from(9), reshape_from_tensor);
  r.add("aten::view_as", from(9), view_as);
  r.add("aten::reshape_as", from(9), view_as);
  r.add("aten::flatten", from(9), flatten);
  r.add("aten::ravel", from(9), ravel);
  r.add("aten::unflatten", from(9), unflatten);

  r.add("aten::cat", from(9), cat);
  r.add("aten::stack", from(9), stack);
  r.add("aten::atleast_1d", from(9), at_least_nd(1));
  r.add("aten::atleast_2d", from(9), at_least_nd(2));
  r.add("aten::atleast_3d", from(9), at_least_nd(3));
  r.add("aten::hstack", from(9), stack_along(/*horizontal=*/true));
  r.add("aten::vstack", from(9), stack_along(/*horizontal=*/false));
  r.add("aten::column_stack", from(9), stack_reshaped(/*columns=*/true));
  r.add("aten::dstack", from(9), stack_reshaped(/*columns=*/false));

  r.add("aten::transpose", from(9), transpose_op);
  r.add("aten::permute", from(9), permute);
  r.add("aten::t", from(9), t);
  r.add("aten::numpy_T", from(9), numpy_T);
  r.add("aten::mT", from(9), matrix_transpose);
  r.add("aten::mH", from(9), matrix_transpose);
  r.add("aten::matrix_H", from(9), matrix_transpose);
  r.add("aten::movedim", from(9), movedim);
  r.add("aten::channel_shuffle", from(9), channel_shuffle);
  r.add("aten::native_channel_shuffle", from(9), channel_shuffle);

  r.add("aten::expand", from(9), expand);
  r.add("aten::broadcast_to", from(9), expand);
  r.add("aten::expand_as", from(9), expand_as);
  r.add("aten::repeat", from(9), repeat);
  r.add("aten::tile", from(9), tile);
  r.add("aten::repeat_interleave", from(9), repeat_interleave_self);
  r.add("aten::repeat_interleave.Tensor", from(9), repeat_interleave_indices);

  r.add("aten::broadcast_tensors", from(9), broadcast_tensors);
  r.add("aten::meshgrid", from(9), meshgrid);

  r.add("aten::_shape_as_tensor", from(9), shape_as_tensor);
  r.add("prim::shape", from(9), shape_as_tensor);
  for (const char* op : {"aten::alias", "aten::clone", "aten::contiguous", "aten::detach",
                         "aten::lift", "aten::lift_fresh_copy", "aten::resolve_conj",
                         "aten::resolve_neg", "aten::_conj", "aten::conj_physical"}) {
    r.add(op, from(9), identity);
  }
}

}  // namespace torchonnx::symbolic::ops
