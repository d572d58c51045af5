// Cumulative ops along a dim beyond cumsum (reduction.cpp): cumprod, cummax, cummin,
// logcumsumexp, diff, and the trapezoid rule (trapezoid/trapz, cumulative_trapezoid).
//
// Semantics follow PyTorch's CPU kernels (aten/src/ATen/native/cpu/ReduceOpsKernel.cpp,
// ReduceOps.cpp), checked by experiment on 1.13 and 2.6:
//  - cumprod and logcumsumexp run one accumulator along the dim in acc_type, which is double for
//    float on the CPU: a float cumprod of [1e30, 1e30, 1e-30] is [1e30, inf, 1e30]. ONNX has no
//    CumProd, and exp(cumsum(log|x|)) loses zeros, signs and that rounding; a Scan over the dim
//    with a double accumulator is the kernel's own loop, so it gives the same values.
//  - cummax/cummin take an element when it is NaN, or when the running value is not NaN and the
//    element is >= (cummin: <=) it: ties and NaNs give the last index.
//  - logcumsumexp adds by max + log1p(exp(min - max)); two equal infinities give that infinity,
//    a NaN on either side gives NaN.
//  - ONNX Runtime fails a Scan over an empty tensor: an input that may be empty at run time takes
//    an If around the Scan (scan_along); one known to be empty is its own result.
//  - diff of bool is logical_xor of neighbours; prepend/append are concatenated first.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {
namespace {

using at::ScalarType;

// The states a Scan body returns and the slices it emits at each step.
struct ScanStep {
  Values states;
  Values outputs;
};
using ScanBody = std::function<ScanStep(GraphContext&, const Values& states, const Value& slice)>;

// The outputs of a Scan for an `x` without elements (see scan_along).
using EmptyOutputs = std::function<Values(GraphContext&)>;

// A Scan over axis `dim` of `x` (rank >= 1, elements of `slice_type`): `init` (with `state_types`)
// are the states before the first step, `body` maps (states, slice of x at step i) to the next
// states and the step's outputs (of `output_types`), which the Scan stacks along `dim`. Returns
// the stacked outputs. Scan takes its axes as attributes from opset 9.
// ONNX Runtime fails a Scan of no steps and crashes on one of empty slices, so when `x` may have
// no elements at run time (`maybe_empty`: a dynamic dim), the Scan runs in the else branch of an
// If(Size(x) == 0) whose then branch gives `when_empty`'s outputs.
Values scan_along(GraphContext& g, const Value& x, int64_t dim, bool maybe_empty,
                  ScalarType slice_type, const Values& init,
                  const std::vector<ScalarType>& state_types,
                  const std::vector<ScalarType>& output_types, const ScanBody& body,
                  const EmptyOutputs& when_empty) {
  const size_t num_outputs = output_types.size();
  auto scan = [&]() -> Values {
    auto graph = std::make_shared<ir::Graph>();
    graph->name = g.fresh_name("scan_body");
    {
      SubgraphScope scope(g, *graph);
      Values states;
      for (ScalarType t : state_types) {
        states.push_back(g.fresh_name("state"));
        graph->inputs.push_back({states.back(), {t}});
      }
      Value slice = g.fresh_name("slice");
      graph->inputs.push_back({slice, {slice_type}});
      ScanStep step = body(g, states, slice);
      for (size_t k = 0; k < step.states.size(); ++k) {
        graph->outputs.push_back({step.states[k], {state_types[k]}});
      }
      for (size_t k = 0; k < step.outputs.size(); ++k) {
        // A graph output is named once: an output that is also a state gets its own name.
        graph->outputs.push_back({g.op("Identity", {step.outputs[k]}), {output_types[k]}});
      }
    }
    Values inputs(init);
    inputs.push_back(x);
    Values results = g.op("Scan", inputs,
                          {{"body", graph},
                           {"num_scan_inputs", int64_t{1}},
                           {"scan_input_axes", ir::Ints{dim}},
                           {"scan_output_axes", ir::Ints(num_outputs, dim)}},
                          init.size() + num_outputs);
    return Values(results.begin() + static_cast<std::ptrdiff_t>(init.size()), results.end());
  };
  if (!maybe_empty) return scan();
  // Identity: a branch output is produced in the branch (not an outer value).
  auto produced = [&](const Values& outs) {
    Values ids;
    for (size_t k = 0; k < num_outputs; ++k) ids.push_back(g.op("Identity", {outs[k]}));
    return ids;
  };
  return if_else(
      g, "empty", [&] { return produced(when_empty(g)); }, "scan", [&] { return produced(scan()); },
      output_types,
      [&] {
        return g.op("Equal", {g.op("Size", {x}), g.constant(at::scalar_tensor(0, at::kLong))});
      });
}

// A tensor of `value` (dtype `t`) shaped as `x` (rank >= 1) without its dim `dim`: the states of
// a Scan along `dim`.
Value filled_slice(GraphContext& g, const Value& x, int64_t rank, int64_t dim,
                   const at::Scalar& value, ScalarType t) {
  if (rank == 1) return g.constant(at::scalar_tensor(value, at::TensorOptions().dtype(t)));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) dims.push_back(d);
  }
  at::Tensor fill = at::full({1}, value, at::TensorOptions().dtype(t));
  return g.op("ConstantOfShape", {dims_of(g, x, dims)}, {{"value", fill}});
}

