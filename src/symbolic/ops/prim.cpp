// prim:: plumbing and the scalar/shape ops of traced graphs (x.size(0), int(...), lists).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <fmt/format.h>

#include <algorithm>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// An int[]/float[]/bool[] list is one 1-D tensor (Shape, Concat of its elements); element `i`
// of it is Gather(list, i), a 0-d tensor (negative indices counted from Size(list) before opset
// 11, whose Gather takes none).
Value list_element(GraphContext& g, const Value& list, int64_t i) {
  Value index = g.constant(at::scalar_tensor(i, at::kLong));
  if (i < 0 && !g.has(OnnxFeature::kGatherNegativeIndices))
    index = g.op("Add", {g.op("Size", {list}), index});
  return g.op("Gather", {list, index}, {{"axis", 0}});
}

bool is_optional_tensor_list(const torch::jit::Value* v) {
  auto list = v->type()->cast<c10::ListType>();
  if (!list) return false;
  auto optional = list->getElementType()->cast<c10::OptionalType>();
  return optional && optional->getElementType()->kind() == c10::TypeKind::TensorType;
}

// The element dtype of a scalar list (int[] → Long, float[] → Double, bool[] → Bool).
at::ScalarType list_dtype(const torch::jit::Value* list) {
  auto type = list->type()->cast<c10::ListType>();
  at::ScalarType dtype = type ? dtype_of(type->getElementType()) : at::ScalarType::Undefined;
  return dtype == at::ScalarType::Undefined ? at::kLong : dtype;
}

// A list index made non-negative and checked against the list's (static) length.
size_t list_index(GraphContext& g, int64_t i, size_t size, bool allow_end = false) {
  const int64_t n = static_cast<int64_t>(size);
  if (i < 0) i += n;
  if (i < 0 || i > n || (i == n && !allow_end)) {
    g.fail(fmt::format("list index {} is out of range for a list of {} elements", i, size));
  }
  return static_cast<size_t>(i);
}

// Lists are static in straight-line code: a mutation rebinds the list's TorchScript value to its
// new elements, so every later use sees them (Note [Mutated lists] in propagate_types.cpp).
// A scalar list is one 1-D tensor; its mutations are done on that tensor.
Values mutable_tensor_list(GraphContext& g, const Args& a) {
  if (!is_tensor_list(a.jit(0))) {
    g.fail(
        "mutating a list of scalars in place is not supported; build the list with its final "
        "elements (or use a tensor and torch.cat)");
  }
  return a.tensor_list(0);
}

// The element dtype of the sequence a Tensor[] argument is (Float when nothing tells).
at::ScalarType sequence_dtype(const torch::jit::Value* list) {
  at::ScalarType type = value_type(list).dtype;
  return type == at::ScalarType::Undefined ? at::kFloat : type;
}

// Element `el` of the node, in the dtype of the sequence `list`.
Value sequence_element(GraphContext& g, const Args& a, size_t el, const torch::jit::Value* list) {
  at::ScalarType type = sequence_dtype(list);
  return a.dtype(el) == type ? a.tensor(el) : a.tensor_as(el, type);
}

// A list index i (int) made non-negative against the sequence's length, for SequenceInsert.
Value sequence_position(GraphContext& g, const Value& seq, const Value& i) {
  Value zero = g.constant(at::scalar_tensor(int64_t{0}, at::kLong));
  Value wrapped = g.op("Add", {i, g.op("SequenceLength", {seq})});
  return g.op("Where", {g.op("Less", {i, zero}), wrapped, i});
}

// Binds the mutated list argument and the node's list output (if any) to `seq`.
Values rebind_sequence(GraphContext& g, const Args& a, const Value& seq) {
  g.bind_sequence(a.jit(0), seq);
  for (const auto* out : a.node()->outputs()) {
    if (is_tensor_list(out)) g.bind_sequence(out, seq);
  }
  return {seq};
}

Values elements(GraphContext& g, const Args& a) {
  Values out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(a.tensor(i));
  return out;
}

// ----- lists and tuples ------------------------------------------------------------------------

