// Tensor creation: arange, zeros/ones/full/empty (+_like, new_*), fill, eye, linspace,
// scalar_tensor, tensor/as_tensor, one_hot, bucketize, item, and the random ops
// (rand, randn, randint and their _like forms, bernoulli, ...).
//
// Sizes may be constant lists or computed in the graph (ConstantOfShape of a computed shape), and
// result dtypes come from the dtype argument, else from type propagation (which ran the op), else
// from PyTorch's defaults.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>

#include "onnx/dtype.h"
#include "symbolic/context.h"
#include "symbolic/factory.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

int64_t onnx_dtype(at::ScalarType type) {
  return to_onnx_dtype(type);
}

// Argument `i` (int[] size) as a 1-D int64 shape: a constant, or the list computed in the graph.
Value shape_arg(GraphContext& g, const Args& a, size_t i) {
  if (a.is_constant(i)) return g.constant_ints(a.int_list(i));
  return a.tensor_as(i, at::kLong);
}

at::Scalar scalar_of(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().item();
  return v.toScalar();
}

// A tensor of `shape` filled with constant `value`.
Value constant_of_shape(GraphContext& g, const Value& shape, const at::Scalar& value,
                        at::ScalarType type) {
  at::Tensor fill = at::empty({1}, at::TensorOptions().dtype(type));
  fill.fill_(value);
  return g.op("ConstantOfShape", {shape}, {{"value", fill}});
}

// A tensor of `shape` filled with argument `value_index` (constant: ConstantOfShape; computed:
// Expand of the value cast to `type`).
Value filled(GraphContext& g, const Args& a, const Value& shape, size_t value_index,
             at::ScalarType type) {
  if (a.is_constant(value_index)) {
    return constant_of_shape(g, shape, scalar_of(a.constant(value_index)), type);
  }
  Value v = a.tensor_as(value_index, type);
  if (a.rank(value_index).value_or(0) != 0) v = g.op("Reshape", {v, g.constant_ints({})});
  return g.op("Expand", {v, shape});
}

// PyTorch's arange: integral results are computed in int64 from truncated bounds, floating ones
// in double (ATen's accumulate type), then cast to `type`. Length ceil((end - start) / step).
Value arange_values(GraphContext& g, const Args& a, std::optional<size_t> start_i, size_t end_i,
                    std::optional<size_t> step_i, at::ScalarType type) {
  const at::ScalarType work =
      at::isIntegralType(type, /*includeBool=*/true) ? at::kLong : at::kDouble;
  Value start = start_i ? a.tensor_as(*start_i, work) : g.constant_scalar(0, work);
  Value end = a.tensor_as(end_i, work);
  Value step = step_i ? a.tensor_as(*step_i, work) : g.constant_scalar(1, work);
  Value out = range(g, start, end, step, work);
  return work == type ? out : g.cast(out, type);
}

// torch.tensor's data: a (nested) list of int/float/bool constants → a constant tensor.
void flatten_leaves(const c10::IValue& v, size_t depth, std::vector<int64_t>& shape,
                    std::vector<c10::IValue>& leaves, GraphContext& g) {
  if (!v.isList()) {
    if (depth != shape.size()) g.fail("torch.tensor data is a ragged nested list");
    leaves.push_back(v);
    return;
  }
  auto list = v.toListRef();
  if (depth == shape.size()) {
    shape.push_back(static_cast<int64_t>(list.size()));
  } else if (depth > shape.size() || shape[depth] != static_cast<int64_t>(list.size())) {
    g.fail("torch.tensor data is a ragged nested list");
  }
  for (const auto& e : list) flatten_leaves(e, depth + 1, shape, leaves, g);
}

at::ScalarType default_list_dtype(const c10::TypePtr& type) {
  c10::TypePtr t = type;
  while (auto list = t->cast<c10::ListType>()) t = list->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::IntType:
      return at::kLong;
    case c10::TypeKind::BoolType:
      return at::kBool;
    default:
      return at::kFloat;
  }
}

