// The training mode of an export (ExportOptions::training, `--training`), the export flags of
// torch.onnx's item 4 (export_params, keep_initializers_as_inputs, do_constant_folding and their
// CLI flags), is_in_onnx_export and the log.
//
// Models are built in C++ as TorchScript modules with a `training` attribute (as torch.jit.script
// gives every nn.Module), whose forward reads self.training: the mode at capture time decides.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "support/expect_error.h"
#include "support/harness.h"
#include "torchonnx/logging.h"

namespace torchonnx::testing {
namespace {

using Inputs = std::vector<c10::IValue>;

// A TorchScript module with a `training` attribute (what torch.jit.script gives an nn.Module).
torch::jit::Module module_with_mode(const std::string& name, bool training) {
  torch::jit::Module m(name);
  m.register_attribute("training", c10::BoolType::get(), training);
  return m;
}

// Exports `m` with `options`, runs the ONNX model in ORT on `inputs` and expects `expected`.
void expect_ort_gives(const torch::jit::Module& m, const Inputs& inputs,
                      const std::vector<at::Tensor>& expected, const ExportOptions& options,
                      const std::string& what) {
  std::string dir = temp_dir("training");
  export_model(m, inputs, dir + "/model.onnx", options);
  write_test_data(dir, inputs, expected);
  OrtResult r = run_in_ort(dir + "/model.onnx", dir, {1e-4});
  EXPECT_TRUE(r.ok) << what << ": " << r.report;
}

std::vector<const onnx::NodeProto*> nodes_of(const onnx::ModelProto& p, const std::string& type) {
  std::vector<const onnx::NodeProto*> out;
  for (const auto& n : p.graph().node()) {
    if (n.op_type() == type) out.push_back(&n);
  }
  return out;
}

int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, int64_t missing) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return missing;
}

// ----- the mode switch (select_model_mode_for_export) -----------------------------------------

// forward depends on its own and a submodule's mode: x * 2 (both training), x * 3 (root training,
// sub eval), x * 5 (root eval, sub training), x * 7 (both eval).
torch::jit::Module mode_dependent(bool root, bool sub) {
  torch::jit::Module child = module_with_mode("Child", sub);
  child.define("def forward(self, x):\n  if self.training:\n    return x * 2.0\n  return x\n");
  torch::jit::Module m = module_with_mode("Root", root);
  m.register_module("child", child);
  m.define(
      "def forward(self, x):\n"
      "  y = self.child.forward(x)\n"
      "  if self.training:\n"
      "    return torch.where(y == x * 2.0, x * 2.0, x * 3.0)\n"
      "  return torch.where(y == x * 2.0, x * 5.0, x * 7.0)\n");
  return m;
}

bool child_training(const torch::jit::Module& m) {
  return m.attr("child").toModule().attr("training").toBool();
}

TEST(TrainingMode, EachModeDecidesTheCapturedGraphAndTheModeIsRestored) {
  at::Tensor x = at::rand({3, 4}) + 1;
  struct Case {
    TrainingMode mode;
    bool root, sub;  // the module's modes before the export
    double factor;   // what the exported graph computes
  };
  const std::vector<Case> cases = {
      {TrainingMode::kEval, true, true, 7},       {TrainingMode::kEval, true, false, 7},
      {TrainingMode::kTraining, false, false, 2}, {TrainingMode::kTraining, true, false, 2},
      {TrainingMode::kPreserve, true, false, 3},  {TrainingMode::kPreserve, false, true, 5},
      {TrainingMode::kPreserve, false, false, 7}, {TrainingMode::kPreserve, true, true, 2}};
  for (const auto& c : cases) {
    torch::jit::Module m = mode_dependent(c.root, c.sub);
    ExportOptions options;
    options.training = c.mode;
    const std::string what =
        fmt::format("mode {}, module {}/{}", static_cast<int>(c.mode), c.root, c.sub);
    expect_ort_gives(m, {x}, {x * c.factor}, options, what);
    // Every module gets its own mode back, not the root's (torch.onnx's model.train(original)
    // would set the child to the root's mode).
    EXPECT_EQ(m.attr("training").toBool(), c.root) << what;
    EXPECT_EQ(child_training(m), c.sub) << what;
  }
}