// A list of lists of tensors that LowerNestedLists left (Note [Lists of lists]): refused by
// name.
void refuse_list_of_lists(GraphContext& g, const torch::jit::Value* list) {
  // Lists of lists of numbers (torch.tensor([[1.0, 2.0], [3.0, 4.0]])) have converters of
  // their own.
  auto type = list->type()->cast<c10::ListType>();
  auto inner = type ? type->getElementType()->cast<c10::ListType>() : nullptr;
  if (!inner || inner->getElementType()->kind() != c10::TypeKind::TensorType) return;
  g.fail(fmt::format(
      "%{} is a list of lists ({}) that a loop carries, an if returns, or that is read at a "
      "position computed at run time: ONNX has no sequence of sequences, and only a list of lists "
      "built and read in straight-line code (its contents known at export) is exported. Remedy: "
      "build it outside loops and branches (a loop over a ModuleList or a constant range is "
      "unrolled), read it at constant positions, or keep its inner lists as separate lists",
      list->debugName(), type->annotation_str()));
}

// prim::ListConstruct(...) -> T[]  ⇒  its elements (Tensor[]), or Concat of 1-D ints (int[])
Values list_construct(GraphContext& g, const Args& a) {
  refuse_list_of_lists(g, a.node()->output());
  if (is_tensor_list(a.node()->output())) return elements(g, a);
  if (is_optional_tensor_list(a.node()->output())) {
    // Tensor?[] (the indices of x[:, idx]): None elements are "", ONNX's absent value; the
    // consumers (index, index_put) read which entries are None.
    Values items;
    for (size_t i = 0; i < a.size(); ++i) items.push_back(a.is_none(i) ? "" : a.tensor(i));
    return items;
  }
  Values parts;
  for (size_t i = 0; i < a.size(); ++i) {
    parts.push_back(unsqueeze(g, a.tensor_as(i, list_dtype(a.node()->output())), {0}));
  }
  if (parts.empty()) {
    return {g.constant(at::empty({0}, at::TensorOptions().dtype(list_dtype(a.node()->output()))))};
  }
  if (parts.size() == 1) return {parts[0]};
  return {g.op("Concat", parts, {{"axis", 0}})};
}

// prim::ListUnpack(T[] l) -> (T, ...)  ⇒  the list's element values (Gather of each element of
// a scalar list, SequenceAt of a sequence)
Values list_unpack(GraphContext& g, const Args& a) {
  if (a.is_sequence(0)) {
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    Values items;
    for (size_t i = 0; i < a.node()->outputs().size(); ++i) {
      items.push_back(g.op(
          "SequenceAt", {seq, g.constant(at::scalar_tensor(static_cast<int64_t>(i), at::kLong))}));
    }
    return items;
  }
  if (!is_tensor_list(a.jit(0))) {
    Value list = a.tensor(0);
    Values items;
    for (size_t i = 0; i < a.node()->outputs().size(); ++i) {
      items.push_back(list_element(g, list, static_cast<int64_t>(i)));
    }
    return items;
  }
  Values items = a.tensor_list(0);
  if (items.size() != a.node()->outputs().size()) {
    g.fail("the list has " + std::to_string(items.size()) + " elements but is unpacked into " +
           std::to_string(a.node()->outputs().size()));
  }
  return items;
}

// prim::TupleUnpack(Any tup) -> (...)  ⇒  the tuple's element values
Values tuple_unpack(GraphContext&, const Args& a) {
  return a.tensor_list(0);
}

// ----- scalars ---------------------------------------------------------------------------------

// prim::NumToTensor(Scalar) -> Tensor / aten::ScalarImplicit(Tensor) -> Scalar  ⇒  the value
// itself (scalars are 0-d tensors already)
Values same_value(GraphContext&, const Args& a) {
  return {a.tensor(0)};
}

// aten::Int/Float/Bool(Tensor) and their implicit forms  ⇒  Cast to Long/Double/Bool. Int, Float
// and Bool take any tensor of one element (int(torch.tensor([2])); torch.zeros(x, 1) for
// x = tensor([2]) traces aten::Int of x), and a number is 0-d here: a tensor not known to be 0-d
// is reshaped to [] (else a list of such numbers would Concat rank-2 parts).
Converter cast_to(at::ScalarType type) {
  return [type](GraphContext& g, const Args& a) -> Values {
    Value v = a.tensor_as(0, type);
    if (a.jit(0)->type()->kind() != c10::TypeKind::TensorType || a.rank(0) == 0) return {v};
    return {g.op("Reshape", {v, g.constant_ints({})})};
  };
}

