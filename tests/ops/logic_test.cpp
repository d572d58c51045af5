// Numeric tests of the logic converters: comparisons (with PyTorch's type promotion), logical and
// bitwise ops, shifts and casts, exported at every opset, run in ORT and compared with libtorch
// (values and dtypes).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Logic : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- comparisons ------------------------------------------------------------------------------

using TensorCmp = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
using ScalarCmp = at::Tensor (*)(const at::Tensor&, const at::Scalar&);

struct Comparison {
  const char* op;
  TensorCmp tensors;
  ScalarCmp scalar;
};

const std::vector<Comparison>& comparisons() {
  static const std::vector<Comparison> all = {
      {"aten::eq", at::eq, at::eq}, {"aten::ne", at::ne, at::ne}, {"aten::lt", at::lt, at::lt},
      {"aten::le", at::le, at::le}, {"aten::gt", at::gt, at::gt}, {"aten::ge", at::ge, at::ge},
  };
  return all;
}

void expect_tensor_comparisons(const at::Tensor& x, const at::Tensor& y) {
  for (const auto& c : comparisons()) {
    SCOPED_TRACE(c.op);
    TensorCmp fn = c.tensors;
    expect_op_matches(c.op, [fn](const Inputs& in) { return fn(arg(in, 0), arg(in, 1)); }, {x, y});
  }
}

void expect_scalar_comparisons(const at::Tensor& x, const at::Scalar& s) {
  for (const auto& c : comparisons()) {
    SCOPED_TRACE(c.op);
    ScalarCmp fn = c.scalar;
    expect_op_matches(c.op, [fn, s](const Inputs& in) { return fn(arg(in, 0), s); }, {x});
  }
}

TEST_F(Logic, CompareFloatTensorsWithTiesInfAndNaN) {
  // Floats below opset 11 have no Equal: ties, infinities and NaN check that lowering.
  expect_tensor_comparisons(floats({1, 2, 3, kNaN, kInf, -kInf, kInf, 0, -0.0, kNaN}),
                            floats({1, 3, 2, 1, kInf, kInf, -kInf, -0.0, 0, kNaN}));
}

TEST_F(Logic, CompareBroadcastFloatTensors) {
  at::Tensor x = at::randint(-2, 2, {2, 3, 4}).to(at::kFloat);
  expect_tensor_comparisons(x, at::randint(-2, 2, {3, 1}).to(at::kFloat));
}

TEST_F(Logic, CompareInt64Tensors) {
  expect_tensor_comparisons(longs({-5, 0, 3, 7, 7}), longs({-5, 1, 2, 7, 8}));
}

TEST_F(Logic, CompareInt32WithInt64Tensors) {
  expect_tensor_comparisons(at::tensor({-5, 0, 3, 7}, at::kInt), longs({-5, 1, 2, 7}));
}

TEST_F(Logic, CompareBoolTensors) {
  expect_tensor_comparisons(bools({0, 0, 1, 1}), bools({0, 1, 0, 1}));
}

TEST_F(Logic, CompareInt64WithFloatTensorPromotes) {
  expect_tensor_comparisons(longs({-1, 0, 2, 3}), floats({-1.5, 0, 2, 2.5}));
}

TEST_F(Logic, CompareFloatTensorWithZeroDimDoubleStaysFloat) {
  // 0.1f != 0.1: comparing in double (a naive promotion) would get eq/ne wrong.
  expect_tensor_comparisons(floats({0.1f, 0.2f, 0.05f}), at::scalar_tensor(0.1, at::kDouble));
}

TEST_F(Logic, CompareZeroDimTensors) {
  expect_tensor_comparisons(at::scalar_tensor(2.0), at::scalar_tensor(3.0));
}

TEST_F(Logic, CompareFloatTensorWithScalars) {
  // 0.1 is compared as float(0.1) like PyTorch does (wrapped numbers keep the tensor's dtype).
  expect_scalar_comparisons(floats({0.1f, 0.2f, -1, kNaN}), 0.1);
  expect_scalar_comparisons(floats({-2, 0, 2, 3.5}), 2);
}

