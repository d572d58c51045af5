// Reductions: sum, mean, prod, amax/amin/aminmax, max/min (all overloads), argmax/argmin, all/any,
// logsumexp, cumsum, count_nonzero, nansum/nanmean, sum_to_size.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using at::ScalarType;

// The dims of a reduction made non-negative; a 0-d tensor reduces over "all" (none) of its dims.
std::vector<int64_t> reduction_axes(std::vector<int64_t> dims, int64_t rank) {
  if (rank == 0) return {};
  for (auto& d : dims) d = normalize_dim(d, rank);
  return dims;
}

// The dtype ReduceMax/ReduceMin/ArgMax/ArgMin/Max/Min are computed in for an input of dtype t:
// ONNX (and ORT) take float, double, int32 and int64 at every opset, int8/uint8 from 12 only and
// bool/int16 never, so those are widened exactly to int32 (half precision to float) and the result
// cast back.
ScalarType minmax_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float:
    case ScalarType::Double:
    case ScalarType::Int:
    case ScalarType::Long:
      return t;
    case ScalarType::Half:
    case ScalarType::BFloat16:
      return ScalarType::Float;
    default:  // Bool, Byte, Char, Short
      return ScalarType::Int;
  }
}

// any(b) over axes as bool: ReduceSum of the int64 mask is nonzero (right for empty inputs too).
Value any_of(GraphContext& g, const Value& b, const std::vector<int64_t>& axes, bool keepdim) {
  return g.cast(reduce(g, "ReduceSum", g.cast(b, ScalarType::Long), axes, keepdim),
                ScalarType::Bool);
}

// ReduceMax/ReduceMin of `x` (dtype t) over `axes`, in t. PyTorch propagates NaN, ONNX Runtime
// skips it: floating results are NaN where the reduced elements hold one.
Value reduce_minmax(GraphContext& g, const std::string& op, const Value& x, ScalarType t,
                    const std::vector<int64_t>& axes, bool keepdim) {
  ScalarType ct = minmax_type(t);
  Value in = cast_if(g, x, t, ct);
  Value r = reduce(g, op, in, axes, keepdim);
  if (at::isFloatingType(ct)) {
    Value has_nan = any_of(g, g.op("IsNaN", {in}), axes, keepdim);
    r = g.op("Where", {has_nan, g.constant_scalar(std::nan(""), ct), r});
  }
  return cast_if(g, r, ct, t);
}

// ArgMax/ArgMin of x (dtype t) along `axis` (int64 indices; PyTorch and ONNX both return the first
// occurrence of the extreme value). PyTorch takes NaN as the extreme of both: where the reduced
// elements hold a NaN, the index is the first NaN's.
Value arg_minmax(GraphContext& g, const std::string& op, const Value& x, ScalarType t, int64_t axis,
                 bool keepdim) {
  ScalarType ct = minmax_type(t);
  Value in = cast_if(g, x, t, ct);
  ir::Attributes attrs{{"axis", axis}, {"keepdims", static_cast<int64_t>(keepdim)}};
  Value i = g.op(op, {in}, attrs);
  if (!at::isFloatingType(ct)) return i;
  Value nan = g.op("IsNaN", {in});
  Value first_nan = g.op("ArgMax", {g.cast(nan, ScalarType::Int)}, attrs);
  return g.op("Where", {any_of(g, nan, {axis}, keepdim), first_nan, i});
}

// The dtype sums and products are computed in for result dtype `out`: ReduceSum/ReduceMean/
// ReduceProd/CumSum/MatMul take float, double, int32 and int64 (ORT), so half precision is
// computed in float and narrower integers (or bool) in int64, wrapped by the final cast as in
// PyTorch.
ScalarType accumulate_type(ScalarType out) {
  if (out == ScalarType::Half || out == ScalarType::BFloat16) return ScalarType::Float;
  if (at::isIntegralType(out, /*includeBool=*/true) && out != ScalarType::Int) {
    return ScalarType::Long;
  }
  return out;
}

// Input `i` converted as PyTorch does (to the result dtype `out`), then widened to `ct`.
Value accumulator_input(GraphContext& g, const Args& a, size_t i, ScalarType out, ScalarType ct) {
  return cast_if(g, cast_if(g, a.tensor(i), a.dtype(i), out), out, ct);
}

