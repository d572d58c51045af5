// passes::PropagateTypes (Note [Type propagation on meta tensors]): every value gets a complete
// type from the example inputs, through if and loop blocks; shape arithmetic on static dims
// becomes constants when folding, and stays in the graph for dims marked dynamic.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "passes/ir_test_util.h"
#include "passes/passes.h"

namespace torchonnx::testing {
namespace {

// x.reshape(x.size(0), -1)
const char* kReshapeBySize = R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %minus : int = prim::Constant[value=-1]()
  %n : int = aten::size(%x, %zero)
  %shape : int[] = prim::ListConstruct(%n, %minus)
  %y : Tensor = aten::reshape(%x, %shape)
  return (%y)
)IR";

TEST(PropagateTypes, StaticSizesAreFoldedIntoConstants) {
  auto g = parse_graph(kReshapeBySize);
  passes::PropagateTypes(*g, {at::randn({2, 3, 4})}, /*fold=*/true);
  expect_ir(*g, R"(
    # CHECK: graph(%x : Float(2, 3, 4
    # CHECK: %y : Float(2, 12
    # CHECK-SAME: aten::reshape(%x,
    # CHECK: return (%y)
  )");
  // The reshape's shape no longer depends on aten::size.
  torch::jit::Node* reshape = g->outputs()[0]->node();
  auto shape = torch::jit::toIValue(reshape->input(1));
  ASSERT_TRUE(shape.has_value()) << g->toString();
  EXPECT_EQ(shape->toIntVector(), (std::vector<int64_t>{2, -1}));
}

TEST(PropagateTypes, WithoutFoldingTheShapeArithmeticStays) {
  auto g = parse_graph(kReshapeBySize);
  passes::PropagateTypes(*g, {at::randn({2, 3, 4})}, /*fold=*/false);
  expect_ir(*g, R"(
    # CHECK: %n : int = aten::size(%x, %zero)
    # CHECK: %shape : int[] = prim::ListConstruct(%n, %minus)
    # CHECK: %y : Float(2, 12
    # CHECK-SAME: aten::reshape(%x, %shape)
  )");
}

TEST(PropagateTypes, DynamicDimsAreNeitherFoldedNorKnown) {
  auto g = parse_graph(kReshapeBySize);
  passes::PropagateTypes(*g, {at::randn({2, 3, 4})}, /*fold=*/true, {{0, {0}}});
  expect_ir(*g, R"(
    # CHECK: graph(%x : Float(*, 3, 4
    # CHECK: %n : int = aten::size(%x, %zero)
    # CHECK: %y : Float(*, 12
    # CHECK-SAME: aten::reshape(%x, %shape)
  )");
}

TEST(PropagateTypes, TypesFlowThroughIfBranches) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::neg(%x)
      -> (%b)
  return (%r)
)IR");
  passes::PropagateTypes(*g, {at::randn({2, 3}), c10::IValue(true)}, /*fold=*/true);
  expect_ir(*g, R"(
    # CHECK: %a : Float(2, 3
    # CHECK: %b : Float(2, 3
    # CHECK: return (%r)
  )");
  auto type = g->outputs()[0]->type()->cast<c10::TensorType>();
  ASSERT_TRUE(type) << g->toString();
  EXPECT_EQ(type->sizes().concrete_sizes(), (std::vector<int64_t>{2, 3}));
}

TEST(PropagateTypes, ALoopThatGrowsAValueMakesItsDimUnknown) {
  // acc = cat([acc, x]) n times: the carried value's dim 0 differs between iterations, so the
  // fixpoint over the body leaves it unknown (dim 1 is 3 in every iteration, but the fixpoint
  // widens a carried value's shape as a whole: only its rank and dtype stay known).
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %out : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %l : Tensor[] = prim::ListConstruct(%acc, %x)
      %c : Tensor = aten::cat(%l, %zero)
      -> (%true, %c)
  return (%out)
)IR");
  passes::PropagateTypes(*g, {at::randn({2, 3}), c10::IValue(int64_t{4})}, /*fold=*/true);
  auto type = g->outputs()[0]->type()->cast<c10::TensorType>();
  ASSERT_TRUE(type) << g->toString();
  ASSERT_EQ(type->sizes().size(), 2u) << g->toString();
  EXPECT_FALSE(type->sizes()[0].has_value()) << g->toString();
  // Every value in the body has the carried value's widened type too.
  expect_ir(*g, R"(
    # CHECK: block0(%i : int, %acc : Float(*, *
    # CHECK: %c : Float(*, *
    # CHECK-SAME: aten::cat(%l, %zero)
  )");
  EXPECT_EQ(type->scalarType(), at::kFloat);
}

}  // namespace
}  // namespace torchonnx::testing
