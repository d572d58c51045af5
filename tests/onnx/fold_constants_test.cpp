// optimize_model's constant folding: nodes computed only from constants (initializers that are
// not graph inputs, Constant nodes, static shapes) become initializers; parameters that can be
// overridden at run time, graph outputs and results too large to be worth it stay nodes.
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/optimize.h"

namespace torchonnx::testing {
namespace {

using Ops = std::vector<std::string>;

// y = x + (a + b), a and b initializers.
ir::Model add_of_constants() {
  ir::Model m = model({value("x", at::kFloat, {2, 3})}, {value("y", at::kFloat, {2, 3})});
  m.graph.initializers = {{"a", at::tensor({1.f, 2.f, 3.f})},
                          {"b", at::tensor({10.f, 20.f, 30.f})}};
  m.graph.nodes = {node("Add", {"a", "b"}, {"c"}), node("Add", {"x", "c"}, {"y"})};
  return m;
}

TEST(FoldConstants, ANodeOfInitializersBecomesAnInitializer) {
  ir::Model m = add_of_constants();
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Add"}) << describe(m.graph);
  EXPECT_EQ(m.graph.nodes[0].inputs, (std::vector<std::string>{"x", "c"}));
  // The folded value keeps its name; the initializers it was computed from are dropped.
  EXPECT_EQ(initializer_names(m.graph), std::vector<std::string>{"c"});
  const at::Tensor* c = initializer(m.graph, "c");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(at::equal(*c, at::tensor({11.f, 22.f, 33.f}))) << *c;
}

TEST(FoldConstants, NothingIsFoldedWithoutFolding) {
  ir::Model m = add_of_constants();
  optimize_model(m, {/*fold_constants=*/false});
  EXPECT_EQ(op_types(m.graph), (Ops{"Add", "Add"})) << describe(m.graph);
  EXPECT_EQ(initializer_names(m.graph), (std::vector<std::string>{"a", "b"}));
}

TEST(FoldConstants, InitializersThatAreGraphInputsAreNotConstants) {
  // keep_initializers_as_inputs: a and b can be fed at run time.
  ir::Model m = add_of_constants();
  m.graph.inputs.push_back(value("a", at::kFloat, {3}));
  m.graph.inputs.push_back(value("b", at::kFloat, {3}));
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), (Ops{"Add", "Add"})) << describe(m.graph);
  EXPECT_EQ(initializer_names(m.graph), (std::vector<std::string>{"a", "b"}));
}

TEST(FoldConstants, AGraphOutputStaysANode) {
  ir::Model m = model({}, {value("c", at::kFloat, {3})});
  m.graph.initializers = {{"a", at::tensor({1.f, 2.f, 3.f})}, {"b", at::tensor({1.f, 1.f, 1.f})}};
  m.graph.nodes = {node("Add", {"a", "b"}, {"c"})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Add"}) << describe(m.graph);
}

TEST(FoldConstants, ShapeOfAStaticInputFoldsAndOfADynamicOneStays) {
  // y = Reshape(x, Shape(x)); z = Reshape(d, Shape(d)) with d's dim 0 unknown.
  ir::Model m = model({value("x", at::kFloat, {2, 3}), value("d", at::kFloat, {-1, 3})},
                      {value("y", at::kFloat, {2, 3}), value("z", at::kFloat, {-1, 3})});
  m.graph.nodes = {node("Shape", {"x"}, {"sx"}),         node("Relu", {"x"}, {"rx"}),
                   node("Reshape", {"rx", "sx"}, {"y"}), node("Shape", {"d"}, {"sd"}),
                   node("Relu", {"d"}, {"rd"}),          node("Reshape", {"rd", "sd"}, {"z"})};
  optimize_model(m, {});
  std::vector<std::string> shape_reads;
  for (const auto& n : m.graph.nodes) {
    if (n.op_type == "Shape") shape_reads.push_back(n.inputs[0]);
  }
  EXPECT_EQ(shape_reads, std::vector<std::string>{"d"}) << describe(m.graph);
  const at::Tensor* sx = initializer(m.graph, "sx");
  ASSERT_NE(sx, nullptr) << describe(m.graph);
  EXPECT_TRUE(at::equal(*sx, at::tensor({int64_t{2}, int64_t{3}}))) << *sx;
}

TEST(FoldConstants, AResultMuchLargerThanWhatItFreesStaysANode) {
  // Expand of a 1-element constant to 512x512 floats (1 MiB, over the 64 KiB always allowed).
  ir::Model m = model({value("x", at::kFloat, {512, 512})}, {value("y", at::kFloat, {512, 512})});
  m.graph.initializers = {{"one", at::ones({1}, at::kFloat)},
                          {"shape", at::tensor({int64_t{512}, int64_t{512}})}};
  m.graph.nodes = {node("Expand", {"one", "shape"}, {"big"}), node("Mul", {"x", "big"}, {"y"})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), (Ops{"Expand", "Mul"})) << describe(m.graph);
}

