// Numeric tests of the prim:: plumbing and scalar/shape converters (lists, tuples, x.size(0),
// int(...), numel, ...).
//
// In a C++ trace x.size(0) is a plain integer, and with constant folding (the default) shape
// arithmetic on static shapes is folded away: these converters only run on graphs that compute
// shapes, i.e. TorchScript (or Python-traced graphs, written here in IR) exported with
// do_constant_folding = false.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

const ScriptOptions kUnfolded{kMinOpset, highest_opset(), /*fold=*/false};

c10::IValue tuple(std::vector<at::Tensor> parts) {
  return c10::ivalue::Tuple::create(std::vector<c10::IValue>(parts.begin(), parts.end()));
}

class Prim : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

TEST_F(Prim, ListConstructOfTensors) {
  expect_op_matches("prim::ListConstruct",
                    [](const Inputs& in) {
                      return at::cat({arg(in, 0), arg(in, 1), arg(in, 0)});
                    },
                    {at::randn({2, 3}), at::randn({1, 3})});
}

TEST_F(Prim, ListConstructOfComputedInts) {
  expect_script_matches("prim::ListConstruct",
                        "def forward(self, x):\n  return x.view(x.size(0), -1)\n",
                        {at::randn({2, 3, 4})}, kUnfolded);
}

// A ScriptModule's returned list of tensors is one output, an ONNX sequence, as torch.onnx
// returns it (opset 11+); tuples around it are flattened. Below 11 (no sequences) its tensors are
// outputs of their own. The comparison flattens the sequence's elements in order (verify.mjs reads
// them through SequenceAt, the in-process verify through ONNX Runtime's sequence values).
TEST_F(Prim, ReturnedListOfTensorsIsOneSequence) {
  const auto m = script_module("def forward(self, x, y):\n  return [x, y * 2], x + 1\n");
  const Inputs inputs{at::randn({2, 3}), at::randn({2, 4})};
  expect_script_matches("prim::ListConstruct", m, inputs);
  for (int opset : {9, 11, highest_opset()}) {
    SCOPED_TRACE(opset);
    ExportOptions options;
    options.opset_version = opset;
    const onnx::ModelProto model = parse_model(export_model_to_bytes(m, inputs, options));
    const auto& outputs = model.graph().output();
    if (opset < 11) {
      ASSERT_EQ(outputs.size(), 3);
      for (const auto& o : outputs) EXPECT_TRUE(o.type().has_tensor_type()) << o.name();
      continue;
    }
    ASSERT_EQ(outputs.size(), 2);
    ASSERT_TRUE(outputs[0].type().has_sequence_type());
    EXPECT_EQ(outputs[0].type().sequence_type().elem_type().tensor_type().elem_type(),
              onnx::TensorProto::FLOAT);
    EXPECT_TRUE(outputs[1].type().has_tensor_type());
  }
  // A returned list of lists is its tensors in order, as torch.onnx flattens it.
  const auto nested = script_module("def forward(self, x, y):\n  return [[x, y], [y * 2]]\n");
  expect_script_matches("aten::mul", nested, inputs);  // the lists are gone before conversion
  ExportOptions options;
  options.opset_version = highest_opset();
  const onnx::ModelProto model = parse_model(export_model_to_bytes(nested, inputs, options));
  ASSERT_EQ(model.graph().output_size(), 3);
  for (const auto& o : model.graph().output()) EXPECT_TRUE(o.type().has_tensor_type()) << o.name();
}

// A returned list of numbers (not one ListConstruct flattens): a sequence of 0-d tensors from
// opset 11, as torch.onnx returns it and libtorch's list flattens — computed at run time (its
// length varies with the input: other lengths checked), or known at export (folded sizes).
TEST_F(Prim, ReturnedListOfNumbersIsASequenceOfScalars) {
  const std::string src =
      "def forward(self, x, n: int):\n"
      "  y: List[int] = []\n"
      "  for i in range(n):\n"
      "    y.append(i * 2)\n"
      "  return y, x.size(), x * 2\n";
  const Inputs example{at::randn({3, 2}), c10::IValue(int64_t{3})};
  expect_script_generalizes(
      "aten::append", src, example,
      {{example[0], c10::IValue(int64_t{5})}, {example[0], c10::IValue(int64_t{1})}}, {11, 13, 17});
  ExportOptions options;
  options.opset_version = 17;
  const onnx::ModelProto model =
      parse_model(export_model_to_bytes(script_module(src), example, options));
  ASSERT_EQ(model.graph().output_size(), 3);
  for (int k : {0, 1}) {
    const auto& type = model.graph().output(k).type();
    ASSERT_TRUE(type.has_sequence_type()) << k;
    EXPECT_EQ(type.sequence_type().elem_type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  }
}

TEST_F(Prim, ListUnpackOfTensors) {
  expect_op_matches("prim::ListUnpack",
                    [](const Inputs& in) {
                      auto parts = at::chunk(arg(in, 0), 3, 1);
                      return tuple({parts[2], parts[0]});
                    },
                    {at::randn({2, 6})});
}

TEST_F(Prim, ListUnpackOfSizes) {
  expect_script_matches("prim::ListUnpack",
                        "def forward(self, x):\n"
                        "  a, b, c = x.size()\n"
                        "  return x.view(a, b * c)\n",
                        {at::randn({2, 3, 4})}, kUnfolded);
}

// A Python trace of x.view(x.size(0), -1): size → NumToTensor → Int → ListConstruct → view.
TEST_F(Prim, PythonTracedSizeView) {
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %n : int = aten::size(%x, %0)
  %t : Tensor = prim::NumToTensor(%n)
  %i : int = aten::Int(%t)
  %shape : int[] = prim::ListConstruct(%i, %m1)
  %y : Tensor = aten::view(%x, %shape)
  return (%y))IR");
  for (const char* op : {"prim::NumToTensor", "aten::Int", "aten::size"}) {
    SCOPED_TRACE(op);
    expect_script_matches(op, m, {at::randn({2, 3, 4})}, kUnfolded);
  }
  // Folded, the same graph is a constant reshape.
  expect_script_matches("aten::view", m, {at::randn({2, 3, 4})});
}

TEST_F(Prim, NumToTensorInArithmetic) {
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %n : int = aten::size(%x, %1)
  %t : Tensor = prim::NumToTensor(%n)
  %y : Tensor = aten::mul(%x, %t)
  return (%y))IR");
  expect_script_matches("prim::NumToTensor", m, {at::randn({2, 3})}, kUnfolded);
}

TEST_F(Prim, FloatImplicitAndScalarImplicit) {
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %n : int = aten::size(%x, %1)
  %t : Tensor = prim::NumToTensor(%n)
  %f : float = aten::FloatImplicit(%t)
  %s : Scalar = aten::ScalarImplicit(%t)
  %a : Tensor = aten::mul(%x, %f)
  %y : Tensor = aten::add(%a, %s, %1)
  return (%y))IR");
  for (const char* op : {"aten::FloatImplicit", "aten::ScalarImplicit"}) {
    SCOPED_TRACE(op);
    expect_script_matches(op, m, {at::randn({2, 3})}, kUnfolded);
  }
}

