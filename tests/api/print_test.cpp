// export_to_pretty_string (text and Graphviz DOT) and `torchonnx print`.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "alexnet_model.h"
#include "onnx/dot.h"
#include "onnx/model_proto.h"
#include "support/expect_error.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

using Inputs = std::vector<c10::IValue>;

NamedTensors parameters_of(torch::nn::Module& m) {
  NamedTensors out;
  for (const auto& item : m.named_parameters()) out.emplace_back(item.key(), item.value());
  return out;
}

// ----- a small DOT reader: enough to check the structure -----------------------------------------

struct DotGraph {
  std::map<std::string, std::string> nodes;                              // id → attribute text
  std::vector<std::tuple<std::string, std::string, std::string>> edges;  // from, to, label
  int clusters = 0;
  std::string error;  // a syntax problem found
};

// Reads `"a" [attrs];`, `"a" -> "b" [attrs];`, subgraph/brace lines and graph-wide attributes, as
// to_dot writes them; anything else is an error. Checks that quotes and braces balance.
DotGraph read_dot(const std::string& text) {
  DotGraph g;
  static const std::regex kQuoted(R"re("((?:[^"\\]|\\.)*)")re");
  static const std::regex kNode(R"re(^\s*("(?:[^"\\]|\\.)*")\s*\[(.*)\];$)re");
  static const std::regex kEdge(
      R"re(^\s*("(?:[^"\\]|\\.)*")\s*->\s*("(?:[^"\\]|\\.)*")\s*(\[(.*)\])?;$)re");
  static const std::regex kLabel(R"re(label=("(?:[^"\\]|\\.)*"))re");
  auto unquote = [](const std::string& q) { return q.substr(1, q.size() - 2); };
  std::istringstream lines(text);
  std::string line;
  int depth = 0, n = 0;
  while (std::getline(lines, line)) {
    ++n;
    std::smatch m;
    if (line.rfind("digraph ", 0) == 0 && line.back() == '{') {
      ++depth;
    } else if (std::regex_search(line, m, std::regex(R"(^\s*subgraph "cluster_\w+" \{$)"))) {
      ++depth;
      ++g.clusters;
    } else if (std::regex_match(line, std::regex(R"(^\s*\}$)"))) {
      if (--depth < 0) g.error = fmt::format("line {}: unbalanced }}", n);
    } else if (std::regex_match(line, m, kEdge)) {
      std::string label;
      std::smatch lm;
      const std::string attrs = m[4];
      if (std::regex_search(attrs, lm, kLabel)) label = unquote(lm[1]);
      g.edges.emplace_back(unquote(m[1]), unquote(m[2]), label);
    } else if (std::regex_match(line, m, kNode)) {
      const std::string id = unquote(m[1]);
      if (id == "graph" || id == "node" || id == "edge") continue;
      if (!g.nodes.emplace(id, m[2]).second) g.error = "node " + id + " declared twice";
    } else if (std::regex_match(line, std::regex(R"(^\s*(graph|node|edge) \[.*\];$)")) ||
               std::regex_match(line, std::regex(R"(^\s*label=".*";$)")) ||
               std::regex_match(line, std::regex(R"(^\s*style=.*;$)"))) {
      continue;
    } else {
      g.error = fmt::format("line {} not understood: {}", n, line);
    }
  }
  if (depth != 0 && g.error.empty()) g.error = "unbalanced braces";
  return g;
}

size_t count_nodes(const onnx::GraphProto& g) {
  size_t n = g.node_size();
  for (const auto& node : g.node()) {
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += count_nodes(a.g());
    }
  }
  return n;
}

bool has_dot() {
  return std::system("command -v dot >/dev/null 2>&1") == 0;
}

// Runs `dot -Tsvg` on `text`; returns its exit code and writes the SVG to `svg_path`.
int render(const std::string& text, const std::string& svg_path) {
  std::string dir = temp_dir("dot");
  std::ofstream(dir + "/g.dot") << text;
  return std::system(
      fmt::format("dot -Tsvg '{}/g.dot' -o '{}' 2>'{}/err.txt'", dir, svg_path, dir).c_str());
}

// ----- tests ------------------------------------------------------------------------------------

TEST(PrettyString, TextIsTheExportedModelPrinted) {
  torch::jit::Module m("Net");
  m.register_parameter("weight", at::randn({4, 3}), false);
  m.define("def forward(self, x):\n  return torch.relu(torch.matmul(x, self.weight.t()))\n");
  at::Tensor x = at::randn({2, 3});
  ExportOptions options;
  options.input_names = {"x"};
  const std::string text = export_to_pretty_string(m, {x}, options);
  EXPECT_EQ(text, to_pretty_string(parse_model(export_model_to_bytes(m, {x}, options))));
  EXPECT_EQ(text.rfind("graph(%x : Float(2, 3),", 0), 0u) << text;
  // The weight's transpose is folded (as torch.onnx folds it): an initializer of the transposed
  // shape, and no Transpose node.
  EXPECT_NE(text.find(" : Float(3, 4)):"), std::string::npos) << text;
  EXPECT_EQ(text.find("onnx::Transpose"), std::string::npos) << text;
  EXPECT_NE(text.find("onnx::Relu("), std::string::npos) << text;
  EXPECT_NE(text.find(" : Float(2, 4) = onnx::MatMul"), std::string::npos) << text;
  EXPECT_NE(text.find("return (%output_0)"), std::string::npos) << text;
}

TEST(PrettyString, TracedFunctionAndOptions) {
  at::Tensor w = at::randn({4, 3});
  auto fn = [&](const Inputs& in) {
    return at::dropout(at::linear(in[0].toTensor(), w), 0.5, /*train=*/true);
  };
  at::Tensor x = at::randn({2, 3});
  ExportOptions options;
  options.training = TrainingMode::kTraining;
  options.opset_version = 13;
  const std::string text = export_function_to_pretty_string(fn, {x}, {{"w", w}}, options);
  EXPECT_NE(text.find("onnx::Dropout("), std::string::npos) << text;
  EXPECT_NE(text.find("%w : Float(4, 3)"), std::string::npos) << text;
  options.export_params = false;
  const std::string no_params = export_function_to_pretty_string(fn, {x}, {{"w", w}}, options);
  EXPECT_NE(no_params.find("%w : Float(4, 3)"), std::string::npos) << "w is a plain input";
}

TEST(Dot, AlexNetHasOneBoxPerNodeShapesOnEdgesAndCollapsedInitializers) {
  torch::manual_seed(0);
  AlexNet net;
  net->eval();
  auto forward = [&](const Inputs& in) { return net->forward(in[0].toTensor()); };
  at::Tensor x = at::randn({1, 3, 224, 224});
  ExportOptions options;
  options.input_names = {"image"};
  options.output_names = {"logits"};
  torch::NoGradGuard no_grad;
  auto params = parameters_of(*net);
  auto proto = parse_model(export_function_to_bytes(forward, {x}, params, options));
  const std::string dot =
      export_function_to_pretty_string(forward, {x}, params, options, PrettyFormat::kDot);
  EXPECT_EQ(dot, to_dot(proto));
  DotGraph g = read_dot(dot);
  ASSERT_EQ(g.error, "") << dot;

  // One box per ONNX node, one ellipse per graph input and output, nothing else: the 16
  // initializers have no node of their own.
  size_t boxes = 0, ellipses = 0;
  for (const auto& [id, attrs] : g.nodes) {
    boxes += attrs.find("shape=box") != std::string::npos;
    ellipses += attrs.find("shape=ellipse") != std::string::npos;
  }
  EXPECT_EQ(boxes, static_cast<size_t>(proto.graph().node_size()));
  EXPECT_EQ(ellipses, 2u);
  EXPECT_EQ(g.nodes.size(), boxes + ellipses);
  EXPECT_EQ(proto.graph().initializer_size(), 16);
  // Each initializer listed in its consumer's box, with its type.
  EXPECT_NE(dot.find(R"(features.0.weight: Float(64, 3, 11, 11))"), std::string::npos);
  EXPECT_NE(dot.find(R"(classifier.6.bias: Float(1000))"), std::string::npos);
  // Edges join declared nodes and carry the tensor types from shape inference.
  std::set<std::string> labels;
  for (const auto& [from, to, label] : g.edges) {
    EXPECT_TRUE(g.nodes.count(from)) << from;
    EXPECT_TRUE(g.nodes.count(to)) << to;
    labels.insert(label);
  }
  EXPECT_TRUE(labels.count("Float(1, 3, 224, 224)"));  // the input
  EXPECT_TRUE(labels.count("Float(1, 64, 55, 55)"));   // after the first Conv
  EXPECT_TRUE(labels.count("Float(1, 9216)"));         // flattened
  EXPECT_TRUE(labels.count("Float(1, 1000)"));         // the output
  // Every node input that is not an initializer is an edge; every node output feeds one.
  size_t edges_expected = 0;
  std::set<std::string> inits;
  for (const auto& i : proto.graph().initializer()) inits.insert(i.name());
  for (const auto& node : proto.graph().node()) {
    for (const auto& in : node.input()) edges_expected += !in.empty() && !inits.count(in);
  }
  EXPECT_EQ(g.edges.size(), edges_expected + proto.graph().output_size());

  if (!has_dot()) GTEST_SKIP() << "graphviz's dot is not installed: apt-get install graphviz";
  const std::string svg = temp_dir("alexnet") + "/alexnet.svg";
  ASSERT_EQ(render(dot, svg), 0) << "dot -Tsvg rejected the DOT";
  std::string content = read_file(svg);
  EXPECT_NE(content.find("<svg"), std::string::npos);
  EXPECT_NE(content.find("Conv"), std::string::npos);
}

TEST(Dot, LoopBodyIsAClusterAndNamesAreEscaped) {
  torch::jit::Module m("LoopNet");
  m.define(
      "def forward(self, x, n: int):\n"
      "  for i in range(n):\n"
      "    x = x * 2.0 + float(i)\n"
      "  return x\n");
  ExportOptions options;
  options.input_names = {"x \"quoted\" \\ back", "count"};
  options.output_names = {"y{}[]"};
  const Inputs inputs = {at::randn({2, 3}), c10::IValue(int64_t{3})};
  auto proto = parse_model(export_model_to_bytes(m, inputs, options));
  const std::string dot = to_dot(proto);
  DotGraph g = read_dot(dot);
  ASSERT_EQ(g.error, "") << dot;
  size_t boxes = 0;
  for (const auto& [id, attrs] : g.nodes) boxes += attrs.find("shape=box") != std::string::npos;
  EXPECT_EQ(boxes, count_nodes(proto.graph())) << "the body's nodes are drawn too";
  EXPECT_GE(g.clusters, 1) << dot;
  EXPECT_NE(dot.find(R"~(label="x \"quoted\" \\ back\nFloat(2, 3)")~"), std::string::npos) << dot;
  EXPECT_NE(dot.find("Loop body"), std::string::npos) << dot;
  for (const auto& [from, to, label] : g.edges) {
    EXPECT_TRUE(g.nodes.count(from)) << from;
    EXPECT_TRUE(g.nodes.count(to)) << to;
  }
  if (!has_dot()) GTEST_SKIP() << "graphviz's dot is not installed: apt-get install graphviz";
  EXPECT_EQ(render(dot, temp_dir("loop") + "/loop.svg"), 0) << dot;
}

TEST(Dot, QuoteEscapes) {
  EXPECT_EQ(dot_quote("a\"b\\c\nd"), R"("a\"b\\c\nd")");
  EXPECT_EQ(dot_quote(""), R"("")");
}

// ----- `torchonnx print` ------------------------------------------------------------------------

TEST(PrintCommand, TextAndDot) {
  std::string dir = temp_dir("print_cli");
  torch::jit::Module m("CliNet");
  m.register_attribute("training", c10::BoolType::get(), false);
  m.register_parameter("weight", at::randn({5, 8}), false);
  m.define(
      "def forward(self, x):\n"
      "  y = torch.dropout(x, 0.5, self.training)\n"
      "  return torch.matmul(y, self.weight.t())\n");
  m.save(dir + "/m.pt");
  const std::string model = dir + "/m.pt --input 4x8";

  CliResult r = run_cli("print " + model, false);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("graph(%x", 0), 0u) << r.output;
  EXPECT_NE(r.output.find(" : Float(4, 5) = onnx::MatMul("), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Dropout"), std::string::npos) << r.output;
  ExportOptions options;
  EXPECT_EQ(r.output,
            export_to_pretty_string(load_model(dir + "/m.pt"), {at::randn({4, 8})}, options))
      << "the same graph as the API prints";

  r = run_cli("print " + model + " --training TRAINING --opset 13 --input-names data", false);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("onnx::Dropout("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("%data : Float(4, 8)"), std::string::npos) << r.output;

  r = run_cli("print " + model + " --format dot -o " + dir + "/m.dot", false);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "") << "written to the file";
  std::string dot = read_file(dir + "/m.dot");
  DotGraph g = read_dot(dot);
  EXPECT_EQ(g.error, "") << dot;
  EXPECT_EQ(dot.rfind("digraph ", 0), 0u) << dot;
  EXPECT_NE(dot.find(": Float(8, 5)"), std::string::npos) << dot << "the folded weight transpose";

  r = run_cli("print " + model + " --format svg");
  EXPECT_TRUE(CliFails(r, ErrorCode::kInvalidArgument,
                       {"--format: svg not in {text,dot}", "Run with --help"}))
      << "an unknown format is refused";
  r = run_cli("print " + dir + "/missing.pt --input 4x8");
  EXPECT_TRUE(
      CliFails(r, ErrorCode::kModelLoad, {"missing.pt' does not exist", "Remedy: check the path"}));

  r = run_cli("print --help", false);
  for (const char* flag : {"--format", "--training", "--no-constant-folding", "--input"}) {
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << " missing from print --help";
  }
  if (!has_dot()) GTEST_SKIP() << "graphviz's dot is not installed: apt-get install graphviz";
  EXPECT_EQ(render(dot, dir + "/m.svg"), 0) << dot;
}

}  // namespace
}  // namespace torchonnx::testing
