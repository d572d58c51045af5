// Bad input gets a clear ExportError (C++) or a documented exit code and message (CLI), and never
// leaves an output file behind.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/script.h>

#include <filesystem>
#include <fstream>

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
  try {
    load_model(pt);
    FAIL() << "expected ExportError";
  } catch (const ExportError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kModelLoad);
    EXPECT_NE(std::string(e.what()).find("cannot load"), std::string::npos) << e.what();
  }
  auto r = run_cli(fmt::format("export {} -o {}/out.onnx --input 1x3", pt, dir));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kModelLoad)) << r.output;
  EXPECT_NE(r.output.find("cannot load"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/out.onnx"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1)
      << "a temporary file was left behind";
}

TEST(Errors, MissingAndEmptyModelFile) {
  std::string dir = temp_dir("missing");
  auto r = run_cli(fmt::format("export {}/nope.pt -o {}/out.onnx --input 2", dir, dir));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kModelLoad)) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  std::ofstream(dir + "/empty.pt");
  r = run_cli(fmt::format("export {}/empty.pt -o {}/out.onnx --input 2", dir, dir));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kModelLoad)) << r.output;
  EXPECT_NE(r.output.find("empty"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/out.onnx"));
}

TEST(Errors, WrongNumberOfInputs) {
  std::string pt = save_module("one_input", "def forward(self, x):\n  return x.relu()\n");
  std::string out = fs::path(pt).parent_path().string() + "/out.onnx";
  torch::jit::Module m = load_model(pt);
  try {
    export_model(m, {at::randn({2}), at::randn({2})}, out);
    FAIL() << "expected ExportError";
  } catch (const ExportError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("forward(x: Tensor) takes 1 argument but 2 example "
                                         "inputs were given"),
              std::string::npos)
        << e.what();
  }
  auto r = run_cli(fmt::format("export {} -o {} --input 2 --input 3", pt, out));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kInvalidArgument)) << r.output;
  EXPECT_NE(r.output.find("takes 1 argument"), std::string::npos) << r.output;
  r = run_cli(fmt::format("export {} -o {}", pt, out));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kInvalidArgument)) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Errors, UnsupportedOpsAreAllListedAtOnce) {
  std::string pt = save_module(
      "unsupported",
      "def forward(self, x):\n  return torch.lgamma(x) + torch.digamma(x) + torch.lgamma(x * 2)\n");
  std::string out = fs::path(pt).parent_path().string() + "/out.onnx";
  try {
    export_model(load_model(pt), {at::rand({3}) + 1}, out);
    FAIL() << "expected ExportError";
  } catch (const ExportError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupportedOp);
    std::string what = e.what();
    EXPECT_NE(what.find("2 operators cannot be exported to ONNX opset 17"), std::string::npos)
        << what;
    EXPECT_NE(what.find("aten::lgamma (2 nodes)"), std::string::npos) << what;
    EXPECT_NE(what.find("aten::digamma (1 node)"), std::string::npos) << what;
  }
  auto r = run_cli(fmt::format("export {} -o {} --input 3", pt, out));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kUnsupportedOp)) << r.output;
  EXPECT_NE(r.output.find("aten::lgamma"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Errors, OpsetOutOfRange) {
  std::string pt = save_module("relu", "def forward(self, x):\n  return x.relu()\n");
  torch::jit::Module m = load_model(pt);
  for (int opset : {8, 18}) {
    ExportOptions options;
    options.opset_version = opset;
    try {
      export_model_to_bytes(m, {at::randn({2})}, options);
      FAIL() << "expected ExportError for opset " << opset;
    } catch (const ExportError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("opsets 9 to 17"), std::string::npos) << e.what();
    }
  }
}

TEST(Errors, BadInputSpecAndMissingOutputFolder) {
  std::string pt = save_module("relu2", "def forward(self, x):\n  return x.relu()\n");
  std::string dir = fs::path(pt).parent_path().string();
  auto r = run_cli(fmt::format("export {} -o {}/out.onnx --input 2xq", pt, dir));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kInvalidArgument)) << r.output;
  EXPECT_NE(r.output.find("not a valid dim"), std::string::npos) << r.output;
  r = run_cli(fmt::format("export {} -o {}/no/such/dir/out.onnx --input 2", pt, dir));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kIo)) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace torchonnx::testing
