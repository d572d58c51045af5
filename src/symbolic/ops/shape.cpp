// Shape manipulation: view/reshape/flatten/unflatten, cat/stack/hstack/vstack, atleast_Nd,
// transpose/permute/movedim, chunk/split/tensor_split/unbind, squeeze/unsqueeze,
// expand/broadcast_to/repeat/tile/repeat_interleave, narrow, roll/flip, broadcast_tensors/meshgrid,
// diagonal/tril/triu, as_strided/unfold, and the ops that return their input (clone, detach, ...).
//
// Output shapes are computed in the graph (Shape, Slice, Concat) where the op allows it, so that
// the lowering needs only the input's rank; ops whose number of outputs or gather indices depend
// on a dim size read it from type propagation (marked "static shape").
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <limits>
#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMin = std::numeric_limits<int64_t>::min();

bool is_int_type(const torch::jit::Value* v) {
  return v->type()->kind() == c10::TypeKind::IntType;
}

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

// Elements [start, end) of a 1-D shape tensor.
Value shape_part(GraphContext& g, const Value& shape, int64_t start, int64_t end) {
  return slice(g, shape, {0}, {start}, {end});
}

Value reshape_const(GraphContext& g, const Value& x, const Ints& shape) {
  return g.op("Reshape", {x, g.constant_ints(shape)});
}

