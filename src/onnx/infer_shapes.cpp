// The light dtype/shape inference of the ONNX stage (Note [Graph optimization] in optimize.cpp):
// graph inputs, initializers and constants are typed by GraphOptimizer::index; a node is typed
// here from its inputs by the shape rules of common ops (anything else is unknown), when
// conversion ends (type_values) and again in the sweep for a node it rewrote or whose reads it
// changed (Note [Converter output types] in symbolic/convert.cpp). A dim of -1 is unknown.
#include <ATen/ATen.h>

#include <algorithm>

#include "onnx/dtype.h"
#include "onnx/graph_optimizer.h"

namespace torchonnx::optimizer {

using ir::Node;
using ir::TypeInfo;

std::optional<std::vector<int64_t>> GraphOptimizer::perm_of(const Node& n) const {
  if (auto perm = attr_ints(n, "perm")) return perm;
  const TypeInfo* t = type(n.inputs[0]);
  if (t == nullptr || !t->shape) return std::nullopt;
  std::vector<int64_t> perm;
  for (int64_t d = static_cast<int64_t>(t->shape->size()) - 1; d >= 0; --d) perm.push_back(d);
  return perm;
}

// The shape a Reshape gives, with 0s resolved and -1 computed when the input shape is known.
std::optional<Shape> GraphOptimizer::reshape_target(const Node& n) const {
  if (n.inputs.size() != 2) return std::nullopt;
  const at::Tensor* s = constant(n.inputs[1]);
  if (s == nullptr) return std::nullopt;
  Shape shape = ints_of(*s);
  const bool allowzero = attr_int(n, "allowzero").value_or(0) != 0;
  const TypeInfo* t = type(n.inputs[0]);
  const bool known = t != nullptr && is_static(*t);
  int64_t product = 1, unknown = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowzero) {
      if (t == nullptr || !t->shape || k >= t->shape->size()) return std::nullopt;
      shape[k] = (*t->shape)[k];
    }
    if (shape[k] == -1) {
      unknown = static_cast<int64_t>(k);
    } else {
      product *= shape[k];
    }
  }
  if (unknown >= 0 && known) {
    int64_t numel = 1;
    for (int64_t d : *t->shape) numel *= d;
    if (product > 0) shape[unknown] = numel / product;
  }
  return shape;
}

void GraphOptimizer::set_type(const std::string& name, at::ScalarType dtype,
                              std::optional<Shape> shape) {
  if (!name.empty()) types_[name] = TypeInfo(dtype, std::move(shape));
}