TEST(TrainingMode, ModeIsRestoredWhenTheExportThrows) {
  torch::jit::Module m = mode_dependent(true, false);
  ExportOptions options;
  options.training = TrainingMode::kEval;
  options.output_names = {"a", "b", "c"};  // one output: fails after the capture
  const std::vector<std::string> too_many_names = {
      "3 output names were given but the model has 1 outputs"};
  EXPECT_TRUE(ThrowsExportError([&] { export_model_to_bytes(m, {at::rand({2})}, options); },
                                ErrorCode::kInvalidArgument, too_many_names));
  EXPECT_TRUE(m.attr("training").toBool());
  EXPECT_FALSE(child_training(m));
  options.training = TrainingMode::kTraining;
  EXPECT_TRUE(ThrowsExportError([&] { export_model_to_bytes(m, {at::rand({2})}, options); },
                                ErrorCode::kInvalidArgument, too_many_names));
  EXPECT_TRUE(m.attr("training").toBool());
  EXPECT_FALSE(child_training(m));
}

TEST(TrainingMode, NnModuleFollowsTheOptionAndIsRestored) {
  torch::nn::Sequential net(torch::nn::Linear(4, 6), torch::nn::Dropout(0.5),
                            torch::nn::BatchNorm1d(6));
  net->train(true);
  net[2]->eval();  // mixed modes, restored each
  auto forward = [&](const Inputs& in) { return net->forward(in[0].toTensor()); };
  for (TrainingMode mode :
       {TrainingMode::kEval, TrainingMode::kTraining, TrainingMode::kPreserve}) {
    ExportOptions options;
    options.training = mode;
    options.opset_version = 15;
    std::string dir = temp_dir("nn_module");
    export_module(*net, forward, {at::randn({8, 4})}, dir + "/m.onnx", options);
    auto proto = read_model_file(dir + "/m.onnx");
    auto dropouts = nodes_of(proto, "Dropout");
    auto norms = nodes_of(proto, "BatchNormalization");
    ASSERT_EQ(norms.size(), 1u);
    if (mode == TrainingMode::kTraining) {
      ASSERT_EQ(dropouts.size(), 1u);
      EXPECT_EQ(dropouts[0]->input_size(), 3) << "ratio and training_mode inputs";
      EXPECT_EQ(int_attribute(*norms[0], "training_mode", 0), 1);
      EXPECT_EQ(norms[0]->output_size(), 3);
    } else if (mode == TrainingMode::kPreserve) {
      // The dropout is in training mode, the batch norm in eval mode, as the module was.
      ASSERT_EQ(dropouts.size(), 1u);
      EXPECT_EQ(int_attribute(*norms[0], "training_mode", 0), 0);
      EXPECT_EQ(norms[0]->output_size(), 1);
    } else {
      EXPECT_TRUE(dropouts.empty());
      EXPECT_EQ(int_attribute(*norms[0], "training_mode", 0), 0);
      EXPECT_EQ(norms[0]->output_size(), 1);
    }
    EXPECT_TRUE(net->is_training());
    EXPECT_TRUE(net[1]->is_training());
    EXPECT_FALSE(net[2]->is_training());
  }
}

// ----- dropout and batch_norm in training form --------------------------------------------------

// forward(x) returns properties of dropout(x, p=0.5, self.training) that hold in training mode
// for any mask (as tests/ops/dropout_test.cpp): every value is 0 or 2·x, and the dropped fraction
// is within 0.4..0.6 (40x100 draws). In eval mode (y = x) both are False.
torch::jit::Module dropout_module(bool training) {
  torch::jit::Module m = module_with_mode("DropoutNet", training);
  m.define(
      "def forward(self, x):\n"
      "  y = torch.dropout(x, 0.5, self.training)\n"
      "  dropped = y == 0.0\n"
      "  kept = torch.abs(y - x * 2.0) <= torch.abs(x) * 1e-5 + 1e-6\n"
      "  valid = torch.all(torch.logical_or(dropped, kept))\n"
      "  fraction = torch.mean(dropped.float())\n"
      "  return valid, torch.logical_and(fraction > 0.4, fraction < 0.6)\n");
  return m;
}

at::Tensor away_from_zero() {
  return (at::rand({40, 100}) + 0.5) * (at::randint(0, 2, {40, 100}).to(at::kFloat) * 2 - 1);
}

