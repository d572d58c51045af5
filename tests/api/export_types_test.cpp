// operator_export_type (ONNX, ONNX_ATEN, ONNX_ATEN_FALLBACK, RAW, ONNX_FALLTHROUGH) on the spec's
// examples, and unconvertible_ops (API and `torchonnx unconvertible`).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <sys/wait.h>
#include <torch/library.h>
#include <torch/script.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnx/tensor_proto.h"
#include "ops/op_test_util.h"
#include "support/expect_error.h"
#include "support/harness.h"
#include "torchonnx/export.h"

namespace torchonnx::testing {
namespace {

// A custom TorchScript op without any ONNX symbolic: the spec's foo_namespace::bar.
at::Tensor bar(const at::Tensor& a, const at::Tensor& b) {
  return a * b + 1;
}
TORCH_LIBRARY(foo_namespace, m) {
  m.def("bar(Tensor a, Tensor b) -> Tensor", bar);
}

using Type = OperatorExportType;

onnx::ModelProto export_as(const torch::jit::Module& m, const std::vector<c10::IValue>& args,
                           Type type, int opset = kDefaultOpset,
                           std::map<std::string, int> custom_opsets = {}) {
  ExportOptions options;
  options.operator_export_type = type;
  options.opset_version = opset;
  options.custom_opsets = std::move(custom_opsets);
  return parse_model(export_model_to_bytes(m, args, options));
}

// "domain::Type" of every node, in order ("" domain written as "onnx").
std::vector<std::string> node_kinds(const onnx::ModelProto& model) {
  std::vector<std::string> kinds;
  for (const auto& n : model.graph().node()) {
    kinds.push_back((n.domain().empty() ? "onnx" : n.domain()) + "::" + n.op_type());
  }
  return kinds;
}

std::vector<std::string> without_constants(std::vector<std::string> kinds) {
  std::vector<std::string> out;
  for (auto& k : kinds) {
    if (k != "onnx::Constant" && k != "prim::Constant") out.push_back(std::move(k));
  }
  return out;
}

std::map<std::string, int64_t> opset_imports(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> out;
  for (const auto& o : model.opset_import()) out[o.domain()] = o.version();
  return out;
}

const onnx::NodeProto* find_node(const onnx::ModelProto& model, const std::string& type,
                                 const std::string& attr_s = "") {
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != type) continue;
    if (attr_s.empty()) return &n;
    for (const auto& a : n.attribute()) {
      if (a.name() == "operator" && a.s() == attr_s) return &n;
    }
  }
  return nullptr;
}

std::string string_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) {
      EXPECT_EQ(a.type(), onnx::AttributeProto_AttributeType_STRING) << name;
      return a.s();
    }
  }
  ADD_FAILURE() << n.op_type() << " has no attribute " << name;
  return "";
}

// The Constant node producing `value`, as a tensor (undefined when `value` is not a Constant).
at::Tensor constant_of(const onnx::ModelProto& model, const std::string& value) {
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == "Constant" && n.output(0) == value) {
      return from_tensor_proto(n.attribute(0).t());
    }
  }
  return at::Tensor();
}

constexpr const char* kExpDiv = "def forward(self, x):\n  return torch.div(x, torch.exp(x))\n";

TEST(OperatorExportType, OnnxIsTheDefaultAndGivesStandardOps) {
  auto m = script_module(kExpDiv);
  auto model = export_as(m, {at::randn({2, 3, 4})}, Type::kOnnx);
  EXPECT_EQ(node_kinds(model), (std::vector<std::string>{"onnx::Exp", "onnx::Div"}));
  EXPECT_EQ(opset_imports(model), (std::map<std::string, int64_t>{{"", kDefaultOpset}}));
}