TEST_F(Prim, BoolOfAZeroSizeDifference) {
  // bool(x.size(1) - 3) is False: x * float(False) + 1 is ones.
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %3 : int = prim::Constant[value=3]()
  %n : int = aten::size(%x, %1)
  %k : int = aten::sub(%n, %3)
  %t : Tensor = prim::NumToTensor(%k)
  %b : bool = aten::Bool(%t)
  %f : float = aten::Float(%b)
  %y : Tensor = aten::mul(%x, %f)
  %z : Tensor = aten::add(%y, %1, %1)
  return (%z))IR");
  for (const char* op : {"aten::Bool", "aten::Float"}) {
    SCOPED_TRACE(op);
    expect_script_matches(op, m, {at::randn({2, 3})}, kUnfolded);
  }
}

TEST_F(Prim, IntImplicitOfASizeIndex) {
  // x.select(1, x.size(1) - 1) as a Python trace records it.
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %n : int = aten::size(%x, %1)
  %t : Tensor = prim::NumToTensor(%n)
  %last : Tensor = aten::sub(%t, %1, %1)
  %i : int = aten::IntImplicit(%last)
  %y : Tensor = aten::select(%x, %1, %i)
  return (%y))IR");
  expect_script_matches("aten::IntImplicit", m, {at::randn({2, 3, 4})}, kUnfolded);
}

// Scalars computed from tensor values (int(t), float(t), an int argument given as a tensor):
// type propagation continues with a placeholder value (dtype and rank known, sizes not).
TEST_F(Prim, IntImplicitOfATensorArgument) {
  // An int32 index tensor: IntImplicit casts it to int64.
  expect_script_matches("aten::IntImplicit", "def forward(self, x, i):\n  return x.select(0, i)\n",
                        {at::randn({3, 4}), at::scalar_tensor(2, at::kInt)});
}

TEST_F(Prim, IntOfADataDependentTensor) {
  expect_script_matches("aten::Int", "def forward(self, x):\n  return x * int(x.sum())\n",
                        {at::randn({3, 4})});
}

TEST_F(Prim, FloatOfADataDependentTensor) {
  expect_script_matches("aten::Float", "def forward(self, x):\n  return x * float(x.sum())\n",
                        {at::randn({3, 4})});
}

// int(t) and float(t) of a one-element tensor that is not 0-d (torch.zeros(x, 1) for x =
// tensor([2]), as a Python trace records it: aten::Int of the 1-D input) are numbers: the size
// list is Concat of 1-D parts.
TEST_F(Prim, IntAndFloatOfAOneElementTensor) {
  auto m = ir_module(R"IR(
graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %n : int = aten::Int(%x)
  %shape : int[] = prim::ListConstruct(%n, %1)
  %z : Tensor = aten::zeros(%shape, %none, %none, %none, %none)
  %o : Tensor = aten::ones(%shape, %none, %none, %none, %none)
  %f : float = aten::Float(%y)
  %of : Tensor = aten::mul(%o, %f)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%z, %of)
  return (%out))IR");
  for (const char* op : {"aten::Int", "aten::Float"}) {
    SCOPED_TRACE(op);
    expect_script_matches(op, m, {at::tensor({2}, at::kLong), at::tensor({{1.5}})}, kUnfolded);
  }
}

TEST_F(Prim, SizeWithNegativeDim) {
  expect_script_matches("aten::size", "def forward(self, x):\n  return x.view(-1, x.size(-1))\n",
                        {at::randn({2, 3, 4})}, kUnfolded);
}

TEST_F(Prim, SizeWithoutDim) {
  expect_script_matches("aten::size", "def forward(self, x, y):\n  return y.view(x.size())\n",
                        {at::randn({2, 3, 4}), at::randn({4, 6})}, kUnfolded);
}

TEST_F(Prim, Dim) {
  expect_script_matches("aten::dim", "def forward(self, x):\n  return x * x.dim()\n",
                        {at::randn({2, 3, 4})}, kUnfolded);
}

TEST_F(Prim, Numel) {
  expect_script_matches("aten::numel", "def forward(self, x):\n  return x.view(x.numel())\n",
                        {at::randn({2, 3, 4})}, kUnfolded);
}

TEST_F(Prim, GetItemOfATensorList) {
  expect_script_matches("aten::__getitem__",
                        "def forward(self, x):\n  return torch.split(x, 2, 1)[-1]\n",
                        {at::randn({3, 5})});
}

TEST_F(Prim, GetItemOfSizes) {
  expect_script_matches("aten::__getitem__",
                        "def forward(self, x):\n"
                        "  s = x.size()\n"
                        "  return x.view(s[1], -1) * s[-1]\n",
                        {at::randn({2, 3, 4})}, kUnfolded);
}

TEST_F(Prim, NestedTupleOutputs) {
  // Tuples are lowered (LowerSimpleTuples, FlattenOutputs) before conversion: this checks the
  // outputs, the tuple converters themselves are not reached by a traced graph.
  expect_matches_at_opsets(
      [](const Inputs& in) -> c10::IValue {
        at::Tensor x = arg(in, 0);
        return c10::ivalue::Tuple::create({x.neg(), c10::ivalue::Tuple::create({x.exp(), x})});
      },
      {at::randn({2, 3})});
}

TEST_F(Prim, TupleAndListInputsAreFlattened) {
  // torch.onnx flattens tuple and list arguments into one ONNX input per tensor.
  auto m = script_module(
      "def forward(self, xs: Tuple[Tensor, Tensor], ys: List[Tensor], z):\n"
      "  a, b = xs\n"
      "  return a - b + ys[0] * ys[1] + z, len(ys)\n");
  at::Tensor a = at::randn({2, 3}), b = at::randn({2, 3}), c = at::randn({3}), d = at::randn({3}),
             z = at::randn({2, 3});
  Inputs inputs{c10::ivalue::Tuple::create({a, b}), c10::List<at::Tensor>({c, d}), z};
  expect_has_op("aten::sub", converted_ops(frontend::capture_module(m, inputs), true));
  expect_exports_match(
      [&](const std::string& path, const ExportOptions& o) { export_model(m, inputs, path, o); },
      {a, b, c, d, z}, {a - b + c * d + z, at::scalar_tensor(2, at::kLong)}, kDefaultOpset,
      kDefaultOpset, true, {});
}

// ----- constants, dtype/device queries ----------------------------------------------------------

TEST_F(Prim, TensorConstantIsConvertedOnceAndShared) {
  at::Tensor c = at::randn({3});
  expect_op_matches("prim::Constant", [c](const Inputs& in) { return arg(in, 0) * c + c; },
                    {at::randn({2, 3})});
}

TEST_F(Prim, TensorConstantUsedInAnotherDtype) {
  // The int64 constant is used as a float operand: made as a float constant, not cast.
  at::Tensor c = at::arange(3);
  expect_op_matches("prim::Constant",
                    [c](const Inputs& in) {
                      return at::cat({arg(in, 0) + c, c.unsqueeze(0)});
                    },
                    {at::randint(0, 5, {2, 3})});
}

TEST_F(Prim, DtypeOfTensorDrivesACast) {
  expect_script_matches("prim::dtype", "def forward(self, x, y):\n  return y.to(x.dtype) + x\n",
                        {at::randn({2, 3}), at::randint(0, 9, {2, 3})}, kUnfolded);
}