TEST(TrainingMode, DropoutInTrainingRunsInOrtAtEveryOpset) {
  at::manual_seed(0);
  at::Tensor x = away_from_zero();
  torch::jit::Module m = dropout_module(false);
  const at::Tensor yes = at::ones({}, at::kBool), no = at::zeros({}, at::kBool);
  const std::vector<at::Tensor> in_training = {yes, yes};
  const std::vector<at::Tensor> in_eval = {no, no};
  for (int opset = kMinOpset; opset <= highest_opset(); ++opset) {
    ExportOptions options;
    options.opset_version = opset;
    options.training = TrainingMode::kTraining;
    auto proto = parse_model(export_model_to_bytes(m, {x}, options));
    auto dropouts = nodes_of(proto, "Dropout");
    if (opset >= 12) {
      // torch.onnx's opset 12 form: Dropout(x, ratio, training_mode = true).
      ASSERT_EQ(dropouts.size(), 1u) << "opset " << opset;
      EXPECT_EQ(dropouts[0]->input_size(), 3);
    } else {
      // No training Dropout before 12: a RandomUniformLike mask.
      EXPECT_TRUE(dropouts.empty()) << "opset " << opset;
      EXPECT_EQ(nodes_of(proto, "RandomUniformLike").size(), 1u) << "opset " << opset;
    }
    expect_ort_gives(m, {x}, in_training, options, fmt::format("training, opset {}", opset));
    options.training = TrainingMode::kEval;
    expect_ort_gives(m, {x}, in_eval, options, fmt::format("eval, opset {}", opset));
    EXPECT_FALSE(m.attr("training").toBool());
  }
  // libtorch agrees with the properties (the reference the ORT results stand for).
  m.train(true);
  auto ref = frontend::run_module(m, {x});
  EXPECT_TRUE(ref[0].item<bool>() && ref[1].item<bool>());
}

TEST(TrainingMode, DropoutWithZeroProbabilityMatchesExactly) {
  torch::jit::Module m = module_with_mode("Dropout0", true);
  m.define("def forward(self, x):\n  return torch.dropout(x, 0.0, self.training)\n");
  at::Tensor x = at::randn({5, 6});
  ExportOptions options;
  options.training = TrainingMode::kTraining;
  expect_ort_gives(m, {x}, {x}, options, "p = 0");
}

// batch_norm(x, weight, bias, running_mean, running_var, self.training, ...) with parameters as
// buffers: in training the output uses the batch statistics.
torch::jit::Module batch_norm_module(bool affine, bool running) {
  torch::jit::Module m = module_with_mode("BatchNormNet", false);
  m.register_buffer("weight", at::rand({3}) + 0.5);
  m.register_buffer("bias", at::randn({3}));
  m.register_buffer("running_mean", at::randn({3}));
  m.register_buffer("running_var", at::rand({3}) + 0.5);
  const std::string w = affine ? "self.weight" : "None", b = affine ? "self.bias" : "None";
  const std::string rm = running ? "self.running_mean" : "None",
                    rv = running ? "self.running_var" : "None";
  m.define(
      fmt::format("def forward(self, x):\n"
                  "  return torch.batch_norm(x, {}, {}, {}, {}, self.training, 0.1, 1e-5, False)\n",
                  w, b, rm, rv));
  return m;
}

TEST(TrainingMode, BatchNormInTrainingFormMatchesLibtorchTrainForward) {
  at::Tensor x = at::randn({4, 3, 5, 5}) * 2 + 1;
  for (bool affine : {true, false}) {
    for (int opset = kMinOpset; opset <= highest_opset(); ++opset) {
      torch::jit::Module m = batch_norm_module(affine, /*running=*/true);
      ExportOptions options;
      options.opset_version = opset;
      options.training = TrainingMode::kTraining;
      auto proto = parse_model(export_model_to_bytes(m, {x}, options));
      auto norms = nodes_of(proto, "BatchNormalization");
      ASSERT_EQ(norms.size(), 1u) << "opset " << opset;
      if (opset >= 14) {
        EXPECT_EQ(int_attribute(*norms[0], "training_mode", 0), 1) << "opset " << opset;
        EXPECT_EQ(norms[0]->output_size(), 3) << "opset " << opset;
      } else {
        EXPECT_EQ(norms[0]->output_size(), 5) << "the opset 9 training form, opset " << opset;
      }
      // The reference: libtorch's forward in train mode (on copies: it updates the buffers).
      torch::jit::Module ref = m.deepcopy();
      ref.train(true);
      auto expected = frontend::run_module(ref, {x.clone()});
      expect_ort_gives(m, {x}, expected, options,
                       fmt::format("opset {}, affine {}", opset, affine));
      // Eval mode: the running statistics.
      options.training = TrainingMode::kEval;
      ref = m.deepcopy();
      ref.train(false);
      expect_ort_gives(m, {x}, frontend::run_module(ref, {x.clone()}), options,
                       fmt::format("eval, opset {}", opset));
    }
  }
}

