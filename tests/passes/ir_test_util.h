// Pass tests: TorchScript IR text in, the pass, IR text out checked with libtorch's FileCheck.
//
//   auto g = parse_graph(R"IR(graph(%x : Tensor): ...)IR");
//   passes::RemoveEvalNoOps(*g);
//   expect_ir(*g, R"(
//     # CHECK: aten::relu(%x)
//     # CHECK-NOT: aten::detach
//   )");
//
// Values a pass creates have numbered names (%5): checks name the values of the input text, and
// node_of()/kinds() look at the structure where a check needs a created value.
#pragma once

#include <gtest/gtest.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/testing/file_check.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace torchonnx::testing {

struct ParsedGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::unordered_map<std::string, torch::jit::Value*> values;  // by their names in the text
  torch::jit::Value* operator[](const std::string& name) const { return values.at(name); }
};

inline ParsedGraph parse_ir(const std::string& ir) {
  ParsedGraph out{std::make_shared<torch::jit::Graph>(), {}};
  torch::jit::parseIR(ir, out.graph.get(), out.values);
  // libtorch 1.13's parser names only the graph's inputs: name every value as in the text, so
  // that checks can name them (numbered names stay numbers).
  for (auto& [name, value] : out.values) {
    if (name.find_first_not_of("0123456789") != std::string::npos) value->setDebugName(name);
  }
  return out;
}

inline std::shared_ptr<torch::jit::Graph> parse_graph(const std::string& ir) {
  return parse_ir(ir).graph;
}

// FileCheck's directives (# CHECK:, # CHECK-NEXT:, # CHECK-NOT:, # CHECK-SAME:, # CHECK-DAG:,
// # CHECK-COUNT-N:) against the graph's text; the graph is linted first. A gtest failure shows
// FileCheck's message and the whole graph.
inline void expect_ir(const torch::jit::Graph& graph, const std::string& checks) {
  try {
    graph.lint();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the graph fails lint(): " << e.what() << "\n" << graph.toString();
    return;
  }
  try {
    torch::jit::testing::FileCheck().run(checks, graph);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\nthe graph:\n" << graph.toString();
  }
}

// The qualified kinds of the nodes of `block` and of its sub-blocks, in order ("aten::add").
inline void collect_kinds(const torch::jit::Block* block, std::vector<std::string>& out) {
  for (const torch::jit::Node* node : block->nodes()) {
    out.emplace_back(node->kind().toQualString());
    for (const torch::jit::Block* sub : node->blocks()) collect_kinds(sub, out);
  }
}

inline int count_kind(const torch::jit::Graph& graph, const std::string& kind) {
  std::vector<std::string> kinds;
  collect_kinds(graph.block(), kinds);
  int n = 0;
  for (const auto& k : kinds) n += k == kind;
  return n;
}

// The qualified kind of the node that produces `v`.
inline std::string producer_kind(const torch::jit::Value* v) {
  return v->node()->kind().toQualString();
}

// The first node of `kind` in the graph (sub-blocks included), or nullptr.
inline torch::jit::Node* find_node(torch::jit::Block* block, const std::string& kind) {
  for (torch::jit::Node* node : block->nodes()) {
    if (node->kind().toQualString() == kind) return node;
    for (torch::jit::Block* sub : node->blocks()) {
      if (torch::jit::Node* found = find_node(sub, kind)) return found;
    }
  }
  return nullptr;
}

}  // namespace torchonnx::testing
