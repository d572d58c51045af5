// Determinism (the same export twice gives the same bytes, in one process and across processes)
// and thread safety (exports in parallel threads give the bytes they give alone, with the log,
// the custom symbolic registry and is_in_onnx_export in use meanwhile).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "support/harness.h"
#include "torchonnx/logging.h"
#include "torchonnx/symbolic.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;
using Inputs = std::vector<c10::IValue>;

// A module with a submodule, a loop, a branch, a list, and weights large enough to be deferred by
// the serializer (Note [Streaming serializer]).
torch::jit::Module make_scripted() {
  torch::jit::Module block("Block");
  block.register_parameter("weight", at::randn({64, 64}), false);
  block.register_parameter("bias", at::randn({64}), false);
  block.define(R"(
def forward(self, x):
  return torch.relu(torch.linear(x, self.weight, self.bias))
)");
  torch::jit::Module m("Net");
  m.register_module("block", block);
  m.register_buffer("scale", at::rand({64}));
  m.define(R"(
def forward(self, x, n: int):
  ys = []
  y = x
  for i in range(n):
    if bool(y.sum() > 0):
      y = self.block.forward(y) * self.scale
    else:
      y = y - self.scale
    ys.append(y)
  return torch.stack(ys).mean(0), y.shape[0]
)");
  return m;
}

// A traced function over named parameters (a conv net, as export_module traces one).
struct Traced {
  at::Tensor conv_w = at::randn({8, 3, 3, 3}), conv_b = at::randn({8});
  at::Tensor bn_mean = at::rand({8}), bn_var = at::rand({8}) + 0.5, fc_w = at::randn({10, 8});
  NamedTensors params() const {
    return {{"conv.weight", conv_w},
            {"conv.bias", conv_b},
            {"bn.running_mean", bn_mean},
            {"bn.running_var", bn_var},
            {"fc.weight", fc_w}};
  }
  TracedFunction fn(std::atomic<int>* in_export_seen = nullptr) const {
    return [this, in_export_seen](const Inputs& in) {
      if (in_export_seen && is_in_onnx_export()) ++*in_export_seen;
      auto y = at::conv2d(in[0].toTensor(), conv_w, conv_b, 1, 1);
      y = at::batch_norm(y, {}, {}, bn_mean, bn_var, false, 0.1, 1e-5, false);
      y = at::adaptive_avg_pool2d(at::relu(y), {1, 1}).flatten(1);
      return at::log_softmax(at::linear(y, fc_w), 1);
    };
  }
};

std::string read_all(const std::string& path) {
  return read_file(path);
}

TEST(Determinism, SameBytesTwiceInOneProcess) {
  torch::jit::Module m = make_scripted();
  const Inputs args = {at::randn({4, 64}), int64_t{3}};
  for (int opset : {13, 17}) {
    ExportOptions options;
    options.opset_version = opset;
    options.dynamic_axes["x.1"] = {{0, "batch"}};
    const std::string first = export_model_to_bytes(m, args, options);
    EXPECT_EQ(first, export_model_to_bytes(m, args, options)) << "opset " << opset;
  }
  Traced t;
  const std::string first =
      export_function_to_bytes(t.fn(), {at::randn({2, 3, 16, 16})}, t.params());
  EXPECT_EQ(first, export_function_to_bytes(t.fn(), {at::randn({2, 3, 16, 16})}, t.params()));
  // The same model from another copy of its module (other addresses for every object).
  EXPECT_EQ(export_model_to_bytes(m, args), export_model_to_bytes(m.clone(), args));
}

TEST(Determinism, ExternalDataFilesAreTheSame) {
  torch::jit::Module m = make_scripted();
  const Inputs args = {at::randn({4, 64}), int64_t{3}};
  for (auto layout :
       {ExternalDataOptions::Layout::kSingleFile, ExternalDataOptions::Layout::kFilePerTensor}) {
    ExportOptions options;
    options.use_external_data_format = true;
    options.external_data.layout = layout;
    options.external_data.size_threshold = 256;
    const std::string a = temp_dir("det_a"), b = temp_dir("det_b");
    export_model(m, args, a + "/model.onnx", options);
    export_model(m, args, b + "/model.onnx", options);
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(a)) files.push_back(e.path().filename().string());
    EXPECT_GE(files.size(), 2u);
    for (const auto& f : files) {
      SCOPED_TRACE(f);
      ASSERT_TRUE(fs::exists(b + "/" + f));
      EXPECT_EQ(read_all(a + "/" + f), read_all(b + "/" + f));
    }
  }
}

