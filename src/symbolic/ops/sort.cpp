// Sorting and selection: sort, argsort, msort, topk, kthvalue, median/nanmedian, searchsorted,
// isin, mode, quantile/nanquantile, unique (_unique, _unique2, unique_dim, unique_consecutive,
// unique_dim_consecutive).
//
// Which of several equal elements PyTorch returns the index of is unspecified for kthvalue and
// median (CPU: std::nth_element): the converters take the first in index order (TopK is stable)
// and match libtorch where the selected value is unique.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <limits>

#include "common/compat.h"
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using at::ScalarType;

// Sorts x (dtype t) along `axis` ascending (or descending): TopK with k = the size of the axis
// (from the graph's Shape from 10; `static_size` at 9, where k is an attribute).
Values sort_tensor(GraphContext& g, const Value& x, ScalarType t, int64_t axis,
                   std::optional<int64_t> static_size, bool descending) {
  auto [k, k_static] = topk_k_of_dim(g, x, axis, static_size, "sorting");
  return topk(g, x, t, k, k_static, axis, descending);
}

// Sorts x (input 0) along dim (see sort_tensor).
Values sort_along(GraphContext& g, const Args& a, int64_t dim, bool descending) {
  const int64_t rank = a.require_rank(0);
  Value x = a.tensor(0);
  if (rank == 0) return {x, g.constant(at::zeros({}, at::kLong))};
  const int64_t axis = normalize_dim(dim, rank);
  return sort_tensor(g, x, a.dtype(0), axis, a.dim_size(0, axis), descending);
}

// Input 0 flattened to 1-D, with its static element count when known.
std::pair<Value, std::optional<int64_t>> flattened(GraphContext& g, const Args& a) {
  std::optional<int64_t> n = 1;
  auto sizes = a.sizes(0);
  if (!sizes) n.reset();
  for (int64_t s : sizes ? *sizes : std::vector<int64_t>{}) {
    if (s < 0) n.reset();
    if (n) *n *= s;
  }
  return {g.op("Reshape", {a.tensor(0), g.constant_ints({-1})}), n};
}

// any(b) of bool b along `axes` as bool.
Value any_along(GraphContext& g, const Value& b, const std::vector<int64_t>& axes, bool keepdim) {
  return g.cast(reduce(g, "ReduceSum", g.cast(b, ScalarType::Long), axes, keepdim),
                ScalarType::Bool);
}

Value empty_long(GraphContext& g) {
  return g.constant(at::empty({0}, at::kLong));
}

// The dtype ONNX Unique runs in for input dtype t (ORT implements float, double, int8, int64):
// other integers and bool are widened to int64, half precision to float.
ScalarType unique_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float:
    case ScalarType::Double:
    case ScalarType::Char:
    case ScalarType::Long:
      return t;
    case ScalarType::Half:
    case ScalarType::BFloat16:
      return ScalarType::Float;
    default:
      return ScalarType::Long;
  }
}

// ONNX Unique of x (input 0) over the flattened input (dim none) or the slices along dim.
// Returns (values, inverse, counts); inverse has the input's shape when flattened (PyTorch's
// rule), and outputs not asked for are empty int64 tensors as in PyTorch (the callers pass
// PyTorch's rules for which are computed).
Values unique(GraphContext& g, const Args& a, std::optional<int64_t> dim, bool sorted,
              bool return_inverse, bool return_counts) {
  ScalarType t = a.dtype(0);
  ScalarType ct = unique_type(t);
  Value x = cast_if(g, a.tensor(0), t, ct);
  ir::Attributes attrs{{"sorted", static_cast<int64_t>(sorted)}};
  if (dim) {
    attrs.emplace_back("axis", normalize_dim(*dim, a.require_rank(0)));
  } else {
    x = g.op("Reshape", {x, g.constant_ints({-1})});
  }
  Values u = g.op("Unique", {x}, attrs, 4);
  Value inverse = empty_long(g);
  if (return_inverse) {
    inverse = dim ? u[2] : g.op("Reshape", {u[2], g.op("Shape", {a.tensor(0)})});
  }
  return {cast_if(g, u[0], ct, t), inverse, return_counts ? u[3] : empty_long(g)};
}

