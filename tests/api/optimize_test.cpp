// Graph quality (issue 7): the peephole and constant-folding passes of src/onnx/optimize.cpp.
// Every test exports a small TorchScript module, runs the ONNX model in ONNX Runtime and compares
// with libtorch, and asserts what the passes did to the graph (op counts, initializers).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "ops/op_test_util.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

using OpCounts = std::map<std::string, int>;

OpCounts op_counts(const onnx::GraphProto& g) {
  OpCounts counts;
  for (const auto& n : g.node()) ++counts[n.op_type()];
  return counts;
}

int count(const OpCounts& c, const std::string& op) {
  auto it = c.find(op);
  return it == c.end() ? 0 : it->second;
}

std::string describe(const OpCounts& c) {
  std::string out;
  for (const auto& [op, n] : c) out += fmt::format("{}{}×{}", out.empty() ? "" : ", ", op, n);
  return out;
}

// A TorchScript module with a `training` attribute (export's mode switch needs it).
torch::jit::Module module_with(const std::string& source, const NamedTensors& buffers = {}) {
  torch::jit::Module m("Net");
  m.register_attribute("training", c10::BoolType::get(), false);
  for (const auto& [name, t] : buffers) m.register_buffer(name, t);
  m.define(source);
  return m;
}

struct Exported {
  onnx::ModelProto proto;
  OpCounts ops;
};

// Exports `m` on `inputs`, then runs the model in ORT on `inputs` and on each of `others` and
// expects libtorch's outputs (`reference` computes them; by default m's forward).
Exported export_and_compare(const torch::jit::Module& m, const Inputs& inputs,
                            const ExportOptions& options = {},
                            const std::vector<Inputs>& others = {}, Tolerance tol = {}) {
  std::string dir = temp_dir("optimize");
  const std::string path = dir + "/model.onnx";
  Exported out;
  try {
    export_model(m, inputs, path, options);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "export failed: " << e.what();
    return out;
  }
  out.proto = read_model_file(path);
  out.ops = op_counts(out.proto.graph());
  std::vector<Inputs> all{inputs};
  all.insert(all.end(), others.begin(), others.end());
  for (size_t c = 0; c < all.size(); ++c) {
    std::string data = fmt::format("{}/case{}", dir, c);
    std::filesystem::create_directories(data);
    write_test_data(data, all[c], frontend::run_module(m, cloned(all[c])));
    OrtResult r = run_in_ort(path, data, tol);
    EXPECT_TRUE(r.ok) << "inputs " << c << ": " << r.report << "\nops: " << describe(out.ops);
  }
  return out;
}

std::vector<std::string> initializer_names(const onnx::ModelProto& p) {
  std::vector<std::string> names;
  for (const auto& t : p.graph().initializer()) names.push_back(t.name());
  return names;
}

// conv2d → batch_norm with non-trivial statistics.
torch::jit::Module conv_bn(bool with_bias) {
  return module_with(
      fmt::format("def forward(self, x):\n"
                  "  y = torch.conv2d(x, self.w, {}, [1, 1], [1, 1])\n"
                  "  return torch.batch_norm(y, self.g, self.beta, self.mean, self.var, False, "
                  "0.1, 1e-5, False)\n",
                  with_bias ? "self.b" : "None"),
      {{"w", at::randn({6, 3, 3, 3})},
       {"b", at::randn({6})},
       {"g", at::rand({6}) + 0.5},
       {"beta", at::randn({6})},
       {"mean", at::randn({6})},
       {"var", at::rand({6}) + 0.5}});
}

// ----- batch norm folding -----------------------------------------------------------------------

TEST(Optimize, ConvBatchNormFoldedInEval) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "conv with bias" : "conv without bias");
    auto m = conv_bn(bias);
    auto e = export_and_compare(m, {at::randn({2, 3, 8, 8})});
    EXPECT_EQ(count(e.ops, "BatchNormalization"), 0) << describe(e.ops);
    EXPECT_EQ(count(e.ops, "Conv"), 1) << describe(e.ops);
    EXPECT_EQ(e.proto.graph().node_size(), 1) << describe(e.ops);
    // The folded weight and bias replace the six tensors.
    EXPECT_EQ(e.proto.graph().initializer_size(), 2);
  }
}