// Whether tensor argument i is known at export to have no elements: its cumulative ops are the
// empty input itself (a Scan over an empty slice is not run, see scan_along).
bool known_empty(const Args& a, size_t i) {
  auto sizes = a.sizes(i);
  return sizes && std::find(sizes->begin(), sizes->end(), 0) != sizes->end();
}

// Whether tensor argument i may have no elements at run time: a dim of its is not known at export.
bool maybe_empty(const Args& a, size_t i) {
  auto sizes = a.sizes(i);
  return !sizes || std::any_of(sizes->begin(), sizes->end(), [](int64_t s) { return s < 0; });
}

// The type PyTorch's CPU kernels accumulate a product or a log-sum in for result dtype `out`
// (at::acc_type<T, false>): double for floating types, int64 for integers.
ScalarType scan_accumulate_type(ScalarType out) {
  return at::isFloatingType(out) ? ScalarType::Double : ScalarType::Long;
}

// aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
//   ⇒  Scan along dim with a running product in double (floats) or int64 (ints, bool), cast to
//      the result dtype (int64 for bool/ints, else the input's or dtype's); every step is the
//      kernel's multiplication, so zeros, signs, inf/NaN and overflow match
Values cumprod(GraphContext& g, const Args& a) {
  const std::optional<int64_t> dtype = a.size() > 2 ? a.optional_int(2) : std::nullopt;
  const ScalarType out = result_dtype(g, a, dtype);
  const ScalarType ct = scan_accumulate_type(out);
  const int64_t rank = a.require_rank(0);
  // PyTorch converts the input to the result dtype first (a float cast to int truncates).
  Value x = cast_if(g, cast_if(g, a.tensor(0), a.dtype(0), out), out, ct);
  if (rank == 0 || known_empty(a, 0)) return {cast_if(g, x, ct, out)};
  const int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value ones = filled_slice(g, x, rank, dim, 1.0, ct);
  Values y = scan_along(
      g, x, dim, maybe_empty(a, 0), ct, {ones}, {ct}, {ct},
      [](GraphContext& b, const Values& states, const Value& slice) {
        Value product = b.op("Mul", {states[0], slice});
        return ScanStep{{product}, {product}};
      },
      [&](GraphContext&) { return Values{x}; });
  return {cast_if(g, y[0], ct, out)};
}

// The type cummax/cummin compare in for input dtype t: floats as they are (half precision in
// float, exact), integers and bool in int64 (Less/Greater/Where take them at every opset).
ScalarType compare_type(ScalarType t) {
  if (t == ScalarType::Float || t == ScalarType::Double) return t;
  if (at::isFloatingType(t)) return ScalarType::Float;
  return ScalarType::Long;
}

