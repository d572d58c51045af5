// TrainingMode (torch.onnx's select_model_mode_for_export and its warnings).
#include "export/training_mode.h"

#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "symbolic/context.h"
#include "torchonnx/logging.h"

namespace torchonnx {

const char* mode_name(TrainingMode mode) {
  switch (mode) {
    case TrainingMode::kEval:
      return "EVAL";
    case TrainingMode::kPreserve:
      return "PRESERVE";
    case TrainingMode::kTraining:
      return "TRAINING";
  }
  return "?";
}

namespace {

// Where the train flag of an op that behaves differently in training is (input index), or -1.
int train_flag_index(const torch::jit::Node* node) {
  static const std::map<std::string, int> kFlags = {{"aten::dropout", 2},
                                                    {"aten::dropout_", 2},
                                                    {"aten::feature_dropout", 2},
                                                    {"aten::feature_dropout_", 2},
                                                    {"aten::alpha_dropout", 2},
                                                    {"aten::alpha_dropout_", 2},
                                                    {"aten::feature_alpha_dropout", 2},
                                                    {"aten::feature_alpha_dropout_", 2},
                                                    {"aten::native_dropout", 2},
                                                    {"aten::batch_norm", 5}};
  auto it = kFlags.find(node->kind().toQualString());
  return it == kFlags.end() ? -1 : it->second;
}

void find_training_ops(const torch::jit::Block* block,
                       std::vector<std::pair<const torch::jit::Node*, std::optional<bool>>>& out) {
  for (const torch::jit::Node* node : block->nodes()) {
    for (const auto* sub : node->blocks()) find_training_ops(sub, out);
    const int i = train_flag_index(node);
    if (i < 0 || static_cast<size_t>(i) >= node->inputs().size()) continue;
    auto flag = torch::jit::toIValue(node->input(i));
    std::optional<bool> train;
    if (flag && flag->isBool()) train = flag->toBool();
    if (flag && flag->isNone()) train = true;  // native_dropout(train=None)
    out.emplace_back(node, train);
  }
}

// A dropout whose probability is a constant 0: the same in either mode.
bool is_identity_dropout(const torch::jit::Node* node) {
  if (node->kind() == torch::jit::aten::batch_norm || node->inputs().size() < 2) return false;
  auto p = torch::jit::toIValue(node->input(1));
  return p && p->isDouble() && p->toDouble() == 0.0;
}

}  // namespace

void check_training_mode(const torch::jit::Graph& graph, const ExportConfig& config) {
  const bool training = config.training;
  std::vector<std::pair<const torch::jit::Node*, std::optional<bool>>> ops;
  find_training_ops(graph.block(), ops);
  std::set<std::string> warned;
  for (const auto& [node, train] : ops) {
    if (config.asked_training == TrainingMode::kPreserve || !train || *train == training) continue;
    if (is_identity_dropout(node)) continue;  // p = 0 (swin's attention dropout): no difference
    const std::string kind = node->kind().toQualString();
    if (!warned.insert(kind + (*train ? "1" : "0")).second) continue;
    const std::string where = symbolic::source_location(node);
    warn(
        fmt::format("the export mode is {}, but operator '{}'{} is set to train={}. Exporting "
                    "with train={} (its output in the ONNX graph is the one libtorch computes "
                    "with that flag).",
                    mode_name(config.asked_training), kind, where.empty() ? "" : " (" + where + ")",
                    *train ? "True" : "False", *train ? "True" : "False"));
  }
  if (!training) return;
  log(fmt::format("torchonnx: exporting in training mode: {} op(s) depend on it", ops.size()));
  const bool any_dropout = std::any_of(ops.begin(), ops.end(), [](const auto& op) {
    return op.first->kind() != torch::jit::aten::batch_norm && op.second.value_or(true);
  });
  if (any_dropout && config.opset < 12) {
    // torch.onnx warns that opsets < 12 cannot export dropout in training correctly (its Dropout
    // without training_mode is the identity in inference runtimes).
    warn(
        fmt::format("exporting in training mode at opset {}: ONNX has Dropout with a "
                    "training_mode input from opset 12 only, so torchonnx writes each training "
                    "dropout as a RandomUniformLike mask (x * mask / (1 - p)), which runtimes "
                    "run correctly but training tools will not recognize as Dropout. Remedy: "
                    "opset_version >= 12.",
                    config.opset));
  }
  if (ops.empty()) {
    warn(
        fmt::format("training={} but the model has no op that behaves differently in training "
                    "(dropout, batch_norm): the ONNX graph is the same as in eval mode.",
                    mode_name(config.asked_training)));
  }
  // torch.onnx also warns here that constant folding may fold learnable parameters; torchonnx's
  // folding (passes/propagate_types.cpp) folds only values computed from constants and static
  // shapes, never parameters, so the warning does not apply.
}

ModelModes model_modes(const torch::jit::Module& model) {
  auto flag = [](torch::jit::Module m) {
    return TrainingFlag{[m] { return m.attr("training").toBool(); },
                        [m](bool on) mutable { m.setattr("training", on); }};
  };
  ModelModes modes;
  if (model.hasattr("training")) modes.model = flag(model);
  bool self = true;  // modules() starts with the model itself
  for (const torch::jit::Module& m : model.modules()) {
    if (!std::exchange(self, false) && m.hasattr("training")) modes.submodules.push_back(flag(m));
  }
  return modes;
}

TrainingModeGuard::TrainingModeGuard(ModelModes modes, TrainingMode mode) {
  if (modes.model) {
    training_ = modes.model->get();
    saved_.emplace_back(*modes.model, training_);
  }
  for (auto& m : modes.submodules) {
    const bool was = m.get();
    saved_.emplace_back(std::move(m), was);
  }
  if (mode != TrainingMode::kPreserve) {
    training_ = mode == TrainingMode::kTraining;
    for (auto& [m, was] : saved_) m.set(training_);
  }
}

TrainingModeGuard::~TrainingModeGuard() {
  for (auto& [m, was] : saved_) m.set(was);
}

}  // namespace torchonnx
