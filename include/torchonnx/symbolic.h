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
// A symbolic builds nodes through the GraphContext the built-in converters use (g.op("Type", ...)
// for the default ONNX domain, g.op("domain::Type", ...) for a custom one: that domain is added to
// the model's opset imports with version ExportOptions::custom_opsets[domain], or 1), reads the
// node's arguments by schema position through Args (tensor(i), float_arg(i), int_list(i), ...) and
// returns one ONNX value per output of the node. Attribute names are written as ONNX stores them
// ("attr1", not torch.onnx's "attr1_f": the C++ value's type gives the attribute's type).
//
// Building against this header: it includes torchonnx's internal headers (symbolic/context.h and
// what it includes: symbolic/registry.h, onnx/ir.h). `cmake --install` puts them under
// include/torchonnx/internal/, and the torchonnx::torchonnx target (find_package(torchonnx)), the
// build tree's torchonnx target and torchonnx.pc's Cflags all put them on the include path, so
// target_link_libraries(x PRIVATE torchonnx::torchonnx) is all a library of symbolics needs — see
// examples/custom_op/CMakeLists.txt. Those headers are not a stable API: use them only through
// GraphContext, Args and Value as named here. (Their list is in cmake/TorchonnxPackaging.cmake.)
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <string>

#include "symbolic/context.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Node;
}

namespace torchonnx {

using symbolic::Args;
using symbolic::GraphContext;
using symbolic::Value;
using symbolic::Values;

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
// over torchonnx's built-in converter of that op; registering again at the same opset replaces
// the function. Thread-safe. ExportError (kInvalidArgument) for a malformed name, the "onnx"
// namespace, an opset_version outside 1..kMaxOpset or an empty function.
void register_custom_op_symbolic(const std::string& name, SymbolicFunction fn, int opset_version);
void register_custom_op_symbolic(const std::string& name, ContextSymbolicFunction fn,
                                 int opset_version);

// Removes the registration of `name` made at exactly `opset_version`; returns whether there was
// one. Built-in converters are never removed.
bool unregister_custom_op_symbolic(const std::string& name, int opset_version);

}  // namespace torchonnx
