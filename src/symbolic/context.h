// What a converter sees: GraphContext builds ONNX nodes (torch.onnx's `g`), Args reads the
// TorchScript node's arguments by schema position with typed accessors.
#pragma once

#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/ir.h"
#include "symbolic/registry.h"

namespace torch::jit {
struct Node;
struct Value;
}  // namespace torch::jit

namespace torchonnx::symbolic {

class GraphContext {
 public:
  GraphContext(ir::Graph& graph, int opset) : graph_(graph), opset_(opset) {}

  int opset() const { return opset_; }

  // Adds a node of the default domain (or "domain::Type") with one output; returns its name.
  Value op(const std::string& type, const Values& inputs, ir::Attributes attributes = {});
  // The same with `num_outputs` outputs.
  Values op(const std::string& type, const Values& inputs, ir::Attributes attributes,
            size_t num_outputs);

  // Constants: a Constant node holding a copy of `tensor`.
  Value constant(const at::Tensor& tensor);
  Value constant_ints(const std::vector<int64_t>& values);   // 1-D int64
  Value constant_scalar(double value, at::ScalarType type);  // 0-d
  Value cast(const Value& v, at::ScalarType to);

  // The ONNX values bound to a TorchScript value (a tensor has one, a list one per element).
  const Values* lookup(const torch::jit::Value* v) const;
  void bind(const torch::jit::Value* v, Values values);

  // The node being converted, for error messages.
  const torch::jit::Node* current_node() const { return node_; }
  void set_current_node(const torch::jit::Node* node) { node_ = node; }
  // Throws ExportError(kConversion) naming the current node, its source location and the opset.
  [[noreturn]] void fail(const std::string& message) const;

  ir::Graph& graph() { return graph_; }
  std::string fresh_name(const std::string& hint);

 private:
  ir::Graph& graph_;
  int opset_;
  const torch::jit::Node* node_ = nullptr;
  std::unordered_map<const torch::jit::Value*, Values> env_;
  std::unordered_map<std::string, int> name_counts_;
};

class Args {
 public:
  Args(GraphContext& g, const torch::jit::Node* node) : g_(g), node_(node) {}

  size_t size() const;
  const torch::jit::Node* node() const { return node_; }
  const torch::jit::Value* jit(size_t i) const;

  // --- values ---
  // Input i as an ONNX tensor (tensors as they are, constant scalars as 0-d constants).
  Value tensor(size_t i) const;
  // Input i as an ONNX tensor of element type `type` (constants are made in that type, other
  // values cast when their type differs).
  Value tensor_as(size_t i, at::ScalarType type) const;
  // The elements of a Tensor[] input.
  Values tensor_list(size_t i) const;

  // --- constant arguments (ExportError when not constant) ---
  bool is_none(size_t i) const;
  bool is_constant(size_t i) const;
  c10::IValue constant(size_t i) const;
  int64_t int_arg(size_t i) const;
  double float_arg(size_t i) const;
  bool bool_arg(size_t i) const;
  std::string str_arg(size_t i) const;
  std::vector<int64_t> int_list(size_t i) const;
  std::optional<int64_t> optional_int(size_t i) const;
  std::optional<double> optional_float(size_t i) const;
  std::optional<std::vector<int64_t>> optional_int_list(size_t i) const;

  // --- types, from type propagation ---
  // Tensor dtype; for an int/float/bool scalar the dtype it has as a tensor (Long/Double/Bool).
  at::ScalarType dtype(size_t i) const;
  std::optional<std::vector<int64_t>> sizes(size_t i) const;
  std::optional<int64_t> rank(size_t i) const;
  int64_t require_rank(size_t i) const;  // fails with a clear message when unknown
  at::ScalarType output_dtype(size_t k = 0) const;
  std::optional<std::vector<int64_t>> output_sizes(size_t k = 0) const;

 private:
  GraphContext& g_;
  const torch::jit::Node* node_;
};

}  // namespace torchonnx::symbolic

namespace torchonnx::symbolic {
// A prim::Constant's value, or a list built by prim::ListConstruct from constants (nested); never
// a list mutated in place (append, ...).
std::optional<c10::IValue> constant_value(const torch::jit::Value* v);
// "file.py:12" of the node's TorchScript source range, or "" when the graph has none.
std::string source_location(const torch::jit::Node* node);
}  // namespace torchonnx::symbolic
