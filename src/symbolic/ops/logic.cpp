// Comparisons, logical and bitwise ops, shifts, casts: eq/ne/lt/le/gt/ge, logical_*, bitwise_*,
// __and__/__or__/__xor__, __lshift__/__rshift__, bitwise_left_shift/bitwise_right_shift, to,
// type_as, _cast_*, is_floating_point.
//
// Comparisons run in the operands' common dtype as PyTorch computes it (at::result_type: Python
// scalars and 0-d tensors do not raise a dimensioned tensor's dtype within its category), so
// `float_tensor == 0.1` compares with float(0.1), and `int_tensor < 2.5` compares in float.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

constexpr at::ScalarType kUndefined = at::ScalarType::Undefined;

at::ScalarType promote_skip_undefined(at::ScalarType a, at::ScalarType b) {
  if (a == kUndefined) return b;
  if (b == kUndefined) return a;
  return at::promote_types(a, b);
}

// ATen's combine_categories: a higher-priority category wins unless a lower one is of a higher
// kind (bool < integer < floating).
at::ScalarType combine_categories(at::ScalarType higher, at::ScalarType lower) {
  if (at::isFloatingType(higher)) return higher;
  if (higher == at::kBool || at::isFloatingType(lower)) {
    return promote_skip_undefined(higher, lower);
  }
  return higher != kUndefined ? higher : lower;
}

// The dtype of a Scalar argument (its jit type, or its constant's tag for `Scalar` typed values).
at::ScalarType scalar_dtype(GraphContext& g, const Args& a, size_t i) {
  at::ScalarType t = a.dtype(i);
  if (t != kUndefined) return t;
  if (a.is_constant(i)) {
    c10::IValue c = a.constant(i);
    if (c.isDouble()) return at::kDouble;
    if (c.isInt()) return at::kLong;
    if (c.isBool()) return at::kBool;
  }
  g.fail("the dtype of argument " + std::to_string(i) + " is unknown");
}

// at::result_type over the operands at `indices`: dimensioned tensors, 0-d tensors and Python
// scalars (wrapped numbers, a float one counts as the default dtype float) are three categories.
at::ScalarType result_type(GraphContext& g, const Args& a, const std::vector<size_t>& indices) {
  at::ScalarType dim = kUndefined, zero = kUndefined, wrapped = kUndefined, raw = kUndefined;
  bool any_tensor = false;
  for (size_t i : indices) {
    const auto& type = a.jit(i)->type();
    if (type->kind() == c10::TypeKind::ListType) {
      g.fail("comparing lists is supported only when they are constant (folded before export)");
    }
    if (type->cast<c10::TensorType>()) {
      at::ScalarType t = a.dtype(i);
      if (t == kUndefined) g.fail("the dtype of argument " + std::to_string(i) + " is unknown");
      any_tensor = true;
      auto rank = a.rank(i);
      at::ScalarType& category = rank && *rank == 0 ? zero : dim;
      category = promote_skip_undefined(category, t);
      continue;
    }
    at::ScalarType t = scalar_dtype(g, a, i);
    raw = promote_skip_undefined(raw, t);
    wrapped = promote_skip_undefined(wrapped, at::isFloatingType(t) ? at::kFloat : t);
  }
  if (!any_tensor) return raw;  // int/float scalars: Python compares them exactly (in double)
  return combine_categories(dim, combine_categories(zero, wrapped));
}

// x == y for operands of `type`. Equal takes bool/int32/int64 before 11 (floats from 11): floats
// below 11 are "neither less nor greater, and not NaN" (x + y is NaN when either is; inf + -inf is
// NaN too, but those are not equal anyway).
Value equal(GraphContext& g, Value x, Value y, at::ScalarType type) {
  if (at::isFloatingType(type) && !g.has(OnnxFeature::kEqualOfAnyType)) {
    Value ordered = g.op("Or", {g.op("Less", {x, y}), g.op("Greater", {x, y})});
    Value nan = g.op("IsNaN", {g.op("Add", {x, y})});
    return g.op("Not", {g.op("Or", {ordered, nan})});
  }
  if (!g.has(OnnxFeature::kEqualOfAnyType) && type != at::kBool && type != at::kInt &&
      type != at::kLong) {
    x = g.cast(x, at::kLong);
    y = g.cast(y, at::kLong);
  }
  return g.op("Equal", {x, y});
}

