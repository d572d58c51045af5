// The order of the TorchScript passes that run between capture and conversion.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/export_config.h"
#include "passes/passes.h"

namespace torchonnx::passes {

// Graph::lint() of `graph`; a failure is a std::logic_error (a pass broke the graph: an internal
// error) naming `stage` ("pass RemoveInplaceOps"). PrepareGraph calls it on the captured graph and
// after every pass in builds with TORCHONNX_LINT_GRAPHS or with TORCHONNX_LINT_GRAPHS=1 in the
// environment (Note [Graph lint between passes]).
void LintGraph(const torch::jit::Graph& graph, const std::string& stage);

// `inputs` holds one value per graph input (example inputs, then parameters); `dynamic` the
// dynamic dims of graph inputs by index.
void PrepareGraph(const std::shared_ptr<torch::jit::Graph>& graph,
                  const std::vector<c10::IValue>& inputs, const ExportConfig& config,
                  const DynamicDims& dynamic = {});

}  // namespace torchonnx::passes