TEST(FoldConstants, InASubgraphFoldedValuesBecomeConstantNodes) {
  // An If whose then-branch adds two Constant nodes: the sum becomes one Constant node (a
  // subgraph has no initializers of its own). The else-branch reads the outer initializer `a`
  // by name, which keeps it; `b`, read by no one, goes.
  auto then_branch = std::make_shared<ir::Graph>();
  then_branch->name = "then";
  then_branch->outputs = {value("t", at::kFloat, {3})};
  then_branch->nodes = {node("Constant", {}, {"ca"}, {{"value", at::tensor({1.f, 2.f, 3.f})}}),
                        node("Constant", {}, {"cb"}, {{"value", at::tensor({1.f, 1.f, 1.f})}}),
                        node("Add", {"ca", "cb"}, {"s"}), node("Relu", {"s"}, {"t"})};
  auto else_branch = std::make_shared<ir::Graph>();
  else_branch->name = "else";
  else_branch->outputs = {value("e", at::kFloat, {3})};
  else_branch->nodes = {node("Neg", {"a"}, {"e"})};
  ir::Model m = model({value("cond", at::kBool, {})}, {value("y", at::kFloat, {3})});
  m.graph.initializers = {{"a", at::tensor({1.f, 2.f, 3.f})}, {"b", at::tensor({1.f, 1.f, 1.f})}};
  m.graph.nodes = {
      node("If", {"cond"}, {"y"}, {{"then_branch", then_branch}, {"else_branch", else_branch}})};
  optimize_model(m, {});
  ASSERT_EQ(op_types(m.graph), Ops{"If"}) << describe(m.graph);
  const auto* then_after = attribute<std::shared_ptr<ir::Graph>>(m.graph.nodes[0], "then_branch");
  ASSERT_NE(then_after, nullptr);
  const ir::Graph& branch = **then_after;
  ASSERT_EQ(op_types(branch), (Ops{"Constant", "Relu"})) << describe(branch);
  EXPECT_EQ(branch.nodes[1].inputs, branch.nodes[0].outputs);
  const at::Tensor* sum = attribute<at::Tensor>(branch.nodes[0], "value");
  ASSERT_NE(sum, nullptr);
  EXPECT_TRUE(at::equal(*sum, at::tensor({2.f, 3.f, 4.f}))) << *sum;
  EXPECT_EQ(initializer_names(m.graph), std::vector<std::string>{"a"});
}

TEST(FoldConstants, SmallOuterConstantsFoldInASubgraph) {
  // Add(a, b) of outer initializers in a branch becomes a Constant node there; `b`, read by no
  // one after that, goes. Add(big, big) of a 1 MiB initializer stays a node (no copy of it).
  auto then_branch = std::make_shared<ir::Graph>();
  then_branch->outputs = {value("t", at::kFloat, {3})};
  then_branch->nodes = {node("Add", {"a", "b"}, {"s"}), node("Relu", {"s"}, {"t"})};
  auto else_branch = std::make_shared<ir::Graph>();
  else_branch->outputs = {value("e", at::kFloat, {512, 512})};
  else_branch->nodes = {node("Add", {"big", "big"}, {"e2"}), node("Neg", {"e2"}, {"e"})};
  ir::Model m = model({value("cond", at::kBool, {})}, {value("y", at::kFloat, {})});
  m.graph.initializers = {{"a", at::tensor({1.f, 2.f, 3.f})},
                          {"b", at::tensor({1.f, 1.f, 1.f})},
                          {"big", at::ones({512, 512})}};
  m.graph.nodes = {
      node("If", {"cond"}, {"y"}, {{"then_branch", then_branch}, {"else_branch", else_branch}})};
  optimize_model(m, {});
  ASSERT_EQ(op_types(*then_branch), (Ops{"Constant", "Relu"})) << describe(*then_branch);
  const at::Tensor* sum = attribute<at::Tensor>(then_branch->nodes[0], "value");
  ASSERT_NE(sum, nullptr);
  EXPECT_TRUE(at::equal(*sum, at::tensor({2.f, 3.f, 4.f}))) << *sum;
  EXPECT_EQ(op_types(*else_branch), (Ops{"Add", "Neg"})) << describe(*else_branch);
  EXPECT_EQ(initializer_names(m.graph), std::vector<std::string>{"big"});
}