TEST(Optimize, BatchNormKeptInTrainingModeAndWithOverridableWeights) {
  auto m = conv_bn(true);
  {
    ExportOptions options;
    options.training = TrainingMode::kTraining;  // batch_norm(training=False) stays inference form
    auto e = export_and_compare(m, {at::randn({2, 3, 8, 8})}, options);
    EXPECT_EQ(count(e.ops, "BatchNormalization"), 1) << describe(e.ops);
  }
  {
    // Initializers listed as inputs can be fed at run time: they are not constants.
    ExportOptions options;
    options.keep_initializers_as_inputs = true;
    auto p = parse_model(export_model_to_bytes(m, {at::randn({2, 3, 8, 8})}, options));
    EXPECT_EQ(count(op_counts(p.graph()), "BatchNormalization"), 1);
  }
  {
    ExportOptions options;
    options.export_params = false;
    auto p = parse_model(export_model_to_bytes(m, {at::randn({2, 3, 8, 8})}, options));
    EXPECT_EQ(count(op_counts(p.graph()), "BatchNormalization"), 1);
    EXPECT_EQ(p.graph().initializer_size(), 0);
  }
}

// ----- constant folding -------------------------------------------------------------------------

TEST(Optimize, WeightTransposesFolded) {
  auto m = module_with("def forward(self, x):\n  return torch.matmul(x, self.w.t()) + self.b\n",
                       {{"w", at::randn({5, 8})}, {"b", at::randn({5})}});
  const Inputs x3{at::randn({2, 3, 8})};
  auto e = export_and_compare(m, x3);
  EXPECT_EQ(count(e.ops, "Transpose"), 0) << describe(e.ops);
  ASSERT_EQ(e.proto.graph().initializer_size(), 2);
  bool transposed = false;
  for (const auto& t : e.proto.graph().initializer()) {
    transposed = transposed || (t.dims_size() == 2 && t.dims(0) == 8 && t.dims(1) == 5);
  }
  EXPECT_TRUE(transposed) << "the weight is stored transposed";

  // Without folding the Transpose stays.
  ExportOptions no_fold;
  no_fold.do_constant_folding = false;
  auto kept = export_and_compare(m, x3, no_fold);
  EXPECT_EQ(count(kept.ops, "Transpose"), 1) << describe(kept.ops);
}

TEST(Optimize, LargeWeightTransposeFoldedAndWrittenInOrder) {
  // Above the small-tensor allowance the folded transpose is a view of the weight, written
  // transposed by the serializer.
  auto m = module_with("def forward(self, x):\n  return torch.matmul(x, self.w.t())\n",
                       {{"w", at::randn({96, 256})}});
  auto e = export_and_compare(m, {at::randn({2, 3, 256})}, {}, {}, {1e-3, 1e-4});
  EXPECT_EQ(count(e.ops, "Transpose"), 0) << describe(e.ops);
  ASSERT_EQ(e.proto.graph().initializer_size(), 1);
  EXPECT_EQ(e.proto.graph().initializer(0).dims(0), 256);
}

TEST(Optimize, MatMulAddOnTwoDimensionalInputBecomesGemm) {
  auto m = module_with("def forward(self, x):\n  return torch.matmul(x, self.w.t()) + self.b\n",
                       {{"w", at::randn({5, 8})}, {"b", at::randn({5})}});
  for (bool fold : {true, false}) {
    SCOPED_TRACE(fold ? "folding" : "no folding");
    ExportOptions options;
    options.do_constant_folding = fold;
    auto e = export_and_compare(m, {at::randn({4, 8})}, options);
    EXPECT_EQ(count(e.ops, "Gemm"), 1) << describe(e.ops);
    EXPECT_EQ(count(e.ops, "MatMul"), 0) << describe(e.ops);
    EXPECT_EQ(count(e.ops, "Add"), 0) << describe(e.ops);
    // Without folding the weight's Transpose becomes Gemm's transB.
    EXPECT_EQ(count(e.ops, "Transpose"), 0) << describe(e.ops);
  }
}

