// optimize_model's peepholes: Identity/Cast/Transpose/Reshape/Squeeze/Unsqueeze chains that do
// nothing go, MatMul+Add on 2-D inputs becomes Gemm, batch norm folds into the Conv before it and
// Dropout goes in eval mode; graph outputs keep their names.
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/optimize.h"

namespace torchonnx::testing {
namespace {

using Ops = std::vector<std::string>;
using Names = std::vector<std::string>;

constexpr int64_t kFloat = 1;  // onnx::TensorProto::FLOAT
constexpr int64_t kDouble = 11;
constexpr int64_t kInt32 = 6;

// z = Relu(<chain>(x)) with x a float [2, 3]: the chain's nodes, then a Relu reading `last`.
ir::Model chain(std::vector<ir::Node> nodes, const std::string& last, int opset = 17) {
  ir::Model m = model({value("x", at::kFloat, {2, 3})}, {value("z", at::kFloat, {})}, opset);
  m.graph.nodes = std::move(nodes);
  m.graph.nodes.push_back(node("Relu", {last}, {"z"}));
  return m;
}

TEST(Peephole, IdentityGoes) {
  ir::Model m = chain({node("Identity", {"x"}, {"a"})}, "a");
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Relu"}) << describe(m.graph);
  EXPECT_EQ(m.graph.nodes[0].inputs, Names{"x"});
}

TEST(Peephole, AGraphOutputKeepsItsName) {
  ir::Model m = model({value("x", at::kFloat, {2})}, {value("y", at::kFloat, {2})});
  m.graph.nodes = {node("Identity", {"x"}, {"y"})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Identity"}) << describe(m.graph);
}

TEST(Peephole, LosslessCastChainsGoAndLossyOnesStay) {
  // float → double → float is the identity; float → int32 → float rounds and stays.
  ir::Model lossless = chain(
      {node("Cast", {"x"}, {"d"}, {{"to", kDouble}}), node("Cast", {"d"}, {"f"}, {{"to", kFloat}})},
      "f");
  optimize_model(lossless, {});
  EXPECT_EQ(op_types(lossless.graph), Ops{"Relu"}) << describe(lossless.graph);
  EXPECT_EQ(lossless.graph.nodes[0].inputs, Names{"x"});

  ir::Model lossy = chain(
      {node("Cast", {"x"}, {"i"}, {{"to", kInt32}}), node("Cast", {"i"}, {"f"}, {{"to", kFloat}})},
      "f");
  optimize_model(lossy, {});
  EXPECT_EQ(op_types(lossy.graph), (Ops{"Cast", "Cast", "Relu"})) << describe(lossy.graph);
}

TEST(Peephole, TransposesThatCancelGo) {
  ir::Model m = chain({node("Transpose", {"x"}, {"t1"}, {{"perm", ir::Ints{1, 0}}}),
                       node("Transpose", {"t1"}, {"t2"}, {{"perm", ir::Ints{1, 0}}})},
                      "t2");
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Relu"}) << describe(m.graph);
  EXPECT_EQ(m.graph.nodes[0].inputs, Names{"x"});
}

TEST(Peephole, ReshapeChainsMergeIntoOneReshape) {
  // Reshape(Reshape(Reshape(x, [6]), [3, 2]), [3, -1]) ⇒ Reshape(x, [3, -1]).
  ir::Model m =
      chain({node("Reshape", {"x", "flat"}, {"r1"}), node("Reshape", {"r1", "rows"}, {"r2"}),
             node("Reshape", {"r2", "same"}, {"r3"})},
            "r3");
  m.graph.initializers = {{"flat", at::tensor({int64_t{6}})},
                          {"rows", at::tensor({int64_t{3}, int64_t{2}})},
                          {"same", at::tensor({int64_t{3}, int64_t{-1}})}};
  optimize_model(m, {});
  ASSERT_EQ(op_types(m.graph), (Ops{"Reshape", "Relu"})) << describe(m.graph);
  EXPECT_EQ(m.graph.nodes[0].inputs, (Names{"x", "same"}));
  EXPECT_EQ(m.graph.nodes[1].inputs, m.graph.nodes[0].outputs);
  EXPECT_EQ(initializer_names(m.graph), Names{"same"});
}

TEST(Peephole, AReshapeToTheSameShapeGoes) {
  // [2, -1] and [0, 3] (0 copies the input's dim) on a [2, 3] input; [3, 2] does not.
  for (const auto& [shape, removed] : std::vector<std::pair<std::vector<int64_t>, bool>>{
           {{2, -1}, true}, {{0, 3}, true}, {{3, 2}, false}}) {
    ir::Model m = chain({node("Reshape", {"x", "shape"}, {"r"})}, "r");
    m.graph.initializers = {{"shape", at::tensor(shape)}};
    optimize_model(m, {});
    EXPECT_EQ(op_types(m.graph), removed ? Ops{"Relu"} : (Ops{"Reshape", "Relu"}))
        << "shape " << at::tensor(shape) << "\n"
        << describe(m.graph);
  }
}

TEST(Peephole, SqueezeOfTheUnsqueezedAxisGoes) {
  // Opset 13: axes are an input.
  ir::Model m = chain(
      {node("Unsqueeze", {"x", "axis"}, {"u"}), node("Squeeze", {"u", "axis"}, {"s"})}, "s", 13);
  m.graph.initializers = {{"axis", at::tensor({int64_t{0}})}};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Relu"}) << describe(m.graph);
  EXPECT_EQ(m.graph.nodes[0].inputs, Names{"x"});

  // Another axis: both stay.
  ir::Model other =
      chain({node("Unsqueeze", {"x", "a0"}, {"u"}), node("Squeeze", {"u", "a1"}, {"s"})}, "s", 13);
  other.graph.initializers = {{"a0", at::tensor({int64_t{0}})}, {"a1", at::tensor({int64_t{1}})}};
  // Squeeze of axis 1 of a [1, 2, 3] value would fail in ORT; only the structure matters here.
  optimize_model(other, {});
  EXPECT_EQ(op_types(other.graph), (Ops{"Unsqueeze", "Squeeze", "Relu"})) << describe(other.graph);
}

TEST(Peephole, MatMulPlusBiasOn2DInputsBecomesGemmWithTransB) {
  // y = x @ W^T + b (torch.nn.Linear on 2-D inputs).
  ir::Model m = model({value("x", at::kFloat, {4, 3})}, {value("y", at::kFloat, {4, 5})});
  m.graph.initializers = {{"W", at::randn({5, 3})}, {"b", at::randn({5})}};
  m.graph.inputs.push_back(value("W", at::kFloat, {5, 3}));  // kept as an input: not folded
  m.graph.nodes = {node("Transpose", {"W"}, {"wt"}, {{"perm", ir::Ints{1, 0}}}),
                   node("MatMul", {"x", "wt"}, {"mm"}), node("Add", {"mm", "b"}, {"y"})};
  optimize_model(m, {});
  ASSERT_EQ(op_types(m.graph), Ops{"Gemm"}) << describe(m.graph);
  EXPECT_EQ(m.graph.nodes[0].inputs, (Names{"x", "W", "b"}));
  EXPECT_EQ(m.graph.nodes[0].outputs, Names{"y"});
  const int64_t* trans_b = attribute<int64_t>(m.graph.nodes[0], "transB");
  ASSERT_NE(trans_b, nullptr);
  EXPECT_EQ(*trans_b, 1);
}

TEST(Peephole, MatMulOf3DInputsStaysMatMul) {
  ir::Model m = model({value("x", at::kFloat, {2, 4, 3})}, {value("y", at::kFloat, {2, 4, 5})});
  m.graph.inputs.push_back(value("W", at::kFloat, {3, 5}));
  m.graph.inputs.push_back(value("b", at::kFloat, {5}));
  m.graph.nodes = {node("MatMul", {"x", "W"}, {"mm"}), node("Add", {"mm", "b"}, {"y"})};
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), (Ops{"MatMul", "Add"})) << describe(m.graph);
}

ir::Model conv_batch_norm() {
  ir::Model m =
      model({value("x", at::kFloat, {1, 2, 5, 5})}, {value("y", at::kFloat, {1, 3, 3, 3})});
  m.graph.initializers = {{"w", at::randn({3, 2, 3, 3})}, {"cb", at::randn({3})},
                          {"gamma", at::rand({3}) + 0.5}, {"beta", at::randn({3})},
                          {"mean", at::randn({3})},       {"var", at::rand({3}) + 0.5}};
  m.graph.nodes = {node("Conv", {"x", "w", "cb"}, {"c"}),
                   node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"},
                        {{"epsilon", 1e-5f}})};
  return m;
}