TEST(OperatorExportType, OnnxAtenExportsEveryAtenOpAsAnATenNode) {
  // The spec's example, plus a constant int argument and an overloaded op.
  auto m =
      script_module("def forward(self, x):\n  return torch.triu(torch.div(x, torch.exp(x)), 1)\n");
  auto model = export_as(m, {at::randn({3, 4})}, Type::kOnnxAten);
  EXPECT_EQ(without_constants(node_kinds(model)),
            (std::vector<std::string>{"org.pytorch.aten::ATen", "org.pytorch.aten::ATen",
                                      "org.pytorch.aten::ATen"}));
  const auto* exp = find_node(model, "ATen", "exp");
  const auto* div = find_node(model, "ATen", "div");
  const auto* triu = find_node(model, "ATen", "triu");
  ASSERT_TRUE(exp && div && triu) << model.DebugString();
  EXPECT_EQ(string_attr(*exp, "overload_name"), "");
  EXPECT_EQ(string_attr(*div, "overload_name"), "Tensor");
  EXPECT_EQ(div->input(0), model.graph().input(0).name());
  EXPECT_EQ(div->input(1), exp->output(0));
  // The constant diagonal is a Constant tensor input.
  ASSERT_EQ(triu->input_size(), 2);
  at::Tensor diagonal = constant_of(model, triu->input(1));
  ASSERT_TRUE(diagonal.defined());
  EXPECT_EQ(diagonal.item<int64_t>(), 1);
  EXPECT_EQ(opset_imports(model),
            (std::map<std::string, int64_t>{{"", kDefaultOpset}, {"org.pytorch.aten", 1}}));
}

TEST(OperatorExportType, AtenFallbackOnlyForOpsWithoutConverter) {
  // aten::erfinv has no converter; the ops around it are regular ONNX.
  auto m = script_module(
      "def forward(self, x):\n  y = torch.erfinv(torch.tanh(x))\n  return torch.mul(y, x)\n");
  auto model = export_as(m, {at::randn({2, 3})}, Type::kOnnxAtenFallback);
  EXPECT_EQ(without_constants(node_kinds(model)),
            (std::vector<std::string>{"onnx::Tanh", "org.pytorch.aten::ATen", "onnx::Mul"}));
  const auto* erfinv = find_node(model, "ATen", "erfinv");
  ASSERT_NE(erfinv, nullptr);
  EXPECT_EQ(erfinv->input(0), find_node(model, "Tanh")->output(0));
  EXPECT_EQ(find_node(model, "Mul")->input(0), erfinv->output(0));
  EXPECT_EQ(opset_imports(model)["org.pytorch.aten"], 1);
  // Plain ONNX refuses the model, naming the op.
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_as(m, {at::randn({2, 3})}, Type::kOnnx);
      },
      ErrorCode::kUnsupportedOp, {"cannot be exported to ONNX opset", "aten::erfinv", "Remedy"}));
}

// diagonal's converter needs a constant offset (the gathered indices are computed at export).
constexpr const char* kDiagonalDynamic =
    "def forward(self, x, d: int):\n  return torch.mul(torch.diagonal(x, d), 2.0)\n";

TEST(OperatorExportType, AtenFallbackWhenTheConverterRejectsTheNode) {
  auto m = script_module(kDiagonalDynamic);
  std::vector<c10::IValue> args{at::randn({3, 3}), c10::IValue(int64_t{1})};
  EXPECT_TRUE(ThrowsExportError([&] { export_as(m, args, Type::kOnnx); }, ErrorCode::kConversion,
                                {"cannot export aten::diagonal", "constant"}));
  auto model = export_as(m, args, Type::kOnnxAtenFallback);
  const auto* diagonal = find_node(model, "ATen", "diagonal");
  ASSERT_NE(diagonal, nullptr) << model.DebugString();
  EXPECT_EQ(diagonal->input(1), model.graph().input(1).name());  // the graph's int input
  EXPECT_EQ(find_node(model, "Gather"), nullptr);  // no part of the converter's own form
  EXPECT_NE(find_node(model, "Mul"), nullptr);
}

TEST(OperatorExportType, AtenFallbackOfAConvertibleModelIsThePlainExportAndRuns) {
  auto m = script_module(
      "def forward(self, x):\n  return torch.relu(x) * 2.0 + torch.exp(x).sum(1, keepdim=True)\n");
  std::vector<c10::IValue> args{at::randn({3, 5})};
  ExportOptions plain;
  ExportOptions fallback;
  fallback.operator_export_type = Type::kOnnxAtenFallback;
  const std::string bytes = export_model_to_bytes(m, args, fallback);
  EXPECT_EQ(bytes, export_model_to_bytes(m, args, plain));
  std::string dir = temp_dir("aten_fallback_runs");
  export_model(m, args, dir + "/model.onnx", fallback);
  write_test_data(dir, args, frontend::run_module(m, cloned(args)));
  auto result = run_in_ort(dir + "/model.onnx", dir);
  EXPECT_TRUE(result.ok) << result.report;
}

