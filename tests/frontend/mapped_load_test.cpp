// Note [Zero-copy weights]: load_model maps the .pt and gives the importer storages in the
// mapping. On a module with weights in both data.pkl and constants.pkl (whose storage keys "0",
// "1", ... collide, Note [Mapped import]): every weight points into the file and equals what
// torch::jit::load copies, forward() and the export are the same, and a weight written after
// loading is no longer taken from the file (the file itself never changes).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/serialization/import.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/mapped_file.h"
#include "torchonnx/export.h"

namespace torchonnx::testing {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A .pt whose `w` (64x64 float) and `v` (int64) are constants (constants/0, constants/1) and whose
// `b` (float) and `scale` (double) stay attributes (data/0, data/1).
class MappedLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("torchonnx_mapped_load_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "net.pt").string();
    torch::jit::Module m("Net");
    m.register_parameter("w", at::randn({64, 64}), false);
    m.register_buffer("v", at::arange(300, at::kLong));
    m.register_parameter("b", at::randn({64}), false);
    m.register_buffer("scale", at::randn({64}, at::kDouble));
    m.define(R"(
def forward(self, x):
    y = torch.matmul(x, self.w) + self.b * self.scale.float()
    return y + self.v.sum().float()
)");
    m.eval();
    torch::jit::freeze_module(m, {"b", "scale"}).save(path_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

std::vector<at::Tensor> weights_of(const torch::jit::Module& m) {
  std::vector<at::Tensor> out;
  for (const auto& p : m.named_attributes(/*recurse=*/true)) {
    if (p.value.isTensor()) out.push_back(p.value.toTensor());
  }
  return out;
}

TEST_F(MappedLoad, WeightsPointIntoTheFileAndEqualACopyingLoad) {
  const std::string archive = read_all(path_);
  ASSERT_NE(archive.find("net/constants/0"), std::string::npos);  // both key spaces used
  ASSERT_NE(archive.find("net/data/0"), std::string::npos);
  torch::jit::Module mapped = load_model(path_);
  torch::jit::Module copied = torch::jit::load(path_);
  const auto mapped_weights = weights_of(mapped), copied_weights = weights_of(copied);
  ASSERT_EQ(mapped_weights.size(), 2u);  // b, scale (w and v are constants of the code)
  for (size_t i = 0; i < mapped_weights.size(); ++i) {
    EXPECT_TRUE(unchanged_file_bytes(mapped_weights[i]).has_value()) << i;
    EXPECT_FALSE(unchanged_file_bytes(copied_weights[i]).has_value()) << i;
    EXPECT_TRUE(at::equal(mapped_weights[i], copied_weights[i])) << i;
  }
  const at::Tensor x = at::randn({2, 64});
  EXPECT_TRUE(at::equal(mapped.forward({x}).toTensor(), copied.forward({x}).toTensor()));

  // The export (the file written with bytes copied from the .pt) is the copying load's.
  const std::string out = (dir_ / "net.onnx").string();
  export_model(mapped, {x}, out);
  EXPECT_EQ(read_all(out), export_model_to_bytes(copied, {x}));
  EXPECT_EQ(export_model_to_bytes(mapped, {x}), export_model_to_bytes(copied, {x}));
}

TEST_F(MappedLoad, AWrittenWeightIsNoLongerTheFiles) {
  const std::string before = read_all(path_);
  torch::jit::Module mapped = load_model(path_);
  at::Tensor b = weights_of(mapped)[0];
  ASSERT_TRUE(unchanged_file_bytes(b).has_value());
  {
    at::NoGradGuard no_grad;
    b.add_(1);  // a copy-on-write of the page: the file keeps its bytes
  }
  EXPECT_FALSE(unchanged_file_bytes(b).has_value());
  EXPECT_EQ(read_all(path_), before);
  torch::jit::Module again = load_model(path_);
  EXPECT_TRUE(at::equal(weights_of(again)[0] + 1, b));
  // The export writes the changed values, not the file's.
  const at::Tensor x = at::randn({2, 64});
  const std::string out = (dir_ / "changed.onnx").string();
  export_model(mapped, {x}, out);
  torch::jit::Module copied = torch::jit::load(path_);
  {
    at::NoGradGuard no_grad;
    weights_of(copied)[0].add_(1);
  }
  EXPECT_EQ(read_all(out), export_model_to_bytes(copied, {x}));
}

}  // namespace
}  // namespace torchonnx::testing