TEST_F(Logic, CompareInt64TensorWithScalars) {
  expect_scalar_comparisons(longs({1, 2, 3, -3}), 2.5);  // promotes to float
  expect_scalar_comparisons(longs({1, 2, 3, -3}), 2);
}

TEST_F(Logic, CompareBoolTensorWithScalars) {
  // A bool is not a Scalar ("number") for the tracer or the script compiler in 1.13: int and
  // float scalars are what reach a bool tensor's comparison.
  expect_scalar_comparisons(bools({0, 1}), 0.5);
  expect_scalar_comparisons(bools({0, 1}), 1);
}

TEST_F(Logic, CompareInScript) {
  expect_script_matches("aten::gt", "def forward(self, x):\n  return x > 2.5\n",
                        {longs({1, 2, 3, 4})});
  expect_script_matches("aten::eq", "def forward(self, x, y):\n  return x == y\n",
                        {at::randint(0, 3, {2, 3}), at::randint(0, 3, {3})});
  // 2 <= x is compiled as x >= 2.
  expect_script_matches("aten::ge", "def forward(self, x):\n  return 2 <= x\n",
                        {floats({1, 2, 3})});
}

TEST_F(Logic, CompareIntAndFloatScalars) {
  // Comparisons of sizes are int/float scalar ops: unfolded, they reach the converters.
  const ScriptOptions unfolded{kMinOpset, highest_opset(), /*fold=*/false};
  for (const char* cmp : {"==", "!=", "<", "<=", ">", ">="}) {
    SCOPED_TRACE(cmp);
    static const std::map<std::string, std::string> kOps = {{"==", "aten::eq"}, {"!=", "aten::ne"},
                                                            {"<", "aten::lt"},  {"<=", "aten::le"},
                                                            {">", "aten::gt"},  {">=", "aten::ge"}};
    expect_script_matches(kOps.at(cmp),
                          fmt::format("def forward(self, x):\n  n = x.size(0)\n"
                                      "  return torch.tensor([n {0} 3, n {0} 4, n {0} 3.5, "
                                      "n * 0.5 {0} 1.5]) | (x > 0)\n",
                                      cmp),
                          {at::randn({3, 4})}, unfolded);
  }
}

// ----- logical
// ------------------------------------------------------------------------------------

TEST_F(Logic, LogicalBinaryOnAnyDtypes) {
  using Fn = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
  for (auto [op, fn] :
       std::vector<std::pair<const char*, Fn>>{{"aten::logical_and", at::logical_and},
                                               {"aten::logical_or", at::logical_or},
                                               {"aten::logical_xor", at::logical_xor}}) {
    SCOPED_TRACE(op);
    auto f = [fn = fn](const Inputs& in) { return fn(arg(in, 0), arg(in, 1)); };
    expect_op_matches(op, f, {bools({0, 0, 1, 1}), bools({0, 1, 0, 1})});
    expect_op_matches(op, f, {floats({0, -0.0, 2.5, kNaN}), longs({3, 0, 0, 1})});
    expect_op_matches(op, f, {at::randint(-1, 2, {2, 3}), at::randint(-1, 2, {3}) > 0});
  }
}

TEST_F(Logic, LogicalNot) {
  auto f = [](const Inputs& in) { return at::logical_not(arg(in, 0)); };
  for (const at::Tensor& x : {bools({0, 1}), floats({0, 1.5, -0.0, kNaN}), longs({0, 3, -1})}) {
    expect_op_matches("aten::logical_not", f, {x});
  }
}

// ----- bitwise
// ------------------------------------------------------------------------------------

TEST_F(Logic, BitwiseOnBool) {
  Inputs in{bools({0, 0, 1, 1}), bools({0, 1, 0, 1})};
  // The C++ operators &, |, ^ are recorded as bitwise_and/or/xor; the script compiler emits
  // __and__/__or__/__xor__.
  expect_op_matches(
      "aten::bitwise_and", [](const Inputs& in) { return at::bitwise_and(arg(in, 0), arg(in, 1)); },
      in);
  expect_op_matches(
      "aten::bitwise_or", [](const Inputs& in) { return arg(in, 0) | arg(in, 1); }, in);
  expect_op_matches(
      "aten::bitwise_xor", [](const Inputs& in) { return at::bitwise_xor(arg(in, 0), arg(in, 1)); },
      in);
  for (auto [op, py] : std::vector<std::pair<const char*, const char*>>{
           {"aten::__and__", "&"}, {"aten::__or__", "|"}, {"aten::__xor__", "^"}}) {
    SCOPED_TRACE(op);
    expect_script_matches(op, fmt::format("def forward(self, x, y):\n  return x {} y\n", py), in);
  }
}