// aten::size.int(Tensor self, int dim) -> int  ⇒  Gather(Shape(self), dim)
Values size_dim(GraphContext& g, const Args& a) {
  Value shape = g.op("Shape", {a.tensor(0)});
  int64_t dim = a.int_arg(1);
  if (dim < 0) dim += a.require_rank(0);
  return {g.op("Gather", {shape, g.constant(at::scalar_tensor(dim, at::kLong))}, {{"axis", 0}})};
}

// aten::size(Tensor self) -> int[]  ⇒  Shape
Values size(GraphContext& g, const Args& a) {
  return {g.op("Shape", {a.tensor(0)})};
}

// aten::dim(Tensor self) -> int  ⇒  a constant
Values dim(GraphContext& g, const Args& a) {
  return {g.constant(at::scalar_tensor(a.require_rank(0), at::kLong))};
}

// aten::numel(Tensor self) -> int  ⇒  ReduceProd(Shape(self))
Values numel(GraphContext& g, const Args& a) {
  return {reduce(g, "ReduceProd", g.op("Shape", {a.tensor(0)}), {}, false)};
}

// aten::__getitem__.t(t[] list, int idx) -> t  ⇒  the element (constant index); Gather for a
// scalar list; SequenceAt for a sequence or an index known at run time only
Values getitem(GraphContext& g, const Args& a) {
  if (!is_tensor_list(a.jit(0))) {
    if (!a.is_constant(1)) {  // an index computed at run time (a loop's i)
      Value list = a.tensor(0);
      Value i = a.tensor_as(1, at::kLong);
      if (!g.has(OnnxFeature::kGatherNegativeIndices))
        i = g.op("Where", {g.op("Less", {i, g.constant_scalar(0, at::kLong)}),
                           g.op("Add", {i, g.op("Size", {list})}), i});
      return {g.op("Gather", {list, i}, {{"axis", 0}})};
    }
    return {list_element(g, a.tensor(0), a.int_arg(1))};
  }
  if (a.is_sequence(0) || !a.is_constant(1)) {
    // A list of run-time length, or an index known at run time only: SequenceAt.
    return {
        g.op("SequenceAt", {a.sequence(0, sequence_dtype(a.jit(0))), a.tensor_as(1, at::kLong)})};
  }
  Values items = a.tensor_list(0);
  int64_t i = a.int_arg(1);
  if (i < 0) i += static_cast<int64_t>(items.size());
  if (i < 0 || i >= static_cast<int64_t>(items.size())) g.fail("list index out of range");
  return {items[i]};
}

// aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]  ⇒  the elements
// picked (a list of tensors, `children[1:]`), or Slice of the 1-D tensor a scalar list is
Values list_slice(GraphContext& g, const Args& a) {
  const bool computed = !a.is_constant(1) || !a.is_constant(2) || !a.is_constant(3);
  if (computed && !is_tensor_list(a.jit(0)) && a.is_constant(3) &&
      g.has(OnnxFeature::kSliceInputs)) {
    // A scalar list (`x.shape[1 : x.size(2)]` with dynamic axes) is a 1-D tensor: Slice with
    // the bounds as inputs, which clamps as Python's slice does; a None bound is the end.
    const int64_t step = a.int_arg(3);
    if (step == 0) g.fail("slice step cannot be zero");
    auto bound = [&](size_t i, int64_t none) {
      if (a.is_none(i)) return g.constant(at::tensor({none}, at::kLong));
      return unsqueeze(g, a.tensor_as(i, at::kLong), {0});
    };
    return {g.op("Slice", {a.tensor(0), bound(1, step > 0 ? 0 : INT64_MAX),
                           bound(2, step > 0 ? INT64_MAX : INT64_MIN),
                           g.constant(at::tensor({int64_t{0}}, at::kLong)),
                           g.constant(at::tensor({step}, at::kLong))})};
  }
  if (computed) {
    g.fail(
        "slicing a list with bounds computed in the graph is not supported; slice with "
        "constant bounds");
  }
  const int64_t step = a.int_arg(3);
  if (step == 0) g.fail("slice step cannot be zero");
  if (!is_tensor_list(a.jit(0))) {
    const int64_t start = a.optional_int(1).value_or(step > 0 ? 0 : -1);
    const int64_t end = a.optional_int(2).value_or(step > 0 ? INT64_MAX : INT64_MIN);
    return {slice(g, a.tensor(0), {0}, {start}, {end}, {step})};
  }
  if (a.is_sequence(0)) {
    g.fail(
        "slicing a list of run-time length is not supported; slice the tensors before "
        "they enter the list, or give the loop a constant trip count");
  }
  Values items = a.tensor_list(0);
  const int64_t n = static_cast<int64_t>(items.size());
  // Python's slice.indices(n).
  auto clamp = [&](std::optional<int64_t> v, int64_t none) {
    if (!v) return none;
    int64_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t start = clamp(a.optional_int(1), step > 0 ? 0 : n - 1);
  const int64_t end = clamp(a.optional_int(2), step > 0 ? n : -1);
  Values out;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.push_back(items[i]);
  return out;
}

// aten::add.t(t[] a, t[] b) -> t[] (and add_.t)  ⇒  the elements of both (lists of tensors: `[q] +
// kv.chunk(2)` in nn.MultiheadAttention's cross-attention), Concat of the 1-D tensors of two scalar
// lists
Values list_concat(GraphContext& g, const Args& a) {
  if (!is_tensor_list(a.jit(0))) {
    const at::ScalarType type = list_dtype(a.node()->output());
    return {g.op("Concat", {a.tensor_as(0, type), a.tensor_as(1, type)}, {{"axis", 0}})};
  }
  if (a.is_sequence(0) && a.is_sequence(1)) {
    g.fail(
        "concatenating two lists whose lengths are both known only at run time is not supported. "
        "Remedy: append the elements of one to the other in a loop");
  }
  if (a.is_sequence(0) || a.is_sequence(1)) {
    // A list of run-time length and one of known length (`res += [x]`, `res = [x] + res` in a
    // loop): the known elements inserted at the end or the front of the sequence. In place
    // (aten::add_), the left list is the result too.
    const at::ScalarType dtype = sequence_dtype(a.node()->output());
    Value seq;
    if (a.is_sequence(0)) {
      seq = a.sequence(0, dtype);
      for (const Value& v : a.tensor_list_as(1, dtype)) seq = g.op("SequenceInsert", {seq, v});
    } else {
      seq = a.sequence(1, dtype);
      const Values front = a.tensor_list_as(0, dtype);
      for (size_t j = 0; j < front.size(); ++j) {
        Value pos = g.constant(at::scalar_tensor(static_cast<int64_t>(j), at::kLong));
        seq = g.op("SequenceInsert", {seq, front[j], pos});
      }
    }
    if (a.node()->kind() == c10::Symbol::fromQualString("aten::add_")) {
      return rebind_sequence(g, a, seq);
    }
    g.bind_sequence(a.node()->output(), seq);
    return {seq};
  }
  Values items = a.tensor_list(0);
  Values more = a.tensor_list(1);
  items.insert(items.end(), more.begin(), more.end());
  return items;
}

// prim::Constant of a Tensor  ⇒  Constant (scalar, list and None constants are made by their
// consumers in the types these need; see convert_graph)
Values constant(GraphContext& g, const Args& a) {
  return {g.constant(torch::jit::toIValue(a.node()->output())->toTensor())};
}

// prim::unchecked_cast(t x) -> t / prim::data(Tensor a) -> Tensor  ⇒  the value itself
Values passthrough(GraphContext& g, const Args& a) {
  // The refinement of an optional (Note [Optional values] in control.cpp): its element.
  if (g.is_optional(a.jit(0))) return {a.tensor(0)};
  if (const Values* bound = g.lookup(a.jit(0))) return *bound;
  return {a.tensor(0)};
}

// prim::dtype(Tensor a) -> int  ⇒  the ScalarType code, a constant (dtypes are static)
Values dtype(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (type == at::ScalarType::Undefined) g.fail("the tensor's dtype is unknown");
  return {g.constant(at::scalar_tensor(static_cast<int64_t>(type), at::kLong))};
}

// prim::layout(Tensor a) -> Layout  ⇒  the constant torch.strided (0)
Values layout(GraphContext& g, const Args&) {
  return {g.constant(at::scalar_tensor(static_cast<int64_t>(at::kStrided), at::kLong))};
}

// prim::device(Tensor a) -> Device  ⇒  a constant 0 (DeviceType CPU): ONNX has no devices, and
// the ops taking a device (to, zeros, ...) ignore it.
Values device(GraphContext& g, const Args&) {
  return {g.constant(at::scalar_tensor(static_cast<int64_t>(c10::kCPU), at::kLong))};
}

// aten::is_grad_enabled() / is_autocast_enabled() / is_autocast_cpu_enabled() -> bool,
// prim::requires_grad(Tensor a) / prim::is_nested(Tensor a) -> bool  ⇒  the constant False;
// aten::_nested_tensor_from_mask_left_aligned(Tensor t, Tensor m) -> bool  ⇒  the constant True
// (Note [Facts known at export] in passes/type_propagation/meta_eval.cpp)
Converter known_at_export(bool value) {
  return [value](GraphContext& g, const Args&) -> Values {
    return {g.constant(at::scalar_tensor(value, at::kBool))};
  };
}

// aten::is_pinned(Tensor self, Device? device) -> bool  ⇒  the constant False
Values is_pinned(GraphContext& g, const Args&) {
  return {g.constant(at::scalar_tensor(false, at::kBool))};
}

// prim::max/min.self_int/self_float/self_bool(t[] l) -> t  ⇒  ReduceMax/ReduceMin of the 1-D
// list (in double)
Converter list_extreme(const char* reduction) {
  return [reduction](GraphContext& g, const Args& a) -> Values {
    if (is_tensor_list(a.jit(0))) g.fail("max/min of a list of tensors is not a scalar op");
    at::ScalarType out = a.output_dtype();
    return {g.cast(reduce(g, reduction, a.tensor_as(0, at::kDouble), {}, false), out)};
  };
}

// prim::max/min(a, b) -> scalar  ⇒  Max/Min (in double before opset 12, whose Max takes floats
// only)
Converter scalar_extreme(const char* binary) {
  return [binary](GraphContext& g, const Args& a) -> Values {
    at::ScalarType out = a.output_dtype();
    at::ScalarType work = g.has(OnnxFeature::kMaxMinIntegers) ? out : at::kDouble;
    Value r = g.op(binary, {a.tensor_as(0, work), a.tensor_as(1, work)});
    return {work == out ? r : g.cast(r, out)};
  };
}

// prim::tolist(Tensor a, int dim, int elem_type) -> list  ⇒  the tensor itself in the list's
// element type (a scalar list is a 1-D tensor here; a 0-d tensor is a scalar)
Values tolist(GraphContext& g, const Args& a) {
  const int64_t dim = a.int_arg(1);
  if (dim > 1) g.fail("tolist() of a tensor with more than one dimension is not supported");
  at::ScalarType type = dim == 0 ? a.output_dtype() : list_dtype(a.node()->output());
  if (type == at::ScalarType::Undefined) type = a.dtype(0);
  return {a.tensor_as(0, type)};
}

// aten::__is__ / __isnot__(t1 self, t2 obj) -> bool  ⇒  a constant, decided from the types
// (after inlining, `x is None` only survives on Optional values); for an optional that is None
// or not at run time (Note [Optional values] in control.cpp), OptionalHasElement (its Not for
// `is None`)
Converter identity_test(bool negate) {
  return [negate](GraphContext& g, const Args& a) -> Values {
    auto is_none_type = [](const torch::jit::Value* v) {
      return v->type()->kind() == c10::TypeKind::NoneType;
    };
    for (size_t i : {0, 1}) {
      if (g.is_optional(a.jit(i)) && is_none_type(a.jit(1 - i))) {
        Value has = g.op("OptionalHasElement", {g.lookup(a.jit(i))->front()});
        return {negate ? has : g.op("Not", {has})};
      }
    }
    bool result;
    if (is_none_type(a.jit(0)) && is_none_type(a.jit(1))) {
      result = true;
    } else if ((is_none_type(a.jit(0)) && never_none(a.jit(1))) ||
               (is_none_type(a.jit(1)) && never_none(a.jit(0)))) {
      result = false;
    } else if (never_none(a.jit(0)) && never_none(a.jit(1))) {
      result = same_object(a.jit(0), a.jit(1));  // Note [Identity at export]
    } else {
      g.fail(
          "`is` / `is not` between a value that may be None and another value can only be "
          "decided at export time against None; compare the values instead");
    }
    return {g.constant(at::scalar_tensor(result != negate, at::kBool))};
  };
}

// aten::__contains__.int_list(int[] l, int item) / .float_list / .str_list(str[] l, str item)
//   -> bool  ⇒  a constant when list and item are constants (torch.onnx's only case); for a
//   list of numbers and an item computed in the graph, Equal with every element, then Max
Values contains(GraphContext& g, const Args& a) {
  auto list = constant_value(a.jit(0));
  auto item = constant_value(a.jit(1));
  if (list && item && list->isList()) {
    bool found = false;
    for (const c10::IValue& e : list->toListRef()) {
      if (e.isString() && item->isString()) {
        found = found || e.toStringRef() == item->toStringRef();
      } else if ((e.isInt() || e.isDouble() || e.isBool()) &&
                 (item->isInt() || item->isDouble() || item->isBool())) {
        found = found || e.toScalar().to<double>() == item->toScalar().to<double>();
      }
    }
    return {g.constant(at::scalar_tensor(found, at::kBool))};
  }
  const at::ScalarType type = a.dtype(1);
  if (type != at::kLong && type != at::kDouble && type != at::kBool) {
    g.fail("`in` of a value computed at run time is exported for lists of numbers only");
  }
  const auto length = list_length(a, 0);
  if (!length || a.is_sequence(0)) {
    g.fail("`in` needs a list of static length (a list literal) when the item is computed");
  }
  if (*length == 0) return {g.constant(at::scalar_tensor(false, at::kBool))};
  if (type == at::kDouble)
    g.require_opset(11, "`in` on floats computed at run time", "Equal of floats");
  Value eq = g.op("Equal", {a.tensor_as(0, type), a.tensor_as(1, type)});
  Value any = reduce(g, "ReduceMax", g.cast(eq, at::kFloat), {0}, false);
  return {g.cast(any, at::kBool)};
}

// aten::__not__(bool self) -> bool  ⇒  Not
Values not_(GraphContext& g, const Args& a) {
  return {g.op("Not", {a.tensor_as(0, at::kBool)})};
}

// aten::__range_length(int lo, int hi, int step) -> int  ⇒  max(0, ceil((hi - lo) / step))
Values range_length(GraphContext& g, const Args& a) {
  Value lo = a.tensor_as(0, at::kDouble), hi = a.tensor_as(1, at::kDouble);
  Value n = g.op("Ceil", {g.op("Div", {g.op("Sub", {hi, lo}), a.tensor_as(2, at::kDouble)})});
  n = g.op("Max", {n, g.constant_scalar(0.0, at::kDouble)});
  return {g.cast(n, at::kLong)};
}

// aten::__derive_index(int index, int start, int step) -> int  ⇒  start + index * step
Values derive_index(GraphContext& g, const Args& a) {
  Value step = g.op("Mul", {a.tensor_as(0, at::kLong), a.tensor_as(2, at::kLong)});
  return {g.op("Add", {a.tensor_as(1, at::kLong), step})};
}

// aten::len.Tensor(Tensor t) -> int  ⇒  Shape(t)[0]
Values len_tensor(GraphContext& g, const Args& a) {
  Value shape = g.op("Shape", {a.tensor(0)});
  return {
      g.op("Gather", {shape, g.constant(at::scalar_tensor(int64_t{0}, at::kLong))}, {{"axis", 0}})};
}

// aten::len.t(t[] a) -> int  ⇒  a constant for a tensor list, SequenceLength of a sequence, Size
// of a scalar list
Values len(GraphContext& g, const Args& a) {
  if (a.is_sequence(0)) return {g.op("SequenceLength", {a.sequence(0, at::kFloat)})};
  if (is_tensor_list(a.jit(0))) {
    return {
        g.constant(at::scalar_tensor(static_cast<int64_t>(a.tensor_list(0).size()), at::kLong))};
  }
  if (!a.jit(0)->type()->cast<c10::ListType>()) {
    g.fail(fmt::format("len() of a {} is not supported", a.jit(0)->type()->str()));
  }
  return {g.op("Size", {a.tensor(0)})};
}

// ----- list edits ------------------------------------------------------------------------------

// aten::list(t[] l) -> t[]  ⇒  a copy: the same elements, bound to a new list
Values list(GraphContext& g, const Args& a) {
  if (a.is_sequence(0)) {
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    g.bind_sequence(a.node()->output(), seq);
    return {seq};
  }
  if (is_tensor_list(a.jit(0))) return a.tensor_list(0);
  return {a.tensor(0)};
}

// aten::append(t[] self, t el) -> t[]  ⇒  the list with el at the end (Concat for scalar lists,
// SequenceInsert for sequences)
Values append(GraphContext& g, const Args& a) {
  refuse_list_of_lists(g, a.jit(0));
  if (!is_tensor_list(a.jit(0))) {
    at::ScalarType type = list_dtype(a.jit(0));
    Value list = g.op("Concat", {a.tensor_as(0, type), unsqueeze(g, a.tensor_as(1, type), {0})},
                      {{"axis", 0}});
    g.bind(a.jit(0), {list});
    return {list};
  }
  if (a.is_sequence(0)) {
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    return rebind_sequence(g, a,
                           g.op("SequenceInsert", {seq, sequence_element(g, a, 1, a.jit(0))}));
  }
  Values items = a.tensor_list(0);
  items.push_back(a.tensor(1));
  g.bind(a.jit(0), items);
  return items;
}

// aten::insert(t[] self, int idx, t el) -> ()  ⇒  the list with el before idx
Values insert(GraphContext& g, const Args& a) {
  if (a.is_sequence(0)) {
    // Python clamps the index to the list; ONNX wants it in [-n, n].
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    Value n = g.op("SequenceLength", {seq});
    Value i = sequence_position(g, seq, a.tensor_as(1, at::kLong));
    Value zero = g.constant(at::scalar_tensor(int64_t{0}, at::kLong));
    i = g.op("Where", {g.op("Less", {i, zero}), zero, i});
    i = g.op("Where", {g.op("Greater", {i, n}), n, i});
    rebind_sequence(g, a, g.op("SequenceInsert", {seq, sequence_element(g, a, 2, a.jit(0)), i}));
    return {};
  }
  Values items = mutable_tensor_list(g, a);
  // Python's insert clamps the index to the list.
  int64_t n = static_cast<int64_t>(items.size()), i = a.int_arg(1);
  i = i < 0 ? std::max<int64_t>(0, i + n) : std::min(i, n);
  items.insert(items.begin() + i, a.tensor(2));
  g.bind(a.jit(0), items);
  return {};
}

// aten::pop(t[] self, int idx=-1) -> t  ⇒  the element; the list without it
Values pop(GraphContext& g, const Args& a) {
  if (a.is_sequence(0)) {
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    Value i = a.tensor_as(1, at::kLong);
    Value item = g.op("SequenceAt", {seq, i});
    rebind_sequence(g, a, g.op("SequenceErase", {seq, i}));
    return {item};
  }
  Values items = mutable_tensor_list(g, a);
  size_t i = list_index(g, a.int_arg(1), items.size());
  Value item = items[i];
  items.erase(items.begin() + static_cast<int64_t>(i));
  g.bind(a.jit(0), items);
  return {item};
}

// aten::Delete(t[] self, int idx) -> ()  ⇒  the list without element idx
Values delete_item(GraphContext& g, const Args& a) {
  if (a.is_sequence(0)) {
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    rebind_sequence(g, a, g.op("SequenceErase", {seq, a.tensor_as(1, at::kLong)}));
    return {};
  }
  Values items = mutable_tensor_list(g, a);
  items.erase(items.begin() + static_cast<int64_t>(list_index(g, a.int_arg(1), items.size())));
  g.bind(a.jit(0), items);
  return {};
}

// aten::_set_item(t[] l, int idx, t el) -> t[]  ⇒  the list with element idx replaced
Values set_item(GraphContext& g, const Args& a) {
  if (a.is_sequence(0) || !a.is_constant(1)) {
    Value seq = a.sequence(0, sequence_dtype(a.jit(0)));
    Value i = sequence_position(g, seq, a.tensor_as(1, at::kLong));
    Value erased = g.op("SequenceErase", {seq, i});
    return rebind_sequence(
        g, a, g.op("SequenceInsert", {erased, sequence_element(g, a, 2, a.jit(0)), i}));
  }
  Values items = mutable_tensor_list(g, a);
  items[list_index(g, a.int_arg(1), items.size())] = a.tensor(2);
  g.bind(a.jit(0), items);
  return items;
}

}  // namespace