TEST(OperatorExportType, RawKeepsTheTorchScriptOps) {
  // The spec's RAW example (exp, div, a list construction), the list consumed by aten::cat (a
  // list output is flattened into tensors before conversion).
  auto m = script_module(
      "def forward(self, x):\n  y = [torch.div(x, torch.exp(x))]\n"
      "  return torch.cat(y, 0)\n");
  auto model = export_as(m, {at::randn({1})}, Type::kRaw);
  EXPECT_EQ(
      without_constants(node_kinds(model)),
      (std::vector<std::string>{"aten::exp", "aten::div", "prim::ListConstruct", "aten::cat"}));
  EXPECT_EQ(opset_imports(model),
            (std::map<std::string, int64_t>{{"", kDefaultOpset}, {"aten", 1}, {"prim", 1}}));
  const auto* div = find_node(model, "div");
  ASSERT_NE(div, nullptr);
  EXPECT_EQ(div->input(1), find_node(model, "exp")->output(0));
  EXPECT_EQ(find_node(model, "ListConstruct")->input(0), div->output(0));
  EXPECT_EQ(find_node(model, "cat")->input(0), find_node(model, "ListConstruct")->output(0));
}

TEST(OperatorExportType, RawKeepsConstantsAsPrimConstant) {
  auto m = script_module("def forward(self, x):\n  return torch.add(x, 3, alpha=2)\n");
  auto model = export_as(m, {at::randn({2})}, Type::kRaw, kDefaultOpset, {{"aten", 4}});
  const auto* add = find_node(model, "add");
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->input_size(), 3);
  int found = 0;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != "Constant") continue;
    EXPECT_EQ(n.domain(), "prim");
    if (n.output(0) == add->input(1) || n.output(0) == add->input(2)) {
      ASSERT_EQ(n.attribute_size(), 1);
      EXPECT_EQ(n.attribute(0).name(), "value");
      EXPECT_EQ(n.attribute(0).i(), n.output(0) == add->input(1) ? 3 : 2);
      ++found;
    }
  }
  EXPECT_EQ(found, 2) << model.DebugString();
  EXPECT_EQ(opset_imports(model)["aten"], 4);  // custom_opsets applies to these domains too
}

// The spec's ONNX_FALLTHROUGH example (as IR: C++'s script compiler has no torch.ops).
constexpr const char* kBarDiv =
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %z : Tensor = foo_namespace::bar(%x, %y)\n"
    "  %w : Tensor = aten::div(%z, %x)\n"
    "  return (%w)\n";

TEST(OperatorExportType, FallthroughKeepsUnconvertibleOpsInTheirNamespace) {
  auto m = ir_module(kBarDiv);
  std::vector<c10::IValue> args{at::randn({2, 3, 4}), at::randn({2, 3, 4})};
  auto model = export_as(m, args, Type::kOnnxFallthrough);
  EXPECT_EQ(node_kinds(model), (std::vector<std::string>{"foo_namespace::bar", "onnx::Div"}));
  const auto& bar_node = model.graph().node(0);
  EXPECT_EQ(bar_node.input(0), model.graph().input(0).name());
  EXPECT_EQ(bar_node.input(1), model.graph().input(1).name());
  EXPECT_EQ(model.graph().node(1).input(0), bar_node.output(0));
  EXPECT_EQ(opset_imports(model),
            (std::map<std::string, int64_t>{{"", kDefaultOpset}, {"foo_namespace", 1}}));
  auto versioned = export_as(m, args, Type::kOnnxFallthrough, 13, {{"foo_namespace", 2}});
  EXPECT_EQ(opset_imports(versioned),
            (std::map<std::string, int64_t>{{"", 13}, {"foo_namespace", 2}}));
  // The model passes onnx's checker (unknown domains are allowed), as export ran it; again here.
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  const std::vector<std::string> bar_unsupported = {"cannot be exported to ONNX opset",
                                                    "foo_namespace::bar", "Remedy"};
  EXPECT_TRUE(ThrowsExportError([&] { export_as(m, args, Type::kOnnx); }, ErrorCode::kUnsupportedOp,
                                bar_unsupported));
  // ONNX_ATEN_FALLBACK only covers aten ops.
  EXPECT_TRUE(ThrowsExportError([&] { export_as(m, args, Type::kOnnxAtenFallback); },
                                ErrorCode::kUnsupportedOp, bar_unsupported));
}

