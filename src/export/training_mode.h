// TrainingMode (ExportOptions::training): torch.onnx's select_model_mode_for_export for
// TorchScript modules, and its warnings about the mode.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <utility>
#include <vector>

#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx {

// "EVAL", "PRESERVE", "TRAINING".
const char* mode_name(TrainingMode mode);

// torch.onnx's warnings: an op whose train flag disagrees with the requested mode
// (check_training_mode), a training export of a model without any op that depends on the mode,
// training dropout below opset 12. `training`: whether the model is exported in training mode.
void check_training_mode(const torch::jit::Graph& graph, const ExportOptions& options,
                         bool training);

// Sets the `training` flag of the module and of every submodule for the export (TRAINING, EVAL;
// PRESERVE leaves them) and restores each one's own flag after, also when the export throws.
// (torch.onnx restores with model.train(originally_training), which loses a submodule mode that
// differed from the root's.)
class ModuleModeGuard {
 public:
  ModuleModeGuard(const torch::jit::Module& model, TrainingMode mode);
  ~ModuleModeGuard();
  ModuleModeGuard(const ModuleModeGuard&) = delete;
  ModuleModeGuard& operator=(const ModuleModeGuard&) = delete;
  // Whether the module is exported in training mode (a module without a `training` attribute,
  // built in C++, is in training mode only when TRAINING is asked for).
  bool training() const { return training_; }

 private:
  std::vector<std::pair<torch::jit::Module, bool>> saved_;
  bool training_ = false;
};

}  // namespace torchonnx