TEST_F(Prim, DeviceAndLayoutAreAccepted) {
  expect_script_matches("prim::device",
                        "def forward(self, x):\n"
                        "  return torch.zeros([2, 3], dtype=x.dtype, device=x.device) + x\n",
                        {at::randn({2, 3})}, kUnfolded);
  expect_script_matches("prim::layout",
                        "def forward(self, x):\n"
                        "  return torch.ones([2, 3], layout=x.layout) * x\n",
                        {at::randn({2, 3})}, kUnfolded);
}

TEST_F(Prim, DeviceTypeFoldsToCpu) {
  // Types are propagated on meta tensors; the device seen by the model must still be the CPU.
  expect_script_matches("aten::mul",
                        "def forward(self, x):\n"
                        "  if x.device.type == 'cpu':\n"
                        "    return x * 2\n"
                        "  return x * 3\n",
                        {at::randn({2, 3})});
}

TEST_F(Prim, DataAndUncheckedCastAreIdentities) {
  expect_script_matches("prim::data", "def forward(self, x):\n  return x.data * 2\n",
                        {at::randn({2, 3})}, kUnfolded);
  auto m = ir_module(
      "graph(%x : Tensor):\n"
      "  %o : Tensor? = prim::unchecked_cast(%x)\n"
      "  %y : Tensor = prim::unchecked_cast(%o)\n"
      "  %z : Tensor = aten::neg(%y)\n"
      "  return (%z)\n");
  expect_script_matches("prim::unchecked_cast", m, {at::randn({2, 3})});
}

TEST_F(Prim, IsPinnedIsFalse) {
  auto m = ir_module(
      "graph(%x : Tensor):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %b : bool = aten::is_pinned(%x, %none)\n"
      "  %t : Tensor = prim::NumToTensor(%b)\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %y : Tensor = aten::add(%x, %t, %one)\n"
      "  return (%y)\n");
  expect_script_matches("aten::is_pinned", m, {at::randn({2, 3})}, kUnfolded);
}

// ----- scalar ops of scripted code --------------------------------------------------------------

TEST_F(Prim, MaxMinOfTwoInts) {
  expect_script_matches("prim::max",
                        "def forward(self, x):\n  return x.view(max(x.size(0), x.size(1)), -1)\n",
                        {at::randn({2, 6})}, kUnfolded);
  expect_script_matches("prim::min",
                        "def forward(self, x):\n  return x.view(min(x.size(0), x.size(1)), -1)\n",
                        {at::randn({6, 2})}, kUnfolded);
}

TEST_F(Prim, MaxMinOfFloats) {
  expect_script_matches("prim::max",
                        "def forward(self, x):\n"
                        "  return x * max(float(x.size(0)) / 3.0, 0.25)\n",
                        {at::randn({2, 3})}, kUnfolded);
}

TEST_F(Prim, MaxMinOfIntList) {
  expect_script_matches("prim::max", "def forward(self, x):\n  return x * max(x.size())\n",
                        {at::randn({2, 5, 3})}, kUnfolded);
  expect_script_matches("prim::min", "def forward(self, x):\n  return x * min(x.size())\n",
                        {at::randn({4, 5, 3})}, kUnfolded);
}

// max/min of a List[float] and a List[bool] computed from the input (prim::max.self_float, ...).
TEST_F(Prim, MaxMinOfFloatAndBoolLists) {
  for (const char* f : {"max", "min"}) {
    SCOPED_TRACE(f);
    expect_script_matches(std::string("prim::") + f,
                          fmt::format("def forward(self, x):\n"
                                      "  v = [float(x[0]), float(x[1]) * 2.0, float(x[2]) - 1.0]\n"
                                      "  return x * {}(v)\n",
                                      f),
                          {at::randn({3})}, kUnfolded);
    expect_script_matches(std::string("prim::") + f,
                          fmt::format("def forward(self, x):\n"
                                      "  v = [bool(x[0] > 0), bool(x[1] > 0)]\n"
                                      "  return x + float({}(v))\n",
                                      f),
                          {at::tensor({1.f, -2.f, 0.5f})}, kUnfolded);
  }
}

// A scalar list sliced with bounds known at run time only (x.shape[1:n]): Slice of the 1-D tensor
// the list is, with Python's clamping of out-of-range and negative bounds, from opset 10.
TEST_F(Prim, SliceOfAnIntListWithComputedBounds) {
  const Inputs example = {at::randn({2, 3, 4, 5}), at::scalar_tensor(3, at::kLong)};
  std::vector<Inputs> cases;
  for (int64_t n : {4, -1, 10, 0})
    cases.push_back({at::randn({2, 3, 4, 5}), at::scalar_tensor(n, at::kLong)});
  expect_script_generalizes("aten::slice", R"(
def forward(self, x, n: int):
  return torch.tensor(x.shape[1:n]).sum() + len(x.shape[n::-1])
)",
                            example, cases, {10, 11, 13, 17});
  // Bounds known at export on a list of known length: the element values rearranged (no node;
  // the only form at opset 9).
  expect_script_matches("aten::slice",
                        "def forward(self, x):\n"
                        "  v = [float(x[0]), float(x[1]), float(x[2])][1:]\n"
                        "  return x * v[0] + v[1]\n",
                        {at::randn({3})}, kUnfolded);
}

TEST_F(Prim, TolistOfATensor) {
  expect_script_matches("prim::tolist",
                        "def forward(self, x):\n"
                        "  y: float = x.sum().tolist()\n"
                        "  return x.double() * y\n",
                        {at::randn({2, 3})});
}

TEST_F(Prim, NotOfComparison) {
  expect_script_matches("aten::__not__",
                        "def forward(self, x):\n"
                        "  b = not (x.size(0) == 3)\n"
                        "  return x * int(b)\n",
                        {at::randn({2, 3})}, kUnfolded);
}

// aten::__contains__ (`item in [..]`).
TEST_F(Prim, ContainsOfAComputedIntInAListLiteral) {
  expect_script_generalizes(
      "aten::__contains__",
      "def forward(self, x):\n"
      "  if int(x.sum()) in [1, 3, 5]:\n"
      "    return x + 1\n"
      "  return x - 1\n",
      {at::tensor({1, 0, 0}, at::kLong)},
      {{at::tensor({0, 1, 1}, at::kLong)}, {at::tensor({1, 1, 1}, at::kLong)}},
      {kMinOpset, 11, 13, highest_opset()}, kUnfolded);
}

TEST_F(Prim, ContainsOfConstantsIsAConstant) {
  expect_script_matches("aten::__contains__",
                        "def forward(self, x):\n"
                        "  if 3 in [1, 2, 3]:\n"
                        "    return x + 1\n"
                        "  return x - 1\n",
                        {at::randn({2})}, kUnfolded);
}

TEST_F(Prim, IsNoneOnATensorIsFalse) {
  auto m = ir_module(
      "graph(%x : Tensor):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %b : bool = aten::__is__(%x, %none)\n"
      "  %nb : bool = aten::__isnot__(%x, %none)\n"
      "  %t : Tensor = prim::NumToTensor(%b)\n"
      "  %nt : Tensor = prim::NumToTensor(%nb)\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %y : Tensor = aten::add(%x, %t, %one)\n"
      "  %z : Tensor = aten::add(%y, %nt, %one)\n"
      "  return (%z)\n");
  expect_script_matches("aten::__is__", m, {at::randn({2, 3})}, kUnfolded);
  expect_script_matches("aten::__isnot__", m, {at::randn({2, 3})}, kUnfolded);
}

