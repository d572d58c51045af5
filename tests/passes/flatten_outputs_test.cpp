// passes::FlattenOutputs: tuples, lists and dicts built in the graph become their elements in
// order; str and None outputs go; a graph left without outputs, or a dict that is not built in
// the graph, is an ExportError.
#include <gtest/gtest.h>

#include "passes/ir_test_util.h"
#include "passes/passes.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

TEST(FlattenOutputs, NestedTuplesListsAndDictValuesInOrder) {
  auto g = parse_graph(R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):
  %ka : str = prim::Constant[value="first"]()
  %kb : str = prim::Constant[value="second"]()
  %l : Tensor[] = prim::ListConstruct(%b, %c)
  %dict : Dict(str, Tensor) = prim::DictConstruct(%ka, %d, %kb, %a)
  %inner : (Tensor, Tensor[]) = prim::TupleConstruct(%a, %l)
  %t : ((Tensor, Tensor[]), Dict(str, Tensor)) = prim::TupleConstruct(%inner, %dict)
  return (%t)
)IR");
  passes::FlattenOutputs(*g);
  // The tuple/list/dict nodes stay (dead code removal drops them later); only outputs change.
  expect_ir(*g, "# CHECK: return (%a, %b, %c, %d, %a)");
}

TEST(FlattenOutputs, DropsStrAndNoneOutputs) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %s : str):
  %none : NoneType = prim::Constant()
  %n : int = prim::Constant[value=3]()
  %t : (Tensor, str, NoneType, int) = prim::TupleConstruct(%x, %s, %none, %n)
  return (%t, %s)
)IR");
  passes::FlattenOutputs(*g);
  expect_ir(*g, "# CHECK: return (%x, %n)");
}

TEST(FlattenOutputs, AGraphWithoutTensorOutputsIsAnError) {
  auto g = parse_graph(R"IR(
graph(%x : Tensor, %s : str):
  %none : NoneType = prim::Constant()
  %t : (str, NoneType) = prim::TupleConstruct(%s, %none)
  return (%t)
)IR");
  EXPECT_TRUE(ThrowsExportError([&] { passes::FlattenOutputs(*g); }, ErrorCode::kConversion,
                                {"returns no tensor", "Remedy"}));
}

TEST(FlattenOutputs, ADictNotBuiltInTheGraphIsAnError) {
  auto g = parse_graph(R"IR(
graph(%d : Dict(str, Tensor)):
  return (%d)
)IR");
  EXPECT_TRUE(ThrowsExportError([&] { passes::FlattenOutputs(*g); }, ErrorCode::kConversion,
                                {"returns a dict built by prim::Param", "Remedy"}));
}

}  // namespace
}  // namespace torchonnx::testing