// _unique/_unique2 before opset 11 (no Unique, CumSum, ScatterElements), sorted (a valid order
// for sorted=False too, which PyTorch leaves unspecified): s, perm = ascending TopK of the
// flattened input; run starts mask = [true, s[1:] > s[:-1]]; values = s at the run starts;
// inverse = Scatter(perm, cumsum(mask) - 1), the cumsum a MatMul by a triangular ones matrix;
// counts = run ends + 1 - run starts.
Values unique_by_sorting(GraphContext& g, const Args& a, bool return_inverse, bool return_counts) {
  // static shape: TopK's k (an attribute at 9) and the cumsum matrix need the element count.
  auto sizes = a.sizes(0);
  int64_t n = 1;
  for (int64_t s : sizes ? *sizes : std::vector<int64_t>{-1}) n = s < 0 ? -1 : n * s;
  if (n < 1 || n > 4096) {
    g.fail(
        "unique before opset 11 needs a static, non-empty input of at most 4096 elements; "
        "export with opset >= 11");
  }
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  ScalarType t = a.dtype(0);
  ScalarType ct = topk_type(g.opset(), t);
  Value flat = cast_if(g, g.op("Reshape", {a.tensor(0), g.constant_ints({-1})}), t, ct);
  Value k = topk_k(g, n);
  Values sorted = topk_in(g, flat, k, n, 0, /*largest=*/false);
  Value s = sorted[0];
  // Run starts and run ends (the last element of each run), both of n elements.
  Value later = g.op("Greater", {slice(g, s, {0}, {1}, {kMax}), slice(g, s, {0}, {0}, {-1})});
  Value yes = g.constant(at::ones({1}, at::kBool));
  Value mask = g.op("Concat", {yes, later}, {{"axis", int64_t{0}}});
  // Gather rather than Compress, which has no type inference before 11.
  Value starts = g.op("Reshape", {g.op("NonZero", {mask}), g.constant_ints({-1})});
  Value values = cast_if(g, g.op("Gather", {s, starts}, {{"axis", int64_t{0}}}), ct, t);
  Value inverse = empty_long(g);
  if (return_inverse) {
    Value tri = g.constant(at::ones({n, n}, at::kLong).triu());
    Value ids = g.op("Sub", {g.op("MatMul", {g.cast(mask, ScalarType::Long), tri}),
                             g.constant(at::ones({1}, at::kLong))});
    inverse = g.op("Scatter", {g.constant(at::zeros({n}, at::kLong)), sorted[1], ids},
                   {{"axis", int64_t{0}}});
    inverse = g.op("Reshape", {inverse, g.op("Shape", {a.tensor(0)})});
  }
  Value counts = empty_long(g);
  if (return_counts) {
    // counts = (run ends + 1) - run starts, both from NonZero (slicing `starts` would need a
    // Slice of a data-dependent length, whose ONNX shape inference misleads ORT at opset 10).
    Value end_mask = g.op("Concat", {later, yes}, {{"axis", int64_t{0}}});
    Value ends = g.op("Reshape", {g.op("NonZero", {end_mask}), g.constant_ints({-1})});
    counts = g.op("Sub", {g.op("Add", {ends, g.constant_ints({1})}), starts});
  }
  return {values, inverse, counts};
}

// unique_consecutive: the first element of each run of equal elements (slices along dim), by
// comparing neighbours: mask = [true, x[1:] != x[:-1]] (a slice differs where any element does),
// values = Compress(x, mask), inverse = CumSum(mask) - 1, counts = run ends + 1 - run starts.
Values unique_consecutive(GraphContext& g, const Args& a, std::optional<int64_t> dim,
                          bool return_inverse, bool return_counts) {
  const int64_t rank = a.require_rank(0);
  Value x = a.tensor(0);
  int64_t axis = 0;
  int64_t work_rank = 1;
  if (dim) {
    axis = normalize_dim(*dim, rank);
    work_rank = rank;
  } else {
    x = g.op("Reshape", {x, g.constant_ints({-1})});
  }
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  auto slice = [&](const Value& v, int64_t start, int64_t end) {
    return g.op("Slice",
                {v, g.constant_ints({start}), g.constant_ints({end}), g.constant_ints({axis})});
  };
  Value differs = g.op("Not", {g.op("Equal", {slice(x, 1, kMax), slice(x, 0, -1)})});
  if (work_rank > 1) {
    std::vector<int64_t> others;
    for (int64_t i = 0; i < work_rank; ++i) {
      if (i != axis) others.push_back(i);
    }
    differs = g.cast(reduce(g, "ReduceMax", g.cast(differs, ScalarType::Int), others, false),
                     ScalarType::Bool);
  }
  Value yes = g.constant(at::ones({1}, at::kBool));
  Value mask = g.op("Concat", {yes, differs}, {{"axis", int64_t{0}}});  // run starts
  Value values = g.op("Compress", {x, mask}, {{"axis", axis}});
  Value inverse = empty_long(g);
  if (return_inverse) {
    Value ids = g.op("CumSum",
                     {g.cast(mask, ScalarType::Long), g.constant(at::scalar_tensor(0, at::kLong))});
    inverse = g.op("Sub", {ids, g.constant(at::ones({1}, at::kLong))});
    if (!dim) inverse = g.op("Reshape", {inverse, g.op("Shape", {a.tensor(0)})});
  }
  Value counts = empty_long(g);
  if (return_counts) {
    // counts = (run ends + 1) - run starts, the ends being the last element of each run.
    Value end_mask = g.op("Concat", {differs, yes}, {{"axis", int64_t{0}}});
    auto positions = [&](const Value& m) {
      return g.op("Reshape", {g.op("NonZero", {m}), g.constant_ints({-1})});
    };
    counts =
        g.op("Sub", {g.op("Add", {positions(end_mask), g.constant_ints({1})}), positions(mask)});
  }
  return {values, inverse, counts};
}

