// Issue 7: the streaming serializer (Note [Streaming serializer] in src/onnx/serialize.cpp),
// external data (ExportOptions::use_external_data_format / external_data, `--external-data`),
// the automatic switch past protobuf's 2 GB limit, tied-weight deduplication and progress.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <torch/script.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <type_traits>

#include "onnx/model_proto.h"
#include "onnx/serialize.h"
#include "support/expect_error.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;
using Inputs = std::vector<c10::IValue>;

// x @ w1 + b, relu, @ w2: w1 and w2 are large (deferred, external at the default threshold), b
// is small (inline).
torch::jit::Module mlp(at::Tensor w1, at::Tensor b, at::Tensor w2) {
  torch::jit::Module m("Mlp");
  m.register_buffer("w1", std::move(w1));
  m.register_buffer("b", std::move(b));
  m.register_buffer("w2", std::move(w2));
  m.define(R"(
def forward(self, x):
    return torch.matmul(torch.relu(torch.matmul(x, self.w1) + self.b), self.w2)
)");
  return m;
}

torch::jit::Module example_mlp() {
  at::manual_seed(7);
  return mlp(at::randn({32, 64}), at::randn({64}), at::randn({64, 16}));
}

at::Tensor run(torch::jit::Module& m, const Inputs& inputs) {
  return m.forward(inputs).toTensor();
}

// Exports `m` to DIR/model.onnx and expects ORT to give libtorch's results on `inputs`.
void expect_runs_in_ort(torch::jit::Module& m, const Inputs& inputs, const std::string& dir,
                        const ExportOptions& options) {
  export_model(m, inputs, dir + "/model.onnx", options);
  write_test_data(dir + "/data", inputs, {run(m, inputs)});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir + "/data", {1e-4});
  EXPECT_TRUE(r.ok) << r.report;
}

std::map<std::string, std::string> external_refs(const onnx::TensorProto& t) {
  std::map<std::string, std::string> out;
  for (const auto& e : t.external_data()) out[e.key()] = e.value();
  return out;
}