TEST(FoldConstants, MatMulActivationsAndReductionsOfInitializersFold) {
  // y = x + Relu(Sigmoid(ReduceMax(MatMul(a, b), axes=[1])))... of initializers a, b: one
  // initializer (a Linear of a parameter inside a condition, found by the fuzzer).
  ir::Model m = model({value("x", at::kFloat, {2})}, {value("y", at::kFloat, {2})});
  const at::Tensor a = at::randn({2, 3});
  const at::Tensor b = at::randn({3, 4});
  m.graph.initializers = {{"a", a}, {"b", b}};
  m.graph.nodes = {node("MatMul", {"a", "b"}, {"mm"}),
                   node("ReduceMax", {"mm"}, {"mx"},
                        {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}),
                   node("Sigmoid", {"mx"}, {"s"}),
                   node("Tanh", {"s"}, {"t"}),
                   node("Relu", {"t"}, {"r"}),
                   node("Add", {"x", "r"}, {"y"})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Add"}) << describe(m.graph);
  const at::Tensor* r = initializer(m.graph, "r");
  ASSERT_NE(r, nullptr) << describe(m.graph);
  const at::Tensor expected = at::relu(at::tanh(at::sigmoid(std::get<0>(at::matmul(a, b).max(1)))));
  EXPECT_TRUE(at::allclose(*r, expected)) << *r << expected;
}

// Note [If of a constant condition]: cond = Less(ReduceMean(w * w), 0.5) of an initializer w.
ir::Node if_of(const std::string& cond, const std::string& out, const std::string& tag) {
  auto then_branch = std::make_shared<ir::Graph>();
  then_branch->outputs = {value(tag + "t", at::kFloat, {3})};
  then_branch->nodes = {node("Relu", {"x"}, {tag + "t"})};
  auto else_branch = std::make_shared<ir::Graph>();
  else_branch->outputs = {value("x", at::kFloat, {3})};  // an outer value: an Identity
  return node("If", {cond}, {out}, {{"then_branch", then_branch}, {"else_branch", else_branch}});
}

std::vector<ir::Node> condition_of(const std::string& w, const std::string& cond) {
  return {node("Mul", {w, w}, {cond + "m"}),
          node("ReduceMean", {cond + "m"}, {cond + "r"}, {{"keepdims", int64_t{0}}}),
          node("Less", {cond + "r", "half"}, {cond})};
}

TEST(FoldConstants, AnIfOfAConstantConditionIsReplacedByTheBranchItTakes) {
  for (float scale : {0.1f, 10.f}) {  // mean(w * w) below 0.5: then; above: else
    ir::Model m = model({value("x", at::kFloat, {3})}, {value("y", at::kFloat, {3})});
    m.graph.initializers = {{"w", at::full({2, 2}, scale)}, {"half", at::scalar_tensor(0.5f)}};
    m.graph.nodes = condition_of("w", "c");
    m.graph.nodes.push_back(if_of("c", "y", ""));
    optimize_model(m, {});
    if (scale < 1) {
      EXPECT_EQ(op_types(m.graph), Ops{"Relu"}) << describe(m.graph);
      EXPECT_EQ(m.graph.nodes[0].outputs, std::vector<std::string>{"y"});
    } else {
      EXPECT_EQ(op_types(m.graph), Ops{"Identity"}) << describe(m.graph);
      EXPECT_EQ(m.graph.nodes[0].inputs, std::vector<std::string>{"x"});
    }
    EXPECT_TRUE(initializer_names(m.graph).empty()) << describe(m.graph);
  }
}

TEST(FoldConstants, AnIfOfAConditionFromOuterInitializersInALoopBodyIsReplaced) {
  // ONNX Runtime 1.30's optimizer loses the output of such an If in a Loop body itself.
  auto body = std::make_shared<ir::Graph>();
  body->inputs = {value("i", at::kLong, {}), value("keep", at::kBool, {}),
                  value("acc", at::kFloat, {3})};
  body->outputs = {value("keep", at::kBool, {}), value("acc2", at::kFloat, {3})};
  body->nodes = condition_of("w", "c");
  body->nodes.push_back(if_of("c", "chosen", "b"));
  body->nodes.push_back(node("Add", {"acc", "chosen"}, {"acc2"}));
  ir::Model m = model({value("x", at::kFloat, {3}), value("n", at::kLong, {})},
                      {value("y", at::kFloat, {3})});
  m.graph.initializers = {{"w", at::full({2, 2}, 0.1f)},
                          {"half", at::scalar_tensor(0.5f)},
                          {"yes", at::scalar_tensor(true)}};
  m.graph.nodes = {node("Loop", {"n", "yes", "x"}, {"y"}, {{"body", body}})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(*body), (Ops{"Relu", "Add"})) << describe(*body);
  EXPECT_EQ(body->nodes[1].inputs, (std::vector<std::string>{"acc", "chosen"}));
  EXPECT_EQ(initializer_names(m.graph), std::vector<std::string>{"yes"});
}

}  // namespace
}  // namespace torchonnx::testing