TEST(Peephole, BatchNormFoldsIntoTheConvBeforeItInEvalMode) {
  ir::Model m = conv_batch_norm();
  std::map<std::string, at::Tensor> before;
  for (const auto& init : m.graph.initializers) before[init.name] = init.tensor.clone();
  optimize_model(m, {});
  ASSERT_EQ(op_types(m.graph), Ops{"Conv"}) << describe(m.graph);
  const ir::Node& conv = m.graph.nodes[0];
  EXPECT_EQ(conv.outputs, Names{"y"});
  ASSERT_EQ(conv.inputs.size(), 3u);
  const at::Tensor* w = initializer(m.graph, conv.inputs[1]);
  const at::Tensor* b = initializer(m.graph, conv.inputs[2]);
  ASSERT_TRUE(w != nullptr && b != nullptr) << describe(m.graph);
  const at::Tensor s = before["gamma"] / at::sqrt(before["var"] + 1e-5);
  EXPECT_TRUE(at::allclose(*w, before["w"] * s.reshape({-1, 1, 1, 1}), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(*b, (before["cb"] - before["mean"]) * s + before["beta"], 1e-5, 1e-6));
}

TEST(Peephole, BatchNormStaysInTraining) {
  ir::Model m = conv_batch_norm();
  OptimizeOptions options;
  options.eval_mode = false;
  optimize_model(m, options);
  EXPECT_EQ(op_types(m.graph), (Ops{"Conv", "BatchNormalization"})) << describe(m.graph);
}

TEST(Peephole, DropoutGoesInEvalModeUnlessItsMaskIsRead) {
  ir::Model m = chain({node("Dropout", {"x"}, {"d"})}, "d");
  optimize_model(m, {});
  EXPECT_EQ(op_types(m.graph), Ops{"Relu"}) << describe(m.graph);

  ir::Model mask =
      chain({node("Dropout", {"x"}, {"d", "mask"}), node("Not", {"mask"}, {"n"})}, "d");
  mask.graph.outputs.push_back(value("n", at::kBool, {2, 3}));
  optimize_model(mask, {});
  EXPECT_EQ(op_types(mask.graph), (Ops{"Dropout", "Not", "Relu"})) << describe(mask.graph);
}

}  // namespace
}  // namespace torchonnx::testing
