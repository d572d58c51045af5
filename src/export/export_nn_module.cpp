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
  // select_model_mode_for_export: every submodule's own mode, restored after (in pre-order, so
  // that a child's restore follows its parent's recursive train()).
  std::vector<std::pair<std::shared_ptr<torch::nn::Module>, bool>> saved;
  for (const auto& m : module.modules(/*include_self=*/false))
    saved.emplace_back(m, m->is_training());
  const bool was_training = module.is_training();
  auto restore = [&] {
    module.train(was_training);
    for (auto& [m, training] : saved) m->train(training);
  };
  ExportOptions resolved = options;
  if (options.training == TrainingMode::kEval) module.eval();  // torch.onnx's default
  if (options.training == TrainingMode::kTraining) module.train(true);
  // PRESERVE: the module's mode decides; the warnings about ops whose train flag disagrees then
  // compare with that mode.
  if (options.training == TrainingMode::kPreserve) {
    resolved.training = was_training ? TrainingMode::kTraining : TrainingMode::kEval;
  }
  NamedTensors parameters;
  for (const auto& item : module.named_parameters())
    parameters.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) parameters.emplace_back(item.key(), item.value());
  try {
    export_function(forward, args, parameters, path, resolved);
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

}  // namespace torchonnx