// Less/Greater take numbers, not bool: bools are compared as int32.
Value order(GraphContext& g, const std::string& op, Value x, Value y, at::ScalarType type) {
  if (type == at::kBool) {
    x = g.cast(x, at::kInt);
    y = g.cast(y, at::kInt);
  }
  return g.op(op, {x, y});
}

// x <= y (less) or x >= y (greater): LessOrEqual/GreaterOrEqual from 12, Or(Less, Equal) before.
Value order_or_equal(GraphContext& g, bool less, const Value& x, const Value& y,
                     at::ScalarType type) {
  if (g.has(OnnxFeature::kOrEqualComparisons) && type != at::kBool) {
    return g.op(less ? "LessOrEqual" : "GreaterOrEqual", {x, y});
  }
  return g.op("Or", {order(g, less ? "Less" : "Greater", x, y, type), equal(g, x, y, type)});
}

Converter comparison(const std::string& kind) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = result_type(g, a, {0, 1});
    if (type == at::kHalf || type == at::kBFloat16) type = at::kFloat;  // exact widening
    Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
    if (kind == "eq") return {equal(g, x, y, type)};
    if (kind == "ne") return {g.op("Not", {equal(g, x, y, type)})};
    if (kind == "lt") return {order(g, "Less", x, y, type)};
    if (kind == "gt") return {order(g, "Greater", x, y, type)};
    if (kind == "le") return {order_or_equal(g, true, x, y, type)};
    return {order_or_equal(g, false, x, y, type)};
  };
}

std::string short_name(const Args& a) {
  std::string kind = a.node()->kind().toQualString();
  return kind.substr(kind.find("::") + 2);
}

// x & m for a constant mask m = 2^k - 1 >= 0 on integers: x mod 2^k (two's complement keeps the
// k low bits, which is the non-negative remainder). nullopt when the mask is not of that form.
std::optional<Value> low_bits_mask(GraphContext& g, const Args& a, at::ScalarType type) {
  for (size_t mask_i : {size_t{1}, size_t{0}}) {
    if (!a.is_constant(mask_i)) continue;
    c10::IValue c = a.constant(mask_i);
    if (c.isTensor() && c.toTensor().dim() != 0) continue;
    int64_t m = c.isTensor() ? c.toTensor().item<int64_t>() : c.toScalar().to<int64_t>();
    if (m < 0 || m == std::numeric_limits<int64_t>::max() || ((m + 1) & m) != 0) continue;
    Value x = a.tensor_as(1 - mask_i, type);
    Value mod = g.constant_scalar(static_cast<double>(m + 1), type);
    Value r = g.op("Sub", {x, g.op("Mul", {g.op("Div", {x, mod}), mod})});  // Div truncates
    return g.op("Where", {g.op("Less", {r, g.constant_scalar(0, type)}), g.op("Add", {r, mod}), r});
  }
  return std::nullopt;
}

// bitwise and/or/xor: bool ⇒ And/Or/Xor. Integers: BitwiseAnd/Or/Xor from opset 18; below, only
// a `& (2^k - 1)` mask, which is exact as a remainder.
Converter bitwise(const std::string& onnx_bool_op, bool has_bitwise_ops) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType type = result_type(g, a, {0, 1});
    if (type == at::kBool)
      return {g.op(onnx_bool_op, {a.tensor_as(0, type), a.tensor_as(1, type)})};
    if (at::isFloatingType(type)) {
      g.fail(short_name(a) + " is not defined for floating tensors (PyTorch rejects them too)");
    }
    if (has_bitwise_ops) {
      return {g.op("Bitwise" + onnx_bool_op, {a.tensor_as(0, type), a.tensor_as(1, type)})};
    }
    if (onnx_bool_op == "And") {
      if (auto masked = low_bits_mask(g, a, type)) return {*masked};
    }
    g.fail(short_name(a) + " on integer tensors needs ONNX Bitwise" + onnx_bool_op +
           " of opset 18; export with opset >= 18 (below it only bool operands, or `& (2**k - "
           "1)` masks, export)");
  };
}

