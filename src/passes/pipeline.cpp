#include "passes/pipeline.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

namespace torchonnx::passes {

void PrepareGraph(const std::shared_ptr<torch::jit::Graph>& graph,
                  const std::vector<c10::IValue>& inputs, const ExportOptions& options,
                  const DynamicDims& dynamic) {
  torch::jit::EliminateDeadCode(graph);
  // Before RemoveEvalNoOps: clone() tells a copy from an alias (y = x.clone(); y[0] = v must
  // leave x unchanged), and writes through detach()/contiguous() views reach their base.
  RemoveInplaceOps(*graph);
  FunctionalizeLists(*graph);
  RemoveEvalNoOps(*graph);
  FlattenOutputs(*graph);
  torch::jit::LowerSimpleTuples(graph);
  PropagateTypes(*graph, inputs, options.do_constant_folding, dynamic);
  torch::jit::EliminateDeadCode(graph);
}

}  // namespace torchonnx::passes
