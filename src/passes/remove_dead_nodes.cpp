#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "passes/passes.h"

namespace torchonnx::passes {

namespace {

// Note [Dead code elimination without AliasDb]
// torch::jit::EliminateDeadCode(graph) builds an AliasDb, whose cost grows faster than the graph
// (1.1 s of 7.7 s for a 100k-node graph with 45k parameters). It needs one only to delete dead
// in-place ops; on a graph without any (the common case, and always after RemoveInplaceOps for
// tensors) the block form, which treats every mutating op as live, gives the same result.

// Note [Linear dead code elimination]
// torch::jit::EliminateDeadCode's block form keeps its marks in std::unordered_sets of nodes and
// values and a memo map: at 100k nodes its hashing and allocation make it grow ~25x for 10x the
// nodes (0.4-0.7 s a call). This is the same algorithm with the same results, in one reverse
// sweep per block: a value is live when a live node uses it or it is a block output whose outer
// value is live (all graph outputs are); a node is live when an output is live or it has side
// effects (Node::hasSideEffects, a mutable schema, or such a node in its blocks). Every use of a
// value comes after its definition, so when the sweep reaches a node all of its users are
// decided and a dead node can be destroyed at once. Liveness is a byte per Value::unique().
// Loops need torch's fixed point over the body (a carried value used inside keeps its producer
// live), and fork/GradOf/Reverse their own rules: graphs with those keep torch's pass.
class LinearDeadCodeEliminator {
 public:
  // One walk over the graph: whether it mutates (has_mutation's test), whether every node with
  // blocks is a prim::If (what run() handles), and the largest Value::unique().
  struct Survey {
    bool mutation = false;
    bool supported = true;
    size_t max_unique = 0;
  };
  static void survey(torch::jit::Block* block, Survey& s) {
    for (torch::jit::Value* v : block->inputs()) s.max_unique = std::max(s.max_unique, v->unique());
    for (torch::jit::Node* node : block->nodes()) {
      for (torch::jit::Value* v : node->outputs()) {
        s.max_unique = std::max(s.max_unique, v->unique());
      }
      if (node->kind() == c10::prim::SetAttr) s.mutation = true;
      const c10::FunctionSchema* schema = node->maybeSchema();
      if (schema && schema->is_mutable()) s.mutation = true;
      if (node->blocks().empty()) continue;
      if (node->kind() != c10::prim::If) s.supported = false;
      for (torch::jit::Block* sub : node->blocks()) survey(sub, s);
    }
  }

  explicit LinearDeadCodeEliminator(size_t max_unique) : live_(max_unique + 1, 0) {}

  void run(torch::jit::Block* top) {
    for (torch::jit::Value* out : top->outputs()) live_[out->unique()] = 1;
    sweep(top);
  }

 private:
  // torch's pass without an AliasDb also keeps every op with a mutable schema (its effects are
  // untracked): run() is only used on graphs without any (Survey::mutation).
  bool has_side_effects(torch::jit::Node* node) {
    if (node->hasSideEffects()) return true;
    for (torch::jit::Block* sub : node->blocks()) {
      for (torch::jit::Node* inner : sub->nodes()) {
        if (has_side_effects(inner)) return true;
      }
    }
    return false;
  }

  bool is_live(const torch::jit::Value* v) const { return live_[v->unique()] != 0; }

  void sweep(torch::jit::Block* block) {
    auto nodes = block->nodes().reverse();
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
      torch::jit::Node* node = *it;
      bool live = false;
      for (torch::jit::Value* out : node->outputs()) live = live || is_live(out);
      live = live || has_side_effects(node);
      if (node->kind() == c10::prim::If) {
        // torch::jit's removeDeadBlockOutputs: outputs without uses go, with their block outputs.
        for (size_t i = node->outputs().size(); i-- > 0;) {
          if (node->outputs()[i]->hasUses()) continue;
          node->eraseOutput(i);
          for (torch::jit::Block* sub : node->blocks()) sub->eraseOutput(i);
        }
        for (torch::jit::Block* sub : node->blocks()) {
          for (size_t i = 0; i < node->outputs().size(); ++i) {
            if (is_live(node->outputs()[i])) live_[sub->outputs()[i]->unique()] = 1;
          }
          sweep(sub);
        }
      }
      if (live) {
        for (torch::jit::Value* in : node->inputs()) live_[in->unique()] = 1;
      } else if (!node->hasUses()) {
        it.destroyCurrent();
      }
    }
  }

  std::vector<uint8_t> live_;
};

}  // namespace

void RemoveDeadNodes(const std::shared_ptr<torch::jit::Graph>& graph) {
  LinearDeadCodeEliminator::Survey survey;
  LinearDeadCodeEliminator::survey(graph->block(), survey);
  if (survey.mutation) {
    torch::jit::EliminateDeadCode(graph);  // Note [Dead code elimination without AliasDb]
  } else if (!survey.supported) {
    torch::jit::EliminateDeadCode(graph->block(), /*recurse=*/true);
  } else {
    LinearDeadCodeEliminator(survey.max_unique).run(graph->block());
  }
}

}  // namespace torchonnx::passes