TEST_F(Logic, BitwiseOnBoolInScript) {
  expect_script_matches("aten::__or__", "def forward(self, x):\n  return (x > 0) | (x < -1)\n",
                        {at::randn({3, 4})});
}

TEST_F(Logic, BitwiseAndWithLowBitMaskOnIntegers) {
  // x & (2^k - 1) keeps the k low bits of the two's complement: exact as x mod 2^k.
  at::Tensor x = longs({-9, -8, -1, 0, 1, 7, 255, 256, -256, 1000});
  for (int64_t mask : {1, 7, 255, 0}) {
    expect_op_matches("aten::bitwise_and",
                      [mask](const Inputs& in) { return at::bitwise_and(arg(in, 0), mask); }, {x});
  }
  expect_op_matches("aten::bitwise_and",
                    [](const Inputs& in) { return at::bitwise_and(arg(in, 0), 15); },
                    {at::tensor({-17, -1, 0, 31}, at::kInt)});
  expect_script_matches("aten::__and__", "def forward(self, x):\n  return x & 3\n", {x});
}

// From opset 18: BitwiseAnd/Or/Xor/Not on every integer type (signed values, uint8 wrapping).
TEST_F(Logic, BitwiseOnIntegerTensorsFromOpset18) {
  TORCHONNX_SKIP_BELOW_OPSET(18);
  for (at::ScalarType type : {at::kLong, at::kInt, at::kShort, at::kChar, at::kByte}) {
    const bool is_unsigned = type == at::kByte;
    at::Tensor x =
        (is_unsigned ? longs({0, 1, 7, 200, 255, 96}) : longs({-9, -1, 0, 7, 100, -128})).to(type);
    at::Tensor y =
        (is_unsigned ? longs({255, 3, 8, 55, 15, 33}) : longs({6, -3, 5, -8, 27, 127})).to(type);
    Inputs in{x, y};
    expect_op_matches(
        "aten::bitwise_and",
        [](const Inputs& in) { return at::bitwise_and(arg(in, 0), arg(in, 1)); }, in, 18);
    expect_op_matches(
        "aten::bitwise_or", [](const Inputs& in) { return at::bitwise_or(arg(in, 0), arg(in, 1)); },
        in, 18);
    expect_op_matches(
        "aten::bitwise_xor", [](const Inputs& in) { return at::bitwise_xor(arg(in, 0), 6); }, in,
        18);
    expect_op_matches(
        "aten::bitwise_not", [](const Inputs& in) { return at::bitwise_not(arg(in, 0)); }, in, 18);
  }
  const Inputs in{longs({5, -3}), longs({6, 1})};
  expect_script_matches({"aten::__and__", "aten::__or__", "aten::__xor__"},
                        script_module("def forward(self, x, y):\n  return (x & y) | (x ^ 6)\n"), in,
                        {18});
}

TEST_F(Logic, BitwiseOnIntegerTensorsNeedsOpset18) {
  Inputs in{longs({5, 3}), longs({6, 1})};
  for (int opset : {9, 17}) {
    expect_export_fails([](const Inputs& in) { return at::bitwise_and(arg(in, 0), arg(in, 1)); },
                        in, opset, "bitwise_and on integer tensors needs ONNX BitwiseAnd");
    expect_export_fails([](const Inputs& in) { return arg(in, 0) | arg(in, 1); }, in, opset,
                        "bitwise_or on integer tensors needs ONNX BitwiseOr of opset 18; export "
                        "with opset >= 18");
    expect_export_fails([](const Inputs& in) { return at::bitwise_xor(arg(in, 0), 6); }, in, opset,
                        "bitwise_xor on integer tensors needs ONNX BitwiseXor");
    // 6 is not a low-bit mask.
    expect_export_fails([](const Inputs& in) { return at::bitwise_and(arg(in, 0), 6); }, in, opset,
                        "bitwise_and on integer tensors needs ONNX BitwiseAnd");
  }
}

