// dynamic_axes (issue 6): models exported on one example with some axes declared dynamic must run
// in ONNX Runtime at other sizes on those axes and match libtorch there. Shapes the model computes
// from its inputs (x.view(x.size(0), -1), reshapes for attention heads, arange over the sequence,
// LSTM sequence lengths, loops over x.size(0)) must stay computed in the graph, not be baked in.
// Fixtures: tests/fixtures/make_dynamic.py (the spec's LSTM FAQ model, a TransformerEncoder, CNNs,
// shape arithmetic, a scripted loop); input sets shape0 (the example), shape1, shape2, shape3.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "support/expect_error.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;
using Inputs = std::vector<c10::IValue>;

const fs::path kFixtureDir = TORCHONNX_DYNAMIC_FIXTURE_DIR;

struct DynamicModel {
  const char* name;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  DynamicAxes axes;
  std::vector<int> opsets;
  Tolerance tol;
};

// Labels given as "" are generated (the list form of torch.onnx's dynamic_axes).
const DynamicModel kModels[] = {
    // The spec's FAQ: dynamic_axes={'input': {0: 'sequence'}, 'output': {0: 'sequence'}}.
    {"lstm_faq",
     {"input", "h0", "c0"},
     {"output", "hn", "cn"},
     {{"input", {{0, "sequence"}}}, {"output", {{0, "sequence"}}}},
     {9, 13, 17},
     {1e-3, 1e-7, 1e-5}},
    {"lstm_batch",
     {"input", "h0", "c0"},
     {"output", "hn", "cn"},
     {{"input", {{0, "sequence"}, {1, "batch"}}},
      {"h0", {{1, "batch"}}},
      {"c0", {{1, "batch"}}},
      {"output", {{0, "sequence"}, {1, "batch"}}},
      {"hn", {{1, "batch"}}},
      {"cn", {{1, "batch"}}}},
     {11, 17},
     {1e-3, 1e-7, 1e-5}},
    {"transformer_encoder",
     {"tokens"},
     {"logits"},
     {{"tokens", {{0, "batch"}, {1, "sequence"}}}, {"logits", {{0, "batch"}, {1, "sequence"}}}},
     {11, 14, 17},
     {1e-3, 1e-7, 1e-4}},
    {"flatten_cnn",
     {"image"},
     {"scores"},
     {{"image", {{0, ""}}}, {"scores", {{0, ""}}}},
     {9, 13, 17},
     {1e-3, 1e-7, 1e-5}},
    {"resizing_cnn",
     {"image"},
     {"scores", "mask"},
     {{"image", {{0, "batch"}, {2, "height"}, {3, "width"}}},
      {"scores", {{0, "batch"}}},
      {"mask", {{0, "batch"}, {2, "height"}, {3, "width"}}}},
     {11, 13, 17},
     {1e-3, 1e-7, 1e-5}},
    {"shape_arithmetic",
     {"x"},
     {"y", "mean", "scaled"},
     {{"x", {{0, "batch"}, {1, "sequence"}}}},
     {11, 13, 17},
     {1e-3, 1e-7, 1e-5}},
    // Issue 36: every dim of the features dynamic, channels too (PyTorch's test_rpn): the
    // convolutions fit only their weights' channels, and the view sizes read from their outputs
    // (batch, height, width) must stay computed.
    {"dynamic_channels_conv_view",
     {"features"},
     {"objectness", "deltas"},
     {{"features", {{0, "batch"}, {1, "channels"}, {2, "height"}, {3, "width"}}},
      {"objectness", {{0, "batch"}, {1, "anchors"}}},
      {"deltas", {{0, "batch"}, {1, "anchors"}}}},
     {11, 13, 17},
     {1e-3, 1e-7, 1e-5}},
    // Issue 36: the same with a linear layer, whose run at other features fails.
    {"dynamic_features_linear_view",
     {"x"},
     {"y"},
     {{"x", {{0, "batch"}, {1, "features"}}}, {"y", {{0, "batch"}}}},
     {11, 17},
     {1e-3, 1e-7, 1e-5}},
    {"scripted_rows",
     {"x"},
     {"y", "acc"},
     {{"x", {{0, "rows"}, {1, "cols"}}}},
     {13, 17},
     {1e-3, 1e-7, 1e-5}},
    // Issue 24: static dims stay known next to dynamic ones; sizes of dynamic dims computed.
    {"scripted_partial_shapes",
     {"x", "state"},
     {"gated", "halves", "last", "upper", "both", "either"},
     {{"x", {{0, "batch"}, {2, "length"}}}, {"state", {{0, "batch"}}}},
     {11, 13, 17},
     {1e-3, 1e-7, 1e-5}},
    // Issue 24: optionals carried by a Loop of a dynamic trip count and set in a branch.
    {"scripted_optionals",
     {"x"},
     {"acc", "out"},
     {{"x", {{0, "rows"}}}},
     {16, 17},
     {1e-3, 1e-7, 1e-5}},
    // PyTorch's test_resize_images: a scale computed from the sizes (.item()), appended to a
    // float list in a loop, and output sizes floored from it.
    {"scripted_resize_by_scale",
     {"image"},
     {"resized"},
     {{"image", {{0, "channels"}, {1, "height"}, {2, "width"}}}},
     {11, 17},
     {1e-3, 1e-7, 1e-5}},
    {"alexnet",
     {"image"},
     {"logits"},
     {{"image", {{0, "batch"}}}, {"logits", {{0, "batch"}}}},
     {9, 17},
     {1e-3, 1e-7, 1e-4}},
    {"mobilenet_v3_small",
     {"image"},
     {"logits"},
     {{"image", {{0, "batch"}, {2, "height"}, {3, "width"}}}, {"logits", {{0, "batch"}}}},
     {13, 17},
     {1e-3, 1e-7, 1e-4}},
};