// The data of torch.tensor/as_tensor as a tensor of `type`: a constant when it is, else the
// elements computed in the graph (nested prim::ListConstruct of scalars) concatenated.
Value tensor_data(GraphContext& g, const torch::jit::Value* v, at::ScalarType type) {
  if (auto data = constant_value(v)) {
    if (!data->isList()) {
      return g.constant(at::scalar_tensor(scalar_of(*data), at::TensorOptions().dtype(type)));
    }
    std::vector<int64_t> shape;
    std::vector<c10::IValue> leaves;
    flatten_leaves(*data, 0, shape, leaves, g);
    at::Tensor t =
        at::empty({static_cast<int64_t>(leaves.size())}, at::TensorOptions().dtype(type));
    for (size_t k = 0; k < leaves.size(); ++k) {
      t.select(0, static_cast<int64_t>(k)).fill_(scalar_of(leaves[k]));
    }
    return g.constant(t.reshape(shape));
  }
  if (!v->type()->cast<c10::ListType>()) {
    // A scalar element computed in the graph: its ONNX value (a 0-d tensor) in `type`.
    const Values* bound = g.lookup(v);
    if (bound == nullptr || bound->size() != 1) {
      g.fail("an element of torch.tensor's data has no ONNX value");
    }
    return dtype_of(v->type()) == type ? bound->front() : g.cast(bound->front(), type);
  }
  const torch::jit::Node* list = v->node();
  auto element = v->type()->expectRef<c10::ListType>().getElementType();
  if (list->kind() != c10::prim::ListConstruct && element->kind() != c10::TypeKind::ListType &&
      element->kind() != c10::TypeKind::TensorType) {
    // A flat list of scalars built elsewhere (appends in a loop, ...): its 1-D tensor.
    const Values* bound = g.lookup(v);
    if (bound == nullptr || bound->size() != 1) g.fail("torch.tensor's data has no ONNX value");
    return dtype_of(element) == type ? bound->front() : g.cast(bound->front(), type);
  }
  if (list->kind() != c10::prim::ListConstruct) {
    g.fail("torch.tensor's data must be a list literal (prim::ListConstruct) or a constant");
  }
  Values parts;
  for (const torch::jit::Value* e : list->inputs()) {
    parts.push_back(unsqueeze(g, tensor_data(g, e, type), {0}));
  }
  return parts.size() == 1 ? parts[0] : g.op("Concat", parts, {{"axis", int64_t{0}}});
}

// A float or double type for the random generators (ONNX random ops produce only those).
at::ScalarType random_type(at::ScalarType type) {
  return type == at::kDouble ? at::kDouble : at::kFloat;
}

// Uniform [0, 1) or standard normal samples of `shape` (argument `size_i`, constant or computed).
Value random_of_size(GraphContext& g, const Args& a, size_t size_i, at::ScalarType type,
                     bool normal) {
  const at::ScalarType rt = random_type(type);
  Value r;
  if (a.is_constant(size_i)) {
    r = g.op(normal ? "RandomNormal" : "RandomUniform", {},
             {{"shape", a.int_list(size_i)}, {"dtype", onnx_dtype(rt)}});
  } else {
    Value like = constant_of_shape(g, shape_arg(g, a, size_i), 0, rt);
    r = g.op(normal ? "RandomNormalLike" : "RandomUniformLike", {like},
             {{"dtype", onnx_dtype(rt)}});
  }
  return rt == type ? r : g.cast(r, type);
}

Value random_like(GraphContext& g, const Value& like, at::ScalarType type, bool normal) {
  const at::ScalarType rt = random_type(type);
  Value r =
      g.op(normal ? "RandomNormalLike" : "RandomUniformLike", {like}, {{"dtype", onnx_dtype(rt)}});
  return rt == type ? r : g.cast(r, type);
}

// Integers uniform in [low, high) from `u`, uniform in [0, 1) in double:
// low + Min(Floor(u · (high - low)), high - low - 1), cast to `out`. Double keeps every integer of
// a range below 2^53 reachable; Min guards against u · n rounding up to n.
Value uniform_integers(GraphContext& g, const Value& u, const Value& low, const Value& high,
                       at::ScalarType out) {
  Value n = g.op("Sub", {high, low});
  Value k = g.op("Floor", {g.op("Mul", {u, n})});
  k = g.op("Min", {k, g.op("Sub", {n, g.constant_scalar(1, at::kDouble)})});
  return g.cast(g.op("Add", {k, low}), out);
}

// aten::randint / randint_like: the bounds `low` (0 when the overload has none) and `high`, in
// double; constant bounds are checked as PyTorch does.
std::pair<Value, Value> randint_bounds(GraphContext& g, const Args& a, std::optional<size_t> low_i,
                                       size_t high_i) {
  if (low_i && a.is_constant(*low_i) && a.is_constant(high_i) &&
      a.int_arg(*low_i) >= a.int_arg(high_i)) {
    g.fail("randint needs low < high, got [" + std::to_string(a.int_arg(*low_i)) + ", " +
           std::to_string(a.int_arg(high_i)) + ")");
  }
  if (!low_i && a.is_constant(high_i) && a.int_arg(high_i) <= 0) {
    g.fail("randint needs high > 0, got " + std::to_string(a.int_arg(high_i)));
  }
  Value low = low_i ? a.tensor_as(*low_i, at::kDouble) : g.constant_scalar(0, at::kDouble);
  return {low, a.tensor_as(high_i, at::kDouble)};
}

