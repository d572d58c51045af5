// Custom symbolic functions (torch.onnx.register_custom_op_symbolic): how a TorchScript op — a
// custom op registered with TORCH_LIBRARY, or an aten op whose built-in conversion you want to
// replace — becomes ONNX nodes.
//
//   #include <torchonnx/symbolic.h>
//   torchonnx::register_custom_op_symbolic(
//       "custom_ops::foo_forward",
//       [](torchonnx::GraphContext& g, const torchonnx::Args& a) -> torchonnx::Values {
//         return {g.op("custom_domain::Foo", {a.tensor(0), a.tensor(1)},
//                      {{"attr1", a.float_arg(2)}, {"attr2", a.int_arg(3)}})};
//       },
//       /*opset_version=*/9);
//
// A symbolic builds nodes through a GraphContext (g.op("Type", ...) for the default ONNX domain,
// g.op("domain::Type", ...) for a custom one: that domain is added to the model's opset imports
// with version ExportOptions::custom_opsets[domain], or 1), reads the node's arguments by schema
// position through Args (tensor(i), float_arg(i), int_list(i), ...) and returns one ONNX value per
// output of the node. Attribute names are written as ONNX stores them ("attr1", not torch.onnx's
// "attr1_f": the C++ value's type gives the attribute's type).
//
// This header is self-contained: it needs torchonnx's public headers and libtorch's, nothing of
// torchonnx's internals (GraphContext and Args are narrow handles on the exporter's own objects,
// valid only during the call of the symbolic they are given to). target_link_libraries(x PRIVATE
// torchonnx::torchonnx) is all a library of symbolics needs — see examples/custom_op.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
struct Node;
struct Value;
}  // namespace torch::jit

// torchonnx's internals, which the handles below refer to (hidden: declared before the push).
namespace torchonnx::symbolic {
class GraphContext;
class Args;
}  // namespace torchonnx::symbolic

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

// An ONNX value: its name in the graph being built.
using Value = std::string;
using Values = std::vector<Value>;

