// Custom symbolics (torchonnx/symbolic.h): registration by opset, precedence over built-ins,
// SymbolicContext, custom domains and their opset imports, thread safety, and the custom-op
// example library (examples/custom_op) end to end through the CLI's --load-library.
#include "torchonnx/symbolic.h"

#include <ATen/ATen.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/library.h>
#include <torch/script.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "onnx/tensor_proto.h"
#include "ops/op_test_util.h"
#include "support/expect_error.h"
#include "support/harness.h"
#include "torchonnx/export.h"

namespace torchonnx::testing {
namespace {

// A custom TorchScript op for the in-process tests: test_ops::scale(x, factor) = x * factor.
at::Tensor scale(const at::Tensor& x, double factor) {
  return x * factor;
}
TORCH_LIBRARY(test_ops, m) {
  m.def("scale(Tensor x, float factor) -> Tensor", scale);
}

constexpr const char* kScaleIr =
    "graph(%x : Tensor):\n"
    "  %f : float = prim::Constant[value=2.5]()\n"
    "  %y : Tensor = test_ops::scale(%x, %f)\n"
    "  %z : Tensor = aten::relu(%y)\n"
    "  return (%z)\n";

std::vector<std::string> op_types(const onnx::ModelProto& model) {
  std::vector<std::string> out;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != "Constant")
      out.push_back((n.domain().empty() ? "" : n.domain() + "::") + n.op_type());
  }
  return out;
}

std::map<std::string, int64_t> opset_imports(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> out;
  for (const auto& o : model.opset_import()) out[o.domain()] = o.version();
  return out;
}

onnx::ModelProto export_at(const torch::jit::Module& m, const std::vector<c10::IValue>& args,
                           int opset, std::map<std::string, int> custom_opsets = {}) {
  ExportOptions options;
  options.opset_version = opset;
  options.custom_opsets = std::move(custom_opsets);
  return parse_model(export_model_to_bytes(m, args, options));
}

// Unregisters at the end of a test even when it fails.
struct Registered {
  std::string name;
  std::vector<int> opsets;
  ~Registered() {
    for (int o : opsets) unregister_custom_op_symbolic(name, o);
  }
};

Values relu_as_max(GraphContext& g, const Args& a) {
  return {g.op("Max", {a.tensor(0), g.constant_scalar(0.0, a.dtype(0))})};
}
Values relu_as_clip(GraphContext& g, const Args& a) {
  return {g.op("Clip", {a.tensor(0), g.constant_scalar(0.0, a.dtype(0))})};
}

void expect_runs(const torch::jit::Module& m, const std::vector<c10::IValue>& args, int opset) {
  std::string dir = temp_dir(fmt::format("custom_runs_{}", opset));
  ExportOptions options;
  options.opset_version = opset;
  export_model(m, args, dir + "/model.onnx", options);
  write_test_data(dir, args, frontend::run_module(m, cloned(args)));
  auto result = run_in_ort(dir + "/model.onnx", dir);
  EXPECT_TRUE(result.ok) << "opset " << opset << ": " << result.report;
}

TEST(CustomSymbolic, OverridesTheBuiltinConverterUntilUnregistered) {
  auto m = script_module("def forward(self, x):\n  return torch.relu(x)\n");
  std::vector<c10::IValue> args{at::randn({3, 4})};
  EXPECT_EQ(op_types(export_at(m, args, 13)), std::vector<std::string>{"Relu"});
  {
    Registered r{"aten::relu", {9}};
    register_custom_op_symbolic("aten::relu", relu_as_max, 9);
    EXPECT_EQ(op_types(export_at(m, args, 13)), std::vector<std::string>{"Max"});
    expect_runs(m, args, 13);
    EXPECT_TRUE(unregister_custom_op_symbolic("aten::relu", 9));
    EXPECT_FALSE(unregister_custom_op_symbolic("aten::relu", 9));  // already gone
  }
  EXPECT_EQ(op_types(export_at(m, args, 13)), std::vector<std::string>{"Relu"});
  // In-place relu_ uses the symbolic of relu, as with built-ins.
  auto inplace = script_module("def forward(self, x):\n  y = x * 2.0\n  y.relu_()\n  return y\n");
  Registered r{"aten::relu", {9}};
  register_custom_op_symbolic("aten::relu", relu_as_max, 9);
  EXPECT_EQ(op_types(export_at(inplace, args, 13)), (std::vector<std::string>{"Mul", "Max"}));
}

