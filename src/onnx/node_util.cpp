#include "onnx/node_util.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace torchonnx::optimizer {

using ir::Graph;
using ir::Node;
using ir::TypeInfo;

int64_t bytes_of(const at::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

const ir::AttrValue* find_attr(const Node& n, const std::string& name) {
  for (const auto& a : n.attributes) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

std::optional<int64_t> attr_int(const Node& n, const std::string& name) {
  const auto* v = find_attr(n, name);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> attr_ints(const Node& n, const std::string& name) {
  const auto* v = find_attr(n, name);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<ir::Ints>(v)) return *i;
  return std::nullopt;
}

void set_attr(Node& n, ir::Attribute attr) {
  for (auto& a : n.attributes) {
    if (a.name == attr.name) {
      a.value = std::move(attr.value);
      return;
    }
  }
  n.attributes.push_back(std::move(attr));
}

bool has_subgraph(const Node& n) {
  for (const auto& a : n.attributes) {
    if (std::holds_alternative<std::shared_ptr<Graph>>(a.value)) return true;
  }
  return false;
}

std::vector<int64_t> ints_of(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous().reshape({-1});
  const int64_t* p = l.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + l.numel());
}

bool is_static(const TypeInfo& t) {
  if (!t.shape) return false;
  for (int64_t d : *t.shape) {
    if (d < 0) return false;
  }
  return true;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
    const int64_t y = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
    if (x == 1) {
      out[k] = y;
    } else if (y == 1 || x == y) {
      out[k] = x;
    } else if (x < 0 || y < 0) {
      out[k] = x < 0 ? y : x;
      if (x < 0 && y < 0) out[k] = -1;
    } else {
      return std::nullopt;  // not broadcastable
    }
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

bool is_float(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf;
}

// The axes of a Squeeze/Unsqueeze: its second input from opset 13, an attribute before.
std::optional<std::vector<int64_t>> axes_of(const Node& n, int opset,
                                            const std::unordered_map<std::string, at::Tensor>& c) {
  if (opset >= 13) {
    if (n.inputs.size() < 2 || n.inputs[1].empty()) return std::nullopt;
    auto it = c.find(n.inputs[1]);
    if (it == c.end()) return std::nullopt;
    return ints_of(it->second);
  }
  return attr_ints(n, "axes");
}

}  // namespace torchonnx::optimizer
