// Dict and str inputs/outputs in tracing mode, and traced C++ callables that call scripted code.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <torch/jit.h>
#include <torch/script.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "frontend/frontend.h"
#include "support/expect_error.h"
#include "support/harness.h"
#include "torchonnx/export.h"

namespace torchonnx::testing {
namespace {

using Inputs = std::vector<c10::IValue>;

std::vector<std::string> input_names(const onnx::ModelProto& p) {
  std::vector<std::string> out;
  for (const auto& i : p.graph().input()) out.push_back(i.name());
  return out;
}

size_t count_ops(const onnx::ModelProto& p, const std::string& op) {
  size_t n = 0;
  for (const auto& node : p.graph().node()) n += node.op_type() == op;
  return n;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// The tensors of `inputs` in the order of the exported graph's inputs (dict values in insertion
// order, strings left out): what the test-data files hold.
Inputs flat_inputs(const Inputs& inputs) {
  Inputs out;
  for (const auto& t : frontend::flatten_tensors(c10::ivalue::Tuple::create(inputs))) {
    out.emplace_back(t);
  }
  return out;
}

// Copies the tensors of `v` (also inside tuples and dicts): the reference run gets fresh tensors.
c10::IValue deep_clone(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().clone();
  if (v.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& e : v.toTupleRef().elements()) elements.push_back(deep_clone(e));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (v.isGenericDict()) {
    auto dict = v.toGenericDict();
    c10::impl::GenericDict out(dict.keyType(), dict.valueType());
    for (const auto& kv : dict) out.insert(kv.key(), deep_clone(kv.value()));
    return out;
  }
  return v;
}

std::vector<at::Tensor> reference(const TracedFunction& fn, const Inputs& inputs) {
  c10::NoGradGuard no_grad;
  Inputs copies;
  for (const auto& v : inputs) copies.push_back(deep_clone(v));
  return frontend::flatten_tensors(fn(copies));
}

// Exports `fn` traced on `example` at each of `opsets`, calls `check` on the model, then runs it
// in ORT on the example and on each of `cases` (other values of the same shapes: traces have static
// shapes; other loop counts and branches) and expects libtorch's outputs.
void expect_generalizes(const TracedFunction& fn, const Inputs& example,
                        const std::vector<Inputs>& cases, const NamedTensors& params,
                        const std::vector<int>& opsets, ExportOptions options = {},
                        const std::function<void(const onnx::ModelProto&)>& check = {}) {
  std::vector<Inputs> all{example};
  all.insert(all.end(), cases.begin(), cases.end());
  for (int opset : opsets) {
    std::string dir = temp_dir(fmt::format("tracing_io_opset{}", opset));
    std::string model = dir + "/model.onnx";
    options.opset_version = opset;
    try {
      export_function(fn, example, params, model, options);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "export at opset " << opset << " failed: " << e.what();
      continue;
    }
    if (check) {
      std::string bytes = read_file(model);
      SCOPED_TRACE(fmt::format("opset {}", opset));
      check(parse_model(bytes));
    }
    bool all_ok = true;
    for (size_t c = 0; c < all.size(); ++c) {
      std::string data = fmt::format("{}/case{}", dir, c);
      std::filesystem::create_directories(data);
      write_test_data(data, flat_inputs(all[c]), reference(fn, all[c]));
      OrtResult result = run_in_ort(model, data, {1e-4});
      EXPECT_TRUE(result.ok) << "opset " << opset << ", inputs " << c << ": " << result.report;
      all_ok = all_ok && result.ok;
    }
    if (all_ok) std::filesystem::remove_all(dir);
  }
}

// Exports at `opset` with stderr captured; returns the model and what was printed.
std::pair<onnx::ModelProto, std::string> export_capturing_stderr(const TracedFunction& fn,
                                                                 const Inputs& inputs,
                                                                 ExportOptions options = {}) {
  ::testing::internal::CaptureStderr();
  std::string bytes;
  try {
    bytes = export_function_to_bytes(fn, inputs, {}, options);
  } catch (...) {
    ::testing::internal::GetCapturedStderr();
    throw;
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  return {parse_model(bytes), err};
}

c10::impl::GenericDict string_dict(const c10::TypePtr& value_type) {
  return c10::impl::GenericDict(c10::StringType::get(), value_type);
}

at::Tensor scalar(int64_t v) {
  return at::scalar_tensor(v, at::kLong);
}

// ----- dict and str outputs --------------------------------------------------------------------

TEST(TracingIo, DictOutputBecomesItsValues) {
  TracedFunction fn = [](const Inputs& in) -> c10::IValue {
    at::Tensor x = in[0].toTensor();
    c10::Dict<std::string, at::Tensor> d;
    d.insert("second", x * 2);  // insertion order, not key order
    d.insert("first", x.exp());
    return d;
  };
  Inputs inputs{at::randn({2, 3})};
  auto [proto, err] = export_capturing_stderr(fn, inputs);
  EXPECT_EQ(proto.graph().output_size(), 2);
  EXPECT_EQ(count(err, "torchonnx: warning:"), 1) << err;
  EXPECT_NE(err.find("dict"), std::string::npos) << err;
  expect_generalizes(fn, inputs, {{at::randn({2, 3})}}, {}, {11, 17});
}

TEST(TracingIo, NestedDictAndTupleOutputsAreFlattenedInOrder) {
  TracedFunction fn = [](const Inputs& in) -> c10::IValue {
    at::Tensor x = in[0].toTensor();
    auto inner = string_dict(c10::TensorType::get());
    inner.insert("r", x * 3);
    auto outer = string_dict(c10::AnyType::get());
    outer.insert("p", c10::ivalue::Tuple::create({x.exp(), x + 1}));
    outer.insert("q", inner);
    return c10::ivalue::Tuple::create({x.neg(), outer, x.sin()});
  };
  Inputs inputs{at::randn({3})};
  // The reference flattening is the exported order: neg, exp, x + 1, x * 3, sin.
  auto expected = reference(fn, inputs);
  ASSERT_EQ(expected.size(), 5u);
  at::Tensor x = inputs[0].toTensor();
  EXPECT_TRUE(expected[3].allclose(x * 3));
  EXPECT_TRUE(expected[4].allclose(x.sin()));
  auto [proto, err] = export_capturing_stderr(fn, inputs);
  EXPECT_EQ(proto.graph().output_size(), 5);
  EXPECT_EQ(count(err, "torchonnx: warning:"), 1) << "one warning per export: " << err;
  expect_generalizes(fn, inputs, {{at::randn({3})}}, {}, {11, 17});
}

TEST(TracingIo, StrOutputIsDropped) {
  TracedFunction fn = [](const Inputs& in) -> c10::IValue {
    at::Tensor x = in[0].toTensor();
    return c10::ivalue::Tuple::create({x + 1, c10::IValue(std::string("label")), x * x});
  };
  Inputs inputs{at::randn({2, 2})};
  auto [proto, err] = export_capturing_stderr(fn, inputs);
  EXPECT_EQ(proto.graph().output_size(), 2);
  EXPECT_EQ(count(err, "torchonnx: warning:"), 1) << err;
  EXPECT_NE(err.find("str"), std::string::npos) << err;
  expect_generalizes(fn, inputs, {{at::randn({2, 2})}}, {}, {11, 17});
}

TEST(TracingIo, ScriptedDictOutputIsFlattened) {
  // FlattenOutputs: a dict built in a scripted forward becomes its values.
  torch::jit::Module m("DictOut");
  m.define(R"(
def forward(self, x):
    return {"b": x + 1, "a": x * 2}, "ignored"
)");
  Inputs inputs{at::randn({2, 3})};
  ::testing::internal::CaptureStderr();
  auto proto = parse_model(export_model_to_bytes(m, inputs));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(proto.graph().output_size(), 2);
  EXPECT_EQ(count(err, "torchonnx: warning:"), 2) << "dict and str: " << err;
  auto expected = frontend::run_module(m, inputs);
  ASSERT_EQ(expected.size(), 2u);
  std::string dir = temp_dir("scripted_dict");
  export_model(m, inputs, dir + "/model.onnx");
  write_test_data(dir, inputs, expected);
  auto result = run_in_ort(dir + "/model.onnx", dir, {1e-4});
  EXPECT_TRUE(result.ok) << result.report;
}

// ----- dict and str inputs ---------------------------------------------------------------------

at::Tensor dict_model(const Inputs& in) {
  auto d = c10::impl::toTypedDict<std::string, at::Tensor>(in[0].toGenericDict());
  at::Tensor x = in[1].toTensor();
  at::Tensor acc = x * d.at("scale");
  // Iterating the dict: the keys (and so the multipliers) are fixed at tracing.
  for (const auto& kv : d) acc = acc + kv.value() * (kv.key() == "bias" ? 2.0 : 0.5);
  return acc;
}

Inputs dict_inputs() {
  c10::Dict<std::string, at::Tensor> d;
  d.insert("scale", at::randn({3}));
  d.insert("bias", at::randn({3}));
  return {d, at::randn({2, 3})};
}

TEST(TracingIo, DictInputTensorsBecomeGraphInputs) {
  Inputs inputs = dict_inputs();
  auto [proto, err] = export_capturing_stderr(dict_model, inputs);
  EXPECT_EQ(input_names(proto),
            (std::vector<std::string>{"input_0.scale", "input_0.bias", "input_1"}));
  EXPECT_EQ(count(err, "torchonnx: warning:"), 1) << err;
  EXPECT_NE(err.find("dict"), std::string::npos) << err;
  ExportOptions named;
  named.input_names = {"scale", "bias", "x"};
  auto [named_proto, named_err] = export_capturing_stderr(dict_model, inputs, named);
  EXPECT_EQ(input_names(named_proto), named.input_names);
  expect_generalizes(dict_model, inputs, {dict_inputs(), dict_inputs()}, {}, {11, 17}, named);
}

TEST(TracingIo, StrInputIsConstantAtTracing) {
  TracedFunction fn = [](const Inputs& in) -> c10::IValue {
    const std::string& mode = in[2].toStringRef();
    at::Tensor q = at::div(in[0].toTensor(), in[1].toTensor(), mode);
    return mode == "floor" ? q + 100 : q;
  };
  at::Tensor a = at::tensor({7.0f, -7.0f, 5.5f, -3.0f});
  at::Tensor b = at::tensor({2.0f, 2.0f, -2.0f, 4.0f});
  Inputs floor{a, b, std::string("floor")};
  auto [proto, err] = export_capturing_stderr(fn, floor);
  EXPECT_EQ(proto.graph().input_size(), 2) << "the str is not a graph input";
  EXPECT_EQ(count(err, "torchonnx: warning:"), 1) << err;
  EXPECT_NE(err.find("fixed at tracing"), std::string::npos) << err;
  // Other tensors: the exported model keeps floor division (and the +100 of that branch).
  expect_generalizes(fn, floor,
                     {{at::tensor({-9.0f, 9.0f, 1.5f, 0.5f}),
                       at::tensor({4.0f, -4.0f, 1.0f, -0.25f}), std::string("floor")}},
                     {}, {11, 17});
  Inputs trunc{a, b, std::string("trunc")};
  expect_generalizes(fn, trunc,
                     {{at::tensor({-9.0f, 9.0f, 1.5f, 0.5f}),
                       at::tensor({4.0f, -4.0f, 1.0f, -0.25f}), std::string("trunc")}},
                     {}, {11, 17});
}

// ----- traced code calling scripted code -------------------------------------------------------

void expect_has_op(const onnx::ModelProto& p, const std::string& op) {
  std::set<std::string> ops;
  for (const auto& node : p.graph().node()) ops.insert(node.op_type());
  EXPECT_TRUE(ops.count(op)) << op << " is not among the model's nodes: "
                             << fmt::format("{}", fmt::join(ops, ", "));
}

// The spec's LoopModel2: a traced model whose forward calls a scripted loop.
TEST(TracingIo, LoopModel2KeepsTheScriptedLoop) {
  auto cu = torch::jit::compile(R"(
def loop(x, y):
    for i in range(int(y)):
        x = x + i
    return x
)");
  TracedFunction fn = [cu](const Inputs& in) -> c10::IValue {
    return call_scripted(cu->get_function("loop"), {in[0], in[1]});
  };
  ExportOptions options;
  options.input_names = {"input_data", "loop_range"};
  at::Tensor dummy = at::ones({2, 3}, at::kLong);
  expect_generalizes(fn, {dummy, scalar(5)},
                     {{dummy, scalar(3)}, {dummy * 4, scalar(0)}, {dummy, scalar(11)}}, {},
                     {9, 11, 17}, options, [&](const onnx::ModelProto& p) {
                       expect_has_op(p, "Loop");
                       EXPECT_EQ(input_names(p), options.input_names);
                     });
}

// Traced ops before and after a scripted module's loop: the loop's output feeds the traced ops.
TEST(TracingIo, TracedOpsAroundAScriptedModuleLoop) {
  torch::jit::Module m("Accumulate");
  m.define(R"(
def forward(self, x, n, step: float = 0.5):
    h = torch.zeros_like(x)
    for i in range(int(n)):
        h = torch.tanh(h * step + x)
    return h, x.sum()
)");
  TracedFunction fn = [m](const Inputs& in) -> c10::IValue {
    at::Tensor x = in[0].toTensor() * 2;
    auto out = call_scripted(m, {x, in[1]}).toTuple();
    return out->elements()[0].toTensor() + out->elements()[1].toTensor();
  };
  expect_generalizes(fn, {at::randn({2, 3}), scalar(4)},
                     {{at::randn({2, 3}), scalar(1)}, {at::randn({2, 3}), scalar(7)}}, {}, {11, 17},
                     {}, [](const onnx::ModelProto& p) { expect_has_op(p, "Loop"); });
}

// A scripted module with an `if` on a tensor value, called from traced code; its weight is given
// as a named trace parameter (an initializer), its buffer is not (a constant).
TEST(TracingIo, ScriptedIfWithNamedParameter) {
  torch::jit::Module m("Gate");
  m.register_parameter("weight", at::randn({3}), /*is_buffer=*/false);
  m.register_buffer("offset", at::full({3}, 0.5));
  m.define(R"(
def forward(self, x):
    if bool(x.sum() > 0):
        y = x * self.weight
    else:
        y = x - self.weight + self.offset
    return y
)");
  NamedTensors params{{"gate.weight", m.attr("weight").toTensor()}};
  TracedFunction fn = [m](const Inputs& in) -> c10::IValue {
    at::Tensor y = call_scripted(m, {in[0].toTensor() + 1}).toTensor();
    return at::tanh(y) * 2;
  };
  at::Tensor positive = at::rand({2, 3}) + 0.1;
  at::Tensor negative = -at::rand({2, 3}) - 2;
  expect_generalizes(fn, {positive}, {{negative}, {at::rand({2, 3})}}, params, {11, 17}, {},
                     [](const onnx::ModelProto& p) {
                       expect_has_op(p, "If");
                       ASSERT_EQ(p.graph().initializer_size(), 1) << "the buffer is a constant";
                       EXPECT_EQ(p.graph().initializer(0).name(), "gate.weight");
                       EXPECT_EQ(p.graph().input_size(), 1);
                     });
}

TEST(TracingIo, CallScriptedOutsideTracingJustRuns) {
  auto cu = torch::jit::compile("def f(x, k: int = 3):\n    return x * k\n");
  at::Tensor x = at::randn({2});
  EXPECT_TRUE(call_scripted(cu->get_function("f"), {x}).toTensor().allclose(x * 3));
  torch::jit::Module m("M");
  m.define("def twice(self, x):\n    return x + x\n");
  EXPECT_TRUE(call_scripted(m, {x}, "twice").toTensor().allclose(x * 2));
  EXPECT_TRUE(ThrowsExportError([&] { call_scripted(m, {x}, "missing"); },
                                ErrorCode::kInvalidArgument,
                                {"call_scripted: the module has no method 'missing'"}));
}

}  // namespace
}  // namespace torchonnx::testing