// 2^n of `type` for a shift amount n (constant: computed here; else in the graph).
Value power_of_two(GraphContext& g, const Args& a, size_t i, at::ScalarType type) {
  if (a.is_constant(i)) {
    c10::IValue c = a.constant(i);
    if (!c.isTensor() || c.toTensor().dim() == 0) {
      int64_t n = c.isTensor() ? c.toTensor().item<int64_t>() : c.toScalar().to<int64_t>();
      if (n < 0 || n > 62) g.fail("shift amounts must be in [0, 62], got " + std::to_string(n));
      return g.constant_scalar(static_cast<double>(int64_t{1} << n), type);
    }
  }
  if (g.has(OnnxFeature::kBitShift)) {
    // BitShift takes unsigned types; libtorch has no uint64, so Cast names ONNX's UINT64 (13).
    auto to_uint64 = [&](const Value& v) { return g.op("Cast", {v}, {{"to", int64_t{13}}}); };
    Value one = to_uint64(g.constant_scalar(1, at::kLong));
    Value n = to_uint64(a.tensor_as(i, at::kLong));
    return g.cast(g.op("BitShift", {one, n}, {{"direction", "LEFT"}}), type);
  }
  Value p = g.op("Pow", {g.constant_scalar(2, at::kDouble), a.tensor_as(i, at::kDouble)});
  return g.cast(p, type);
}

// self << other / self >> other on integers: multiplication by 2^n (wrapping like ATen's shift of
// the unsigned representation), floor division by 2^n (arithmetic shift). BitShift itself is
// unsigned-only. PyTorch 1.13 implements neither shift for floating tensors.
Converter shift(bool left) {
  return [=](GraphContext& g, const Args& a) -> Values {
    at::ScalarType out = a.output_dtype();
    if (out == kUndefined) out = result_type(g, a, {0, 1});
    if (!at::isIntegralType(out, /*includeBool=*/false)) {
      g.fail(short_name(a) + " takes integer tensors only (PyTorch 1.13 has no shift for " +
             std::string(c10::toString(out)) + ")");
    }
    // Mul/Div take int32/int64 (and unsigned 32/64) below 14: narrower types go through int64.
    at::ScalarType work = (out == at::kInt || out == at::kLong) ? out : at::kLong;
    Value x = a.tensor_as(0, work);
    Value p = power_of_two(g, a, 1, work);
    Value y;
    if (left) {
      y = g.op("Mul", {x, p});
    } else {
      Value q = g.op("Div", {x, p});  // truncates toward zero; p > 0
      Value r = g.op("Sub", {x, g.op("Mul", {q, p})});
      Value neg = g.op("Less", {r, g.constant_scalar(0, work)});
      y = g.op("Where", {neg, g.op("Sub", {q, g.constant_scalar(1, work)}), q});
    }
    return {work == out ? y : g.cast(y, out)};
  };
}

// ----- casts -----------------------------------------------------------------------------------

// aten::to(Tensor self, [Device device,] ScalarType dtype | Tensor other | Device? device,
//   int? dtype, bool non_blocking, bool copy, MemoryFormat?) / aten::type_as(Tensor self,
//   Tensor other)  ⇒  Cast to the result dtype (nothing when it is unchanged)
// The result dtype is type propagation's, or else the one the arguments name: `other`'s dtype
// (type_as, to.other: argument 1), or a constant dtype argument (at `dtype_i` of the overload;
// type propagation may not reach a node whose input has no static type, e.g. after a
// data-dependent write in a branch).
Values cast_to_known(GraphContext& g, const Args& a, at::ScalarType out) {
  if (out == kUndefined) {
    g.fail(
        "the target dtype is unknown (type propagation found none for the result or the "
        "arguments). Remedy: give the tensors static dtypes, e.g. cast the input explicitly "
        "with .to(dtype) before this op");
  }
  return {a.tensor_as(0, out)};
}

Converter cast_as(std::optional<size_t> dtype_i, bool other) {
  return [dtype_i, other](GraphContext& g, const Args& a) -> Values {
    at::ScalarType out = a.output_dtype();
    if (out == kUndefined && other) {
      out = a.dtype(1);
    } else if (out == kUndefined && dtype_i && *dtype_i < a.size() && a.is_constant(*dtype_i)) {
      // A None dtype keeps the input's.
      out = a.is_none(*dtype_i) ? a.dtype(0) : static_cast<at::ScalarType>(a.int_arg(*dtype_i));
    }
    return cast_to_known(g, a, out);
  };
}

