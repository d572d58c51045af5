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

TEST(Validate, TypedOutputsPass) {
  ir::Model m = model({value("x", at::kFloat, {3})}, {value("y", at::kFloat, {3})});
  m.graph.nodes = {node("Relu", {"x"}, {"y"})};
  ExportedModel exported = to_exported_model(m);
  EXPECT_NO_THROW(validate_model(exported));
}

}  // namespace
}  // namespace torchonnx::testing
