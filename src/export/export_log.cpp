// What the exporter writes to the log (torch.onnx's log API, include/torchonnx/logging.h).
#include "export/export_log.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <string>
#include <vector>

#include "export/training_mode.h"
#include "torchonnx/logging.h"

namespace torchonnx {
namespace {

void count_ops(const torch::jit::Block* block, std::map<std::string, int>& counts) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() != torch::jit::prim::Constant) ++counts[node->kind().toQualString()];
    for (const auto* sub : node->blocks()) count_ops(sub, counts);
  }
}

}  // namespace

// "torchonnx: <what> 12 ops: aten::_convolution x5, aten::relu x7" (when the log is enabled).
void log_graph_ops(const std::string& what, const torch::jit::Graph& graph) {
  if (!is_onnx_log_enabled()) return;
  std::map<std::string, int> counts;
  count_ops(graph.block(), counts);
  std::vector<std::string> parts;
  int total = 0;
  for (const auto& [kind, n] : counts) {
    parts.push_back(n == 1 ? kind : fmt::format("{} x{}", kind, n));
    total += n;
  }
  log(fmt::format("torchonnx: {} {} ops: {}", what, total, fmt::join(parts, ", ")));
}

void log_model(const onnx::ModelProto& proto) {
  if (!is_onnx_log_enabled()) return;
  std::map<std::string, int> counts;
  for (const auto& node : proto.graph().node()) ++counts[node.op_type()];
  std::vector<std::string> parts;
  for (const auto& [type, n] : counts)
    parts.push_back(n == 1 ? type : fmt::format("{} x{}", type, n));
  std::vector<std::string> opsets;
  for (const auto& o : proto.opset_import()) {
    opsets.push_back(
        fmt::format("{}={}", o.domain().empty() ? "ai.onnx" : o.domain(), o.version()));
  }
  log(fmt::format(
      "torchonnx: ONNX graph ({}), checked by onnx's checker and shape inference: {} "
      "nodes ({}), {} inputs, {} initializers, {} outputs",
      fmt::join(opsets, ", "), proto.graph().node_size(), fmt::join(parts, ", "),
      proto.graph().input_size(), proto.graph().initializer_size(), proto.graph().output_size()));
}

std::string describe_config(const ExportConfig& config) {
  return fmt::format(
      "opset {}, training={}, do_constant_folding={}, export_params={}, "
      "keep_initializers_as_inputs={}",
      config.opset, mode_name(config.asked_training), config.do_constant_folding,
      config.export_params, config.keep_initializers_as_inputs);
}

}  // namespace torchonnx