// aten::cummax / cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)
//   ⇒  Scan along dim carrying (value, index, step): an element is taken when it is NaN, or the
//      value is not NaN and the element is >= (cummin: <=) it — PyTorch's rule, so ties and NaNs
//      give the last index. The first step takes its element (the value starts at -inf/lowest
//      for cummax, +inf/highest for cummin)
Values cummax_or_cummin(GraphContext& g, const Args& a, bool max) {
  const ScalarType t = a.dtype(0);
  if (t == ScalarType::Undefined) g.fail("the input's dtype is unknown (type propagation failed)");
  const ScalarType ct = compare_type(t);
  const bool floating = at::isFloatingType(ct);
  const int64_t rank = a.require_rank(0);
  Value x = cast_if(g, a.tensor(0), t, ct);
  if (rank == 0) return {a.tensor(0), g.constant(at::scalar_tensor(0, at::kLong))};
  if (known_empty(a, 0)) return {a.tensor(0), g.cast(a.tensor(0), at::kLong)};
  const int64_t dim = normalize_dim(a.int_arg(1), rank);
  at::Scalar start;
  if (floating) {
    start = max ? -INFINITY : INFINITY;
  } else {
    start = max ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  Values init{filled_slice(g, x, rank, dim, start, ct),
              filled_slice(g, x, rank, dim, int64_t{0}, at::kLong),
              g.constant(at::scalar_tensor(0, at::kLong))};
  Values y = scan_along(
      g, x, dim, maybe_empty(a, 0), ct, init, {ct, at::kLong, at::kLong}, {ct, at::kLong},
      [&](GraphContext& b, const Values& s, const Value& e) {
        const Value& value = s[0];
        const Value& index = s[1];
        const Value& step = s[2];
        // e >= value (cummax) is not (e < value); e <= value (cummin) is not (e > value).
        Value take = b.op("Not", {b.op(max ? "Less" : "Greater", {e, value})});
        if (floating) {
          take = b.op("And", {take, b.op("Not", {b.op("IsNaN", {value})})});
          take = b.op("Or", {take, b.op("IsNaN", {e})});
        }
        Value next_value = b.op("Where", {take, e, value});
        Value next_index = b.op("Where", {take, step, index});
        Value next_step = b.op("Add", {step, b.constant(at::scalar_tensor(1, at::kLong))});
        return ScanStep{{next_value, next_index, next_step}, {next_value, next_index}};
      },
      [&](GraphContext& b) {
        return Values{x, b.cast(x, at::kLong)};
      });
  return {cast_if(g, y[0], ct, t), y[1]};
}

Values cummax(GraphContext& g, const Args& a) {
  return cummax_or_cummin(g, a, true);
}
Values cummin(GraphContext& g, const Args& a) {
  return cummax_or_cummin(g, a, false);
}

// log1p(e) for e in [0, 1] to full precision without Log1p (ONNX has none): with u = 1 + e,
// log(u) · e / (u − 1), and e where u rounds to 1 (Goldberg's correction of the rounding of u).
Value log1p_unit(GraphContext& g, const Value& e, ScalarType t) {
  Value u = g.op("Add", {g.constant_scalar(1.0, t), e});
  Value d = g.op("Sub", {u, g.constant_scalar(1.0, t)});
  Value corrected = g.op("Div", {g.op("Mul", {g.op("Log", {u}), e}), d});
  return g.op("Where", {g.op("Greater", {u, g.constant_scalar(1.0, t)}), corrected, e});
}

// aten::logcumsumexp(Tensor self, int dim) -> Tensor (floating types)
//   ⇒  Scan along dim with a double accumulator starting at -inf, each step
//      max + log1p(exp(min − max)) of (element, accumulator); where min − max is NaN (equal
//      infinities) the max itself; NaN where either is NaN
Values logcumsumexp(GraphContext& g, const Args& a) {
  const ScalarType t = a.dtype(0);
  if (!at::isFloatingType(t)) {
    g.fail(std::string("logcumsumexp of ") + c10::toString(t) +
           " (PyTorch takes floating types only)");
  }
  const ScalarType ct = ScalarType::Double;
  const int64_t rank = a.require_rank(0);
  Value x = cast_if(g, a.tensor(0), t, ct);
  if (rank == 0 || known_empty(a, 0)) return {a.tensor(0)};
  const int64_t dim = normalize_dim(a.int_arg(1), rank);
  Value init = filled_slice(g, x, rank, dim, -INFINITY, ct);
  Values y = scan_along(
      g, x, dim, maybe_empty(a, 0), ct, {init}, {ct}, {ct},
      [&](GraphContext& b, const Values& s, const Value& e) {
        const Value& acc = s[0];
        Value hi = b.op("Max", {e, acc});
        Value lo = b.op("Min", {e, acc});
        Value diff = b.op("Sub", {lo, hi});
        Value sum = b.op("Add", {hi, log1p_unit(b, b.op("Exp", {diff}), ct)});
        sum = b.op("Where", {b.op("IsNaN", {diff}), hi, sum});
        Value nan = b.op("Or", {b.op("IsNaN", {e}), b.op("IsNaN", {acc})});
        sum = b.op("Where", {nan, b.constant_scalar(NAN, ct), sum});
        return ScanStep{{sum}, {sum}};
      },
      [&](GraphContext&) { return Values{x}; });
  return {cast_if(g, y[0], ct, t)};
}

// aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None)
//   ⇒  Concat(prepend, self, append) along dim, then n times Slice(1:) − Slice(:-1) (Xor for
//      bool)
Values diff(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) g.fail("diff of a 0-d tensor (PyTorch requires at least one dimension)");
  const int64_t n = a.int_arg(1);
  if (n < 0) g.fail("diff with n < 0 (PyTorch requires n >= 0)");
  const int64_t dim = normalize_dim(a.int_arg(2), rank);
  const ScalarType out = result_dtype(g, a, std::nullopt);
  Values parts;
  if (!a.is_none(3)) parts.push_back(a.tensor_as(3, out));
  parts.push_back(cast_if(g, a.tensor(0), a.dtype(0), out));
  if (!a.is_none(4)) parts.push_back(a.tensor_as(4, out));
  for (size_t i : {size_t{3}, size_t{4}}) {
    if (!a.is_none(i) && a.require_rank(i) != rank) {
      g.fail("diff: prepend and append must have the input's number of dims");
    }
  }
  Value x = parts.size() == 1 ? parts[0] : g.op("Concat", parts, {{"axis", dim}});
  const char* op = out == ScalarType::Bool ? "Xor" : "Sub";
  for (int64_t i = 0; i < n; ++i) {
    Value later = slice(g, x, {dim}, {1}, {std::numeric_limits<int64_t>::max()});
    Value earlier = slice(g, x, {dim}, {0}, {-1});
    x = g.op(op, {later, earlier});
  }
  return {x};
}