TEST_F(Logic, BitwiseNot) {
  auto f = [](const Inputs& in) { return at::bitwise_not(arg(in, 0)); };
  expect_op_matches("aten::bitwise_not", f, {bools({0, 1})});
  expect_op_matches("aten::bitwise_not", f,
                    {longs({0, -1, 5, -6, std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()})});
  expect_op_matches("aten::bitwise_not", f, {at::tensor({0, -1, 5, 2147483647}, at::kInt)});
  expect_op_matches("aten::bitwise_not", f, {at::tensor({0, 1, 200, 255}, at::kByte)});
  expect_op_matches("aten::bitwise_not", f, {at::tensor({0, -128, 127, 5}, at::kChar)});
}

TEST_F(Logic, BitwiseNotInScript) {
  expect_script_matches("aten::bitwise_not", "def forward(self, x):\n  return ~(x > 0)\n",
                        {at::randn({2, 3})});
}

// ----- shifts -----------------------------------------------------------------------------------

TEST_F(Logic, ShiftInt64ByScalar) {
  at::Tensor x = longs({-9, -8, -1, 0, 1, 7, 1000, 3});
  for (int64_t n : {0, 1, 3}) {
    expect_op_matches("aten::__lshift__",
                      [n](const Inputs& in) { return at::__lshift__(arg(in, 0), n); }, {x});
    expect_op_matches("aten::__rshift__",
                      [n](const Inputs& in) { return at::__rshift__(arg(in, 0), n); }, {x});
  }
  // Wraps around like ATen's shift of the unsigned representation.
  expect_op_matches("aten::__lshift__",
                    [](const Inputs& in) { return at::__lshift__(arg(in, 0), 62); },
                    {longs({3, -1, 1})});
}

TEST_F(Logic, ShiftByTensor) {
  at::Tensor x = longs({-9, -8, -1, 0, 1, 7, 1000, 3});
  at::Tensor n = longs({0, 1, 2, 3, 4, 5, 6, 40});
  expect_op_matches("aten::__lshift__",
                    [](const Inputs& in) { return at::__lshift__(arg(in, 0), arg(in, 1)); },
                    {x, n});
  expect_op_matches("aten::__rshift__",
                    [](const Inputs& in) { return at::__rshift__(arg(in, 0), arg(in, 1)); },
                    {x, n});
}

TEST_F(Logic, ShiftNarrowIntegers) {
  expect_op_matches("aten::__rshift__",
                    [](const Inputs& in) { return at::__rshift__(arg(in, 0), 1); },
                    {at::tensor({-7, 7, -1, 100}, at::kInt)});
  expect_op_matches("aten::__lshift__",
                    [](const Inputs& in) { return at::__lshift__(arg(in, 0), 1); },
                    {at::tensor({200, 1, 127, 128}, at::kByte)});
  expect_op_matches("aten::__lshift__",
                    [](const Inputs& in) { return at::__lshift__(arg(in, 0), 2); },
                    {at::tensor({-100, 1, 40, 31}, at::kChar)});
}

// bitwise_left_shift / bitwise_right_shift share __lshift__/__rshift__'s lowering: exact
// multiplication and floor division by 2^n (arithmetic shift of negative numbers).
TEST_F(Logic, BitwiseShiftOverloads) {
  at::Tensor x = longs({-9, -8, -1, 0, 1, 7, 1000, 3});
  at::Tensor n = longs({0, 1, 2, 3, 4, 5, 6, 40});
  expect_op_matches("aten::bitwise_left_shift",
                    [](const Inputs& in) { return at::bitwise_left_shift(arg(in, 0), arg(in, 1)); },
                    {x, n});
  expect_op_matches(
      "aten::bitwise_right_shift",
      [](const Inputs& in) { return at::bitwise_right_shift(arg(in, 0), arg(in, 1)); }, {x, n});
  for (int64_t k : {0, 1, 3}) {
    SCOPED_TRACE(k);
    expect_op_matches("aten::bitwise_left_shift",
                      [k](const Inputs& in) { return at::bitwise_left_shift(arg(in, 0), k); }, {x});
    expect_op_matches("aten::bitwise_right_shift",
                      [k](const Inputs& in) { return at::bitwise_right_shift(arg(in, 0), k); },
                      {x});
  }
  // Scalar_Tensor: a scalar shifted by each element of a tensor.
  expect_op_matches("aten::bitwise_left_shift",
                    [](const Inputs& in) { return at::bitwise_left_shift(5, arg(in, 0)); },
                    {longs({0, 1, 4, 20})});
  expect_op_matches("aten::bitwise_right_shift",
                    [](const Inputs& in) { return at::bitwise_right_shift(-1000, arg(in, 0)); },
                    {longs({0, 1, 4, 20})});
}