TEST(CustomSymbolic, ARegistrationAppliesFromItsOpsetUntilAHigherOne) {
  auto m = script_module("def forward(self, x):\n  return torch.relu(x)\n");
  std::vector<c10::IValue> args{at::randn({5})};
  Registered r{"aten::relu", {10, 13}};
  register_custom_op_symbolic("aten::relu", relu_as_max, 10);
  register_custom_op_symbolic("aten::relu", relu_as_clip, 13);
  EXPECT_EQ(op_types(export_at(m, args, 9)), std::vector<std::string>{"Relu"});  // built-in
  EXPECT_EQ(op_types(export_at(m, args, 10)), std::vector<std::string>{"Max"});
  EXPECT_EQ(op_types(export_at(m, args, 12)), std::vector<std::string>{"Max"});
  EXPECT_EQ(op_types(export_at(m, args, 13)), std::vector<std::string>{"Clip"});
  EXPECT_EQ(op_types(export_at(m, args, 17)), std::vector<std::string>{"Clip"});
  expect_runs(m, args, 11);
  expect_runs(m, args, 17);
  EXPECT_TRUE(unregister_custom_op_symbolic("aten::relu", 13));
  EXPECT_EQ(op_types(export_at(m, args, 17)), std::vector<std::string>{"Max"});
  // Registering again at the same opset replaces the function.
  register_custom_op_symbolic("aten::relu", relu_as_clip, 10);
  EXPECT_EQ(op_types(export_at(m, args, 12)), std::vector<std::string>{"Clip"});
}

TEST(CustomSymbolic, CustomOpInACustomDomainWithItsOpsetImport) {
  auto m = ir_module(kScaleIr);
  std::vector<c10::IValue> args{at::randn({2, 3})};
  // No symbolic: the op is unconvertible, named in the error and by unconvertible_ops.
  EXPECT_TRUE(ThrowsExportError(
      [&] { export_at(m, args, 17); }, ErrorCode::kUnsupportedOp,
      {"cannot be exported to ONNX opset 17", "test_ops::scale", "register a custom symbolic"}));
  auto before = unconvertible_ops(m, args);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].name, "test_ops::scale");

  Registered r{"test_ops::scale", {9}};
  register_custom_op_symbolic(
      "test_ops::scale",
      [](GraphContext& g, const Args& a) -> Values {
        return {g.op("my_domain::Scale", {a.tensor(0)},
                     {{"factor", static_cast<float>(a.float_arg(1))}})};
      },
      9);
  EXPECT_TRUE(unconvertible_ops(m, args).empty());
  auto model = export_at(m, args, 17);  // passes onnx's checker: export ran it
  EXPECT_EQ(op_types(model), (std::vector<std::string>{"my_domain::Scale", "Relu"}));
  const auto& node = model.graph().node(0);
  ASSERT_EQ(node.attribute_size(), 1);
  EXPECT_EQ(node.attribute(0).name(), "factor");
  EXPECT_EQ(node.attribute(0).type(), onnx::AttributeProto_AttributeType_FLOAT);
  EXPECT_FLOAT_EQ(node.attribute(0).f(), 2.5f);
  EXPECT_EQ(opset_imports(model), (std::map<std::string, int64_t>{{"", 17}, {"my_domain", 1}}));
  EXPECT_EQ(opset_imports(export_at(m, args, 11, {{"my_domain", 3}})),
            (std::map<std::string, int64_t>{{"", 11}, {"my_domain", 3}}));
}