// Two processes (other address layouts, other hash seeds if any) write the same files.
TEST(Determinism, SameBytesAcrossProcesses) {
  const std::string dir = temp_dir("det_cli");
  torch::jit::Module m = make_scripted();
  m.save(dir + "/net.pt");
  for (const std::string& extra :
       {std::string(), std::string(" --opset 13 --dynamic-axes x.1:0")}) {
    SCOPED_TRACE(extra);
    for (const char* out : {"a.onnx", "b.onnx"}) {
      auto r = run_cli(fmt::format(
          "export {0}/net.pt -o {0}/{1} --input 4x64 --input scalar:int64{2}", dir, out, extra));
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    const std::string a = read_all(dir + "/a.onnx");
    EXPECT_GT(a.size(), 16000u);
    EXPECT_EQ(a, read_all(dir + "/b.onnx"));
  }
}

// Note [Contained external data]: whatever the tensor names, every data file is a plain file of
// the model's folder, unique (also ignoring case, and against the model's own name), and the
// model runs in ONNX Runtime from there.
TEST(Containment, PerTensorFilesStayInTheModelsFolder) {
  const std::vector<std::string> names = {"../../escape",
                                          "/etc/passwd",
                                          "..",
                                          ".",
                                          "a/b\\c",
                                          "W",
                                          "w",
                                          std::string(300, 'x') + "1",
                                          std::string(300, 'x') + "2",
                                          "model.onnx",
                                          "naïve name"};
  NamedTensors params;
  for (size_t i = 0; i < names.size(); ++i) params.push_back({names[i], at::randn({16, 16})});
  TracedFunction fn = [&](const Inputs& in) {
    at::Tensor y = in[0].toTensor();
    for (const auto& [name, w] : params) y = at::matmul(y, w).tanh();
    return y;
  };
  const std::string root = temp_dir("containment");
  const std::string dir = root + "/out";
  fs::create_directories(dir);
  ExportOptions options;
  options.use_external_data_format = true;
  options.external_data.layout = ExternalDataOptions::Layout::kFilePerTensor;
  const at::Tensor x = at::randn({2, 16});
  export_function(fn, {x}, params, dir + "/model.onnx", options);
  // Nothing outside the folder, nothing in a subfolder.
  std::set<std::string> outside;
  for (const auto& e : fs::directory_iterator(root)) outside.insert(e.path().filename().string());
  EXPECT_EQ(outside, std::set<std::string>{"out"});
  std::set<std::string> lower_names;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    EXPECT_TRUE(e.is_regular_file()) << f;
    EXPECT_LE(f.size(), 255u) << f;
    EXPECT_EQ(
        f.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
        std::string::npos)
        << f;
    std::string lower = f;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(lower_names.insert(lower).second) << "two files differ only in case: " << f;
    ++files;
  }
  EXPECT_EQ(files, names.size() + 1);  // one per tensor, and the model
  // Each external location in the model is one of those files, and the model runs.
  const auto proto = read_model_file(dir + "/model.onnx");
  for (const auto& init : proto.graph().initializer()) {
    for (const auto& entry : init.external_data()) {
      if (entry.key() != "location") continue;
      EXPECT_EQ(entry.value().find('/'), std::string::npos) << entry.value();
      EXPECT_TRUE(fs::is_regular_file(dir + "/" + entry.value())) << entry.value();
    }
  }
  const std::string data = temp_dir("containment_data");
  write_test_data(data, {x}, {fn({x}).toTensor()});
  const auto ort = run_in_ort(dir + "/model.onnx", data);
  EXPECT_TRUE(ort.ok) << ort.report;
}

// Each of `jobs` run alone first, then all of them in `threads` threads at once, `rounds` times:
// every parallel result must equal the solo one.
void expect_same_in_parallel(const std::vector<std::function<std::string()>>& jobs, int threads,
                             int rounds) {
  std::vector<std::string> solo;
  for (const auto& job : jobs) solo.push_back(job());
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        const size_t k = static_cast<size_t>(t + r) % jobs.size();
        try {
          if (jobs[k]() != solo[k]) ++mismatches;
        } catch (const std::exception& e) {
          ++failures;
          ADD_FAILURE() << "job " << k << " threw in thread " << t << ": " << e.what();
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(failures.load(), 0);
}

TEST(Threads, ParallelExportsGiveTheSoloBytes) {
  torch::jit::Module scripted = make_scripted();
  torch::jit::Module other = make_scripted();  // other weights
  const Inputs args = {at::randn({4, 64}), int64_t{3}};
  Traced traced;
  std::atomic<int> in_export_seen{0};
  const at::Tensor image = at::randn({2, 3, 16, 16});
  ExportOptions dynamic;
  dynamic.dynamic_axes["x.1"] = {{0, "batch"}};
  ExportOptions opset13;
  opset13.opset_version = 13;
  const std::vector<std::function<std::string()>> jobs = {
      [&] { return export_model_to_bytes(scripted, args); },
      [&] { return export_model_to_bytes(scripted, args, dynamic); },
      [&] { return export_model_to_bytes(other, args, opset13); },
      [&] {
        return export_function_to_bytes(traced.fn(&in_export_seen), {image}, traced.params());
      },
      [&] { return export_to_pretty_string(other, args); },
  };

  // Meanwhile: the log on (to a stream of its own), and the custom symbolic registry changed over
  // and over for an op the models do not use.
  std::ostringstream log_stream;
  set_log_stream(&log_stream);
  enable_log();
  std::atomic<bool> stop{false};
  std::atomic<bool> seen_in_export_outside{false};
  std::thread registrar([&] {
    while (!stop) {
      register_custom_op_symbolic(
          "aten::lgamma", [](GraphContext& g, const Args& a) -> Values { return {a.tensor(0)}; },
          9);
      unregister_custom_op_symbolic("aten::lgamma", 9);
      // This thread never exports: is_in_onnx_export is per thread.
      if (is_in_onnx_export()) seen_in_export_outside = true;
    }
  });
  expect_same_in_parallel(jobs, 4, 6);
  stop = true;
  registrar.join();
  disable_log();
  set_log_stream(nullptr);

  EXPECT_FALSE(seen_in_export_outside.load());
  EXPECT_FALSE(is_in_onnx_export());
  EXPECT_GT(in_export_seen.load(), 0) << "a traced function did not see is_in_onnx_export()";
  // Every export logged, and no line of the log was torn by another thread's.
  const std::string text = log_stream.str();
  EXPECT_NE(text.find("torchonnx: exporting TorchScript module"), std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("torchonnx: exporting", 1), std::string::npos) << "torn log line: " << line;
  }
}

}  // namespace
}  // namespace torchonnx::testing