// aten::_cast_X(Tensor self, bool non_blocking=False)  ⇒  Cast to X
Converter logic_cast_to(at::ScalarType type) {
  return [type](GraphContext&, const Args& a) -> Values { return {a.tensor_as(0, type)}; };
}

// aten::is_floating_point(Tensor self) -> bool  ⇒  a bool constant (the dtype is static)
Values is_floating_point(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (type == kUndefined) g.fail("the input's dtype is unknown");
  return {g.constant_scalar(at::isFloatingType(type) ? 1 : 0, at::kBool)};
}

// ----- logical ---------------------------------------------------------------------------------

// `y` (bool) in the node's result dtype.
Value logical_result(GraphContext& g, const Args& a, const Value& y) {
  at::ScalarType out = a.output_dtype();
  return out == kUndefined || out == at::kBool ? y : g.cast(y, out);
}

// aten::logical_and/or/xor(Tensor self, Tensor other)  ⇒  And/Or/Xor of Cast(bool) (nonzero)
Converter logical(const std::string& onnx_op) {
  return [onnx_op](GraphContext& g, const Args& a) -> Values {
    Value y = g.op(onnx_op, {a.tensor_as(0, at::kBool), a.tensor_as(1, at::kBool)});
    return {logical_result(g, a, y)};
  };
}

// aten::logical_not(Tensor self)  ⇒  Not(Cast(bool))
Values logical_not(GraphContext& g, const Args& a) {
  Value y = g.op("Not", {a.tensor_as(0, at::kBool)});
  return {logical_result(g, a, y)};
}

// aten::bitwise_not(Tensor self)  ⇒  Not (bool); signed integers: -x - 1 (two's complement);
// uint8: 255 - x (8/16-bit types computed in int64 and cast back)
Values bitwise_not(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value x = a.tensor(0);
  if (type == at::kBool) return {g.op("Not", {x})};
  if (!at::isIntegralType(type, /*includeBool=*/false)) {
    g.fail("bitwise_not takes bool and integer tensors only (as PyTorch)");
  }
  // Sub takes int32/int64 (not 8/16-bit types) below 14: those go through int64, where the
  // result is in range of the original type.
  at::ScalarType work = (type == at::kInt || type == at::kLong) ? type : at::kLong;
  Value y = type == at::kByte
                ? g.op("Sub", {g.constant_scalar(255, work), a.tensor_as(0, work)})
                : g.op("Sub", {g.op("Neg", {a.tensor_as(0, work)}), g.constant_scalar(1, work)});
  return {work == type ? y : g.cast(y, type)};
}

// aten::bitwise_not from opset 18  ⇒  Not (bool), BitwiseNot (integers)
Values bitwise_not18(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (type == at::kBool) return {g.op("Not", {a.tensor(0)})};
  if (!at::isIntegralType(type, /*includeBool=*/false)) {
    g.fail("bitwise_not takes bool and integer tensors only (as PyTorch)");
  }
  return {g.op("BitwiseNot", {a.tensor(0)})};
}

}  // namespace

