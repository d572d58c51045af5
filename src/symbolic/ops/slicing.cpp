// Slicing: the ops that cut a tensor into pieces or take part of it — chunk/split/tensor_split/
// unbind, narrow, diagonal/diag, tril/triu, as_strided/unfold — and diag_embed/diagflat, which
// reassemble slices (roll and flip: reorder.cpp).
//
// The number of pieces, a shift taken modulo a size or gather indices may depend on a dim's size:
// such lowerings read it from type propagation (marked "static shape").
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cstdlib>
#include <limits>
#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/shape_util.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();

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

Value scalar_long(GraphContext& g, int64_t v) {
  return g.constant(at::scalar_tensor(v, at::kLong));
}

// Pieces of `x` along `dim` of the size `size` computed in the graph (the last one smaller):
// `count` Slices, or a sequence bound to `list` when the count is not known.
Values pieces_of_size(GraphContext& g, const Value& x, const Value& size, int64_t dim,
                      std::optional<int64_t> count, const torch::jit::Value* list) {
  if (!count) {
    if (!list) g.fail("the number of chunks of a dynamic dim is not known at export");
    Value seq = g.op("SplitToSequence", {x, size}, {{"axis", dim}, {"keepdims", int64_t{1}}});
    g.bind_sequence(list, seq);
    return {seq};
  }
  Value axes = g.constant_ints({dim});
  Values pieces;
  for (int64_t k = 0; k < *count; ++k) {
    Value start = unsqueeze(g, g.op("Mul", {size, scalar_long(g, k)}), {0});
    Value end = k + 1 == *count ? g.constant_ints({kIntMax})
                                : unsqueeze(g, g.op("Mul", {size, scalar_long(g, k + 1)}), {0});
    pieces.push_back(g.op("Slice", {x, start, end, axes}));
  }
  return pieces;
}