TEST(TrainingMode, BatchNormWithoutRunningStatisticsInTraining) {
  // track_running_stats=False: no running statistics, batch statistics in both modes.
  at::Tensor x = at::randn({6, 3, 4});
  torch::jit::Module m = batch_norm_module(true, /*running=*/false);
  m.train(true);
  auto expected = frontend::run_module(m, {x});
  for (int opset : {9, 13, 14, 17}) {
    ExportOptions options;
    options.opset_version = opset;
    options.training = TrainingMode::kPreserve;
    expect_ort_gives(m, {x}, expected, options, fmt::format("opset {}", opset));
  }
}

// A known ONNX Runtime 1.30 problem, kept as a canary: BatchNormalization in training form whose
// B, input_mean and input_var are constant initializers 0, 0 and 1 (a freshly initialized
// nn.BatchNorm) gives wrong outputs (neither the training nor the inference form; an ORT graph
// optimization, presumably), at opsets 9-13 (5 outputs) and 14+ (training_mode=1) alike. Our
// graph is correct (onnx's checker and shape inference accept it; with any other constants or
// with them as graph inputs ORT normalizes with the batch statistics). When this test fails, ORT
// fixed it: turn the expectation around.
TEST(TrainingMode, OrtRunsFreshBatchNormTrainingFormInInferenceForm) {
  torch::jit::Module m = module_with_mode("FreshBatchNorm", false);
  m.register_buffer("weight", at::ones({3}));
  m.register_buffer("bias", at::zeros({3}));
  m.register_buffer("running_mean", at::zeros({3}));
  m.register_buffer("running_var", at::ones({3}));
  m.define(
      "def forward(self, x):\n"
      "  return torch.batch_norm(x, self.weight, self.bias, self.running_mean, "
      "self.running_var, self.training, 0.1, 1e-5, False)\n");
  at::Tensor x = at::randn({4, 3, 5}) * 2 + 1;
  torch::jit::Module ref = m.deepcopy();
  ref.train(true);
  auto expected = frontend::run_module(ref, {x.clone()});
  for (int opset : {13, 15}) {
    ExportOptions options;
    options.opset_version = opset;
    options.training = TrainingMode::kTraining;
    std::string dir = temp_dir("fresh_bn");
    export_model(m, {x}, dir + "/model.onnx", options);
    write_test_data(dir, {x}, expected);
    OrtResult r = run_in_ort(dir + "/model.onnx", dir, {1e-4});
    EXPECT_FALSE(r.ok) << "opset " << opset << ": ONNX Runtime now runs it correctly";
    // Wrong values, not any failure (a model ORT does not load, an error while running): ORT
    // ran the model and gave the output its type and shape.
    EXPECT_NE(r.report.find("output 0 'output_0': MISMATCH shape [4,3,5] float32 max_abs_err="),
              std::string::npos)
        << "opset " << opset << ": " << r.report;
    EXPECT_EQ(r.report.find("error:"), std::string::npos) << "opset " << opset << ": " << r.report;
    // The same graph with other constants runs correctly (BatchNormInTrainingForm... above).
  }
}

TEST(TrainingMode, RemoveEvalNoOpsKeepsTrainingDropout) {
  // A dropout whose train flag is a constant True in the graph survives the passes (only eval
  // dropouts are identities).
  torch::jit::Module m = dropout_module(true);
  ExportOptions options;
  options.training = TrainingMode::kPreserve;
  options.opset_version = 13;
  auto proto = parse_model(export_model_to_bytes(m, {away_from_zero()}, options));
  EXPECT_EQ(nodes_of(proto, "Dropout").size(), 1u);
  m.train(false);
  proto = parse_model(export_model_to_bytes(m, {away_from_zero()}, options));
  EXPECT_TRUE(nodes_of(proto, "Dropout").empty());
}

