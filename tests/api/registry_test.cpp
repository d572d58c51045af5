// The registry: ranges of one op never overlap, lookup follows the ranges, in-place ops fall back
// to their out-of-place converter, a converter of the unnamed overload serves no other; a node
// that matches no schema exactly is resolved to an overload once (Note [Overloads resolved once]).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <onnx/defs/schema.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/irparser.h>

#include "common/jit_util.h"
#include "onnx/model_proto.h"
#include "symbolic/context.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic {
namespace {

TEST(Registry, BuiltinRangesAreValidAndDisjoint) {
  const auto& entries = Registry::builtin().entries();
  EXPECT_GT(entries.size(), 80u);
  for (const auto& [op, regs] : entries) {
    for (size_t i = 0; i < regs.size(); ++i) {
      EXPECT_LE(kMinOpset, regs[i].range.since) << op;
      EXPECT_LE(regs[i].range.since, regs[i].range.until) << op;
      EXPECT_LE(regs[i].range.until, kMaxOpset) << op;
      for (size_t j = i + 1; j < regs.size(); ++j) {
        EXPECT_TRUE(regs[i].range.until < regs[j].range.since ||
                    regs[j].range.until < regs[i].range.since)
            << op << " has overlapping ranges";
      }
    }
  }
}

// Every op's ranges reach the highest opset: no converter stops short of it.
TEST(Registry, EveryOpReachesTheHighestOpset) {
  for (const auto& [op, regs] : Registry::builtin().entries()) {
    int until = 0;
    for (const auto& reg : regs) until = std::max(until, reg.range.until);
    EXPECT_EQ(until, kMaxOpset) << op << " stops at opset " << until;
  }
}

// The highest opset is written once (kMaxOpset): a range ending in its literal value would drop
// the op when kMaxOpset is raised, which the test above cannot see until then.
TEST(Registry, NoConverterRangeEndsInALiteralMaximumOpset) {
  const std::regex literal_end("\\{\\s*\\d+\\s*,\\s*" + std::to_string(kMaxOpset) + "\\s*\\}");
  const auto ops_dir = std::filesystem::path(TORCHONNX_SOURCE_DIR) / "src" / "symbolic" / "ops";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ops_dir)) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find("r.add(") != std::string::npos && std::regex_search(line, literal_end)) {
        ADD_FAILURE() << entry.path().filename().string() << ":" << n
                      << ": a range ends in the literal " << kMaxOpset << "; write kMaxOpset\n  "
                      << line;
      }
    }
  }
  EXPECT_GT(files, 20u) << "no converter sources found in " << ops_dir;
}

// Nor is it written in messages, help texts or defaults: "exports opsets 9-17", "up to opset 17"
// and `opset = 17` would go stale when kMaxOpset is raised.
TEST(Registry, NoLiteralMaximumOpsetInSources) {
  const std::string max = std::to_string(kMaxOpset);
  const std::regex in_text("\"[^\"]*(opsets?|exports)[^\"]{0,24}\\b" + max + "\\b");
  const std::regex in_code("opset\\w*\\s*=\\s*" + max + "\\b");
  const std::regex comment("^\\s*//");
  size_t files = 0;
  for (const char* dir : {"src", "tools/cli"}) {
    const auto root = std::filesystem::path(TORCHONNX_SOURCE_DIR) / dir;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      const auto ext = entry.path().extension();
      if (ext != ".cpp" && ext != ".h") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (std::regex_search(line, comment)) continue;
        if (std::regex_search(line, in_text) || std::regex_search(line, in_code)) {
          ADD_FAILURE() << entry.path().lexically_relative(TORCHONNX_SOURCE_DIR).string() << ":"
                        << n << ": the literal " << max
                        << " as the highest opset; use kMaxOpset\n  " << line;
        }
      }
    }
  }
  EXPECT_GT(files, 50u);
}

// Note [ONNX features by opset]: each feature's op has a version of its own at exactly the
// feature's opset (ONNX changed it there), checked against the onnx library's schemas where the
// library knows that opset.
TEST(OnnxFeatures, EachFeatureIsAVersionOfItsOp) {
  size_t count = 0;
  const OnnxFeatureInfo* features = onnx_features(&count);
  ASSERT_GT(count, 0u);
  int checked = 0;
  for (size_t i = 0; i < count; ++i) {
    const OnnxFeatureInfo& f = features[i];
    EXPECT_EQ(static_cast<size_t>(f.feature), i);
    EXPECT_EQ(onnx_feature_opset(f.feature), f.opset);
    EXPECT_GT(f.opset, 9) << f.op << ": opset 9 is the lowest the converters serve";
    EXPECT_LE(f.opset, kMaxOpset) << f.op;
    if (f.opset > onnx_library_max_opset()) continue;  // DFT-20 with onnx 1.12
    const auto* at = onnx::OpSchemaRegistry::Schema(f.op, f.opset);
    ASSERT_NE(at, nullptr) << f.op << " has no schema at opset " << f.opset;
    EXPECT_EQ(at->since_version(), f.opset)
        << f.op << "'s version at opset " << f.opset << " is " << at->since_version()
        << ": the feature came with another version";
    ++checked;
  }
  // onnx 1.12 (Debian 12) knows opsets up to 17: the features of opsets 18 and 20 are not checked.
  EXPECT_GE(checked, static_cast<int>(count) - 2);
}

TEST(OnnxFeatures, GraphContextHasAFeatureFromItsOpset) {
  ir::Graph graph;
  EXPECT_FALSE(GraphContext(graph, 10).has(OnnxFeature::kGatherElements));
  EXPECT_TRUE(GraphContext(graph, 11).has(OnnxFeature::kGatherElements));
  EXPECT_TRUE(GraphContext(graph, 21).has(OnnxFeature::kGatherElements));
  EXPECT_FALSE(GraphContext(graph, 17).has(OnnxFeature::kScatterMaxMin));
  EXPECT_TRUE(GraphContext(graph, 18).has(OnnxFeature::kScatterMaxMin));
}