TEST(CustomSymbolic, AttributeValuesKeepTheirOnnxTypes) {
  auto m = ir_module(kScaleIr);
  std::vector<c10::IValue> args{at::randn({2, 3})};
  Registered r{"test_ops::scale", {9}};
  register_custom_op_symbolic(
      "test_ops::scale",
      [](GraphContext& g, const Args& a) -> Values {
        Attributes attributes{{"i", 7},
                              {"i64", int64_t{-3}},
                              {"b", true},
                              {"d", a.float_arg(1)},
                              {"f", 0.5f},
                              {"s", "text"},
                              {"ints", std::vector<int64_t>{1, 2}},
                              {"floats", std::vector<float>{1.5f}},
                              {"strings", std::vector<std::string>{"a", "b"}},
                              {"t", at::arange(3, at::kLong)}};
        Values outs = g.op("my_domain::Split2", {a.tensor(0)}, attributes, 2);
        EXPECT_EQ(outs.size(), 2u);
        return {g.op("Add", {outs[0], g.cast(outs[1], at::kFloat)})};
      },
      9);
  auto model = export_at(m, args, 13);
  const auto& node = model.graph().node(0);
  ASSERT_EQ(node.op_type(), "Split2");
  EXPECT_EQ(node.output_size(), 2);
  std::map<std::string, const onnx::AttributeProto*> attrs;
  for (const auto& a : node.attribute()) attrs[a.name()] = &a;
  ASSERT_EQ(attrs.size(), 10u) << node.DebugString();
  using T = onnx::AttributeProto;
  EXPECT_EQ(attrs["i"]->type(), T::INT);
  EXPECT_EQ(attrs["i"]->i(), 7);
  EXPECT_EQ(attrs["i64"]->i(), -3);
  EXPECT_EQ(attrs["b"]->type(), T::INT);
  EXPECT_EQ(attrs["b"]->i(), 1);
  EXPECT_EQ(attrs["d"]->type(), T::FLOAT);
  EXPECT_FLOAT_EQ(attrs["d"]->f(), 2.5f);
  EXPECT_EQ(attrs["f"]->type(), T::FLOAT);
  EXPECT_EQ(attrs["s"]->type(), T::STRING);
  EXPECT_EQ(attrs["s"]->s(), "text");
  EXPECT_EQ(attrs["ints"]->type(), T::INTS);
  EXPECT_EQ(attrs["ints"]->ints_size(), 2);
  EXPECT_EQ(attrs["floats"]->type(), T::FLOATS);
  EXPECT_EQ(attrs["strings"]->type(), T::STRINGS);
  EXPECT_EQ(attrs["strings"]->strings(1), "b");
  EXPECT_EQ(attrs["t"]->type(), T::TENSOR);
  EXPECT_EQ(attrs["t"]->t().dims(0), 3);
}

TEST(CustomSymbolic, FailNamesTheNodeAndTheOpset) {
  auto m = ir_module(kScaleIr);
  std::vector<c10::IValue> args{at::randn({2, 3})};
  Registered r{"test_ops::scale", {9}};
  register_custom_op_symbolic(
      "test_ops::scale",
      [](GraphContext& g, const Args& a) -> Values {
        if (g.opset() < 12) g.fail("needs opset 12");
        return {g.op("Mul", {a.tensor(0), g.constant_scalar(a.float_arg(1), a.dtype(0))})};
      },
      9);
  EXPECT_TRUE(ThrowsExportError([&] { export_at(m, args, 11); }, ErrorCode::kConversion,
                                {"test_ops::scale", "at opset 11", "needs opset 12"}));
  EXPECT_EQ(op_types(export_at(m, args, 12)), (std::vector<std::string>{"Mul", "Relu"}));
}