// Captures what the export writes to std::cerr.
std::string stderr_of(const std::function<void()>& fn) {
  ::testing::internal::CaptureStderr();
  fn();
  return ::testing::internal::GetCapturedStderr();
}

TEST(TrainingMode, WarnsAboutMismatchedOpsAndModelsWithoutTrainingOps) {
  // A functional dropout with a fixed train=True in an EVAL export (torch.onnx's
  // check_training_mode warning).
  torch::jit::Module fixed = module_with_mode("Fixed", false);
  fixed.define("def forward(self, x):\n  return torch.dropout(x, 0.5, True)\n");
  std::string err = stderr_of([&] { export_model_to_bytes(fixed, {at::randn({3, 3})}); });
  EXPECT_NE(err.find("the export mode is EVAL, but operator 'aten::dropout'"), std::string::npos)
      << err;
  // ... but not when p = 0 (swin's attention dropout, traced with train=True): the same in
  // either mode.
  torch::jit::Module zero = module_with_mode("ZeroP", false);
  zero.define("def forward(self, x):\n  return torch.dropout(x, 0.0, True)\n");
  err = stderr_of([&] { export_model_to_bytes(zero, {at::randn({3, 3})}); });
  EXPECT_EQ(err.find("is set to train"), std::string::npos) << err;
  // TRAINING on a model whose output does not depend on the mode.
  torch::jit::Module plain = module_with_mode("Plain", false);
  plain.define("def forward(self, x):\n  return x + 1\n");
  ExportOptions options;
  options.training = TrainingMode::kTraining;
  err = stderr_of([&] { export_model_to_bytes(plain, {at::randn({3})}, options); });
  EXPECT_NE(err.find("no op that behaves differently in training"), std::string::npos) << err;
  // Training dropout below opset 12.
  options.opset_version = 11;
  err =
      stderr_of([&] { export_model_to_bytes(dropout_module(false), {away_from_zero()}, options); });
  EXPECT_NE(err.find("at opset 11"), std::string::npos) << err;
  // No warning for a plain EVAL export.
  err = stderr_of([&] { export_model_to_bytes(plain, {at::randn({3})}); });
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
}

// ----- export_params, keep_initializers_as_inputs, do_constant_folding ---------------------------

struct Linear {
  at::Tensor w = at::randn({4, 3}), b = at::randn({4});
  NamedTensors params() const { return {{"fc.weight", w}, {"fc.bias", b}}; }
  TracedFunction fn() const {
    return [this](const Inputs& in) { return at::linear(in[0].toTensor(), w, b); };
  }
};

std::vector<std::string> input_names(const onnx::ModelProto& p) {
  std::vector<std::string> names;
  for (const auto& v : p.graph().input()) names.push_back(v.name());
  return names;
}

TEST(ExportFlags, ExportParamsFalseRunsWhenTheWeightsAreFed) {
  Linear net;
  at::Tensor x = at::randn({2, 3});
  ExportOptions options;
  options.export_params = false;
  std::string dir = temp_dir("no_params");
  export_function(net.fn(), {x}, net.params(), dir + "/model.onnx", options);
  auto proto = read_model_file(dir + "/model.onnx");
  EXPECT_EQ(proto.graph().initializer_size(), 0);
  EXPECT_EQ(input_names(proto), (std::vector<std::string>{"input_0", "fc.weight", "fc.bias"}));
  // Fed other weights than the example's: the graph uses what it is given.
  at::Tensor w2 = at::randn({4, 3}), b2 = at::randn({4});
  write_test_data(dir, {x, w2, b2}, {at::linear(x, w2, b2)});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir, {1e-4});
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(ExportFlags, KeepInitializersAsInputsListsThemAsInputs) {
  Linear net;
  at::Tensor x = at::randn({2, 3});
  ExportOptions options;
  options.keep_initializers_as_inputs = true;
  std::string dir = temp_dir("keep_inits");
  export_function(net.fn(), {x}, net.params(), dir + "/model.onnx", options);
  auto proto = read_model_file(dir + "/model.onnx");
  EXPECT_EQ(proto.graph().initializer_size(), 2);
  EXPECT_EQ(input_names(proto), (std::vector<std::string>{"input_0", "fc.weight", "fc.bias"}));
  // Only x fed: the initializers are the inputs' defaults.
  write_test_data(dir, {x}, {at::linear(x, net.w, net.b)});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir, {1e-4});
  EXPECT_TRUE(r.ok) << r.report;
  // (ONNX Runtime lists only input_0 in session.inputNames: initializers that are also inputs are
  // its "overridable initializers", fed by name, which the harness's positional feeding cannot
  // reach.)
  // Without the option, the weights are not inputs.
  options.keep_initializers_as_inputs = false;
  proto = parse_model(export_function_to_bytes(net.fn(), {x}, net.params(), options));
  EXPECT_EQ(input_names(proto), (std::vector<std::string>{"input_0"}));
}