// Inclusive cumulative sum of x (dtype t, one of float/double/int32/int64) along `axis` of static
// size n, without CumSum (opset < 11): x (axis moved last) MatMul an n×n upper-triangular ones
// matrix. Exact for integers; floats are summed in another order (differences of a few ulps).
Value inclusive_cumsum_static(GraphContext& g, const Value& x, ScalarType t, int64_t n,
                              int64_t axis, int64_t rank) {
  // static shape: the triangular matrix has the size of the summed dim.
  Value tri = g.constant(at::ones({n, n}, at::TensorOptions().dtype(t)).triu());
  if (axis == rank - 1) return g.op("MatMul", {x, tri});
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[axis], perm[rank - 1]);
  Value moved = g.op("Transpose", {x}, {{"perm", perm}});
  return g.op("Transpose", {g.op("MatMul", {moved, tri})}, {{"perm", perm}});
}

// aten::mean/sum(Tensor self, *, ScalarType? dtype=None)  ⇒  ReduceMean/ReduceSum over all dims
Converter sum_or_mean_all(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    std::optional<int64_t> dtype;
    if (a.size() == 2) dtype = a.optional_int(1);
    // Sum of bool / int8..int32 is int64; the dtype argument casts the input first.
    ScalarType out = result_dtype(g, a, dtype);
    ScalarType ct = accumulate_type(out);
    Value x = accumulator_input(g, a, 0, out, ct);
    Value y = reduce(g, onnx_op, x, reduction_axes({}, a.require_rank(0)), false);
    return {cast_if(g, y, ct, out)};
  };
}

// aten::mean.dim / sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *,
//   ScalarType? dtype=None)  ⇒  ReduceMean/ReduceSum over dim (None and [] both mean all dims)
Converter sum_or_mean_dims(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    std::vector<int64_t> dims;
    if (auto d = a.optional_int_list(1)) dims = *d;  // None and [] both mean all dims
    const bool keepdim = a.bool_arg(2);
    std::optional<int64_t> dtype;
    if (a.size() > 3) dtype = a.optional_int(3);
    ScalarType out = result_dtype(g, a, dtype);
    ScalarType ct = accumulate_type(out);
    Value x = accumulator_input(g, a, 0, out, ct);
    Value y = reduce(g, onnx_op, x, reduction_axes(dims, a.require_rank(0)), keepdim);
    return {cast_if(g, y, ct, out)};
  };
}

// aten::prod(Tensor self, *, ScalarType? dtype=None)  ⇒  ReduceProd over all dims in the result
// dtype (int64 for bool/ints)
Values prod(GraphContext& g, const Args& a) {
  std::optional<int64_t> dtype;
  if (a.size() == 2) dtype = a.optional_int(1);
  ScalarType out = result_dtype(g, a, dtype);
  ScalarType ct = accumulate_type(out);
  Value x = accumulator_input(g, a, 0, out, ct);
  return {cast_if(g, reduce(g, "ReduceProd", x, {}, false), ct, out)};
}

// aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None)
//   ⇒  ReduceProd over dim in the result dtype (int64 for bool/ints)
Values prod_dim(GraphContext& g, const Args& a) {
  std::vector<int64_t> axes = reduction_axes({a.int_arg(1)}, a.require_rank(0));
  const bool keepdim = a.bool_arg(2);
  std::optional<int64_t> dtype;
  if (a.size() > 3) dtype = a.optional_int(3);
  ScalarType out = result_dtype(g, a, dtype);
  ScalarType ct = accumulate_type(out);
  Value x = accumulator_input(g, a, 0, out, ct);
  return {cast_if(g, reduce(g, "ReduceProd", x, axes, keepdim), ct, out)};
}

// aten::max/min(Tensor self)  ⇒  ReduceMax/Min over all dims
Converter max_or_min_all(bool is_max) {
  const std::string reduce_op = is_max ? "ReduceMax" : "ReduceMin";
  return [=](GraphContext& g, const Args& a) -> Values {
    return {reduce_minmax(g, reduce_op, a.tensor(0), a.dtype(0), {}, false)};
  };
}