TEST_F(Prim, RangeLengthAndDerivedIndex) {
  // What the script compiler emits for `for i in range(lo, hi, step)`, written as IR.
  for (auto [lo, hi, step] : {std::tuple{0, 7, 2}, {5, 1, -2}, {3, 3, 1}, {4, 1, 1}}) {
    auto m =
        ir_module(fmt::format("graph(%x : Tensor):\n"
                              "  %z : int = prim::Constant[value=0]()\n"
                              "  %s : int = aten::size(%x, %z)\n"
                              "  %lo : int = aten::add(%s, %z)\n"
                              "  %l : int = prim::Constant[value={}]()\n"
                              "  %lo2 : int = aten::mul(%lo, %z)\n"
                              "  %a : int = aten::add(%lo2, %l)\n"
                              "  %hi : int = prim::Constant[value={}]()\n"
                              "  %st : int = prim::Constant[value={}]()\n"
                              "  %n : int = aten::__range_length(%a, %hi, %st)\n"
                              "  %one : int = prim::Constant[value=1]()\n"
                              "  %i : int = aten::__derive_index(%one, %a, %st)\n"
                              "  %nt : Tensor = prim::NumToTensor(%n)\n"
                              "  %it : Tensor = prim::NumToTensor(%i)\n"
                              "  %y : Tensor = aten::add(%x, %nt, %one)\n"
                              "  %w : Tensor = aten::mul(%y, %it)\n"
                              "  return (%w)\n",
                              lo, hi, step));
    expect_script_matches("aten::__range_length", m, {at::randn({2, 3})}, kUnfolded);
    expect_script_matches("aten::__derive_index", m, {at::randn({2, 3})}, kUnfolded);
  }
}

// ----- lists in straight-line scripted code ----------------------------------------------------

TEST_F(Prim, LenOfListsAndTensors) {
  expect_script_matches("aten::len",
                        "def forward(self, x, y):\n"
                        "  l = [x, y, x]\n"
                        "  return torch.cat(l) * len(l) + len(x)\n",
                        {at::randn({2, 3}), at::randn({2, 3})}, kUnfolded);
  expect_script_matches("aten::len", "def forward(self, x):\n  return x * len(x.size())\n",
                        {at::randn({2, 3})}, kUnfolded);
}

TEST_F(Prim, AppendToTensorList) {
  expect_script_matches("aten::append",
                        "def forward(self, x, y):\n"
                        "  l = [x]\n"
                        "  l.append(y)\n"
                        "  l.append(x * y)\n"
                        "  return torch.stack(l)\n",
                        {at::randn({2, 3}), at::randn({2, 3})});
}

TEST_F(Prim, ConcatenatingAKnownListToAListOfRunTimeLength) {
  // `res += [x]` and `res = [x] + res` in a loop of a run-time trip count: the list is an ONNX
  // sequence (carried by Loop from opset 13) and the known elements are inserted at its end or
  // front (PyTorch's test_list_append, test_loop_with_list).
  ScriptOptions so;
  so.first = 13;
  expect_script_matches(std::vector<std::string>{"aten::add_", "aten::add"},
                        script_module("def forward(self, x, y, n: int):\n"
                                      "  res = [y]\n"
                                      "  front: List[Tensor] = []\n"
                                      "  for i in range(n):\n"
                                      "    res += [torch.matmul(x[i], y)]\n"
                                      "    front = [x[i].sum(0) * i] + front\n"
                                      "  return torch.stack(res), torch.cat(front)\n"),
                        {at::randn({4, 3, 3}), at::randn({3, 3}), c10::IValue(int64_t{4})}, so);
}

TEST_F(Prim, AppendToIntList) {
  expect_script_matches("aten::append",
                        "def forward(self, x):\n"
                        "  s: List[int] = []\n"
                        "  s.append(x.size(1))\n"
                        "  s.append(x.size(0))\n"
                        "  return x.reshape(s)\n",
                        {at::randn({2, 3})}, kUnfolded);
}

TEST_F(Prim, InsertPopDeleteSetItem) {
  const std::string src =
      "def forward(self, x, y):\n"
      "  l = [x, y]\n"
      "  l.insert(0, y * 2)\n"
      "  l.insert(-1, x - 1)\n"
      "  last = l.pop()\n"
      "  first = l.pop(0)\n"
      "  l.append(first + last)\n"
      "  del l[1]\n"
      "  l[0] = l[0] * 3\n"
      "  return torch.cat(l)\n";
  Inputs inputs{at::randn({2, 3}), at::randn({2, 3})};
  for (const char* op : {"aten::insert", "aten::pop", "aten::Delete", "aten::_set_item"}) {
    expect_script_matches(op, src, inputs);
  }
}

// The same edits on a list grown in a loop (an ONNX sequence, carried by Loop from opset 13):
// SequenceInsert,
// SequenceErase and SequenceAt, at other lengths too.
TEST_F(Prim, SequenceEdits) {
  const std::string src = R"(
def forward(self, x, n: int):
  l: List[torch.Tensor] = [x]
  for i in range(n):
    l.append(x * float(i + 1))
  l.insert(1, x + 10.0)
  last = l.pop()
  del l[0]
  l[0] = last
  return torch.cat(l, 0)
)";
  auto n = [](int64_t v) { return at::scalar_tensor(v, at::kLong); };
  for (const char* op : {"aten::insert", "aten::pop", "aten::Delete", "aten::_set_item"}) {
    expect_script_generalizes(op, src, {at::randn({2, 3}), n(3)},
                              {{at::randn({2, 3}), n(1)}, {at::randn({2, 3}), n(5)}},
                              {13, highest_opset()}, kUnfolded);
  }
}

TEST_F(Prim, ListCopyIsIndependent) {
  expect_script_matches("aten::list",
                        "def forward(self, x, y):\n"
                        "  a = [x]\n"
                        "  b = list(a)\n"
                        "  b.append(y)\n"
                        "  return torch.cat(a), torch.cat(b)\n",
                        {at::randn({2, 3}), at::randn({1, 3})});
}

TEST_F(Prim, PopOutOfRangeFails) {
  auto m = script_module(
      "def forward(self, x):\n"
      "  l = [x]\n"
      "  l.pop(0)\n"
      "  return l.pop(0)\n");
  EXPECT_TRUE(ThrowsExportError([&] { export_model_to_bytes(m, {at::randn({2})}); },
                                ErrorCode::kModelRun,
                                {"forward() failed on the example inputs", "out of range",
                                 "Remedy: check the example inputs"}))
      << "exporting a pop from an empty list";
}

// A dict with constant keys read by constant keys is a naming of its values (Note [Dicts with
// constant keys]): d["a"], "c" in d, len(d) and d.get(k, default) resolve at export, also inside
// a branch; ONNX has no dict type.
TEST_F(Prim, DictWithConstantKeys) {
  const std::string src = R"(
def forward(self, x):
  d: Dict[str, Tensor] = {"a": x, "b": x * 2.0}
  n = len(d)
  if "c" in d:
    return d["a"]
  y = d["a"] + d["b"] * float(n) + d.get("z", x)
  if bool(x.sum() > 0):
    y = y + d["b"]
  return y
)";
  expect_script_matches("aten::mul", src, {at::randn({2, 3})});
  expect_script_matches("aten::mul", src, {-at::rand({2, 3}) - 0.5});
}