TEST_F(Logic, BitwiseShiftNarrowIntegers) {
  // int32 arithmetic right shift of negatives; uint8 left shift wraps; int8 left shift.
  expect_op_matches(
      "aten::bitwise_right_shift",
      [](const Inputs& in) { return at::bitwise_right_shift(arg(in, 0), arg(in, 1)); },
      {at::tensor({-7, 7, -1, 100}, at::kInt), at::tensor({1, 2, 3, 4}, at::kInt)});
  expect_op_matches("aten::bitwise_left_shift",
                    [](const Inputs& in) { return at::bitwise_left_shift(arg(in, 0), 1); },
                    {at::tensor({200, 1, 127, 128}, at::kByte)});
  expect_op_matches("aten::bitwise_left_shift",
                    [](const Inputs& in) { return at::bitwise_left_shift(arg(in, 0), 2); },
                    {at::tensor({-100, 1, 40, 31}, at::kChar)});
}

TEST_F(Logic, BitwiseShiftInScript) {
  expect_script_matches(
      "aten::bitwise_right_shift",
      "def forward(self, x, n):\n"
      "  return torch.bitwise_right_shift(x, n), torch.bitwise_left_shift(x, 3)\n",
      {longs({-9, -8, 5, 1024}), longs({1, 2, 3, 0})});
  // libtorch has no float shift either: the export reports the failing forward() (kModelRun),
  // the converter's refusal appended.
  expect_script_fails("def forward(self, x):\n  return torch.bitwise_left_shift(x, 1)\n",
                      {at::randn({3})}, 13, "integer tensors only", ErrorCode::kModelRun);
}

TEST_F(Logic, ShiftInScript) {
  expect_script_matches("aten::__rshift__", "def forward(self, x):\n  return x >> 2\n",
                        {longs({-9, -8, 5, 1024})});
}

// ----- casts
// --------------------------------------------------------------------------------------

TEST_F(Logic, ToDtype) {
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kLong); },
                    {floats({-2.7, -0.5, 0, 1.9, 3})});
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kFloat); },
                    {longs({-2, 0, 7})});
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kBool); },
                    {floats({-2.7, 0, 0.25})});
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kDouble); },
                    {bools({0, 1})});
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kInt); },
                    {longs({-2, 0, 7})});
}

TEST_F(Logic, ToDeviceAndDtype) {
  expect_op_matches(
      "aten::to",
      [](const Inputs& in) { return arg(in, 0).to(at::kCPU, at::kHalf).to(at::kFloat); },
      {at::randn({2, 3})}, kMinOpset, highest_opset(), {}, kExact);  // a dropped Cast fails
  expect_op_matches(
      "aten::to", [](const Inputs& in) { return arg(in, 0).to(at::kCPU, at::kLong, false, true); },
      {floats({1.5, -2.5})});
}

TEST_F(Logic, ToSameDtypeIsANoOp) {
  expect_script_matches("aten::to", "def forward(self, x):\n  return x.to(6) * 2\n",
                        {at::randn({2, 3})});
  expect_script_matches("aten::to", "def forward(self, x):\n  return x.to(6)\n",
                        {at::randn({2, 3})});
}