// ----- trapezoid / trapz / cumulative_trapezoid -----------------------------------------------
// PyTorch's forms (aten/src/ATen/native/Integration.cpp), in the result dtype (float for
// integer y): with spacing x, dx = x[1:] − x[:-1] (a 1-D x laid along dim, a lower-rank x
// broadcast from the right) and trapezoid = Σ dx · (y[1:] + y[:-1]) / 2, cumulative_trapezoid
// the CumSum of the same products / 2; with a constant dx, trapezoid = (Σ y − (y[0] + y[-1]) / 2)
// · dx and cumulative_trapezoid = CumSum(dx / 2 · (y[1:] + y[:-1])).

struct Trapezoid {
  Value y;
  int64_t rank, dim;
  ScalarType type;
};

Trapezoid trapezoid_args(GraphContext& g, const Args& a, size_t dim_at) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) g.fail("trapezoid of a 0-d tensor (PyTorch requires rank >= 1)");
  const ScalarType out = result_dtype(g, a, std::nullopt);
  if (a.dtype(0) == ScalarType::Bool) g.fail("trapezoid of bool (PyTorch rejects it)");
  return {cast_if(g, a.tensor(0), a.dtype(0), out), rank, normalize_dim(a.int_arg(dim_at), rank),
          out};
}

// y[1:] + y[:-1] along dim.
Value pair_sums(GraphContext& g, const Trapezoid& t) {
  return g.op("Add", {slice(g, t.y, {t.dim}, {1}, {std::numeric_limits<int64_t>::max()}),
                      slice(g, t.y, {t.dim}, {0}, {-1})});
}

// x[1:] − x[:-1] along dim, x (argument 1) laid out against y as PyTorch does.
Value spacings(GraphContext& g, const Args& a, const Trapezoid& t) {
  const int64_t x_rank = a.require_rank(1);
  if (a.dtype(1) == ScalarType::Bool) g.fail("trapezoid with bool x (PyTorch rejects it)");
  Value x = cast_if(g, a.tensor(1), a.dtype(1), t.type);
  if (x_rank == 1) {
    std::vector<int64_t> shape(t.rank, 1);
    shape[t.dim] = -1;
    x = g.op("Reshape", {x, g.constant_ints(shape)});
  } else if (x_rank < t.rank) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < t.rank - x_rank; ++d) axes.push_back(d);
    x = unsqueeze(g, x, axes);
  }
  return g.op("Sub", {slice(g, x, {t.dim}, {1}, {std::numeric_limits<int64_t>::max()}),
                      slice(g, x, {t.dim}, {0}, {-1})});
}

Value halve(GraphContext& g, const Value& v, ScalarType t) {
  return g.op("Div", {v, g.constant_scalar(2.0, t)});
}

// aten::trapezoid.x / trapz.x(Tensor y, Tensor x, *, int dim=-1)
//   ⇒  ReduceSum(dx · (y[1:] + y[:-1])) / 2 (an empty dim sums to zeros, as PyTorch gives)
Values trapezoid_x(GraphContext& g, const Args& a) {
  Trapezoid t = trapezoid_args(g, a, 2);
  Value products = g.op("Mul", {spacings(g, a, t), pair_sums(g, t)});
  return {halve(g, reduce(g, "ReduceSum", products, {t.dim}, false), t.type)};
}

