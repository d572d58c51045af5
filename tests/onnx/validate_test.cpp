// validate_model (Note [Untyped outputs]): an output whose element type type propagation did not
// find takes the one ONNX's shape inference finds; one that stays untyped fails the export with
// a message naming it, before onnx's checker ("Field 'elem_type' of 'type' is required").
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "onnx/serialize.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

TEST(Validate, AnUntypedOutputTakesTheInferredElementType) {
  ir::Model m = model({value("x", at::kFloat, {3})}, {{"y", ir::TypeInfo()}});
  m.graph.nodes = {node("Relu", {"x"}, {"r"}), node("Cast", {"r"}, {"y"}, {{"to", int64_t{7}}})};
  ExportedModel exported = to_exported_model(m);
  validate_model(exported);
  EXPECT_EQ(exported.proto.graph().output(0).type().tensor_type().elem_type(), 7);  // int64
}

TEST(Validate, AnOutputThatStaysUntypedIsAClearError) {
  // A custom-domain op: shape inference knows nothing of it.
  ir::Model m = model({value("x", at::kFloat, {3})}, {{"y", ir::TypeInfo()}});
  ir::Node custom = node("Mystery", {"x"}, {"y"});
  custom.domain = "custom_domain";
  m.graph.nodes = {custom};
  m.extra_opsets["custom_domain"] = 1;
  ExportedModel exported = to_exported_model(m);
  EXPECT_TRUE(ThrowsExportError([&] { validate_model(exported); }, ErrorCode::kConversion,
                                {"element type or rank of 'y'", "Remedy"}));
}

}  // namespace
}  // namespace torchonnx::testing
