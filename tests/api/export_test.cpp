// The export API: names, options, outputs, and the harness's ability to see a mismatch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <torch/script.h>
#include <torch/version.h>

#include <filesystem>
#include <limits>
#include <set>

#include "onnx/tensor_proto.h"
#include "support/expect_error.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

using Inputs = std::vector<c10::IValue>;

struct TinyNet {
  at::Tensor w = at::randn({4, 3}), b = at::randn({4}), unused = at::randn({2});
  NamedTensors params() const { return {{"fc.weight", w}, {"fc.bias", b}, {"extra", unused}}; }
  TracedFunction fn() const {
    return [this](const Inputs& in) { return at::relu(at::linear(in[0].toTensor(), w, b)); };
  }
};

TEST(Export, ParametersBecomeNamedInitializers) {
  TinyNet net;
  auto proto = parse_model(export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params()));
  ASSERT_EQ(proto.graph().initializer_size(), 2) << "unused parameters are dropped";
  EXPECT_EQ(proto.graph().initializer(0).name(), "fc.weight");
  EXPECT_EQ(proto.graph().initializer(1).name(), "fc.bias");
  ASSERT_EQ(proto.graph().input_size(), 1);
  EXPECT_EQ(proto.opset_import(0).version(), kDefaultOpset);
  EXPECT_EQ(proto.graph().output(0).name(), "output_0");
}

// Note [Producer]: producer_name and producer_version are PyTorch's, as torch.onnx writes them
// (tools key on them); the metadata entry "exporter" names torchonnx, and the model has no
// doc_string (torch.onnx's has none without verbose).
TEST(Export, ProducerIsPyTorchAndTheMetadataNamesTorchonnx) {
  torch::jit::Module m("producer");
  m.define("def forward(self, x):\n  return x + 1\n");
  const auto proto = parse_model(export_model_to_bytes(m, {at::randn({2})}));
  EXPECT_EQ(proto.producer_name(), "pytorch");
  const std::string version = TORCH_VERSION;
  EXPECT_EQ(proto.producer_version(), version.substr(0, version.find('+')));
  EXPECT_EQ(proto.producer_version().rfind(std::to_string(TORCH_VERSION_MAJOR) + ".", 0), 0u);
  EXPECT_TRUE(proto.doc_string().empty()) << proto.doc_string();
  ASSERT_EQ(proto.metadata_props_size(), 1);
  EXPECT_EQ(proto.metadata_props(0).key(), "exporter");
  EXPECT_EQ(proto.metadata_props(0).value().rfind("torchonnx ", 0), 0u);
}

TEST(Export, InputNamesCoverInputsThenParameters) {
  TinyNet net;
  ExportOptions options;
  options.input_names = {"x", "learned_0"};
  options.output_names = {"y"};
  auto proto =
      parse_model(export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params(), options));
  EXPECT_EQ(proto.graph().input(0).name(), "x");
  EXPECT_EQ(proto.graph().initializer(0).name(), "learned_0");
  EXPECT_EQ(proto.graph().initializer(1).name(), "fc.bias");
  EXPECT_EQ(proto.graph().output(0).name(), "y");
}

TEST(Export, ExportParamsAndKeepInitializersAsInputs) {
  TinyNet net;
  ExportOptions options;
  options.export_params = false;
  auto proto =
      parse_model(export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params(), options));
  EXPECT_EQ(proto.graph().initializer_size(), 0);
  EXPECT_EQ(proto.graph().input_size(), 3);
  options.export_params = true;
  options.keep_initializers_as_inputs = true;
  proto =
      parse_model(export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params(), options));
  EXPECT_EQ(proto.graph().initializer_size(), 2);
  EXPECT_EQ(proto.graph().input_size(), 3);
}

TEST(Export, DuplicateNamesAreRejected) {
  TinyNet net;
  ExportOptions options;
  options.input_names = {"x"};
  options.output_names = {"x"};
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_function_to_bytes(net.fn(), {at::randn({2, 3})}, net.params(), options);
      },
      ErrorCode::kInvalidArgument,
      {"names must be unique", "'x' is used twice",
       "Remedy: choose other --input-names/--output-names"}));
}