torch::jit::Module load_fixture(const std::string& name) {
  const fs::path pt = kFixtureDir / (name + ".pt");
  if (!fs::exists(pt)) {
    throw std::runtime_error(pt.string() + " is missing: run the make_dynamic_fixtures test");
  }
  torch::jit::Module model = load_model(pt.string());
  model.eval();
  return model;
}

std::vector<Inputs> load_shapes(const std::string& name) {
  std::vector<Inputs> sets;
  for (int k = 0;; ++k) {
    const fs::path dir = kFixtureDir / name / fmt::format("shape{}", k);
    if (!fs::is_directory(dir)) break;
    Inputs inputs;
    for (int i = 0; fs::exists(dir / fmt::format("input_{}.pb", i)); ++i) {
      inputs.emplace_back(read_tensor_file((dir / fmt::format("input_{}.pb", i)).string()));
    }
    sets.push_back(std::move(inputs));
  }
  return sets;
}

// Runs `model_path` in ORT on `inputs` against libtorch's outputs of `model`.
OrtResult run_at(const torch::jit::Module& model, const std::string& model_path,
                 const Inputs& inputs, Tolerance tol, const std::string& hint) {
  std::string data = temp_dir(hint);
  write_test_data(data, inputs, frontend::run_module(model, inputs));
  OrtResult result = run_in_ort(model_path, data, tol);
  if (result.ok) fs::remove_all(data);
  return result;
}

