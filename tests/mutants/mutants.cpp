// Planted wrong converters (issue 38, "mutants in CI"): each one a mistake converters make, for a
// common op, and otherwise a correct lowering of the cases the tests use. Loaded into a test binary
// (LD_PRELOAD=libtorchonnx_mutants.so), the library registers — over the built-in converter,
// through the public API — the one mutant named by $TORCHONNX_MUTANT, and nothing when it is unset.
// scripts/mutants.sh runs each mutant against the tests of its op's family and fails when one
// survives: a suite that passes with a wrong converter does not test that op.
//
// A mutant is registered from the opset where its lowering is valid (the built-in converter serves
// the opsets below). TORCHONNX_MUTANT=list prints the names, families and ops to stdout.
#include <ATen/ATen.h>
#include <torchonnx/symbolic.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

using torchonnx::Args;
using torchonnx::GraphContext;
using torchonnx::Value;
using torchonnx::Values;

int64_t normalize(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

at::ScalarType out_type(const Args& a, size_t input = 0) {
  at::ScalarType t = a.output_dtype();
  return t == at::ScalarType::Undefined ? a.dtype(input) : t;
}

// Reduce* over `axes`: axes an attribute before opset 18 (13 for ReduceSum), an input from then.
Value reduce(GraphContext& g, const std::string& op, const Value& x, std::vector<int64_t> axes,
             bool keepdims) {
  const int axes_input_from = op == "ReduceSum" ? 13 : 18;
  if (axes.empty()) return g.op(op, {x}, {{"keepdims", keepdims}});  // all dims (0-d: none)
  if (g.opset() >= axes_input_from) {
    return g.op(op, {x, g.constant_ints(axes)}, {{"keepdims", keepdims}});
  }
  return g.op(op, {x}, {{"axes", axes}, {"keepdims", keepdims}});
}

std::vector<int64_t> all_axes(int64_t rank) {
  std::vector<int64_t> dims(rank);
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

std::vector<int64_t> reduction_axes(const Args& a, size_t i, int64_t rank) {
  if (rank == 0) return {};  // dim 0 or -1 of a 0-d tensor: nothing to reduce
  std::vector<int64_t> dims;
  if (auto d = a.optional_int_list(i)) dims = *d;
  if (dims.empty()) {
    dims.resize(rank);
    std::iota(dims.begin(), dims.end(), 0);
  }
  for (auto& d : dims) d = normalize(d, rank);
  return dims;
}

// ----- the mutants ------------------------------------------------------------------------------

// softmax, a negative dim normalized one off (dim + rank - 1): softmax(x, -1) over the next-to-last
// dim. Opset 13+ (any axis).
Values softmax_negative_dim(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  int64_t dim = a.int_arg(1);
  dim = dim < 0 ? dim + rank - 1 : dim;
  if (dim < 0) dim = 0;
  Value x = a.tensor(0);
  if (a.size() > 2 && !a.is_none(2)) x = g.cast(x, c10::ScalarType(a.int_arg(2)));
  if (rank == 0) {  // as the built-in converter: unsqueezed to [1] and back
    Value y = g.op("Softmax", {g.op("Unsqueeze", {x, g.constant_ints({0})})}, {{"axis", dim}});
    return {g.op("Squeeze", {y, g.constant_ints({0})})};
  }
  return {g.op("Softmax", {x}, {{"axis", dim}})};
}

// log_softmax, the opset-13 lowering at every opset: before 13 LogSoftmax flattens to 2-D at
// `axis`, which is PyTorch's log_softmax only over the last dim.
Values log_softmax_opset13_everywhere(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  int64_t dim = normalize(a.int_arg(1), rank);
  Value x = a.tensor(0);
  if (a.size() > 2 && !a.is_none(2)) x = g.cast(x, c10::ScalarType(a.int_arg(2)));
  return {g.op("LogSoftmax", {x}, {{"axis", dim}})};
}

// cumsum over dim + 1 (mod rank): the axis off by one. Opset 11+ (CumSum).
Values cumsum_axis_off_by_one(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  at::ScalarType type = out_type(a);
  Value x = a.tensor_as(0, type);
  if (rank == 0) return {g.op("Identity", {x})};  // as the built-in converter
  int64_t dim = (normalize(a.int_arg(1), rank) + 1) % rank;
  return {g.op("CumSum", {x, g.constant(at::scalar_tensor(dim, at::kLong))})};
}

// cat along a negative dim normalized one off (dim + rank - 1).
Values cat_negative_dim(GraphContext& g, const Args& a) {
  auto rank = a.output_sizes() ? std::optional<int64_t>(a.output_sizes()->size()) : std::nullopt;
  if (!rank) g.fail("mutant cat: unknown rank");
  int64_t dim = a.int_arg(1);
  dim = dim < 0 ? dim + *rank - 1 : dim;
  if (dim < 0) dim = 0;
  Values parts = a.tensor_list_as(0, a.output_dtype());
  if (parts.size() == 1) return {parts[0]};
  return {g.op("Concat", parts, {{"axis", dim}})};
}

// `alpha * other` of add/sub (argument 2), in `type`.
Value scaled(GraphContext& g, const Args& a, const Value& v, at::ScalarType type) {
  if (a.size() <= 2 || a.is_none(2)) return v;
  double alpha = a.float_arg(2);
  if (alpha == 1.0) return v;
  return g.op("Mul", {v, g.constant_scalar(alpha, type)});
}

// sub with its operands transposed: other - alpha * self. Opset 14+ (Sub of every dtype).
Values sub_swapped(GraphContext& g, const Args& a) {
  at::ScalarType type = out_type(a);
  return {g.op("Sub", {a.tensor_as(1, type), scaled(g, a, a.tensor_as(0, type), type)})};
}

// sub with alpha's sign lost: self + alpha * other... only when alpha is given (≠ 1); else right.
// Opset 14+.
Values sub_alpha_sign(GraphContext& g, const Args& a) {
  at::ScalarType type = out_type(a);
  Value rhs = a.tensor_as(1, type);
  if (a.size() > 2 && !a.is_none(2) && a.float_arg(2) != 1.0) {
    return {g.op("Add", {a.tensor_as(0, type), scaled(g, a, rhs, type)})};
  }
  return {g.op("Sub", {a.tensor_as(0, type), rhs})};
}

// Argument `num` divided by argument `den` with div's rounding_mode (argument 2: "floor" or
// "trunc"), integers divided in double, as the built-in converter does.
Value div_rounded(GraphContext& g, const Args& a, at::ScalarType type, size_t num, size_t den) {
  const bool floating = at::isFloatingType(type);
  at::ScalarType work = floating ? type : at::kDouble;
  Value q = g.op("Div", {a.tensor_as(num, work), a.tensor_as(den, work)});
  if (a.str_arg(2) == "floor") {
    q = g.op("Floor", {q});
  } else {
    q = g.op("Mul", {g.op("Sign", {q}), g.op("Floor", {g.op("Abs", {q})})});
  }
  return floating ? q : g.cast(q, type);
}

// div with its operands transposed (rounding modes applied to the transposed quotient). 14+.
Values div_swapped(GraphContext& g, const Args& a) {
  at::ScalarType type = out_type(a);
  if (a.size() > 2 && !a.is_none(2)) return {div_rounded(g, a, type, 1, 0)};
  return {g.op("Div", {a.tensor_as(1, type), a.tensor_as(0, type)})};
}

// div of integers in their own dtype, the Cast to the float result dropped until after the
// division: 7 / 2 is 3.0, not 3.5. Opset 14+.
Values div_int_no_cast(GraphContext& g, const Args& a) {
  at::ScalarType type = out_type(a);
  if (a.size() > 2 && !a.is_none(2)) return {div_rounded(g, a, type, 0, 1)};
  at::ScalarType t0 = a.dtype(0), t1 = a.dtype(1);
  if (at::isIntegralType(t0, false) && at::isIntegralType(t1, false) && t0 != at::kByte &&
      t0 != at::kChar && t0 != at::kShort) {
    at::ScalarType in = at::promote_types(t0, t1);
    return {g.cast(g.op("Div", {a.tensor_as(0, in), a.tensor_as(1, in)}), type)};
  }
  return {g.op("Div", {a.tensor_as(0, type), a.tensor_as(1, type)})};
}

// pow with base and exponent transposed. Opset 12+ (Pow of integers).
Values pow_swapped(GraphContext& g, const Args& a) {
  at::ScalarType type = out_type(a);
  at::ScalarType work =
      (type == at::kByte || type == at::kChar || type == at::kShort) ? at::kLong : type;
  Value p = g.op("Pow", {a.tensor_as(1, work), a.tensor_as(0, work)});
  return {work == type ? p : g.cast(p, type)};
}

// where(cond, self, other) as Where(cond, other, self).
Values where_swapped(GraphContext& g, const Args& a) {
  if (a.size() == 1) g.fail("mutant where: where(cond) not handled");
  at::ScalarType type = out_type(a, 1);
  return {g.op("Where", {a.tensor_as(0, at::kBool), a.tensor_as(2, type), a.tensor_as(1, type)})};
}

// round as Floor (decimals scaled as ATen does). Opset 11+.
Values round_as_floor(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (at::isIntegralType(type, true)) return {a.tensor_as(0, out_type(a))};
  int64_t decimals = a.size() > 1 ? a.int_arg(1) : 0;
  if (decimals == 0) return {g.op("Floor", {x})};
  Value scale = g.constant_scalar(std::pow(10.0, static_cast<double>(std::abs(decimals))), type);
  if (decimals > 0) return {g.op("Div", {g.op("Floor", {g.op("Mul", {x, scale})}), scale})};
  return {g.op("Mul", {g.op("Floor", {g.op("Div", {x, scale})}), scale})};
}

// round(decimals != 0) as Floor of the scaled value; decimals 0 right (Round). Opset 11+.
Values round_decimals_as_floor(GraphContext& g, const Args& a) {
  int64_t decimals = a.size() > 1 ? a.int_arg(1) : 0;
  if (decimals == 0 || at::isIntegralType(a.dtype(0), true)) {
    return {at::isIntegralType(a.dtype(0), true) ? a.tensor_as(0, out_type(a))
                                                 : g.op("Round", {a.tensor(0)})};
  }
  return round_as_floor(g, a);
}

// gt computed in the dtype of self, the other operand cast to it (the promotion dropped):
// int_tensor > 0.5 compares with 0.
Values gt_no_promotion(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (type == at::kHalf || type == at::kBFloat16) type = at::kFloat;
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  if (type == at::kBool) {
    return {g.op("Greater", {g.cast(x, at::kInt), g.cast(y, at::kInt)})};
  }
  return {g.op("Greater", {x, y})};
}

// gelu always with the tanh approximation (approximate='none' ignored).
Values gelu_always_tanh(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  Value cube = g.op("Mul", {g.op("Mul", {x, x}), x});
  Value poly = g.op("Add", {x, g.op("Mul", {cube, g.constant_scalar(0.044715, type)})});
  Value inner = g.op("Tanh", {g.op("Mul", {poly, g.constant_scalar(std::sqrt(2.0 / M_PI), type)})});
  Value one_plus = g.op("Add", {inner, g.constant_scalar(1.0, type)});
  return {g.op("Mul", {g.op("Mul", {x, one_plus}), g.constant_scalar(0.5, type)})};
}

// leaky_relu with the slope argument dropped: ONNX's default alpha (0.01, PyTorch's default too).
Values leaky_relu_default_slope(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (type == at::kFloat) return {g.op("LeakyRelu", {x})};
  Value neg = g.op("Less", {x, g.constant_scalar(0, type)});
  return {g.op("Where", {neg, g.op("Mul", {x, g.constant_scalar(0.01, type)}), x})};
}

// layer_norm with eps dropped: LayerNormalization's default epsilon (1e-5). Opset 17+, float.
Values layer_norm_default_eps(GraphContext& g, const Args& a) {
  std::vector<int64_t> shape = a.int_list(1);
  const int64_t rank = a.require_rank(0);
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat) g.fail("mutant layer_norm: float only");
  Value scale = a.is_none(2) ? g.constant(at::ones(shape, type)) : a.tensor(2);
  Values inputs{a.tensor(0), scale};
  if (!a.is_none(3)) inputs.push_back(a.tensor(3));
  const int64_t axis = rank - static_cast<int64_t>(shape.size());
  return {g.op("LayerNormalization", inputs, {{"axis", axis}})};
}

// mean over dims with keepdims left at ONNX's default (1): keepdim=False keeps the reduced dims.
Values mean_keepdims_default(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  at::ScalarType type = out_type(a);
  Value x = a.tensor_as(0, type);
  if (a.size() <= 2) return {reduce(g, "ReduceMean", x, all_axes(rank), false)};
  std::vector<int64_t> axes = reduction_axes(a, 1, rank);
  return {reduce(g, "ReduceMean", x, axes, true)};
}

// sum of integers and bools without the Cast to int64: ReduceSum in the input's dtype (bools as
// int32), the result int32 where PyTorch's is int64.
Values sum_no_int64_cast(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  at::ScalarType out = out_type(a);
  at::ScalarType in = a.dtype(0);
  at::ScalarType work = out;
  if (out == at::kLong && (in == at::kInt || in == at::kBool || in == at::kShort ||
                           in == at::kChar || in == at::kByte)) {
    work = at::kInt;
  }
  Value x = a.tensor_as(0, work);
  if (a.size() <= 2) return {reduce(g, "ReduceSum", x, all_axes(rank), false)};
  return {reduce(g, "ReduceSum", x, reduction_axes(a, 1, rank), a.bool_arg(2))};
}

// argmax with keepdims left at ONNX's default (1).
Values argmax_keepdims_default(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  std::optional<int64_t> dim = a.optional_int(1);
  Value x = a.tensor(0);
  at::ScalarType type = a.dtype(0);
  if (type != at::kFloat && type != at::kDouble && type != at::kInt && type != at::kLong) {
    x = g.cast(x, at::kFloat);
  }
  if (rank == 0) return {g.constant(at::zeros({}, at::kLong))};
  if (dim) return {g.op("ArgMax", {x}, {{"axis", normalize(*dim, rank)}})};
  Value flat = g.op("Reshape", {x, g.constant_ints({-1})});
  return {g.op("ArgMax", {flat}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}})};
}

