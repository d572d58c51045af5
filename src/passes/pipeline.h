// The order of the TorchScript passes that run between capture and conversion.
#pragma once

#include <memory>
#include <vector>

#include "passes/passes.h"
#include "torchonnx/export.h"

namespace torchonnx::passes {

// `inputs` holds one value per graph input (example inputs, then parameters); `dynamic` the
// dynamic dims of graph inputs by index.
void PrepareGraph(const std::shared_ptr<torch::jit::Graph>& graph,
                  const std::vector<c10::IValue>& inputs, const ExportOptions& options,
                  const DynamicDims& dynamic = {});

}  // namespace torchonnx::passes