void GraphOptimizer::infer(const Node& n) {
  if (!n.domain.empty() || n.outputs.empty() || n.inputs.empty()) return;
  const std::string& op = n.op_type;
  const TypeInfo* x = type(n.inputs[0]);
  if (x == nullptr || x->sequence) return;
  const std::string& out = n.outputs[0];
  static const std::unordered_set<std::string> kSame = {"Identity",
                                                        "Relu",
                                                        "Erf",
                                                        "Sqrt",
                                                        "Neg",
                                                        "Exp",
                                                        "Log",
                                                        "Tanh",
                                                        "Sigmoid",
                                                        "Softmax",
                                                        "LogSoftmax",
                                                        "Abs",
                                                        "Gelu",
                                                        "LeakyRelu",
                                                        "Elu",
                                                        "Clip",
                                                        "HardSigmoid",
                                                        "Reciprocal",
                                                        "Floor",
                                                        "Ceil",
                                                        "Round",
                                                        "Sin",
                                                        "Cos",
                                                        "Dropout",
                                                        "LayerNormalization",
                                                        "BatchNormalization",
                                                        "InstanceNormalization",
                                                        "HardSwish",
                                                        "Softplus",
                                                        "Selu",
                                                        "Celu",
                                                        "PRelu",
                                                        "Sign",
                                                        "Mish",
                                                        "BitwiseNot",
                                                        "GroupNormalization"};
  static const std::unordered_set<std::string> kBroadcast = {
      "Add", "Sub", "Mul",        "Div",       "Pow",       "Max",
      "Min", "Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  static const std::unordered_set<std::string> kCompare = {
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  if (kSame.count(op)) {
    set_type(out, x->dtype, x->shape);
  } else if (op == "Cast") {
    if (auto to = attr_int(n, "to")) {
      try {
        set_type(out, from_onnx_dtype(static_cast<int32_t>(*to)), x->shape);
      } catch (const std::exception&) {
      }
    }
  } else if (kBroadcast.count(op) || kCompare.count(op) || op == "Where") {
    std::optional<Shape> shape = x->shape;
    at::ScalarType dtype = kCompare.count(op) ? at::kBool : x->dtype;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      const TypeInfo* y = type(n.inputs[k]);
      if (y == nullptr) return;
      if (op == "Where" && k == 1) dtype = y->dtype;
      if (shape && y->shape) {
        shape = broadcast(*shape, *y->shape);
      } else {
        shape.reset();
      }
    }
    if (op == "Where" && n.inputs.size() != 3) return;
    set_type(out, dtype, shape);
  } else if (op == "Not") {
    set_type(out, at::kBool, x->shape);
  } else if (op == "Transpose") {
    if (!x->shape) return;
    auto perm = perm_of(n);
    if (!perm || perm->size() != x->shape->size()) return;
    Shape s;
    for (int64_t p : *perm) s.push_back((*x->shape)[p]);
    set_type(out, x->dtype, s);
  } else if (op == "Reshape") {
    auto s = reshape_target(n);
    if (s && std::count(s->begin(), s->end(), -1) <= 1) set_type(out, x->dtype, s);
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    auto axes = axes_of(n, opset_, consts_);
    if (!x->shape || !axes) return;
    Shape s = *x->shape;
    if (op == "Unsqueeze") {
      const int64_t rank = static_cast<int64_t>(s.size() + axes->size());
      std::vector<int64_t> a;
      for (int64_t v : *axes) a.push_back(normalize_axis(v, rank));
      std::sort(a.begin(), a.end());
      for (int64_t v : a) {
        if (v < 0 || v > static_cast<int64_t>(s.size())) return;
        s.insert(s.begin() + v, 1);
      }
    } else {
      std::vector<int64_t> a;
      for (int64_t v : *axes) a.push_back(normalize_axis(v, static_cast<int64_t>(s.size())));
      std::sort(a.rbegin(), a.rend());
      for (int64_t v : a) {
        if (v < 0 || v >= static_cast<int64_t>(s.size())) return;
        s.erase(s.begin() + v);
      }
    }
    set_type(out, x->dtype, s);
  } else if (op == "MatMul" && n.inputs.size() == 2) {
    const TypeInfo* y = type(n.inputs[1]);
    if (y == nullptr || !x->shape || !y->shape || x->shape->size() < 2 || y->shape->size() < 2) {
      return;
    }
    const Shape &a = *x->shape, &b = *y->shape;
    auto batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
    if (!batch) return;
    batch->push_back(a[a.size() - 2]);
    batch->push_back(b.back());
    set_type(out, x->dtype, batch);
  } else if (op == "Gemm" && n.inputs.size() >= 2) {
    const TypeInfo* y = type(n.inputs[1]);
    if (y == nullptr || !x->shape || !y->shape || x->shape->size() != 2 || y->shape->size() != 2) {
      return;
    }
    const bool ta = attr_int(n, "transA").value_or(0) != 0;
    const bool tb = attr_int(n, "transB").value_or(0) != 0;
    set_type(out, x->dtype, Shape{(*x->shape)[ta ? 1 : 0], (*y->shape)[tb ? 0 : 1]});
  } else if (op == "Shape") {
    if (!x->shape) return;
    const int64_t rank = static_cast<int64_t>(x->shape->size());
    int64_t start =
        std::clamp<int64_t>(normalize_axis(attr_int(n, "start").value_or(0), rank), 0, rank);
    int64_t end =
        std::clamp<int64_t>(normalize_axis(attr_int(n, "end").value_or(rank), rank), 0, rank);
    set_type(out, at::kLong, Shape{std::max<int64_t>(0, end - start)});
  } else if (op == "Gather" && n.inputs.size() == 2) {
    const TypeInfo* idx = type(n.inputs[1]);
    if (idx == nullptr || !x->shape || !idx->shape) return;
    const int64_t rank = static_cast<int64_t>(x->shape->size());
    const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), rank);
    if (axis < 0 || axis >= rank) return;
    Shape s(x->shape->begin(), x->shape->begin() + axis);
    s.insert(s.end(), idx->shape->begin(), idx->shape->end());
    s.insert(s.end(), x->shape->begin() + axis + 1, x->shape->end());
    set_type(out, x->dtype, s);
  } else if (op == "Flatten") {
    if (!x->shape) return;
    const int64_t rank = static_cast<int64_t>(x->shape->size());
    const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(1), rank);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t& p = d < axis ? outer : inner;
      p = (p < 0 || (*x->shape)[d] < 0) ? -1 : p * (*x->shape)[d];
    }
    set_type(out, x->dtype, Shape{outer, inner});
  } else if (op == "Expand" && n.inputs.size() == 2) {
    const at::Tensor* s = constant(n.inputs[1]);
    if (s == nullptr || !x->shape) return;
    set_type(out, x->dtype, broadcast(*x->shape, ints_of(*s)));
  }
}

}  // namespace torchonnx::optimizer