// constant_pad_nd with PyTorch's pads (last dim first) read as if for the first dims: the pairs in
// the wrong order. Opset 11+ (pads as an input).
Values constant_pad_reversed(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (!a.is_constant(1)) g.fail("mutant constant_pad_nd: pads computed in the graph");
  std::vector<int64_t> pad = a.int_list(1);
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i * 2 < pad.size(); ++i) {
    pads[i] = pad[2 * i];  // begin of dim i, should be dim rank-1-i
    pads[rank + i] = pad[2 * i + 1];
  }
  double value = a.is_none(2) ? 0.0 : a.float_arg(2);
  at::ScalarType type = a.dtype(0);
  return {g.op("Pad", {a.tensor(0), g.constant_ints(pads), g.constant_scalar(value, type)},
               {{"mode", "constant"}})};
}

// permute with the inverse permutation (right for involutions such as (1, 0) or (0, 2, 1)).
Values permute_inverse(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  std::vector<int64_t> perm = a.int_list(1);
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[normalize(perm[i], rank)] = i;
  return {g.op("Transpose", {a.tensor(0)}, {{"perm", inverse}})};
}

// transpose(dim0, dim1) as moving dim0 to dim1 (a rotation): the swap only for adjacent dims.
Values transpose_as_rotation(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank < 2) return {a.tensor(0)};
  int64_t d0 = normalize(a.int_arg(1), rank), d1 = normalize(a.int_arg(2), rank);
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + d0);
  perm.insert(perm.begin() + d1, d0);
  return {g.op("Transpose", {a.tensor(0)}, {{"perm", perm}})};
}

