// torchonnx::verify and `torchonnx verify` (issue 23): exports checked in ONNX Runtime's C++ API
// against libtorch, and find-mismatch naming a planted wrong converter. Built only where CMake
// found ONNX Runtime (Debian 13).
#include <gtest/gtest.h>
#include <torch/script.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/harness.h"
#include "torchonnx/export.h"
#include "torchonnx/symbolic.h"
#include "torchonnx/verify.h"

namespace fs = std::filesystem;
using torchonnx::testing::run_cli;
using torchonnx::testing::temp_dir;

namespace {

// matmul, relu, sigmoid, add: the relu on line 4 of the source.
torch::jit::Module small_net() {
  torch::jit::Module m("SmallNet");
  m.register_parameter("w", torch::randn({4, 6}), false);
  m.define(R"JIT(
def forward(self, x):
    y = torch.matmul(x, self.w)
    z = torch.relu(y)
    return torch.sigmoid(z) + 1.0, y
)JIT");
  m.eval();
  return m;
}

// aten::relu as Sigmoid, while it lives.
struct WrongRelu {
  WrongRelu() {
    torchonnx::register_custom_op_symbolic(
        "aten::relu",
        [](torchonnx::GraphContext& g, const torchonnx::Args& a) -> torchonnx::Values {
          return {g.op("Sigmoid", {a.tensor(0)})};
        },
        9);
  }
  ~WrongRelu() { torchonnx::unregister_custom_op_symbolic("aten::relu", 9); }
};

std::string fixture(const std::string& name) {
  return (fs::path(TORCHONNX_FIXTURE_DIR) / name).string();
}

}  // namespace