std::string shape_text(const Inputs& inputs) {
  std::vector<std::string> parts;
  for (const auto& v : inputs) {
    parts.push_back(fmt::format("{}", fmt::join(v.toTensor().sizes(), "x")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

struct Case {
  DynamicModel model;
  int opset;
};

class DynamicAxesTest : public ::testing::TestWithParam<Case> {};

// Exported on the example (shape0), the model runs in ORT and matches libtorch on the example
// and on three input sets of other sizes on the dynamic axes; the graph's inputs and outputs name
// the dynamic dims and keep the others static.
TEST_P(DynamicAxesTest, RunsInOrtAtThreeOtherShapes) {
  const DynamicModel& m = GetParam().model;
  torch::jit::Module model = load_fixture(m.name);
  std::vector<Inputs> shapes = load_shapes(m.name);
  ASSERT_GE(shapes.size(), 4u) << m.name << " needs the example and three other input sets";

  ExportOptions options;
  options.opset_version = GetParam().opset;
  options.input_names = m.input_names;
  options.output_names = m.output_names;
  options.dynamic_axes = m.axes;
  const std::string dir = temp_dir(fmt::format("{}_{}", m.name, options.opset_version));
  const std::string path = dir + "/model.onnx";
  export_model(model, shapes[0], path, options);

  onnx::ModelProto proto = read_model_file(path);
  auto check_dims = [&](const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
    for (const auto& value : values) {
      auto found = m.axes.find(value.name());
      if (found == m.axes.end()) continue;
      const auto& dims = value.type().tensor_type().shape().dim();
      int k = 0;
      for (const auto& [axis, label] : found->second) {
        ++k;
        ASSERT_LT(axis, dims.size()) << value.name();
        const std::string expected =
            label.empty() ? fmt::format("{}_dynamic_axes_{}", value.name(), k) : label;
        EXPECT_EQ(dims[axis].dim_param(), expected) << value.name() << " axis " << axis;
      }
    }
  };
  check_dims(proto.graph().input());
  check_dims(proto.graph().output());
  for (const auto& input : proto.graph().input()) {
    const auto found = m.axes.find(input.name());
    const auto& dims = input.type().tensor_type().shape().dim();
    for (int d = 0; d < dims.size(); ++d) {
      if (found != m.axes.end() && found->second.count(d)) continue;
      EXPECT_TRUE(dims[d].has_dim_value()) << input.name() << " dim " << d << " should be static";
    }
  }

  bool all_ok = true;
  for (size_t k = 0; k < shapes.size(); ++k) {
    SCOPED_TRACE(fmt::format("input set shape{} ({})", k, shape_text(shapes[k])));
    OrtResult result = run_at(model, path, shapes[k], m.tol, fmt::format("{}_shape{}", m.name, k));
    EXPECT_TRUE(result.ok) << result.report;
    all_ok = all_ok && result.ok;
  }
  if (all_ok) fs::remove_all(dir);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& m : kModels) {
    for (int opset : m.opsets) out.push_back({m, opset});
    // And at 21 on a build that exports it (onnx >= 1.16: Debian 13).
    if (highest_opset() >= 21) out.push_back({m, 21});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Issue6, DynamicAxesTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           return fmt::format("{}_opset{}", info.param.model.name,
                                              info.param.opset);
                         });

// Without dynamic_axes, the same export has the example's static shapes: ORT refuses the other
// input sets. (The test above would catch a graph that ignores dynamic_axes.)
TEST(DynamicAxes, WithoutDynamicAxesOtherShapesAreRejected) {
  torch::jit::Module model = load_fixture("flatten_cnn");
  std::vector<Inputs> shapes = load_shapes("flatten_cnn");
  ASSERT_GE(shapes.size(), 2u);
  const std::string dir = temp_dir("flatten_cnn_static");
  export_model(model, shapes[0], dir + "/model.onnx");
  EXPECT_TRUE(run_at(model, dir + "/model.onnx", shapes[0], {}, "static_example").ok);
  const int64_t example_batch = shapes[0].at(0).toTensor().size(0);
  const int64_t other_batch = shapes[1].at(0).toTensor().size(0);
  ASSERT_NE(other_batch, example_batch) << "the fixture's second input set has the same batch";
  OrtResult other = run_at(model, dir + "/model.onnx", shapes[1], {}, "static_other");
  EXPECT_FALSE(other.ok) << "a static export ran on another batch size";
  // Refused for its batch size, not for another reason (a model ORT does not load, ...).
  EXPECT_NE(other.report.find("ONNX Runtime failed to run"), std::string::npos) << other.report;
  EXPECT_NE(other.report.find("Got invalid dimensions for input"), std::string::npos)
      << other.report;
  EXPECT_NE(
      other.report.find(fmt::format("index: 0 Got: {} Expected: {}", other_batch, example_batch)),
      std::string::npos)
      << other.report;
}

// The shape computed by x.view(x.size(0), -1) stays a computation: no Reshape of the exported
// graph takes a constant or initializer holding the example's batch size.
TEST(DynamicAxes, ReshapeShapeIsComputedNotBaked) {
  torch::jit::Module model = load_fixture("flatten_cnn");
  std::vector<Inputs> shapes = load_shapes("flatten_cnn");
  ExportOptions options;
  options.input_names = {"image"};
  options.dynamic_axes = {{"image", {{0, "batch"}}}};
  onnx::ModelProto proto = parse_model(export_model_to_bytes(model, shapes[0], options));
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const auto& init : proto.graph().initializer()) constants[init.name()] = &init;
  for (const auto& node : proto.graph().node()) {
    if (node.op_type() == "Constant") constants[node.output(0)] = &node.attribute(0).t();
  }
  int reshapes = 0;
  for (const auto& node : proto.graph().node()) {
    if (node.op_type() != "Reshape") continue;
    ++reshapes;
    auto found = constants.find(node.input(1));
    if (found == constants.end()) continue;
    at::Tensor shape = from_tensor_proto(*found->second);
    EXPECT_NE(shape[0].item<int64_t>(), shapes[0][0].toTensor().size(0))
        << "Reshape " << node.name() << " bakes the example's batch size";
  }
  EXPECT_GE(reshapes, 1);
}

// The CLI's --dynamic-axes NAME:AXIS[=LABEL],... gives the same graph inputs.
TEST(DynamicAxes, CliFlagNamesTheAxes) {
  const std::string dir = temp_dir("dynamic_cli");
  const std::string out = dir + "/lstm.onnx";
  const std::string pt = (kFixtureDir / "lstm_batch.pt").string();
  const std::string data = (kFixtureDir / "lstm_batch" / "shape0").string();
  CliResult r = run_cli(
      fmt::format("export '{}' -o '{}' --inputs '{}' --input-names input,h0,c0 --output-names "
                  "output,hn,cn --dynamic-axes input:0=sequence,1=batch --dynamic-axes h0:1=batch "
                  "--dynamic-axes c0:1=batch --dynamic-axes output:0=sequence,1",
                  pt, out, data));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  onnx::ModelProto proto = read_model_file(out);
  EXPECT_EQ(proto.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "sequence");
  EXPECT_EQ(proto.graph().input(0).type().tensor_type().shape().dim(1).dim_param(), "batch");
  EXPECT_EQ(proto.graph().input(0).type().tensor_type().shape().dim(2).dim_value(), 10);
  EXPECT_EQ(proto.graph().output(0).type().tensor_type().shape().dim(0).dim_param(), "sequence");
  EXPECT_EQ(proto.graph().output(0).type().tensor_type().shape().dim(1).dim_param(),
            "output_dynamic_axes_2");

  // A malformed flag is a clear usage error, not a crash.
  r = run_cli(fmt::format("export '{}' -o '{}/bad.onnx' --inputs '{}' --dynamic-axes input:zero",
                          pt, dir, data));
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorCode::kInvalidArgument)) << r.output;
  EXPECT_NE(r.output.find("'zero' is not an axis"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/bad.onnx"));
}

// An axis beyond an output's rank is left out with a warning naming it, and the axes that exist
// are named, as torch.onnx does (its tests give a 2-d output the axes [0, 1, 2]).
TEST(DynamicAxes, OutputAxisOutOfRangeIsIgnoredWithAWarning) {
  torch::jit::Module model = load_fixture("flatten_cnn");
  std::vector<Inputs> shapes = load_shapes("flatten_cnn");
  ExportOptions options;
  options.input_names = {"image"};
  options.output_names = {"logits"};
  options.dynamic_axes = {{"image", {{0, "batch"}}}, {"logits", {{0, "n"}, {1, ""}, {2, ""}}}};
  ::testing::internal::CaptureStderr();
  const onnx::ModelProto proto = parse_model(export_model_to_bytes(model, shapes[0], options));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("output 'logits' has 2 dims, so axis 2 does not exist: it is ignored"),
            std::string::npos)
      << err;
  const auto& dims = proto.graph().output(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 2);
  EXPECT_EQ(dims[0].dim_param(), "n");
  EXPECT_EQ(dims[1].dim_param(), "logits_dynamic_axes_2");
}

// An axis beyond the input's rank is an ExportError naming the input and the axis.
TEST(DynamicAxes, AxisOutOfRangeIsAClearError) {
  torch::jit::Module model = load_fixture("flatten_cnn");
  std::vector<Inputs> shapes = load_shapes("flatten_cnn");
  ExportOptions options;
  options.input_names = {"image"};
  options.dynamic_axes = {{"image", {{4, "batch"}}}};
  EXPECT_TRUE(ThrowsExportError(
      [&] { export_model_to_bytes(model, shapes[0], options); }, ErrorCode::kInvalidArgument,
      {"'image' has 4 dims, so axis 4 does not exist", "Remedy: give axes from 0 to 3"}));
}

}  // namespace
}  // namespace torchonnx::testing

