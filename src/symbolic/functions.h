// export_modules_as_functions: instances of selected nn.Module types become ONNX local functions
// (FunctionProto), as torch.onnx 1.13 does (torch/onnx/utils.py _setup_trace_module_map and
// _C._jit_pass_onnx_function_extraction).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnx/ir.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Node;
}

namespace torchonnx::symbolic {

// The module instances a TorchScript node ran in, outermost first, from the InlinedCallStack that
// torch::jit::Inline leaves on it: "path:Type@site" with the dotted instance path ("block1.fc"; a
// ModuleList element is named by its index only, "0"), the qualified class name with
// TorchScript's "___torch_mangle_N" parts removed ("__torch__.torch.nn.modules.linear.Linear")
// and the offset of the call in its caller's source (which tells enc.0 from dec.0).
// Empty for nodes outside any submodule and for graphs traced from C++ callables.
std::vector<std::string> module_scope(const torch::jit::Node* node);

// Sets ir::Node::scope of graph.nodes[first..] (the nodes the converter of `node` added) to
// module_scope(node).
void tag_module_scope(ir::Graph& graph, size_t first, const torch::jit::Node* node);

// Throws ExportError (kInvalidArgument) when options.export_modules_as_functions is set with an
// opset below 15 (ONNX local functions need IR version 8, opset 15), as torch.onnx does.
void check_modules_as_functions(const ExportOptions& options);

// Moves the nodes of every instance of the selected types (qualified TorchScript class names,
// "torch.nn.modules.linear.Linear" without "__torch__.", or bare class names) into ir::Functions
// named by the class ("Linear"; "Linear_1", ... for instances whose bodies differ) in the domain
// of the class's Python module ("torch.nn.modules.linear"; "__main__" for a class of the main
// script), each instance replaced by one call node. Function inputs are the activations and the
// parameters (initializers) the instance reads; outputs the values read after it. Instances of
// selected types nested in other selected instances become nested calls. Adds the function
// domains to model.extra_opsets (version 1). Throws ExportError (kInvalidArgument) for a type with
// no instance in the model, naming the module types it has.
void extract_module_functions(ir::Model& model, const std::set<std::string>& types);

}  // namespace torchonnx::symbolic