// An ONNX node attribute. The C++ type of the value gives the attribute's type: int, int64_t and
// bool are INT, float and double FLOAT, strings STRING, at::Tensor TENSOR, and vectors of them
// INTS, FLOATS, STRINGS.
using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                    std::vector<float>, std::vector<std::string>, at::Tensor>;
struct Attribute {
  Attribute(std::string n, int v) : name(std::move(n)), value(int64_t{v}) {}
  Attribute(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  Attribute(std::string n, bool v) : name(std::move(n)), value(int64_t{v}) {}
  Attribute(std::string n, double v) : name(std::move(n)), value(static_cast<float>(v)) {}
  Attribute(std::string n, float v) : name(std::move(n)), value(v) {}
  Attribute(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  Attribute(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, std::vector<int64_t> v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, std::vector<float> v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, std::vector<std::string> v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, at::Tensor v) : name(std::move(n)), value(std::move(v)) {}

  std::string name;
  AttributeValue value;
};
using Attributes = std::vector<Attribute>;

// torch.onnx's `g`: adds ONNX nodes to the graph being exported.
class GraphContext {
 public:
  // Made by torchonnx for each call of a symbolic.
  explicit GraphContext(symbolic::GraphContext& impl) : impl_(&impl) {}
  GraphContext(const GraphContext&) = delete;
  GraphContext& operator=(const GraphContext&) = delete;

  // The opset being exported to.
  int opset() const;

  // Adds a node of the default domain ("Type") or of a custom one ("domain::Type") with one
  // output; returns it.
  Value op(const std::string& type, const Values& inputs, const Attributes& attributes = {});
  // The same with `num_outputs` outputs.
  Values op(const std::string& type, const Values& inputs, const Attributes& attributes,
            size_t num_outputs);

  // Constants: a Constant node holding a copy of `tensor`.
  Value constant(const at::Tensor& tensor);
  Value constant_ints(const std::vector<int64_t>& values);   // 1-D int64
  Value constant_scalar(double value, at::ScalarType type);  // 0-d
  // `v` cast to `to` (an ONNX Cast node).
  Value cast(const Value& v, at::ScalarType to);

  // The element type (Undefined when unknown) and sizes (-1 for a dim known only at run time;
  // nullopt for an unknown rank) of `v`: a value made by op() or constant() in this call, typed by
  // ONNX shape inference of its node as torch.onnx types each node a symbolic adds, or an argument
  // read through Args, typed by type propagation. For symbolics that read the types of the values
  // they made (torchvision's nms squeezes a Gather it made through torch.onnx's squeeze, which
  // removes the dim only when it knows that its size is 1).
  at::ScalarType dtype(const Value& v) const;
  std::optional<std::vector<int64_t>> sizes(const Value& v) const;

  // Converts the nodes of `graph` here, as if they stood in place of the node being converted, its
  // inputs given by `inputs` (one per graph input); returns its outputs. For the traced forward of
  // a torch.autograd.Function (prim::PythonOp's Subgraph), which torch.onnx inlines when the
  // Function has no symbolic.
  Values inline_graph(const torch::jit::Graph& graph, const Values& inputs);

  // Throws ExportError(kConversion) naming the node being converted, its source location and the
  // opset.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  symbolic::GraphContext* impl_;
};

// The arguments of the TorchScript node being converted, by position in its schema.
class Args {
 public:
  // Made by torchonnx for each call of a symbolic.
  explicit Args(const symbolic::Args& impl) : impl_(&impl) {}
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;

  // The number of inputs of the node.
  size_t size() const;
  // The node (the same as SymbolicContext::cur_node).
  const torch::jit::Node* node() const;
  // The overload name of the schema the node matched ("Tensor_mode" of aten::div.Tensor_mode; ""
  // for the unnamed overload or a node without a schema).
  std::string overload() const;

  // --- values ---
  // Input i as an ONNX tensor (tensors as they are, constant scalars as 0-d constants).
  Value tensor(size_t i) const;
  // Input i as an ONNX tensor of element type `type` (constants are made in that type, other
  // values cast when their type differs).
  Value tensor_as(size_t i, at::ScalarType type) const;
  // The elements of a Tensor[] input.
  Values tensor_list(size_t i) const;
  // The same, each element cast to `dtype` where its known dtype differs.
  Values tensor_list_as(size_t i, at::ScalarType dtype) const;

  // --- constant arguments (ExportError when not constant) ---
  bool is_none(size_t i) const;
  bool is_constant(size_t i) const;
  int64_t int_arg(size_t i) const;
  double float_arg(size_t i) const;
  bool bool_arg(size_t i) const;
  std::string str_arg(size_t i) const;
  std::vector<int64_t> int_list(size_t i) const;
  std::optional<int64_t> optional_int(size_t i) const;
  std::optional<double> optional_float(size_t i) const;
  std::optional<std::vector<int64_t>> optional_int_list(size_t i) const;

  // --- types, as far as the exporter knows them ---
  // Tensor dtype (Undefined when unknown); for an int/float/bool scalar the dtype it has as a
  // tensor (Long/Double/Bool).
  at::ScalarType dtype(size_t i) const;
  std::optional<std::vector<int64_t>> sizes(size_t i) const;  // -1 for a dim known at run time
  std::optional<int64_t> rank(size_t i) const;
  int64_t require_rank(size_t i) const;  // fails with a clear message when unknown
  at::ScalarType output_dtype(size_t k = 0) const;
  std::optional<std::vector<int64_t>> output_sizes(size_t k = 0) const;

 private:
  const symbolic::Args* impl_;
};

// What torch.onnx's SymbolicContext gives a symbolic that asks for it.
struct SymbolicContext {
  const torch::jit::Node* cur_node = nullptr;  // the TorchScript node being converted
  int opset = kDefaultOpset;                   // the target opset
  // The model's parameters and buffers by graph input name ("fc.weight"), as torch.onnx's
  // params_dict (present whether or not export_params is set).
  std::map<std::string, at::Tensor> params_dict;
  // The export's custom_opsets and operator_export_type.
  std::map<std::string, int> custom_opsets;
  OperatorExportType operator_export_type = OperatorExportType::kOnnx;
};

// A symbolic function: one ONNX value per output of the node. Failures: throw ExportError (or call
// g.fail(message), which names the node, its source location and the opset).
using SymbolicFunction = std::function<Values(GraphContext& g, const Args& args)>;
// The same, also receiving the SymbolicContext.
using ContextSymbolicFunction =
    std::function<Values(const SymbolicContext& ctx, GraphContext& g, const Args& args)>;

// Registers `fn` for the op `name` ("namespace::op": "custom_ops::foo_forward", "aten::relu") from
// `opset_version` up, until a registration of the same op at a higher opset. It takes precedence
// over torchonnx's built-in converter of that op (and, as built-ins do, serves the op's in-place
// form: "aten::relu" converts aten::relu_ too); registering again at the same opset replaces the
// function. Thread-safe. ExportError (kInvalidArgument) for a malformed name, the "onnx"
// namespace, an opset_version outside 1..kMaxOpset or an empty function.
void register_custom_op_symbolic(const std::string& name, SymbolicFunction fn, int opset_version);
void register_custom_op_symbolic(const std::string& name, ContextSymbolicFunction fn,
                                 int opset_version);

// Removes the registration of `name` made at exactly `opset_version`; returns whether there was
// one. Built-in converters are never removed.
bool unregister_custom_op_symbolic(const std::string& name, int opset_version);

}  // namespace torchonnx

#pragma GCC visibility pop
