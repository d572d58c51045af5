// Note [Converter output types] (symbolic/convert.cpp): type_values types the values of a
// converted graph once, by the shape rules, into ir::Graph::rule_types; the optimizer's sweep
// reads those types and runs the rules again only on what its rewrites changed. The sweeps'
// tests fold a Shape s (a graph output is never folded, so y = Identity(s) stays).
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/optimize.h"

namespace torchonnx::testing {
namespace {

using Ops = std::vector<std::string>;
using Shape = std::vector<int64_t>;

const ir::TypeInfo* rule_type(const ir::Graph& g, const std::string& v) {
  auto it = g.rule_types.find(v);
  return it == g.rule_types.end() ? nullptr : &it->second;
}

TEST(ValueTypes, ConversionTypesWhatPropagationDidNotByTheRules) {
  // t = Transpose(x), r = Relu(t) with r typed by propagation, q = Conv(...) (no rule): only t
  // is typed by the rules; r keeps propagation's type only; q stays unknown.
  ir::Model m = model({value("x", at::kFloat, {2, 3})}, {value("y", at::kFloat, {})});
  m.graph.nodes = {node("Transpose", {"x"}, {"t"}, {{"perm", ir::Ints{1, 0}}}),
                   node("Relu", {"t"}, {"r"}), node("Conv", {"r", "r"}, {"q"}),
                   node("Neg", {"q"}, {"y"})};
  m.graph.value_types["r"] = ir::TypeInfo(at::kFloat, Shape{3, 2});
  type_values(m.graph, 17);
  EXPECT_TRUE(m.graph.typed);
  const ir::TypeInfo* t = rule_type(m.graph, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, at::kFloat);
  EXPECT_EQ(t->shape, (Shape{3, 2}));
  EXPECT_EQ(rule_type(m.graph, "r"), nullptr);
  EXPECT_EQ(rule_type(m.graph, "q"), nullptr);
  EXPECT_EQ(rule_type(m.graph, "y"), nullptr);
}

TEST(ValueTypes, LoopBodyValuesAreTypedWithTheOuterConstants) {
  // The body's Reshape reads an outer constant shape: typed [6]; what reads the body's inputs
  // (the carried values, which may change shape between iterations) stays untyped.
  ir::Model m = model({value("x", at::kFloat, {2, 3})}, {value("y", at::kFloat, {})});
  m.graph.initializers = {{"flat", at::tensor({int64_t{6}})}};
  auto body = std::make_shared<ir::Graph>();
  body->inputs = {value("i", at::kLong, {}), value("c", at::kBool, {})};
  body->outputs = {value("c2", at::kBool, {}), value("s", at::kFloat, {})};
  body->nodes = {node("Identity", {"c"}, {"c2"}),
                 node("Constant", {}, {"k"}, {{"value", at::ones({2, 3})}}),
                 node("Reshape", {"k", "flat"}, {"v"}), node("Relu", {"v"}, {"s"}),
                 node("Relu", {"i"}, {"j"})};
  m.graph.nodes = {node("Loop", {"", "x"}, {"y"}, {{"body", body}})};
  type_values(m.graph, 17);
  EXPECT_TRUE(body->typed);
  const ir::TypeInfo* s = rule_type(*body, "s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->shape, (Shape{6}));
  EXPECT_EQ(rule_type(*body, "j"), nullptr);
}

// Optimizes `m`, whose graph ends in s = Shape(r), y = Identity(s), and returns s's values when
// the sweep folded it (an undefined tensor when it did not).
at::Tensor folded_shape(ir::Model& m) {
  optimize_model(m, {});
  const at::Tensor* s = initializer(m.graph, "s");
  if (op_types(m.graph) != Ops{"Identity"} || s == nullptr) {
    ADD_FAILURE() << "the Shape did not fold:\n" << describe(m.graph);
    return {};
  }
  return *s;
}

TEST(ValueTypes, TheSweepKeepsTheTypesOfConversion) {
  // x has a dynamic first dim, so the rules alone cannot know Shape(Relu(x)); the type recorded
  // at conversion ([4, 3], as a converter that knows more would record it) holds in the sweep,
  // which folds the Shape from it instead of typing Relu again.
  ir::Model m = model({value("x", at::kFloat, {-1, 3})}, {value("y", at::kLong, {2})});
  m.graph.nodes = {node("Relu", {"x"}, {"r"}), node("Shape", {"r"}, {"s"}),
                   node("Identity", {"s"}, {"y"})};
  m.graph.rule_types["r"] = ir::TypeInfo(at::kFloat, Shape{4, 3});
  m.graph.typed = true;
  const at::Tensor s = folded_shape(m);
  EXPECT_TRUE(s.defined() && at::equal(s, at::tensor({int64_t{4}, int64_t{3}}))) << s;
}

TEST(ValueTypes, NodesReadingAFoldedValueAreTypedAgain) {
  // a = Add(c1, c2) has type propagation's [-1, 3] (a dim it did not know), so conversion types
  // Mul(a, x) [-1, 3]; the sweep folds a into a [2, 3] constant, types the Mul again from it
  // ([2, 3]) and folds its Shape.
  ir::Model m = model({value("x", at::kFloat, {-1, 3})}, {value("y", at::kLong, {2})});
  m.graph.nodes = {node("Constant", {}, {"c1"}, {{"value", at::ones({2, 3})}}),
                   node("Constant", {}, {"c2"}, {{"value", at::ones({2, 3})}}),
                   node("Add", {"c1", "c2"}, {"a"}),
                   node("Mul", {"a", "x"}, {"r"}),
                   node("Shape", {"r"}, {"s"}),
                   node("Identity", {"s"}, {"y"})};
  m.graph.value_types["a"] = ir::TypeInfo(at::kFloat, Shape{-1, 3});
  type_values(m.graph, 17);
  const ir::TypeInfo* r = rule_type(m.graph, "r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->shape, (Shape{-1, 3}));
  const at::Tensor s = folded_shape(m);
  EXPECT_TRUE(s.defined() && at::equal(s, at::tensor({int64_t{2}, int64_t{3}}))) << s;
}

TEST(ValueTypes, ARewrittenNodeIsTypedAgain) {
  // Relu(Identity(x)), with the types of conversion made [-1, 3] (less than the rules know now):
  // the sweep removes the Identity, so Relu reads x itself and is typed again from x's [2, 3],
  // and its Shape folds.
  ir::Model m = model({value("x", at::kFloat, {2, 3})}, {value("y", at::kLong, {2})});
  m.graph.nodes = {node("Identity", {"x"}, {"i"}), node("Relu", {"i"}, {"r"}),
                   node("Shape", {"r"}, {"s"}), node("Identity", {"s"}, {"y"})};
  type_values(m.graph, 17);
  m.graph.rule_types["i"] = ir::TypeInfo(at::kFloat, Shape{-1, 3});
  m.graph.rule_types["r"] = ir::TypeInfo(at::kFloat, Shape{-1, 3});
  const at::Tensor s = folded_shape(m);
  EXPECT_TRUE(s.defined() && at::equal(s, at::tensor({int64_t{2}, int64_t{3}}))) << s;
}

}  // namespace
}  // namespace torchonnx::testing
