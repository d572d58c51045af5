// How each TorchScript node is converted: custom symbolics first, then the built-in registry, and
// the fallbacks of ExportOptions::operator_export_type (export_types.h).
#pragma once

#include <map>
#include <string>

#include "onnx/ir.h"
#include "symbolic/registry.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Node;
}

namespace torchonnx {
struct SymbolicContext;
}

namespace torchonnx::symbolic {

// The converter for `node` at `opset` under `mode`, or an empty function when there is none.
Converter resolve_converter(const torch::jit::Node* node, int opset, const Registry& registry,
                            OperatorExportType mode);

// Adds to model.extra_opsets every non-default domain the graph's (and functions') nodes use:
// version custom_opsets[domain], else the version already there, else 1.
void add_domain_opsets(ir::Model& model, const std::map<std::string, int>& custom_opsets);

// The SymbolicContext of the node `g` is converting (the export's options and parameters, from
// g.config() and g.signature()).
SymbolicContext make_symbolic_context(const GraphContext& g);

}  // namespace torchonnx::symbolic