// Reshape to a shape given as argument `i` (constant int[] or a 1-D tensor built in the graph).
Value reshape_to(GraphContext& g, const Args& a, const Value& x, size_t i) {
  if (a.is_constant(i)) {
    Ints shape = a.int_list(i);
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      // PyTorch's 0 is a size (the result is empty): allowzero from opset 14; before, an empty
      // tensor of that shape (its values do not matter).
      if (g.opset() >= 14) {
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

int64_t dim_size(GraphContext& g, const Args& a, size_t i, int64_t dim) {
  const auto shape = value_type(a.jit(i)).shape;
  const int64_t d = shape ? shape->at(normalize_dim(dim, static_cast<int64_t>(shape->size()))) : -1;
  if (d < 0) {
    g.fail(
        fmt::format("the size of dim {} of argument {} is not known at export (a dynamic axis, "
                    "or computed from data)",
                    dim, i));
  }
  return d;
}

// Whether dim `dim` of argument i has a size known at export.
bool dim_known(const Args& a, size_t i, int64_t dim) {
  const auto shape = value_type(a.jit(i)).shape;
  return shape && shape->at(normalize_dim(dim, static_cast<int64_t>(shape->size()))) >= 0;
}

// The number of elements a list value is unpacked into, when its only uses are prim::ListUnpack.
std::optional<int64_t> unpacked_length(const torch::jit::Value* list) {
  std::optional<int64_t> n;
  for (const torch::jit::Use& use : list->uses()) {
    if (use.user->kind() != c10::prim::ListUnpack) return std::nullopt;
    const auto k = static_cast<int64_t>(use.user->outputs().size());
    if (n && *n != k) return std::nullopt;
    n = k;
  }
  return n;
}

Ints chunk_sizes(int64_t n, int64_t size) {
  Ints sizes;
  if (size <= 0) return {n};
  for (int64_t left = n; left > 0; left -= size) sizes.push_back(std::min(size, left));
  if (sizes.empty()) sizes.push_back(0);
  return sizes;
}

// Pieces of `sizes` along `axis`: one Split, or Slices when a piece is empty (Split's empty
// outputs are not accepted everywhere).
Values split_pieces(GraphContext& g, const Value& x, const Ints& sizes, int64_t axis) {
  if (sizes.size() == 1) return {x};
  bool any_empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  if (!any_empty) return split(g, x, sizes, axis);
  Values out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(g, x, {axis}, {start}, {start + s}));
    start += s;
  }
  return out;
}

// static shape: the number of pieces depends on the dim's size.
Values chunk(GraphContext& g, const Args& a, int64_t chunks, int64_t dim) {
  const int64_t rank = a.require_rank(0);
  dim = normalize_dim(dim, rank);
  int64_t n = dim_size(g, a, 0, dim);
  return split_pieces(g, a.tensor(0), chunk_sizes(n, (n + chunks - 1) / chunks), dim);
}

Ints identity_perm(int64_t rank) {
  Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

// Repeats given as argument `i` (constant int[] or a list built in the graph) applied to `x`,
// unsqueezed first when the repeats outnumber its dims (Tile needs equal ranks).
Value tile(GraphContext& g, const Args& a, size_t i, int64_t reps_count, bool pad_front) {
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

// The diagonal (offset) of the last two dims of `x` (sizes n × m), gathered from their flattened
// product. static shape: the gather indices are constants.
Value last_two_diagonal(GraphContext& g, const Value& x, int64_t rank, int64_t n, int64_t m,
                        int64_t offset) {
  int64_t row0 = offset >= 0 ? 0 : -offset, col0 = offset >= 0 ? offset : 0;
  int64_t len = std::max<int64_t>(0, std::min(n - row0, m - col0));
  Ints shape(rank - 2, 0);  // leading dims copied
  shape.push_back(n * m);
  Value flat = reshape_const(g, x, shape);
  Ints idx;
  for (int64_t k = 0; k < len; ++k) idx.push_back((row0 + k) * m + col0 + k);
  return g.op("Gather", {flat, g.constant_ints(idx)}, {{"axis", rank - 2}});
}

Value scalar_long(GraphContext& g, int64_t v) {
  return g.constant(at::scalar_tensor(v, at::kLong));
}

// Element d of Shape(x) as a 0-d int64.
Value dim_value(GraphContext& g, const Value& shape, int64_t d) {
  return g.op("Gather", {shape, scalar_long(g, d)}, {{"axis", 0}});
}

// The same diagonal with sizes and indices computed in the graph (opset 11: Range). Min and Max
// of int64 are Where(Less) (Min/Max take integers from opset 12).
Value last_two_diagonal_dynamic(GraphContext& g, const Value& x, int64_t rank, int64_t offset) {
  int64_t row0 = offset >= 0 ? 0 : -offset, col0 = offset >= 0 ? offset : 0;
  Value shape = shape_of(g, x);
  Value n = dim_value(g, shape, rank - 2), m = dim_value(g, shape, rank - 1);
  Value rows = g.op("Sub", {n, scalar_long(g, row0)});
  Value cols = g.op("Sub", {m, scalar_long(g, col0)});
  Value len = g.op("Where", {g.op("Less", {rows, cols}), rows, cols});
  Value zero = scalar_long(g, 0);
  len = g.op("Where", {g.op("Less", {len, zero}), zero, len});
  Value idx = g.op("Range", {zero, len, scalar_long(g, 1)});
  idx = g.op("Add", {g.op("Mul", {idx, g.op("Add", {m, scalar_long(g, 1)})}),
                     g.op("Add", {g.op("Mul", {scalar_long(g, row0), m}), scalar_long(g, col0)})});
  Values parts;
  if (rank > 2) parts.push_back(shape_part(g, shape, 0, rank - 2));
  parts.push_back(unsqueeze(g, g.op("Mul", {n, m}), {0}));
  Value flat = reshape_exact(g, x, concat_1d(g, parts));
  return g.op("Gather", {flat, idx}, {{"axis", rank - 2}});
}

// tril/triu below opset 14: Where(mask, x, 0) with mask = (col - row <= k) for tril, (>= k) for
// triu over the last two dims; the mask is built in the graph from opset 11 (Range), a constant
// before.
Value trilu_mask(GraphContext& g, const Args& a, bool upper) {
  const int64_t rank = a.require_rank(0);
  if (rank < 2) g.fail("tril/triu need a tensor of at least 2 dims");
  int64_t k = a.int_arg(1);
  Value x = a.tensor(0);
  Value mask;
  if (g.opset() >= 11) {
    Value shape = shape_of(g, x);
    auto size = [&](int64_t d) {
      return g.op("Gather", {shape, g.constant(at::scalar_tensor(d, at::kLong))}, {{"axis", 0}});
    };
    Value zero = g.constant(at::scalar_tensor(0, at::kLong));
    Value one = g.constant(at::scalar_tensor(1, at::kLong));
    Value rows = unsqueeze(g, g.op("Range", {zero, size(rank - 2), one}), {1});
    Value cols = unsqueeze(g, g.op("Range", {zero, size(rank - 1), one}), {0});
    Value diff = g.op("Sub", {cols, rows});
    Value kk = g.constant(at::scalar_tensor(k, at::kLong));
    mask = g.op("Not", {g.op(upper ? "Less" : "Greater", {diff, kk})});
  } else {
    // static shape: Range needs opset 11.
    auto sizes = a.sizes(0);
    if (!sizes) g.fail("tril/triu before opset 11 need the input's static shape");
    int64_t n = (*sizes)[rank - 2], m = (*sizes)[rank - 1];
    at::Tensor diff = at::arange(m).unsqueeze(0) - at::arange(n).unsqueeze(1);
    mask = g.constant(upper ? diff >= k : diff <= k);
  }
  at::ScalarType type = a.dtype(0);
  if (type == at::ScalarType::Undefined) g.fail("the input's dtype is unknown");
  if (type == at::kBool) return g.op("And", {mask, x});  // ORT's Where takes no bool before 16
  return g.op("Where", {mask, x, g.constant_scalar(0, type)});
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

// roll of `x` by `shift` along `dim` (size n): the last shift elements, then the others.
// static shape: the shift is reduced modulo the dim's size.
Value roll_dim(GraphContext& g, const Value& x, int64_t shift, int64_t dim, int64_t n) {
  if (n == 0) return x;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return g.op("Concat", {slice(g, x, {dim}, {n - s}, {n}), slice(g, x, {dim}, {0}, {n - s})},
              {{"axis", dim}});
}

Converter identity() {
  return [](GraphContext& g, const Args& a) -> Values {
    if (at::isComplexType(a.dtype(0))) g.fail("complex tensors are not supported by ONNX");
    return {a.tensor(0)};
  };
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

// aten::expand / broadcast_to: Expand(self, |size|): a -1 becomes 1, which Expand broadcasts to
// the input's size (no static shape needed).
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

}  // namespace

void register_shape(Registry& r) {
  // ----- view / reshape / flatten -------------------------------------------------------------

  // aten::view(Tensor self, SymInt[] size) / aten::reshape(Tensor self, SymInt[] shape)
  //   ⇒  Reshape (a 0 in the shape: allowzero from 14, an empty ConstantOfShape before);
  // aten::view.dtype(Tensor self, ScalarType dtype)  ⇒  identity for its own dtype only
  for (const char* op : {"aten::view", "aten::reshape"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      if (is_int_type(a.jit(1))) {
        if (a.output_dtype() == a.dtype(0)) return {a.tensor(0)};
        g.fail(
            "view(dtype) reinterprets the bits of another dtype, which ONNX cannot express; "
            "use .to(dtype) for a value conversion");
      }
      return {reshape_to(g, a, a.tensor(0), 1)};
    });
  }
  // aten::_reshape_from_tensor(Tensor self, Tensor shape)  ⇒  Reshape(self, Cast(shape, int64))
  r.add("aten::_reshape_from_tensor", {}, [](GraphContext& g, const Args& a) -> Values {
    return {g.op("Reshape", {a.tensor(0), a.tensor_as(1, at::kLong)})};
  });
  // aten::view_as / reshape_as(Tensor self, Tensor other)  ⇒  Reshape(self, Shape(other))
  for (const char* op : {"aten::view_as", "aten::reshape_as"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      return {reshape_exact(g, a.tensor(0), shape_of(g, a.tensor(1)))};
    });
  }
  // aten::flatten(Tensor self, int start_dim=0, int end_dim=-1)
  //   ⇒  Flatten(axis=1) for (1, -1), Reshape(-1) for all dims, otherwise Reshape to
  //      Concat(Shape[:start], ReduceProd(Shape[start:end+1]), Shape[end+1:])
  r.add("aten::flatten", {}, [](GraphContext& g, const Args& a) -> Values {
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
  });
  // aten::unflatten.int(Tensor self, int dim, int[] sizes)
  //   ⇒  Reshape to Concat(Shape[:dim], sizes, Shape[dim+1:])
  r.add("aten::unflatten", {}, [](GraphContext& g, const Args& a) -> Values {
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
  });

  // ----- cat / stack ----------------------------------------------------------------------------

  // aten::cat(Tensor[] tensors, int dim=0)  ⇒  Concat in the promoted dtype; 1-D empty tensors
  // (which torch.cat skips whatever the others' rank) left out
  for (const char* op : {"aten::cat"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
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
    });
  }
  // aten::stack(Tensor[] tensors, int dim=0)  ⇒  Unsqueeze each, Concat (promoted dtype)
  r.add("aten::stack", {}, [](GraphContext& g, const Args& a) -> Values {
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
  });

  // aten::atleast_1d/2d/3d(Tensor self) / .Sequence(Tensor[] tensors) -> Tensor / Tensor[]
  //   ⇒  Unsqueeze of the missing unit dims (0-d → [1]*n, [N] → [1, N] / [1, N, 1],
  //      [M, N] → [M, N, 1]); the input itself when it has n dims or more
  r.add("aten::atleast_1d", {}, at_least_nd(1));
  r.add("aten::atleast_2d", {}, at_least_nd(2));
  r.add("aten::atleast_3d", {}, at_least_nd(3));
  // aten::hstack(Tensor[] tensors)  ⇒  atleast_1d each, Concat on dim 0 (1-D) or 1 (promoted dtype)
  r.add("aten::hstack", {}, stack_along(/*horizontal=*/true));
  // aten::vstack(Tensor[] tensors)  ⇒  atleast_2d each, Concat on dim 0 (promoted dtype)
  r.add("aten::vstack", {}, stack_along(/*horizontal=*/false));

  // ----- transpose / permute / movedim ---------------------------------------------------------

  // aten::transpose.int(Tensor self, int dim0, int dim1)  ⇒  Transpose(perm)
  // (the script compiler normalizes swapaxes/swapdims to transpose)
  for (const char* op : {"aten::transpose"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      if (!is_int_type(a.jit(1))) g.fail("transpose with named dims is not supported");
      const int64_t rank = a.require_rank(0);
      if (rank < 2) return {a.tensor(0)};
      Ints perm = identity_perm(rank);
      std::swap(perm[normalize_dim(a.int_arg(1), rank)], perm[normalize_dim(a.int_arg(2), rank)]);
      return {transpose(g, a.tensor(0), perm)};
    });
  }
  // aten::permute(Tensor self, int[] dims)  ⇒  Transpose(perm)
  r.add("aten::permute", {}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    Ints perm = a.int_list(1);
    for (auto& d : perm) d = normalize_dim(d, rank);
    return {transpose(g, a.tensor(0), perm)};
  });
  // aten::t(Tensor self)  ⇒  Transpose for 2-D, identity below
  r.add("aten::t", {}, [](GraphContext& g, const Args& a) -> Values {
    if (a.require_rank(0) < 2) return {a.tensor(0)};
    return {transpose(g, a.tensor(0), {1, 0})};
  });
  // aten::numpy_T(Tensor self)  ⇒  Transpose reversing all dims
  r.add("aten::numpy_T", {}, [](GraphContext& g, const Args& a) -> Values {
    Ints perm = identity_perm(a.require_rank(0));
    std::reverse(perm.begin(), perm.end());
    return {transpose(g, a.tensor(0), perm)};
  });
  // aten::movedim(Tensor self, int[] | int source, int[] | int destination)  ⇒  Transpose(perm)
  // (moveaxis is normalized to movedim)
  for (const char* op : {"aten::movedim"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      const int64_t rank = a.require_rank(0);
      return {transpose(g, a.tensor(0), movedim_perm(g, rank, a.int_list(1), a.int_list(2)))};
    });
  }

  // ----- chunk / split -----------------------------------------------------------------------

  // aten::chunk / unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]  ⇒  Split
  for (const char* op : {"aten::chunk", "aten::unsafe_chunk"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      return chunk(g, a, a.int_arg(1), a.int_arg(2));
    });
  }
  // prim::ConstantChunk[chunks, dim](Tensor self) -> Tensor...  ⇒  Split
  r.add("prim::ConstantChunk", {}, [](GraphContext& g, const Args& a) -> Values {
    const torch::jit::Node* n = a.node();
    Values pieces = chunk(g, a, n->i(c10::Symbol::attr("chunks")), n->i(c10::attr::dim));
    if (pieces.size() != n->outputs().size()) {
      g.fail("ConstantChunk gives " + std::to_string(pieces.size()) + " pieces but has " +
             std::to_string(n->outputs().size()) + " outputs");
    }
    return pieces;
  });
  // aten::split(Tensor self, int split_size | int[] sizes, int dim=0) -> Tensor[]
  // aten::split_with_sizes / unsafe_split / unsafe_split_with_sizes  ⇒  Split
  // static shape: an int split size gives as many pieces as the dim's size asks.
  for (const char* op : {"aten::split", "aten::split_with_sizes", "aten::unsafe_split",
                         "aten::unsafe_split_with_sizes"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      const int64_t rank = a.require_rank(0);
      int64_t dim = normalize_dim(a.int_arg(2), rank);
      if (!a.is_constant(1)) {
        // Sizes computed in the graph (from other tensors' shapes): as many pieces as the list
        // has elements, each a Slice between the running sums of the sizes (opset 11+).
        std::optional<int64_t> n = list_length(a, 1);
        if (!n || g.opset() < 11) g.fail("split sizes computed in the graph need opset >= 11");
        Value sizes = a.tensor_as(1, at::kLong);
        Value ends = g.op("CumSum", {sizes, g.constant(at::scalar_tensor(0, at::kLong))});
        Value starts = g.op("Sub", {ends, sizes});
        Values pieces;
        for (int64_t k = 0; k < *n; ++k) {
          Value at_k = g.constant_ints({k});
          pieces.push_back(g.op("Slice", {a.tensor(0), g.op("Gather", {starts, at_k}),
                                          g.op("Gather", {ends, at_k}), g.constant_ints({dim})}));
        }
        return pieces;
      }
      c10::IValue arg = a.constant(1);
      if (arg.isInt() && !dim_known(a, 0, dim) && g.opset() >= 11) {
        // A dynamic dim: as many pieces as the run-time size asks, as an ONNX sequence.
        Value seq =
            g.op("SplitToSequence",
                 {a.tensor(0), g.constant_scalar(static_cast<double>(arg.toInt()), at::kLong)},
                 {{"axis", dim}, {"keepdims", int64_t{1}}});
        g.bind_sequence(a.node()->output(), seq);
        return {seq};
      }
      Ints sizes =
          arg.isInt() ? chunk_sizes(dim_size(g, a, 0, dim), arg.toInt()) : arg.toIntVector();
      return split_pieces(g, a.tensor(0), sizes, dim);
    });
  }
  // aten::tensor_split(Tensor self, int sections | int[] indices | Tensor, int dim=0) -> Tensor[]
  //   ⇒  one Slice per piece (indices need no shape; sections read the dim's static size)
  r.add("aten::tensor_split", {}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    int64_t dim = normalize_dim(a.int_arg(2), rank);
    c10::IValue arg = a.constant(1);
    Value x = a.tensor(0);
    if (arg.isTensor()) {
      at::Tensor t = arg.toTensor();
      if (t.dim() == 0) {
        arg = t.item<int64_t>();
      } else {
        arg = c10::IValue(
            std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()));
      }
    }
    Values pieces;
    if (arg.isInt()) {
      // static shape: the section sizes depend on the dim's size.
      int64_t n = dim_size(g, a, 0, dim), sections = arg.toInt();
      int64_t start = 0;
      for (int64_t k = 0; k < sections; ++k) {
        int64_t size = n / sections + (k < n % sections ? 1 : 0);
        pieces.push_back(slice(g, x, {dim}, {start}, {start + size}));
        start += size;
      }
      return pieces;
    }
    int64_t start = 0;
    for (int64_t end : arg.toIntVector()) {
      pieces.push_back(slice(g, x, {dim}, {start}, {end}));
      start = end;
    }
    pieces.push_back(slice(g, x, {dim}, {start}, {kIntMax}));
    return pieces;
  });
  // aten::unbind.int(Tensor self, int dim=0) -> Tensor[]  ⇒  Split into ones, Squeeze each
  // static shape: one output per element of the dim.
  r.add("aten::unbind", {}, [](GraphContext& g, const Args& a) -> Values {
    if (!is_int_type(a.jit(1))) g.fail("unbind with a named dim is not supported");
    const int64_t rank = a.require_rank(0);
    int64_t dim = normalize_dim(a.int_arg(1), rank);
    // A dim of unknown size (computed from data) whose list is unpacked (x, y = t.unbind(1)) has
    // as many elements as the unpacking takes: any other size fails in PyTorch.
    std::optional<int64_t> unpacked = unpacked_length(a.node()->output());
    int64_t n = !dim_known(a, 0, dim) && unpacked ? *unpacked : dim_size(g, a, 0, dim);
    Values out;
    for (const Value& piece : split_pieces(g, a.tensor(0), Ints(n, 1), dim)) {
      out.push_back(squeeze(g, piece, {dim}));
    }
    return out;
  });

  // ----- squeeze / unsqueeze ---------------------------------------------------------------

  // aten::unsqueeze(Tensor self, int dim)  ⇒  Unsqueeze
  r.add("aten::unsqueeze", {}, [](GraphContext& g, const Args& a) -> Values {
    int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0) + 1);
    return {unsqueeze(g, a.tensor(0), {dim})};
  });
  // aten::squeeze(Tensor self) / squeeze.dim(Tensor self, int dim)
  //   ⇒  Squeeze of the size-1 dims (identity if none; a dim of another size is kept); without a
  //      dim and without a static shape, Squeeze with no axes (all size-1 dims)
  r.add("aten::squeeze", {}, [](GraphContext& g, const Args& a) -> Values {
    auto sizes = a.sizes(0);
    Value x = a.tensor(0);
    if (a.size() == 1) {
      if (!sizes) return {g.op("Squeeze", {x})};
      Ints axes;
      for (size_t i = 0; i < sizes->size(); ++i) {
        if ((*sizes)[i] == 1) axes.push_back(static_cast<int64_t>(i));
      }
      if (axes.empty()) return {x};
      return {squeeze(g, x, axes)};
    }
    if (!is_int_type(a.jit(1))) g.fail("squeeze with a named dim is not supported");
    const int64_t rank = a.require_rank(0);
    if (rank == 0) return {x};
    int64_t dim = normalize_dim(a.int_arg(1), rank);
    // static shape: whether the dim is squeezed depends on its size.
    if (!sizes) g.fail("squeeze(dim) needs the size of the dim (the input's static shape)");
    if ((*sizes)[dim] != 1) return {x};
    return {squeeze(g, x, {dim})};
  });

  // ----- expand / repeat -----------------------------------------------------------------------

  // aten::expand(Tensor self, SymInt[] size, *, bool implicit)  ⇒  Expand(self, |size|): a -1
  // becomes 1, which Expand broadcasts to the input's size (no static shape needed)
  r.add("aten::expand", {}, expand);
  // aten::broadcast_to(Tensor self, SymInt[] size)  ⇒  Expand, as expand
  r.add("aten::broadcast_to", {}, expand);
  // aten::expand_as(Tensor self, Tensor other)  ⇒  Expand(self, Shape(other))
  r.add("aten::expand_as", {}, [](GraphContext& g, const Args& a) -> Values {
    return {g.op("Expand", {a.tensor(0), shape_of(g, a.tensor(1))})};
  });
  // aten::repeat(Tensor self, SymInt[] repeats)  ⇒  Tile (Unsqueeze first for extra leading dims)
  r.add("aten::repeat", {}, [](GraphContext& g, const Args& a) -> Values {
    auto n = list_length(a, 1);
    if (!n) n = output_rank(a);
    if (!n) g.fail("the number of repeats is unknown");
    return {tile(g, a, 1, *n, /*pad_front=*/false)};
  });
  // aten::tile(Tensor self, int[] dims)  ⇒  Tile (dims padded with leading 1s to the rank)
  r.add("aten::tile", {}, [](GraphContext& g, const Args& a) -> Values {
    auto n = list_length(a, 1);
    if (!n) g.fail("the number of repeats is unknown");
    return {tile(g, a, 1, *n, /*pad_front=*/true)};
  });
  // aten::repeat_interleave.self_int(Tensor self, int repeats, int? dim, *, int? output_size)
  //   ⇒  Unsqueeze, Tile, Reshape (all opsets);
  // repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim, *, int? output_size),
  // repeat_interleave.Tensor(Tensor repeats, *, int? output_size)
  //   ⇒  Gather of the repeated indices: constants for constant repeats, else computed with
  //      CumSum/Range (opset 11)
  r.add("aten::repeat_interleave", {}, [](GraphContext& g, const Args& a) -> Values {
    const bool only_repeats = a.size() == 2;
    if (only_repeats) {
      if (a.is_constant(0)) {
        at::Tensor reps = a.constant(0).toTensor().to(at::kLong);
        return {g.constant(at::repeat_interleave(reps))};
      }
      if (g.opset() < 11) {
        g.fail(
            "repeat_interleave of repeats computed in the graph needs opset 11 (CumSum); "
            "export with opset >= 11");
      }
      return {repeated_indices(g, reshape_const(g, a.tensor_as(0, at::kLong), {-1}))};
    }
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
    if (is_int_type(a.jit(1)) && a.is_constant(1)) {
      int64_t reps = a.int_arg(1);
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
        // static shape: one repeat count for every element of the dim.
        if (!sizes) g.fail("repeat_interleave needs the input's static shape");
        n = (*sizes)[dim];
        reps = reps.expand({n}).contiguous();
      }
      at::Tensor idx = at::repeat_interleave(at::arange(n), reps);
      return {g.op("Gather", {x, g.constant(idx)}, {{"axis", dim}})};
    }
    if (g.opset() < 11) {
      g.fail(
          "repeat_interleave with repeats computed in the graph needs opset 11 (CumSum); "
          "export with opset >= 11");
    }
    Value n = shape_part(g, shape_of(g, x), dim, dim + 1);
    Value reps = g.op("Expand", {reshape_const(g, a.tensor_as(1, at::kLong), {-1}), n});
    return {g.op("Gather", {x, repeated_indices(g, reps)}, {{"axis", dim}})};
  });

  // ----- narrow / roll / flip -----------------------------------------------------------------

  // aten::narrow(Tensor self, int dim, int start, int length)  ⇒  Slice [start, start+length);
  // narrow.Tensor(Tensor self, int dim, Tensor start, int length)  ⇒  Slice with bounds computed
  // in the graph (opset 10)
  r.add("aten::narrow", {}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    int64_t dim = normalize_dim(a.int_arg(1), rank);
    int64_t length = a.int_arg(3);
    Value x = a.tensor(0);
    if (is_int_type(a.jit(2)) && a.is_constant(2)) {
      int64_t start = a.int_arg(2);
      int64_t end = start + length;
      if (start < 0 && end == 0) end = kIntMax;  // a run up to the last element
      return {slice(g, x, {dim}, {start}, {end})};
    }
    if (g.opset() < 10) {
      g.fail("narrow with a start computed in the graph needs opset 10; export with opset >= 10");
    }
    // A negative start counts from the end: start + size * (start < 0).
    Value start = reshape_const(g, a.tensor_as(2, at::kLong), {1});
    Value size = shape_part(g, shape_of(g, x), dim, dim + 1);
    Value negative = g.cast(g.op("Less", {start, g.constant_ints({0})}), at::kLong);
    start = g.op("Add", {start, g.op("Mul", {negative, size})});
    Value end = g.op("Add", {start, g.constant_ints({length})});
    return {g.op("Slice", {x, start, end, g.constant_ints({dim})})};
  });
  // aten::roll(Tensor self, int[1] shifts, int[1] dims=[])  ⇒  Concat of two Slices per dim
  // (without dims: of the flattened tensor, reshaped back)
  r.add("aten::roll", {}, [](GraphContext& g, const Args& a) -> Values {
    Ints shifts = a.int_list(1), dims = a.int_list(2);
    const int64_t rank = a.require_rank(0);
    auto sizes = a.sizes(0);
    if (!sizes) g.fail("roll needs the input's static shape (the shift is taken modulo a size)");
    Value x = a.tensor(0);
    if (dims.empty()) {
      if (shifts.size() != 1) g.fail("roll without dims takes one shift");
      int64_t n =
          std::accumulate(sizes->begin(), sizes->end(), int64_t{1}, std::multiplies<int64_t>());
      Value flat = roll_dim(g, reshape_const(g, x, {-1}), shifts[0], 0, n);
      return {g.op("Reshape", {flat, shape_of(g, x)})};
    }
    if (shifts.size() != dims.size()) g.fail("roll takes as many shifts as dims");
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t d = normalize_dim(dims[i], rank);
      x = roll_dim(g, x, shifts[i], d, (*sizes)[d]);
    }
    return {x};
  });
  // aten::flip(Tensor self, int[] dims)
  //   ⇒  Slice with step -1 (10+); Gather of reversed constant indices at 9 (static shape)
  r.add("aten::flip", {9, 9}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    Value x = a.tensor(0);
    if (rank == 0) return {x};
    auto sizes = a.sizes(0);
    if (!sizes) g.fail("flip at opset 9 needs the input's static shape; export with opset >= 10");
    for (int64_t d : a.int_list(1)) {
      d = normalize_dim(d, rank);
      at::Tensor idx = at::arange((*sizes)[d] - 1, -1, -1, at::kLong);
      x = g.op("Gather", {x, g.constant(idx)}, {{"axis", d}});
    }
    return {x};
  });
  r.add("aten::flip", {10, kMaxOpset}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    if (rank == 0) return {a.tensor(0)};
    auto sizes = a.sizes(0);
    Ints dims;
    for (int64_t d : a.int_list(1)) {
      d = normalize_dim(d, rank);
      // A dim of size 0 or 1 is its own flip (and ONNX's Slice shape inference miscounts an
      // empty dim sliced backwards).
      if (!sizes || (*sizes)[d] > 1) dims.push_back(d);
    }
    if (dims.empty()) return {a.tensor(0)};
    const auto k = dims.size();
    return {slice(g, a.tensor(0), dims, Ints(k, -1), Ints(k, kIntMin), Ints(k, -1))};
  });

  // ----- broadcast_tensors / meshgrid -----------------------------------------------------------

  // aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]
  //   ⇒  Expand each to the common shape, itself Shape of the tensors expanded in a chain
  r.add("aten::broadcast_tensors", {}, [](GraphContext& g, const Args& a) -> Values {
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
  });
  // aten::meshgrid(Tensor[] tensors) / meshgrid.indexing(Tensor[] tensors, *, str indexing)
  //   ⇒  each 1-D tensor reshaped along its own axis and expanded to Concat of their sizes
  //      ('xy' swaps the first two axes)
  r.add("aten::meshgrid", {}, [](GraphContext& g, const Args& a) -> Values {
    Values items = a.tensor_list(0);
    std::string indexing = a.size() > 1 ? a.str_arg(1) : "ij";
    if (indexing != "ij" && indexing != "xy")
      g.fail("unknown meshgrid indexing '" + indexing + "'");
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
  });

  // ----- diagonal / tril / triu ---------------------------------------------------------------

  // aten::diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1)
  //   ⇒  Transpose dim1, dim2 last, Reshape them into one, Gather the diagonal's elements
  //      (indices from Range from opset 11, constants before: static shape)
  r.add("aten::diagonal", {}, [](GraphContext& g, const Args& a) -> Values {
    if (!is_int_type(a.jit(1))) g.fail("diagonal with named dims is not supported");
    const int64_t rank = a.require_rank(0);
    if (rank < 2) g.fail("diagonal needs a tensor of at least 2 dims");
    int64_t offset = a.int_arg(1);
    int64_t d1 = normalize_dim(a.int_arg(2), rank), d2 = normalize_dim(a.int_arg(3), rank);
    auto sizes = a.sizes(0);
    Ints perm;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != d1 && d != d2) perm.push_back(d);
    }
    perm.push_back(d1);
    perm.push_back(d2);
    if (sizes) {
      int64_t n = (*sizes)[d1], m = (*sizes)[d2];
      int64_t len = std::max<int64_t>(
          0, std::min(n - std::max<int64_t>(-offset, 0), m - std::max<int64_t>(offset, 0)));
      if (len == 0) {
        // static shape: an empty diagonal is an empty tensor of the result's shape.
        Ints shape;
        for (int64_t d : perm) shape.push_back((*sizes)[d]);
        shape.resize(rank - 2);
        shape.push_back(0);
        return {g.op("ConstantOfShape", {g.constant_ints(shape)},
                     {{"value", at::zeros({1}, at::TensorOptions().dtype(a.dtype(0)))}})};
      }
    }
    Value x = transpose(g, a.tensor(0), perm);
    // Constant indices for a static shape with an empty pair of dims (a Reshape to an empty
    // last dim is not exact before opset 14) and before opset 11 (no Range).
    if (sizes && ((*sizes)[d1] * (*sizes)[d2] == 0 || g.opset() < 11)) {
      return {last_two_diagonal(g, x, rank, (*sizes)[d1], (*sizes)[d2], offset)};
    }
    if (g.opset() < 11) g.fail("diagonal before opset 11 needs the input's static shape");
    return {last_two_diagonal_dynamic(g, x, rank, offset)};
  });
  // aten::tril / triu(Tensor self, int diagonal=0)
  //   ⇒  Where(mask, self, 0) before 14 (mask from Range at 11–13, constant at 9–10); Trilu 14+
  r.add("aten::tril", {9, 13}, [](GraphContext& g, const Args& a) -> Values {
    return {trilu_mask(g, a, /*upper=*/false)};
  });
  r.add("aten::triu", {9, 13}, [](GraphContext& g, const Args& a) -> Values {
    return {trilu_mask(g, a, /*upper=*/true)};
  });
  for (auto [op, upper] : {std::pair{"aten::tril", 0}, {"aten::triu", 1}}) {
    r.add(op, {14, kMaxOpset}, [upper = upper](GraphContext& g, const Args& a) -> Values {
      Value k = g.constant(at::scalar_tensor(a.int_arg(1), at::kLong));
      return {g.op("Trilu", {a.tensor(0), k}, {{"upper", int64_t{upper}}})};
    });
  }

  // ----- as_strided / unfold ------------------------------------------------------------------

  // aten::as_strided(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset)
  //   ⇒  Gather of the flattened input at constant indices offset + Σ i_k·stride_k (exact for a
  //      contiguous input, whose storage is its flattening)
  r.add("aten::as_strided", {}, [](GraphContext& g, const Args& a) -> Values {
    Ints size = a.int_list(1), stride = a.int_list(2);
    if (size.size() != stride.size()) g.fail("as_strided needs as many strides as sizes");
    int64_t offset = a.optional_int(3).value_or(0);
    at::Tensor idx = at::scalar_tensor(offset, at::kLong);
    for (size_t k = 0; k < size.size(); ++k) {
      Ints view(size.size(), 1);
      view[k] = -1;
      idx = idx + at::arange(size[k], at::kLong).view(view) * stride[k];
    }
    idx = idx.expand(size).contiguous();
    Value flat = reshape_const(g, a.tensor(0), {-1});
    return {g.op("Gather", {flat, g.constant(idx)}, {{"axis", 0}})};
  });
  // aten::unfold(Tensor self, int dimension, int size, int step)
  //   ⇒  Gather of window indices [windows, size] along the dim (from Range at 11+, constants
  //      before), the window elements moved last
  r.add("aten::unfold", {}, [](GraphContext& g, const Args& a) -> Values {
    int64_t rank = a.require_rank(0);
    int64_t size = a.int_arg(2), step = a.int_arg(3);
    Value x = a.tensor(0);
    if (rank == 0) {
      // A 0-d tensor has one window of its only element (size 1) or an empty one (size 0).
      Value one = reshape_const(g, x, {1});
      return {size == 1 ? one : slice(g, one, {0}, {0}, {0})};
    }
    int64_t dim = normalize_dim(a.int_arg(1), rank);
    if (step <= 0) g.fail("unfold's step must be positive");
    Value idx;
    at::Tensor in_window = at::arange(size, at::kLong).unsqueeze(0);
    if (g.opset() >= 11) {
      // windows = (n - size) / step + 1 starting at Range(windows) * step
      Value n = dim_value(g, shape_of(g, x), dim);
      Value windows =
          g.op("Add", {g.op("Div", {g.op("Sub", {n, scalar_long(g, size)}), scalar_long(g, step)}),
                       scalar_long(g, 1)});
      Value starts = g.op("Range", {scalar_long(g, 0), windows, scalar_long(g, 1)});
      idx = g.op("Add", {unsqueeze(g, g.op("Mul", {starts, scalar_long(g, step)}), {1}),
                         g.constant(in_window)});
    } else {
      // static shape: Range needs opset 11.
      int64_t n = dim_size(g, a, 0, dim);
      if (size > n) g.fail("unfold's size must fit the dim");
      int64_t windows = (n - size) / step + 1;
      idx =
          g.constant((at::arange(windows, at::kLong).unsqueeze(1) * step + in_window).contiguous());
    }
    Value gathered = g.op("Gather", {x, idx}, {{"axis", dim}});
    Ints perm;
    for (int64_t d = 0; d <= rank; ++d) {
      if (d != dim + 1) perm.push_back(d);
    }
    perm.push_back(dim + 1);
    return {transpose(g, gathered, perm)};
  });

  // ----- shape as tensor, identities ----------------------------------------------------------

  // aten::_shape_as_tensor(Tensor self) / prim::shape(Tensor self)  ⇒  Shape
  for (const char* op : {"aten::_shape_as_tensor", "prim::shape"}) {
    r.add(op, {},
          [](GraphContext& g, const Args& a) -> Values { return {shape_of(g, a.tensor(0))}; });
  }
  // aten::alias/clone/contiguous/detach/lift/resolve_conj/resolve_neg/_conj/conj_physical
  //   ⇒  the input (real tensors only: conjugation and negation bits are no-ops on them)
  for (const char* op :
       {"aten::alias", "aten::clone", "aten::contiguous", "aten::detach", "aten::lift",
        "aten::resolve_conj", "aten::resolve_neg", "aten::_conj", "aten::conj_physical"}) {
    r.add(op, {}, identity());
  }
}

}  // namespace torchonnx::symbolic::ops