namespace torchonnx::testing {
namespace {

// A C++ callable traced by torchonnx: reshapes written with -1 (not with x.size(0), which C++
// returns as a plain int the tracer cannot see) follow the dynamic batch.
TEST(DynamicAxes, TracedCppFunctionWithDynamicBatch) {
  at::manual_seed(0);
  at::Tensor w = at::randn({8, 6});
  TracedFunction fn = [&](const std::vector<c10::IValue>& in) -> c10::IValue {
    at::Tensor h = at::relu(at::linear(in[0].toTensor(), w));
    return h.view({-1, 2, 4}).softmax(-1);
  };
  ExportOptions options;
  options.input_names = {"x"};
  options.output_names = {"y"};
  options.dynamic_axes = {{"x", {{0, "batch"}}}, {"y", {{0, "batch"}}}};
  const std::string dir = temp_dir("traced_cpp_dynamic");
  export_function(fn, {at::randn({3, 6})}, {{"w", w}}, dir + "/model.onnx", options);
  for (int64_t batch : {1, 4, 7}) {
    SCOPED_TRACE(fmt::format("batch {}", batch));
    at::Tensor x = at::randn({batch, 6});
    std::string data = temp_dir(fmt::format("traced_cpp_dynamic_{}", batch));
    write_test_data(data, {x}, {fn({x}).toTensor()});
    OrtResult result = run_in_ort(dir + "/model.onnx", data);
    EXPECT_TRUE(result.ok) << result.report;
  }
}

}  // namespace
}  // namespace torchonnx::testing
