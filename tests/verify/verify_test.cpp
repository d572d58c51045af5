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

// VerifyOptions::expected: libtorch's outputs the caller already has are what verify compares
// with (outputs off by 0.5 fail; the right ones pass without running the module again).
TEST(Verify, GivenExpectedOutputsAreCompared) {
  torch::manual_seed(0);
  auto m = small_net();
  const at::Tensor x = torch::randn({3, 4});
  std::vector<at::Tensor> expected;
  const c10::IValue out = m.forward({x});
  for (const auto& v : out.toTupleRef().elements()) expected.push_back(v.toTensor());
  torchonnx::VerifyOptions v;
  v.expected = expected;
  auto r = torchonnx::verify(m, {x}, {}, v);
  EXPECT_TRUE(r.pass) << torchonnx::format_verify_result(r);
  v.expected[1] = expected[1] + 0.5;
  r = torchonnx::verify(m, {x}, {}, v);
  EXPECT_FALSE(r.pass) << torchonnx::format_verify_result(r);
  ASSERT_EQ(r.input_sets[0].outputs.size(), 2u);
  EXPECT_TRUE(r.input_sets[0].outputs[0].pass);
  EXPECT_FALSE(r.input_sets[0].outputs[1].pass);
  EXPECT_NEAR(r.input_sets[0].outputs[1].max_abs_error, 0.5, 1e-4);
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

// Detection records (VerifyOptions::detections). Detections returns boxes, labels and scores of
// six detections as given; Reordered returns them in another order (two pairs of nearly equal
// scores swapped, as ONNX Runtime's sort may do), and with `shift` one box moved by that many
// pixels. Reordered checked against Detections' export: the same set of detections in another
// order.
namespace {

torch::jit::Module detections_module(const std::string& body) {
  torch::jit::Module m("Detections");
  m.define(body);
  m.eval();
  return m;
}

const char* const kDetections = R"JIT(
def forward(self, boxes, scores, labels):
    return boxes * 1.0, labels + 0, scores * 1.0
)JIT";

torch::jit::Module reordered(double shift) {
  return detections_module(fmt::format(R"JIT(
def forward(self, boxes, scores, labels):
    order = torch.tensor([1, 0, 2, 4, 3, 5])
    b = boxes.index_select(0, order)
    b[5, 0] += {}
    return b, labels.index_select(0, order), scores.index_select(0, order)
)JIT",
                                       shift));
}

struct DetectionCase {
  std::vector<c10::IValue> inputs;
  torchonnx::ExportOptions options;
  std::string onnx;
};

DetectionCase detection_case() {
  DetectionCase c;
  c.inputs = {torch::tensor({10., 10., 50., 60., 12., 11., 49., 61., 100., 100., 150., 170.,
                             5.,  5.,  20., 20., 6.,  6.,  21., 22., 200., 10.,  240., 90.})
                  .reshape({6, 4}),
              torch::tensor({0.90, 0.8999999, 0.7, 0.5, 0.4999999, 0.3}),
              torch::tensor({3, 3, 1, 7, 7, 2})};
  c.options.input_names = {"boxes", "scores", "labels"};
  c.onnx = temp_dir("detections") + "/detections.onnx";
  torchonnx::export_model(detections_module(kDetections), c.inputs, c.onnx, c.options);
  return c;
}

}  // namespace

