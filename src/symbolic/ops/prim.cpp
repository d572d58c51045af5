// prim:: plumbing and the scalar/shape ops of traced graphs (x.size(0), int(...), lists).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

bool is_tensor_list(const torch::jit::Value* v) {
  auto list = v->type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

// An int[]/float[]/bool[] list is one 1-D tensor (Shape, Concat of its elements); element `i`
// of it is Gather(list, i), a 0-d tensor (negative indices counted from Size(list) before opset
// 11, whose Gather takes none).
Value list_element(GraphContext& g, const Value& list, int64_t i) {
  Value index = g.constant(at::scalar_tensor(i, at::kLong));
  if (i < 0 && g.opset() < 11) index = g.op("Add", {g.op("Size", {list}), index});
  return g.op("Gather", {list, index}, {{"axis", 0}});
}

Values elements(GraphContext& g, const Args& a) {
  Values out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(a.tensor(i));
  return out;
}

}  // namespace

void register_prim(Registry& r) {
  // prim::ListConstruct(...) -> T[]  ⇒  its elements (Tensor[]), or Concat of 1-D ints (int[])
  r.add("prim::ListConstruct", {}, [](GraphContext& g, const Args& a) -> Values {
    if (is_tensor_list(a.node()->output())) return elements(g, a);
    Values parts;
    for (size_t i = 0; i < a.size(); ++i) {
      parts.push_back(unsqueeze(g, a.tensor_as(i, at::kLong), {0}));
    }
    if (parts.size() == 1) return {parts[0]};
    return {g.op("Concat", parts, {{"axis", 0}})};
  });
  // prim::ListUnpack(T[] l) -> (T, ...)  ⇒  the list's element values (Gather of each element of
  // a scalar list)
  r.add("prim::ListUnpack", {}, [](GraphContext& g, const Args& a) -> Values {
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
  });
  r.add("prim::TupleConstruct", {}, [](GraphContext& g, const Args& a) { return elements(g, a); });
  r.add("prim::TupleUnpack", {}, [](GraphContext&, const Args& a) { return a.tensor_list(0); });
  // prim::NumToTensor(Scalar) -> Tensor  ⇒  the scalar is already a 0-d tensor
  r.add("prim::NumToTensor", {},
        [](GraphContext&, const Args& a) -> Values { return {a.tensor(0)}; });
  // aten::Int/Float/Bool(Tensor) and their implicit forms  ⇒  Cast to Long/Double/Bool
  for (auto [op, type] : {std::pair{"aten::Int", at::kLong},
                          {"aten::IntImplicit", at::kLong},
                          {"aten::Float", at::kDouble},
                          {"aten::FloatImplicit", at::kDouble},
                          {"aten::Bool", at::kBool}}) {
    r.add(op, {},
          [type = type](GraphContext&, const Args& a) -> Values { return {a.tensor_as(0, type)}; });
  }
  r.add("aten::ScalarImplicit", {},
        [](GraphContext&, const Args& a) -> Values { return {a.tensor(0)}; });
  // aten::size(Tensor self, int? dim) -> int / int[]  ⇒  Shape, Gather
  r.add("aten::size", {}, [](GraphContext& g, const Args& a) -> Values {
    Value shape = g.op("Shape", {a.tensor(0)});
    if (a.size() == 1) return {shape};
    int64_t dim = a.int_arg(1);
    if (dim < 0) dim += a.require_rank(0);
    return {g.op("Gather", {shape, g.constant(at::scalar_tensor(dim, at::kLong))}, {{"axis", 0}})};
  });
  // aten::dim(Tensor self) -> int  ⇒  a constant
  r.add("aten::dim", {}, [](GraphContext& g, const Args& a) -> Values {
    return {g.constant(at::scalar_tensor(a.require_rank(0), at::kLong))};
  });
  // aten::numel(Tensor self) -> int  ⇒  ReduceProd(Shape(self))
  r.add("aten::numel", {}, [](GraphContext& g, const Args& a) -> Values {
    return {reduce(g, "ReduceProd", g.op("Shape", {a.tensor(0)}), {}, false)};
  });
  // aten::__getitem__.t(t[] list, int idx) -> t  ⇒  the element (constant index); Gather for a
  // scalar list
  r.add("aten::__getitem__", {}, [](GraphContext& g, const Args& a) -> Values {
    if (!is_tensor_list(a.jit(0))) return {list_element(g, a.tensor(0), a.int_arg(1))};
    Values items = a.tensor_list(0);
    int64_t i = a.int_arg(1);
    if (i < 0) i += static_cast<int64_t>(items.size());
    if (i < 0 || i >= static_cast<int64_t>(items.size())) g.fail("list index out of range");
    return {items[i]};
  });
}

}  // namespace torchonnx::symbolic::ops