TEST(Export, UnusedInputsStayUnlessDropUnusedInputs) {
  // forward(x, y) reads only x's static size: by default the graph keeps both inputs (one per
  // flattened argument); drop_unused_inputs removes x, as torch.onnx does, and strip_doc_string
  // leaves the nodes without their "aten::add, <source>" doc_string.
  torch::jit::Module m("shape_of_x");
  m.define("def forward(self, x, y):\n  return y + x.size(0)\n");
  const std::vector<c10::IValue> args = {at::randn({2}), at::randn({2})};
  ExportOptions options;
  options.input_names = {"a", "b"};
  auto kept = parse_model(export_model_to_bytes(m, args, options));
  ASSERT_EQ(kept.graph().input_size(), 2);
  EXPECT_FALSE(kept.graph().node(0).doc_string().empty());
  options.drop_unused_inputs = true;
  options.strip_doc_string = true;
  auto dropped = parse_model(export_model_to_bytes(m, args, options));
  ASSERT_EQ(dropped.graph().input_size(), 1);
  EXPECT_EQ(dropped.graph().input(0).name(), "b");
  for (const auto& node : dropped.graph().node()) EXPECT_TRUE(node.doc_string().empty());
  std::string dir = temp_dir("drop_unused");
  export_model(m, args, dir + "/model.onnx", options);
  write_test_data(dir, {args[1]}, {args[1].toTensor() + 2});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(Export, MadeUpNamesStepAsideForGivenOnes) {
  // Only output 0 is named, "output_1": the others get output_K names that differ from it.
  torch::jit::Module m("three");
  m.define("def forward(self, x):\n  return x + 1, x + 2, x + 3\n");
  ExportOptions options;
  options.output_names = {"output_1"};
  auto proto = parse_model(export_model_to_bytes(m, {at::randn({2})}, options));
  ASSERT_EQ(proto.graph().output_size(), 3);
  EXPECT_EQ(proto.graph().output(0).name(), "output_1");
  EXPECT_EQ(proto.graph().output(1).name(), "output_1_1");
  EXPECT_EQ(proto.graph().output(2).name(), "output_2");
}

TEST(Export, ConstantFoldingFoldsStaticShapeArithmetic) {
  // In C++, x.size(0) is a plain int the tracer cannot see; a scripted module records aten::size.
  torch::jit::Module m("flatten_view");
  m.define("def forward(self, x):\n  return x.view(x.size(0), -1)\n");
  auto count_shape_ops = [](const onnx::ModelProto& p) {
    int n = 0;
    for (const auto& node : p.graph().node()) n += node.op_type() == "Shape";
    return n;
  };
  ExportOptions folded, unfolded;
  unfolded.do_constant_folding = false;
  auto a = parse_model(export_model_to_bytes(m, {at::randn({2, 3, 4})}, folded));
  auto b = parse_model(export_model_to_bytes(m, {at::randn({2, 3, 4})}, unfolded));
  EXPECT_EQ(count_shape_ops(a), 0);
  EXPECT_EQ(count_shape_ops(b), 1) << "without folding, x.size(0) is computed in the graph";
  EXPECT_LT(a.graph().node_size(), b.graph().node_size());
  for (const ExportOptions& options : {folded, unfolded}) {
    std::string dir = temp_dir("fold");
    at::Tensor x = at::randn({2, 3, 4});
    export_model(m, {x}, dir + "/model.onnx", options);
    write_test_data(dir, {x}, {x.view({2, -1})});
    OrtResult r = run_in_ort(dir + "/model.onnx", dir);
    EXPECT_TRUE(r.ok) << r.report;
  }
}

TEST(Export, TupleAndListOutputsAreFlattened) {
  auto fn = [](const Inputs& in) -> c10::IValue {
    at::Tensor x = in[0].toTensor();
    return c10::ivalue::Tuple::create({x.relu(), c10::ivalue::Tuple::create({x.neg(), x.exp()})});
  };
  auto proto = parse_model(export_function_to_bytes(fn, {at::randn({3})}, {}));
  EXPECT_EQ(proto.graph().output_size(), 3);
  expect_matches_at_opsets(fn, {at::randn({3})}, 11, 11);
}

TEST(Export, ScriptedModuleWithSubmoduleParameters) {
  torch::jit::Module inner("inner");
  inner.register_parameter("weight", at::randn({5, 5}), false);
  inner.define("def forward(self, x):\n  return torch.matmul(x, self.weight)\n");
  torch::jit::Module outer("outer");
  outer.register_module("layer", inner);
  outer.register_buffer("scale", at::full({5}, 2.0));
  outer.define("def forward(self, x):\n  return self.layer.forward(x) * self.scale\n");
  auto proto = parse_model(export_model_to_bytes(outer, {at::randn({2, 5})}));
  std::vector<std::string> names;
  for (const auto& init : proto.graph().initializer()) names.push_back(init.name());
  EXPECT_EQ(names, (std::vector<std::string>{"layer.weight", "scale"}));
}

TEST(Export, OpsetsSevenAndEightGoThroughOnnxsVersionConverter) {
  // Converted at opset 9 and taken down by ONNX's version converter: Upsample's scales become an
  // attribute (9 -> 8), the integer MatMul gets opset 8's float casts, BatchNormalization and
  // Max lose their opset 9 forms (8 -> 7); Reshape's int64 shape, which opset 8's Constant cannot
  // hold, is an initializer.
  at::Tensor w = at::randn({4, 3, 3, 3}), b = at::randn({4}), mean = at::randn({4}),
             var = at::rand({4}) + 0.5, fc = at::randn({10, 64});
  NamedTensors params = {{"w", w}, {"b", b}, {"mean", mean}, {"var", var}, {"fc", fc}};
  auto fn = [&](const Inputs& in) -> c10::IValue {
    at::Tensor x = at::conv2d(in[0].toTensor(), w, b, 1, 1);
    x = at::batch_norm(x, {}, {}, mean, var, false, 0.1, 1e-5, false);
    x = at::max_pool2d(at::relu(x), {2, 2});
    x = at::upsample_nearest2d(x, {8, 8});
    at::Tensor logits = at::linear(x.reshape({2, -1}).narrow(1, 0, 64), fc);
    at::Tensor counts = at::matmul(in[1].toTensor(), in[1].toTensor());
    return c10::ivalue::Tuple::create({at::maximum(logits, in[2].toTensor()), counts});
  };
  const Inputs inputs = {at::randn({2, 3, 8, 8}), at::randint(0, 5, {3, 3}, at::kInt),
                         at::randn({2, 10})};
  for (int opset : {7, 8}) {
    ExportOptions options;
    options.opset_version = opset;
    auto proto = parse_model(export_function_to_bytes(fn, inputs, params, options));
    ASSERT_EQ(proto.opset_import(0).version(), opset);
    expect_export_matches(fn, inputs, opset, params);
  }
}

TEST(Export, IntegerConstantsOfLoopBodiesBelowOpsetNine) {
  // Opset 8's Constant holds float types only: an int64 constant of a Loop body (the counter
  // added to x) is an initializer of the main graph, which the body reads from the outer scope.
  torch::jit::Module m("loop");
  m.define("def forward(self, x):\n  for i in range(x.size(0)):\n    x = x + i\n  return x\n");
  const Inputs inputs = {at::randn({3, 2})};
  at::Tensor expected = m.forward(inputs).toTensor();
  expect_exports_match(
      [&](const std::string& path, const ExportOptions& o) { export_model(m, inputs, path, o); },
      inputs, {expected}, 7, 8, /*fold=*/true, {});
}

TEST(Export, OpsNewInOpsetNineTakeTheirExactFormsBelowIt) {
  // Note [Opset 9 ops below opset 9] (onnx/opset_down.cpp): IsNaN (isnan), Sign (trunc division),
  // Greater on integers, Where on integers and, at static shapes, on floats (broadcast, with an
  // infinity and a NaN in the branch not taken, and a -0 taken) compute exactly what libtorch
  // does at opsets 7 and 8.
  torch::jit::Module m("below9");
  m.define(R"(
def forward(self, x, y, i, j):
    return (torch.isnan(x), torch.div(x, y, rounding_mode='trunc'), torch.where(x > 0, y, x),
            torch.where(i > j, i, j * 2))
)");
  at::Tensor x = at::randn({3, 4});
  x.index_put_({0, 1}, std::numeric_limits<float>::quiet_NaN());
  x.index_put_({1, 2}, -0.0);
  x.index_put_({2, 3}, -std::numeric_limits<float>::infinity());
  x.index_put_({0, 0}, -1.0);
  at::Tensor y = at::randn({4}) * 3;
  y.index_put_({0}, std::numeric_limits<float>::infinity());  // not taken in row 0
  y.index_put_({2}, std::numeric_limits<float>::quiet_NaN());
  at::Tensor i = at::randint(-50, 50, {3, 4}, at::kInt), j = at::randint(-50, 50, {4}, at::kInt);
  const Inputs inputs = {x, y, i, j};
  std::vector<at::Tensor> expected;
  const c10::IValue outputs = m.forward(inputs);
  for (const auto& v : outputs.toTupleRef().elements()) expected.push_back(v.toTensor());
  ASSERT_TRUE(expected[2].isnan().any().item<bool>());  // the NaN of x, taken
  expect_exports_match(
      [&](const std::string& path, const ExportOptions& o) { export_model(m, inputs, path, o); },
      inputs, expected, 7, 8, /*fold=*/false, kExact);
}

TEST(Export, OpsWithoutAFormBelowOpsetNineAreRefusedByName) {
  // NonZero is new in opset 9; opset 8's ops have a form of it at static shapes only (Note
  // [Opset 9 ops below opset 9]), not at a dynamic one.
  torch::jit::Module m("nonzero");
  m.define("def forward(self, x):\n  return torch.nonzero(x)\n");
  ExportOptions options;
  options.opset_version = 8;
  options.input_names = {"x"};
  options.dynamic_axes = {{"x", {{0, "n"}}}};
  EXPECT_TRUE(ThrowsExportError([&] { export_model_to_bytes(m, {at::randn({3})}, options); },
                                ErrorCode::kUnsupportedOp,
                                {"cannot export at opset 8", "(NonZero, from aten::nonzero",
                                 "Remedy: export with "
                                 "opset_version >= 9"}));
}

TEST(Export, AnArangeOfAComputedLengthBelowOpsetNineIsALoop) {
  // Below opset 11 arange(n) is NonZero(ConstantOfShape(n, 1)); opsets 7 and 8 have neither, but
  // a Loop of n iterations scanning its iteration number is the same index vector (Note [Opset 9
  // ops below opset 9]). Lengths 5 and 0.
  torch::jit::Module m("arange");
  m.define("def forward(self, n):\n  return torch.arange(int(n)) * 3\n");
  for (int64_t n : {5, 0}) {
    SCOPED_TRACE(n);
    const Inputs inputs = {at::tensor(n)};
    expect_exports_match(
        [&](const std::string& path, const ExportOptions& o) { export_model(m, inputs, path, o); },
        inputs, {at::arange(n) * 3}, 7, 9, /*fold=*/true, kExact);
  }
  ExportOptions options;
  options.opset_version = 8;
  auto proto = parse_model(export_model_to_bytes(m, {at::tensor(int64_t{5})}, options));
  std::set<std::string> ops;
  for (const auto& node : proto.graph().node()) ops.insert(node.op_type());
  EXPECT_TRUE(ops.count("Loop"));
  EXPECT_FALSE(ops.count("ConstantOfShape"));
}

// reference_outputs runs forward() in the export's mode (what --save-test-data stores) and
// leaves the module's own mode as it was.
TEST(Export, ReferenceOutputsRunInTheExportsMode) {
  torch::jit::Module m("dropout");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.define("def forward(self, x):\n  return torch.dropout(x, 0.5, self.training), x * 2\n");
  const at::Tensor x = at::ones({64});
  auto eval = reference_outputs(m, {x});
  ASSERT_EQ(eval.size(), 2u);
  EXPECT_TRUE(eval[0].equal(x));
  EXPECT_TRUE(eval[1].equal(x * 2));
  EXPECT_TRUE(m.is_training());
  auto training = reference_outputs(m, {x}, TrainingMode::kTraining);
  EXPECT_FALSE(training[0].equal(x));  // some of 64 elements dropped (and the rest scaled)
  m.eval();
  EXPECT_TRUE(reference_outputs(m, {x}, TrainingMode::kPreserve)[0].equal(x));
  EXPECT_FALSE(m.is_training());
}

TEST(Export, DropUnusedInputsKeepsInputsReadForComputedResults) {
  // zeros_like(x) at static shapes is a constant (torch.onnx folds the node and drops x);
  // view_as(z) reads z's shape for a Reshape that stays computed (torch.onnx keeps z), also
  // when the optimizer folds that Shape.
  torch::jit::Module m("reads");
  m.define(
      "def forward(self, x, y, z):\n  return torch.zeros_like(x) + y.view_as(z) + x.size(0)\n");
  const Inputs args = {at::randn({2, 3}), at::randn({6}), at::randn({2, 3})};
  ExportOptions options;
  options.drop_unused_inputs = true;
  options.input_names = {"x", "y", "z"};
  auto proto = parse_model(export_model_to_bytes(m, args, options));
  std::vector<std::string> names;
  for (const auto& in : proto.graph().input()) names.push_back(in.name());
  EXPECT_EQ(names, (std::vector<std::string>{"y", "z"}));
  std::string dir = temp_dir("drop_unused_computed");
  export_model(m, args, dir + "/model.onnx", options);
  write_test_data(dir, {args[1], args[2]}, {args[1].toTensor().view({2, 3}) + 2});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(Export, DropUnusedInputsKeepsInputsReadForTheirValues) {
  // x.unbind() reads x's values, though only len() of the pieces is used and type propagation
  // folds it: torch.onnx keeps x. y.fill_(2) overwrites y, so the y returned after it is the
  // filled tensor and y was read for its shape only: torch.onnx drops y.
  torch::jit::Module m("values");
  m.define(
      "def forward(self, x, y):\n"
      "  pieces = x.unbind(0)\n"
      "  return torch.ones(len(pieces)), y.fill_(2.0), y\n");
  const Inputs args = {at::randn({3, 2}), at::randn({2})};
  ExportOptions options;
  options.drop_unused_inputs = true;
  options.input_names = {"x", "y"};
  auto proto = parse_model(export_model_to_bytes(m, args, options));
  ASSERT_EQ(proto.graph().input_size(), 1);
  EXPECT_EQ(proto.graph().input(0).name(), "x");
  std::string dir = temp_dir("drop_unused_values");
  export_model(m, args, dir + "/model.onnx", options);
  write_test_data(dir, {args[0]}, {at::ones({3}), at::full({2}, 2.0), at::full({2}, 2.0)});
  OrtResult r = run_in_ort(dir + "/model.onnx", dir);
  EXPECT_TRUE(r.ok) << r.report;

  // c's values reach only a size, b is an element of a list no one reads: both go, as in
  // torch.onnx (its shape inference folds (c + 2).size(1); its passes drop the unread element).
  torch::jit::Module m2("unread");
  m2.define(
      "def forward(self, a, b, c):\n"
      "  first, second = [a, b]\n"
      "  return first + (c + 2).size(1)\n");
  const Inputs args2 = {at::randn({2}), at::randn({2}), at::randn({2, 5})};
  options.input_names = {"a", "b", "c"};
  proto = parse_model(export_model_to_bytes(m2, args2, options));
  ASSERT_EQ(proto.graph().input_size(), 1);
  EXPECT_EQ(proto.graph().input(0).name(), "a");

  // An if on static sizes is decided at export: x's values reach the output only in the branch
  // not taken, so x goes (torch.onnx folds the if too). With x's first dim dynamic the if stays,
  // and so does x.
  torch::jit::Module m3("decided");
  m3.define(
      "def forward(self, x):\n"
      "  if x.size(0) > 1:\n"
      "    return x.new_zeros(x.shape[1:])\n"
      "  return x\n");
  const Inputs args3 = {at::randn({2, 3})};
  options.input_names = {"x"};
  proto = parse_model(export_model_to_bytes(m3, args3, options));
  EXPECT_EQ(proto.graph().input_size(), 0);
  options.dynamic_axes = {{"x", {{0, "n"}}}};
  proto = parse_model(export_model_to_bytes(m3, args3, options));
  ASSERT_EQ(proto.graph().input_size(), 1);
  EXPECT_EQ(proto.graph().input(0).name(), "x");
}

TEST(Harness, DetectsAMismatch) {
  std::string dir = temp_dir("mismatch");
  auto fn = [](const Inputs& in) { return at::relu(in[0].toTensor()); };
  at::Tensor x = at::randn({4});
  export_function(fn, {x}, {}, dir + "/model.onnx");
  write_test_data(dir, {x}, {at::relu(x) + 0.5});
  OrtResult result = run_in_ort(dir + "/model.onnx", dir);
  EXPECT_FALSE(result.ok);
  // A mismatch of the values of the output ORT computed, not any failure (an ORT error).
  EXPECT_NE(result.report.find("output 0 'output_0': MISMATCH shape [4] float32 max_abs_err="),
            std::string::npos)
      << result.report;
  EXPECT_EQ(result.report.find("error:"), std::string::npos) << result.report;
}

}  // namespace
}  // namespace torchonnx::testing
