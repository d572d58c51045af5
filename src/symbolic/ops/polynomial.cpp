// The orthogonal polynomials of torch.special (chebyshev_polynomial_t/u/v/w and their shifted
// forms, hermite_polynomial_h/he, laguerre_polynomial_l, legendre_polynomial_p).
#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/math_common.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {
namespace {

// ----- orthogonal polynomials ------------------------------------------------------------------
//
// ATen's kernels (aten/src/ATen/native/Math.h, chebyshev_polynomial_t_forward, ...) take n as the
// common dtype and truncate it to int64, then: 0 for n < 0; closed forms at the interval's ends
// (|x| == 1, or x == 0 / x == 1 for the shifted ones); for large n inside the interval a
// trigonometric form; else a three-term recurrence of n - 1 steps from p = 1 and q = P_1(x). The
// lowering computes the recurrence in a Loop for the elements that take it (as many steps as the
// largest such n needs), then selects each element's branch with Where, in ATen's order.

// x and n of a polynomial (inputs 0 and 1, either may be a Scalar) broadcast to one shape: x in
// the floating result dtype, n as that dtype truncated to int64 (as ATen), and n as that dtype.
struct PolyArgs {
  Value x, n, nf;
  at::ScalarType type;
};

PolyArgs poly_args(GraphContext& g, const Args& a) {
  const at::ScalarType type = float_type(g, a, 2);
  Value x = a.tensor_as(0, type), n = a.tensor_as(1, type);
  Value shape = g.op("Shape", {g.op("Add", {x, n})});
  x = g.op("Expand", {x, shape});
  Value n_long = g.cast(g.op("Expand", {n, shape}), at::kLong);
  return {x, n_long, g.cast(n_long, type), type};
}

// One step of a recurrence: r from p, q and the step's k (in the dtype).
using PolyStep =
    std::function<Value(GraphContext&, const Value& p, const Value& q, const Value& k)>;

// q after n - 1 steps j = 0, 1, ... of (p, q) ← (q, step(p, q, k_start + k_scale · j)) from
// p = 1, q = q1; elements where `direct` holds (or n < 2) take no step. A Loop of
// max(n - 1) steps over the stepping elements.
Value recurrence(GraphContext& g, const PolyArgs& pa, const Value& q1, const Value& direct,
                 double k_start, double k_scale, const PolyStep& step) {
  const at::ScalarType type = pa.type;
  Value zero = g.constant_scalar(0, at::kLong);
  Value steps = g.op("Sub", {pa.n, g.constant_scalar(1, at::kLong)});
  steps = g.op(
      "Where",
      {g.op("Or", {direct, g.op("Less", {steps, g.constant_scalar(1, at::kLong)})}), zero, steps});
  Value flat =
      g.op("Concat", {g.op("Reshape", {steps, g.constant_ints({-1})}), g.constant_ints({0})},
           {{"axis", int64_t{0}}});
  Value trips = reduce(g, "ReduceMax", flat, {}, false);
  Value p0 = g.op("Expand", {g.constant_scalar(1, type), g.op("Shape", {q1})});
  Values loop = carried_loop(
      g, "polynomial_body", trips, "", {p0, q1}, {"p", "q"}, {type, type},
      [&](const Value& j, const Value& cond, const Values& pq) -> LoopStep {
        const Value &p = pq[0], &q = pq[1];
        Value active = g.op("Less", {j, steps});
        Value k = g.op("Add", {g.op("Mul", {g.cast(j, type), g.constant_scalar(k_scale, type)}),
                               g.constant_scalar(k_start, type)});
        Value r = step(g, p, q, k);
        return {g.op("Identity", {cond}),
                {g.op("Where", {active, q, p}), g.op("Where", {active, r, q})}};
      });
  return loop[1];
}

// n == v for the int64 n.
Value n_is(GraphContext& g, const PolyArgs& pa, int64_t v) {
  return is_zero(g, g.op("Sub", {pa.n, g.constant_scalar(v, at::kLong)}), at::kLong);
}
Value n_above(GraphContext& g, const PolyArgs& pa, int64_t v) {
  return g.op("Greater", {pa.n, g.constant_scalar(v, at::kLong)});
}
Value n_even(GraphContext& g, const PolyArgs& pa) {
  return is_zero(g, nonnegative_mod(g, pa.n, g.constant_scalar(2, at::kLong)), at::kLong);
}
// ATen's integer results (n + 1, n + n + 1) in the dtype, with a sign where `negative`.
Value n_plus(GraphContext& g, const PolyArgs& pa, int64_t twice, int64_t plus) {
  Value v = g.op("Add", {g.op("Mul", {pa.n, g.constant_scalar(twice, at::kLong)}),
                         g.constant_scalar(plus, at::kLong)});
  return g.cast(v, pa.type);
}
Value signed_by(GraphContext& g, const Value& positive, const Value& v) {
  return g.op("Where", {positive, v, g.op("Neg", {v})});
}

// The value at n == 0 (1), n == 1 (q1), n < 0 (0) around the recurrence `rec` and the special
// cases already applied to it by the caller (`special`, their union: the loop skips them).
Value poly_frame(GraphContext& g, const PolyArgs& pa, const Value& q1, const Value& rec) {
  Value r = g.op("Where", {n_is(g, pa, 1), q1, rec});
  r = g.op("Where", {n_is(g, pa, 0), g.constant_scalar(1, pa.type), r});
  return r;
}

Value chebyshev_step(GraphContext& g, const Value& two_y, const Value& p, const Value& q) {
  return g.op("Sub", {g.op("Mul", {two_y, q}), p});
}

// Chebyshev polynomials of the four kinds, plain (y = x, ends at |x| == 1) or shifted
// (y = 2x - 1, ends at x == 1 and x == 0). `kind` is 'T', 'U', 'V' or 'W'.
Value chebyshev(GraphContext& g, const PolyArgs& pa, char kind, bool shifted) {
  const at::ScalarType type = pa.type;
  const Value& x = pa.x;
  auto c = [&](double v) { return g.constant_scalar(v, type); };
  Value y = shifted ? g.op("Sub", {g.op("Add", {x, x}), c(1)}) : x;
  Value two_y = g.op("Add", {y, y});
  Value q1 = kind == 'T'   ? y
             : kind == 'U' ? two_y
                           : g.op(kind == 'V' ? "Sub" : "Add", {two_y, c(1)});
  Value even = n_even(g, pa);
  Value positive_x = g.op("Greater", {x, c(0)});
  // The trigonometric form for large n inside the interval.
  const int64_t threshold = shifted ? (kind == 'W' ? 4 : 6) : (kind == 'T' ? 6 : 8);
  Value trig = g.op("And", {n_above(g, pa, threshold), g.op("Less", {g.op("Abs", {y}), c(1)})});
  Value angle = g.op("Acos", {y});
  Value trig_value;
  switch (kind) {
    case 'T':
      trig_value = g.op("Cos", {g.op("Mul", {pa.nf, angle})});
      break;
    case 'U': {
      Value n1 = g.op("Add", {pa.nf, c(1)});
      Value s = g.op("Sin", {angle});
      Value main = g.op("Div", {g.op("Sin", {g.op("Mul", {n1, angle})}), s});
      Value alt = g.op("Div", {g.op("Mul", {n1, g.op("Cos", {g.op("Mul", {n1, angle})})}), y});
      trig_value = g.op("Where", {is_zero(g, s, type), alt, main});
      break;
    }
    case 'V': {
      Value half = g.op("Div", {angle, c(2)});
      Value main = g.op("Div", {g.op("Cos", {g.op("Mul", {g.op("Add", {pa.nf, c(0.5)}), angle})}),
                                g.op("Cos", {half})});
      Value alt = signed_by(g, even, n_plus(g, pa, 2, 1));
      trig_value = g.op("Where", {x_equals(g, g.op("Sin", {half}), 1, type), alt, main});
      break;
    }
    default: {  // 'W'
      Value half = g.op("Div", {angle, c(2)});
      Value main = g.op("Div", {g.op("Sin", {g.op("Mul", {g.op("Add", {pa.nf, c(0.5)}), angle})}),
                                g.op("Sin", {half})});
      Value alt = g.op("Where", {even, c(1), c(-1)});
      if (!shifted) alt = g.op("Where", {positive_x, n_plus(g, pa, 2, 1), alt});
      trig_value = g.op("Where", {x_equals(g, g.op("Cos", {half}), 1, type), alt, main});
      break;
    }
  }
  // The closed forms at the ends: `upper` (x == 1 resp. x == 1 shifted) and `lower` (x == -1
  // resp. x == 0 shifted). Unshifted T/U take the upper form also at -1 for even n.
  Value upper_value, lower_value;
  switch (kind) {
    case 'T':
      upper_value = c(1);
      lower_value = g.op("Where", {even, c(1), c(-1)});
      break;
    case 'U':
      upper_value = n_plus(g, pa, 1, 1);
      lower_value = signed_by(g, even, n_plus(g, pa, 1, 1));
      break;
    case 'V':
      upper_value = c(1);
      lower_value = signed_by(g, even, n_plus(g, pa, 2, 1));
      break;
    default:
      upper_value = n_plus(g, pa, 2, 1);
      lower_value = g.op("Where", {even, c(1), c(-1)});
      break;
  }
  Value upper, lower;
  if (shifted) {
    upper = x_equals(g, x, 1, type);
    lower = x_equals(g, x, 0, type);
  } else {
    Value end = x_equals(g, g.op("Abs", {x}), 1, type);
    upper = g.op("And", {end, positive_x});
    lower = g.op("And", {end, g.op("Not", {positive_x})});
  }
  Value direct = g.op("Or", {g.op("Or", {upper, lower}), trig});
  Value rec = recurrence(g, pa, q1, direct, 2, 1,
                         [two_y](GraphContext& b, const Value& p, const Value& q, const Value&) {
                           return chebyshev_step(b, two_y, p, q);
                         });
  Value r = poly_frame(g, pa, q1, rec);
  r = g.op("Where", {trig, trig_value, r});
  r = g.op("Where", {lower, lower_value, r});
  r = g.op("Where", {upper, upper_value, r});
  return g.op("Where", {g.op("Less", {pa.n, g.constant_scalar(0, at::kLong)}),
                        g.constant_scalar(0, type), r});
}

// aten::special_chebyshev_polynomial_{t,u,v,w}(Tensor|Scalar x, Tensor|Scalar n) and
// aten::special_shifted_chebyshev_polynomial_{t,u,v,w}  ⇒  chebyshev (Loop recurrence, closed
// forms at the ends, trigonometric form for large n), as ATen
template <char kind, bool shifted>
Values chebyshev_polynomial(GraphContext& g, const Args& a) {
  return {chebyshev(g, poly_args(g, a), kind, shifted)};
}

// The polynomials without closed forms at the ends but Legendre's: `end` (or none) and its value.
Value simple_polynomial(GraphContext& g, const PolyArgs& pa, const Value& q1,
                        std::optional<std::pair<Value, Value>> end, double k_start, double k_scale,
                        const PolyStep& step) {
  Value direct = end ? end->first : g.op("Less", {pa.n, g.constant_scalar(0, at::kLong)});
  Value r = poly_frame(g, pa, q1, recurrence(g, pa, q1, direct, k_start, k_scale, step));
  if (end) r = g.op("Where", {end->first, end->second, r});
  return g.op("Where", {g.op("Less", {pa.n, g.constant_scalar(0, at::kLong)}),
                        g.constant_scalar(0, pa.type), r});
}

// aten::special_hermite_polynomial_h(x, n)  ⇒  r = 2x·q - k·p, k = 2, 4, ..., from q = 2x
Values hermite_polynomial_h(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  Value two_x = g.op("Add", {pa.x, pa.x});
  return {
      simple_polynomial(g, pa, two_x, std::nullopt, 2, 2,
                        [two_x](GraphContext& b, const Value& p, const Value& q, const Value& k) {
                          return b.op("Sub", {b.op("Mul", {two_x, q}), b.op("Mul", {k, p})});
                        })};
}

// aten::special_hermite_polynomial_he(x, n)  ⇒  r = x·q - k·p, k = 1, 2, ..., from q = x
Values hermite_polynomial_he(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  Value x = pa.x;
  return {simple_polynomial(g, pa, x, std::nullopt, 1, 1,
                            [x](GraphContext& b, const Value& p, const Value& q, const Value& k) {
                              return b.op("Sub", {b.op("Mul", {x, q}), b.op("Mul", {k, p})});
                            })};
}

// aten::special_laguerre_polynomial_l(x, n)  ⇒  1 at x == 0; r = ((2k + (1 - x))·q - k·p) / (k +
// 1), k = 1, 2, ..., from q = 1 - x
Values laguerre_polynomial_l(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  const at::ScalarType type = pa.type;
  Value one_minus_x = g.op("Sub", {g.constant_scalar(1, type), pa.x});
  Value at_zero = x_equals(g, g.op("Abs", {pa.x}), 0, type);
  return {simple_polynomial(
      g, pa, one_minus_x, std::make_pair(at_zero, g.constant_scalar(1, type)), 1, 1,
      [one_minus_x, type](GraphContext& b, const Value& p, const Value& q, const Value& k) {
        Value factor = b.op("Add", {b.op("Add", {k, k}), one_minus_x});
        Value num = b.op("Sub", {b.op("Mul", {factor, q}), b.op("Mul", {k, p})});
        return b.op("Div", {num, b.op("Add", {k, b.constant_scalar(1, type)})});
      })};
}

// aten::special_legendre_polynomial_p(x, n)  ⇒  ±1 at |x| == 1 (-1 for x = -1 and odd n);
// r = ((2k + 1)·x·q - k·p) / (k + 1), k = 1, 2, ..., from q = x
Values legendre_polynomial_p(GraphContext& g, const Args& a) {
  PolyArgs pa = poly_args(g, a);
  const at::ScalarType type = pa.type;
  Value x = pa.x;
  Value end = x_equals(g, g.op("Abs", {x}), 1, type);
  Value plus = g.op("Or", {g.op("Greater", {x, g.constant_scalar(0, type)}), n_even(g, pa)});
  Value end_value = g.op("Where", {plus, g.constant_scalar(1, type), g.constant_scalar(-1, type)});
  return {simple_polynomial(
      g, pa, x, std::make_pair(end, end_value), 1, 1,
      [x, type](GraphContext& b, const Value& p, const Value& q, const Value& k) {
        Value one = b.constant_scalar(1, type);
        Value factor = b.op("Add", {b.op("Add", {k, k}), one});
        Value num = b.op("Sub", {b.op("Mul", {b.op("Mul", {factor, x}), q}), b.op("Mul", {k, p})});
        return b.op("Div", {num, b.op("Add", {k, one})});
      })};
}

}  // namespace