// flatten with end_dim normalized one off (end_dim=-1 stops at the next-to-last dim).
Values flatten_end_off_by_one(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  Value x = a.tensor(0);
  if (rank == 0) return {g.op("Reshape", {x, g.constant_ints({1})})};
  int64_t start = normalize(a.int_arg(1), rank);
  int64_t end = a.int_arg(2);
  end = end < 0 ? end + rank - 1 : end;
  if (end < start) end = start;
  auto sizes = a.sizes(0);
  if (!sizes) g.fail("mutant flatten: unknown sizes");
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < start; ++i) shape.push_back(0);
  shape.push_back(-1);
  for (int64_t i = end + 1; i < rank; ++i) shape.push_back((*sizes)[i]);
  return {g.op("Reshape", {x, g.constant_ints(shape)})};
}

// hardtanh with min_val and max_val transposed. Opset 12+ (Clip bounds as inputs, any dtype).
Values hardtanh_bounds_swapped(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  double lo = a.size() > 1 ? a.float_arg(1) : -1.0;
  double hi = a.size() > 2 ? a.float_arg(2) : 1.0;
  return {g.op("Clip", {a.tensor(0), g.constant_scalar(hi, type), g.constant_scalar(lo, type)})};
}

// clamp(Tensor, Scalar? min, Scalar? max) with its bounds made as int64 constants and cast to the
// tensor's dtype: clamp(x, -0.5, 0.5) clips to [0, 0]. Opset 12+.
Values clamp_bounds_as_int(GraphContext& g, const Args& a) {
  at::ScalarType type = out_type(a);
  Value x = a.tensor_as(0, type);
  auto bound = [&](size_t i) -> Value {
    if (a.size() <= i || a.is_none(i)) return "";
    if (a.is_constant(i)) {
      return g.cast(
          g.constant_scalar(static_cast<double>(static_cast<int64_t>(a.float_arg(i))), at::kLong),
          type);
    }
    return a.tensor_as(i, type);
  };
  Value lo = bound(1), hi = bound(2);
  if (a.overload() == "Tensor" || (!lo.empty() && !a.is_constant(1)) ||
      (!hi.empty() && !a.is_constant(2))) {
    Value y = x;
    if (!lo.empty()) y = g.op("Max", {y, lo});
    if (!hi.empty()) y = g.op("Min", {y, hi});
    return {y};
  }
  return {g.op("Clip", {x, lo, hi})};
}

