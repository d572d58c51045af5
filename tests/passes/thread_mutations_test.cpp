// passes::FunctionalizeLists and passes::ReplaceUsesAfter (Note [Mutation in control flow]): a
// new value replaces the old one for the reads after the write only, leaving loop bodies as a
// carried value and if branches as an output.
#include <gtest/gtest.h>

#include "passes/ir_test_util.h"
#include "passes/passes.h"

namespace torchonnx::testing {
namespace {

TEST(FunctionalizeLists, AppendMakesANewListForLaterReads) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %y : Tensor):
  %l : Tensor[] = prim::ListConstruct(%x)
  %n0 : int = aten::len(%l)
  %a : Tensor[] = aten::append(%l, %y)
  %n1 : int = aten::len(%l)
  return (%n0, %n1)
)IR");
  passes::FunctionalizeLists(*g);
  expect_ir(*g, R"(
    # CHECK: %n0 : int = aten::len(%l)
    # CHECK-NEXT: aten::append(%l, %y)
    # CHECK-NEXT: aten::list(%l)
    # CHECK-NEXT: %n1 : int = aten::len(
  )");
  EXPECT_EQ(producer_kind(g->outputs()[1]->node()->input(0)), "aten::list");
}

TEST(FunctionalizeLists, AppendInALoopBecomesALoopCarriedList) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct()
  prim::Loop(%n, %true)
    block0(%i : int):
      %a : Tensor[] = aten::append(%l, %x)
      -> (%true)
  %len : int = aten::len(%l)
  return (%len)
)IR");
  passes::FunctionalizeLists(*g);
  expect_ir(*g, R"(
    # CHECK: prim::Loop(%n, %true, %l)
    # CHECK: aten::append(
    # CHECK-NOT: aten::append(%l,
    # CHECK: aten::list(
  )");
  torch::jit::Node* loop = g->outputs()[0]->node()->input(0)->node();
  ASSERT_EQ(loop->kind(), c10::prim::Loop) << g->toString();
  torch::jit::Block* body = loop->blocks()[0];
  EXPECT_EQ(find_node(body, "aten::append")->input(0), body->inputs()[1]);
  EXPECT_EQ(producer_kind(body->outputs()[1]), "aten::list");
}

TEST(ReplaceUsesAfter, StraightLineKeepsEarlierReads) {
  auto p = parse_ir(R"IR(
graph(%x : Tensor):
  %before : Tensor = aten::relu(%x)
  %new : Tensor = aten::neg(%x)
  %after : Tensor = aten::tanh(%x)
  return (%before, %after, %x)
)IR");
  passes::ReplaceUsesAfter(*p.graph, p["x"], p["new"], p["new"]->node());
  expect_ir(*p.graph, R"(
    # CHECK: %before : Tensor = aten::relu(%x)
    # CHECK: %new : Tensor = aten::neg(%x)
    # CHECK: %after : Tensor = aten::tanh(%new)
    # CHECK: return (%before, %after, %new)
  )");
}

TEST(ReplaceUsesAfter, WriteInABranchLeavesItAsAnIfOutput) {
  auto p = parse_ir(R"IR(
graph(%x : Tensor, %c : bool):
  %before : Tensor = aten::relu(%x)
  prim::If(%c)
    block0():
      %early : Tensor = aten::exp(%x)
      %new : Tensor = aten::neg(%x)
      %inside : Tensor = aten::sigmoid(%x)
      -> ()
    block1():
      -> ()
  %after : Tensor = aten::tanh(%x)
  return (%before, %after)
)IR");
  passes::ReplaceUsesAfter(*p.graph, p["x"], p["new"], p["new"]->node());
  expect_ir(*p.graph, R"(
    # CHECK: %before : Tensor = aten::relu(%x)
    # CHECK: prim::If(%c)
    # CHECK: aten::exp(%x)
    # CHECK: %new : Tensor = aten::neg(%x)
    # CHECK: aten::sigmoid(%new)
    # CHECK: -> (%new)
    # CHECK: -> (%x)
    # CHECK: aten::tanh(
    # CHECK-NOT: aten::tanh(%x)
  )");
  torch::jit::Node* tanh = p.graph->outputs()[1]->node();
  EXPECT_EQ(producer_kind(tanh->input(0)), "prim::If");
}

TEST(ReplaceUsesAfter, WriteInALoopBodyIsCarriedAlsoToReadsBeforeIt) {
  // The Note's example: the read before the write in the body reads the carried value (the
  // previous iteration's write), the read after the loop the loop's output.
  auto p = parse_ir(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%n, %true)
    block0(%i : int):
      %y : Tensor = aten::relu(%x)
      %new : Tensor = aten::mul(%y, %y)
      -> (%true)
  return (%x)
)IR");
  passes::ReplaceUsesAfter(*p.graph, p["x"], p["new"], p["new"]->node());
  expect_ir(*p.graph, R"(
    # CHECK: prim::Loop(%n, %true, %x)
    # CHECK-NOT: aten::relu(%x)
    # CHECK: -> (%true, %new)
  )");
  torch::jit::Node* loop = p.graph->outputs()[0]->node();
  ASSERT_EQ(loop->kind(), c10::prim::Loop) << p.graph->toString();
  EXPECT_EQ(p["y"]->node()->input(0), loop->blocks()[0]->inputs()[1]);
}

}  // namespace
}  // namespace torchonnx::testing
