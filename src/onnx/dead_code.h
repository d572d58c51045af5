// Dead-code removal on the ONNX graph, shared by the conversion (symbolic/convert.cpp) and the
// optimizer (onnx/optimize.cpp).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "onnx/ir.h"

namespace torchonnx {

// Every name the nodes of `g` and of its subgraphs read (outer-scope references included), and
// the outputs of those subgraphs.
void collect_reads(const ir::Graph& g, std::unordered_set<std::string>& reads);

// Which of `nodes` (in topological order) compute something `outputs` need, walking backwards from
// the outputs; values read by a subgraph (ONNX's outer-scope references) count as read by the node
// that owns it.
struct Liveness {
  std::vector<bool> keep;                // one per node
  std::unordered_set<std::string> live;  // the outputs and every value a kept node reads
};
Liveness find_live_nodes(const std::vector<ir::Node>& nodes,
                         const std::vector<ir::ValueInfo>& outputs);

// Drops the nodes whose outputs nothing reads, and the initializers nothing reads.
void remove_dead_nodes(ir::Graph& graph);

// Drops the graph inputs that no node (or subgraph) reads, that are no graph output and that are
// not in `kept` (ExportOptions::drop_unused_inputs); returns how many.
int remove_unused_inputs(ir::Graph& graph, std::unordered_set<std::string> kept = {});

}  // namespace torchonnx
