// share_duplicate_initializers (src/onnx/share_initializers.h): tied weights (one storage, same
// view) are stored once; equal contents only when asked (eval mode); readers, subgraph readers and
// graph inputs follow the kept name; graph outputs keep theirs.
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/share_initializers.h"

namespace torchonnx::testing {
namespace {

using Names = std::vector<std::string>;

TEST(ShareInitializers, TiedWeightsAreStoredOnce) {
  const at::Tensor w = at::randn({4, 3});
  ir::Graph g;
  g.inputs = {value("x", at::kFloat, {2, 3}), value("decoder.weight", at::kFloat, {4, 3})};
  g.outputs = {value("y", at::kFloat, {2, 4})};
  g.initializers = {{"encoder.weight", w}, {"decoder.weight", w}};
  g.nodes = {node("Gemm", {"x", "encoder.weight"}, {"h"}),
             node("Gemm", {"h", "decoder.weight"}, {"y"})};
  EXPECT_EQ(share_duplicate_initializers(g, /*by_value=*/false), 1);
  EXPECT_EQ(initializer_names(g), Names{"encoder.weight"});
  EXPECT_EQ(g.nodes[1].inputs, (Names{"h", "encoder.weight"})) << describe(g);
  // The dropped name is no graph input any more.
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "x");
}

TEST(ShareInitializers, EqualContentsOnlyByValue) {
  auto make = [] {
    ir::Graph g;
    g.outputs = {value("y", at::kFloat, {3})};
    g.initializers = {{"a", at::ones({3})}, {"b", at::ones({3})}, {"c", at::zeros({3})}};
    g.nodes = {node("Add", {"a", "b"}, {"s"}), node("Add", {"s", "c"}, {"y"})};
    return g;
  };
  ir::Graph by_identity = make();
  EXPECT_EQ(share_duplicate_initializers(by_identity, false), 0);
  EXPECT_EQ(initializer_names(by_identity), (Names{"a", "b", "c"}));

  ir::Graph by_value = make();
  EXPECT_EQ(share_duplicate_initializers(by_value, true), 1);
  EXPECT_EQ(initializer_names(by_value), (Names{"a", "c"}));
  EXPECT_EQ(by_value.nodes[0].inputs, (Names{"a", "a"})) << describe(by_value);
}

TEST(ShareInitializers, OtherViewsOfOneStorageStayApart) {
  const at::Tensor w = at::randn({2, 3});
  ir::Graph g;
  g.outputs = {value("y", at::kFloat, {3})};
  g.initializers = {{"row0", w[0]}, {"row1", w[1]}, {"t", w.t()}, {"row0_again", w[0]}};
  g.nodes = {node("Add", {"row0", "row1"}, {"s"}), node("Add", {"s", "row0_again"}, {"y"}),
             node("Identity", {"t"}, {"u"})};
  EXPECT_EQ(share_duplicate_initializers(g, false), 1);
  EXPECT_EQ(initializer_names(g), (Names{"row0", "row1", "t"}));
  EXPECT_EQ(g.nodes[1].inputs, (Names{"s", "row0"}));
}

TEST(ShareInitializers, SubgraphReadersFollowAndGraphOutputsKeepTheirNames) {
  const at::Tensor w = at::randn({3});
  auto then_branch = std::make_shared<ir::Graph>();
  then_branch->outputs = {value("t", at::kFloat, {3})};
  then_branch->nodes = {node("Neg", {"b"}, {"t"})};
  auto else_branch = std::make_shared<ir::Graph>();
  else_branch->outputs = {value("e", at::kFloat, {3})};
  else_branch->nodes = {node("Identity", {"a"}, {"e"})};
  ir::Graph g;
  g.inputs = {value("cond", at::kBool, {})};
  g.outputs = {value("y", at::kFloat, {3}), value("out", at::kFloat, {3})};
  g.initializers = {{"a", w}, {"b", w}, {"out", w}};
  g.nodes = {
      node("If", {"cond"}, {"y"}, {{"then_branch", then_branch}, {"else_branch", else_branch}})};
  EXPECT_EQ(share_duplicate_initializers(g, false), 1);
  EXPECT_EQ(initializer_names(g), (Names{"a", "out"}));
  EXPECT_EQ(then_branch->nodes[0].inputs, Names{"a"}) << describe(*then_branch);
}

}  // namespace
}  // namespace torchonnx::testing
