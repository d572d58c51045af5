// passes::PrepareGraph: the order of the passes in src/passes/pipeline.cpp matters; each test
// here fails when two passes are swapped or one is left out.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "passes/ir_test_util.h"
#include "passes/pipeline.h"

namespace torchonnx::testing {
namespace {

TEST(PrepareGraph, InplaceOpsAreRemovedBeforeTheCloneThatTellsACopyFromAnAlias) {
  // y = x.clone(); y[0] = v; return x, y: RemoveInplaceOps runs before RemoveEvalNoOps drops the
  // clone, so output 0 stays the unmodified input (the other order writes into x).
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %v : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %s : Tensor = aten::select(%y, %zero, %zero)
  %c : Tensor = aten::copy_(%s, %v, %false)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  return (%t)
)IR");
  passes::PrepareGraph(g, {at::randn({2, 3}), at::randn({3})}, ExportConfig{});
  ASSERT_EQ(g->outputs().size(), 2u) << g->toString();
  EXPECT_EQ(g->outputs()[0], g->inputs()[0]) << g->toString();
  EXPECT_EQ(producer_kind(g->outputs()[1]), "aten::select_scatter");
  // The tuple is flattened and gone, the clone dropped, every value typed.
  expect_ir(*g, R"(
    # CHECK-NOT: prim::TupleConstruct
    # CHECK-NOT: aten::clone
    # CHECK: aten::select(%x, %zero, %zero)
    # CHECK: Float(2, 3
    # CHECK-SAME: aten::select_scatter(%x,
    # CHECK: return (%x,
  )");
}

TEST(PrepareGraph, FoldedShapeArithmeticLeavesNoDeadNodes) {
  // PropagateTypes folds x.size(0); the dead code removal after it drops the size and the list.
  auto g = parse_graph(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %minus : int = prim::Constant[value=-1]()
  %n : int = aten::size(%x, %zero)
  %shape : int[] = prim::ListConstruct(%n, %minus)
  %y : Tensor = aten::reshape(%x, %shape)
  %d : Tensor = aten::detach(%y)
  return (%d)
)IR");
  passes::PrepareGraph(g, {at::randn({2, 3, 4})}, ExportConfig{});
  expect_ir(*g, R"(
    # CHECK-NOT: aten::size
    # CHECK-NOT: prim::ListConstruct
    # CHECK: %y : Float(2, 12
    # CHECK-SAME: aten::reshape(%x,
    # CHECK-NOT: aten::detach
    # CHECK: return (%y)
  )");
}

TEST(LintGraph, AFailureNamesTheStage) {
  // A node reading a value defined after it, as a pass that inserts at the wrong place leaves it.
  auto p = parse_ir(R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::neg(%a)
  return (%b)
)IR");
  EXPECT_NO_THROW(passes::LintGraph(*p.graph, "pass RemoveEvalNoOps"));
  p["a"]->node()->moveAfter(p["b"]->node());
  try {
    passes::LintGraph(*p.graph, "pass RemoveEvalNoOps");
    ADD_FAILURE() << "lint() passed a use before its definition:\n" << p.graph->toString();
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("fails Graph::lint() after pass RemoveEvalNoOps"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace torchonnx::testing
