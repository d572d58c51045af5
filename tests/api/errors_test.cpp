// Bad input gets a clear ExportError (C++) or a documented exit code and message (CLI), and never
// leaves an output file behind.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/script.h>

#include <filesystem>
#include <fstream>

#include "support/expect_error.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;

std::string save_module(const std::string& name, const std::string& source) {
  torch::jit::Module m(name);
  m.define(source);
  std::string path = temp_dir(name) + "/" + name + ".pt";
  m.save(path);
  return path;
}

TEST(Errors, CorruptModelFile) {
  std::string dir = temp_dir("corrupt");
  std::string pt = dir + "/model.pt";
  std::ofstream(pt) << "PK\x03\x04 this is not a TorchScript archive";
  const std::vector<std::string> message = {"cannot load", "as TorchScript",
                                            "check the file is complete"};
  EXPECT_TRUE(ThrowsExportError([&] { load_model(pt); }, ErrorCode::kModelLoad, message));
  auto r = run_cli(fmt::format("export {} -o {}/out.onnx --input 1x3", pt, dir));
  EXPECT_TRUE(CliFails(r, ErrorCode::kModelLoad, message));
  EXPECT_FALSE(fs::exists(dir + "/out.onnx"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1)
      << "a temporary file was left behind";
}

TEST(Errors, MissingAndEmptyModelFile) {
  std::string dir = temp_dir("missing");
  auto r = run_cli(fmt::format("export {}/nope.pt -o {}/out.onnx --input 2", dir, dir));
  EXPECT_TRUE(
      CliFails(r, ErrorCode::kModelLoad, {"nope.pt' does not exist", "Remedy: check the path"}));
  std::ofstream(dir + "/empty.pt");
  r = run_cli(fmt::format("export {}/empty.pt -o {}/out.onnx --input 2", dir, dir));
  EXPECT_TRUE(
      CliFails(r, ErrorCode::kModelLoad, {"empty.pt' is empty", "Remedy: save the model again"}));
  EXPECT_FALSE(fs::exists(dir + "/out.onnx"));
}

TEST(Errors, WrongNumberOfInputs) {
  std::string pt = save_module("one_input", "def forward(self, x):\n  return x.relu()\n");
  std::string out = fs::path(pt).parent_path().string() + "/out.onnx";
  torch::jit::Module m = load_model(pt);
  const std::vector<std::string> message = {
      "forward(x: Tensor) takes 1 argument but 2 example inputs were given",
      "Remedy: pass one example input per argument"};
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model(m, {at::randn({2}), at::randn({2})}, out);
      },
      ErrorCode::kInvalidArgument, message));
  auto r = run_cli(fmt::format("export {} -o {} --input 2 --input 3", pt, out));
  EXPECT_TRUE(CliFails(r, ErrorCode::kInvalidArgument, message));
  r = run_cli(fmt::format("export {} -o {}", pt, out));
  EXPECT_TRUE(CliFails(r, ErrorCode::kInvalidArgument,
                       {"takes 1 argument but 0 example inputs were given",
                        "Remedy: pass one example input per argument"}));
  EXPECT_FALSE(fs::exists(out));
}

TEST(Errors, AForwardWithoutArgumentsNeedsNoExampleInputs) {
  // torch.onnx exports `def forward(self): return torch.arange(5)` with args=(): so does the CLI.
  std::string pt =
      save_module("no_arguments", "def forward(self):\n  return torch.arange(5) * 2\n");
  std::string out = fs::path(pt).parent_path().string() + "/no_arguments.onnx";
  auto r = run_cli(fmt::format("export {} -o {}", pt, out));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out));
}

TEST(Errors, UnsupportedOpsAreAllListedAtOnce) {
  std::string pt = save_module(
      "unsupported",
      "def forward(self, x):\n  return torch.lgamma(x) + torch.digamma(x) + torch.lgamma(x * 2)\n");
  std::string out = fs::path(pt).parent_path().string() + "/out.onnx";
  const std::vector<std::string> message = {"2 operators cannot be exported to ONNX opset 17",
                                            "aten::lgamma (2 nodes)", "aten::digamma (1 node)",
                                            "Remedy: try another --opset"};
  EXPECT_TRUE(ThrowsExportError([&] { export_model(load_model(pt), {at::rand({3}) + 1}, out); },
                                ErrorCode::kUnsupportedOp, message));
  auto r = run_cli(fmt::format("export {} -o {} --input 3", pt, out));
  EXPECT_TRUE(CliFails(r, ErrorCode::kUnsupportedOp, message));
  EXPECT_FALSE(fs::exists(out));
}