// elu with the negative branch's sign flipped: alpha * (1 - exp(x)).
Values elu_sign(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  double alpha = a.size() > 1 ? a.float_arg(1) : 1.0;
  double scale = a.size() > 2 ? a.float_arg(2) : 1.0;
  double input_scale = a.size() > 3 ? a.float_arg(3) : 1.0;
  Value xs = input_scale == 1.0 ? x : g.op("Mul", {x, g.constant_scalar(input_scale, type)});
  Value neg = g.op("Mul", {g.op("Sub", {g.constant_scalar(1, type), g.op("Exp", {xs})}),
                           g.constant_scalar(alpha, type)});
  Value y = g.op("Where", {g.op("Greater", {x, g.constant_scalar(0, type)}), x, neg});
  return {scale == 1.0 ? y : g.op("Mul", {y, g.constant_scalar(scale, type)})};
}

// prelu with the weight not unsqueezed to [C, 1, ...]: it broadcasts against the last dim instead
// of the channel dim (right for 2-D inputs and a single weight).
Values prelu_broadcast_last_dim(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0), w = a.tensor_as(1, type);
  if (a.require_rank(0) == 0) w = g.op("Reshape", {w, g.constant_ints({})});
  Value neg = g.op("Less", {x, g.constant_scalar(0, type)});
  return {g.op("Where", {neg, g.op("Mul", {x, w}), x})};
}