void register_logic(Registry& r) {
  // aten::to's overloads, each with the position of its dtype or other.
  r.add("aten::to.dtype", from(9), cast_as(1, false));
  r.add("aten::to.dtype_layout", from(9), cast_as(1, false));
  r.add("aten::to.device", from(9), cast_as(2, false));
  r.add("aten::to.prim_dtype", from(9), cast_as(1, false));
  r.add("aten::to.prim_Device", from(9), cast_as(2, false));
  r.add("aten::to.other", from(9), cast_as(std::nullopt, true));
  r.add("aten::to.prim_other", from(9), cast_as(std::nullopt, false));
  r.add("aten::type_as", from(9), cast_as(std::nullopt, true));
  // aten::_to_copy(Tensor self, *, ScalarType? dtype, Layout?, Device?, bool? pin_memory,
  //   bool non_blocking, MemoryFormat?) (torch.export's core ATen form of .to and .float())
  r.add("aten::_to_copy", from(9), cast_as(1, false));
  r.add("aten::_cast_Byte", from(9), logic_cast_to(at::kByte));
  r.add("aten::_cast_Char", from(9), logic_cast_to(at::kChar));
  r.add("aten::_cast_Double", from(9), logic_cast_to(at::kDouble));
  r.add("aten::_cast_Float", from(9), logic_cast_to(at::kFloat));
  r.add("aten::_cast_Half", from(9), logic_cast_to(at::kHalf));
  r.add("aten::_cast_Int", from(9), logic_cast_to(at::kInt));
  r.add("aten::_cast_Long", from(9), logic_cast_to(at::kLong));
  r.add("aten::_cast_Short", from(9), logic_cast_to(at::kShort));
  r.add("aten::is_floating_point", from(9), is_floating_point);

  // aten::eq/ne(Tensor|Scalar self, Tensor|Scalar other)  ⇒  Equal [+ Not] (floats below 11:
  // Not(Less or Greater or NaN))
  r.add("aten::eq", from(9), comparison("eq"));
  r.add("aten::ne", from(9), comparison("ne"));
  // aten::lt/gt(Tensor|Scalar self, Tensor|Scalar other)  ⇒  Less/Greater (bool as int32)
  r.add("aten::lt", from(9), comparison("lt"));
  r.add("aten::gt", from(9), comparison("gt"));
  // aten::le/ge(Tensor|Scalar self, Tensor|Scalar other)  ⇒  LessOrEqual/GreaterOrEqual (12+),
  // Or(Less/Greater, Equal) before
  r.add("aten::le", from(9), comparison("le"));
  r.add("aten::ge", from(9), comparison("ge"));

  r.add("aten::logical_and", from(9), logical("And"));
  r.add("aten::logical_or", from(9), logical("Or"));
  r.add("aten::logical_xor", from(9), logical("Xor"));
  r.add("aten::logical_not", from(9), logical_not);

  // aten::bitwise_and / __and__(Tensor|Scalar self, Tensor|Scalar other)  ⇒  And (bool);
  // integers: BitwiseAnd from opset 18, below only `& (2^k - 1)` as a remainder
  for (const char* op : {"aten::bitwise_and", "aten::__and__"}) {
    r.add(op, {9, 17}, bitwise("And", false));
    r.add(op, from(18), bitwise("And", true));
  }
  // aten::bitwise_or / __or__  ⇒  Or (bool); integers: BitwiseOr (18)
  // aten::bitwise_xor / __xor__  ⇒  Xor (bool); integers: BitwiseXor (18)
  for (const char* op : {"aten::bitwise_or", "aten::__or__"}) {
    r.add(op, {9, 17}, bitwise("Or", false));
    r.add(op, from(18), bitwise("Or", true));
  }
  for (const char* op : {"aten::bitwise_xor", "aten::__xor__"}) {
    r.add(op, {9, 17}, bitwise("Xor", false));
    r.add(op, from(18), bitwise("Xor", true));
  }
  // aten::bitwise_not(Tensor self)  ⇒  Not (bool); integers: -x - 1 (255 - x for uint8) below
  // opset 18, BitwiseNot from 18
  r.add("aten::bitwise_not", {9, 17}, bitwise_not);
  r.add("aten::bitwise_not", from(18), bitwise_not18);
  // aten::__lshift__(Tensor self, Tensor|Scalar other)  ⇒  Mul(self, 2^other) (integers)
  r.add("aten::__lshift__", from(9), shift(/*left=*/true));
  // aten::__rshift__(Tensor self, Tensor|Scalar other)  ⇒  floor(self / 2^other) (integers)
  r.add("aten::__rshift__", from(9), shift(/*left=*/false));
  // aten::bitwise_left_shift.Tensor / .Tensor_Scalar / .Scalar_Tensor(self, other)  ⇒  as
  // __lshift__: Mul(self, 2^other) (integers; 2^other by BitShift of uint64 from 11, Pow below)
  r.add("aten::bitwise_left_shift", from(9), shift(/*left=*/true));
  // aten::bitwise_right_shift.Tensor / .Tensor_Scalar / .Scalar_Tensor(self, other)  ⇒  as
  // __rshift__: floor(self / 2^other), the arithmetic shift of signed integers
  r.add("aten::bitwise_right_shift", from(9), shift(/*left=*/false));
}

}  // namespace torchonnx::symbolic::ops
