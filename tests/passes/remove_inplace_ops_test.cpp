// passes::RemoveInplaceOps (Note [Removing in-place ops]): every in-place write becomes its
// out-of-place twin plus type_as; writes through views are written back into their base; reads
// after the write (of the value, its base and its other views) take the new value, reads before
// it keep the old one, also across loop and if blocks; writes it cannot make exact are errors.
#include <gtest/gtest.h>

#include "passes/ir_test_util.h"
#include "passes/passes.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

TEST(RemoveInplaceOps, CopyIntoASelectOfACloneIsWrittenBackWithSelectScatter) {
  // The Note's example: `y = x.clone(); y[0] = v; return x, y` returns the unmodified x.
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %v : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %s : Tensor = aten::select(%y, %zero, %zero)
  %c : Tensor = aten::copy_(%s, %v, %false)
  return (%x, %y)
)IR");
  passes::RemoveInplaceOps(*g);
  expect_ir(*g, R"(
    # CHECK: %y : Tensor = aten::clone(%x, %none)
    # CHECK: %s : Tensor = aten::select(%y, %zero, %zero)
    # CHECK: aten::copy(%s, %v, %false)
    # CHECK: aten::type_as(
    # CHECK-SAME: , %s)
    # CHECK: aten::select_scatter(%y,
    # CHECK-SAME: , %zero, %zero)
    # CHECK: return (%x,
    # CHECK-NOT: aten::copy_
  )");
  EXPECT_EQ(producer_kind(g->outputs()[1]), "aten::select_scatter");
  EXPECT_EQ(producer_kind(g->outputs()[1]->node()->input(1)), "aten::type_as");
}

TEST(RemoveInplaceOps, ReadsBeforeTheWriteKeepTheOldValue) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %o : Tensor):
  %one : int = prim::Constant[value=1]()
  %before : Tensor = aten::mul(%x, %x)
  %w : Tensor = aten::add_(%x, %o, %one)
  %after : Tensor = aten::mul(%x, %x)
  %r : Tensor = aten::mul(%w, %o)
  return (%before, %after, %r)
)IR");
  passes::RemoveInplaceOps(*g);
  expect_ir(*g, R"(
    # CHECK: %before : Tensor = aten::mul(%x, %x)
    # CHECK-NEXT: aten::add(%x, %o, %one)
    # CHECK-NEXT: aten::type_as(
    # CHECK-SAME: , %x)
    # CHECK-NOT: aten::add_
  )");
  torch::jit::Node* after = g->outputs()[1]->node();
  torch::jit::Node* r = g->outputs()[2]->node();
  ASSERT_EQ(producer_kind(after->input(0)), "aten::type_as");
  EXPECT_EQ(after->input(0), after->input(1));
  // The op's own result is self after the write: its reader reads the new value too.
  EXPECT_EQ(r->input(0), after->input(0));
  EXPECT_EQ(g->outputs()[0]->node()->input(0), g->inputs()[0]);
}

TEST(RemoveInplaceOps, WriteThroughAViewUpdatesTheBaseAndReplaysTheView) {
  // y.view(-1).add_(1), then reads of y and of the view: the base gets the write reshaped back to
  // its size, and the view read later is made again from the new base.
  auto g = parse_graph(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %flat : int[] = prim::Constant[value=[-1]]()
  %y : Tensor = aten::clone(%x, %none)
  %v : Tensor = aten::view(%y, %flat)
  %w : Tensor = aten::add_(%v, %one, %one)
  %r : Tensor = aten::relu(%y)
  %s : Tensor = aten::sigmoid(%v)
  return (%r, %s)
)IR");
  passes::RemoveInplaceOps(*g);
  expect_ir(*g, R"(
    # CHECK: aten::view(%y, %flat)
    # CHECK: aten::add(
    # CHECK-SAME: , %one, %one)
    # CHECK: aten::type_as(
    # CHECK: aten::size(%y)
    # CHECK: aten::reshape(
    # CHECK: aten::view(
    # CHECK-SAME: , %flat)
    # CHECK-NOT: aten::relu(%y)
  )");
  // The replayed view takes the name %v (the clone of a node keeps its output's name).
  torch::jit::Value* new_base = g->outputs()[0]->node()->input(0);
  EXPECT_EQ(producer_kind(new_base), "aten::reshape");
  torch::jit::Node* replayed = g->outputs()[1]->node()->input(0)->node();
  EXPECT_EQ(replayed->kind().toQualString(), std::string("aten::view"));
  EXPECT_EQ(replayed->input(0), new_base);
}

