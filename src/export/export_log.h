// The exporter's log lines (written only when the log is enabled: torchonnx/logging.h).
#pragma once

#include <string>

#include "common/export_config.h"

namespace onnx {
class ModelProto;
}
namespace torch::jit {
struct Graph;
}

namespace torchonnx {

// "torchonnx: <what> 12 ops: aten::_convolution x5, aten::relu x7".
void log_graph_ops(const std::string& what, const torch::jit::Graph& graph);
// The ONNX graph made: opsets, node counts by type, inputs, initializers, outputs.
void log_model(const onnx::ModelProto& proto);
// "opset 17, training=EVAL, ..." for the log.
std::string describe_config(const ExportConfig& config);

}  // namespace torchonnx
