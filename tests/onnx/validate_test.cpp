// validate_model (Note [Untyped outputs]): an output whose element type or rank type propagation
// did not find fails the export with a message naming it, before onnx's checker ("Field
// 'elem_type' of 'type' is required", which read as a torchonnx bug).
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/serialize.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

TEST(Validate, AnOutputWithoutElementTypeIsAClearError) {
  ir::Model m = model({value("x", at::kFloat, {3})}, {{"y", ir::TypeInfo()}});
  m.graph.nodes = {node("Relu", {"x"}, {"y"})};
  ExportedModel exported = to_exported_model(m);
  EXPECT_TRUE(ThrowsExportError([&] { validate_model(exported); }, ErrorCode::kConversion,
                                {"element type or rank of 'y'", "Remedy"}));
}

TEST(Validate, AGraphOutputOfUnknownRankIsAClearError) {
  ir::Model m = model({value("x", at::kFloat, {3})}, {{"y", ir::TypeInfo(at::kFloat)}});
  m.graph.nodes = {node("Relu", {"x"}, {"y"})};
  ExportedModel exported = to_exported_model(m);
  EXPECT_TRUE(ThrowsExportError([&] { validate_model(exported); }, ErrorCode::kConversion,
                                {"element type or rank of 'y'"}));
}

TEST(Validate, AnIfOutputOfUnknownRankPasses) {
  // Branches of different ranks: the If's output has an element type and no rank.
  auto branch = [](const std::string& name, ir::Ints shape) {
    auto g = std::make_shared<ir::Graph>();
    g->name = name;
    g->nodes = {node("Constant", {}, {name + "_out"})};
    g->nodes[0].attributes.push_back({"value", at::zeros(shape)});
    g->outputs = {value(name + "_out", at::kFloat, shape)};
    return g;
  };
  ir::Model m = model({value("c", at::kBool, {})}, {{"y", ir::TypeInfo(at::kFloat)}});
  m.graph.nodes = {node("If", {"c"}, {"y"})};
  m.graph.nodes[0].attributes.push_back({"then_branch", branch("then", {2})});
  m.graph.nodes[0].attributes.push_back({"else_branch", branch("else", {2, 3})});
  ExportedModel exported = to_exported_model(m);
  EXPECT_NO_THROW(validate_model(exported));
}

TEST(Validate, TypedOutputsPass) {
  ir::Model m = model({value("x", at::kFloat, {3})}, {value("y", at::kFloat, {3})});
  m.graph.nodes = {node("Relu", {"x"}, {"y"})};
  ExportedModel exported = to_exported_model(m);
  EXPECT_NO_THROW(validate_model(exported));
}

}  // namespace
}  // namespace torchonnx::testing