// aten::arange(Scalar end, *, dtype, ...) / arange.start(start, end, ...) /
// arange.start_step(start, end, step, ...)  ⇒  Range (11+); NonZero(ConstantOfShape) index
// vector · step + start below 11. Long for integral arguments, the default dtype otherwise.
// arange.out(Scalar end, *, Tensor(a!) out) / arange.start_out(start, end, step, *, out): the
// same in the out tensor's dtype, as the result. A trace reads the result where the model reads
// out afterwards (the tracer rebinds it); a scripted graph that reads out after the node would
// read the old tensor: refused.
Values arange_op(GraphContext& g, const Args& a, const FactoryArgs& f) {
  // end | start, end | start, end, step
  const size_t positional = f.positional;
  bool floating = false;
  for (size_t i = 0; i < positional; ++i) floating = floating || at::isFloatingType(a.dtype(i));
  at::ScalarType type = result_dtype(a, f, floating ? at::kFloat : at::kLong);
  if (f.out && a.dtype(*f.out) != at::ScalarType::Undefined) type = a.dtype(*f.out);
  if (positional == 1) return {arange_values(g, a, std::nullopt, 0, std::nullopt, type)};
  if (positional == 2) return {arange_values(g, a, 0, 1, std::nullopt, type)};
  return {arange_values(g, a, 0, 1, 2, type)};
}

// aten::_dim_arange(Tensor like, int dim)  ⇒  arange(like.size(dim)) (Long)
Values dim_arange(GraphContext& g, const Args& a) {
  int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
  Value n = g.op("Gather", {g.op("Shape", {a.tensor(0)}), g.constant_scalar(dim, at::kLong)},
                 {{"axis", int64_t{0}}});
  return {arange(g, n)};
}

// aten::zeros/ones/empty(int[] size, *, dtype, ...)  ⇒  ConstantOfShape (empty gives zeros)
FactoryConverter filled_with(int value) {
  return [value](GraphContext& g, const Args& a, const FactoryArgs& f) -> Values {
    return {constant_of_shape(g, shape_arg(g, a, 0), value, result_dtype(a, f, at::kFloat))};
  };
}

// aten::zeros_like/ones_like/empty_like(Tensor self, *, dtype, ...)  ⇒  ConstantOfShape(Shape)
FactoryConverter filled_like(int value) {
  return [value](GraphContext& g, const Args& a, const FactoryArgs& f) -> Values {
    Value shape = g.op("Shape", {a.tensor(0)});
    return {constant_of_shape(g, shape, value, result_dtype(a, f, a.dtype(0)))};
  };
}

// aten::new_zeros/new_ones/new_empty(Tensor self, int[] size, *, dtype, ...)  ⇒  ConstantOfShape
// (self's dtype by default)
FactoryConverter new_filled_with(int value) {
  return [value](GraphContext& g, const Args& a, const FactoryArgs& f) -> Values {
    return {constant_of_shape(g, shape_arg(g, a, 1), value, result_dtype(a, f, a.dtype(0)))};
  };
}

// aten::full(int[] size, Scalar fill_value, *, dtype, ...)  ⇒  ConstantOfShape / Expand
Values full(GraphContext& g, const Args& a, const FactoryArgs& f) {
  at::ScalarType fallback = at::isFloatingType(a.dtype(1)) ? at::kFloat : a.dtype(1);
  return {filled(g, a, shape_arg(g, a, 0), 1, result_dtype(a, f, fallback))};
}

// aten::full_like(Tensor self, Scalar fill_value, *, dtype, ...)  ⇒  ConstantOfShape / Expand
Values full_like(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return {filled(g, a, g.op("Shape", {a.tensor(0)}), 1, result_dtype(a, f, a.dtype(0)))};
}

// aten::new_full(Tensor self, int[] size, Scalar fill_value, *, dtype, ...)
Values new_full(GraphContext& g, const Args& a, const FactoryArgs& f) {
  return {filled(g, a, shape_arg(g, a, 1), 2, result_dtype(a, f, a.dtype(0)))};
}

// aten::fill.Scalar/.Tensor(Tensor self, Scalar|Tensor value) (and fill_)  ⇒  full_like(self)
Values fill(GraphContext& g, const Args& a) {
  return {filled(g, a, g.op("Shape", {a.tensor(0)}), 1, a.dtype(0))};
}