TEST(OperatorExportType, FallthroughOfAConvertibleModelIsThePlainExport) {
  auto m = script_module(kExpDiv);
  std::vector<c10::IValue> args{at::randn({2, 3})};
  ExportOptions fallthrough;
  fallthrough.operator_export_type = Type::kOnnxFallthrough;
  EXPECT_EQ(export_model_to_bytes(m, args, fallthrough), export_model_to_bytes(m, args, {}));
}

// ----- unconvertible_ops ----------------------------------------------------------------------

// Saved and loaded again, so that its nodes have source locations (code/__torch__.py:N).
torch::jit::Module saved_module(const std::string& name, const std::string& source) {
  auto m = script_module(source);
  std::string path = temp_dir(name) + "/" + name + ".pt";
  m.save(path);
  return torch::jit::load(path);
}

constexpr const char* kMixed =
    "def forward(self, x, d: int):\n"
    "  a = torch.erfinv(torch.tanh(x))\n"
    "  b = torch.erfinv(torch.sigmoid(x))\n"
    "  return torch.diagonal(a * b, d).sum() + torch.relu(x)\n";

TEST(UnconvertibleOps, ListsEveryOpAtOnceWithCountsLocationsAndErrors) {
  auto m = saved_module("mixed", kMixed);
  std::vector<c10::IValue> args{at::randn({3, 3}), c10::IValue(int64_t{1})};
  auto ops = unconvertible_ops(m, args);
  ASSERT_EQ(ops.size(), 2u);                 // by name
  EXPECT_EQ(ops[0].name, "aten::diagonal");  // a converter that rejects this node
  EXPECT_EQ(ops[0].count, 1);
  ASSERT_EQ(ops[0].errors.size(), 1u);
  EXPECT_NE(ops[0].errors[0].find("aten::diagonal"), std::string::npos) << ops[0].errors[0];
  EXPECT_NE(ops[0].errors[0].find("constant"), std::string::npos) << ops[0].errors[0];
  EXPECT_EQ(ops[1].name, "aten::erfinv");
  EXPECT_EQ(ops[1].count, 2);
  EXPECT_EQ(ops[1].locations.size(), 2u);
  for (const auto& loc : ops[1].locations) EXPECT_NE(loc.find(".py:"), std::string::npos) << loc;
  EXPECT_TRUE(ops[1].errors.empty());  // no converter at all

  // Under ONNX_ATEN_FALLBACK the aten ops convert, custom ops do not; a convertible model lists
  // nothing.
  ExportOptions fallback;
  fallback.operator_export_type = Type::kOnnxAtenFallback;
  EXPECT_TRUE(unconvertible_ops(m, args, fallback).empty());
  auto bar_model = ir_module(kBarDiv);
  std::vector<c10::IValue> bar_args{at::randn({2}), at::randn({2})};
  auto left = unconvertible_ops(bar_model, bar_args, fallback);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].name, "foo_namespace::bar");
  EXPECT_EQ(left[0].count, 1);
  ExportOptions fallthrough;
  fallthrough.operator_export_type = Type::kOnnxFallthrough;
  EXPECT_TRUE(unconvertible_ops(bar_model, bar_args, fallthrough).empty());
  EXPECT_TRUE(unconvertible_ops(script_module(kExpDiv), {at::randn({2})}).empty());
  ExportOptions bad;
  bad.opset_version = 3;
  EXPECT_TRUE(ThrowsExportError(
      [&] { unconvertible_ops(m, args, bad); }, ErrorCode::kInvalidArgument,
      {"opset 3 is out of range", fmt::format("exports opsets 7 to {}", highest_opset())}));
}