// isinstance on a Union/Optional argument depends on the argument's type, known at export: the
// branch for the other type (x[0] of a list) folds away, whichever type the example has.
TEST_F(Prim, IsinstanceOfAUnionArgumentFolds) {
  const std::string src = R"(
def forward(self, x: Union[Tensor, List[Tensor]]):
  if isinstance(x, List[Tensor]):
    return x[0] * 2.0
  else:
    assert isinstance(x, Tensor)
    return x * 3.0
)";
  expect_script_matches("aten::mul", src, {at::randn({2, 3})});
  expect_script_matches("aten::mul", src,
                        {c10::IValue(c10::List<at::Tensor>({at::randn({2, 3}), at::randn({1})}))});
}

// An argument left out takes its default (y: Optional[Tensor] = None): the export and the
// reference run both use it.
TEST_F(Prim, ArgumentLeftToItsDefault) {
  const std::string src = R"(
def forward(self, x, y: Optional[Tensor] = None, scale: float = 2.0):
  if y is None:
    return x * scale
  return x + y
)";
  expect_script_matches("aten::mul", src, {at::randn({2, 3})});
  expect_script_matches("aten::add", src, {at::randn({2, 3}), at::randn({2, 3})});
}

// An if whose branches return tensors of different ranks: the If's output has no rank, which
// the graph output declares as torch.onnx does (an empty shape; onnx's checker wants one), and
// ONNX Runtime returns either rank (PyTorch's test_floating_point_infer_dtype, by dynamic sizes).
TEST_F(Prim, BranchesReturningDifferentRanks) {
  const std::string src = R"(
def forward(self, x):
  if bool(x.sum() > 0):
    return x.sum(0) + 1
  return x * 2
)";
  expect_script_generalizes("prim::If", src, {at::ones({2, 3, 4})}, {{-at::ones({2, 3, 4})}});
}

// A scripted model's None outputs: dropped below opset 15, as torch.onnx drops them; from 15 an
// empty optional each (the Optional op), as torch.onnx returns them. Also None that type
// propagation finds (an Optional[Tensor] result of a branch folded away).
TEST_F(Prim, NoneOutputsOfAScriptedModel) {
  const std::string src = R"(
def forward(self, x, flag: bool = False):
  aux: Optional[Tensor] = None
  if flag:
    aux = x * 3
  return x + 1, (x * 2, None, (x - 1, aux))
)";
  const Inputs inputs = {at::randn({2, 3})};
  expect_script_matches("aten::add", src, inputs, {kMinOpset, 14});
  const torch::jit::Module m = script_module(src);
  for (int opset = 15; opset <= highest_opset(); ++opset) {
    SCOPED_TRACE(opset);
    ExportOptions options;
    options.opset_version = opset;
    const onnx::ModelProto model = parse_model(export_model_to_bytes(m, inputs, options));
    ASSERT_EQ(model.graph().output_size(), 5);
    for (int k : {0, 1, 3}) EXPECT_TRUE(model.graph().output(k).type().has_tensor_type()) << k;
    for (int k : {2, 4}) {
      const auto& type = model.graph().output(k).type();
      ASSERT_TRUE(type.has_optional_type()) << k;
      EXPECT_EQ(type.optional_type().elem_type().tensor_type().elem_type(),
                onnx::TensorProto::FLOAT);
    }
  }
}

// print() in scripted code (prim::Print) has no ONNX form: dropped,
// as torch.onnx drops it; so is x.tolist() whose result nothing reads.
TEST_F(Prim, PrintIsDropped) {
  expect_script_generalizes("aten::select", R"(
def forward(self, x):
  firsts = x[:, 0]
  print("firsts:", firsts)
  _: List[float] = x.tolist()
  return firsts * 2
)",
                            {at::randn({4, 3})}, {{at::randn({4, 3})}}, {kMinOpset, 17});
}

// A complex graph input is refused by name (ONNX Runtime has no complex tensors; torch.onnx
// refuses it too), with the view_as_real remedy.
TEST_F(Prim, ComplexInputIsRefusedByName) {
  const torch::jit::Module m = script_module(R"(
def forward(self, x):
  return x[:, 0]
)");
  ExportOptions options;
  options.input_names = {"signal"};
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model_to_bytes(m, {at::randn({4, 3}, at::kComplexFloat)}, options);
      },
      ErrorCode::kInvalidArgument,
      {"graph input 'signal' is a ComplexFloat tensor", "torch.view_as_real(signal)"}));
}

// Note [The shape of a None]: an optional output that is None on one path (a branch, the initial
// value of a loop) has the other path's shape, with its dim names, on the graph output, the If's
// branches and the None itself, as torch.onnx writes it; ONNX Runtime runs it with either path.
TEST_F(Prim, NoneOnOnePathHasTheOtherPathsShape) {
  const std::string if_none = R"(
def forward(self, x) -> Optional[Tensor]:
  y: Optional[Tensor] = None
  if x.size(0) > 1:
    y = x
  return y
)";
  const std::string loop_from_none = R"(
def forward(self, x) -> Optional[Tensor]:
  y: Optional[Tensor] = None
  for _ in range(x.size(0)):
    y = x * 2
  return y
)";
  auto is_batch_vector = [](const onnx::TypeProto& type) {
    if (!type.has_optional_type()) return false;
    const auto& tensor = type.optional_type().elem_type().tensor_type();
    return tensor.elem_type() == onnx::TensorProto::FLOAT && tensor.shape().dim_size() == 1 &&
           tensor.shape().dim(0).dim_param() == "batch";
  };
  for (const std::string* src : {&if_none, &loop_from_none}) {
    const torch::jit::Module m = script_module(*src);
    for (int opset = 16; opset <= highest_opset(); ++opset) {
      SCOPED_TRACE(fmt::format("opset {}: {}", opset, *src));
      ExportOptions options;
      options.opset_version = opset;
      options.input_names = {"x"};
      options.dynamic_axes = {{"x", {{0, "batch"}}}};
      const onnx::ModelProto model =
          parse_model(export_model_to_bytes(m, {at::ones({2})}, options));
      EXPECT_TRUE(is_batch_vector(model.graph().output(0).type()))
          << model.graph().output(0).DebugString();
      for (const auto& node : model.graph().node()) {
        for (const auto& attr : node.attribute()) {
          if (attr.name() == "then_branch" || attr.name() == "else_branch") {
            EXPECT_TRUE(is_batch_vector(attr.g().output(0).type())) << attr.name();
          }
        }
      }
    }
    // The model with its Nones shaped runs in ONNX Runtime with libtorch's result.
    const Inputs inputs = {at::ones({2})};
    expect_exports_match(
        [&](const std::string& path, const ExportOptions& o) {
          ExportOptions options = o;
          options.input_names = {"x"};
          options.dynamic_axes = {{"x", {{0, "batch"}}}};
          export_model(m, inputs, path, options);
        },
        inputs, frontend::run_module(m, cloned(inputs)), 16, 17, true, {}, {});
  }
}

