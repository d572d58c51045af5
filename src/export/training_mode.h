// TrainingMode (ExportOptions::training): torch.onnx's select_model_mode_for_export for
// TorchScript modules, and its warnings about the mode.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <functional>
#include <optional>
#include <vector>

#include "common/export_config.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx {

// "EVAL", "PRESERVE", "TRAINING".
const char* mode_name(TrainingMode mode);

// torch.onnx's warnings: an op whose train flag disagrees with the mode asked for
// (check_training_mode; none with PRESERVE), a training export of a model without any op that
// depends on the mode, training dropout below opset 12.
void check_training_mode(const torch::jit::Graph& graph, const ExportConfig& config);

// One module's training flag, read and set (a set may also set the module's submodules, as
// torch::nn::Module::train does: TrainingModeGuard sets and restores in pre-order).
struct TrainingFlag {
  std::function<bool()> get;
  std::function<void(bool)> set;
};

// The training flags of a model: the model's own (none for a model without one: a plain traced
// function, a TorchScript module built in C++ without a `training` attribute) and those of its
// submodules in pre-order.
struct ModelModes {
  std::optional<TrainingFlag> model;
  std::vector<TrainingFlag> submodules;
};
// A TorchScript module's: every module with a `training` attribute.
ModelModes model_modes(const torch::jit::Module& model);

// torch.onnx's select_model_mode_for_export, the one place an export sets training flags: sets
// the model's and every submodule's flag for the export (TRAINING, EVAL; PRESERVE leaves them)
// and restores each one's own flag after, also when the export throws. (torch.onnx restores with
// model.train(originally_training), which loses a submodule mode that differed from the root's.)
class TrainingModeGuard {
 public:
  TrainingModeGuard(ModelModes modes, TrainingMode mode);
  ~TrainingModeGuard();
  TrainingModeGuard(const TrainingModeGuard&) = delete;
  TrainingModeGuard& operator=(const TrainingModeGuard&) = delete;
  // Whether the model is exported in training mode: as asked, or with PRESERVE the model's own
  // mode (a model without a flag is in eval mode).
  bool training() const { return training_; }

 private:
  std::vector<std::pair<TrainingFlag, bool>> saved_;  // in pre-order, the model's first
  bool training_ = false;
};

}  // namespace torchonnx