// aten::eye(int n[, int m], *, dtype, ...)  ⇒  EyeLike of an n×m ConstantOfShape
Values eye(GraphContext& g, const Args& a, const FactoryArgs& f) {
  at::ScalarType type = result_dtype(a, f, at::kFloat);
  const bool has_m = f.positional == 2;
  Value shape;
  if (a.is_constant(0) && (!has_m || a.is_constant(1))) {
    int64_t n = a.int_arg(0);
    shape = g.constant_ints({n, has_m ? a.int_arg(1) : n});
  } else {
    Value n = unsqueeze(g, a.tensor_as(0, at::kLong), {0});
    Value m = has_m ? unsqueeze(g, a.tensor_as(1, at::kLong), {0}) : n;
    shape = g.op("Concat", {n, m}, {{"axis", int64_t{0}}});
  }
  // ONNX Runtime's EyeLike makes float, double, int32 and int64.
  const bool native =
      type == at::kFloat || type == at::kDouble || type == at::kInt || type == at::kLong;
  const at::ScalarType eye_type = native ? type : at::kFloat;
  Value eye = g.op("EyeLike", {constant_of_shape(g, shape, 0, eye_type)},
                   {{"dtype", onnx_dtype(eye_type)}});
  return {native ? eye : g.cast(eye, type)};
}

// aten::linspace(Scalar start, Scalar end, int steps, *, dtype, ...)
//   ⇒  ATen's symmetric formula: start + step·i for i < steps/2, end - step·(steps-1-i) after,
//   in double (integral dtypes: bounds truncated first, result truncated), cast to dtype
Values linspace(GraphContext& g, const Args& a, const FactoryArgs& f) {
  at::ScalarType type = result_dtype(a, f, at::kFloat);
  const bool integral = at::isIntegralType(type, /*includeBool=*/true);
  auto bound = [&](size_t i) {
    return integral ? g.cast(a.tensor_as(i, type), at::kDouble) : a.tensor_as(i, at::kDouble);
  };
  if (a.is_constant(2)) {
    const int64_t steps = a.int_arg(2);
    if (steps < 0) g.fail("linspace with a negative number of steps");
    if (steps == 0) return {constant_of_shape(g, g.constant_ints({0}), 0, type)};
    Value start = bound(0);
    if (steps == 1) return {g.cast(g.op("Reshape", {start, g.constant_ints({1})}), type)};
    Value end = bound(1);
    Value step = g.op("Div", {g.op("Sub", {end, start}),
                              g.constant_scalar(static_cast<double>(steps - 1), at::kDouble)});
    at::Tensor idx = at::arange(steps, at::kDouble);
    Value low = g.op("Add", {start, g.op("Mul", {step, g.constant(idx)})});
    Value high = g.op("Sub", {end, g.op("Mul", {step, g.constant(idx.flip(0))})});
    Value values = g.op("Where", {g.constant(idx < steps / 2), low, high});
    return {g.cast(values, type)};
  }
  // A computed number of steps n: the same formula on arange(n), with the step's divisor
  // max(n - 1, 1) and the first element always from start (so that n = 1 gives [start]).
  Value n = a.tensor_as(2, at::kLong);
  Value start = bound(0), end = bound(1);
  Value idx = g.cast(arange(g, n), at::kDouble);
  Value nd = g.cast(n, at::kDouble);
  Value last = g.op("Sub", {nd, g.constant_scalar(1, at::kDouble)});
  Value one = g.constant_scalar(1, at::kDouble);
  Value divisor = g.op("Where", {g.op("Less", {last, one}), one, last});
  Value step = g.op("Div", {g.op("Sub", {end, start}), divisor});
  Value low = g.op("Add", {start, g.op("Mul", {step, idx})});
  Value high = g.op("Sub", {end, g.op("Mul", {step, g.op("Sub", {last, idx})})});
  Value half = g.cast(g.op("Div", {n, g.constant_scalar(2, at::kLong)}), at::kDouble);
  Value half_or_one = g.op("Where", {g.op("Less", {half, one}), one, half});
  Value values = g.op("Where", {g.op("Less", {idx, half_or_one}), low, high});
  return {g.cast(values, type)};
}

// aten::scalar_tensor(Scalar s, *, dtype, ...)  ⇒  the scalar as a 0-d tensor of dtype
Values scalar_tensor(GraphContext&, const Args& a, const FactoryArgs& f) {
  return {a.tensor_as(0, result_dtype(a, f, at::kFloat))};
}

// aten::tensor(t[] data | int | float | bool t, *, dtype, device, requires_grad) and
// aten::as_tensor.list / .int / .float / .bool  ⇒  a constant, or Concat of computed elements
Values tensor(GraphContext& g, const Args& a, const FactoryArgs& f) {
  at::ScalarType type = result_dtype(a, f, default_list_dtype(a.jit(0)->type()));
  if (!a.jit(0)->type()->cast<c10::ListType>()) return {a.tensor_as(0, type)};
  return {tensor_data(g, a.jit(0), type)};
}