TEST(RemoveInplaceOps, WriteInALoopBecomesALoopCarriedValue) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %n : int):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  prim::Loop(%n, %true)
    block0(%i : int):
      %w : Tensor = aten::mul_(%y, %y)
      -> (%true)
  return (%y)
)IR");
  passes::RemoveInplaceOps(*g);
  expect_ir(*g, R"(
    # CHECK: prim::Loop(%n, %true, %y)
    # CHECK: aten::mul(
    # CHECK-NOT: aten::mul(%y, %y)
    # CHECK: aten::type_as(
  )");
  torch::jit::Node* loop = g->outputs()[0]->node();
  ASSERT_EQ(loop->kind(), c10::prim::Loop);
  torch::jit::Block* body = loop->blocks()[0];
  ASSERT_EQ(body->inputs().size(), 2u);
  torch::jit::Node* mul = find_node(body, "aten::mul");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->input(0), body->inputs()[1]);  // the carried value, not %y
  EXPECT_EQ(producer_kind(body->outputs()[1]), "aten::type_as");
}

TEST(RemoveInplaceOps, WriteInOneBranchBecomesAnIfOutput) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %c : bool):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  prim::If(%c)
    block0():
      %w : Tensor = aten::add_(%y, %one, %one)
      -> ()
    block1():
      -> ()
  %r : Tensor = aten::relu(%y)
  return (%r)
)IR");
  passes::RemoveInplaceOps(*g);
  torch::jit::Node* relu = g->outputs()[0]->node();
  torch::jit::Node* if_node = relu->input(0)->node();
  ASSERT_EQ(if_node->kind(), c10::prim::If) << g->toString();
  ASSERT_EQ(if_node->outputs().size(), 1u);
  EXPECT_EQ(producer_kind(if_node->blocks()[0]->outputs()[0]), "aten::type_as");
  EXPECT_EQ(if_node->blocks()[1]->outputs()[0]->debugName(), "y");
  expect_ir(*g, R"(
    # CHECK: prim::If(%c)
    # CHECK: aten::add(%y, %one, %one)
    # CHECK: -> (%y)
  )");
}

TEST(RemoveInplaceOps, WriteThroughAnExpandWhoseBaseIsReadLaterIsAnError) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %sizes : int[] = prim::Constant[value=[2, 3]]()
  %y : Tensor = aten::clone(%x, %none)
  %e : Tensor = aten::expand(%y, %sizes, %false)
  %w : Tensor = aten::add_(%e, %one, %one)
  %r : Tensor = aten::relu(%y)
  return (%r)
)IR");
  EXPECT_TRUE(ThrowsExportError([&] { passes::RemoveInplaceOps(*g); }, ErrorCode::kConversion,
                                {"writes through a view made by aten::expand",
                                 "whose base is read later", "Remedy: clone() the view"}));
}

TEST(RemoveInplaceOps, ResizeInPlaceIsAnError) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %sizes : int[] = prim::Constant[value=[6]]()
  %y : Tensor = aten::clone(%x, %none)
  %w : Tensor = aten::resize_(%y, %sizes, %none)
  return (%w)
)IR");
  EXPECT_TRUE(ThrowsExportError([&] { passes::RemoveInplaceOps(*g); }, ErrorCode::kConversion,
                                {"aten::resize_", "changes the size or storage", "Remedy"}));
}

}  // namespace
}  // namespace torchonnx::testing
