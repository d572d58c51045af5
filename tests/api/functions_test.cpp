// export_modules_as_functions (issue 6, item 7): instances of selected module types become ONNX
// local functions. Fixtures by tests/fixtures/make_functions.py; each export is checked for its
// functions and call nodes, validated by onnx (the exporter runs the checker and strict shape
// inference) and run in ONNX Runtime against libtorch.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <torch/script.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "support/expect_error.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;
using Inputs = std::vector<c10::IValue>;

struct Fixture {
  torch::jit::Module model;
  Inputs inputs;
  std::string reference;  // folder with input_*.pb and libtorch's output_*.pb
  std::string error;      // why the fixture cannot be used ("" when it can): tests fail on it
};

Fixture load_fixture(const std::string& name) {
  const fs::path dir = fs::path(TORCHONNX_FUNCTION_FIXTURE_DIR);
  const fs::path pt = dir / (name + ".pt");
  if (!fs::exists(pt)) {
    return {torch::jit::Module("missing"),
            {},
            "",
            pt.string() + " is missing: run the make_function_fixtures test"};
  }
  Fixture f{load_model(pt.string()), {}, "", ""};
  f.model.eval();
  for (int i = 0; fs::exists(dir / name / fmt::format("input_{}.pb", i)); ++i) {
    f.inputs.emplace_back(read_tensor_file((dir / name / fmt::format("input_{}.pb", i)).string()));
  }
  if (f.inputs.empty()) {
    f.error =
        (dir / name / "input_0.pb").string() + " is missing: run the make_function_fixtures test";
    return f;
  }
  f.reference = temp_dir(name + "_reference");
  write_test_data(f.reference, f.inputs, frontend::run_module(f.model, f.inputs));
  return f;
}

ExportOptions function_options(std::set<std::string> types, int opset = 17) {
  ExportOptions options;
  options.opset_version = opset;
  options.export_modules_as_functions = std::move(types);
  return options;
}

// Exports, runs in ORT against libtorch, returns the model.
onnx::ModelProto export_and_run(const Fixture& f, const ExportOptions& options,
                                Tolerance tol = {}) {
  const std::string path = temp_dir("functions") + "/model.onnx";
  export_model(f.model, f.inputs, path, options);
  std::string bytes = read_file(path);
  OrtResult result = run_in_ort(path, f.reference, tol);
  EXPECT_TRUE(result.ok) << result.report;
  return parse_model(bytes);
}

// op_type → count of the nodes of `nodes` in `domain`.
template <typename Nodes>
std::map<std::string, int> calls_in(const Nodes& nodes, const std::string& domain) {
  std::map<std::string, int> out;
  for (const auto& n : nodes) {
    if (n.domain() == domain) ++out[n.op_type()];
  }
  return out;
}

const onnx::FunctionProto* find_function(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& f : m.functions()) {
    if (f.name() == name) return &f;
  }
  return nullptr;
}

int opset_of(const onnx::ModelProto& m, const std::string& domain) {
  for (const auto& o : m.opset_import()) {
    if (o.domain() == domain) return static_cast<int>(o.version());
  }
  return -1;
}

