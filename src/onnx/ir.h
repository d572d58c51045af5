// The ONNX graph as torchonnx builds it: plain structs that keep initializers as libtorch tensors
// (no copy of weight bytes until serialization) and attributes as typed values.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "torchonnx/export.h"

namespace torchonnx::ir {

struct Graph;

// Element type and shape of a value; a dim of -1 is unknown, a missing shape is unknown rank.
struct TypeInfo {
  TypeInfo(at::ScalarType dtype = at::ScalarType::Undefined,
           std::optional<std::vector<int64_t>> shape = std::nullopt, bool sequence = false)
      : dtype(dtype), shape(std::move(shape)), sequence(sequence) {}

  at::ScalarType dtype = at::ScalarType::Undefined;
  std::optional<std::vector<int64_t>> shape;
  bool sequence = false;  // a sequence of tensors of this type (a list of run-time length)
  // An optional of this type (opset 15+): a value that may be None at run time.
  bool optional = false;
  // Names of dims known only at run time (dynamic axes), one per dim of `shape` ("" for none).
  std::vector<std::string> dim_params;
};

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;
using Strings = std::vector<std::string>;
using AttrValue = std::variant<int64_t, float, std::string, Ints, Floats, Strings, at::Tensor,
                               std::shared_ptr<Graph>, TypeInfo>;

struct Attribute {
  Attribute(std::string n, int v) : name(std::move(n)), value(int64_t{v}) {}
  Attribute(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  Attribute(std::string n, bool v) : name(std::move(n)), value(int64_t{v}) {}
  Attribute(std::string n, double v) : name(std::move(n)), value(static_cast<float>(v)) {}
  Attribute(std::string n, float v) : name(std::move(n)), value(v) {}
  Attribute(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  Attribute(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, Ints v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, Floats v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, Strings v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, at::Tensor v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, std::shared_ptr<Graph> v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, TypeInfo v) : name(std::move(n)), value(std::move(v)) {}

  std::string name;
  AttrValue value;
  // Inside an ir::Function: the name of the function attribute that gives the value at each call
  // (ONNX's ref_attr_name; `value` then only tells the type). "" for a value of its own.
  std::string ref;
};
using Attributes = std::vector<Attribute>;

struct Node {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  std::string name;
  std::vector<std::string> inputs;  // "" marks an omitted optional input
  std::vector<std::string> outputs;
  Attributes attributes;
  std::string source;  // TorchScript source location, for messages and verbose printing
  std::string origin;  // kind of the TorchScript node it was converted from ("aten::add")
  // The module instances the TorchScript node ran in, outermost first, each
  // "path:QualifiedType@callsite" ("encoder.layers.0:__torch__.torch.nn.modules.transformer.
  // TransformerEncoderLayer@1234"); set by symbolic/functions.cpp, read by
  // onnx/module_functions.cpp (export_modules_as_functions).
  std::vector<std::string> scope;
};

struct ValueInfo {
  std::string name;
  TypeInfo type;
};

struct Initializer {
  std::string name;
  at::Tensor tensor;
};

struct Graph {
  std::string name = "main_graph";
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<Initializer> initializers;
  std::vector<Node> nodes;
  // The types of the values the converters made (Note [Converter output types] in
  // symbolic/convert.cpp): type propagation's for those bound to a TorchScript output
  // (`value_types`), the shape rules' for the others (`rule_types`, onnx/infer_shapes.cpp).
  // `typed`: type_values (onnx/optimize.h) computed `rule_types`, when conversion ended.
  std::map<std::string, TypeInfo> value_types;
  std::map<std::string, TypeInfo> rule_types;
  bool typed = false;
};

// An ONNX local function (FunctionProto), for export_modules_as_functions.
struct Function {
  std::string name;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attributes;
  std::vector<Node> nodes;
};

struct Model {
  Graph graph;
  // The qualified TorchScript class of the exported module ("" for a traced function): an
  // instance for export_modules_as_functions.
  std::string module_type;
  std::vector<Function> functions;
  int opset = kDefaultOpset;
  std::map<std::string, int> extra_opsets;  // custom domains → version
  std::string producer_name = "torchonnx";
  std::string producer_version;
  std::string doc_string;
};

}  // namespace torchonnx::ir