// addmm(b, x, w.t()) — a C++ torch::nn::Linear's trace — reads the weight itself, under its own
// name, with transB=1 (the spec's AlexNet graph): the Transpose is not folded into a copy.
TEST(Optimize, GemmReadsATransposedWeightUnderItsOwnName) {
  for (bool fold : {true, false}) {
    SCOPED_TRACE(fold ? "folding" : "no folding");
    auto m = module_with("def forward(self, x):\n  return torch.addmm(self.b, x, self.w.t())\n",
                         {{"w", at::randn({5, 8})}, {"b", at::randn({5})}});
    ExportOptions options;
    options.do_constant_folding = fold;
    auto e = export_and_compare(m, {at::randn({4, 8})}, options);
    EXPECT_EQ(count(e.ops, "Transpose"), 0) << describe(e.ops);
    ASSERT_EQ(count(e.ops, "Gemm"), 1) << describe(e.ops);
    std::vector<std::string> names = initializer_names(e.proto);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"b", "w"}));
    for (const auto& node : e.proto.graph().node()) {
      if (node.op_type() != "Gemm") continue;
      EXPECT_EQ(node.input(1), "w");
      bool trans_b = false;
      for (const auto& a : node.attribute())
        trans_b = trans_b || (a.name() == "transB" && a.i() == 1);
      EXPECT_TRUE(trans_b);
    }
  }
}

TEST(Optimize, TiedWeightIsNotCopiedByFolding) {
  // An embedding whose matrix is also the output projection (GPT's tied lm_head): folding the
  // Transpose would store a second copy of the weight.
  at::Tensor w = at::randn({300, 64});  // 75 KB, above the small-tensor allowance
  auto m = module_with(
      "def forward(self, ids):\n"
      "  e = torch.embedding(self.w, ids)\n"
      "  return torch.matmul(e, self.w.t())\n",
      {{"w", w}});
  auto e = export_and_compare(m, {at::randint(0, 300, {2, 7}, at::kLong)});
  EXPECT_EQ(initializer_names(e.proto), std::vector<std::string>{"w"});
  EXPECT_EQ(count(e.ops, "Transpose"), 1) << describe(e.ops);
}

TEST(Optimize, IdenticalFoldedConstantsStoredOnce) {
  at::Tensor w = at::randn({4, 6});
  auto m = module_with(
      "def forward(self, x):\n"
      "  return torch.matmul(x, self.w1.t()) * torch.matmul(x, self.w2.t())\n",
      {{"w1", w}, {"w2", w.clone()}});
  auto e = export_and_compare(m, {at::randn({3, 2, 6})});
  EXPECT_EQ(count(e.ops, "Transpose"), 0) << describe(e.ops);
  EXPECT_EQ(e.proto.graph().initializer_size(), 1);
}

TEST(Optimize, ShapeOfStaticValueFoldedUnlessFoldingIsOff) {
  // zeros_like converts to Shape → ConstantOfShape.
  auto m = module_with("def forward(self, x):\n  return torch.zeros_like(x) + x * 2.0\n");
  const Inputs x{at::randn({3, 4})};
  auto folded = export_and_compare(m, x);
  EXPECT_EQ(count(folded.ops, "Shape"), 0) << describe(folded.ops);
  EXPECT_EQ(count(folded.ops, "ConstantOfShape"), 0) << describe(folded.ops);

  ExportOptions no_fold;
  no_fold.do_constant_folding = false;
  auto kept = export_and_compare(m, x, no_fold);
  EXPECT_EQ(count(kept.ops, "Shape"), 1) << describe(kept.ops);
  EXPECT_EQ(count(kept.ops, "ConstantOfShape"), 1) << describe(kept.ops);
}

TEST(Optimize, DynamicAxesKeepShapeChains) {
  auto m = module_with(
      "def forward(self, x):\n"
      "  return torch.zeros_like(x) + x.reshape(x.size(0), 2, -1).reshape(x.size(0), -1)\n");
  ExportOptions options;
  options.input_names = {"x"};
  options.dynamic_axes = {{"x", {{0, "batch"}}}};
  auto e = export_and_compare(m, {at::randn({3, 4})}, options,
                              {{at::randn({5, 4})}, {at::randn({1, 4})}});
  EXPECT_GE(count(e.ops, "Shape"), 1) << describe(e.ops);
  EXPECT_EQ(count(e.ops, "ConstantOfShape"), 1) << describe(e.ops);
}

