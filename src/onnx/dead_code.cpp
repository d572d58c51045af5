#include "onnx/dead_code.h"

#include <algorithm>
#include <memory>
#include <variant>

namespace torchonnx {

void collect_reads(const ir::Graph& g, std::unordered_set<std::string>& reads) {
  for (const auto& node : g.nodes) {
    reads.insert(node.inputs.begin(), node.inputs.end());
    for (const auto& attr : node.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_reads(**sub, reads);
        for (const auto& out : (*sub)->outputs) reads.insert(out.name);
      }
    }
  }
}

Liveness find_live_nodes(const std::vector<ir::Node>& nodes,
                         const std::vector<ir::ValueInfo>& outputs) {
  Liveness result;
  std::unordered_set<std::string>& live = result.live;
  for (const auto& out : outputs) live.insert(out.name);
  result.keep.assign(nodes.size(), false);
  for (size_t i = nodes.size(); i-- > 0;) {
    const ir::Node& n = nodes[i];
    bool used = false;
    for (const auto& out : n.outputs) used = used || live.count(out);
    if (!used) continue;
    result.keep[i] = true;
    live.insert(n.inputs.begin(), n.inputs.end());
    for (const auto& attr : n.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_reads(**sub, live);
      }
    }
  }
  return result;
}

void remove_dead_nodes(ir::Graph& graph) {
  const Liveness liveness = find_live_nodes(graph.nodes, graph.outputs);
  std::vector<ir::Node> nodes;
  nodes.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (liveness.keep[i]) nodes.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(nodes);
  std::vector<ir::Initializer> inits;
  for (auto& init : graph.initializers) {
    if (liveness.live.count(init.name)) inits.push_back(std::move(init));
  }
  graph.initializers = std::move(inits);
}

int remove_unused_inputs(ir::Graph& graph, std::unordered_set<std::string> reads) {
  collect_reads(graph, reads);
  for (const auto& out : graph.outputs) reads.insert(out.name);
  const size_t before = graph.inputs.size();
  graph.inputs.erase(std::remove_if(graph.inputs.begin(), graph.inputs.end(),
                                    [&](const ir::ValueInfo& v) { return !reads.count(v.name); }),
                     graph.inputs.end());
  return static_cast<int>(before - graph.inputs.size());
}

}  // namespace torchonnx
