// optimize_model's dead-code removal: nodes whose outputs nothing reads go, with the
// initializers only they read; what a subgraph reads by name, graph inputs and graph outputs stay.
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/optimize.h"

namespace torchonnx::testing {
namespace {

using Ops = std::vector<std::string>;
using Names = std::vector<std::string>;

TEST(DeadCode, UnreadNodesAndTheirInitializersGo) {
  ir::Model m = model({value("x", at::kFloat, {3})}, {value("y", at::kFloat, {3})});
  m.graph.initializers = {{"w", at::randn({3})}, {"unused", at::randn({3})}};
  m.graph.nodes = {node("Mul", {"x", "w"}, {"dead1"}), node("Exp", {"dead1"}, {"dead2"}),
                   node("Relu", {"x"}, {"y"})};
  optimize_model(m, {/*fold_constants=*/false});
  EXPECT_EQ(op_types(m.graph), Ops{"Relu"}) << describe(m.graph);
  EXPECT_TRUE(m.graph.initializers.empty());
}

TEST(DeadCode, ValuesASubgraphReadsStay) {
  // `outer` is read only inside the Loop body, by name.
  auto body = std::make_shared<ir::Graph>();
  body->name = "body";
  body->inputs = {value("i", at::kLong, {}), value("cond_in", at::kBool, {}),
                  value("acc", at::kFloat, {3})};
  body->outputs = {value("cond_out", at::kBool, {}), value("acc_out", at::kFloat, {3})};
  body->nodes = {node("Identity", {"cond_in"}, {"cond_out"}),
                 node("Add", {"acc", "outer"}, {"acc_out"})};
  ir::Model m = model({value("x", at::kFloat, {3}), value("n", at::kLong, {})},
                      {value("y", at::kFloat, {3})});
  m.graph.nodes = {node("Exp", {"x"}, {"outer"}),
                   node("Loop", {"n", "", "x"}, {"y"}, {{"body", body}})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), (Ops{"Exp", "Loop"})) << describe(m.graph);
  const auto* body_after = attribute<std::shared_ptr<ir::Graph>>(m.graph.nodes[1], "body");
  ASSERT_NE(body_after, nullptr);
  // The body's outputs are its interface: the Identity producing cond_out stays.
  EXPECT_EQ(op_types(**body_after), (Ops{"Identity", "Add"})) << describe(**body_after);
}

TEST(DeadCode, InitializersThatAreGraphInputsStayUnread) {
  ir::Model m = model({value("x", at::kFloat, {3}), value("p", at::kFloat, {3})},
                      {value("y", at::kFloat, {3})});
  m.graph.initializers = {{"p", at::randn({3})}};
  m.graph.nodes = {node("Relu", {"x"}, {"y"})};
  optimize_model(m, {});
  EXPECT_EQ(initializer_names(m.graph), Names{"p"});
  EXPECT_EQ(m.graph.inputs.size(), 2u);
}

}  // namespace
}  // namespace torchonnx::testing