TEST(VerifyDetections, ReorderedTiesMatch) {
  DetectionCase c = detection_case();
  torchonnx::VerifyOptions v;
  v.onnx_path = c.onnx;
  // Compared output by output, the other order fails.
  auto plain = torchonnx::verify(reordered(0), c.inputs, c.options, v);
  EXPECT_FALSE(plain.pass) << torchonnx::format_verify_result(plain);
  // As detection records, every detection finds its match.
  v.detections = true;
  v.pixel_atol = 0.5;
  auto r = torchonnx::verify(reordered(0), c.inputs, c.options, v);
  const std::string table = torchonnx::format_verify_result(r);
  EXPECT_TRUE(r.pass) << table;
  ASSERT_TRUE(r.input_sets[0].detections);
  const auto& d = *r.input_sets[0].detections;
  EXPECT_EQ(d.outputs, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(d.count, 6);
  EXPECT_EQ(d.matched, 6);
  EXPECT_EQ(d.needed, 6);
  EXPECT_EQ(r.input_sets[0].outputs[0].max_abs_error, 0);
  EXPECT_NE(table.find("detections (output_0, output_1, output_2): 6 of 6 matched by label, "
                       "score and box (6 needed)"),
            std::string::npos)
      << table;
  auto j = nlohmann::json::parse(torchonnx::verify_result_json(r));
  EXPECT_EQ(j["input_sets"][0]["detections"]["matched"], 6);
}

// A box 3 px off (pixel_atol 0.5) has no match: five of six detections, which fails.
// With dynamic axes and no other inputs, verify grows the example's axes with random values; for
// detections those sets are reported as not compared (random images give detections at score
// ties), after the example, which is compared.
TEST(VerifyDetections, GrownRandomInputsAreNotCompared) {
  DetectionCase c = detection_case();
  torchonnx::ExportOptions options = c.options;
  options.dynamic_axes["boxes"][0] = "n";
  options.dynamic_axes["scores"][0] = "n";
  options.dynamic_axes["labels"][0] = "n";
  const std::string onnx = temp_dir("detections_dynamic") + "/detections.onnx";
  torchonnx::export_model(detections_module(kDetections), c.inputs, onnx, options);
  torchonnx::VerifyOptions v;
  v.onnx_path = onnx;
  v.detections = true;
  auto r = torchonnx::verify(reordered(0), c.inputs, options, v);
  const std::string table = torchonnx::format_verify_result(r);
  EXPECT_TRUE(r.pass) << table;
  ASSERT_EQ(r.input_sets.size(), 2u) << table;
  EXPECT_EQ(r.input_sets[0].label, "example");
  EXPECT_TRUE(r.input_sets[0].skipped.empty());
  EXPECT_NE(r.input_sets[1].skipped.find("random images"), std::string::npos) << table;
  EXPECT_NE(table.find("test_data_set_"), std::string::npos) << table;
}

TEST(VerifyDetections, AWrongBoxFails) {
  DetectionCase c = detection_case();
  torchonnx::VerifyOptions v;
  v.onnx_path = c.onnx;
  v.detections = true;
  v.pixel_atol = 0.5;
  auto r = torchonnx::verify(reordered(3), c.inputs, c.options, v);
  const std::string table = torchonnx::format_verify_result(r);
  EXPECT_FALSE(r.pass) << table;
  ASSERT_TRUE(r.input_sets[0].detections);
  EXPECT_EQ(r.input_sets[0].detections->matched, 5);
  EXPECT_FALSE(r.input_sets[0].outputs[0].pass);
  EXPECT_NE(table.find("5 of 6 matched by label, score and box (6 needed)  NO"), std::string::npos)
      << table;
  // Within a pixel_atol of 4 px it matches.
  v.pixel_atol = 4;
  EXPECT_TRUE(torchonnx::verify(reordered(3), c.inputs, c.options, v).pass);
}

TEST(VerifyDetections, PixelAtolWithoutDetectionsIsAnError) {
  auto m = small_net();
  torchonnx::VerifyOptions v;
  v.pixel_atol = 0.3;
  try {
    torchonnx::verify(m, {torch::randn({3, 4})}, {}, v);
    FAIL() << "no error";
  } catch (const torchonnx::ExportError& e) {
    EXPECT_EQ(e.code(), torchonnx::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("--detections"), std::string::npos) << e.what();
  }
}

// The zoo's ssdlite320_mobilenet_v3_large (make_zoo.py; opset 11, as the zoo test): ONNX Runtime
// gives its detections of nearly equal scores in another order than libtorch. Output by output
// that fails; with --detections (the zoo test's tolerances) it passes.
TEST(VerifyDetections, SsdliteFixtureWithCli) {
  const fs::path zoo(TORCHONNX_ZOO_FIXTURE_DIR);
  const std::string name = "ssdlite320_mobilenet_v3_large";
  ASSERT_TRUE(fs::exists(zoo / (name + ".pt"))) << "run the make_zoo_fixtures test";
  const std::string ops = torchonnx::testing::read_file((zoo / "torchvision_ops.txt").string());
  const std::string args = fmt::format(
      "verify {} --inputs {} --opset 11 --load-library {} --rtol 1e-3 --atol 1e-3 --atol-scale 0",
      (zoo / (name + ".pt")).string(), (zoo / name).string(), ops.substr(0, ops.find('\n')));
  auto plain = run_cli(args);
  EXPECT_EQ(plain.exit_code, torchonnx::kVerifyMismatchExitCode) << plain.output;
  auto res = run_cli(args + " --detections --pixel-atol 0.32");
  EXPECT_EQ(res.exit_code, 0) << res.output;
  EXPECT_NE(res.output.find("matched by label, score and box"), std::string::npos) << res.output;
}
