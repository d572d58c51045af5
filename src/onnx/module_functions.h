// export_modules_as_functions: instances of selected nn.Module types become ONNX local functions
// (FunctionProto), as torch.onnx 1.13 does (torch/onnx/utils.py _setup_trace_module_map and
// _C._jit_pass_onnx_function_extraction). The conversion tags each node with its module scope
// (symbolic/functions.h); this rewrite of the converted model reads those tags.
#pragma once

#include <map>
#include <set>
#include <string>

#include "onnx/ir.h"

namespace torchonnx {

// Moves the nodes of every instance of the selected types (qualified TorchScript class names,
// "torch.nn.modules.linear.Linear" without "__torch__.", or bare class names) into ir::Functions
// named by the class ("Linear"; "Linear.1", ... for instances whose bodies differ) in the domain
// of the class's Python module ("torch.nn.modules.linear"; "__main__" for a class of the main
// script), each instance replaced by one call node. Function inputs are the activations and the
// parameters (initializers) the instance reads; outputs the values read after it. Instances of
// selected types nested in other selected instances become nested calls. Adds the function
// domains to model.extra_opsets (version 1). Throws ExportError (kInvalidArgument) for a type with
// no instance in the model, naming the module types it has.
// The model's own class (ir::Model::module_type) is selectable too. Instances of a class whose
// bodies differ only in attribute values share a function, those attributes becoming function
// attributes (Note [Function attributes] in the .cpp); `module_attributes` (by module path) are
// recorded on the calls.
// A TorchScript class name without the mangling of its redefinitions:
// "__torch__.___torch_mangle_2.Block" → "__torch__.Block".
std::string demangle_type_name(const std::string& qualified);

void extract_module_functions(
    ir::Model& model, const std::set<std::string>& types,
    const std::map<std::string, ModuleAttributes>& module_attributes = {});

}  // namespace torchonnx