// Ops without a converter are found in the conversion itself: a converter's refusal of an earlier
// node does not hide them (its placeholders feed the nodes after it), and where every op has a
// converter the first refusal is the error.
TEST(Errors, UnsupportedOpsAreListedAlsoAfterAConverterRefusal) {
  torch::jit::Module m("refused_then_missing");
  m.define(
      "def forward(self, x):\n  s = x.size(1) - 4\n  y = x[s:s + 2]\n"
      "  return torch.lgamma(y) + torch.digamma(x).sum()\n");
  ExportOptions options;
  options.opset_version = 9;
  options.do_constant_folding = false;
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model_to_bytes(m, {at::rand({5, 3})}, options);
      },
      ErrorCode::kUnsupportedOp,
      {"2 operators cannot be exported to ONNX opset 9", "aten::lgamma (1 node)",
       "aten::digamma (1 node)"}));
  torch::jit::Module refused("refused");
  refused.define("def forward(self, x):\n  s = x.size(1) - 4\n  return x[s:s + 2] + 1\n");
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model_to_bytes(refused, {at::rand({5, 3})}, options);
      },
      ErrorCode::kConversion, {"needs opset 10", "aten::slice"}));
}

// An op that converts only from a higher opset is named with that opset (Registry::lowest_opset),
// an op without any converter without one.
TEST(Errors, UnsupportedOpsNameTheOpsetTheyConvertFrom) {
  torch::jit::Module m("det");
  m.define("def forward(self, x):\n  return torch.det(x) + torch.lgamma(x).sum()\n");
  ExportOptions options;
  options.opset_version = 9;
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model_to_bytes(m, {at::rand({3, 3})}, options);
      },
      ErrorCode::kUnsupportedOp,
      {"2 operators cannot be exported to ONNX opset 9", "det (1 node)", "(from opset 11)"}));
  try {
    export_model_to_bytes(m, {at::rand({3, 3})}, options);
  } catch (const ExportError& e) {
    const std::string what = e.what();
    const auto lgamma = what.find("aten::lgamma");
    ASSERT_NE(lgamma, std::string::npos);
    const std::string line = what.substr(lgamma, what.find('\n', lgamma) - lgamma);
    EXPECT_EQ(line.find("from opset"), std::string::npos) << what;
  }
  options.opset_version = 11;
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model_to_bytes(m, {at::rand({3, 3})}, options);
      },
      ErrorCode::kUnsupportedOp, {"1 operator cannot be exported to ONNX opset 11"}));
}

TEST(Errors, OpsetOutOfRange) {
  std::string pt = save_module("relu", "def forward(self, x):\n  return x.relu()\n");
  torch::jit::Module m = load_model(pt);
  for (int opset : {6, highest_opset() + 1}) {
    ExportOptions options;
    options.opset_version = opset;
    // What is wrong and the remedy: the opsets torchonnx exports.
    EXPECT_TRUE(ThrowsExportError(
        [&] { export_model_to_bytes(m, {at::randn({2})}, options); }, ErrorCode::kInvalidArgument,
        {fmt::format("opset {} is out of range", opset),
         fmt::format("torchonnx exports opsets 7 to {}", highest_opset())}));
  }
}

TEST(Errors, BadInputSpecAndMissingOutputFolder) {
  std::string pt = save_module("relu2", "def forward(self, x):\n  return x.relu()\n");
  std::string dir = fs::path(pt).parent_path().string();
  auto r = run_cli(fmt::format("export {} -o {}/out.onnx --input 2xq", pt, dir));
  EXPECT_TRUE(CliFails(r, ErrorCode::kInvalidArgument,
                       {"'q' is not a valid dim", "write dims as 1x3x224x224[:dtype]"}));
  r = run_cli(fmt::format("export {} -o {}/no/such/dir/out.onnx --input 2", pt, dir));
  EXPECT_TRUE(
      CliFails(r, ErrorCode::kIo, {"no/such/dir' does not exist", "Remedy: create it first"}));
}

}  // namespace
}  // namespace torchonnx::testing