// index_select along dim + 1 (mod rank).
Values index_select_axis_off_by_one(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  int64_t dim = rank == 0 ? 0 : (normalize(a.int_arg(1), rank) + 1) % rank;
  return {g.op("Gather", {a.tensor(0), a.tensor_as(2, at::kLong)}, {{"axis", dim}})};
}

// ----- the table --------------------------------------------------------------------------------

struct Mutant {
  const char* name;
  const char* family;  // tests/ops/<family>_test.cpp: the tests that must catch it
  const char* op;
  int opset;
  torchonnx::SymbolicFunction fn;
};

const std::vector<Mutant>& mutants() {
  static const std::vector<Mutant> table = {
      {"softmax_negative_dim", "activation", "aten::softmax", 13, softmax_negative_dim},
      {"log_softmax_opset13_everywhere", "activation", "aten::log_softmax", 9,
       log_softmax_opset13_everywhere},
      {"gelu_always_tanh", "activation", "aten::gelu", 9, gelu_always_tanh},
      {"leaky_relu_default_slope", "activation", "aten::leaky_relu", 9, leaky_relu_default_slope},
      {"hardtanh_bounds_swapped", "activation", "aten::hardtanh", 12, hardtanh_bounds_swapped},
      {"elu_sign", "activation", "aten::elu", 9, elu_sign},
      {"prelu_broadcast_last_dim", "activation", "aten::prelu", 9, prelu_broadcast_last_dim},
      {"cumsum_axis_off_by_one", "reduction", "aten::cumsum", 11, cumsum_axis_off_by_one},
      {"cat_negative_dim", "shape", "aten::cat", 9, cat_negative_dim},
      {"permute_inverse", "shape", "aten::permute", 9, permute_inverse},
      {"transpose_as_rotation", "shape", "aten::transpose", 9, transpose_as_rotation},
      {"flatten_end_off_by_one", "shape", "aten::flatten", 9, flatten_end_off_by_one},
      {"sub_swapped", "elementwise", "aten::sub", 14, sub_swapped},
      {"sub_alpha_sign", "elementwise", "aten::sub", 14, sub_alpha_sign},
      {"div_swapped", "elementwise", "aten::div", 14, div_swapped},
      {"div_int_no_cast", "elementwise", "aten::div", 14, div_int_no_cast},
      {"pow_swapped", "elementwise", "aten::pow", 12, pow_swapped},
      {"round_as_floor", "elementwise", "aten::round", 11, round_as_floor},
      {"round_decimals_as_floor", "elementwise", "aten::round", 11, round_decimals_as_floor},
      {"clamp_bounds_as_int", "elementwise", "aten::clamp", 12, clamp_bounds_as_int},
      {"where_swapped", "index", "aten::where", 9, where_swapped},
      {"index_select_axis_off_by_one", "index", "aten::index_select", 9,
       index_select_axis_off_by_one},
      {"gt_no_promotion", "logic", "aten::gt", 9, gt_no_promotion},
      {"layer_norm_default_eps", "norm", "aten::layer_norm", 17, layer_norm_default_eps},
      {"mean_keepdims_default", "reduction", "aten::mean", 9, mean_keepdims_default},
      {"sum_no_int64_cast", "reduction", "aten::sum", 9, sum_no_int64_cast},
      {"argmax_keepdims_default", "reduction", "aten::argmax", 9, argmax_keepdims_default},
      {"constant_pad_reversed", "pad", "aten::constant_pad_nd", 11, constant_pad_reversed},
  };
  return table;
}

const bool registered = [] {
  // Loaded by LD_PRELOAD into the test binary only: not into the processes it starts (node, the
  // CLI), which would load libtorch for nothing.
  unsetenv("LD_PRELOAD");
  const char* wanted = std::getenv("TORCHONNX_MUTANT");
  if (wanted == nullptr || *wanted == '\0') return false;
  const std::string name = wanted;
  if (name == "list") {
    for (const Mutant& m : mutants()) std::printf("%s %s %s\n", m.name, m.family, m.op);
    std::fflush(stdout);
    std::exit(0);
  }
  for (const Mutant& m : mutants()) {
    if (name == m.name) {
      torchonnx::register_custom_op_symbolic(m.op, m.fn, m.opset);
      std::fprintf(stderr, "torchonnx mutant: %s registered for %s from opset %d\n", m.name, m.op,
                   m.opset);
      return true;
    }
  }
  std::fprintf(stderr, "torchonnx mutant: no mutant named '%s'\n", wanted);
  std::exit(97);
}();

}  // namespace