// g.dtype/g.sizes: the type ONNX shape inference gives each value a symbolic makes (as torch.onnx
// infers each node a symbolic adds), reading the values of Constant inputs (Unsqueeze's axes);
// type propagation's for its arguments; unknown for a node of a custom domain. A symbolic decides
// by them, as torch.onnx's squeeze removes a dim only when its size is known to be 1.
TEST(CustomSymbolic, ReadsTheTypesOfTheValuesItMade) {
  auto m = ir_module(kScaleIr);
  std::vector<c10::IValue> args{at::randn({2, 3})};
  Registered r{"test_ops::scale", {11}};
  register_custom_op_symbolic(
      "test_ops::scale",
      [](GraphContext& g, const Args& a) -> Values {
        const Value x = a.tensor(0);
        EXPECT_EQ(g.sizes(x), (std::vector<int64_t>{2, 3}));
        const Value lifted = g.op("Unsqueeze", {x, g.constant_ints({0, 3})});
        EXPECT_EQ(g.dtype(lifted), at::kFloat);
        EXPECT_EQ(g.sizes(lifted), (std::vector<int64_t>{1, 2, 3, 1}));
        const Value picked = g.op("Gather", {lifted, g.constant_ints({0, 2})}, {{"axis", 2}});
        EXPECT_EQ(g.sizes(picked), (std::vector<int64_t>{1, 2, 2, 1}));
        EXPECT_EQ(g.dtype(g.cast(picked, at::kDouble)), at::kDouble);
        const Value custom = g.op("my_domain::Foo", {x});
        EXPECT_EQ(g.dtype(custom), at::ScalarType::Undefined);
        EXPECT_EQ(g.sizes(custom), std::nullopt);
        std::vector<int64_t> unit_dims;
        const auto sizes = g.sizes(lifted).value_or(std::vector<int64_t>{});
        for (size_t d = 0; d < sizes.size(); ++d) {
          if (sizes[d] == 1) unit_dims.push_back(static_cast<int64_t>(d));
        }
        EXPECT_EQ(unit_dims, (std::vector<int64_t>{0, 3}));
        const Value y = g.op("Squeeze", {lifted, g.constant_ints(unit_dims)});
        EXPECT_EQ(g.sizes(y), (std::vector<int64_t>{2, 3}));
        return {g.op("Mul", {y, g.constant_scalar(a.float_arg(1), g.dtype(y))})};
      },
      11);
  auto model = export_at(m, args, 13);
  // (the optimizer folds the Squeeze of the Unsqueeze; the unused nodes are dropped)
  EXPECT_EQ(op_types(model), (std::vector<std::string>{"Mul", "Relu"}));
  expect_runs(m, args, 13);
}

TEST(CustomSymbolic, ContextSymbolicSeesNodeOpsetParamsAndCustomOpsets) {
  auto m = script_module("def forward(self, x):\n  return torch.mul(x, self.weight)\n",
                         {{"weight", at::randn({4})}});
  std::vector<c10::IValue> args{at::randn({3, 4})};
  std::vector<SymbolicContext> seen;
  std::vector<std::string> kinds;  // cur_node lives only during the export
  Registered r{"aten::mul", {9}};
  register_custom_op_symbolic(
      "aten::mul",
      [&seen, &kinds](const SymbolicContext& ctx, GraphContext& g, const Args& a) -> Values {
        seen.push_back(ctx);
        kinds.push_back(ctx.cur_node == a.node() ? ctx.cur_node->kind().toQualString() : "?");
        return {g.op("Mul", {a.tensor(0), a.tensor(1)})};
      },
      9);
  ExportOptions options;
  options.opset_version = 15;
  options.custom_opsets = {{"my_domain", 2}};
  options.operator_export_type = OperatorExportType::kOnnxFallthrough;
  export_model_to_bytes(m, args, options);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(kinds, std::vector<std::string>{"aten::mul"});
  EXPECT_EQ(seen[0].opset, 15);
  ASSERT_EQ(seen[0].params_dict.size(), 1u);
  ASSERT_TRUE(seen[0].params_dict.count("weight"));
  EXPECT_TRUE(seen[0].params_dict.at("weight").equal(m.attr("weight").toTensor()));
  EXPECT_EQ(seen[0].custom_opsets, (std::map<std::string, int>{{"my_domain", 2}}));
  EXPECT_EQ(seen[0].operator_export_type, OperatorExportType::kOnnxFallthrough);
  expect_runs(m, args, 15);
}

