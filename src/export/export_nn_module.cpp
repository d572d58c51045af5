// export_module for torch::nn::Module: the only file that needs <torch/nn/module.h>.
#include <torch/nn/module.h>

#include "export/pipeline.h"
#include "export/training_mode.h"
#include "torchonnx/export.h"

namespace torchonnx {

namespace {

// The module's training flags for TrainingModeGuard. nn::Module::train sets the submodules as
// well: the guard sets and restores in pre-order, so each submodule ends with its own flag.
ModelModes nn_module_modes(torch::nn::Module& module) {
  auto flag = [](torch::nn::Module* m) {
    return TrainingFlag{[m] { return m->is_training(); }, [m](bool on) { m->train(on); }};
  };
  ModelModes modes;
  modes.model = flag(&module);
  for (const auto& m : module.modules(/*include_self=*/false)) {
    modes.submodules.push_back(flag(m.get()));
  }
  return modes;
}

}  // namespace

void export_module(torch::nn::Module& module, const TracedFunction& forward,
                   const std::vector<c10::IValue>& args, const std::string& path,
                   const ExportOptions& options) {
  // Under no-grad, but with the parameters passed to the tracer as inputs: that keeps their
  // state_dict names and works whether or not they require grad.
  torch::NoGradGuard no_grad;
  NamedTensors parameters;
  for (const auto& item : module.named_parameters())
    parameters.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) parameters.emplace_back(item.key(), item.value());
  const ModelModes modes = nn_module_modes(module);
  pipeline::export_to_file(pipeline::TraceSource{&forward, &args, &parameters, &modes}, path,
                           options);
}

}  // namespace torchonnx