TEST(Registry, AddRejectsOverlap) {
  Registry r;
  r.add("aten::foo", {9, 12}, nullptr);
  r.add("aten::foo", {13, 17}, nullptr);
  // Programming errors of the built-in registrations: std::logic_error (no ExportError code),
  // the message naming what is wrong and the op.
  auto expect_logic_error = [&](const std::string& op, OpsetRange range, const std::string& what) {
    try {
      r.add(op, range, nullptr);
      ADD_FAILURE() << "registering " << op << " succeeded; expected '" << what << "'";
    } catch (const std::logic_error& e) {
      EXPECT_EQ(std::string(e.what()), what);
    }
  };
  expect_logic_error("aten::foo", {12, 14}, "overlapping opset ranges registered for aten::foo");
  expect_logic_error("aten::bar", {14, 12}, "empty opset range for aten::bar");
}

TEST(Registry, LookupPicksTheRangeHoldingTheOpset) {
  const Registry& r = Registry::builtin();
  const Converter* old_hardswish = r.find("aten::hardswish", 13);
  const Converter* new_hardswish = r.find("aten::hardswish", 14);
  ASSERT_NE(old_hardswish, nullptr);
  ASSERT_NE(new_hardswish, nullptr);
  EXPECT_NE(old_hardswish, new_hardswish);
  EXPECT_EQ(r.find("aten::hardswish", 8), nullptr);
  EXPECT_EQ(r.find("aten::no_such_op", 17), nullptr);
}

TEST(Registry, InPlaceOpsUseTheOutOfPlaceConverter) {
  const Registry& r = Registry::builtin();
  EXPECT_EQ(r.find_for_node("aten::relu_", 17), r.find("aten::relu", 17));
  EXPECT_EQ(r.find_for_node("aten::__and__", 17), r.find("aten::__and__", 17));
}

TEST(Registry, AConverterOfTheUnnamedOverloadServesNoOther) {
  Registry r;
  r.add_unnamed("aten::foo", {9, 17}, nullptr);
  r.add("aten::foo.dim", {9, 17}, nullptr);
  r.add("aten::bar", {9, 17}, nullptr);
  EXPECT_EQ(r.find_for_node("aten::foo", 11), r.find("aten::foo", 11));
  EXPECT_EQ(r.find_for_node("aten::foo", 11, "dim"), r.find("aten::foo.dim", 11));
  EXPECT_EQ(r.find_for_node("aten::foo", 11, "names_dim"), nullptr);
  EXPECT_EQ(r.find_for_node("aten::foo_", 11, "names_dim"), nullptr);
  // A converter by bare name serves every overload without one of its own.
  EXPECT_EQ(r.find_for_node("aten::bar", 11, "Scalar"), r.find("aten::bar", 11));
  // Aliases keep it.
  r.alias("aten::foo_copy", "aten::foo");
  EXPECT_EQ(r.find_for_node("aten::foo_copy", 11, "names_dim"), nullptr);
  EXPECT_NE(r.find_for_node("aten::foo_copy", 11, "dim"), nullptr);
  // Built in: aten::max(Tensor) has its converter, aten::max.names_dim none (not the one of
  // aten::max(Tensor), which would reduce over every dim).
  const Registry& builtin = Registry::builtin();
  EXPECT_NE(builtin.find_for_node("aten::max", 17), nullptr);
  EXPECT_EQ(builtin.find_for_node("aten::max", 17, "names_dim"), nullptr);
  EXPECT_EQ(builtin.find_for_node("aten::median", 17, "names_dim"), nullptr);
}

// A node whose argument types match no schema exactly (here an int list where upsample's
// .vec overload takes float[]? scale factors) takes the overload its arguments fit by count and
// kind; the converters are looked up by it.
TEST(Registry, ANodeThatMatchesNoSchemaIsResolvedToTheOverloadItsArgumentsFit) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%x : Float(1, 2, 4, 4), %s : int[], %none : NoneType):
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::upsample_nearest2d(%x, %none, %s)
  %z : Tensor = aten::upsample_bilinear2d(%x, %none, %false, %s)
  %w : Tensor = aten::upsample_bilinear2d(%x, %s, %false, %none, %none)
  return (%y, %z, %w)
)IR",
                      graph.get());
  std::vector<const torch::jit::Node*> nodes;
  for (const torch::jit::Node* n : graph->nodes()) {
    if (n->kind() != c10::prim::Constant) nodes.push_back(n);
  }
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0]->maybeSchema(), nullptr);
  EXPECT_EQ(nodes[1]->maybeSchema(), nullptr);
  ASSERT_NE(node_schema(nodes[0]), nullptr);
  EXPECT_EQ(overload_name(nodes[0]), "vec");
  EXPECT_EQ(overload_name(nodes[1]), "vec");
  // A node that matches its schema keeps it.
  ASSERT_NE(nodes[2]->maybeSchema(), nullptr);
  EXPECT_EQ(node_schema(nodes[2]), nodes[2]->maybeSchema());
  EXPECT_EQ(overload_name(nodes[2]), "");
  // A node that fits no overload has none.
  auto other = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%x : Tensor, %s : str):
  %y : Tensor = aten::upsample_nearest2d(%x, %s, %s)
  return (%y)
)IR",
                      other.get());
  EXPECT_EQ(node_schema(other->outputs()[0]->node()), nullptr);
  EXPECT_EQ(overload_name(other->outputs()[0]->node()), "");
}

}  // namespace
}  // namespace torchonnx::symbolic