void register_polynomial(Registry& r) {
  r.add("aten::special_chebyshev_polynomial_t", from(9), chebyshev_polynomial<'T', false>);
  r.add("aten::special_chebyshev_polynomial_u", from(9), chebyshev_polynomial<'U', false>);
  r.add("aten::special_chebyshev_polynomial_v", from(9), chebyshev_polynomial<'V', false>);
  r.add("aten::special_chebyshev_polynomial_w", from(9), chebyshev_polynomial<'W', false>);
  r.add("aten::special_shifted_chebyshev_polynomial_t", from(9), chebyshev_polynomial<'T', true>);
  r.add("aten::special_shifted_chebyshev_polynomial_u", from(9), chebyshev_polynomial<'U', true>);
  r.add("aten::special_shifted_chebyshev_polynomial_v", from(9), chebyshev_polynomial<'V', true>);
  r.add("aten::special_shifted_chebyshev_polynomial_w", from(9), chebyshev_polynomial<'W', true>);
  r.add("aten::special_hermite_polynomial_h", from(9), hermite_polynomial_h);
  r.add("aten::special_hermite_polynomial_he", from(9), hermite_polynomial_he);
  r.add("aten::special_laguerre_polynomial_l", from(9), laguerre_polynomial_l);
  r.add("aten::special_legendre_polynomial_p", from(9), legendre_polynomial_p);
}

}  // namespace torchonnx::symbolic::ops