// aten::trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) / trapz.dx(..., float dx=1, ...)
//   ⇒  (ReduceSum(y) − (y[0] + y[-1]) · 0.5) · dx; zeros for a dim known to be empty
Values trapezoid_dx(GraphContext& g, const Args& a) {
  Trapezoid t = trapezoid_args(g, a, 2);
  Value sum = reduce(g, "ReduceSum", t.y, {t.dim}, false);
  if (auto n = a.dim_size(0, t.dim); n && *n == 0) return {sum};  // the sum of nothing: zeros
  Value first = squeeze(g, slice(g, t.y, {t.dim}, {0}, {1}), {t.dim});
  Value last =
      squeeze(g, slice(g, t.y, {t.dim}, {-1}, {std::numeric_limits<int64_t>::max()}), {t.dim});
  Value ends = g.op("Mul", {g.op("Add", {first, last}), g.constant_scalar(0.5, t.type)});
  return {g.op("Mul", {g.op("Sub", {sum, ends}), g.constant_scalar(a.float_arg(1), t.type)})};
}

// The inclusive sum along t.dim of `v` (y's shape with one element fewer along dim).
using CumSumFn = Value (*)(GraphContext& g, const Args& a, const Trapezoid& t, const Value& v);

// From opset 11: CumSum.
Value cumsum_op(GraphContext& g, const Args&, const Trapezoid& t, const Value& v) {
  return g.op("CumSum", {v, g.constant(at::scalar_tensor(t.dim, at::kLong))});
}

// Before opset 11: a Scan adding along dim, in double as PyTorch's CPU cumsum for float.
Value cumsum_scan(GraphContext& g, const Args& a, const Trapezoid& t, const Value& v) {
  auto sizes = a.sizes(0);
  if (sizes && (*sizes)[t.dim] >= 0) (*sizes)[t.dim] = std::max<int64_t>((*sizes)[t.dim] - 1, 0);
  if (sizes && std::find(sizes->begin(), sizes->end(), 0) != sizes->end()) return v;
  const bool maybe_empty =
      !sizes || std::any_of(sizes->begin(), sizes->end(), [](int64_t s) { return s < 0; });
  const ScalarType ct = ScalarType::Double;
  Value x = cast_if(g, v, t.type, ct);
  Value zeros = filled_slice(g, x, t.rank, t.dim, 0.0, ct);
  Values y = scan_along(
      g, x, t.dim, maybe_empty, ct, {zeros}, {ct}, {ct},
      [](GraphContext& b, const Values& s, const Value& e) {
        Value sum = b.op("Add", {s[0], e});
        return ScanStep{{sum}, {sum}};
      },
      [&](GraphContext&) { return Values{x}; });
  return cast_if(g, y[0], ct, t.type);
}

// aten::cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1)
//   ⇒  CumSum(dx · (y[1:] + y[:-1])) / 2 (11+), the sum by a Scan before
template <CumSumFn cumsum>
Values cumulative_trapezoid_x(GraphContext& g, const Args& a) {
  Trapezoid t = trapezoid_args(g, a, 2);
  Value products = g.op("Mul", {spacings(g, a, t), pair_sums(g, t)});
  return {halve(g, cumsum(g, a, t, products), t.type)};
}

// aten::cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1)
//   ⇒  CumSum(dx / 2 · (y[1:] + y[:-1])) (11+), the sum by a Scan before
template <CumSumFn cumsum>
Values cumulative_trapezoid_dx(GraphContext& g, const Args& a) {
  Trapezoid t = trapezoid_args(g, a, 2);
  Value products = g.op("Mul", {g.constant_scalar(a.float_arg(1) / 2.0, t.type), pair_sums(g, t)});
  return {cumsum(g, a, t, products)};
}

}  // namespace

void register_cumulative(Registry& r) {
  r.add("aten::cumprod", from(9), cumprod);
  r.add("aten::cummax", from(9), cummax);
  r.add("aten::cummin", from(9), cummin);
  r.add("aten::logcumsumexp", from(9), logcumsumexp);
  r.add("aten::diff", from(9), diff);
  for (const char* op : {"aten::trapezoid", "aten::trapz"}) {
    r.add(std::string(op) + ".x", from(9), trapezoid_x);
    r.add(std::string(op) + ".dx", from(9), trapezoid_dx);
  }
  r.add("aten::cumulative_trapezoid.x", {9, 10}, cumulative_trapezoid_x<cumsum_scan>);
  r.add("aten::cumulative_trapezoid.x", from(11), cumulative_trapezoid_x<cumsum_op>);
  r.add("aten::cumulative_trapezoid.dx", {9, 10}, cumulative_trapezoid_dx<cumsum_scan>);
  r.add("aten::cumulative_trapezoid.dx", from(11), cumulative_trapezoid_dx<cumsum_op>);
}

}  // namespace torchonnx::symbolic::ops
