// ONNX-stage tests: small ir::Graphs built by hand, rewritten by optimize_model or
// share_duplicate_initializers, and checked node by node.
#pragma once

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "onnx/ir.h"

namespace torchonnx::testing {

inline ir::Node node(const std::string& op, std::vector<std::string> inputs,
                     std::vector<std::string> outputs, ir::Attributes attributes = {}) {
  ir::Node n;
  n.op_type = op;
  n.name = op + "_" + (outputs.empty() ? std::string("0") : outputs[0]);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attributes);
  return n;
}

inline ir::ValueInfo value(const std::string& name, at::ScalarType dtype,
                           std::vector<int64_t> shape) {
  return {name, ir::TypeInfo(dtype, std::move(shape))};
}

// A model at `opset` whose graph has float inputs and outputs of the given shapes.
inline ir::Model model(std::vector<ir::ValueInfo> inputs, std::vector<ir::ValueInfo> outputs,
                       int opset = 17) {
  ir::Model m;
  m.opset = opset;
  m.graph.inputs = std::move(inputs);
  m.graph.outputs = std::move(outputs);
  return m;
}

// "Add(x, c) -> y; Relu(y) -> z": the graph's nodes, one per line, for messages and comparisons.
inline std::string describe(const ir::Graph& g) {
  std::string out;
  for (const auto& n : g.nodes) {
    out += fmt::format("{}({}) -> {}\n", n.op_type, fmt::join(n.inputs, ", "),
                       fmt::join(n.outputs, ", "));
  }
  return out;
}

inline std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

inline const ir::Node* find_op(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

inline const at::Tensor* initializer(const ir::Graph& g, const std::string& name) {
  for (const auto& init : g.initializers) {
    if (init.name == name) return &init.tensor;
  }
  return nullptr;
}

inline std::vector<std::string> initializer_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& init : g.initializers) names.push_back(init.name);
  return names;
}

template <typename T>
const T* attribute(const ir::Node& n, const std::string& name) {
  for (const auto& a : n.attributes) {
    if (a.name == name) return std::get_if<T>(&a.value);
  }
  return nullptr;
}

}  // namespace torchonnx::testing