// Issue 24: an Optional that is None on one path and a tensor on another. Where the path is
// decided by data (a branch on x.sum()), it is an ONNX optional from opset 16; a loop of constant
// trip count that carries it from None is unrolled (any opset).
TEST_F(Prim, OptionalSetInADataDependentBranch) {
  const std::string src = R"(
def forward(self, x):
  y: Optional[Tensor] = None
  if bool(x.sum() > 0):
    y = x * 2
  if y is None:
    return x - 1
  return y + 1
)";
  expect_script_generalizes("prim::If", src, {at::ones({2, 3})}, {{-at::ones({2, 3})}}, {16, 17});
  expect_script_fails(src, {at::ones({2, 3})}, 15,
                      "needs opset 16 (ONNX If and Loop pass it on as an optional value)");
}

// The optional read (refined) inside a later loop, which carries it: the loop's input stays an
// optional (the fuzzer found it unwrapped before the loop, failing in ORT when None).
TEST_F(Prim, OptionalReadInsideALaterLoop) {
  const std::string src = R"(
def forward(self, x, n: int):
  y: Optional[Tensor] = None
  if bool(x.sum() > 0):
    y = x * 2
  acc = x
  for i in range(n):
    if y is not None:
      acc = acc + y
  return acc
)";
  expect_script_generalizes("prim::Loop", src, {at::ones({2, 3}), c10::IValue(int64_t{3})},
                            {{-at::ones({2, 3}), c10::IValue(int64_t{2})}}, {16, 17});
}

// Note [Facts known at export]: grad mode, autocast, requires_grad and is_nested are False in the
// exported model, as in inference under no_grad (the reference run's mode); with folding off
// their converters give the constants, and the If they decide is exported with both branches.
TEST_F(Prim, RunTimeModeChecksAreFalseAtExport) {
  ScriptOptions unfolded;
  unfolded.fold = false;
  for (const auto& [op, check] : std::vector<std::pair<std::string, std::string>>{
           {"aten::is_grad_enabled", "torch.is_grad_enabled()"},
           {"aten::is_autocast_enabled", "torch.is_autocast_enabled()"},
           {"aten::is_autocast_cpu_enabled", "torch.is_autocast_cpu_enabled()"},
           {"prim::requires_grad", "x.requires_grad"},
           {"prim::is_nested", "x.is_nested"}}) {
    SCOPED_TRACE(op);
    const std::string src =
        "def forward(self, x):\n  if " + check + ":\n    return x * 2.0\n  return x + 1.0\n";
    expect_script_matches(op, src, {at::randn({2, 3})}, unfolded);
  }
}

// torch._nested_tensor_from_mask_left_aligned (nn.TransformerEncoder's check before it packs a
// nested tensor) is True at export: Note [Nested tensors from a padding mask].
TEST_F(Prim, NestedTensorMaskIsLeftAlignedAtExport) {
  ScriptOptions unfolded;
  unfolded.fold = false;
  const std::string src =
      "def forward(self, x, keep):\n"
      "  if torch._nested_tensor_from_mask_left_aligned(x, keep):\n"
      "    return x * 2.0\n"
      "  return x + 1.0\n";
  const at::Tensor keep = at::arange(4).unsqueeze(0) < at::tensor({4, 2}, at::kLong).unsqueeze(1);
  expect_script_matches("aten::_nested_tensor_from_mask_left_aligned", src,
                        {at::randn({2, 4, 3}), keep}, unfolded);
}

// `a + b` of lists (aten::add.t): the elements of both, for lists of tensors
// (nn.MultiheadAttention's cross-attention: `[q] + kv.chunk(2)`) and of ints (a shape built from
// two lists).
TEST_F(Prim, ListConcatenation) {
  expect_script_matches("aten::add",
                        "def forward(self, x, y):\n  parts = [x] + y.chunk(2, 1)\n"
                        "  return torch.cat(parts, 1) * 2.0\n",
                        {at::randn({2, 3}), at::randn({2, 4})});
  ScriptOptions unfolded;  // folding makes the shape list a constant
  unfolded.fold = false;
  expect_script_matches("aten::add",
                        "def forward(self, x):\n  s = x.shape[:1] + [-1]\n  return x.reshape(s)\n",
                        {at::randn({2, 3, 4})}, unfolded);
}

// A list of lists built in straight-line code (Note [Lists of lists]): read at constant positions
// (also negative ones), unpacked, measured, concatenated and returned (its inner lists flattened
// into outputs, as torch.onnx flattens nested outputs).
TEST_F(Prim, ListsOfListsInStraightLineCode) {
  expect_script_matches("aten::mul",
                        "def forward(self, x, y):\n"
                        "  pairs: List[List[Tensor]] = [[x, y]]\n"
                        "  pairs.append([x * 2.0, y + 1.0])\n"
                        "  more = pairs + [[y, x]]\n"
                        "  a, b, c = more\n"
                        "  return more[-1][0] * len(more) + a[1] + b[0], pairs\n",
                        {at::randn({2, 3}), at::randn({2, 3})});
}

// A list of lists built from reads of another (`b = [a[0]]`): its reads resolve to the inner lists
// themselves (they went to the reads of `a`, whose nodes are removed: an internal error before).
TEST_F(Prim, ListsOfListsBuiltFromReadsOfAnother) {
  expect_script_matches("aten::mul",
                        "def forward(self, x, y):\n"
                        "  a: List[List[Tensor]] = [[x, y]]\n"
                        "  b: List[List[Tensor]] = [a[0]]\n"
                        "  b.append(a[-1])\n"
                        "  return b[0][1] * 2.0, b\n",
                        {at::randn({2, 3}), at::randn({2, 3})});
}

// A list of lists that a loop carries has no ONNX form: refused by name.
TEST_F(Prim, ListsOfListsCarriedByALoopAreRefused) {
  const std::string src =
      "def forward(self, x):\n"
      "  states: List[List[Tensor]] = []\n"
      "  for i in range(x.size(0)):\n"
      "    states.append([x[i], x[i] * 2.0])\n"
      "  return states[1][0]\n";
  expect_script_fails(src, {at::randn({3, 2})}, 17, "is a list of lists (List[List[Tensor]])");
}

// An optional that nested loops carry but that stays None (assigned only under `if o is not
// None`): nothing is carried, its checks fold, at every opset (Note [Values that stay None]).
// Found by the fuzzer ("the element dtype of optional output 2 is unknown").
TEST_F(Prim, OptionalThatStaysNoneInNestedLoops) {
  const std::string src = R"(
def forward(self, x, n: int):
  o: Optional[Tensor] = None
  i = 0
  while i < n:
    i += 1
    if bool(x.sum() > 0.3):
      j = 0
      while j < x.size(1):
        j += 1
        v = x[0]
        if o is not None:
          v = v + o
          o = v
        x = x - v.sum()
  return x
)";
  expect_script_generalizes("prim::Loop", src, {at::rand({3, 4}), c10::IValue(int64_t{2})},
                            {{-at::rand({3, 4}), c10::IValue(int64_t{3})}}, {9, 11, 17});
}