TEST(ExportFlags, NoConstantFoldingKeepsShapeArithmetic) {
  torch::jit::Module m("Flatten");
  m.define("def forward(self, x):\n  return x.view(x.size(0) * 2, -1) * (2.0 * 3.0)\n");
  at::Tensor x = at::randn({4, 3, 2});
  auto expected = frontend::run_module(m, {x});
  for (bool fold : {true, false}) {
    ExportOptions options;
    options.do_constant_folding = fold;
    auto proto = parse_model(export_model_to_bytes(m, {x}, options));
    const size_t shapes = nodes_of(proto, "Shape").size();
    const size_t gathers = nodes_of(proto, "Gather").size();
    if (fold) {
      EXPECT_EQ(shapes, 0u);
    } else {
      EXPECT_GE(shapes, 1u);
      EXPECT_GE(gathers, 1u);
      EXPECT_GE(nodes_of(proto, "Mul").size(), 2u) << "x.size(0) * 2 stays a Mul";
    }
    expect_ort_gives(m, {x}, expected, options, fold ? "folded" : "not folded");
  }
}

// ----- is_in_onnx_export and the log ------------------------------------------------------------

TEST(ExportState, IsInOnnxExportInsideTheTracedFunction) {
  EXPECT_FALSE(is_in_onnx_export());
  bool other_thread_saw = true;
  auto fn = [&](const Inputs& in) {
    at::Tensor x = in[0].toTensor();
    std::thread([&] { other_thread_saw = is_in_onnx_export(); }).join();
    // torch.onnx's documented use: a branch only for the export.
    return is_in_onnx_export() ? x * 2 : x * 3;
  };
  at::Tensor x = at::randn({3, 4});
  std::string dir = temp_dir("in_export");
  export_function(fn, {x}, {}, dir + "/model.onnx");
  write_test_data(dir, {x}, {x * 2});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir, {1e-4});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_FALSE(other_thread_saw) << "thread-local: another thread is not exporting";
  EXPECT_FALSE(is_in_onnx_export());
  EXPECT_TRUE(at::equal(fn({x}), x * 3)) << "outside the export";
  // False again after a failed export.
  auto failing = [&](const Inputs& in) -> c10::IValue {
    EXPECT_TRUE(is_in_onnx_export());
    throw std::runtime_error("model failure");
  };
  EXPECT_TRUE(ThrowsExportError([&] { export_function_to_bytes(failing, {x}, {}); },
                                ErrorCode::kModelRun,
                                {"tracing the model failed: model failure",
                                 "Remedy: check that the example inputs are valid"}));
  EXPECT_FALSE(is_in_onnx_export());
}

TEST(ExportState, IsInOnnxExportDuringModuleExport) {
  // A scripted module: true while the module is captured (is_in_onnx_export is not callable
  // from TorchScript, but call_scripted inside a traced function is).
  torch::jit::Module m = module_with_mode("M", false);
  m.define("def forward(self, x):\n  return x + 1\n");
  auto fn = [&](const Inputs& in) {
    c10::IValue y = call_scripted(m, {in[0]});
    return is_in_onnx_export() ? y.toTensor() * 2 : y.toTensor();
  };
  at::Tensor x = at::randn({2});
  auto proto = parse_model(export_function_to_bytes(fn, {x}, {}));
  EXPECT_EQ(nodes_of(proto, "Mul").size(), 1u);
}

