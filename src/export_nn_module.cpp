// export_module for torch::nn::Module: the only file that needs <torch/nn/module.h>.
#include <torch/nn/module.h>

#include "torchonnx/export.h"

namespace torchonnx {

void export_module(torch::nn::Module& module, const TracedFunction& forward,
                   const std::vector<c10::IValue>& args, const std::string& path,
                   const ExportOptions& options) {
  // Under no-grad, but with the parameters passed to the tracer as inputs: that keeps their
  // state_dict names and works whether or not they require grad.
  torch::NoGradGuard no_grad;
  const bool was_training = module.is_training();
  module.eval();  // torch.onnx's default TrainingMode.EVAL
  NamedTensors parameters;
  for (const auto& item : module.named_parameters())
    parameters.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) parameters.emplace_back(item.key(), item.value());
  try {
    export_function(forward, args, parameters, path, options);
  } catch (...) {
    module.train(was_training);
    throw;
  }
  module.train(was_training);
}

}  // namespace torchonnx
