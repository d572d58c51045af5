// passes::LiftModuleAttributes on the forward() graph of small scripted modules: GetAttr chains
// from `self` become graph inputs named by their state_dict path (one per distinct tensor, also
// in nested blocks), other attributes constants; any other use of `self` is an ExportError.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/module.h>

#include "passes/ir_test_util.h"
#include "passes/passes.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

std::vector<std::string> names_of(const std::vector<NamedParameter>& params) {
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.name);
  return names;
}

// forward()'s graph, copied: the pass must not change the module's own.
std::shared_ptr<torch::jit::Graph> forward_graph(const torch::jit::Module& m) {
  return m.get_method("forward").graph()->copy();
}

TEST(LiftModuleAttributes, NestedSubmodulesTiedWeightsAndConstants) {
  torch::jit::Module inner("Inner");
  const at::Tensor weight = at::randn({3});
  inner.register_parameter("weight", weight, false);
  inner.register_attribute("scale", c10::IntType::get(), int64_t{4});
  torch::jit::Module m("Outer");
  m.register_module("features", inner);
  m.register_parameter("bias", at::randn({3}), false);
  m.register_buffer("tied", weight);  // the same tensor as features.weight
  m.define(R"(
def forward(self, x, flag: bool):
    y = x * self.features.weight + self.bias
    if flag:
        y = y + self.tied * self.features.scale
    return y
)");
  auto g = forward_graph(m);
  const auto params = passes::LiftModuleAttributes(*g, m);
  EXPECT_EQ(names_of(params), (std::vector<std::string>{"features.weight", "bias"}));
  ASSERT_EQ(params.size(), 2u);
  EXPECT_TRUE(params[0].tensor.is_same(weight));
  // Inputs: x, flag, then the lifted tensors; `self` is gone, and so is every GetAttr.
  ASSERT_EQ(g->inputs().size(), 4u);
  // Lifted inputs are numbered; scripted values have their ".1" names.
  auto name = [&](size_t i) { return "%" + g->inputs()[i]->debugName(); };
  expect_ir(*g, fmt::format(R"(
    # CHECK-NOT: prim::GetAttr
    # CHECK: aten::mul({x}, {w})
    # CHECK: aten::add(
    # CHECK-SAME: , {b},
    # CHECK: prim::If({flag})
    # CHECK: prim::Constant[value=4]()
    # CHECK: aten::mul({w}, %
  )",
                            fmt::arg("x", name(0)), fmt::arg("flag", name(1)),
                            fmt::arg("w", name(2)), fmt::arg("b", name(3))));
  EXPECT_EQ(count_kind(*g, "prim::GetAttr"), 0);
}

// Note [Module state written in forward]: an attribute written in a loop is carried by the Loop
// (its value at entry, the lifted parameter, is the Loop's input; the read in the body before the
// write reads the carried value), one written in a branch is an If output, and the reads after
// the loop and the If read their outputs.
TEST(LiftModuleAttributes, AttributesWrittenInLoopsAndBranchesAreCarried) {
  torch::jit::Module inner("Inner");
  inner.register_parameter("weight", at::randn({3}), false);
  torch::jit::Module m("WritesInControlFlow");
  m.register_module("conv", inner);
  m.register_attribute("count", c10::IntType::get(), int64_t{0});
  m.define(R"(
def forward(self, x, n: int, flag: bool):
    for i in range(n):
        self.conv.weight = self.conv.weight * x
    if flag:
        self.count = 1
    return self.conv.weight + self.count
)");
  auto g = forward_graph(m);
  const auto params = passes::LiftModuleAttributes(*g, m);
  EXPECT_EQ(names_of(params), (std::vector<std::string>{"conv.weight"}));
  ASSERT_EQ(g->inputs().size(), 4u);
  torch::jit::Value* x = g->inputs()[0];
  torch::jit::Value* weight = g->inputs()[3];
  expect_ir(*g, R"(
    # CHECK-NOT: prim::GetAttr
    # CHECK: prim::Loop
    # CHECK: aten::mul
    # CHECK: prim::If
    # CHECK: aten::add
  )");
  torch::jit::Node* loop = find_node(g->block(), "prim::Loop");
  ASSERT_EQ(loop->inputs().size(), 3u) << g->toString();
  EXPECT_EQ(loop->input(2), weight);
  torch::jit::Block* body = loop->blocks()[0];
  torch::jit::Node* mul = find_node(body, "aten::mul");
  EXPECT_EQ(mul->input(0), body->inputs()[1]);
  EXPECT_EQ(mul->input(1), x);
  EXPECT_EQ(body->outputs()[1], mul->output());
  torch::jit::Node* branch = find_node(g->block(), "prim::If");
  ASSERT_EQ(branch->outputs().size(), 1u) << g->toString();
  torch::jit::Node* add = find_node(g->block(), "aten::add");
  EXPECT_EQ(add->input(0), loop->output(0));
  EXPECT_EQ(add->input(1), branch->output(0));
  EXPECT_EQ(count_kind(*g, "prim::SetAttr"), 0);
  EXPECT_EQ(count_kind(*g, "prim::Load") + count_kind(*g, "prim::Store"), 0);
}

TEST(LiftModuleAttributes, OtherUsesOfSelfAreAnError) {
  torch::jit::Module m("CallsMethod");
  m.register_parameter("w", at::ones({2}), false);
  m.define(R"(
def helper(self, x):
    return x * self.w

def forward(self, x):
    return self.helper(x)
)");
  auto g = forward_graph(m);  // not inlined: prim::CallMethod(%self, %x)
  EXPECT_TRUE(ThrowsExportError([&] { passes::LiftModuleAttributes(*g, m); },
                                ErrorCode::kConversion,
                                {"uses `self` through prim::CallMethod", "Remedy"}));
}

}  // namespace
}  // namespace torchonnx::testing
