// Converts a prepared TorchScript graph (passes done) into an ONNX graph through the registry.
#pragma once

#include <string>
#include <vector>

#include "onnx/ir.h"
#include "passes/passes.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx::symbolic {

class Registry;

struct UnconvertibleOp {
  std::string kind;
  std::vector<std::string> locations;  // one per node, "" where the graph has no source info
};

// Every op in `graph` that has no converter at `opset` (all of them at once).
std::vector<UnconvertibleOp> find_unconvertible_ops(const torch::jit::Graph& graph, int opset,
                                                    const Registry& registry);

struct GraphSignature {
  std::vector<std::string> input_names;    // one per graph input (user inputs, then parameters)
  std::vector<NamedParameter> parameters;  // the trailing graph inputs
  std::vector<std::string> output_names;   // one per graph output
};

ir::Model convert_graph(const torch::jit::Graph& graph, const GraphSignature& signature,
                        const ExportOptions& options, const Registry& registry);

}  // namespace torchonnx::symbolic