// ----- sort / argsort / topk -----------------------------------------------------------------

// aten::sort(Tensor self, int dim=-1, bool descending=False) -> (values, indices)
//   ⇒  TopK(k = size of dim): k attribute at 9 (static size), input from 10; ascending before
//      11 via Neg; equal elements keep their order (stable)
Values sort(GraphContext& g, const Args& a) {
  return sort_along(g, a, a.int_arg(1), a.bool_arg(2));
}

// aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False)
//   ⇒  as aten::sort (TopK's order is stable)
Values sort_stable(GraphContext& g, const Args& a) {
  return sort_along(g, a, a.int_arg(2), a.bool_arg(3));
}

// aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False)
//   ⇒  the indices of sort's TopK
Values argsort_stable(GraphContext& g, const Args& a) {
  return {sort_stable(g, a)[1]};
}

// aten::argsort(Tensor self, int dim=-1, bool descending=False)  ⇒  the indices of sort's TopK
Values argsort(GraphContext& g, const Args& a) {
  return {sort(g, a)[1]};
}

// aten::topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True)
//   ⇒  TopK: k attribute at 9, input from 10; largest/sorted attributes from 11 (smallest via
//      Neg before); always sorted (PyTorch leaves the order of sorted=False unspecified)
Values topk_op(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const bool largest = a.bool_arg(3);
  Value x = a.tensor(0);
  if (rank == 0) x = g.op("Reshape", {x, g.constant_ints({1})});
  const int64_t axis = rank == 0 ? 0 : normalize_dim(a.int_arg(2), rank);
  std::optional<int64_t> k_static;
  Value k;
  if (a.is_constant(1)) {
    k_static = a.int_arg(1);
    k = topk_k(g, *k_static);
  } else {  // (at opset 9 topk_in refuses a computed k)
    k = g.op("Reshape", {a.tensor_as(1, at::kLong), g.constant_ints({1})});
  }
  Values out = topk(g, x, a.dtype(0), k, k_static, axis, largest);
  if (rank == 0) {
    out[0] = g.op("Reshape", {out[0], g.constant_ints({})});
    out[1] = g.op("Reshape", {out[1], g.constant_ints({})});
  }
  return out;
}

// ----- msort / kthvalue / median -------------------------------------------------------------

// aten::msort(Tensor self) -> Tensor  ⇒  the values of sort along dim 0
Values msort(GraphContext& g, const Args& a) {
  return {sort_along(g, a, 0, false)[0]};
}

// Element `k` (a 0-d int64, or [k] to keep the axis) of `v` along `axis`.
Value element_at(GraphContext& g, const Value& v, const Value& k, int64_t axis) {
  return g.op("Gather", {v, k}, {{"axis", axis}});
}