// aten::max/min.other(Tensor self, Tensor other)  ⇒  Max/Min (12+, or floats); Where(Greater/Less)
// for integers before 12; Or/And for bool
Converter max_or_min_other(bool is_max) {
  return [=](GraphContext& g, const Args& a) -> Values {
    ScalarType out = result_dtype(g, a, std::nullopt);
    if (out == ScalarType::Bool) {
      return {g.op(is_max ? "Or" : "And", {a.tensor_as(0, out), a.tensor_as(1, out)})};
    }
    ScalarType ct = minmax_type(out);
    Value x = a.tensor_as(0, ct);
    Value y = a.tensor_as(1, ct);
    return {cast_if(g, extreme(g, is_max, x, y, ct), ct, out)};
  };
}

// aten::max/min.dim(Tensor self, int dim, bool keepdim=False) -> (values, indices)
//   ⇒  ReduceMax/Min + ArgMax/Min
Converter max_or_min_dim(bool is_max) {
  const std::string reduce_op = is_max ? "ReduceMax" : "ReduceMin";
  const std::string arg_op = is_max ? "ArgMax" : "ArgMin";
  return [=](GraphContext& g, const Args& a) -> Values {
    Value x = a.tensor(0);
    const int64_t rank = a.require_rank(0);
    const bool keepdim = a.bool_arg(2);
    if (rank == 0) return {x, g.constant(at::zeros({}, at::kLong))};
    const int64_t dim = normalize_dim(a.int_arg(1), rank);
    return {reduce_minmax(g, reduce_op, x, a.dtype(0), {dim}, keepdim),
            arg_minmax(g, arg_op, x, a.dtype(0), dim, keepdim)};
  };
}

// aten::amax/amin(Tensor self, int[1] dim=[], bool keepdim=False)  ⇒  ReduceMax/Min
Converter amax_or_amin(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    auto axes = reduction_axes(a.int_list(1), a.require_rank(0));
    return {reduce_minmax(g, onnx_op, a.tensor(0), a.dtype(0), axes, a.bool_arg(2))};
  };
}

// aten::argmax/argmin(Tensor self, int? dim=None, bool keepdim=False)
//   ⇒  ArgMax/Min; dim None: over the flattened input (keepdim: reshaped to rank ones)
Converter argmax_or_argmin(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    const bool keepdim = a.bool_arg(2);
    std::optional<int64_t> dim = a.optional_int(1);
    Value x = a.tensor(0);
    if (rank == 0) return {g.constant(at::zeros({}, at::kLong))};
    if (dim) return {arg_minmax(g, onnx_op, x, a.dtype(0), normalize_dim(*dim, rank), keepdim)};
    Value flat = g.op("Reshape", {x, g.constant_ints({-1})});
    Value i = arg_minmax(g, onnx_op, flat, a.dtype(0), 0, false);
    if (!keepdim) return {i};
    return {g.op("Reshape", {i, g.constant_ints(std::vector<int64_t>(rank, 1))})};
  };
}

// aten::all/any(Tensor self)  /  aten::all/any.dim(Tensor self, int dim, bool keepdim=False)
//   ⇒  Cast(ReduceSum(Cast(x != 0, int64)), bool) (all as not any not); uint8 results for uint8.
// One converter serves both overloads (a dim is read when given).
Converter all_or_any(bool is_all) {
  return [=](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    std::vector<int64_t> axes;
    bool keepdim = false;
    if (a.size() >= 3) {
      axes = reduction_axes({a.int_arg(1)}, rank);
      keepdim = a.bool_arg(2);
    }
    Value b = cast_if(g, a.tensor(0), a.dtype(0), ScalarType::Bool);
    Value r = is_all ? g.op("Not", {any_of(g, g.op("Not", {b}), axes, keepdim)})
                     : any_of(g, b, axes, keepdim);
    return {cast_if(g, r, ScalarType::Bool, result_dtype(g, a, std::nullopt))};
  };
}

// aten::aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (min, max)
//   ⇒  ReduceMin, ReduceMax (dim None: all dims)
Values aminmax(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  std::vector<int64_t> axes;
  if (auto dim = a.optional_int(1)) axes = reduction_axes({*dim}, rank);
  const bool keepdim = a.bool_arg(2);
  Value x = a.tensor(0);
  return {reduce_minmax(g, "ReduceMin", x, a.dtype(0), axes, keepdim),
          reduce_minmax(g, "ReduceMax", x, a.dtype(0), axes, keepdim)};
}

// aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False)  ⇒  ReduceLogSumExp (in the
// floating result dtype)
Values logsumexp(GraphContext& g, const Args& a) {
  ScalarType out = result_dtype(g, a, std::nullopt);
  ScalarType ct = at::isFloatingType(out) && out != ScalarType::Half && out != ScalarType::BFloat16
                      ? out
                      : ScalarType::Float;
  auto axes = reduction_axes(a.int_list(1), a.require_rank(0));
  Value x = cast_if(g, a.tensor(0), a.dtype(0), ct);
  return {cast_if(g, reduce(g, "ReduceLogSumExp", x, axes, a.bool_arg(2)), ct, out)};
}

// aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None), in the result dtype (int64 for
// bool/ints): the input converted, then `sum_along(x, compute dtype, dim, rank)`.
template <typename SumAlong>
Values cumsum_in_result_dtype(GraphContext& g, const Args& a, SumAlong sum_along) {
  std::optional<int64_t> dtype = a.size() > 2 ? a.optional_int(2) : std::nullopt;
  ScalarType out = result_dtype(g, a, dtype);
  ScalarType ct = accumulate_type(out);
  const int64_t rank = a.require_rank(0);
  Value x = accumulator_input(g, a, 0, out, ct);
  if (rank == 0) return {cast_if(g, x, ct, out)};  // the cumsum of one element is itself
  const int64_t dim = normalize_dim(a.int_arg(1), rank);
  return {cast_if(g, sum_along(x, ct, dim, rank), ct, out)};
}

// aten::cumsum  ⇒  before opset 11, MatMul by an upper-triangular ones matrix (static size of dim)
Values cumsum_by_matmul(GraphContext& g, const Args& a) {
  return cumsum_in_result_dtype(
      g, a, [&](const Value& x, ScalarType ct, int64_t dim, int64_t rank) {
        auto sizes = a.sizes(0);
        if (!sizes || (*sizes)[dim] < 0) {
          g.fail("cumsum before opset 11 needs the static size of dim; export with opset >= 11");
        }
        return inclusive_cumsum_static(g, x, ct, (*sizes)[dim], dim, rank);
      });
}

// aten::cumsum  ⇒  CumSum (11+)
Values cumsum(GraphContext& g, const Args& a) {
  return cumsum_in_result_dtype(g, a, [&](const Value& x, ScalarType, int64_t dim, int64_t) {
    return g.op("CumSum", {x, g.constant(at::scalar_tensor(dim, at::kLong))});
  });
}

// aten::count_nonzero(Tensor self, int? dim=None)  /  count_nonzero.dim_IntList(Tensor self,
//   int[] dim)  ⇒  ReduceSum(Cast(Cast(x, bool), int64)) over dim (None and [] both mean all
//   dims; NaN counts as nonzero, as Cast to bool makes it true)
Values count_nonzero(GraphContext& g, const Args& a) {
  std::vector<int64_t> dims;
  if (a.overload() == "dim_IntList") {
    dims = a.int_list(1);
  } else if (auto d = a.optional_int(1)) {
    dims = {*d};
  }
  Value b = cast_if(g, a.tensor(0), a.dtype(0), ScalarType::Bool);
  Value n = g.cast(b, ScalarType::Long);
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {n};
  return {reduce(g, "ReduceSum", n, reduction_axes(dims, rank), false)};
}

// aten::nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)
//   ⇒  ReduceSum(Where(IsNaN(x), 0, x)) in the result dtype (int64 for bool/ints, which hold no
//   NaN)
Values nansum(GraphContext& g, const Args& a) {
  std::vector<int64_t> dims;
  if (auto d = a.optional_int_list(1)) dims = *d;
  ScalarType out = result_dtype(g, a, a.optional_int(3));
  ScalarType ct = accumulate_type(out);
  Value x = accumulator_input(g, a, 0, out, ct);
  if (at::isFloatingType(ct)) {
    x = g.op("Where", {g.op("IsNaN", {x}), g.constant_scalar(0, ct), x});
  }
  Value y = reduce(g, "ReduceSum", x, reduction_axes(dims, a.require_rank(0)), a.bool_arg(2));
  return {cast_if(g, y, ct, out)};
}