TEST_F(Prim, TupleWithOptionalReturnedFromBranches) {
  const std::string src = R"(
def forward(self, x) -> Tuple[Optional[Tensor], Tensor]:
  if bool(x.sum() > 0):
    return x * 2, x
  return None, x + 3
)";
  // The optional output holds a tensor on the inputs ORT is run on.
  expect_script_generalizes("prim::If", src, {at::ones({2, 3})}, {{at::rand({2, 3}) + 1}},
                            {16, 17});
}

TEST_F(Prim, OptionalCarriedFromNoneByALoop) {
  // A constant trip count: unrolled, `prev is not None` folds in each copy.
  const std::string src = R"(
def forward(self, x):
  prev: Optional[Tensor] = None
  out = x
  for i in range(3):
    if prev is not None:
      out = out + prev
    prev = out * 0.5
  return out
)";
  expect_script_generalizes("aten::add", src, {at::randn({2, 3})}, {{at::randn({2, 3})}},
                            {9, 11, 17});
}

TEST_F(Prim, OptionalRefinedInsideTheLoopThatCarriesIt) {
  // `o if o is not None else x` feeding a tensor op in the body of the loop that carries o from
  // None. The refinement of the None seen on entry is no value: it made the branch's Tensor
  // output Optional, the mul lost its type, and `o is not None` folded to false (the export
  // returned x * x; found by the fuzzer).
  const std::string src = R"(
def forward(self, x):
  o: Optional[Tensor] = None
  for i in range(3):
    o = x * (o if o is not None else x)
  if o is not None:
    return o
  return x
)";
  expect_script_generalizes("aten::mul", src, {at::randn({2, 3})}, {{at::randn({2, 3})}},
                            {9, 11, 17});
}

TEST_F(Prim, TupleWithNoneFromAHelperUnderAConstantFlag) {
  const std::string src = R"(
def forward(self, x):
  a, b = self.helper(x, False)
  if a is None:
    return b
  return b + a

def helper(self, x: Tensor, want: bool) -> Tuple[Optional[Tensor], Tensor]:
  if want:
    return x.sum(0), x
  return None, x + 1
)";
  expect_script_generalizes("aten::add", src, {at::randn({2, 3})}, {{at::randn({2, 3})}}, {9, 17});
}

// A list attribute of tensors (nn.LSTM's _flat_weights in a scripted LSTM, a plain List[Tensor]
// of weights) read in forward: each tensor is lifted as a parameter, the list is built of them.
// Was: an internal error ("Unsupported value kind: GenericList").
TEST_F(Prim, ListOfTensorsAttribute) {
  torch::jit::Module m("ListAttribute");
  m.register_attribute("ws", c10::ListType::ofTensors(),
                       c10::List<at::Tensor>({at::randn({3}), at::randn({3})}));
  m.define(R"(
def forward(self, x):
    y = x
    for w in self.ws:
        y = y * w
    return y + self.ws[1]
)");
  // Iterating a list of tensors takes ONNX sequences: opset 11.
  expect_script_matches(std::vector<std::string>{"aten::mul", "aten::add"}, m, {at::randn({2, 3})},
                        {11});
}

// Module state written in forward (Note [Module state written in forward]): reads after the
// write see the new value (an int counter, a tensor buffer).
TEST_F(Prim, ModuleStateWrittenInForward) {
  torch::jit::Module m("Counter");
  m.register_attribute("count", c10::IntType::get(), int64_t{2});
  m.register_buffer("last", at::zeros({2, 3}));
  m.define(R"(
def forward(self, x):
    self.count += 1
    y = x * self.count + self.last
    self.last = y
    return y + self.last
)");
  expect_script_matches("aten::mul", m, {at::randn({2, 3})});

  // An in-place write to a buffer through a local name, in a loop: the reference run must leave
  // the buffer as it was, or the export reads the written values (found by the fuzzer).
  torch::jit::Module alias("WritesABufferInPlace");
  alias.register_buffer("w", at::randn({2, 3}));
  alias.define(R"(
def forward(self, x):
    v = self.w
    for i in range(x.size(0)):
        v += x[i]
    return v * 2
)");
  const at::Tensor before = alias.attr("w").toTensor().clone();
  expect_script_matches("aten::add", alias, {at::randn({3, 2, 3})});
  EXPECT_TRUE(alias.attr("w").toTensor().equal(before));
}

// Module state written inside loops and branches (Note [Module state written in forward]): an
// attribute written in a branch is an If output, one written in a loop a loop-carried value, and
// the reads after the write (in later iterations too) see the new value: a submodule's parameter
// and Optional[Tensor] attribute, an int counter, a float set in a branch, a buffer added to in
// place. The cases take other trip counts (none too) and the other branches. Was refused ("inside
// a loop or branch"; PyTorch's test_set_attr_2 to _5, test_set_attr_in_loop,
// test_inplace_attr_with_loop).
TEST_F(Prim, ModuleStateWrittenInLoopsAndBranches) {
  torch::jit::Module inner("Inner");
  inner.register_parameter("w", at::randn({3}), false);
  inner.register_attribute("bias", c10::OptionalType::create(c10::TensorType::get()),
                           at::randn({3}));
  torch::jit::Module m("WritesStateInControlFlow");
  m.register_module("inner", inner);
  m.register_attribute("steps", c10::IntType::get(), int64_t{1});
  m.register_attribute("scale", c10::FloatType::get(), 1.0);
  m.register_buffer("acc", at::zeros({3}));
  m.define(R"(
def forward(self, x, n):
    for i in range(int(n)):
        if i % 2 == 0:
            self.inner.w = self.inner.w + x[i]
        self.steps += 1
        b = self.inner.bias
        if b is not None:
            self.inner.bias = b * 0.5 + self.inner.w
        for j in range(2):
            self.acc += x[i] * self.steps
    if bool(x.sum() > 0):
        self.scale = 2.0
    return self.inner.w * self.scale, self.inner.bias, self.acc - self.steps
)");
  const at::Tensor x = at::randn({4, 3});
  expect_script_generalizes("prim::Loop", m, {x.abs(), at::scalar_tensor(2, at::kLong)},
                            {{x.abs(), at::scalar_tensor(4, at::kLong)},
                             {-x.abs(), at::scalar_tensor(3, at::kLong)},
                             {-x.abs(), at::scalar_tensor(0, at::kLong)}},
                            {9, 11, 17});

  // A write in a branch, with no read of the attribute after it: the If's output goes unused.
  torch::jit::Module branch("WritesInABranch");
  branch.register_attribute("count", c10::IntType::get(), int64_t{0});
  branch.define(R"(
def forward(self, x):
    if bool(x.sum() > 0):
        self.count = 1
    y = x * self.count
    if bool(x.sum() > 1):
        self.count = 5
    return y
)");
  expect_script_generalizes("prim::If", branch, {at::ones({2, 3})}, {{-at::ones({2, 3})}},
                            {9, 11, 17});

  // `self.acc += y` stores the tensor the attribute holds already: `v`, read before the loop,
  // sees the additions, as in PyTorch (torch.onnx 2.6 gives `v` and `self.acc` wrong).
  torch::jit::Module alias("AddsToABufferInALoop");
  alias.register_buffer("acc", at::ones({3}));
  alias.define(R"(
def forward(self, x, n):
    v = self.acc
    for i in range(int(n)):
        self.acc += x[i] * self.acc.sum()
    return v * 2, self.acc
)");
  expect_script_generalizes("prim::Loop", alias, {x, at::scalar_tensor(3, at::kLong)},
                            {{x, at::scalar_tensor(0, at::kLong)}}, {9, 11, 17});
}