// aten::kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (values, indices)
//   ⇒  TopK(k, smallest) along dim (as topk: NaN ranked last from opset 11), its element k - 1
//      by Gather
Values kthvalue(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const int64_t k = a.int_arg(1);
  const bool keepdim = a.bool_arg(3);
  if (rank == 0) {
    if (k != 1) g.fail("kthvalue of a 0-d tensor takes k = 1");
    return {a.tensor(0), g.constant(at::zeros({}, at::kLong))};
  }
  const int64_t axis = normalize_dim(a.int_arg(2), rank);
  Value kv = topk_k(g, k);
  Values top = topk(g, a.tensor(0), a.dtype(0), kv, k, axis, /*largest=*/false);
  Value at = keepdim ? g.constant_ints({k - 1}) : g.constant(at::scalar_tensor(k - 1, at::kLong));
  return {element_at(g, top[0], at, axis), element_at(g, top[1], at, axis)};
}

// (n - 1) / 2 of a count n (int64, any shape), 0 for n = 0: the index of the lower median.
Value lower_median_index(GraphContext& g, const Value& n) {
  Value one = g.constant(at::scalar_tensor(1, at::kLong));
  Value two = g.constant(at::scalar_tensor(2, at::kLong));
  Value zero = g.constant(at::scalar_tensor(0, at::kLong));
  Value half = g.op("Div", {g.op("Sub", {n, one}), two});
  return g.op("Where", {g.op("Greater", {n, zero}), half, zero});
}

// aten::median(Tensor self) -> Tensor  ⇒  the flattened input sorted (TopK), element (n - 1) / 2
//   (the lower median); NaN when the input holds one
Values median_all(GraphContext& g, const Args& a) {
  auto [flat, n] = flattened(g, a);
  ScalarType t = a.dtype(0);
  Value sorted = sort_tensor(g, flat, t, 0, n, false)[0];
  Value m = element_at(g, sorted, lower_median_index(g, g.op("Size", {flat})), 0);
  if (!at::isFloatingType(t)) return {m};
  Value nan = g.op("IsNaN", {flat});
  return {g.op("Where", {any_along(g, nan, {0}, false), g.constant_scalar(std::nan(""), t), m})};
}

// aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (values, indices)
//   ⇒  sorted along dim (TopK), element (n - 1) / 2 by Gather; where the slice holds a NaN,
//      NaN and the index of its first NaN (ArgMax of IsNaN), as PyTorch
Values median_dim(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {a.tensor(0), g.constant(at::zeros({}, at::kLong))};
  const int64_t axis = normalize_dim(a.int_arg(1), rank);
  const bool keepdim = a.bool_arg(2);
  Value x = a.tensor(0);
  ScalarType t = a.dtype(0);
  Values sorted = sort_tensor(g, x, t, axis, a.dim_size(0, axis), false);
  Value n = g.op("Gather", {g.op("Shape", {x}), g.constant_ints({axis})}, {{"axis", int64_t{0}}});
  Value k = lower_median_index(g, n);  // [1]
  if (!keepdim) k = g.op("Reshape", {k, g.constant_ints({})});
  Value v = element_at(g, sorted[0], k, axis), i = element_at(g, sorted[1], k, axis);
  if (!at::isFloatingType(t)) return {v, i};
  Value nan = g.op("IsNaN", {x});
  Value has_nan = any_along(g, nan, {axis}, keepdim);
  ir::Attributes attrs{{"axis", axis}, {"keepdims", static_cast<int64_t>(keepdim)}};
  Value first_nan = g.op("ArgMax", {g.cast(nan, ScalarType::Int)}, attrs);
  return {g.op("Where", {has_nan, g.constant_scalar(std::nan(""), t), v}),
          g.op("Where", {has_nan, first_nan, i})};
}

// Count of the elements of `x` that are not NaN along `axes` (int64).
Value count_not_nan(GraphContext& g, const Value& x, const std::vector<int64_t>& axes,
                    bool keepdim) {
  Value ok = g.cast(g.op("Not", {g.op("IsNaN", {x})}), ScalarType::Long);
  return reduce(g, "ReduceSum", ok, axes, keepdim);
}

// aten::nanmedian(Tensor self) -> Tensor  ⇒  the flattened input sorted (TopK, NaN last: opset
//   11+), element (m - 1) / 2 of the m that are not NaN (NaN when all are)
Values nanmedian_all(GraphContext& g, const Args& a) {
  ScalarType t = a.dtype(0);
  if (!at::isFloatingType(t)) return median_all(g, a);
  auto [flat, n] = flattened(g, a);
  Value sorted = sort_tensor(g, flat, t, 0, n, false)[0];
  return {element_at(g, sorted, lower_median_index(g, count_not_nan(g, flat, {0}, false)), 0)};
}

// aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (values, indices)
//   ⇒  sorted along dim (TopK, NaN last: opset 11+), GatherElements at (m - 1) / 2 of each
//      slice's m elements that are not NaN (an all-NaN slice: its first element, NaN)
Values nanmedian_dim(GraphContext& g, const Args& a) {
  ScalarType t = a.dtype(0);
  if (!at::isFloatingType(t)) return median_dim(g, a);
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {a.tensor(0), g.constant(at::zeros({}, at::kLong))};
  const int64_t axis = normalize_dim(a.int_arg(1), rank);
  const bool keepdim = a.bool_arg(2);
  Value x = a.tensor(0);
  Values sorted = sort_tensor(g, x, t, axis, a.dim_size(0, axis), false);
  Value k = lower_median_index(g, count_not_nan(g, x, {axis}, true));
  Values out;
  for (const Value& s : sorted) {
    Value e = g.op("GatherElements", {s, k}, {{"axis", axis}});
    out.push_back(keepdim ? e : squeeze(g, e, {axis}));
  }
  return out;
}

// ----- searchsorted / isin -------------------------------------------------------------------

// The dtype two tensors are compared in: their promoted type (a Python scalar `b` takes a's
// dtype unless it is floating and a is not), widened to what ONNX Runtime compares (float,
// double, int32, int64).
bool is_scalar(const Args& a, size_t i) {
  return !a.jit(i)->type()->cast<c10::TensorType>();
}

// The rank of argument i: 0 for a Python scalar.
int64_t rank_of(const Args& a, size_t i) {
  return is_scalar(a, i) ? 0 : a.require_rank(i);
}

ScalarType comparison_type(const Args& a, size_t i, size_t j) {
  ScalarType ti = a.dtype(i), tj = a.dtype(j);
  ScalarType type;
  if (is_scalar(a, j)) {
    type = at::isFloatingType(tj) && !at::isFloatingType(ti) ? ScalarType::Float : ti;
  } else if (is_scalar(a, i)) {
    type = at::isFloatingType(ti) && !at::isFloatingType(tj) ? ScalarType::Float : tj;
  } else {
    type = at::promote_types(ti, tj);
  }
  if (type == ScalarType::Float || type == ScalarType::Double || type == ScalarType::Int ||
      type == ScalarType::Long) {
    return type;
  }
  return at::isFloatingType(type) ? ScalarType::Float : ScalarType::Long;
}

// aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False,
//   bool right=False, str? side=None, Tensor? sorter=None) / .Scalar(…, Scalar self, …)
//   ⇒  the count of the row's elements s with !(s >= v) (left) or !(s > v) (right), PyTorch's
//      binary-search predicates (a NaN v counts the whole row): ReduceSum over the last axis of
//      Cast(Less(s, v) or IsNaN(s) or IsNaN(v)) / Not(Greater(s, v)). A count does not depend on
//      the order of the row, so `sorter` (a permutation that sorts it) changes nothing.
Values searchsorted(GraphContext& g, const Args& a) {
  const bool out_int32 = a.bool_arg(2);
  bool right = a.bool_arg(3);
  if (a.size() > 4 && !a.is_none(4)) {
    const std::string side = a.str_arg(4);
    if (side != "left" && side != "right") g.fail("searchsorted side '" + side + "'");
    right = side == "right";
  }
  ScalarType type = comparison_type(a, 0, 1);
  const int64_t seq_rank = a.require_rank(0);
  const int64_t rank = rank_of(a, 1);
  Value s = a.tensor_as(0, type);
  Value v = a.tensor_as(1, type);
  if (seq_rank > 1) {
    if (rank != seq_rank) g.fail("searchsorted of an N-D sequence takes values of the same rank");
    s = unsqueeze(g, s, {seq_rank - 1});  // [..., 1, M]
  }
  v = unsqueeze(g, v, {rank});  // [..., K, 1]
  Value counted;
  if (right) {
    counted = g.op("Not", {g.op("Greater", {s, v})});
  } else {
    counted = g.op("Less", {s, v});
    if (at::isFloatingType(type)) {
      counted = g.op("Or", {counted, g.op("Or", {g.op("IsNaN", {s}), g.op("IsNaN", {v})})});
    }
  }
  Value n = reduce(g, "ReduceSum", g.cast(counted, ScalarType::Long), {rank}, false);
  return {out_int32 ? g.cast(n, ScalarType::Int) : n};
}

