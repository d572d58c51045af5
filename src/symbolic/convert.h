// Converts a prepared TorchScript graph (passes done) into an ONNX graph through the registry.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/named_parameter.h"
#include "onnx/ir.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx::symbolic {

class Registry;

struct UnconvertibleOp {
  std::string kind;
  std::vector<std::string> locations;  // one per node, "" where the graph has no source info
  std::optional<int> lowest_opset;     // the lowest opset it has a converter at, if any
};

// Every op in `graph` that has no converter at `opset` (all of them at once), custom symbolics
// and the fallbacks of `mode` (dispatch.h, export_types.h) included.
std::vector<UnconvertibleOp> find_unconvertible_ops(
    const torch::jit::Graph& graph, int opset, const Registry& registry,
    OperatorExportType mode = OperatorExportType::kOnnx);

// A node that could not be converted, recorded by convert_graph's collect-errors mode.
struct ConversionFailure {
  std::string kind;
  std::string location;  // "" where the graph has no source info
  std::string message;   // the converter's ExportError; "" when no converter exists
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

// With `failures`, runs in collect-errors mode: a node without converter or whose converter throws
// an ExportError is recorded there and the conversion goes on (the model returned is incomplete,
// only for unconvertible_ops).
// `on_progress(done, total)` is called as the main graph's nodes are converted (every 256 nodes
// and at the end).
ir::Model convert_graph(const torch::jit::Graph& graph, const GraphSignature& signature,
                        const ExportOptions& options, const Registry& registry,
                        std::vector<ConversionFailure>* failures = nullptr,
                        const std::function<void(int64_t, int64_t)>& on_progress = {},
                        std::vector<InputReads>* input_reads = nullptr);

}  // namespace torchonnx::symbolic