// aten::as_tensor(Tensor data, *, dtype, device)  ⇒  data (Cast to dtype); the list and scalar
// overloads as aten::tensor
Values as_tensor(GraphContext& g, const Args& a, const FactoryArgs& f) {
  if (a.jit(0)->type()->cast<c10::TensorType>()) {
    if (a.is_none(*f.dtype)) return {a.tensor(0)};
    return {a.tensor_as(0, result_dtype(a, f, a.dtype(0)))};
  }
  return tensor(g, a, f);
}

// aten::one_hot(Tensor self, int num_classes=-1)  ⇒  OneHot(self, depth, [0, 1], axis=-1);
// num_classes=-1 takes depth = max(self) + 1 in the graph; a num_classes computed in the graph is
// the depth (as torch.onnx: its value must not be -1 at run time)
Values one_hot(GraphContext& g, const Args& a) {
  Value indices = a.tensor_as(0, at::kLong);
  Value depth;
  if (!a.is_constant(1)) {
    depth = a.tensor_as(1, at::kLong);
  } else if (const int64_t n = a.int_arg(1); n >= 0) {
    depth = g.constant_scalar(static_cast<double>(n), at::kLong);
  } else {
    depth =
        g.op("Add", {reduce(g, "ReduceMax", indices, {}, false), g.constant_scalar(1, at::kLong)});
  }
  // OneHot needs rank >= 1: a 0-d input is unsqueezed to [1] and the result squeezed back.
  const bool scalar = a.require_rank(0) == 0;
  if (scalar) indices = unsqueeze(g, indices, {0});
  Value y = g.op("OneHot", {indices, depth, g.constant_ints({0, 1})}, {{"axis", int64_t{-1}}});
  return {scalar ? squeeze(g, y, {0}) : y};
}

// aten::bucketize.Tensor/.Scalar(self, Tensor boundaries, *, bool out_int32, bool right)
//   ⇒  ReduceSum over the boundaries of Cast(boundary < x) (right: boundary <= x)
Values bucketize(GraphContext& g, const Args& a) {
  const bool out_int32 = a.bool_arg(2), right = a.bool_arg(3);
  at::ScalarType type = at::promote_types(a.dtype(0), a.dtype(1));
  if (type == at::kBool) type = at::kLong;
  // ONNX Runtime compares float, double, int32 and int64 (Less/Greater before opset 13 too).
  if (type != at::kFloat && type != at::kDouble && type != at::kInt && type != at::kLong) {
    type = at::isFloatingType(type) ? at::kFloat : at::kLong;
  }
  const int64_t rank = a.require_rank(0);
  Value x = unsqueeze(g, a.tensor_as(0, type), {rank});
  Value b = a.tensor_as(1, type);
  if (a.require_rank(1) != 1) g.fail("bucketize needs 1-D boundaries");
  // right: count boundaries <= x, i.e. not (x < boundary); left: count boundaries < x.
  Value below = right ? g.op("Not", {g.op("Less", {x, b})}) : g.op("Greater", {x, b});
  at::ScalarType out = out_int32 ? at::kInt : at::kLong;
  return {g.cast(reduce(g, "ReduceSum", g.cast(below, at::kLong), {rank}, false), out)};
}

// aten::item(Tensor self) -> Scalar  ⇒  the single element as a 0-d tensor (Reshape to []); a
// float/int/bool result type is given as double/int64/bool
Values item(GraphContext& g, const Args& a) {
  Value x = a.tensor(0);
  if (a.rank(0) != std::optional<int64_t>(0)) x = g.op("Reshape", {x, g.constant_ints({})});
  switch (a.node()->output()->type()->kind()) {
    case c10::TypeKind::IntType:
      return {a.dtype(0) == at::kLong ? x : g.cast(x, at::kLong)};
    case c10::TypeKind::FloatType:
      return {a.dtype(0) == at::kDouble ? x : g.cast(x, at::kDouble)};
    case c10::TypeKind::BoolType:
      return {a.dtype(0) == at::kBool ? x : g.cast(x, at::kBool)};
    default:
      return {x};
  }
}

// --- random ops: ONNX's generators take no seed state from PyTorch ---

// aten::rand/randn(int[] size, *, [generator], [names], dtype, ...)
//   ⇒  RandomUniform/RandomNormal (constant size); *Like of ConstantOfShape (computed size)
FactoryConverter random_tensor(bool normal) {
  return [normal](GraphContext& g, const Args& a, const FactoryArgs& f) -> Values {
    return {random_of_size(g, a, 0, result_dtype(a, f, at::kFloat), normal)};
  };
}