void register_prim(Registry& r) {
  r.add("prim::ListConstruct", from(9), list_construct);
  r.add("prim::ListUnpack", from(9), list_unpack);
  // prim::TupleConstruct(...) -> (...)  ⇒  its elements
  r.add("prim::TupleConstruct", from(9), elements);
  r.add("prim::TupleUnpack", from(9), tuple_unpack);
  r.add("prim::NumToTensor", from(9), same_value);
  r.add("aten::ScalarImplicit", from(9), same_value);
  r.add("aten::Int", from(9), cast_to(at::kLong));
  r.add("aten::IntImplicit", from(9), cast_to(at::kLong));
  r.add("aten::Float", from(9), cast_to(at::kDouble));
  r.add("aten::FloatImplicit", from(9), cast_to(at::kDouble));
  r.add("aten::Bool", from(9), cast_to(at::kBool));
  r.add_unnamed("aten::size", from(9), size);
  r.add("aten::size.int", from(9), size_dim);
  r.add("aten::dim", from(9), dim);
  r.add("aten::numel", from(9), numel);
  r.add("aten::__getitem__", from(9), getitem);
  r.add("prim::Constant", from(9), constant);
  r.add("prim::unchecked_cast", from(9), passthrough);
  r.add("prim::data", from(9), passthrough);
  r.add("prim::dtype", from(9), dtype);
  r.add("prim::layout", from(9), layout);
  r.add("prim::device", from(9), device);
  r.add("aten::is_pinned", from(9), is_pinned);
  for (const char* op :
       {"aten::is_grad_enabled", "aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled",
        "prim::requires_grad", "prim::is_nested"}) {
    r.add(op, from(9), known_at_export(false));
  }
  r.add("aten::_nested_tensor_from_mask_left_aligned", from(9), known_at_export(true));
  r.add("prim::max", from(9), scalar_extreme("Max"));
  r.add("prim::min", from(9), scalar_extreme("Min"));
  for (const char* list : {"self_int", "self_float", "self_bool"}) {
    r.add(std::string("prim::max.") + list, from(9), list_extreme("ReduceMax"));
    r.add(std::string("prim::min.") + list, from(9), list_extreme("ReduceMin"));
  }
  r.add("prim::tolist", from(9), tolist);
  r.add("aten::__is__", from(9), identity_test(/*negate=*/false));
  r.add("aten::__isnot__", from(9), identity_test(/*negate=*/true));
  r.add("aten::__contains__", from(9), contains);
  r.add("aten::__not__", from(9), not_);
  r.add("aten::__range_length", from(9), range_length);
  r.add("aten::__derive_index", from(9), derive_index);
  r.add("aten::len", from(9), len);
  r.add("aten::len.Tensor", from(9), len_tensor);
  r.add("aten::list", from(9), list);
  r.add("aten::slice.t", from(9), list_slice);
  r.add("aten::add.t", from(9), list_concat);
  r.add("aten::append", from(9), append);
  r.add("aten::insert", from(9), insert);
  r.add("aten::pop", from(9), pop);
  r.add("aten::Delete", from(9), delete_item);
  r.add("aten::_set_item", from(9), set_item);
}

}  // namespace torchonnx::symbolic::ops