// aten::isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False,
//   bool invert=False) / .Tensor_Scalar / .Scalar_Tensor
//   ⇒  any over the flattened test elements of Equal(elements[..., None], test) (Equal of floats:
//      opset 11+; NaN is in nothing); Not for invert
Values isin(GraphContext& g, const Args& a) {
  ScalarType type = comparison_type(a, 0, 1);
  const int64_t rank = rank_of(a, 0);
  Value x = unsqueeze(g, a.tensor_as(0, type), {rank});
  Value test = g.op("Reshape", {a.tensor_as(1, type), g.constant_ints({-1})});
  Value found = any_along(g, g.op("Equal", {x, test}), {rank}, false);
  return {a.bool_arg(3) ? g.op("Not", {found}) : found};
}

// ----- mode ----------------------------------------------------------------------------------

// aten::mode(Tensor self, int dim=-1, bool keepdim=False) -> (values, indices)
//   ⇒  for each element the count of equal elements in its slice (ReduceSum of the n×n Equal),
//      the value: the smallest of those with the highest count (ReduceMin), the index: the last
//      position holding it (ReduceMax of the positions) — PyTorch's CPU kernel takes the end of
//      the value's run after std::sort of (value, index) pairs, which is the last position for
//      slices under 16 elements (insertion sort is stable) and unspecified beyond. Opset 11+
//      (Equal of floats); NaN not handled (PyTorch's sort order of NaN is undefined there).
Values mode(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {a.tensor(0), g.constant(at::zeros({}, at::kLong))};
  const int64_t axis = normalize_dim(a.int_arg(1), rank);
  const bool keepdim = a.bool_arg(2);
  ScalarType t = a.dtype(0);
  ScalarType ct = t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Long
                      ? t
                      : (at::isFloatingType(t) ? ScalarType::Float : ScalarType::Long);
  Value x = cast_if(g, a.tensor(0), t, ct);
  Value pairs = g.op("Equal", {unsqueeze(g, x, {axis + 1}), unsqueeze(g, x, {axis})});
  Value count = reduce(g, "ReduceSum", g.cast(pairs, ScalarType::Long), {axis + 1}, false);
  Value top = g.op("Equal", {count, reduce(g, "ReduceMax", count, {axis}, true)});
  Value big_v = at::isFloatingType(ct)
                    ? g.constant_scalar(std::numeric_limits<double>::infinity(), ct)
                    : g.constant(at::scalar_tensor(std::numeric_limits<int64_t>::max(), at::kLong));
  Value value = reduce(g, "ReduceMin", g.op("Where", {top, x, big_v}), {axis}, true);
  std::vector<int64_t> shape(rank, 1);
  shape[axis] = -1;
  Value positions = g.op("Reshape", {arange(g, dim_size(g, x, axis)), g.constant_ints(shape)});
  Value none = g.constant(at::scalar_tensor(-1, at::kLong));
  Value index = reduce(g, "ReduceMax", g.op("Where", {g.op("Equal", {x, value}), positions, none}),
                       {axis}, true);
  if (!keepdim) {
    value = squeeze(g, value, {axis});
    index = squeeze(g, index, {axis});
  }
  return {cast_if(g, value, ct, t), index};
}

// ----- quantile / nanquantile -------------------------------------------------------------------