// aten::rand_like/randn_like(Tensor self, *, dtype, ...)  ⇒  RandomUniformLike/RandomNormalLike
FactoryConverter random_tensor_like(bool normal) {
  return [normal](GraphContext& g, const Args& a, const FactoryArgs& f) -> Values {
    return {random_like(g, a.tensor(0), result_dtype(a, f, a.dtype(0)), normal)};
  };
}

// aten::randint(int high, int[] size, *, [generator], ScalarType? dtype=long, ...) /
//   .low(int low, int high, int[] size, *, [generator], dtype, ...)
//   ⇒  Cast(low + Min(Floor(RandomUniform(double) · (high - low)), high - low - 1))
//      (RandomUniformLike of ConstantOfShape for a computed size)
Values randint(GraphContext& g, const Args& a, const FactoryArgs& f) {
  // (high, size) | (low, high, size)
  const bool has_low = f.positional == 3;
  const size_t high_i = has_low ? 1 : 0;
  auto [low, high] =
      randint_bounds(g, a, has_low ? std::optional<size_t>(0) : std::nullopt, high_i);
  Value u = random_of_size(g, a, high_i + 1, at::kDouble, /*normal=*/false);
  return {uniform_integers(g, u, low, high, result_dtype(a, f, at::kLong))};
}

// aten::randint_like(Tensor self, int high, *, dtype, ...) /
//   .low_dtype(Tensor self, int low, int high, *, dtype, ...)
//   ⇒  the same from RandomUniformLike(self) (self's dtype by default)
Values randint_like(GraphContext& g, const Args& a, const FactoryArgs& f) {
  // (self, high) | (self, low, high)
  const bool has_low = f.positional == 3;
  auto [low, high] =
      randint_bounds(g, a, has_low ? std::optional<size_t>(1) : std::nullopt, has_low ? 2 : 1);
  Value u = random_like(g, a.tensor(0), at::kDouble, /*normal=*/false);
  return {uniform_integers(g, u, low, high, result_dtype(a, f, a.dtype(0)))};
}

// aten::bernoulli(Tensor self) / .p(Tensor self, float p) / .Tensor(Tensor self, Tensor p)
//   ⇒  Cast(RandomUniformLike < p) at every opset: ONNX Runtime 1.30's Bernoulli-15 draws 1
//   with probability 1 - p (p = 0 gives all ones), the opposite of the spec and of PyTorch
Values bernoulli(GraphContext& g, const Args& a, const FactoryArgs& f) {
  const at::ScalarType out = result_dtype(a, f, a.dtype(0));
  const at::ScalarType ptype =
      random_type(at::isFloatingType(a.dtype(0)) ? a.dtype(0) : at::kFloat);
  Value p;
  const bool has_p = f.positional == 2;
  if (!has_p) {
    p = a.tensor_as(0, ptype);
  } else {
    p = g.op("Expand", {a.tensor_as(1, ptype), g.op("Shape", {a.tensor(0)})});
  }
  Value u = g.op("RandomUniformLike", {p}, {{"dtype", onnx_dtype(ptype)}});
  return {g.cast(g.op("Less", {u, p}), out)};
}

// aten::normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator) (the form
//   torch.nn.init.normal_ traces; RemoveInplaceOps finds no out-of-place twin with these
//   arguments, so aten::normal's unnamed converter gets it, as in-place forms get their
//   out-of-place converter)  ⇒  mean + std · RandomNormalLike(self) in self's dtype (only self's
//   shape and dtype count)
Values normal_like_self(GraphContext& g, const Args& a) {
  reject_generator(g, a);
  const at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) {
    g.fail(std::string("normal_ of a ") + c10::toString(type) +
           " tensor: PyTorch draws normal samples into floating tensors only");
  }
  Value eps = random_like(g, a.tensor(0), type, /*normal=*/true);
  return {g.op("Add", {a.tensor_as(1, type), g.op("Mul", {a.tensor_as(2, type), eps})})};
}