TEST(ModuleFunctions, TracedBlocksShareOneFunction) {
  Fixture f = load_fixture("blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  auto m = export_and_run(f, function_options({"Block"}));
  ASSERT_EQ(m.functions_size(), 1);
  const auto& fn = m.functions(0);
  EXPECT_EQ(fn.name(), "Block");
  EXPECT_EQ(fn.domain(), "__main__");  // the fixture script's classes live in __main__
  EXPECT_EQ(opset_of(m, "__main__"), 1);
  // Linear + ReLU inside; the weight and bias are inputs, as torch.onnx passes parameters.
  EXPECT_EQ(fn.input_size(), 3);
  EXPECT_EQ(fn.output_size(), 1);
  EXPECT_EQ(calls_in(fn.node(), "")["Relu"], 1);
  // block1 (4→8), block2 and nested.inner (8→8): one body, three calls.
  EXPECT_EQ(calls_in(m.graph().node(), "__main__")["Block"], 3);
  EXPECT_EQ(calls_in(m.graph().node(), "")["Relu"], 0) << "every ReLU is inside a Block";
  // head (a Linear outside any Block) and the Wrapper's Tanh stay in the main graph.
  EXPECT_EQ(calls_in(m.graph().node(), "")["Tanh"], 1);
}

TEST(ModuleFunctions, NestedSelectedTypesBecomeNestedCalls) {
  Fixture f = load_fixture("blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  auto m = export_and_run(f, function_options({"Block", "Wrapper"}));
  ASSERT_EQ(m.functions_size(), 2);
  const auto* block = find_function(m, "Block");
  const auto* wrapper = find_function(m, "Wrapper");
  ASSERT_TRUE(block && wrapper);
  EXPECT_EQ(calls_in(wrapper->node(), "__main__")["Block"], 1) << "Wrapper calls Block";
  EXPECT_EQ(calls_in(wrapper->node(), "")["Tanh"], 1);
  const auto main_calls = calls_in(m.graph().node(), "__main__");
  EXPECT_EQ(main_calls.at("Block"), 2);
  EXPECT_EQ(main_calls.at("Wrapper"), 1);
  // Wrapper's function imports the domain of the function it calls.
  bool imports = false;
  for (const auto& o : wrapper->opset_import()) imports = imports || o.domain() == "__main__";
  EXPECT_TRUE(imports);
}

TEST(ModuleFunctions, QualifiedNamesAndLibraryModules) {
  Fixture f = load_fixture("blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  // The qualified TorchScript name, and Block around Linear: Block's body calls Linear.
  auto m =
      export_and_run(f, function_options({"__torch__.torch.nn.modules.linear.Linear", "Block"}));
  const auto* linear = find_function(m, "Linear");
  const auto* block = find_function(m, "Block");
  ASSERT_TRUE(linear && block);
  EXPECT_EQ(linear->domain(), "torch.nn.modules.linear");
  EXPECT_EQ(opset_of(m, "torch.nn.modules.linear"), 1);
  EXPECT_EQ(calls_in(block->node(), "torch.nn.modules.linear")["Linear"], 1);
  EXPECT_EQ(calls_in(m.graph().node(), "torch.nn.modules.linear")["Linear"], 1) << "the head";
  EXPECT_EQ(calls_in(m.graph().node(), "__main__")["Block"], 3);
  // The Python form of the name (torch.typename) selects the same type.
  auto again = export_and_run(f, function_options({"torch.nn.modules.linear.Linear"}));
  EXPECT_EQ(calls_in(again.graph().node(), "torch.nn.modules.linear")["Linear"], 4);
}

// Note [Function attributes] in onnx/module_functions.cpp: values that differ between instances
// of one structure become attributes of the function, given by each call (torch.onnx's form).
TEST(ModuleFunctions, ValuesThatDifferBetweenInstancesBecomeFunctionAttributes) {
  Fixture f = load_fixture("scaled_blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  // a and c scale by 2.0, b by 3.0: the scale is a Constant of the body; one function whose
  // Constant refers to the function's attribute, which each call sets.
  auto m = export_and_run(f, function_options({"ScaledBlock"}));
  ASSERT_EQ(m.functions_size(), 1);
  const auto& fn = m.functions(0);
  EXPECT_EQ(fn.name(), "ScaledBlock");
  ASSERT_EQ(fn.attribute_size(), 1);
  EXPECT_EQ(fn.attribute(0), "inferred::Constant_value");
  int refs = 0;
  for (const auto& n : fn.node()) {
    for (const auto& a : n.attribute()) {
      if (a.ref_attr_name() == "inferred::Constant_value") {
        ++refs;
        EXPECT_EQ(n.op_type(), "Constant");
        EXPECT_EQ(a.type(), onnx::AttributeProto::TENSOR);
      }
    }
  }
  EXPECT_EQ(refs, 1);
  // Calls in module order a, b, c, each with its scale.
  std::vector<float> scales;
  for (const auto& n : m.graph().node()) {
    if (n.domain() != "__main__") continue;
    EXPECT_EQ(n.op_type(), "ScaledBlock");
    ASSERT_EQ(n.attribute_size(), 1);
    EXPECT_EQ(n.attribute(0).name(), "inferred::Constant_value");
    scales.push_back(from_tensor_proto(n.attribute(0).t()).item<float>());
  }
  EXPECT_EQ(scales, (std::vector<float>{2.0f, 3.0f, 2.0f}));
}

TEST(ModuleFunctions, TransformerEncoderLayers) {
  Fixture f = load_fixture("transformer_encoder");
  ASSERT_TRUE(f.error.empty()) << f.error;
  auto m = export_and_run(f, function_options({"TransformerEncoderLayer"}), {1e-3, 1e-4});
  ASSERT_EQ(m.functions_size(), 1);
  EXPECT_EQ(m.functions(0).name(), "TransformerEncoderLayer");
  EXPECT_EQ(m.functions(0).domain(), "torch.nn.modules.transformer");
  EXPECT_EQ(calls_in(m.graph().node(), "torch.nn.modules.transformer")["TransformerEncoderLayer"],
            2);
  EXPECT_GT(calls_in(m.functions(0).node(), "")["LayerNormalization"], 0);
  // Everything of the encoder is inside its two layers.
  EXPECT_EQ(calls_in(m.graph().node(), "")["LayerNormalization"], 0);
  // Nested: the attention of each layer as a function of its own.
  auto nested = export_and_run(
      f, function_options({"TransformerEncoderLayer", "MultiheadAttention"}), {1e-3, 1e-4});
  const auto* layer = find_function(nested, "TransformerEncoderLayer");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(calls_in(layer->node(), "torch.nn.modules.activation")["MultiheadAttention"], 1);
}

TEST(ModuleFunctions, ScriptedModuleWithALoop) {
  Fixture f = load_fixture("scripted_blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  auto m = export_and_run(f, function_options({"Block"}));
  ASSERT_EQ(m.functions_size(), 1);
  EXPECT_EQ(m.functions(0).name(), "Block");
  // block2 is called in the main graph, block1 inside the Loop's body.
  EXPECT_EQ(calls_in(m.graph().node(), "__main__")["Block"], 1);
  int in_loop = 0;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Loop") continue;
    for (const auto& attr : n.attribute())
      in_loop += calls_in(attr.g().node(), "__main__")["Block"];
  }
  EXPECT_EQ(in_loop, 1);
}

TEST(ModuleFunctions, ModuleListElementsOfDifferentListsAreDifferentInstances) {
  // enc.0 and dec.0: TorchScript's call stack names both "0"; they must stay two calls.
  for (const char* name : {"two_lists_traced", "two_lists_scripted"}) {
    SCOPED_TRACE(name);
    Fixture f = load_fixture(name);
    if (!f.error.empty()) {
      ADD_FAILURE() << f.error;
      continue;
    }
    auto m = export_and_run(f, function_options({"Block"}));
    EXPECT_EQ(m.functions_size(), 1);
    EXPECT_EQ(calls_in(m.graph().node(), "__main__")["Block"], 2);
    EXPECT_EQ(calls_in(m.graph().node(), "")["Mul"], 1) << "dec's * 2.0 stays in the main graph";
  }
}

TEST(ModuleFunctions, OpsetBelow15IsAnError) {
  Fixture f = load_fixture("blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  EXPECT_TRUE(ThrowsExportError(
      [&] { export_model_to_bytes(f.model, f.inputs, function_options({"Block"}, 14)); },
      ErrorCode::kInvalidArgument,
      {"opset_version 14 < 15", "Remedy: export with --opset 15 or higher"}));
  // Without the option, opset 14 exports.
  EXPECT_NO_THROW(export_model_to_bytes(f.model, f.inputs, function_options({}, 14)));
}

TEST(ModuleFunctions, UnknownTypeNamesTheModelsTypes) {
  Fixture f = load_fixture("blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  EXPECT_TRUE(ThrowsExportError(
      [&] { export_model_to_bytes(f.model, f.inputs, function_options({"Conv2d"})); },
      ErrorCode::kInvalidArgument,
      {"no instance of module type Conv2d", "__torch__.Block", "Remedy: name one of them"}));
}

// Beside a type that is there, a type with no call in the graph makes no function and no error,
// as in torch.onnx (an eval Dropout leaves no call of its module).
TEST(ModuleFunctions, ATypeWithoutCallsBesideOnesWithCallsIsSkipped) {
  Fixture f = load_fixture("blocks");
  ASSERT_TRUE(f.error.empty()) << f.error;
  auto m = export_and_run(f, function_options({"Block", "Conv2d"}));
  auto block_only = export_and_run(f, function_options({"Block"}));
  EXPECT_EQ(m.functions_size(), 1);
  EXPECT_GT(calls_in(m.graph().node(), "__main__")["Block"], 0);
  EXPECT_EQ(calls_in(m.graph().node(), "__main__")["Block"],
            calls_in(block_only.graph().node(), "__main__")["Block"]);
}

TEST(ModuleFunctions, TracedCppFunctionsHaveNoModules) {
  at::Tensor w = at::randn({4, 3});
  TracedFunction fn = [&](const Inputs& in) { return at::relu(at::linear(in[0].toTensor(), w)); };
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_function_to_bytes(fn, {at::randn({2, 3})}, {{"w", w}}, function_options({"Linear"}));
      },
      ErrorCode::kInvalidArgument,
      {"records no module calls", "Remedy: export a TorchScript module"}));
}

TEST(ModuleFunctions, CliFlag) {
  const fs::path dir = fs::path(TORCHONNX_FUNCTION_FIXTURE_DIR);
  const std::string out = temp_dir("functions_cli") + "/model.onnx";
  const std::string common = fmt::format(
      "export {} -o {} --inputs {}", (dir / "blocks.pt").string(), out, (dir / "blocks").string());
  auto r = run_cli(common + " --modules-as-functions Block,Wrapper");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto m = read_model_file(out);
  EXPECT_EQ(m.functions_size(), 2);
  EXPECT_EQ(calls_in(m.graph().node(), "__main__")["Wrapper"], 1);

  r = run_cli(common + " --opset 13 --modules-as-functions Block");
  EXPECT_TRUE(CliFails(r, ErrorCode::kInvalidArgument,
                       {"opset_version 13 < 15", "Remedy: export with --opset 15 or higher"}));
  r = run_cli("export --help");
  EXPECT_NE(r.output.find("--modules-as-functions"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace torchonnx::testing