// aten::quantile/nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *,
//   str interpolation='linear') and .scalar(Tensor self, float q, ...)  ⇒  ATen's algorithm
//   (Sorting.cpp quantile_compute): the slices along dim (or the flattened input) sorted (TopK,
//   NaN last), ranks = q·(n - 1) in the input's dtype (libtorch 2.14: in double) — quantile: n the
//   size, the last rank where the slice holds a NaN (so the result is NaN); nanquantile: n the
//   count of non-NaN elements, 0 for an all-NaN slice — Floor/Ceil/Round (half to even, as round_)
//   for lower/higher/nearest; the values at the ranks by GatherElements; linear and midpoint lerp
//   (ATen's two-sided form) between the values at Floor and Ceil of the rank with the weight rank -
//   Floor(rank) or 0.5. A 1-D q puts its dim first. Opset 11+ (GatherElements, Round).
Converter quantile(bool ignore_nan) {
  return [=](GraphContext& g, const Args& a) -> Values {
    ScalarType t = a.dtype(0);
    if (t != ScalarType::Float && t != ScalarType::Double) {
      g.fail("quantile of a tensor that is not float or double (PyTorch rejects it)");
    }
    const std::string mode = a.str_arg(4);
    if (mode != "linear" && mode != "lower" && mode != "higher" && mode != "midpoint" &&
        mode != "nearest") {
      g.fail("quantile interpolation '" + mode + "'");
    }
    const bool scalar_q = is_scalar(a, 1) || a.require_rank(1) == 0;
    if (!scalar_q && a.require_rank(1) != 1) g.fail("quantile takes a 0-d or 1-D q");
    const int64_t rank = a.require_rank(0);
    const std::optional<int64_t> dim = a.optional_int(2);
    const bool keepdim = a.bool_arg(3);
    Value x = a.tensor(0);
    int64_t axis = 0, work_rank = 1;
    std::optional<int64_t> static_size;
    if (dim && rank > 0) {
      axis = normalize_dim(*dim, rank);
      work_rank = rank;
      static_size = a.dim_size(0, axis);
    } else {
      auto [flat, n] = flattened(g, a);
      x = flat;
      static_size = n;
    }
    Value sorted = sort_tensor(g, x, t, axis, static_size, false)[0];
    // q as [Q, 1, ..., 1] (work_rank ones), the sorted slices as [Q, ...].
    // The ranks' dtype: the input's, or double where libtorch computes them so
    // (compat::kQuantileRanksInDouble).
    const ScalarType rt = compat::kQuantileRanksInDouble ? ScalarType::Double : t;
    auto to_rt = [&](const Value& v) { return rt == t ? v : g.cast(v, rt); };
    Value q = g.op("Reshape", {to_rt(a.tensor_as(1, t)), g.constant_ints({-1})});
    std::vector<int64_t> q_shape(work_rank + 1, 1);
    q_shape[0] = -1;
    q = g.op("Reshape", {q, g.constant_ints(q_shape)});
    const int64_t qaxis = axis + 1;
    Value nan = g.op("IsNaN", {sorted});
    Value one = g.constant(at::scalar_tensor(1, at::kLong));
    Value ranks;
    if (ignore_nan) {
      Value m = reduce(g, "ReduceSum", g.cast(g.op("Not", {nan}), ScalarType::Long), {axis}, true);
      ranks = g.op("Mul", {q, g.cast(g.op("Sub", {m, one}), rt)});
      Value zero = g.constant_scalar(0, rt);
      ranks = g.op("Where", {g.op("Less", {ranks, zero}), zero, ranks});
    } else {
      Value n = dim_size(g, x, axis);
      Value last = g.cast(g.op("Sub", {n, one}), rt);
      ranks = g.op("Where", {unsqueeze(g, any_along(g, nan, {axis}, true), {0}), last,
                             g.op("Mul", {q, last})});
    }
    if (mode == "lower") ranks = g.op("Floor", {ranks});
    if (mode == "higher") ranks = g.op("Ceil", {ranks});
    if (mode == "nearest") ranks = g.op("Round", {ranks});
    // The sorted slices repeated for each q: GatherElements does not broadcast.
    Value expanded = g.op("Expand", {unsqueeze(g, sorted, {0}), g.op("Shape", {q})});
    auto value_at = [&](const Value& r) {
      return g.op("GatherElements", {expanded, g.cast(r, ScalarType::Long)}, {{"axis", qaxis}});
    };
    Value out = value_at(ranks);
    if (mode == "linear" || mode == "midpoint") {
      Value w = mode == "midpoint" ? g.constant_scalar(0.5, t)
                                   : g.op("Sub", {ranks, g.op("Floor", {ranks})});
      if (rt != t) w = g.cast(w, t);
      Value above = value_at(g.op("Ceil", {ranks}));
      Value diff = g.op("Sub", {above, out});
      Value small = g.op("Less", {g.op("Abs", {w}), g.constant_scalar(0.5, t)});
      out = g.op(
          "Where",
          {small, g.op("Add", {out, g.op("Mul", {w, diff})}),
           g.op("Sub", {above, g.op("Mul", {diff, g.op("Sub", {g.constant_scalar(1, t), w})})})});
    }
    // [Q, ...] with size 1 at the reduced axis.
    if (!dim || rank == 0) {
      // The flattened input: [Q, 1] → [Q] or [Q, 1, ..., 1] (keepdim: the input's rank of ones).
      std::vector<int64_t> shape{-1};
      if (keepdim) shape.resize(rank + 1, 1);
      out = g.op("Reshape", {out, g.constant_ints(shape)});
    } else if (!keepdim) {
      out = squeeze(g, out, {qaxis});
    }
    if (scalar_q) out = squeeze(g, out, {0});
    return {out};
  };
}