// aten::normal.Tensor_float / float_Tensor / Tensor_Tensor(mean, std)
// aten::normal.float_float(float mean, float std, int[] size, *, generator, dtype, ...)
//   ⇒  mean + std · RandomNormalLike (RandomNormal(mean, scale) for a constant size)
Values normal_op(GraphContext& g, const Args& a, const FactoryArgs& f) {
  const at::ScalarType type = result_dtype(a, f, at::kFloat);
  if (f.positional == 3) {  // (float mean, float std, int[] size)
    // (ONNX Runtime aborts on RandomNormal with scale 0: std 0 takes the general form.)
    if (a.is_constant(0) && a.is_constant(1) && a.is_constant(2) && a.float_arg(1) > 0) {
      const at::ScalarType rt = random_type(type);
      Value r = g.op("RandomNormal", {},
                     {{"shape", a.int_list(2)},
                      {"mean", a.float_arg(0)},
                      {"scale", a.float_arg(1)},
                      {"dtype", onnx_dtype(rt)}});
      return {rt == type ? r : g.cast(r, type)};
    }
    Value eps = random_of_size(g, a, 2, type, /*normal=*/true);
    return {g.op("Add", {a.tensor_as(0, type), g.op("Mul", {a.tensor_as(1, type), eps})})};
  }
  Value mean = a.tensor_as(0, type), std = a.tensor_as(1, type);
  const bool mean_t = a.jit(0)->type()->cast<c10::TensorType>() != nullptr;
  const bool std_t = a.jit(1)->type()->cast<c10::TensorType>() != nullptr;
  Value like = mean_t && std_t ? g.op("Add", {mean, std}) : (mean_t ? mean : std);
  Value eps = random_like(g, like, type, /*normal=*/true);
  return {g.op("Add", {mean, g.op("Mul", {std, eps})})};
}

// aten::multinomial(Tensor self, int num_samples, bool replacement=False, *, generator)
//   ⇒  Multinomial(Log(self)) with replacement (or one sample); without replacement the
//   Gumbel-top-k trick: TopK(Log(self) + Gumbel noise, k), which draws exactly as sequential
//   sampling without replacement does
Values multinomial(GraphContext& g, const Args& a) {
  reject_generator(g, a);
  const int64_t rank = a.require_rank(0);
  if (rank != 1 && rank != 2) g.fail("multinomial needs a 1-D or 2-D input");
  const int64_t k = a.int_arg(1);
  const bool replacement = a.bool_arg(2);
  Value logp = g.op("Log", {a.tensor_as(0, at::kFloat)});
  if (rank == 1) logp = unsqueeze(g, logp, {0});
  Value samples;
  if (replacement || k == 1) {
    samples = g.op("Multinomial", {logp}, {{"sample_size", k}, {"dtype", onnx_dtype(at::kLong)}});
  } else {
    Value u = g.op("RandomUniformLike", {logp}, {{"dtype", onnx_dtype(at::kFloat)}});
    Value gumbel = g.op("Neg", {g.op("Log", {g.op("Neg", {g.op("Log", {u})})})});
    Value scores = g.op("Add", {logp, gumbel});
    samples = topk_in(g, scores, topk_k(g, k), k, 1, /*largest=*/true)[1];
  }
  return {rank == 1 ? squeeze(g, samples, {0}) : samples};
}
}  // namespace