TEST(UnconvertibleCli, TextAndJsonWithExitCodes) {
  if (!std::getenv("TORCHONNX_CLI")) GTEST_SKIP() << "TORCHONNX_CLI is not set (run via ctest)";
  // The CLI cannot load foo_namespace::bar (registered in this test binary only): use aten ops.
  auto m = script_module(
      "def forward(self, x):\n  return torch.erfinv(torch.tanh(x)) + torch.erfinv(x)\n");
  std::string dir = temp_dir("unconvertible_cli");
  m.save(dir + "/m.pt");
  auto text = run_cli(fmt::format("unconvertible {}/m.pt --input 2x3", dir), false);
  EXPECT_EQ(text.exit_code, static_cast<int>(ErrorCode::kUnsupportedOp)) << text.output;
  EXPECT_EQ(text.output.rfind("aten::erfinv\t2 nodes\t", 0), 0u) << text.output;
  EXPECT_NE(text.output.find("no converter"), std::string::npos) << text.output;

  auto json =
      run_cli(fmt::format("unconvertible {}/m.pt --input 2x3 --json --opset 11", dir), false);
  EXPECT_EQ(json.exit_code, static_cast<int>(ErrorCode::kUnsupportedOp));
  auto parsed = nlohmann::json::parse(json.output);
  EXPECT_EQ(parsed["opset"], 11);
  ASSERT_EQ(parsed["unconvertible"].size(), 1u);
  EXPECT_EQ(parsed["unconvertible"][0]["op"], "aten::erfinv");
  EXPECT_EQ(parsed["unconvertible"][0]["count"], 2);
  EXPECT_EQ(parsed["unconvertible"][0]["locations"].size(), 2u);

  script_module(kExpDiv).save(dir + "/ok.pt");
  auto ok = run_cli(fmt::format("unconvertible {}/ok.pt --input 2x3 --json", dir), false);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(nlohmann::json::parse(ok.output)["unconvertible"].empty());
}

TEST(OperatorExportTypeCli, FlagsReachTheExport) {
  if (!std::getenv("TORCHONNX_CLI")) GTEST_SKIP() << "TORCHONNX_CLI is not set (run via ctest)";
  std::string dir = temp_dir("export_type_cli");
  script_module("def forward(self, x):\n  return torch.mul(torch.erfinv(x), x)\n")
      .save(dir + "/m.pt");
  auto plain = run_cli(fmt::format("export {0}/m.pt -o {0}/plain.onnx --input 2x3", dir));
  EXPECT_TRUE(CliFails(plain, ErrorCode::kUnsupportedOp,
                       {"1 operator cannot be exported to ONNX opset 17", "aten::erfinv",
                        "Remedy: try another --opset"}));
  auto fallback =
      run_cli(fmt::format("export {0}/m.pt -o {0}/fb.onnx --input 2x3 --operator-export-type "
                          "onnx_aten_fallback --custom-opset org.pytorch.aten=3",
                          dir));
  ASSERT_EQ(fallback.exit_code, 0) << fallback.output;
  onnx::ModelProto model = read_model_file(dir + "/fb.onnx");
  EXPECT_EQ(without_constants(node_kinds(model)),
            (std::vector<std::string>{"org.pytorch.aten::ATen", "onnx::Mul"}));
  EXPECT_EQ(opset_imports(model)["org.pytorch.aten"], 3);
  auto bad_type = run_cli(
      fmt::format("export {0}/m.pt -o {0}/x.onnx --input 2x3 --operator-export-type ATEN", dir));
  EXPECT_TRUE(
      CliFails(bad_type, ErrorCode::kInvalidArgument,
               {"--operator-export-type: ATEN not in", "ONNX_ATEN_FALLBACK", "Run with --help"}));
  auto bad_opset =
      run_cli(fmt::format("export {0}/m.pt -o {0}/x.onnx --input 2x3 --custom-opset dom:2", dir));
  EXPECT_TRUE(CliFails(bad_opset, ErrorCode::kInvalidArgument, {"dom:2", "DOMAIN=VERSION"}));
}

}  // namespace
}  // namespace torchonnx::testing