TEST(ExportLog, OffByDefaultAndWritesToTheChosenStream) {
  EXPECT_FALSE(is_onnx_log_enabled());
  Linear net;
  std::ostringstream captured;
  set_log_stream(&captured);
  export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params());
  EXPECT_EQ(captured.str(), "") << "the log is off by default";
  enable_log();
  EXPECT_TRUE(is_onnx_log_enabled());
  export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params());
  log("user line ", 42, ' ', 1.5);
  disable_log();
  log("not written");
  export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params());
  set_log_stream(nullptr);
  const std::string text = captured.str();
  EXPECT_NE(text.find("torchonnx: tracing a function with 2 parameters (opset 17"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("aten::linear"), std::string::npos) << text;
  EXPECT_NE(text.find("ONNX graph (ai.onnx=17)"), std::string::npos) << text;
  EXPECT_NE(text.find("user line 42 1.5\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("not written"), std::string::npos) << text;
  // One export's lines only (the one while enabled).
  size_t n = 0;
  for (size_t at = text.find("tracing a function"); at != std::string::npos;
       at = text.find("tracing a function", at + 1))
    ++n;
  EXPECT_EQ(n, 1u) << text;
}

// ----- the CLI flags ----------------------------------------------------------------------------

TEST(ExportFlags, CliFlags) {
  std::string dir = temp_dir("cli_flags");
  torch::jit::Module m = module_with_mode("CliNet", false);
  m.register_parameter("weight", at::randn({5, 8}), false);
  m.define(
      "def forward(self, x):\n"
      "  y = torch.dropout(x, 0.5, self.training)\n"
      "  return torch.matmul(y, self.weight.t()).view(x.size(0), -1)\n");
  m.save(dir + "/m.pt");
  const std::string base = dir + "/m.pt --input 4x8 --opset 15 -o " + dir;

  auto r = run_cli("export " + base + "/train.onnx --training training");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto proto = read_model_file(dir + "/train.onnx");
  EXPECT_EQ(nodes_of(proto, "Dropout").size(), 1u);

  r = run_cli("export " + base + "/eval.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  proto = read_model_file(dir + "/eval.onnx");
  EXPECT_TRUE(nodes_of(proto, "Dropout").empty());
  EXPECT_EQ(proto.graph().initializer_size(), 1);
  EXPECT_TRUE(nodes_of(proto, "Shape").empty());

  r = run_cli("export " + base + "/preserve.onnx --training PRESERVE");  // saved in eval mode
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(nodes_of(read_model_file(dir + "/preserve.onnx"), "Dropout").empty());

  r = run_cli("export " + base + "/raw.onnx --no-export-params --no-constant-folding");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  proto = read_model_file(dir + "/raw.onnx");
  EXPECT_EQ(proto.graph().initializer_size(), 0);
  EXPECT_EQ(proto.graph().input_size(), 2);
  EXPECT_FALSE(nodes_of(proto, "Shape").empty());

  r = run_cli("export " + base + "/keep.onnx --keep-initializers-as-inputs");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  proto = read_model_file(dir + "/keep.onnx");
  EXPECT_EQ(proto.graph().initializer_size(), 1);
  EXPECT_EQ(proto.graph().input_size(), 2);

  EXPECT_FALSE(proto.graph().node(0).doc_string().empty());
  r = run_cli("export " + base + "/stripped.onnx --strip-doc-string --drop-unused-inputs");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  proto = read_model_file(dir + "/stripped.onnx");
  for (const auto& node : proto.graph().node()) EXPECT_TRUE(node.doc_string().empty());
  EXPECT_EQ(proto.graph().input_size(), 1);  // the input is read: it stays
  r = run_cli("export " + base + "/both.onnx --drop-unused-inputs --save-test-data " + dir +
              "/data");
  EXPECT_TRUE(CliFails(r, ErrorCode::kInvalidArgument, {"--save-test-data", "Remedy"}));

  r = run_cli("export " + base + "/bad.onnx --training SOMETIMES");
  EXPECT_TRUE(
      CliFails(r, ErrorCode::kInvalidArgument,
               {"--training: SOMETIMES not in {EVAL,PRESERVE,TRAINING}", "Run with --help"}));

  r = run_cli("export --help");
  for (const char* flag :
       {"--training", "--no-constant-folding", "--no-export-params",
        "--keep-initializers-as-inputs", "--drop-unused-inputs", "--strip-doc-string"}) {
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << " missing from --help";
  }
}

}  // namespace
}  // namespace torchonnx::testing