TEST(CustomSymbolic, RejectsInvalidRegistrations) {
  // What is wrong, and the remedy where the message gives one.
  const std::string invalid_name = "is not a valid op name; write it as namespace::op";
  const std::string opset_range = fmt::format("use 1 to {}", kMaxOpset);
  EXPECT_TRUE(ThrowsExportError([] { register_custom_op_symbolic("relu", relu_as_max, 9); },
                                ErrorCode::kInvalidArgument, {"'relu'", invalid_name}));
  EXPECT_TRUE(ThrowsExportError([] { register_custom_op_symbolic("a::b::c", relu_as_max, 9); },
                                ErrorCode::kInvalidArgument, {"'a::b::c'", invalid_name}));
  EXPECT_TRUE(ThrowsExportError(
      [] { register_custom_op_symbolic("onnx::Relu", relu_as_max, 9); },
      ErrorCode::kInvalidArgument,
      {"the onnx namespace cannot be given symbolics", "register the TorchScript op"}));
  EXPECT_TRUE(ThrowsExportError([] { register_custom_op_symbolic("aten::relu", relu_as_max, 0); },
                                ErrorCode::kInvalidArgument,
                                {"opset_version 0 for 'aten::relu' is out of range", opset_range}));
  EXPECT_TRUE(ThrowsExportError(
      [] { register_custom_op_symbolic("aten::relu", relu_as_max, kMaxOpset + 1); },
      ErrorCode::kInvalidArgument,
      {fmt::format("opset_version {} for 'aten::relu' is out of range", kMaxOpset + 1),
       opset_range}));
  EXPECT_TRUE(
      ThrowsExportError([] { register_custom_op_symbolic("aten::relu", SymbolicFunction(), 9); },
                        ErrorCode::kInvalidArgument, {"empty function for 'aten::relu'"}));
  EXPECT_FALSE(unregister_custom_op_symbolic("nothing::here", 9));
}

TEST(CustomSymbolic, ConcurrentRegistrationsAndExports) {
  auto m = script_module("def forward(self, x):\n  return torch.relu(x)\n");
  std::vector<c10::IValue> args{at::randn({4})};
  Registered r{"aten::relu", {9}};
  register_custom_op_symbolic("aten::relu", relu_as_max, 9);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &stop] {
      const std::string name = fmt::format("thread_ops::op{}", t);
      while (!stop) {
        for (int o = 9; o <= kMaxOpset; ++o) register_custom_op_symbolic(name, relu_as_clip, o);
        for (int o = 9; o <= kMaxOpset; ++o) unregister_custom_op_symbolic(name, o);
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(op_types(export_at(m, args, 9 + i % 9)), std::vector<std::string>{"Max"});
  }
  stop = true;
  for (auto& th : threads) th.join();
}

// ----- examples/custom_op through the CLI -------------------------------------------------------

class CustomOpLibrary : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
#if !defined(TORCHONNX_CUSTOM_FOO_LIB) || !defined(TORCHONNX_CUSTOM_OP_FIXTURE_DIR)
    GTEST_SKIP() << "built without examples (TORCHONNX_BUILD_EXAMPLES=OFF)";
#else
    if (!std::getenv("TORCHONNX_CLI")) GTEST_SKIP() << "TORCHONNX_CLI is not set (run via ctest)";
    lib_ = TORCHONNX_CUSTOM_FOO_LIB;
    pt_ = fmt::format("{}/{}.pt", TORCHONNX_CUSTOM_OP_FIXTURE_DIR, GetParam());
    inputs_ = fmt::format("{}/{}", TORCHONNX_CUSTOM_OP_FIXTURE_DIR, GetParam());
    ASSERT_TRUE(std::filesystem::exists(pt_)) << pt_ << " is missing: run make_custom_op_fixtures";
#endif
  }
  std::string lib_, pt_, inputs_;
};

