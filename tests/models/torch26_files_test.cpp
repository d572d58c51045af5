// TorchScript files written by PyTorch 2.6 (committed in tests/fixtures/torch26/, made by
// tests/fixtures/make_torch26.py in the Debian 13 root), on both builds (issue 18):
//  - the archive pre-check accepts every one of them (no false positives on files PyTorch wrote,
//    e.g. traced_inputs.pkl, whose storages torch >= 2.0 writes as empty records);
//  - a file whose operators the build's libtorch knows exports at opsets 13 and 17 and gives
//    libtorch's outputs in ONNX Runtime;
//  - a file calling an operator this libtorch lacks (scaled_dot_product_attention and rms_norm on
//    libtorch 1.13) fails to load with exit code 3, naming the operator and the remedy, and writes
//    nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/script.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/archive_check.h"
#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(TORCHONNX_SOURCE_DIR) / "tests/fixtures/torch26";

struct Torch26File {
  std::string name, how;
  std::vector<std::string> needs;  // operators libtorch 1.13 lacks
};

void PrintTo(const Torch26File& f, std::ostream* os) {
  *os << f.name;
}

std::vector<Torch26File> manifest() {
  std::ifstream in(kDir / "manifest.tsv");
  std::vector<Torch26File> files;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Torch26File f;
    std::string needs;
    std::getline(fields, f.name, '\t');
    std::getline(fields, f.how, '\t');
    std::getline(fields, needs, '\t');
    std::istringstream ops(needs);
    for (std::string op; std::getline(ops, op, ',');) {
      if (op != "-") f.needs.push_back(op);
    }
    files.push_back(f);
  }
  return files;
}

// The first operator of `ops` that this process's libtorch does not register, or "".
std::string missing_operator(const std::vector<std::string>& ops) {
  for (const auto& op : ops) {
    if (torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(op)).empty()) return op;
  }
  return "";
}

std::vector<c10::IValue> read_inputs(const std::string& name) {
  std::vector<c10::IValue> inputs;
  for (int i = 0; fs::exists(kDir / name / fmt::format("input_{}.pb", i)); ++i) {
    inputs.emplace_back(read_tensor_file((kDir / name / fmt::format("input_{}.pb", i)).string()));
  }
  return inputs;
}

TEST(Torch26Files, ManifestListsEveryFile) {
  auto files = manifest();
  ASSERT_GE(files.size(), 10u) << "tests/fixtures/torch26/manifest.tsv is missing or short";
  size_t pt_files = 0;
  for (const auto& entry : fs::directory_iterator(kDir))
    pt_files += entry.path().extension() == ".pt";
  EXPECT_EQ(pt_files, files.size());
}

TEST(Torch26Files, ArchiveCheckAcceptsEveryFile) {
  size_t refused = 0;
  for (const auto& f : manifest()) {
    const std::string path = (kDir / (f.name + ".pt")).string();
    try {
      frontend::check_archive_file(path, "'" + path + "'");
    } catch (const ExportError& e) {
      ++refused;
      ADD_FAILURE() << "a file PyTorch 2.6 wrote is refused: " << e.what();
    }
  }
  EXPECT_EQ(refused, 0u);
}

class Torch26FileTest : public ::testing::TestWithParam<Torch26File> {};

TEST_P(Torch26FileTest, ExportsAndMatchesOrNamesTheMissingOperator) {
  const Torch26File& f = GetParam();
  const std::string pt = (kDir / (f.name + ".pt")).string();
  const std::string missing = missing_operator(f.needs);
  if (!missing.empty()) {
    // This libtorch cannot load the file: exit 3, the operator named, a remedy, no file left.
    const std::string out_dir = temp_dir(f.name + "_refused");
    CliResult r = run_cli(fmt::format("export {} -o {}/model.onnx --inputs {}", pt, out_dir,
                                      (kDir / f.name).string()));
    EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kModelLoad)) << r.output;
    EXPECT_NE(r.output.find(missing), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("libtorch " TORCH_VERSION), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Debian 13"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::is_empty(out_dir)) << "a refused export left files in " << out_dir;
    return;
  }
  torch::jit::Module model = load_model(pt);
  model.eval();
  std::vector<c10::IValue> inputs = read_inputs(f.name);
  ASSERT_FALSE(inputs.empty());
  const std::string reference = temp_dir(f.name + "_reference");
  const std::vector<at::Tensor> expected = frontend::run_module(model, inputs);
  EXPECT_EQ(outputs_without_signal(expected), "") << f.name << ": the comparison would be vacuous";
  write_test_data(reference, inputs, expected);
  for (int opset : {13, 17}) {
    ExportOptions options;
    options.opset_version = opset;
    const std::string out = temp_dir(fmt::format("{}_{}", f.name, opset)) + "/model.onnx";
    export_model(model, inputs, out, options);
    OrtResult result = run_in_ort(out, reference);
    EXPECT_TRUE(result.ok) << f.name << " at opset " << opset << ": " << result.report;
    if (result.ok) fs::remove_all(fs::path(out).parent_path());
  }
  fs::remove_all(reference);
}

INSTANTIATE_TEST_SUITE_P(Issue18, Torch26FileTest, ::testing::ValuesIn(manifest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace torchonnx::testing