// ----- unique ------------------------------------------------------------------------------

// aten::_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (values, inverse)
//   ⇒  before 11, sorted by TopK (see unique_by_sorting)
Values unique_by_sorting_op(GraphContext& g, const Args& a) {
  Values u = unique_by_sorting(g, a, a.bool_arg(2), false);
  return {u[0], u[1]};
}

// aten::_unique  ⇒  Unique (11+) over the flattened input
Values unique_op(GraphContext& g, const Args& a) {
  Values u = unique(g, a, std::nullopt, a.bool_arg(1), a.bool_arg(2), false);
  return {u[0], u[1]};
}

// aten::_unique2(Tensor self, bool sorted=True, bool return_inverse=False,
// bool return_counts=False) -> (values, inverse, counts): whether to compute the inverse.
// PyTorch 1.13 computes it when either the inverse or the counts are asked for.
bool unique2_inverse(const Args& a) {
  return a.bool_arg(2) || (a.bool_arg(3) && compat::kUniqueComputesInverseForCounts);
}

// aten::_unique2  ⇒  before 11, sorted by TopK (see unique_by_sorting)
Values unique2_by_sorting(GraphContext& g, const Args& a) {
  const bool counts = a.bool_arg(3);
  return unique_by_sorting(g, a, unique2_inverse(a), counts);
}

// aten::_unique2  ⇒  Unique (11+), flattened
Values unique2(GraphContext& g, const Args& a) {
  const bool counts = a.bool_arg(3);
  return unique(g, a, std::nullopt, a.bool_arg(1), unique2_inverse(a), counts);
}

// aten::unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False,
// bool return_counts=False)  ⇒  Unique(axis=dim, sorted=1) (opset 11+; PyTorch always sorts
// the slices and returns the inverse and counts here)
Values unique_dim(GraphContext& g, const Args& a) {
  return unique(g, a, a.int_arg(1), true, true, true);  // PyTorch computes all three
}

// aten::unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False,
// int? dim=None)  ⇒  Compress by a neighbour-difference mask, CumSum, NonZero (opset 11+)
Values unique_consecutive_op(GraphContext& g, const Args& a) {
  // With a dim PyTorch computes the inverse and counts whatever the flags say.
  std::optional<int64_t> dim = a.optional_int(3);
  return unique_consecutive(g, a, dim, a.bool_arg(1) || dim.has_value(),
                            a.bool_arg(2) || dim.has_value());
}

// aten::unique_dim_consecutive(Tensor self, int dim, bool return_inverse=False,
// bool return_counts=False)  ⇒  as unique_consecutive with dim (opset 11+)
Values unique_dim_consecutive(GraphContext& g, const Args& a) {
  return unique_consecutive(g, a, a.int_arg(1), true, true);  // PyTorch computes all
}

}  // namespace

void register_sort(Registry& r) {
  r.add_unnamed("aten::sort", from(9), sort);
  r.add("aten::sort.stable", from(9), sort_stable);
  r.add_unnamed("aten::argsort", from(9), argsort);
  r.add("aten::argsort.stable", from(9), argsort_stable);
  r.add("aten::topk", from(9), topk_op);
  r.add("aten::msort", from(9), msort);
  r.add("aten::kthvalue", from(9), kthvalue);
  r.add_unnamed("aten::median", from(9), median_all);
  r.add("aten::median.dim", from(9), median_dim);
  r.add_unnamed("aten::nanmedian", from(11), nanmedian_all);
  r.add("aten::nanmedian.dim", from(11), nanmedian_dim);
  r.add("aten::searchsorted", from(9), searchsorted);
  r.add("aten::isin", from(11), isin);
  r.add("aten::mode", from(11), mode);
  r.add("aten::quantile", from(11), quantile(false));
  r.add("aten::nanquantile", from(11), quantile(true));

  r.add("aten::_unique", {9, 10}, unique_by_sorting_op);
  r.add("aten::_unique", from(11), unique_op);
  r.add("aten::_unique2", {9, 10}, unique2_by_sorting);
  r.add("aten::_unique2", from(11), unique2);
  r.add("aten::unique_dim", from(11), unique_dim);
  r.add("aten::unique_consecutive", from(11), unique_consecutive_op);
  r.add("aten::unique_dim_consecutive", from(11), unique_dim_consecutive);
}

}  // namespace torchonnx::symbolic::ops