// aten::nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)
//   ⇒  nansum / ReduceSum(Not(IsNaN(x))) (floating inputs only, as in PyTorch; all NaN: 0/0 = NaN)
Values nanmean(GraphContext& g, const Args& a) {
  std::vector<int64_t> dims;
  if (auto d = a.optional_int_list(1)) dims = *d;
  ScalarType out = result_dtype(g, a, a.optional_int(3));
  if (!at::isFloatingType(out)) g.fail("nanmean of a non-floating tensor (PyTorch rejects it)");
  ScalarType ct = accumulate_type(out);
  const std::vector<int64_t> axes = reduction_axes(dims, a.require_rank(0));
  const bool keepdim = a.bool_arg(2);
  Value x = accumulator_input(g, a, 0, out, ct);
  Value nan = g.op("IsNaN", {x});
  Value sum =
      reduce(g, "ReduceSum", g.op("Where", {nan, g.constant_scalar(0, ct), x}), axes, keepdim);
  Value count = reduce(g, "ReduceSum", g.cast(g.op("Not", {nan}), ct), axes, keepdim);
  return {cast_if(g, g.op("Div", {sum, count}), ct, out)};
}

// aten::sum_to_size(Tensor self, int[] size)  ⇒  ReduceSum(keepdims) over the leading dims and the
// dims where `size` is 1, Reshape to size (a dim of size 1 sums to itself, so no static sizes are
// needed); self as it is when nothing is summed
Values sum_to_size(GraphContext& g, const Args& a) {
  const std::vector<int64_t> size = a.int_list(1);
  const int64_t rank = a.require_rank(0);
  const int64_t leading = rank - static_cast<int64_t>(size.size());
  if (leading < 0) g.fail("sum_to_size to more dims than the tensor has");
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < leading || size[i - leading] == 1) axes.push_back(i);
  }
  auto sizes = a.sizes(0);
  bool all_ones = sizes.has_value();
  for (int64_t i : axes) all_ones = all_ones && (*sizes)[i] == 1;
  if (axes.empty() || (all_ones && leading == 0)) return {a.tensor(0)};
  ScalarType out = result_dtype(g, a, std::nullopt);
  ScalarType ct = accumulate_type(out);
  Value x = accumulator_input(g, a, 0, out, ct);
  Value y = reduce(g, "ReduceSum", x, axes, /*keepdims=*/true);
  y = g.op("Reshape", {y, g.constant_ints(size)});
  return {cast_if(g, y, ct, out)};
}

}  // namespace

void register_reduction(Registry& r) {
  r.add_unnamed("aten::mean", from(9), sum_or_mean_all("ReduceMean"));
  r.add("aten::mean.dim", from(9), sum_or_mean_dims("ReduceMean"));
  r.add_unnamed("aten::sum", from(9), sum_or_mean_all("ReduceSum"));
  r.add("aten::sum.dim_IntList", from(9), sum_or_mean_dims("ReduceSum"));
  r.add_unnamed("aten::prod", from(9), prod);
  r.add("aten::prod.dim_int", from(9), prod_dim);

  r.add("aten::amax", from(9), amax_or_amin("ReduceMax"));
  r.add("aten::amin", from(9), amax_or_amin("ReduceMin"));
  r.add("aten::aminmax", from(9), aminmax);
  r.add_unnamed("aten::max", from(9), max_or_min_all(true));
  r.add("aten::max.other", from(9), max_or_min_other(true));
  r.add("aten::max.dim", from(9), max_or_min_dim(true));
  r.add_unnamed("aten::min", from(9), max_or_min_all(false));
  r.add("aten::min.other", from(9), max_or_min_other(false));
  r.add("aten::min.dim", from(9), max_or_min_dim(false));
  r.add("aten::argmax", from(9), argmax_or_argmin("ArgMax"));
  r.add("aten::argmin", from(9), argmax_or_argmin("ArgMin"));
  r.add("aten::all", from(9), all_or_any(true));
  r.add("aten::any", from(9), all_or_any(false));

  r.add("aten::logsumexp", from(9), logsumexp);
  r.add("aten::cumsum", {9, 10}, cumsum_by_matmul);
  r.add("aten::cumsum", from(11), cumsum);

  r.add("aten::count_nonzero", from(9), count_nonzero);
  r.add("aten::count_nonzero.dim_IntList", from(9), count_nonzero);
  r.add("aten::nansum", from(9), nansum);
  r.add("aten::nanmean", from(9), nanmean);
  r.add("aten::sum_to_size", from(9), sum_to_size);
}

}  // namespace torchonnx::symbolic::ops