// A reshape to sizes computed from the length of a list built in a loop (type propagation holds
// one iteration's elements: the sizes are approximate, the rank is known). Was "the operands'
// dtypes are unknown" (found by the fuzzer).
TEST_F(Prim, ReshapeToTheLengthOfAListBuiltInALoop) {
  const std::string src = R"(
def forward(self, x):
    ls: List[Tensor] = []
    for i in range(3):
        ls.append(x[i] * 2.0)
    acc = self.w.reshape(len(ls), 1, 2)
    for e in ls:
        acc = acc + e.sum()
    return acc
)";
  // Below 11 the list's run-time length is refused (ONNX sequences).
  expect_script_matches("aten::reshape", script_module(src, {{"w", at::randn({6})}}),
                        {at::randn({3, 1, 2})}, {/*first=*/11});
}

// ----- nested containers walked ------------------------------------------------------------
// Issue 40: tuples, lists and lists of lists nested in each other, made by a helper method,
// through a data-dependent branch or directly, unpacked by destructuring and read by position
// (negative ones too), and returned beside a sum of all their tensors (flattened into outputs).
// Each structure is one TorchScript module written by the walker below; any export error, any
// internal error ("produced 2 values for 1 outputs") or any wrong number fails it.
struct Nest {
  enum Kind { kTensor, kList, kListOfLists, kTuple } kind;
  std::vector<Nest> items;  // a tuple's
};

// Its TorchScript type (`type`), or a short name for the test's name.
std::string nest_text(const Nest& n, bool type) {
  switch (n.kind) {
    case Nest::kTensor:
      return type ? "Tensor" : "T";
    case Nest::kList:
      return type ? "List[Tensor]" : "L";
    case Nest::kListOfLists:
      return type ? "List[List[Tensor]]" : "LL";
    case Nest::kTuple: {
      const std::string a = nest_text(n.items[0], type), b = nest_text(n.items[1], type);
      return type ? fmt::format("Tuple[{}, {}]", a, b) : fmt::format("Tup{}_{}end", a, b);
    }
  }
  return "";
}

bool has_list_of_lists(const Nest& n) {
  if (n.kind == Nest::kListOfLists) return true;
  for (const Nest& item : n.items) {
    if (has_list_of_lists(item)) return true;
  }
  return false;
}

// An expression of structure `n` over `x`, each tensor another (x * k + k).
std::string nest_expr(const Nest& n, int& k) {
  auto leaf = [&] {
    ++k;
    return fmt::format("(x * {0}.0 + {0}.0)", k);
  };
  switch (n.kind) {
    case Nest::kTensor:
      return leaf();
    case Nest::kList:
      return fmt::format("[{}, {}]", leaf(), leaf());
    case Nest::kListOfLists: {
      std::string a = leaf(), b = leaf(), c = leaf();
      return fmt::format("[[{}, {}], [{}]]", a, b, c);
    }
    case Nest::kTuple: {
      std::string a = nest_expr(n.items[0], k);
      return fmt::format("({}, {})", a, nest_expr(n.items[1], k));
    }
  }
  return "";
}

// Statements adding every tensor of `var` (of structure `n`) to `acc`, weighted by position.
void nest_sum(const Nest& n, const std::string& var, std::string& body, int& names) {
  switch (n.kind) {
    case Nest::kTensor:
      body += fmt::format("  acc = acc + {}\n", var);
      return;
    case Nest::kList:
      body += fmt::format("  acc = acc + {0}[0] + {0}[-1] * 3.0 + len({0})\n", var);
      return;
    case Nest::kListOfLists:
      body +=
          fmt::format("  acc = acc + {0}[0][1] + {0}[-1][0] * len({0}) + {0}[0][-2] * 5.0\n", var);
      return;
    case Nest::kTuple: {
      const std::string a = fmt::format("v{}", names++), b = fmt::format("v{}", names++);
      body += fmt::format("  {}, {} = {}\n", a, b, var);
      nest_sum(n.items[0], a, body, names);
      nest_sum(n.items[1], b, body, names);
      return;
    }
  }
}

enum class NestSource { kHelper, kBranch };

std::string nest_source(const Nest& n, NestSource from) {
  int k = 0;
  std::string src =
      fmt::format("def make(self, x) -> {}:\n  return {}\n\n", nest_text(n, true), nest_expr(n, k));
  src += "def forward(self, x):\n";
  if (from == NestSource::kHelper) {
    src += "  r = self.make(x)\n";
  } else {
    src += "  if bool(x.sum() > 0):\n    r = self.make(x)\n  else:\n    r = self.make(x * -2.0)\n";
  }
  src += "  acc = torch.zeros_like(x)\n";
  int names = 0;
  nest_sum(n, "r", src, names);
  return src + "  return acc, r\n";
}

std::vector<Nest> nests() {
  const Nest t{Nest::kTensor, {}}, l{Nest::kList, {}}, ll{Nest::kListOfLists, {}};
  std::vector<Nest> out{t, l, ll};
  for (const Nest& a : {t, l, ll}) {
    for (const Nest& b : {t, l, ll}) out.push_back({Nest::kTuple, {a, b}});
  }
  const Nest tl{Nest::kTuple, {t, l}}, lll{Nest::kTuple, {ll, t}};
  out.push_back({Nest::kTuple, {tl, ll}});
  out.push_back({Nest::kTuple, {t, {Nest::kTuple, {lll, {Nest::kTuple, {t, t}}}}}});
  out.push_back({Nest::kTuple, {{Nest::kTuple, {t, tl}}, t}});
  out.push_back({Nest::kTuple, {{Nest::kTuple, {l, l}}, {Nest::kTuple, {t, ll}}}});
  return out;
}

struct NestCase {
  Nest nest;
  NestSource from;
};

std::vector<NestCase> nest_cases() {
  std::vector<NestCase> out;
  for (const Nest& n : nests()) {
    out.push_back({n, NestSource::kHelper});
    // A list of lists out of an if has no ONNX form (Prim.ListsOfListsCarriedByALoopAreRefused).
    if (!has_list_of_lists(n)) out.push_back({n, NestSource::kBranch});
  }
  return out;
}

class NestedContainers : public ::testing::TestWithParam<NestCase> {};

TEST_P(NestedContainers, ExportAndMatch) {
  const NestCase& c = GetParam();
  const std::string src = nest_source(c.nest, c.from);
  SCOPED_TRACE(src);
  // Lists out of the if are its elements (Note [Lists out of branches]): every opset.
  for (const at::Tensor& x : {at::randn({2, 3}), -at::rand({2, 3}) - 0.5}) {
    expect_script_matches("aten::add", src, {x});
  }
}

INSTANTIATE_TEST_SUITE_P(Walked, NestedContainers, ::testing::ValuesIn(nest_cases()),
                         [](const ::testing::TestParamInfo<NestCase>& info) {
                           return nest_text(info.param.nest, false) +
                                  (info.param.from == NestSource::kHelper ? "_helper" : "_branch");
                         });

}  // namespace
}  // namespace torchonnx::testing