// The overloads TorchScript picks for the other spellings of a cast: an Optional[int] dtype
// (to.prim_dtype), a None device (to.prim_Device), keyword device and dtype (to.dtype_layout).
// Each reads its dtype at its own position. (x.to(False, True), to.prim_other, keeps the dtype:
// no node, see the coverage test.)
TEST_F(Logic, ToOfEveryOverload) {
  const ScriptOptions unfolded{kMinOpset, highest_opset(), /*fold=*/false};
  expect_script_matches("aten::to",
                        "def forward(self, x):\n"
                        "  d: Optional[int] = 4\n"
                        "  return x.to(d), x.to(None, 7), x.to(device=None, dtype=3), "
                        "x.to(False, True) * 2\n",
                        {floats({1.5, -2.5, 7.25})}, unfolded);
}

TEST_F(Logic, ToOtherAndTypeAs) {
  expect_op_matches("aten::to", [](const Inputs& in) { return arg(in, 0).to(arg(in, 1)); },
                    {floats({1.5, -2.5}), longs({1})});
  expect_op_matches("aten::type_as",
                    [](const Inputs& in) { return arg(in, 0).type_as(arg(in, 1)); },
                    {longs({3, -1}), at::randn({2})});
}

TEST_F(Logic, ToInScript) {
  // Module::define does not resolve torch.<dtype> names: dtypes are written as their codes
  // (3 = int32, 7 = float64, 11 = bool).
  expect_script_matches("aten::to", "def forward(self, x):\n  return x.to(3) + 1\n",
                        {floats({1.5, -2.5})});
  expect_script_matches("aten::to", "def forward(self, x, y):\n  return x.to(y) * 2\n",
                        {longs({1, -2}), at::randn({2})});
  expect_script_matches("aten::to", "def forward(self, x):\n  return x.to(device='cpu', dtype=7)\n",
                        {longs({1, -2})});
  expect_script_matches("aten::type_as", "def forward(self, x, y):\n  return x.type_as(y)\n",
                        {at::randn({2}), bools({1, 0})});
}

// aten::_to_copy (torch.export's core ATen form of a cast): the dtype keyword, or None (a copy).
TEST_F(Logic, ToCopy) {
  TORCHONNX_SKIP_WITHOUT_OPERATOR("aten::_to_copy");
  expect_script_matches("aten::_to_copy",
                        "def forward(self, x):\n"
                        "  return torch._to_copy(x, dtype=4) * 3, torch._to_copy(x) + 1\n",
                        {floats({1.5, -2.5, 7.25})});
  expect_script_matches("aten::_to_copy",
                        "def forward(self, x):\n  return torch._to_copy(x, dtype=6) / 2\n",
                        {longs({3, -1, 4})});
}

TEST_F(Logic, CastOpsTraced) {
  expect_op_matches("aten::_cast_Long", [](const Inputs& in) { return at::_cast_Long(arg(in, 0)); },
                    {floats({-2.5, 0, 7.9})});
}

TEST_F(Logic, CastOps) {
  // Every _cast_X, written in IR (the script compiler does not emit them).
  for (const char* op : {"_cast_Byte", "_cast_Char", "_cast_Double", "_cast_Float", "_cast_Half",
                         "_cast_Int", "_cast_Long", "_cast_Short"}) {
    SCOPED_TRACE(op);
    auto m = ir_module(fmt::format(R"IR(
graph(%x : Tensor):
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::{}(%x, %f)
  return (%y))IR",
                                   op));
    // A double input for _cast_Float, so that every cast writes a Cast node.
    at::Tensor x = floats({0, 1.0, 2.0, 100.0, 7.0});
    if (std::string(op) == "_cast_Float") x = x.to(at::kDouble);
    expect_script_matches(std::string("aten::") + op, m, {x});
  }
}

// ----- is_floating_point ------------------------------------------------------------------------

TEST_F(Logic, IsFloatingPoint) {
  const char* source =
      "def forward(self, x):\n  return torch.tensor(x.is_floating_point()) | (x > 1)\n";
  // The dtype is static, so folding replaces the call by a constant: exported unfolded.
  const ScriptOptions unfolded{kMinOpset, highest_opset(), /*fold=*/false};
  expect_script_matches("aten::is_floating_point", source, {at::randn({2})}, unfolded);
  expect_script_matches("aten::is_floating_point", source, {longs({0, 3})}, unfolded);
}

}  // namespace
}  // namespace torchonnx::testing