TEST_P(CustomOpLibrary, CustomDomainNodeWithCustomOpsetVersion) {
  std::string dir = temp_dir("foo_custom_" + GetParam());
  auto r =
      run_cli(fmt::format("export {} -o {}/foo.onnx --inputs {} --load-library {} "
                          "--custom-opset custom_domain=2",
                          pt_, dir, inputs_, lib_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto model = read_model_file(dir + "/foo.onnx");
  EXPECT_EQ(op_types(model), std::vector<std::string>{"custom_domain::Foo"});
  const auto& foo = model.graph().node(0);
  EXPECT_EQ(foo.input(0), model.graph().input(0).name());
  EXPECT_EQ(foo.input(1), model.graph().input(1).name());
  std::map<std::string, const onnx::AttributeProto*> attrs;
  for (const auto& a : foo.attribute()) attrs[a.name()] = &a;
  ASSERT_TRUE(attrs.count("attr1") && attrs.count("attr2")) << foo.DebugString();
  EXPECT_EQ(attrs["attr1"]->type(), onnx::AttributeProto_AttributeType_FLOAT);
  EXPECT_FLOAT_EQ(attrs["attr1"]->f(), 2.0f);
  EXPECT_EQ(attrs["attr2"]->type(), onnx::AttributeProto_AttributeType_INT);
  EXPECT_EQ(attrs["attr2"]->i(), 3);
  EXPECT_EQ(opset_imports(model),
            (std::map<std::string, int64_t>{{"", kDefaultOpset}, {"custom_domain", 2}}));
}

TEST_P(CustomOpLibrary, StandardLoweringRunsInOrtAndMatchesLibtorch) {
  // The reference outputs come from libtorch in this process, not from the CLI under test (its
  // --save-test-data): the library loaded here as --load-library loads it (dlopen), the fixture
  // run with its kernel.
  ASSERT_NE(dlopen(lib_.c_str(), RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  torch::jit::Module module = load_model(pt_);
  module.eval();
  std::vector<c10::IValue> inputs;
  for (int i = 0; std::filesystem::exists(fmt::format("{}/input_{}.pb", inputs_, i)); ++i)
    inputs.emplace_back(read_tensor_file(fmt::format("{}/input_{}.pb", inputs_, i)));
  ASSERT_EQ(inputs.size(), 2u) << "the fixture's inputs in " << inputs_;
  std::vector<at::Tensor> expected = frontend::run_module(module, cloned(inputs));
  ASSERT_EQ(expected.size(), 1u);
  // The kernel's formula (FooModel(attr1=2.0, attr2=3)), so the reference is the op's result.
  const at::Tensor& x1 = inputs[0].toTensor();
  const at::Tensor& x2 = inputs[1].toTensor();
  EXPECT_TRUE(expected[0].allclose((x1 + 2.0 * x2) * 3)) << expected[0];
  std::string dir = temp_dir("foo_onnx_" + GetParam());
  const std::string reference = dir + "/reference";
  std::filesystem::create_directories(reference);
  write_test_data(reference, inputs, expected);
  for (int opset : {9, 17}) {
    auto r =
        run_cli(fmt::format("export {0} -o {1}/foo{2}.onnx --inputs {3} --load-library {4} "
                            "--opset {2}",
                            pt_, dir, opset, inputs_, lib_));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto model = read_model_file(fmt::format("{}/foo{}.onnx", dir, opset));
    EXPECT_EQ(op_types(model), (std::vector<std::string>{"Mul", "Add", "Mul"}));
    auto result = run_in_ort(fmt::format("{}/foo{}.onnx", dir, opset), reference);
    EXPECT_TRUE(result.ok) << "opset " << opset << ": " << result.report;
  }
}

TEST_P(CustomOpLibrary, UnconvertibleAndLoadErrors) {
  auto ok =
      run_cli(fmt::format("unconvertible {} --inputs {} --load-library {}", pt_, inputs_, lib_));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  // Without the library the model does not load, with a remedy.
  auto missing = run_cli(fmt::format("export {} -o /dev/null --inputs {}", pt_, inputs_));
  EXPECT_TRUE(CliFails(missing, ErrorCode::kModelLoad,
                       {"cannot load", "custom_ops::foo_forward",
                        "load the library that defines it first (CLI: --load-library FILE.so)"}));
  auto bad =
      run_cli(fmt::format("export {} -o /dev/null --inputs {} --load-library "
                          "/nonexistent/libfoo.so",
                          pt_, inputs_));
  EXPECT_TRUE(CliFails(bad, ErrorCode::kModelLoad,
                       {"--load-library /nonexistent/libfoo.so", "Remedy: check the path"}));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CustomOpLibrary,
                         ::testing::Values("foo_scripted", "foo_traced"));

}  // namespace
}  // namespace torchonnx::testing