void register_creation(Registry& r) {
  // Every overload with its positional count and keyword tail (Note [Factory overloads] in
  // symbolic/factory.h): "" is the unnamed overload.
  constexpr unsigned kOutMf = kOut | kMemoryFormat;  // memory_format, out
  const std::initializer_list<FactoryOverload> sized = {{"", 1, kDtype},
                                                        {"names", 1, kNames | kDtype},
                                                        {"out", 1, kOut},
                                                        {"names_out", 1, kNames | kOut}};
  const std::initializer_list<FactoryOverload> like = {{"", 1, kDtype}, {"out", 1, kOutMf}};
  const std::initializer_list<FactoryOverload> new_sized = {{"", 2, kDtype}, {"out", 2, kOut}};
  add_factory(r, "aten::arange", from(9),
              {{"", 1, kDtype},
               {"start", 2, kDtype},
               {"start_step", 3, kDtype},
               {"out", 1, kOut},
               {"start_out", 3, kOut}},
              arange_op);
  r.add("aten::_dim_arange", from(9), dim_arange);
  add_factory(r, "aten::zeros", from(9), sized, filled_with(0));
  add_factory(r, "aten::ones", from(9), sized, filled_with(1));
  add_factory(r, "aten::empty", from(9),
              {{"memory_format", 1, kDtype},
               {"names", 1, kNames | kDtype},
               {"out", 1, kOutMf},
               {"names_out", 1, kNames | kOutMf}},
              filled_with(0));
  add_factory(r, "aten::full", from(9),
              {{"", 2, kDtype},
               {"names", 2, kNames | kDtype},
               {"out", 2, kOut},
               {"names_out", 2, kNames | kOut}},
              full);
  add_factory(r, "aten::zeros_like", from(9), like, filled_like(0));
  add_factory(r, "aten::ones_like", from(9), like, filled_like(1));
  add_factory(r, "aten::empty_like", from(9), like, filled_like(0));
  add_factory(r, "aten::full_like", from(9), {{"", 2, kDtype}, {"out", 2, kOutMf}}, full_like);
  add_factory(r, "aten::new_zeros", from(9), new_sized, new_filled_with(0));
  add_factory(r, "aten::new_ones", from(9), new_sized, new_filled_with(1));
  add_factory(r, "aten::new_empty", from(9), new_sized, new_filled_with(0));
  add_factory(r, "aten::new_full", from(9), {{"", 3, kDtype}, {"out", 3, kOut}}, new_full);
  r.add("aten::fill", from(9), fill);
  add_factory(r, "aten::eye", from(9),
              {{"", 1, kDtype}, {"m", 2, kDtype}, {"out", 1, kOut}, {"m_out", 2, kOut}}, eye);
  // (libtorch 2.6 adds the overloads of tensor bounds)
  add_factory(r, "aten::linspace", from(9),
              {{"", 3, kDtype},
               {"Scalar_Tensor", 3, kDtype},
               {"Tensor_Scalar", 3, kDtype},
               {"Tensor_Tensor", 3, kDtype},
               {"out", 3, kOut},
               {"Scalar_Tensor_out", 3, kOut},
               {"Tensor_Scalar_out", 3, kOut},
               {"Tensor_Tensor_out", 3, kOut}},
              linspace);
  add_factory(r, "aten::scalar_tensor", from(9), {{"", 1, kDtype}, {"out", 1, kOut}},
              scalar_tensor);
  add_factory(r, "aten::tensor", from(9),
              {{"", 1, kDtype}, {"float", 1, kDtype}, {"int", 1, kDtype}, {"bool", 1, kDtype}},
              tensor);
  add_factory(r, "aten::as_tensor", from(9),
              {{"", 1, kDtype},
               {"list", 1, kDtype},
               {"float", 1, kDtype},
               {"int", 1, kDtype},
               {"bool", 1, kDtype}},
              as_tensor);
  r.add("aten::one_hot", from(9), one_hot);
  r.add("aten::bucketize", from(9), bucketize);
  r.add("aten::item", from(9), item);
  // (No .names / .names_out: a node of them, names=None, is one of .generator / .generator_out,
  // generator=None; libtorch resolves a None argument fitting both to the generator overload.)
  const std::initializer_list<FactoryOverload> random_sized = {
      {"", 1, kDtype},
      {"generator", 1, kGenerator | kDtype},
      {"generator_with_names", 1, kGenerator | kNames | kDtype},
      {"out", 1, kOut},
      {"generator_out", 1, kGenerator | kOut},
      {"generator_with_names_out", 1, kGenerator | kNames | kOut}};
  add_factory(r, "aten::rand", from(9), random_sized, random_tensor(/*normal=*/false));
  add_factory(r, "aten::randn", from(9), random_sized, random_tensor(/*normal=*/true));
  add_factory(r, "aten::rand_like", from(9), like, random_tensor_like(/*normal=*/false));
  add_factory(r, "aten::randn_like", from(9), like, random_tensor_like(/*normal=*/true));
  add_factory(r, "aten::randint", from(9),
              {{"", 2, kDtype},
               {"generator", 2, kGenerator | kDtype},
               {"low", 3, kDtype},
               {"low_generator", 3, kGenerator | kDtype},
               {"out", 2, kOut},
               {"generator_out", 2, kGenerator | kOut},
               {"low_out", 3, kOut},
               {"low_generator_out", 3, kGenerator | kOut}},
              randint);
  add_factory(
      r, "aten::randint_like", from(9),
      {{"", 2, kDtype}, {"low_dtype", 3, kDtype}, {"out", 2, kOutMf}, {"low_dtype_out", 3, kOutMf}},
      randint_like);
  // bernoulli_.float (an in-place overload with no out-of-place twin of its name) as .p.
  add_factory(r, "aten::bernoulli", from(9),
              {{"", 1, kGenerator},
               {"p", 2, kGenerator},
               {"float", 2, kGenerator},
               {"Tensor", 2, kGenerator},
               {"out", 1, kGenerator | kOut},
               {"Tensor_out", 2, kGenerator | kOut},
               {"float_out", 2, kGenerator | kOut}},
              bernoulli);
  r.add_unnamed("aten::normal", from(9), normal_like_self);  // normal_ (see there)
  add_factory(r, "aten::normal", from(9),
              {{"Tensor_float", 2, kGenerator},
               {"float_Tensor", 2, kGenerator},
               {"Tensor_Tensor", 2, kGenerator},
               {"float_float", 3, kGenerator | kDtype},
               {"Tensor_float_out", 2, kGenerator | kOut},
               {"float_Tensor_out", 2, kGenerator | kOut},
               {"Tensor_Tensor_out", 2, kGenerator | kOut},
               {"float_float_out", 3, kGenerator | kOut}},
              normal_op);
  r.add("aten::multinomial", from(9), multinomial);
}

}  // namespace torchonnx::symbolic::ops
