#include "passes/pipeline.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inline_fork_wait.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace torchonnx::passes {

namespace {

// Note [Graph lint between passes]
// In builds with TORCHONNX_LINT_GRAPHS (the default of Debug and sanitizer builds, root
// CMakeLists.txt), or with TORCHONNX_LINT_GRAPHS=1 in the environment, PrepareGraph runs
// Graph::lint() on the captured graph and after every pass: a pass that leaves a use before its
// definition, a value read outside its block or a node outside the graph fails there, named,
// instead of in a converter or in ONNX Runtime much later.
bool lint_enabled() {
#ifdef TORCHONNX_LINT_GRAPHS
  return true;
#else
  static const bool enabled = [] {
    const char* v = std::getenv("TORCHONNX_LINT_GRAPHS");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return enabled;
#endif
}

// Runs each pass; with TORCHONNX_STAGE_TIMES=1 prints its seconds on stderr (for bench/scale and
// profiling), with TORCHONNX_DEBUG_PASSES=1 the graph after it (for debugging a pass), and lints
// the graph after it (Note [Graph lint between passes]).
class PassRunner {
 public:
  explicit PassRunner(const torch::jit::Graph& graph)
      : graph_(graph),
        timed_(std::getenv("TORCHONNX_STAGE_TIMES") != nullptr),
        dump_(std::getenv("TORCHONNX_DEBUG_PASSES") != nullptr),
        lint_(lint_enabled()) {
    if (lint_) LintGraph(graph_, "capture (before the passes)");
    if (dump_) std::cerr << "torchonnx: graph before the passes:\n" << graph_.toString(false);
  }

  template <typename F>
  void run(const char* name, F&& pass) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    if (timed_) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << "torchonnx: pass " << name << ": " << s << " s\n";
    }
    if (dump_) std::cerr << "torchonnx: graph after " << name << ":\n" << graph_.toString(false);
    if (lint_) LintGraph(graph_, std::string("pass ") + name);
  }

 private:
  const torch::jit::Graph& graph_;
  bool timed_;
  bool dump_;
  bool lint_;
};

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

void eliminate_dead_code(const std::shared_ptr<torch::jit::Graph>& graph) {
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

}  // namespace

void LintGraph(const torch::jit::Graph& graph, const std::string& stage) {
  try {
    graph.lint();
  } catch (const c10::Error& e) {
    throw std::logic_error("torchonnx bug: the TorchScript graph fails Graph::lint() after " +
                           stage + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw std::logic_error("torchonnx bug: the TorchScript graph fails Graph::lint() after " +
                           stage + ": " + e.what());
  }
}

void PrepareGraph(const std::shared_ptr<torch::jit::Graph>& graph,
                  const std::vector<c10::IValue>& inputs, const ExportOptions& options,
                  const DynamicDims& dynamic) {
  PassRunner runner(*graph);
  // A torch.jit.fork/wait (prim::fork with its Subgraph, aten::wait): the forked body inline, run
  // in order, as torch.onnx's _jit_pass_inline_fork_wait does.
  runner.run("InlineForkWait", [&] { torch::jit::InlineForkWait(graph); });
  runner.run("EliminateDeadCode", [&] { eliminate_dead_code(graph); });
  // Before RemoveEvalNoOps: clone() tells a copy from an alias (y = x.clone(); y[0] = v must
  // leave x unchanged), and writes through detach()/contiguous() views reach their base.
  runner.run("RemoveInplaceOps", [&] { RemoveInplaceOps(*graph); });
  runner.run("FunctionalizeLists", [&] { FunctionalizeLists(*graph); });
  runner.run("RemoveEvalNoOps", [&] { RemoveEvalNoOps(*graph); });
  runner.run("LowerBranchTuples", [&] { LowerBranchTuples(*graph); });
  // torch.onnx returns a scripted model's None outputs as empty optionals from opset 15 (the
  // Optional op) and drops them below.
  const bool keep_none = options.opset_version >= 15;
  // torch.onnx returns a ScriptModule's list of tensors as one sequence (opset 11+).
  const bool keep_lists = options.opset_version >= 11;
  runner.run("FlattenOutputs", [&] { FlattenOutputs(*graph, keep_none, keep_lists); });
  runner.run("LowerConstantKeyDicts", [&] { LowerConstantKeyDicts(*graph); });
  runner.run("LowerSimpleTuples", [&] {
    // LowerSimpleTuples(graph) is this followed by EliminateDeadCode(graph).
    ForwardTupleCasts(graph->block());
    torch::jit::LowerSimpleTuples(graph->block());
    eliminate_dead_code(graph);
  });
  runner.run("LowerBranchLists", [&] {
    if (LowerBranchLists(*graph)) {
      FlattenOutputs(*graph, keep_none, keep_lists);  // a returned list built again after its If
      eliminate_dead_code(graph);
    }
  });
  runner.run("PropagateTypes",
             [&] { PropagateTypes(*graph, inputs, options.do_constant_folding, dynamic); });
  // The trip counts type propagation made constants unroll the loops that compute no tensor;
  // their repeated bodies fold in a second propagation.
  bool unrolled = false;
  runner.run("UnrollFoldableLoops", [&] { unrolled = UnrollFoldableLoops(*graph); });
  if (unrolled) {
    runner.run("PropagateTypes (unrolled loops)",
               [&] { PropagateTypes(*graph, inputs, options.do_constant_folding, dynamic); });
  }
  // Branches that type propagation inlined leave tuples built and unpacked side by side (a
  // helper returning `(None, x)` under a constant flag): their elements are forwarded.
  runner.run("LowerSimpleTuples (inlined branches)", [&] {
    ForwardTupleCasts(graph->block());
    torch::jit::LowerSimpleTuples(graph->block());
  });
  runner.run("EliminateDeadCode", [&] { eliminate_dead_code(graph); });
  runner.run("LowerNestedFromMask", [&] { LowerNestedFromMask(*graph); });
  runner.run("LowerNestedLists", [&] {
    if (LowerNestedLists(*graph)) FlattenOutputs(*graph, keep_none, keep_lists);
  });
  if (!keep_none) runner.run("DropNoneOutputs", [&] { DropNoneOutputs(*graph); });
}

}  // namespace torchonnx::passes
