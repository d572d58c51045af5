// frontend::capture_module and capture_trace on small modules and functions: the graph's inputs
// are the flattened user inputs then the named parameters, calls are inlined, arguments are
// checked against forward()'s schema, and defaults become constants.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include "frontend/frontend.h"
#include "passes/ir_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

torch::jit::Module two_layer_module() {
  torch::jit::Module inner("Inner");
  inner.register_parameter("weight", at::randn({3, 3}), false);
  inner.define("def forward(self, x):\n  return torch.matmul(x, self.weight)\n");
  torch::jit::Module m("Outer");
  m.register_module("layer", inner);
  m.register_parameter("bias", at::randn({3}), false);
  m.define(R"(
def forward(self, x, scale: float = 2.0):
    return self.layer.forward(x) * scale + self.bias
)");
  return m;
}

std::vector<std::string> names_of(const std::vector<NamedParameter>& params) {
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.name);
  return names;
}

TEST(CaptureModule, InlinesCallsLiftsParametersAndFoldsDefaults) {
  const auto m = two_layer_module();
  const auto captured = frontend::capture_module(m, {at::randn({2, 3})});
  const auto& g = *captured.graph;
  EXPECT_EQ(names_of(captured.parameters), (std::vector<std::string>{"layer.weight", "bias"}));
  ASSERT_EQ(captured.example_inputs.size(), 1u);
  // x, then the two parameters; `scale` (left to its default) is a constant.
  ASSERT_EQ(g.inputs().size(), 3u) << g.toString();
  EXPECT_EQ(count_kind(g, "prim::CallMethod"), 0) << g.toString();
  EXPECT_EQ(count_kind(g, "prim::GetAttr"), 0) << g.toString();
  expect_ir(g, R"(
    # CHECK: prim::Constant[value=2.]()
    # CHECK: aten::matmul(
    # CHECK: aten::mul(
    # CHECK: aten::add(
  )");
}

TEST(CaptureModule, A0dTensorStandsForAScalarArgument) {
  const auto captured =
      frontend::capture_module(two_layer_module(), {at::randn({2, 3}), at::scalar_tensor(3.0)});
  ASSERT_EQ(captured.example_inputs.size(), 2u);
  EXPECT_TRUE(captured.example_inputs[1].isDouble());
  EXPECT_EQ(captured.graph->inputs().size(), 4u);
}

TEST(CaptureModule, WrongArgumentsAreErrors) {
  const auto m = two_layer_module();
  EXPECT_TRUE(ThrowsExportError(
      [&] { frontend::capture_module(m, {}); }, ErrorCode::kInvalidArgument,
      {"forward(x: Tensor, scale: float) takes at least 1 argument but 0 example inputs were given",
       "Remedy"}));
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        frontend::capture_module(m, {at::randn({2, 3}), c10::IValue("two")});
      },
      ErrorCode::kInvalidArgument, {"example input 1 is a str", "'scale' is a float"}));
}

TEST(CaptureModule, TupleArgumentsBecomeOneInputPerElement) {
  torch::jit::Module m("Pair");
  m.define(R"(
def forward(self, xs: Tuple[Tensor, Tensor]):
    return xs[0] - xs[1]
)");
  const auto captured =
      frontend::capture_module(m, {c10::ivalue::Tuple::create({at::randn({2}), at::randn({2})})});
  EXPECT_EQ(captured.example_inputs.size(), 2u);
  ASSERT_EQ(captured.graph->inputs().size(), 2u) << captured.graph->toString();
  // The tuple is rebuilt in the graph from the inputs, in order ("xs.1.0", "xs.1.1").
  torch::jit::Node* tuple = find_node(captured.graph->block(), "prim::TupleConstruct");
  ASSERT_NE(tuple, nullptr) << captured.graph->toString();
  EXPECT_EQ(tuple->inputs().vec(), captured.graph->inputs().vec());
  EXPECT_EQ(captured.graph->inputs()[1]->debugName().substr(0, 2), "xs");
}

TEST(CaptureTrace, ParametersTheFunctionReadsBecomeNamedInputs) {
  const at::Tensor w = at::randn({3, 3});
  const NamedTensors params = {{"w", w}};
  const TracedFunction fn = [&](const std::vector<c10::IValue>& in) -> c10::IValue {
    return at::relu(at::matmul(in[0].toTensor(), w));
  };
  const auto captured = frontend::capture_trace(fn, {at::randn({2, 3})}, params);
  EXPECT_EQ(names_of(captured.parameters), std::vector<std::string>{"w"});
  ASSERT_EQ(captured.graph->inputs().size(), 2u) << captured.graph->toString();
  EXPECT_EQ(captured.graph->inputs()[0]->debugName(), "input_0");
  torch::jit::Value* w_input = captured.graph->inputs()[1];
  torch::jit::Node* matmul = find_node(captured.graph->block(), "aten::matmul");
  ASSERT_NE(matmul, nullptr) << captured.graph->toString();
  EXPECT_EQ(matmul->input(1), w_input);
}

TEST(CaptureTrace, AFailingFunctionIsAModelRunError) {
  const TracedFunction fn = [](const std::vector<c10::IValue>& in) -> c10::IValue {
    return in[0].toTensor().view({5, 7});
  };
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        frontend::capture_trace(fn, {at::randn({2, 3})}, {});
      },
      ErrorCode::kModelRun, {"tracing the model failed", "Remedy"}));
}

}  // namespace
}  // namespace torchonnx::testing
