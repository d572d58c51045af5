#include "passes/pipeline.h"

#include <torch/csrc/jit/ir/ir.h>
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
                  const std::vector<c10::IValue>& inputs, const ExportConfig& config,
                  const DynamicDims& dynamic) {
  PassRunner runner(*graph);
  // A torch.jit.fork/wait (prim::fork with its Subgraph, aten::wait): the forked body inline, run
  // in order, as torch.onnx's _jit_pass_inline_fork_wait does.
  runner.run("InlineForkWait", [&] { torch::jit::InlineForkWait(graph); });
  runner.run("EliminateDeadCode", [&] { RemoveDeadNodes(graph); });
  // Before RemoveEvalNoOps: clone() tells a copy from an alias (y = x.clone(); y[0] = v must
  // leave x unchanged), and writes through detach()/contiguous() views reach their base.
  runner.run("RemoveInplaceOps", [&] { RemoveInplaceOps(*graph); });
  runner.run("FunctionalizeLists", [&] { FunctionalizeLists(*graph); });
  runner.run("RemoveEvalNoOps", [&] { RemoveEvalNoOps(*graph); });
  runner.run("LowerBranchTuples", [&] { LowerBranchTuples(*graph); });
  // torch.onnx returns a scripted model's None outputs as empty optionals from opset 15 (the
  // Optional op) and drops them below.
  const bool keep_none = config.opset >= 15;
  // torch.onnx returns a ScriptModule's list of tensors as one sequence (opset 11+).
  const bool keep_lists = config.opset >= 11;
  runner.run("FlattenOutputs", [&] { FlattenOutputs(*graph, keep_none, keep_lists); });
  runner.run("LowerConstantKeyDicts", [&] { LowerConstantKeyDicts(*graph); });
  runner.run("LowerSimpleTuples", [&] {
    // LowerSimpleTuples(graph) is this followed by EliminateDeadCode(graph).
    ForwardTupleCasts(graph->block());
    torch::jit::LowerSimpleTuples(graph->block());
    RemoveDeadNodes(graph);
  });
  runner.run("LowerBranchLists", [&] {
    if (LowerBranchLists(*graph)) {
      FlattenOutputs(*graph, keep_none, keep_lists);  // a returned list built again after its If
      RemoveDeadNodes(graph);
    }
  });
  runner.run("PropagateTypes",
             [&] { PropagateTypes(*graph, inputs, config.do_constant_folding, dynamic); });
  // The trip counts type propagation made constants unroll the loops that compute no tensor;
  // their repeated bodies fold in a second propagation.
  bool unrolled = false;
  runner.run("UnrollFoldableLoops", [&] { unrolled = UnrollFoldableLoops(*graph); });
  if (unrolled) {
    runner.run("PropagateTypes (unrolled loops)",
               [&] { PropagateTypes(*graph, inputs, config.do_constant_folding, dynamic); });
  }
  // Branches that type propagation inlined leave tuples built and unpacked side by side (a
  // helper returning `(None, x)` under a constant flag): their elements are forwarded.
  runner.run("LowerSimpleTuples (inlined branches)", [&] {
    ForwardTupleCasts(graph->block());
    torch::jit::LowerSimpleTuples(graph->block());
  });
  runner.run("EliminateDeadCode", [&] { RemoveDeadNodes(graph); });
  runner.run("LowerNestedFromMask", [&] { LowerNestedFromMask(*graph); });
  runner.run("LowerNestedLists", [&] {
    if (LowerNestedLists(*graph)) FlattenOutputs(*graph, keep_none, keep_lists);
  });
  if (!keep_none) runner.run("DropNoneOutputs", [&] { DropNoneOutputs(*graph); });
}

}  // namespace torchonnx::passes