// chunk(chunks, dim) is split(ceil(size / chunks), dim): pieces of that size, the last one
// smaller, and fewer than `chunks` pieces when the size asks (6 in 4 chunks gives 3 of 2).
// A dim of static size: one Split. A dynamic dim (opset 11+): the piece size computed in the graph;
// `count` pieces as Slices when the result has a known number of pieces (a ConstantChunk's outputs,
// a list that is unpacked: PyTorch fails on any other count), else an ONNX sequence
// (SplitToSequence of the computed size, bound to `list`).
Values chunk_pieces(GraphContext& g, const Args& a, int64_t chunks, int64_t dim,
                    std::optional<int64_t> count, const torch::jit::Value* list) {
  const int64_t rank = a.require_rank(0);
  dim = normalize_dim(dim, rank);
  if (!dim_known(a, 0, dim) && chunks > 0) {
    g.require_opset(11,
                    fmt::format("chunk of dim {}, whose size is not known at export (a dynamic "
                                "axis, or computed from data),",
                                dim),
                    "the piece size computed in the graph");
  }
  if (dim_known(a, 0, dim) || chunks <= 0) {
    int64_t n = dim_size(g, a, 0, dim);
    return split_pieces(g, a.tensor(0), chunk_sizes(n, (n + chunks - 1) / chunks), dim);
  }
  Value x = a.tensor(0);
  Value size =
      g.op("Div", {g.op("Add", {symbolic::dim_size(g, x, dim), scalar_long(g, chunks - 1)}),
                   scalar_long(g, chunks)});
  return pieces_of_size(g, x, size, dim, count, list);
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
// triu over the last two dims of `x` (of `rank`).
using TriluMask = Value (*)(GraphContext& g, const Args& a, const Value& x, int64_t rank, int64_t k,
                            bool upper);

// The mask as a constant (opsets 9–10, which have no Range). static shape.
Value constant_trilu_mask(GraphContext& g, const Args& a, const Value& /*x*/, int64_t rank,
                          int64_t k, bool upper) {
  if (!a.is_constant(1)) g.fail("tril/triu with a diagonal computed in the graph need opset >= 11");
  auto sizes = a.sizes(0);
  if (!sizes) g.fail("tril/triu before opset 11 need the input's static shape");
  int64_t n = (*sizes)[rank - 2], m = (*sizes)[rank - 1];
  at::Tensor diff = at::arange(m).unsqueeze(0) - at::arange(n).unsqueeze(1);
  return g.constant(upper ? diff >= k : diff <= k);
}

// The mask built in the graph from the input's shape (Range: opset 11), and from the diagonal when
// it is computed in the graph.
Value range_trilu_mask(GraphContext& g, const Args& a, const Value& x, int64_t rank, int64_t k,
                       bool upper) {
  Value shape = shape_of(g, x);
  auto size = [&](int64_t d) {
    return g.op("Gather", {shape, g.constant(at::scalar_tensor(d, at::kLong))}, {{"axis", 0}});
  };
  Value zero = g.constant(at::scalar_tensor(0, at::kLong));
  Value one = g.constant(at::scalar_tensor(1, at::kLong));
  Value rows = unsqueeze(g, g.op("Range", {zero, size(rank - 2), one}), {1});
  Value cols = unsqueeze(g, g.op("Range", {zero, size(rank - 1), one}), {0});
  Value diff = g.op("Sub", {cols, rows});
  Value kk =
      a.is_constant(1) ? g.constant(at::scalar_tensor(k, at::kLong)) : a.tensor_as(1, at::kLong);
  return g.op("Not", {g.op(upper ? "Less" : "Greater", {diff, kk})});
}

Value masked_trilu(GraphContext& g, const Args& a, bool upper, TriluMask make_mask) {
  const int64_t rank = a.require_rank(0);
  if (rank < 2) g.fail("tril/triu need a tensor of at least 2 dims");
  int64_t k = a.is_constant(1) ? a.int_arg(1) : 0;  // else computed: the mask reads it
  Value x = a.tensor(0);
  Value mask = make_mask(g, a, x, rank, k, upper);
  at::ScalarType type = a.dtype(0);
  if (type == at::ScalarType::Undefined) g.fail("the input's dtype is unknown");
  if (type == at::kBool) return g.op("And", {mask, x});  // ORT's Where takes no bool before 16
  return g.op("Where", {mask, x, g.constant_scalar(0, type)});
}

// ----- chunk / split -----------------------------------------------------------------------

// aten::chunk / unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]  ⇒  Split; a
//   number of chunks computed in the graph (opset 11+): Slices of the piece size computed there,
//   as many as the list is unpacked into (else an ONNX sequence), as torch.onnx does
Values chunk(GraphContext& g, const Args& a) {
  const torch::jit::Value* list = a.node()->output();
  if (!a.is_constant(1)) {
    g.require_opset(11, "chunk into a number of pieces computed in the graph", "",
                    "make the number of chunks a constant");
    const int64_t dim = normalize_dim(a.int_arg(2), a.require_rank(0));
    Value x = a.tensor(0);
    Value n = a.tensor_as(1, at::kLong);
    Value size = g.op(
        "Div",
        {g.op("Sub", {g.op("Add", {symbolic::dim_size(g, x, dim), n}), scalar_long(g, 1)}), n});
    return pieces_of_size(g, x, size, dim, unpacked_length(list), list);
  }
  return chunk_pieces(g, a, a.int_arg(1), a.int_arg(2), unpacked_length(list), list);
}

// prim::ConstantChunk[chunks, dim](Tensor self) -> Tensor...  ⇒  Split
Values constant_chunk(GraphContext& g, const Args& a) {
  const torch::jit::Node* n = a.node();
  Values pieces = chunk_pieces(g, a, n->i(c10::Symbol::attr("chunks")), n->i(c10::attr::dim),
                               static_cast<int64_t>(n->outputs().size()), nullptr);
  if (pieces.size() != n->outputs().size()) {
    g.fail("ConstantChunk gives " + std::to_string(pieces.size()) + " pieces but has " +
           std::to_string(n->outputs().size()) + " outputs");
  }
  return pieces;
}

// aten::split.Tensor(Tensor self, int split_size, int dim=0) / split.sizes, split_with_sizes,
// unsafe_split, unsafe_split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]
//   ⇒  Split (static shape: an int split size gives as many pieces as the dim's size asks);
//      SplitToSequence for an int split size of a dynamic dim (11+); Slices between the running
//      sums (CumSum, 11+) of sizes computed in the graph
Values split_op(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  int64_t dim = normalize_dim(a.int_arg(2), rank);
  if (!a.is_constant(1)) {
    // Sizes computed in the graph (from other tensors' shapes): as many pieces as the list
    // has elements, each a Slice between the running sums of the sizes (opset 11+).
    std::optional<int64_t> n = list_length(a, 1);
    if (!n) g.fail("split sizes computed in the graph need a list of static length");
    g.require_opset(11, "split of sizes computed in the graph", "CumSum");
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
  if (arg.isInt() && !dim_known(a, 0, dim) && g.has(OnnxFeature::kSequences)) {
    // A dynamic dim: as many pieces as the run-time size asks, as an ONNX sequence.
    Value seq = g.op("SplitToSequence",
                     {a.tensor(0), g.constant_scalar(static_cast<double>(arg.toInt()), at::kLong)},
                     {{"axis", dim}, {"keepdims", int64_t{1}}});
    g.bind_sequence(a.node()->output(), seq);
    return {seq};
  }
  Ints sizes = arg.isInt() ? chunk_sizes(dim_size(g, a, 0, dim), arg.toInt()) : arg.toIntVector();
  return split_pieces(g, a.tensor(0), sizes, dim);
}

// aten::tensor_split.sections / .indices / .tensor_indices_or_sections(Tensor self,
//   int sections | int[] indices | Tensor, int dim=0) -> Tensor[]
//   ⇒  one Slice per piece (indices need no shape; sections read the dim's static size)
Values tensor_split_along(GraphContext& g, const Args& a, int64_t dim);

Values tensor_split(GraphContext& g, const Args& a) {
  return tensor_split_along(g, a, normalize_dim(a.int_arg(2), a.require_rank(0)));
}

// tensor_split by a tensor computed in the graph (opset 11+): a 1-D tensor of k indices (its
// length known at export) gives k + 1 Slices between [0, indices...] and [indices..., end]; a 0-d
// tensor of sections s gives pieces of size n / s, the first n % s one larger: Slices between
// their running sums when the list is unpacked into a known number of values, else a
// SplitToSequence of those sizes.
Values tensor_split_computed(GraphContext& g, const Args& a, int64_t dim) {
  g.require_opset(11, "tensor_split by a tensor computed in the graph", "",
                  "split by constant indices or sections");
  Value x = a.tensor(0);
  const torch::jit::Value* list = a.node()->output();
  Value starts, ends;
  int64_t count = 0;
  if (a.require_rank(1) == 1) {
    const std::optional<int64_t> length = a.dim_size(1, 0);
    if (!length) {
      g.fail(
          "tensor_split by a tensor of indices whose length is not known at export: the "
          "number of pieces depends on it. Remedy: give the indices a static length");
    }
    Value indices = a.tensor_as(1, at::kLong);
    starts = concat_1d(g, {g.constant_ints({0}), indices});
    ends = concat_1d(g, {indices, g.constant_ints({kIntMax})});
    count = *length + 1;
  } else {
    Value sections = a.tensor_as(1, at::kLong);
    Value n = dim_size(g, x, dim);
    Value larger =
        g.cast(g.op("Less", {arange(g, sections), g.op("Mod", {n, sections})}), at::kLong);
    Value sizes = g.op("Add", {g.op("Div", {n, sections}), larger});
    std::optional<int64_t> unpacked = unpacked_length(list);
    if (!unpacked) {
      Value seq = g.op("SplitToSequence", {x, sizes}, {{"axis", dim}});
      g.bind_sequence(list, seq);
      return {seq};
    }
    ends = g.op("CumSum", {sizes, g.constant(at::scalar_tensor(0, at::kLong))});
    starts = g.op("Sub", {ends, sizes});
    count = *unpacked;
  }
  Values pieces;
  for (int64_t k = 0; k < count; ++k) {
    Value at_k = g.constant_ints({k});
    pieces.push_back(g.op("Slice", {x, g.op("Gather", {starts, at_k}), g.op("Gather", {ends, at_k}),
                                    g.constant_ints({dim})}));
  }
  return pieces;
}

// tensor_split of argument 0 by argument 1 (sections, indices or a tensor of either) along `dim`.
Values tensor_split_along(GraphContext& g, const Args& a, int64_t dim) {
  if (!a.is_constant(1) && a.jit(1)->type()->kind() == c10::TypeKind::TensorType) {
    return tensor_split_computed(g, a, dim);
  }
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
}

// aten::hsplit / vsplit / dsplit.int(Tensor self, int sections) / .array(Tensor self,
//   int[] indices) -> Tensor[]  ⇒  tensor_split along dim 1 (hsplit; dim 0 for a 1-D tensor),
//   0 (vsplit, rank >= 2) or 2 (dsplit, rank >= 3); PyTorch requires sections to divide the dim
Values hsplit(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank < 1) g.fail("hsplit of a 0-d tensor (PyTorch requires rank >= 1)");
  return tensor_split_along(g, a, rank == 1 ? 0 : 1);
}
Values vsplit(GraphContext& g, const Args& a) {
  if (a.require_rank(0) < 2) g.fail("vsplit of a tensor of rank < 2 (PyTorch requires >= 2)");
  return tensor_split_along(g, a, 0);
}
Values dsplit(GraphContext& g, const Args& a) {
  if (a.require_rank(0) < 3) g.fail("dsplit of a tensor of rank < 3 (PyTorch requires >= 3)");
  return tensor_split_along(g, a, 2);
}

// aten::unbind.int(Tensor self, int dim=0) -> Tensor[]  ⇒  Split into ones, Squeeze each
// static shape: one output per element of the dim; a dim of unknown size: a sequence (11+).
Values unbind(GraphContext& g, const Args& a) {
  if (!is_int_type(a.jit(1))) g.fail("unbind with a named dim is not supported");
  const int64_t rank = a.require_rank(0);
  int64_t dim = normalize_dim(a.int_arg(1), rank);
  // A dim of unknown size (computed from data) whose list is unpacked (x, y = t.unbind(1)) has
  // as many elements as the unpacking takes: any other size fails in PyTorch.
  std::optional<int64_t> unpacked = unpacked_length(a.node()->output());
  if (!dim_known(a, 0, dim) && !unpacked && g.has(OnnxFeature::kSequences)) {
    // Any other list of a dim of unknown size (`for row in x.unbind(0)` after a loop's stack):
    // a sequence of the slices, their dim dropped (SplitToSequence without split, keepdims 0).
    Value seq = g.op("SplitToSequence", {a.tensor(0)}, {{"axis", dim}, {"keepdims", int64_t{0}}});
    g.bind_sequence(a.node()->output(), seq);
    return {seq};
  }
  int64_t n = !dim_known(a, 0, dim) && unpacked ? *unpacked : dim_size(g, a, 0, dim);
  Values out;
  for (const Value& piece : split_pieces(g, a.tensor(0), Ints(n, 1), dim)) {
    out.push_back(squeeze(g, piece, {dim}));
  }
  return out;
}

// ----- narrow --------------------------------------------------------------------------------

// aten::narrow / narrow_copy(Tensor self, int dim, SymInt start, SymInt length)  ⇒  Slice
// [start, start+length);
// narrow.Tensor(Tensor self, int dim, Tensor start, SymInt length)  ⇒  Slice with bounds computed
// in the graph (opset 10)
Values narrow(GraphContext& g, const Args& a) {
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
  // A negative start counts from the end: start + size * (start < 0).
  Value start = reshape_const(g, a.tensor_as(2, at::kLong), {1});
  Value size = shape_part(g, shape_of(g, x), dim, dim + 1);
  Value negative = g.cast(g.op("Less", {start, g.constant_ints({0})}), at::kLong);
  start = g.op("Add", {start, g.op("Mul", {negative, size})});
  Value end = g.op("Add", {start, g.constant_ints({length})});
  return {slice_computed(g, x, start, end, g.constant_ints({dim}), "",
                         "narrow with a start computed in the graph")};
}

// ----- diagonal / tril / triu ---------------------------------------------------------------

// aten::diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1)
//   ⇒  Transpose dim1, dim2 last, Reshape them into one, Gather the diagonal's elements
//      (indices from Range from opset 11, constants before: static shape)
Values diagonal_of(GraphContext& g, const Args& a, int64_t offset, int64_t d1, int64_t d2);

Values diagonal(GraphContext& g, const Args& a) {
  if (!is_int_type(a.jit(1))) g.fail("diagonal with named dims is not supported");
  const int64_t rank = a.require_rank(0);
  if (rank < 2) g.fail("diagonal needs a tensor of at least 2 dims");
  return diagonal_of(g, a, a.int_arg(1), normalize_dim(a.int_arg(2), rank),
                     normalize_dim(a.int_arg(3), rank));
}

// The diagonal `offset` of argument 0 over its dims d1, d2 (non-negative).
Values diagonal_of(GraphContext& g, const Args& a, int64_t offset, int64_t d1, int64_t d2) {
  const int64_t rank = a.require_rank(0);
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
  if (sizes && ((*sizes)[d1] * (*sizes)[d2] == 0 || !g.has(OnnxFeature::kRange))) {
    return {last_two_diagonal(g, x, rank, (*sizes)[d1], (*sizes)[d2], offset)};
  }
  g.require_opset(11, "diagonal of an input without a static shape", "Range");
  return {last_two_diagonal_dynamic(g, x, rank, offset)};
}

// `x` (rank r >= 1, last dim of static size n) laid on diagonal `offset` of two new dims of size
// n + |offset| placed at output dims d1, d2 (of r + 1; non-negative): x with zeros appended,
// Gathered by constant indices of the flattened m×m planes (the zero off the diagonal; no
// arithmetic, so -0.0, inf and NaN stay), Reshaped and Transposed into place.
Value diag_embed_of(GraphContext& g, const Value& x, int64_t r, int64_t n, at::ScalarType type,
                    int64_t offset, int64_t d1, int64_t d2) {
  const int64_t m = n + std::abs(offset);
  const int64_t row0 = std::max<int64_t>(-offset, 0), col0 = std::max<int64_t>(offset, 0);
  at::Tensor idx = at::full({m * m}, n, at::kLong);
  for (int64_t k = 0; k < n; ++k) idx[(k + row0) * m + (k + col0)] = k;
  // Shape(x) with its last dim replaced by `last` (1-D int64).
  auto leading_and = [&](const Ints& last) {
    if (r == 1) return g.constant_ints(last);
    Ints lead(r - 1);
    std::iota(lead.begin(), lead.end(), 0);
    return concat_1d(g, {dims_of(g, x, lead), g.constant_ints(last)});
  };
  const at::Tensor zero = at::zeros({1}, at::TensorOptions().dtype(type));
  Value y;
  if (m == 0) {  // an empty input on the main diagonal: [..., 0, 0]
    y = g.op("ConstantOfShape", {leading_and({0, 0})}, {{"value", zero}});
  } else {
    Value zeros = g.op("ConstantOfShape", {leading_and({1})}, {{"value", zero}});
    Value padded = g.op("Concat", {x, zeros}, {{"axis", r - 1}});
    Value planes = g.op("Gather", {padded, g.constant(idx)}, {{"axis", r - 1}});
    Ints shape(r - 1, 0);  // 0 copies the leading dims (the Gather output's own)
    shape.push_back(m);
    shape.push_back(m);
    y = g.op("Reshape", {planes, g.constant_ints(shape)});
  }
  Ints perm;
  for (int64_t d = 0, lead = 0; d < r + 1; ++d) {
    perm.push_back(d == d1 ? r - 1 : d == d2 ? r : lead++);
  }
  return transpose(g, y, perm);
}

// aten::diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1)
//   ⇒  diag_embed_of (Concat, Gather of constant indices, Reshape, Transpose; static last dim)
Values diag_embed(GraphContext& g, const Args& a) {
  const int64_t r = a.require_rank(0);
  if (r < 1) g.fail("diag_embed of a 0-d tensor (PyTorch requires rank >= 1)");
  const int64_t d1 = normalize_dim(a.int_arg(2), r + 1), d2 = normalize_dim(a.int_arg(3), r + 1);
  if (d1 == d2) g.fail("diag_embed with dim1 == dim2 (PyTorch requires different dims)");
  return {
      diag_embed_of(g, a.tensor(0), r, dim_size(g, a, 0, -1), a.dtype(0), a.int_arg(1), d1, d2)};
}

// aten::diag(Tensor self, int diagonal=0)  ⇒  a 1-D input laid on a diagonal of a matrix
// (diag_embed_of), the diagonal of a 2-D one (as aten::diagonal)
Values diag(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const int64_t offset = a.int_arg(1);
  if (rank == 1) {
    return {diag_embed_of(g, a.tensor(0), 1, dim_size(g, a, 0, 0), a.dtype(0), offset, 0, 1)};
  }
  if (rank != 2) g.fail("diag of a tensor of rank other than 1 or 2 (PyTorch requires 1 or 2)");
  return diagonal_of(g, a, offset, 0, 1);
}

// aten::diagflat(Tensor self, int offset=0)  ⇒  the flattened input laid on a diagonal of a
// matrix (Reshape [-1], diag_embed_of; static number of elements)
Values diagflat(GraphContext& g, const Args& a) {
  auto sizes = a.sizes(0);
  int64_t n = 1;
  for (int64_t s : sizes ? *sizes : Ints{-1}) n = s < 0 || n < 0 ? -1 : n * s;
  if (n < 0) g.fail("diagflat needs the input's static shape");
  Value flat = g.op("Reshape", {a.tensor(0), g.constant_ints({-1})});
  return {diag_embed_of(g, flat, 1, n, a.dtype(0), a.int_arg(1), 0, 1)};
}

// aten::tril / triu(Tensor self, int diagonal=0)
//   ⇒  Where(mask, self, 0) with a constant mask at 9–10 (static shape), with a mask from Range
//      at 11–13; Trilu 14+ (from 11, the diagonal may be computed in the graph)
Converter trilu_with_constant_mask(bool upper) {
  return [upper](GraphContext& g, const Args& a) -> Values {
    return {masked_trilu(g, a, upper, constant_trilu_mask)};
  };
}
Converter trilu_with_range_mask(bool upper) {
  return [upper](GraphContext& g, const Args& a) -> Values {
    return {masked_trilu(g, a, upper, range_trilu_mask)};
  };
}
Converter trilu(bool upper) {
  return [upper](GraphContext& g, const Args& a) -> Values {
    Value k = a.is_constant(1) ? g.constant(at::scalar_tensor(a.int_arg(1), at::kLong))
                               : a.tensor_as(1, at::kLong);
    return {g.op("Trilu", {a.tensor(0), k}, {{"upper", int64_t{upper}}})};
  };
}

// ----- as_strided / unfold ------------------------------------------------------------------

// aten::as_strided(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset)
//   ⇒  Gather of the flattened input at constant indices offset + Σ i_k·stride_k (exact for a
//      contiguous input, whose storage is its flattening)
Values as_strided(GraphContext& g, const Args& a) {
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
}

// aten::unfold(Tensor self, int dimension, int size, int step)
//   ⇒  Gather of window indices [windows, size] along the dim (from Range at 11+, constants
//      before: static shape), the window elements moved last
Values unfold(GraphContext& g, const Args& a) {
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
  if (g.has(OnnxFeature::kRange)) {
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
    idx = g.constant((at::arange(windows, at::kLong).unsqueeze(1) * step + in_window).contiguous());
  }
  Value gathered = g.op("Gather", {x, idx}, {{"axis", dim}});
  Ints perm;
  for (int64_t d = 0; d <= rank; ++d) {
    if (d != dim + 1) perm.push_back(d);
  }
  perm.push_back(dim + 1);
  return {transpose(g, gathered, perm)};
}

}  // namespace

