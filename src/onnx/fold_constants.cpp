// Constant folding in the optimizer (Note [Graph optimization] in optimize.cpp): a node whose
// inputs are all constants (or, for Shape/Size, of a static shape) is computed with libtorch and
// becomes a constant, unless its result would be much larger than the constants it frees.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "common/mapped_file.h"
#include "onnx/dtype.h"
#include "onnx/graph_optimizer.h"

namespace torchonnx::optimizer {

using ir::Node;
using ir::TypeInfo;

namespace {

// Computes `n` on constant inputs with libtorch, or nullopt when the op is not one we fold.
// `limit` bounds the output of the ops that can grow (checked before computing).
std::optional<at::Tensor> evaluate(const Node& n, const std::vector<at::Tensor>& in, int opset,
                                   int64_t limit) {
  const std::string& op = n.op_type;
  auto has = [&](size_t k) { return k < in.size() && in[k].defined(); };
  if (!has(0) && op != "Range") return std::nullopt;
  const at::Tensor& x = in[0];
  auto same_type = [&](const at::Tensor& t) { return t.to(x.scalar_type()); };
  if (op == "Identity") return x;
  if (op == "Transpose") {
    std::vector<int64_t> perm = attr_ints(n, "perm").value_or(std::vector<int64_t>{});
    if (perm.empty()) {
      for (int64_t d = x.dim() - 1; d >= 0; --d) perm.push_back(d);
    }
    return x.permute(perm);
  }
  if (op == "Cast") {
    auto to = attr_int(n, "to");
    if (!to) return std::nullopt;
    return x.to(from_onnx_dtype(static_cast<int32_t>(*to)));
  }
  if (op == "Reshape") {
    if (!has(1)) return std::nullopt;
    std::vector<int64_t> shape = ints_of(in[1]);
    const bool allowzero = attr_int(n, "allowzero").value_or(0) != 0;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 0 && !allowzero) {
        if (static_cast<int64_t>(k) >= x.dim()) return std::nullopt;
        shape[k] = x.size(static_cast<int64_t>(k));
      }
    }
    return x.reshape(shape);
  }
  if (op == "Flatten") {
    const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(1), x.dim());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
    return x.reshape({outer, outer == 0 ? 0 : x.numel() / outer});
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::optional<std::vector<int64_t>> axes;
    if (opset >= 13) {
      if (has(1)) axes = ints_of(in[1]);
    } else {
      axes = attr_ints(n, "axes");
    }
    if (op == "Squeeze") {
      if (!axes) return x.squeeze();
      std::vector<int64_t> a;
      for (int64_t v : *axes) a.push_back(normalize_axis(v, x.dim()));
      std::sort(a.rbegin(), a.rend());
      at::Tensor t = x;
      for (int64_t v : a) {
        if (t.size(v) != 1) return std::nullopt;
        t = t.squeeze(v);
      }
      return t;
    }
    if (!axes) return std::nullopt;
    const int64_t rank = x.dim() + static_cast<int64_t>(axes->size());
    std::vector<int64_t> a;
    for (int64_t v : *axes) a.push_back(normalize_axis(v, rank));
    std::sort(a.begin(), a.end());
    at::Tensor t = x;
    for (int64_t v : a) t = t.unsqueeze(v);
    return t;
  }
  if (op == "Concat") {
    auto axis = attr_int(n, "axis");
    if (!axis) return std::nullopt;
    std::vector<at::Tensor> parts;
    for (const auto& t : in) {
      if (!t.defined() || t.scalar_type() != x.scalar_type()) return std::nullopt;
      parts.push_back(t);
    }
    return at::cat(parts, normalize_axis(*axis, x.dim()));
  }
  if (op == "Gather") {
    if (!has(1)) return std::nullopt;
    const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), x.dim());
    at::Tensor idx = in[1].to(at::kLong);
    idx = at::where(idx < 0, idx + x.size(axis), idx);
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
    for (int64_t d : idx.sizes()) shape.push_back(d);
    for (int64_t d = axis + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
    return at::index_select(x, axis, idx.reshape({-1})).reshape(shape);
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset >= 10) {
      if (!has(1) || !has(2)) return std::nullopt;
      starts = ints_of(in[1]);
      ends = ints_of(in[2]);
      if (has(3)) axes = ints_of(in[3]);
      if (has(4)) steps = ints_of(in[4]);
    } else {
      starts = attr_ints(n, "starts").value_or(std::vector<int64_t>{});
      ends = attr_ints(n, "ends").value_or(std::vector<int64_t>{});
      axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
    }
    if (starts.size() != ends.size()) return std::nullopt;
    if (axes.empty()) {
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
    at::Tensor t = x;
    for (size_t k = 0; k < starts.size(); ++k) {
      if (steps[k] <= 0) return std::nullopt;
      const int64_t axis = normalize_axis(axes[k], x.dim());
      const int64_t dim = t.size(axis);
      auto clamp = [dim](int64_t v) {
        if (v < 0) v += dim;
        return std::clamp<int64_t>(v, 0, dim);
      };
      const int64_t s = clamp(starts[k]);
      const int64_t e = std::max(s, clamp(ends[k]));
      t = t.slice(axis, s, e, steps[k]);
    }
    return t;
  }
  if (op == "Shape") {
    const int64_t rank = x.dim();
    int64_t start =
        std::clamp<int64_t>(normalize_axis(attr_int(n, "start").value_or(0), rank), 0, rank);
    int64_t end =
        std::clamp<int64_t>(normalize_axis(attr_int(n, "end").value_or(rank), rank), 0, rank);
    std::vector<int64_t> dims(x.sizes().begin() + start, x.sizes().begin() + std::max(start, end));
    return at::tensor(dims, at::kLong);
  }
  if (op == "Size") return at::scalar_tensor(x.numel(), at::kLong);
  // Elementwise ops: ONNX gives both operands the same type; the result keeps it.
  static const std::unordered_set<std::string> kBinary = {
      "Add",   "Sub",  "Mul",     "Div",         "Pow",
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      "And",   "Or",   "Xor",     "Max",         "Min"};
  if (kBinary.count(op)) {
    if (!has(1)) return std::nullopt;
    const at::Tensor& y = in[1];
    auto shape = broadcast(x.sizes().vec(), y.sizes().vec());
    if (!shape) return std::nullopt;
    int64_t numel = 1;
    for (int64_t d : *shape) numel *= d;
    if (numel * static_cast<int64_t>(x.element_size()) > limit) return std::nullopt;
    if (op == "Add") return same_type(x + y);
    if (op == "Sub") return same_type(x - y);
    if (op == "Mul") return same_type(x * y);
    if (op == "Div") {
      if (at::isIntegralType(x.scalar_type(), /*includeBool=*/false)) {
        return same_type(at::div(x, y, "trunc"));
      }
      return same_type(x / y);
    }
    if (op == "Pow") return same_type(at::pow(x, y));
    if (op == "Equal") return at::eq(x, y);
    if (op == "Less") return at::lt(x, y);
    if (op == "Greater") return at::gt(x, y);
    if (op == "LessOrEqual") return at::le(x, y);
    if (op == "GreaterOrEqual") return at::ge(x, y);
    if (op == "And") return at::logical_and(x, y);
    if (op == "Or") return at::logical_or(x, y);
    if (op == "Xor") return at::logical_xor(x, y);
    if (op == "Max" && in.size() == 2) return same_type(at::maximum(x, y));
    if (op == "Min" && in.size() == 2) return same_type(at::minimum(x, y));
  }
  if (op == "MatMul") {
    if (!has(1) || x.dim() < 1 || in[1].dim() < 1) return std::nullopt;
    // The result's size bounds the work too (both are small when it is).
    const int64_t rows = x.dim() >= 2 ? x.numel() / x.size(-1) : 1;
    const int64_t cols = in[1].dim() >= 2 ? in[1].size(-1) : 1;
    if (rows * cols * static_cast<int64_t>(x.element_size()) > limit) return std::nullopt;
    return at::matmul(x, in[1]);
  }
  if (op == "Where") {
    if (!has(1) || !has(2)) return std::nullopt;
    auto shape = broadcast(x.sizes().vec(), in[1].sizes().vec());
    if (shape) shape = broadcast(*shape, in[2].sizes().vec());
    if (!shape) return std::nullopt;
    int64_t numel = 1;
    for (int64_t d : *shape) numel *= d;
    if (numel * static_cast<int64_t>(in[1].element_size()) > limit) return std::nullopt;
    return at::where(x.to(at::kBool), in[1], in[2]).to(in[1].scalar_type());
  }
  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
      op == "ReduceProd") {
    // The axes are an input from ReduceSum-13 and the others' opset 18, an attribute before.
    const bool axes_input = op == "ReduceSum" ? opset >= 13 : opset >= 18;
    std::optional<std::vector<int64_t>> axes;
    if (axes_input) {
      if (has(1)) axes = ints_of(in[1]);
    } else {
      axes = attr_ints(n, "axes");
    }
    if ((!axes || axes->empty()) && axes_input &&
        attr_int(n, "noop_with_empty_axes").value_or(0) != 0) {
      return x;
    }
    std::vector<int64_t> dims;
    if (axes && !axes->empty()) {
      for (int64_t a : *axes) dims.push_back(normalize_axis(a, x.dim()));
    } else {
      for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
    }
    const bool keep = attr_int(n, "keepdims").value_or(1) != 0;
    if (dims.empty()) return x;
    if (x.numel() == 0 || x.scalar_type() == at::kBool) return std::nullopt;
    if (op == "ReduceSum") return same_type(at::sum(x, dims, keep));
    if (op == "ReduceMax") return at::amax(x, dims, keep);
    if (op == "ReduceMin") return at::amin(x, dims, keep);
    if (op == "ReduceMean") {
      if (!is_float(x.scalar_type())) return std::nullopt;
      return at::mean(x, dims, keep);
    }
    std::sort(dims.rbegin(), dims.rend());
    at::Tensor t = x;
    for (int64_t d : dims) t = at::prod(t, d, keep);
    return same_type(t);
  }
  if (op == "Not") return at::logical_not(x);
  if (op == "Neg") return -x;
  if (is_float(x.scalar_type())) {
    if (op == "Sqrt") return at::sqrt(x);
    if (op == "Reciprocal") return at::reciprocal(x);
    if (op == "Exp") return at::exp(x);
    if (op == "Log") return at::log(x);
    if (op == "Erf") return at::erf(x);
    if (op == "Floor") return at::floor(x);
    if (op == "Ceil") return at::ceil(x);
    if (op == "Sigmoid") return at::sigmoid(x);
    if (op == "Tanh") return at::tanh(x);
    if (op == "Sin") return at::sin(x);
    if (op == "Cos") return at::cos(x);
    if (op == "IsNaN") return at::isnan(x);
  }
  if (op == "Relu") return at::relu(x);
  if (op == "Abs") return at::abs(x);
  if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = ints_of(x);
    int64_t numel = 1;
    for (int64_t d : shape) {
      if (d < 0) return std::nullopt;
      numel *= d;
    }
    at::Tensor value = at::zeros({1}, at::kFloat);
    if (const auto* v = find_attr(n, "value")) {
      if (const auto* t = std::get_if<at::Tensor>(v)) value = *t;
    }
    if (numel * static_cast<int64_t>(value.element_size()) > limit) return std::nullopt;
    return at::full(shape, value.reshape({-1})[0].item(), value.options());
  }
  if (op == "Expand") {
    if (!has(1)) return std::nullopt;
    auto shape = broadcast(x.sizes().vec(), ints_of(in[1]));
    if (!shape) return std::nullopt;
    int64_t numel = 1;
    for (int64_t d : *shape) {
      if (d < 0) return std::nullopt;
      numel *= d;
    }
    if (numel * static_cast<int64_t>(x.element_size()) > limit) return std::nullopt;
    return x.expand(*shape);
  }
  if (op == "Range") {
    if (!has(0) || !has(1) || !has(2)) return std::nullopt;
    const double start = x.item<double>(), stop = in[1].item<double>(), step = in[2].item<double>();
    if (step == 0) return std::nullopt;
    const double count = std::max(0.0, std::ceil((stop - start) / step));
    if (count * static_cast<double>(x.element_size()) > static_cast<double>(limit)) {
      return std::nullopt;
    }
    return at::arange(x.item(), in[1].item(), in[2].item(), x.options());
  }
  return std::nullopt;
}

}  // namespace

