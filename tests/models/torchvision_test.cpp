// Traced torchvision classification models (fixtures by tests/fixtures/make_torchvision.py):
// export at opsets 11, 13, 17 and 21, run in ONNX Runtime, compare with libtorch (torchonnx::verify
// where ONNX Runtime runs in-process, else tools/verify/verify.mjs).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include <filesystem>
#include <map>

#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;

const char* const kModels[] = {
    "alexnet",         "vgg11",
    "resnet18",        "resnet50",
    "mobilenet_v2",    "mobilenet_v3_small",
    "squeezenet1_0",   "shufflenet_v2_x1_0",
    "efficientnet_b0", "densenet121",
    "googlenet",       "regnet_y_400mf",
    "mnasnet0_5",
};

// Reference data (example input + libtorch's outputs) per model, computed once per process.
std::string reference_dir(const std::string& name, const torch::jit::Module& model,
                          const std::vector<c10::IValue>& inputs) {
  static std::map<std::string, std::string> dirs;
  auto it = dirs.find(name);
  if (it != dirs.end()) return it->second;
  std::string dir = temp_dir(name + "_reference");
  const std::vector<at::Tensor> outputs = frontend::run_module(model, inputs);
  // Logits of 1e-9 (fresh BatchNorm statistics) would make any comparison vacuous:
  // make_torchvision.py sets the statistics from a batch, so the logits are O(1).
  EXPECT_EQ(outputs_without_signal(outputs), "") << name << ": the comparison would be vacuous";
  write_test_data(dir, inputs, outputs);
  return dirs[name] = dir;
}

class TorchvisionModel : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(TorchvisionModel, MatchesLibtorchInOrt) {
  const std::string name = std::get<0>(GetParam());
  const int opset = std::get<1>(GetParam());
  if (opset > highest_opset()) {
    GTEST_SKIP() << "this build exports opsets up to " << highest_opset()
                 << " (its onnx library's checker knows no later one)";
  }
  const fs::path fixture = fs::path(TORCHONNX_FIXTURE_DIR) / (name + ".pt");
  ASSERT_TRUE(fs::exists(fixture)) << fixture << " is missing: run the make_fixtures test";
  torch::jit::Module model = load_model(fixture.string());
  model.eval();
  std::vector<c10::IValue> inputs{
      read_tensor_file((fs::path(TORCHONNX_FIXTURE_DIR) / name / "input_0.pb").string())};
  std::string reference = reference_dir(name, model, inputs);

  ExportOptions options;
  options.opset_version = opset;
  std::string out = temp_dir(fmt::format("{}_opset{}", name, opset)) + "/model.onnx";
  export_model(model, inputs, out, options);
  // Deep float32 stacks (resnet50: 50+ layers, kernels summing in another order): rtol 1e-3 and
  // atol 1e-4 of the largest |logit|, as nn_models_test's deep models.
  const Tolerance tol{.rtol = 1e-3, .atol = 1e-7, .atol_scale = 1e-4};
  if (in_process_verify()) {  // ONNX Runtime in-process (Debian 13)
    const VerifyResult r =
        verify_export(model, inputs, out, options, verify_options(tol), reference);
    EXPECT_TRUE(r.pass) << format_verify_result(r);
  } else {
    OrtResult result = run_in_ort(out, reference, tol);
    EXPECT_TRUE(result.ok) << result.report;
  }
  fs::remove(out);
}

INSTANTIATE_TEST_SUITE_P(Zoo, TorchvisionModel,
                         ::testing::Combine(::testing::ValuesIn(kModels),
                                            ::testing::Values(11, 13, 17, 21)),
                         [](const auto& info) {
                           return fmt::format("{}_opset{}", std::get<0>(info.param),
                                              std::get<1>(info.param));
                         });

}  // namespace
}  // namespace torchonnx::testing