void register_slicing(Registry& r) {
  r.add("aten::chunk", from(9), chunk);
  r.add("aten::unsafe_chunk", from(9), chunk);
  r.add("prim::ConstantChunk", from(9), constant_chunk);
  for (const char* op : {"aten::split", "aten::split_with_sizes", "aten::unsafe_split",
                         "aten::unsafe_split_with_sizes"}) {
    r.add(op, from(9), split_op);
  }
  r.add("aten::tensor_split", from(9), tensor_split);
  r.add("aten::hsplit", from(9), hsplit);
  r.add("aten::vsplit", from(9), vsplit);
  r.add("aten::dsplit", from(9), dsplit);
  r.add("aten::unbind", from(9), unbind);

  r.add("aten::narrow", from(9), narrow);
  r.add("aten::narrow_copy", from(9), narrow);

  r.add("aten::diagonal", from(9), diagonal);
  r.add("aten::diag_embed", from(9), diag_embed);
  r.add("aten::diag", from(9), diag);
  r.add("aten::diagflat", from(9), diagflat);
  r.add("aten::tril", {9, 10}, trilu_with_constant_mask(/*upper=*/false));
  r.add("aten::tril", {11, 13}, trilu_with_range_mask(/*upper=*/false));
  r.add("aten::tril", from(14), trilu(/*upper=*/false));
  r.add("aten::triu", {9, 10}, trilu_with_constant_mask(/*upper=*/true));
  r.add("aten::triu", {11, 13}, trilu_with_range_mask(/*upper=*/true));
  r.add("aten::triu", from(14), trilu(/*upper=*/true));

  r.add("aten::as_strided", from(9), as_strided);
  r.add("aten::unfold", from(9), unfold);
}

}  // namespace torchonnx::symbolic::ops