// Note [Converter output types]: the optimizer knows the shape of a convolution's output from
// its converter (type propagation's), not from a shape rule of its own (it has none for Conv), so
// the sizes pixel_shuffle computes from it fold at static shapes; with a dynamic batch they stay
// computed, and the model runs at other batch sizes.
TEST(Optimize, ConverterOutputTypesLetShapesOfTheirResultsFold) {
  auto m = module_with(
      "def forward(self, x):\n"
      "  y = torch.conv2d(x, self.w)\n"
      "  return torch.pixel_shuffle(y, 2)\n",
      NamedTensors{{"w", at::randn({8, 3, 3, 3})}});
  const Inputs x{at::randn({2, 3, 6, 6})};
  auto folded = export_and_compare(m, x);
  EXPECT_EQ(count(folded.ops, "Shape"), 0) << describe(folded.ops);
  EXPECT_EQ(count(folded.ops, "Conv"), 1) << describe(folded.ops);

  ExportOptions options;
  options.input_names = {"x"};
  options.dynamic_axes = {{"x", {{0, "batch"}}}};
  auto dynamic = export_and_compare(m, x, options, {{at::randn({5, 3, 6, 6})}});
  EXPECT_GE(count(dynamic.ops, "Shape"), 1) << describe(dynamic.ops);
}

TEST(Optimize, GraphOutputComputedFromConstantsKeepsItsName) {
  auto m = module_with("def forward(self, x):\n  return x + 1.0, self.w.t()\n",
                       {{"w", at::randn({2, 3})}});
  ExportOptions options;
  options.output_names = {"y", "wt"};
  auto e = export_and_compare(m, {at::randn({2})}, options);
  ASSERT_EQ(e.proto.graph().output_size(), 2);
  EXPECT_EQ(e.proto.graph().output(1).name(), "wt");
}

// ----- chains -----------------------------------------------------------------------------------

TEST(Optimize, RedundantChainsRemoved) {
  auto m = module_with(
      "def forward(self, x, mask):\n"
      "  a = x.transpose(1, 2).transpose(1, 2)\n"
      "  b = (a * 2.0).reshape(2, 12).reshape(4, 6)\n"
      "  c = mask.unsqueeze(1).unsqueeze(2)\n"
      "  d = mask.long().float()\n"
      "  e = (x + 1.0).permute(2, 0, 1).permute(0, 2, 1)\n"
      "  return b, c, d, e\n");
  auto e = export_and_compare(m, {at::randn({2, 3, 4}), at::randint(0, 5, {2, 3}, at::kInt)});
  EXPECT_EQ(count(e.ops, "Transpose"), 1) << describe(e.ops);  // the two permutes, composed
  EXPECT_EQ(count(e.ops, "Reshape"), 1) << describe(e.ops);
  EXPECT_EQ(count(e.ops, "Unsqueeze"), 1) << describe(e.ops);
  EXPECT_EQ(count(e.ops, "Cast"), 1) << describe(e.ops);
  EXPECT_EQ(count(e.ops, "Identity"), 0) << describe(e.ops);
}

TEST(Optimize, LossyCastChainKept) {
  // float → int64 → float truncates: both casts stay.
  auto m = module_with("def forward(self, x):\n  return x.long().float()\n");
  auto e = export_and_compare(m, {at::randn({3, 4}) * 10});
  EXPECT_EQ(count(e.ops, "Cast"), 2) << describe(e.ops);
}

// ----- subgraphs --------------------------------------------------------------------------------

TEST(Optimize, LoopBodyReadingOuterFoldedConstantsStillRuns) {
  // c is a folded Transpose of a weight that the loop body reads by name; the body's own
  // Transpose of an outer weight and its chains are optimized inside the body.
  auto m = module_with(
      "def forward(self, x):\n"
      "  c = self.w.t()\n"
      "  y = x\n"
      "  i = 0\n"
      "  while bool(y.abs().sum() < 100.0) and i < 12:\n"
      "    y = torch.matmul(y, c) + self.b.t().t()\n"
      "    i += 1\n"
      "  return y\n",
      {{"w", at::rand({4, 4}) + 0.5}, {"b", at::rand({1, 4})}});
  auto e =
      export_and_compare(m, {at::randn({2, 4}) * 0.1}, {},
                         {{at::randn({2, 4}) * 10}, {at::randn({2, 4}) * 0.001}}, {1e-3, 1e-4});
  EXPECT_EQ(count(e.ops, "Loop"), 1) << describe(e.ops);
  EXPECT_EQ(count(e.ops, "Transpose"), 0) << describe(e.ops);
  for (const auto& n : e.proto.graph().node()) {
    if (n.op_type() != "Loop") continue;
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      OpCounts body = op_counts(a.g());
      EXPECT_EQ(count(body, "Transpose"), 0) << "body: " << describe(body);
    }
  }
}

}  // namespace
}  // namespace torchonnx::testing