const onnx::TensorProto* initializer(const onnx::ModelProto& p, const std::string& name) {
  for (const auto& t : p.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

std::string tensor_bytes(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
}

// Whether two messages are equal, with their differences when not. Debian forky's onnx is built
// on protobuf-lite (no reflection, no MessageDifferencer): there their serializations are compared.
template <typename M>
::testing::AssertionResult same_messages(const M& a, const M& b) {
  if constexpr (std::is_base_of_v<google::protobuf::Message, M>) {
    std::string diff;
    google::protobuf::util::MessageDifferencer differ;
    differ.ReportDifferencesToString(&diff);
    if (differ.Compare(a, b)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << diff;
  } else {
    if (a.SerializeAsString() == b.SerializeAsString()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the serializations differ";
  }
}

TEST(StreamingSerializer, WritesWhatProtobufWouldWrite) {
  // Every layout the writer handles: deferred tensors of each dtype, one exactly at the deferral
  // size, small inline tensors, an empty one; compared field by field with protobuf's own
  // serialization of the same model.
  ir::Model model;
  ir::Graph& g = model.graph;
  g.inputs.push_back({"x", ir::TypeInfo(at::kFloat, std::vector<int64_t>{4})});
  g.outputs.push_back({"y", ir::TypeInfo(at::kFloat, std::vector<int64_t>{4})});
  at::manual_seed(1);
  const int64_t at_limit = kDeferredTensorBytes / 4;
  g.initializers = {
      {"big.float", at::randn({64, 33})},          {"at_limit", at::randn({at_limit})},
      {"below_limit", at::randn({at_limit - 1})},  {"big.long", at::arange(300, at::kLong)},
      {"big.bool", at::rand({2000}) > 0.5},        {"big.half", at::randn({700}).to(at::kHalf)},
      {"non_contiguous", at::randn({40, 50}).t()}, {"empty", at::empty({0, 3})},
      {"ünïcode/name:0", at::randn({512})},
  };
  g.nodes.push_back({"Identity", "", "n0", {"x"}, {"y"}, {}, "", {}});
  ExportedModel exported = to_exported_model(model);
  EXPECT_EQ(exported.deferred.size(), 7u) << "tensors of kDeferredTensorBytes or more are deferred";
  for (const auto& d : exported.deferred) {
    EXPECT_FALSE(exported.proto.graph().initializer(d.index).has_raw_data());
  }
  onnx::ModelProto ours = parse_model(model_to_bytes(exported));
  onnx::ModelProto reference = to_model_proto(model);
  EXPECT_TRUE(same_messages(reference, ours));
  EXPECT_EQ(initializer(ours, "non_contiguous")->raw_data(),
            tensor_bytes(g.initializers[6].tensor));
}

TEST(StreamingSerializer, FileAndBytesAgreeAndRunInOrt) {
  auto m = example_mlp();
  Inputs inputs{at::randn({3, 32})};
  std::string dir = temp_dir("streaming");
  expect_runs_in_ort(m, inputs, dir, {});
  EXPECT_EQ(read_file(dir + "/model.onnx"), export_model_to_bytes(m, inputs));
  EXPECT_FALSE(fs::exists(dir + "/model.onnx.data")) << "no external data unless asked or needed";
}

TEST(ExternalData, SingleFileWithAlignedOffsets) {
  auto m = example_mlp();
  Inputs inputs{at::randn({3, 32})};
  std::string dir = temp_dir("external_single");
  ExportOptions options;
  options.use_external_data_format = true;
  expect_runs_in_ort(m, inputs, dir, options);

  onnx::ModelProto p = read_model_file(dir + "/model.onnx");
  const std::string data = read_file(dir + "/model.onnx.data");
  ASSERT_FALSE(data.empty());
  for (const std::string name : {"w1", "w2"}) {
    const onnx::TensorProto* t = initializer(p, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->data_location(), onnx::TensorProto_DataLocation_EXTERNAL) << name;
    EXPECT_FALSE(t->has_raw_data()) << name;
    auto refs = external_refs(*t);
    EXPECT_EQ(refs["location"], "model.onnx.data");
    const size_t offset = std::stoull(refs["offset"]), length = std::stoull(refs["length"]);
    EXPECT_EQ(offset % 64, 0u) << name << ": offsets are aligned";
    at::Tensor expected = m.attr(name).toTensor();
    ASSERT_EQ(length, expected.numel() * sizeof(float)) << name;
    ASSERT_LE(offset + length, data.size());
    EXPECT_EQ(data.substr(offset, length), tensor_bytes(expected)) << name;
  }
  // 64 floats = 256 bytes < the default threshold of 1024: inline.
  const onnx::TensorProto* b = initializer(p, "b");
  ASSERT_NE(b, nullptr);
  EXPECT_NE(b->data_location(), onnx::TensorProto_DataLocation_EXTERNAL);
  EXPECT_EQ(b->raw_data(), tensor_bytes(m.attr("b").toTensor()));
}

TEST(ExternalData, ThresholdAndCustomLocation) {
  auto m = example_mlp();
  Inputs inputs{at::randn({3, 32})};
  std::string dir = temp_dir("external_threshold");
  ExportOptions options;
  options.use_external_data_format = true;
  options.external_data.size_threshold = 100;  // the bias too
  options.external_data.location = "weights.bin";
  expect_runs_in_ort(m, inputs, dir, options);
  onnx::ModelProto p = read_model_file(dir + "/model.onnx");
  for (const std::string name : {"w1", "b", "w2"}) {
    const onnx::TensorProto* t = initializer(p, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(external_refs(*t)["location"], "weights.bin") << name;
  }
  EXPECT_TRUE(fs::exists(dir + "/weights.bin"));
  EXPECT_FALSE(fs::exists(dir + "/model.onnx.data"));
}

TEST(ExternalData, OneFilePerTensorAsTorchOnnxWritesThem) {
  at::manual_seed(3);
  torch::jit::Module m("Named");
  torch::jit::Module inner("Inner");
  inner.register_buffer("weight", at::randn({16, 16}));
  m.register_module("layer", inner);
  m.register_buffer("scale", at::randn({16, 16}));
  m.define(R"(
def forward(self, x):
    return torch.matmul(x, self.layer.weight) * self.scale
)");
  Inputs inputs{at::randn({16, 16})};
  std::string dir = temp_dir("external_per_tensor");
  ExportOptions options;
  options.use_external_data_format = true;
  options.external_data.layout = ExternalDataOptions::Layout::kFilePerTensor;
  expect_runs_in_ort(m, inputs, dir, options);
  onnx::ModelProto p = read_model_file(dir + "/model.onnx");
  const onnx::TensorProto* w = initializer(p, "layer.weight");
  ASSERT_NE(w, nullptr);
  auto refs = external_refs(*w);
  EXPECT_EQ(refs["location"], "layer.weight");
  EXPECT_EQ(refs.count("offset"), 0u);
  EXPECT_EQ(read_file(dir + "/layer.weight"),
            tensor_bytes(m.attr("layer").toModule().attr("weight").toTensor()));
  EXPECT_TRUE(fs::exists(dir + "/scale"));
}

TEST(ExternalData, ABadLocationLeavesNoFile) {
  auto m = example_mlp();
  Inputs inputs{at::randn({3, 32})};
  std::string dir = temp_dir("external_bad");
  ExportOptions options;
  options.use_external_data_format = true;
  options.external_data.location = "model.onnx";
  EXPECT_TRUE(ThrowsExportError(
      [&] { export_model(m, inputs, dir + "/model.onnx", options); }, ErrorCode::kInvalidArgument,
      {"'model.onnx' would overwrite the model", "Remedy: choose another external_data.location"}));
  EXPECT_TRUE(fs::is_empty(dir)) << "no partial or temporary file is left";
}

TEST(ExternalData, SwitchesOnPastTwoGigabytes) {
  // A buffer of 2.1 GB: the model cannot be one protobuf message. export_model stores it as
  // external data by itself; export_model_to_bytes refuses with a remedy.
  const int64_t numel = (int64_t{1} << 29) + (int64_t{1} << 24);  // 2.2 GB of floats
  at::Tensor big = at::zeros({numel}, at::kFloat);
  ASSERT_GT(big.numel() * 4, kProtobufLimitBytes);
  big.narrow(0, 0, 8).copy_(at::arange(8, at::kFloat));
  big[numel - 1] = 42.0;
  torch::jit::Module m("Big");
  m.register_buffer("big", big);
  // Indices known only at run time: nothing folds the buffer away.
  m.define(R"(
def forward(self, x, idx):
    return x + self.big[idx]
)");
  Inputs inputs{at::randn({8}),
                at::tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, numel - 1}, at::kLong)};
  std::string dir = temp_dir("external_auto");
  expect_runs_in_ort(m, inputs, dir, {});
  EXPECT_TRUE(fs::exists(dir + "/model.onnx.data"));
  EXPECT_LT(fs::file_size(dir + "/model.onnx"), 1u << 20);
  EXPECT_GE(fs::file_size(dir + "/model.onnx.data"), static_cast<uintmax_t>(big.numel() * 4));
  EXPECT_TRUE(
      ThrowsExportError([&] { export_model_to_bytes(m, inputs); }, ErrorCode::kIo,
                        {"past protobuf's 2 GB limit", "Remedy: export to a file (export_model)"}));
}

TEST(TiedWeights, OneStorageIsStoredOnce) {
  // Two buffers that are views of one storage (as tied weights are after torch.jit.load): one
  // initializer, read by both matmuls.
  at::manual_seed(5);
  at::Tensor w = at::randn({32, 32});
  torch::jit::Module m("Tied");
  m.register_buffer("encoder", w);
  m.register_buffer("decoder", w.view({32, 32}));
  m.define(R"(
def forward(self, x):
    return torch.matmul(torch.tanh(torch.matmul(x, self.encoder)), self.decoder)
)");
  ASSERT_NE(m.attr("encoder").toTensor().unsafeGetTensorImpl(),
            m.attr("decoder").toTensor().unsafeGetTensorImpl());
  Inputs inputs{at::randn({2, 32})};
  std::string dir = temp_dir("tied");
  expect_runs_in_ort(m, inputs, dir, {});
  onnx::ModelProto p = read_model_file(dir + "/model.onnx");
  ASSERT_EQ(p.graph().initializer_size(), 1);
  EXPECT_LT(fs::file_size(dir + "/model.onnx"), 2 * 32 * 32 * sizeof(float));
}

TEST(TiedWeights, EqualValuesShareInEvalModeOnly) {
  // torch.onnx deduplicates initializers by value in eval mode (LayerNorm weights of ones), and
  // only by identity in training mode (they may be trained apart).
  torch::jit::Module m("Equal");
  m.register_attribute("training", c10::BoolType::get(), false);
  m.register_buffer("a", at::ones({300}));
  m.register_buffer("b", at::ones({300}));
  m.register_buffer("c", at::full({300}, 2.0));
  m.define(R"(
def forward(self, x):
    return x * self.a + x * self.b + self.c
)");
  Inputs inputs{at::randn({300})};
  std::string dir = temp_dir("equal_values");
  expect_runs_in_ort(m, inputs, dir, {});
  EXPECT_EQ(read_model_file(dir + "/model.onnx").graph().initializer_size(), 2);

  ExportOptions training;
  training.training = TrainingMode::kTraining;
  std::string dir2 = temp_dir("equal_values_training");
  export_model(m, inputs, dir2 + "/model.onnx", training);
  EXPECT_EQ(read_model_file(dir2 + "/model.onnx").graph().initializer_size(), 3);
}

TEST(Progress, StagesInOrderAndBytesWritten) {
  auto m = example_mlp();
  Inputs inputs{at::randn({3, 32})};
  std::vector<ExportProgress> seen;
  ExportOptions options;
  options.progress = [&](const ExportProgress& p) { seen.push_back(p); };
  std::string dir = temp_dir("progress");
  export_model(m, inputs, dir + "/model.onnx", options);
  std::vector<std::string> stages;
  for (const auto& p : seen) {
    if (stages.empty() || stages.back() != p.stage) stages.push_back(p.stage);
  }
  EXPECT_EQ(stages, (std::vector<std::string>{"capture", "prepare", "convert", "optimize",
                                              "validate", "write"}));
  ASSERT_FALSE(seen.empty());
  const ExportProgress& last = seen.back();
  EXPECT_EQ(last.stage, "write");
  EXPECT_EQ(last.done, last.total);
  EXPECT_EQ(last.total, (32 * 64 + 64 + 64 * 16) * 4) << "every tensor byte";
  for (size_t i = 1; i < seen.size(); ++i)
    EXPECT_GE(seen[i].elapsed_seconds, seen[i - 1].elapsed_seconds);
}

TEST(ExternalDataCli, FlagsWriteExternalDataThatOrtLoads) {
  auto m = example_mlp();
  Inputs inputs{at::randn({3, 32})};
  std::string dir = temp_dir("external_cli");
  m.save(dir + "/mlp.pt");
  write_test_data(dir + "/data", inputs, {run(m, inputs)});
  CliResult r =
      run_cli(fmt::format("export {0}/mlp.pt -o {0}/out.onnx --inputs {0}/data "
                          "--external-data --external-data-threshold 100 --quiet",
                          dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/out.onnx.data"));
  OrtResult ort = run_in_ort(dir + "/out.onnx", dir + "/data", {1e-4});
  EXPECT_TRUE(ort.ok) << ort.report;
  onnx::ModelProto p = read_model_file(dir + "/out.onnx");
  ASSERT_NE(initializer(p, "b"), nullptr);
  EXPECT_EQ(initializer(p, "b")->data_location(), onnx::TensorProto_DataLocation_EXTERNAL);

  CliResult per =
      run_cli(fmt::format("export {0}/mlp.pt -o {0}/per.onnx --inputs {0}/data "
                          "--external-data --external-data-layout per-tensor",
                          dir));
  ASSERT_EQ(per.exit_code, 0) << per.output;
  EXPECT_TRUE(fs::exists(dir + "/w1"));
  OrtResult ort2 = run_in_ort(dir + "/per.onnx", dir + "/data", {1e-4});
  EXPECT_TRUE(ort2.ok) << ort2.report;
}

}  // namespace
}  // namespace torchonnx::testing