TEST(Verify, SmallModelPasses) {
  ASSERT_TRUE(torchonnx::verify_available());
  torch::manual_seed(0);
  auto m = small_net();
  auto r = torchonnx::verify(m, {torch::randn({3, 4})});
  EXPECT_TRUE(r.pass) << torchonnx::format_verify_result(r);
  ASSERT_EQ(r.input_sets.size(), 1u);
  ASSERT_EQ(r.input_sets[0].outputs.size(), 2u);
  const auto& o = r.input_sets[0].outputs[0];
  EXPECT_EQ(o.name, "output_0");
  EXPECT_EQ(o.shape, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(o.dtype, "float32");
  EXPECT_LT(o.max_abs_error, 1e-5);
  EXPECT_TRUE(o.nan_inf_match);
  EXPECT_FALSE(r.mismatch);
}

TEST(Verify, DynamicAxesCheckOtherShapes) {
  torch::manual_seed(0);
  auto m = small_net();
  torchonnx::ExportOptions options;
  options.input_names = {"x"};
  options.dynamic_axes = {{"x", {{0, "batch"}}}};
  auto r = torchonnx::verify(m, {torch::randn({3, 4})}, options);
  EXPECT_TRUE(r.pass) << torchonnx::format_verify_result(r);
  ASSERT_EQ(r.input_sets.size(), 3u);
  EXPECT_EQ(r.input_sets[1].label, "inputs 4x4");
  EXPECT_EQ(r.input_sets[2].label, "inputs 7x4");
  EXPECT_EQ(r.input_sets[2].outputs[0].shape, (std::vector<int64_t>{7, 6}));
}

// Without the dynamic axis the export fixes the batch size: other inputs fail in ONNX Runtime, a
// failed input set in the result, not an exception.
TEST(Verify, FixedShapeFailsOnOtherInputs) {
  torch::manual_seed(0);
  auto m = small_net();
  torchonnx::VerifyOptions v;
  v.more_inputs = {{"batch 5", {torch::randn({5, 4})}}};
  auto r = torchonnx::verify(m, {torch::randn({3, 4})}, {}, v);
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(r.input_sets.size(), 2u);
  EXPECT_TRUE(r.input_sets[0].pass);
  EXPECT_NE(r.input_sets[1].error.find("ONNX Runtime"), std::string::npos) << r.input_sets[1].error;
  EXPECT_NE(torchonnx::format_verify_result(r).find("on batch 5:\n  FAILED: "), std::string::npos)
      << torchonnx::format_verify_result(r);
}

TEST(Verify, WrongConverterFailsAndFindMismatchNamesIt) {
  torch::manual_seed(0);
  auto m = small_net();
  WrongRelu wrong;
  torchonnx::VerifyOptions v;
  v.find_mismatch = true;
  auto r = torchonnx::verify(m, {torch::randn({3, 4})}, {}, v);
  const std::string table = torchonnx::format_verify_result(r);
  EXPECT_FALSE(r.pass) << table;
  EXPECT_FALSE(r.input_sets[0].outputs[0].pass);
  EXPECT_TRUE(r.input_sets[0].outputs[1].pass);  // y, before the relu
  ASSERT_TRUE(r.mismatch) << table;
  EXPECT_EQ(r.mismatch->kind, "aten::relu");
  EXPECT_NE(r.mismatch->location.find(":4"), std::string::npos) << r.mismatch->location;
  EXPECT_EQ(r.mismatch->onnx_ops, std::vector<std::string>{"Sigmoid"});
  EXPECT_NE(r.mismatch->converter.find("custom symbolic"), std::string::npos);
  EXPECT_EQ(r.mismatch->opset, 17);
  EXPECT_GT(r.mismatch->max_abs_error, 0.1);
  EXPECT_NE(table.find("first node that differs"), std::string::npos) << table;
  EXPECT_NE(table.find("aten::relu"), std::string::npos) << table;
  EXPECT_NE(table.find("→ Sigmoid [custom symbolic"), std::string::npos) << table;
}

TEST(Verify, FindMismatchOnACorrectExportFindsNothing) {
  auto m = small_net();
  torchonnx::VerifyOptions v;
  v.find_mismatch = true;
  auto r = torchonnx::verify(m, {torch::randn({3, 4})}, {}, v);
  EXPECT_TRUE(r.pass);
  EXPECT_FALSE(r.mismatch);
}

TEST(Verify, BadTolerancesAreInvalidArguments) {
  auto m = small_net();
  torchonnx::VerifyOptions v;
  v.atol = -1;
  try {
    torchonnx::verify(m, {torch::randn({3, 4})}, {}, v);
    FAIL() << "no error";
  } catch (const torchonnx::ExportError& e) {
    EXPECT_EQ(e.code(), torchonnx::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("--atol"), std::string::npos) << e.what();
  }
}

// The CLI on torchvision fixtures: the table, exit 0.
TEST(VerifyCli, TorchvisionFixturesPass) {
  for (const std::string name : {"resnet18", "mobilenet_v3_small"}) {
    auto res = run_cli(fmt::format("verify {}.pt --inputs {}", fixture(name), fixture(name)));
    EXPECT_EQ(res.exit_code, 0) << name << "\n" << res.output;
    EXPECT_NE(res.output.find("output    shape   dtype     max abs err  max rel err  pass"),
              std::string::npos)
        << res.output;
    EXPECT_NE(res.output.find("output_0  1x1000  float32"), std::string::npos) << res.output;
    EXPECT_NE(res.output.find("PASS: 1 output of ONNX Runtime match"), std::string::npos)
        << res.output;
  }
}

// A wrong model: another module's export checked with --onnx: the table says NO, exit 9; --json
// says the same.
TEST(VerifyCli, WrongModelFailsWithTable) {
  const std::string dir = temp_dir("verify_wrong");
  torch::manual_seed(0);
  auto a = small_net();
  auto b = small_net();  // other weights
  a.save(dir + "/a.pt");
  b.save(dir + "/b.pt");
  ASSERT_EQ(run_cli(fmt::format("export {}/a.pt -o {}/a.onnx --input 3x4", dir, dir)).exit_code, 0);
  auto res = run_cli(fmt::format("verify {}/b.pt --onnx {}/a.onnx --input 3x4", dir, dir));
  EXPECT_EQ(res.exit_code, torchonnx::kVerifyMismatchExitCode) << res.output;
  EXPECT_NE(res.output.find("output_0  3x6    float32"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("NO"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("FAIL: 2 of 2 outputs differ"), std::string::npos) << res.output;

  res = run_cli(fmt::format("verify {}/b.pt --onnx {}/a.onnx --input 3x4 --json", dir, dir),
                /*with_stderr=*/false);
  EXPECT_EQ(res.exit_code, torchonnx::kVerifyMismatchExitCode);
  auto j = nlohmann::json::parse(res.output);
  EXPECT_EQ(j["pass"], false);
  EXPECT_EQ(j["input_sets"][0]["outputs"][0]["pass"], false);
  EXPECT_EQ(j["input_sets"][0]["outputs"][0]["shape"], nlohmann::json::array({3, 6}));

  res = run_cli(fmt::format("verify {}/a.pt --onnx {}/a.onnx --input 3x4", dir, dir));
  EXPECT_EQ(res.exit_code, 0) << res.output;
  res = run_cli(fmt::format("verify {}/a.pt --onnx {}/missing.onnx --input 3x4", dir, dir));
  EXPECT_EQ(res.exit_code, 7) << res.output;
  EXPECT_NE(res.output.find("--onnx"), std::string::npos) << res.output;
}

// The planted wrong converter through --load-library: --find-mismatch names resnet18's first
// relu (the fixture is scripted: its line in the archive's code of nn.ReLU).
TEST(VerifyCli, FindMismatchNamesThePlantedConverter) {
  auto res =
      run_cli(fmt::format("verify {}.pt --inputs {} --load-library {} --find-mismatch",
                          fixture("resnet18"), fixture("resnet18"), TORCHONNX_WRONG_RELU_LIB));
  EXPECT_EQ(res.exit_code, torchonnx::kVerifyMismatchExitCode) << res.output;
  EXPECT_NE(res.output.find("first node that differs"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("aten::relu ("), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("aten::relu (code/__torch__/torch/nn/modules/activation"),
            std::string::npos)
      << res.output;
  EXPECT_NE(res.output.find("→ Sigmoid [custom symbolic, registered from opset 9] at opset 17"),
            std::string::npos)
      << res.output;
}