bool GraphOptimizer::fold(size_t i) {
  Node& n = g_.nodes[i];
  // A value a subgraph reads may become an initializer (its name stays); a graph output not.
  if (!n.domain.empty() || n.outputs.size() != 1 || n.op_type == "Constant" ||
      graph_outputs_.count(n.outputs[0]) || has_subgraph(n)) {
    return false;
  }
  std::vector<at::Tensor> in;
  int64_t freed = 0;
  std::unordered_set<std::string> seen;
  for (const auto& name : n.inputs) {
    if (name.empty()) {
      in.emplace_back();
      continue;
    }
    const at::Tensor* c = constant(name);
    if (c == nullptr) {
      // Shape/Size of a value whose shape is static.
      const TypeInfo* t = type(name);
      if ((n.op_type == "Shape" || n.op_type == "Size") && in.empty() && t != nullptr &&
          !t->sequence && is_static(*t)) {
        in.push_back(at::empty(*t->shape, at::TensorOptions().device(at::kMeta)));
        continue;
      }
      return false;
    }
    in.push_back(*c);
    // An outer constant read by a subgraph stays where it is: folding frees nothing.
    if (consts_.count(name) && seen.insert(name).second && uses_[name] == 1) freed += bytes_of(*c);
  }
  if (in.empty()) return false;
  const int64_t limit = std::max(kSmallFoldBytes, freed);
  std::optional<at::Tensor> out;
  try {
    at::NoGradGuard no_grad;
    out = evaluate(n, in, opset_, limit);
    if (out) to_onnx_dtype(out->scalar_type());
  } catch (const std::exception&) {
    return false;  // left to ONNX Runtime
  }
  if (!out || out->is_meta() || bytes_of(*out) > limit) return false;
  // A .pt weight read here is not this process's memory: Note [Zero-copy weights].
  for (const at::Tensor& t : in) {
    if (t.defined()) release_mapped_pages(t);
  }
  record_constant(n.outputs[0], *out);
  remove(i);
  return true;
}

}  // namespace torchonnx::optimizer
