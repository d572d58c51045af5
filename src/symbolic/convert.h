// Converts a prepared TorchScript graph (passes done) into an ONNX graph through the registry.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/export_config.h"
#include "common/named_parameter.h"
#include "onnx/ir.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx::symbolic {

class Registry;

// A node that could not be converted (convert_graph).
struct ConversionFailure {
  std::string kind;
  std::string location;      // "" where the graph has no source info
  std::string message;       // the converter's ExportError; "" when no converter exists
  std::exception_ptr error;  // that ExportError; null when no converter exists
};

// The graph inputs one converter of the main graph read (directly, or in a subgraph it made) and
// the values it bound to its TorchScript node's outputs: ExportOptions::drop_unused_inputs keeps
// an input whose reader's result stays computed after optimization (export/pipeline.cpp).
struct InputReads {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

struct GraphSignature {
  std::vector<std::string> input_names;    // one per graph input (user inputs, then parameters)
  std::vector<NamedParameter> parameters;  // the trailing graph inputs
  std::vector<std::string> output_names;   // one per graph output
};

// A node without converter or whose converter throws an ExportError does not stop the conversion:
// it is recorded, its outputs bound to placeholders, and the nodes after it are converted (a later
// converter's other exception on them is dropped). With `failures`, the collect-errors mode, they
// are recorded there (the model returned is incomplete, only for unconvertible_ops). Without,
// nodes without converter are refused all at once (ExportError kUnsupportedOp naming each op, its
// nodes' source locations and the opset it converts from); else the first converter's ExportError
// is thrown.
// `on_progress(done, total)` is called as the main graph's nodes are converted (every 256 nodes
// and at the end).
ir::Model convert_graph(const torch::jit::Graph& graph, const GraphSignature& signature,
                        const ExportConfig& config, const Registry& registry,
                        std::vector<ConversionFailure>* failures = nullptr,
                        const std::function<void(int64_t, int64_t)>& on_progress = {},
                        std::vector<InputReads>* input_reads = nullptr);

}  // namespace torchonnx::symbolic
