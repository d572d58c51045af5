// passes::RemoveEvalNoOps: dropouts with a constant train=False, detach/contiguous/clone/alias...
// and the messages only raised are dropped; everything else stays.
#include <gtest/gtest.h>

#include "passes/ir_test_util.h"
#include "passes/passes.h"

namespace torchonnx::testing {
namespace {

TEST(RemoveEvalNoOps, DropsEvalDropoutKeepsTrainingAndComputedModes) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %train : bool):
  %p : float = prim::Constant[value=0.5]()
  %off : bool = prim::Constant[value=0]()
  %on : bool = prim::Constant[value=1]()
  %a : Tensor = aten::dropout(%x, %p, %off)
  %b : Tensor = aten::feature_dropout(%a, %p, %off)
  %c : Tensor = aten::dropout(%b, %p, %on)
  %d : Tensor = aten::alpha_dropout(%c, %p, %train)
  return (%d)
)IR");
  passes::RemoveEvalNoOps(*g);
  expect_ir(*g, R"(
    # CHECK-NOT: aten::feature_dropout
    # CHECK: %c : Tensor = aten::dropout(%x, %p, %on)
    # CHECK: %d : Tensor = aten::alpha_dropout(%c, %p, %train)
    # CHECK: return (%d)
  )");
  EXPECT_EQ(count_kind(*g, "aten::dropout"), 1);
}

TEST(RemoveEvalNoOps, DropsIdentitiesInNestedBlocks) {
  // The identities inside both branches of an If and inside a Loop body go; their readers read
  // their inputs, also across the block boundary (the If's outputs).
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %cond : bool, %n : int):
  %none : NoneType = prim::Constant()
  %fmt : int = prim::Constant[value=0]()
  %d : Tensor = aten::detach(%x)
  %r : Tensor = prim::If(%cond)
    block0():
      %c : Tensor = aten::clone(%d, %none)
      -> (%c)
    block1():
      %k : Tensor = aten::contiguous(%d, %fmt)
      %e : Tensor = aten::relu(%k)
      -> (%e)
  %on : bool = prim::Constant[value=1]()
  %out : Tensor = prim::Loop(%n, %on, %r)
    block0(%i : int, %acc : Tensor):
      %al : Tensor = aten::alias(%acc)
      %s : Tensor = aten::sigmoid(%al)
      -> (%on, %s)
  return (%out)
)IR");
  passes::RemoveEvalNoOps(*g);
  expect_ir(*g, R"(
    # CHECK-NOT: aten::detach
    # CHECK: prim::If(%cond)
    # CHECK-NOT: aten::clone
    # CHECK: -> (%x)
    # CHECK-NOT: aten::contiguous
    # CHECK: aten::relu(%x)
    # CHECK: prim::Loop
    # CHECK-NOT: aten::alias
    # CHECK: aten::sigmoid(%acc)
  )");
}

TEST(RemoveEvalNoOps, KeepsViewsOfARemovedClone) {
  // The clone goes; the view of it, read later, is not an identity and stays (reading %x), and
  // the clone's other reader, a graph output, reads %x too.
  auto g = parse_graph(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %shape : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::clone(%x, %none)
  %v : Tensor = aten::view(%c, %shape)
  %r : Tensor = aten::relu(%v)
  return (%r, %c)
)IR");
  passes::RemoveEvalNoOps(*g);
  expect_ir(*g, R"(
    # CHECK: %v : Tensor = aten::view(%x, %shape)
    # CHECK: %r : Tensor = aten::relu(%v)
    # CHECK: return (%r, %x)
  )");
}

TEST(RemoveEvalNoOps, RaiseAndItsMessageAreDropped) {
  // `raise ValueError("bad size {}".format(n))`: ONNX cannot raise (the converter of the raise
  // makes nothing), so the raise is dropped, and with it the formatted message (an aten::format
  // of a run-time value); the If left without work is dead code. A format whose result is also
  // returned stays.
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %n : int, %cond : bool):
  %f : str = prim::Constant[value="bad size {}"]()
  %exc : str = prim::Constant[value="builtins.ValueError"]()
  %kept : str = aten::format(%f, %n)
  prim::If(%cond)
    block0():
      %msg : str = aten::format(%f, %n)
      prim::RaiseException(%msg, %exc)
      -> ()
    block1():
      -> ()
  return (%x, %kept)
)IR");
  passes::RemoveEvalNoOps(*g);
  expect_ir(*g, R"(
    # CHECK: %kept : str = aten::format(%f, %n)
    # CHECK: prim::If(%cond)
    # CHECK-NOT: aten::format
    # CHECK-NOT: prim::RaiseException
  )");
  EXPECT_EQ(count_kind(*g, "aten::format"), 1);
  EXPECT_EQ(count_kind(*g, "prim::RaiseException"), 0);
}

TEST(RemoveEvalNoOps, WarningsAreDropped) {
  // warnings.warn in scripted code (F.upsample_bilinear's deprecation): no ONNX form, dropped.
  auto g = parse_graph(R"IR(
graph(%x : Tensor):
  %msg : str = prim::Constant[value="deprecated"]()
  %level : int = prim::Constant[value=2]()
  aten::warn(%msg, %level)
  %y : Tensor = aten::relu(%x)
  return (%y)
)IR");
  passes::RemoveEvalNoOps(*g);
  EXPECT_EQ(count_kind(*g, "aten::warn"), 0);
  EXPECT_EQ(count_kind(*g, "aten::relu"), 1);
}

}  // namespace
}  // namespace torchonnx::testing
