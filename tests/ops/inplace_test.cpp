// Numeric tests of in-place writes made functional by RemoveInplaceOps (Note [Removing in-place
// ops]) and of the converters it relies on (copy, zero, select_scatter, slice_scatter): scripted
// sources and C++ traces, writes to a value read later and writes through (chains of) views.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

class Inplace : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- writes to a value read later (scripted) --------------------------------------------------

TEST_F(Inplace, ScriptedAddOnInputIsReturned) {
  const std::string src = "def forward(self, x):\n  x.add_(1)\n  return x\n";
  expect_script_matches("aten::add", src, {at::randn({2, 3})});
  expect_script_matches("aten::add", src, {at::randint(-5, 5, {2, 3})});
}

TEST_F(Inplace, ScriptedMutationSeenByLaterReadsOnly) {
  expect_script_matches("aten::mul",
                        "def forward(self, x):\n  a = x + 1\n  x.mul_(2)\n  b = x + 1\n"
                        "  x.sub_(a)\n  return a, b, x\n",
                        {at::randn({3, 4})});
}

TEST_F(Inplace, ScriptedInplaceKeepsSelfDtype) {
  // float32 += float64 stays float32; int64 *= bool stays int64.
  expect_script_matches("aten::add", "def forward(self, x, y):\n  x += y\n  return x\n",
                        {at::randn({2, 3}), at::randn({2, 3}, at::kDouble)});
  expect_script_matches("aten::mul", "def forward(self, x, m):\n  x *= m\n  return x\n",
                        {at::randint(-5, 5, {2, 3}), at::rand({2, 3}) > 0.5});
}

// x.set_(y) (Note [set_ of a tensor]): x is y from then on, at y's sizes; reads of x before it
// keep x, and in-place writes after it through either name change the one tensor both denote.
TEST_F(Inplace, SetReplacesTheTensor) {
  const Inputs in{at::randn({2, 3}), at::randn({4, 6})};
  expect_script_matches(
      "aten::mul", "def forward(self, x, y):\n  a = x * 2\n  x.set_(y)\n  return a, x + 1\n", in);
  expect_script_matches("aten::add",
                        "def forward(self, x, y):\n  x.set_(y)\n  x.add_(1)\n  y.mul_(3)\n"
                        "  return x, y\n",
                        in);
  // torch.onnx drops x, which nothing reads any more (drop_unused_inputs, Python's default).
  ExportOptions options;
  options.drop_unused_inputs = true;
  const std::string path = temp_dir("set_") + "/m.onnx";
  export_model(script_module("def forward(self, x, y):\n  x.set_(y)\n  return x * 2\n"), in, path,
               options);
  const onnx::ModelProto model = read_model_file(path);
  ASSERT_EQ(model.graph().input_size(), 1);
  EXPECT_EQ(model.graph().input(0).name(), "y.1");
}

TEST_F(Inplace, ScriptedCloneIndexPutReturnsBaseAndCopy) {
  const std::string src =
      "def forward(self, x, idx, v):\n  y = x.clone()\n  y[idx] = v\n  return x, y\n";
  expect_script_matches("aten::index_put", src,
                        {at::randn({5, 3}), longs({4, 0, -2}), at::randn({3, 3})});
  expect_script_matches("aten::index_put", src,
                        {at::randint(0, 9, {5, 3}), longs({1, 3}), at::randint(0, 9, {3})});
  expect_script_matches("aten::index_put", src,
                        {at::rand({5, 3}) > 0.5, longs({2}), at::ones({3}, at::kBool)});
}

TEST_F(Inplace, ScriptedMaskWrite) {
  expect_script_matches("aten::index_put",
                        "def forward(self, x, m):\n  y = x.clone()\n  y[m] = 2.0\n"
                        "  return y + 1\n",
                        {at::randn({3, 4}), at::rand({3, 4}) > 0.5});
}

// ----- writes through views (scripted) ----------------------------------------------------------

TEST_F(Inplace, ScriptedSelectCopy) {
  const std::string src =
      "def forward(self, x, v):\n  y = x.clone()\n  y[0] = v\n  y[-1] = v * 2\n  return x, y\n";
  expect_script_matches("aten::select_scatter", src, {at::randn({3, 4}), at::randn({4})});
  expect_script_matches("aten::copy", src, {at::randint(-9, 9, {3, 4}), at::randint(-9, 9, {4})});
}

TEST_F(Inplace, ScriptedSliceFill) {
  const std::string src = "def forward(self, x):\n  x[:, 1:3] = 0\n  return x\n";
  expect_script_matches("aten::slice_scatter", src, {at::randn({3, 5})});
  expect_script_matches("aten::slice_scatter", src, {at::randint(1, 9, {3, 5})});
  expect_script_matches("aten::slice_scatter",
                        "def forward(self, x):\n  x[1:, -2:] = True\n  return x\n",
                        {at::rand({3, 4}) > 0.5});
}

TEST_F(Inplace, ScriptedSteppedSliceAdd) {
  // Reading x[1:, ::2] needs Slice with steps: opset 10.
  expect_script_matches("aten::slice_scatter",
                        "def forward(self, x, y):\n  x[1:, ::2] += y\n  return x\n",
                        {at::randn({3, 5}), at::randn({2, 3})}, {10, highest_opset()});
}

// The slice's end and step computed in the graph (ints given to forward(), PyTorch's
// x[:y:z, 0::z, :] = 1): the write back scatters at start + step * arange (opset 11: Slice with
// steps computed in the graph reads the view).
TEST_F(Inplace, ScriptedSliceFillWithComputedStep) {
  expect_script_matches("aten::slice_scatter",
                        "def forward(self, x, y: int, z: int):\n"
                        "  x[:y:z, 0::z, :] = 1.0\n"
                        "  return x\n",
                        {at::zeros({9, 6, 4}), int64_t{5}, int64_t{2}}, {11, highest_opset()});
}

TEST_F(Inplace, ScriptedChainedViewsReturnBaseAndView) {
  expect_script_matches("aten::select_scatter",
                        "def forward(self, x, v):\n  s = x[0]\n  s[1:] += v\n  return x, s\n",
                        {at::randn({3, 4}), at::randn({3})});
  expect_script_matches("aten::slice_scatter",
                        "def forward(self, x, v):\n  x[0, 1:] += v\n  return x\n",
                        {at::randint(-9, 9, {3, 4}), at::randint(-9, 9, {3})});
}

TEST_F(Inplace, ScriptedWriteThroughFlatView) {
  expect_script_matches("aten::select_scatter",
                        "def forward(self, x):\n  y = x.clone()\n  y.view(-1)[3] = 5\n"
                        "  return y\n",
                        {at::randn({3, 4})});
}

TEST_F(Inplace, ScriptedViewMadeBeforeWriteSeesIt) {
  // t and r are views of x made before the writes: they see them.
  expect_script_matches("aten::select_scatter",
                        "def forward(self, x, v):\n  t = x[:, 0]\n  r = x[1]\n  x.mul_(2)\n"
                        "  r[2] = v\n  return t, r\n",
                        {at::randn({3, 4}), at::scalar_tensor(7.0)});
}

TEST_F(Inplace, ScriptedWriteThroughTransposeAndUnsqueeze) {
  expect_script_matches("aten::select_scatter",
                        "def forward(self, x, v):\n  x.t()[1] = v\n  x.unsqueeze(0)[0, 0] += 1\n"
                        "  return x\n",
                        {at::randn({3, 4}), at::randn({3})});
  expect_script_matches("aten::select_scatter",
                        "def forward(self, x, v):\n  x.permute(2, 0, 1)[1] = v\n  return x\n",
                        {at::randn({2, 3, 4}), at::randn({2, 3})});
}

TEST_F(Inplace, ScriptedViewMadeBeforeABranchWrittenInIt) {
  // v is a view made before the If; the else-branch writes it (and its base): the If's value of v
  // is the view replayed on the new base (found by the fuzzer: the write was lost).
  const std::string src =
      "def forward(self, x, y):\n  v = (x + 1)[1:3]\n  if bool(y.sum() > 0):\n    v = v + 1\n"
      "  else:\n    v *= y\n  return v\n";
  for (double sign : {1.0, -1.0}) {
    expect_script_matches("aten::slice_scatter", src,
                          {at::randn({4, 3}), sign * (at::rand({2, 3}) + 0.1)});
  }
}

TEST_F(Inplace, ScriptedViewMadeBeforeALoopWrittenInIt) {
  // v (a row of b) is read and written in every iteration: each iteration reads the last one's
  // value, and b after the loop has every write.
  expect_script_matches("aten::select_scatter",
                        "def forward(self, x):\n  b = x * 2\n  v = b[1]\n"
                        "  for i in range(x.size(0)):\n    w = v * 0.5\n    v.add_(w)\n"
                        "  return v, b\n",
                        {at::randn({3, 4})});
}

// ----- C++ traces -------------------------------------------------------------------------------

// A write in a branch that the example does not take (PyTorch's test_index_put_if_2): with the
// condition's size declared dynamic the branch is exported, but type propagation, which follows
// the example, gives its nodes no types; the write's type_as takes its dtype from the view
// written (state, made outside the branch).
TEST_F(Inplace, ScriptedWriteInABranchTheExampleDoesNotTake) {
  const torch::jit::Module m = script_module(R"(
def forward(self, x, p):
  state = torch.zeros([2, x.size(0)])
  if p.size(0) == 1:
    s = state[:]
    state[:] = p + s
  return state * 2.0
)");
  ExportOptions options;
  options.input_names = {"x", "p"};
  options.dynamic_axes = {{"p", {{0, "n"}}}};
  for (int opset : {11, 13, highest_opset()}) {
    SCOPED_TRACE(opset);
    options.opset_version = opset;
    const std::string dir = temp_dir("write_in_branch");
    const at::Tensor x = at::randn({3});
    export_model(m, {x, at::zeros({0, 3})}, dir + "/model.onnx", options);
    for (const at::Tensor& p : {at::zeros({0, 3}), at::randn({1, 3})}) {
      const std::string data = dir + "/case" + std::to_string(p.size(0));
      std::filesystem::create_directories(data);
      write_test_data(data, {x, p}, frontend::run_module(m, {x, p}));
      OrtResult r = run_in_ort(dir + "/model.onnx", data);
      EXPECT_TRUE(r.ok) << "p of " << p.sizes() << ": " << r.report;
    }
  }
}

TEST_F(Inplace, TracedSelectCopy) {
  expect_op_matches("aten::select_scatter",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.select(0, 1).copy_(arg(in, 1));
                      return c10::IValue(c10::ivalue::Tuple::create({arg(in, 0), x}));
                    },
                    {at::randn({3, 4}), at::randn({4})});
}

TEST_F(Inplace, TracedNarrowMulAndLaterAdd) {
  expect_op_matches("aten::slice_scatter",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.narrow(1, 1, 2).mul_(2);
                      x.add_(1);
                      return x * 3;
                    },
                    {at::randn({3, 4})});
  expect_op_matches("aten::slice_scatter",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.narrow(0, -2, 2).mul_(2);
                      return x;
                    },
                    {at::randint(-9, 9, {4, 2})});
}

TEST_F(Inplace, TracedFlatViewFill) {
  expect_op_matches("aten::fill",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.view({-1}).select(0, 3).fill_(5);
                      return x;
                    },
                    {at::randint(0, 3, {3, 4})});
}

TEST_F(Inplace, TracedZeroThroughSlice) {
  expect_op_matches("aten::zero",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.slice(1, 0, 2).zero_();
                      return x;
                    },
                    {at::randn({3, 4})});
  expect_op_matches("aten::zero",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.select(0, 0).zero_();
                      return x;
                    },
                    {at::rand({2, 3}) > 0.2});
}

TEST_F(Inplace, TracedCopyCastsAndBroadcasts) {
  expect_op_matches("aten::copy",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.copy_(arg(in, 1));
                      return x;
                    },
                    {at::randint(-9, 9, {2, 3}), at::randn({3}) * 5});
}

// x[:, n:] = v with n = x.size(0), as Python traces it: v is expanded to the example's slice
// sizes (constants) before copy_. The copy broadcasts v to the slice's shape itself, so another
// shape of the dynamic axes writes the right sizes: v an input (the expand stays in the graph),
// and v made in the graph (arange(1, 4): the expand is folded to a constant of stride-0 dims).
TEST_F(Inplace, TracedCopyOfAnExpandIntoADynamicSlice) {
  const std::string body = R"IR(
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
  %4 : int = prim::Constant[value=4]()
  %none : NoneType = prim::Constant()
  %end : int = prim::Constant[value=9223372036854775807]()
  %false : bool = prim::Constant[value=0]()
)IR";
  const std::string rest = R"IR(
  %n : int = aten::size(%x, %0)
  %nt : Tensor = prim::NumToTensor(%n)
  %ni : int = aten::Int(%nt)
  %s0 : Tensor = aten::slice(%x, %0, %0, %end, %1)
  %s1 : Tensor = aten::slice(%s0, %1, %ni, %end, %1)
  %sizes : int[] = prim::ListConstruct(%2, %3, %3)
  %e : Tensor = aten::expand(%v, %sizes, %false)
  %c : Tensor = aten::copy_(%s1, %e, %false)
  return (%x))IR";
  const at::Tensor v = longs({1, 2, 3});
  for (bool v_input : {true, false}) {
    SCOPED_TRACE(v_input ? "v an input" : "v made in the graph");
    auto m = ir_module(v_input ? "graph(%x : Tensor, %v : Tensor):" + body + rest
                               : "graph(%x : Tensor):" + body +
                                     "  %v : Tensor = aten::arange(%1, %4, %none, %none, %none, "
                                     "%none)" +
                                     rest);
    auto inputs = [&](const at::Tensor& x) { return v_input ? Inputs{x, v} : Inputs{x}; };
    ExportOptions options;
    options.input_names = {"x"};
    options.dynamic_axes = {{"x", {{0, "a"}, {1, "b"}, {2, "c"}}}};
    for (int opset : {11, 14, highest_opset()}) {
      SCOPED_TRACE(opset);
      options.opset_version = opset;
      const std::string dir = temp_dir("copy_of_expand");
      export_model(m, inputs(at::ones({2, 5, 3})), dir + "/model.onnx", options);
      for (const at::Tensor& x : {at::ones({2, 5, 3}), at::randn({3, 4, 3})}) {
        const std::string data = dir + "/case" + std::to_string(x.size(0));
        std::filesystem::create_directories(data);
        // The trace holds the example's sizes: PyTorch on x itself is the reference.
        at::Tensor expected = x.clone();
        expected.slice(1, x.size(0)).copy_(v);
        write_test_data(data, inputs(x), {expected});
        OrtResult r = run_in_ort(dir + "/model.onnx", data);
        EXPECT_TRUE(r.ok) << "x of " << x.sizes() << ": " << r.report;
      }
    }
  }
}

// x[:y, 0, :] = y with y = tensor([5]), as Python traces it: the slice's length is read from data
// (aten::Int of y), so type propagation's placeholder slice disagrees with y expanded to the
// example's (5, 4); copy takes self's sizes there, and the graph's output its type.
TEST_F(Inplace, TracedWriteIntoASliceOfALengthReadFromData) {
  auto m = ir_module(R"IR(
graph(%x : Tensor, %y : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %4 : int = prim::Constant[value=4]()
  %5 : int = prim::Constant[value=5]()
  %end : int = prim::Constant[value=9223372036854775807]()
  %false : bool = prim::Constant[value=0]()
  %n : int = aten::Int(%y)
  %s0 : Tensor = aten::slice(%x, %0, %0, %n, %1)
  %s1 : Tensor = aten::select(%s0, %1, %0)
  %s2 : Tensor = aten::slice(%s1, %1, %0, %end, %1)
  %empty : int[] = prim::ListConstruct()
  %v : Tensor = aten::view(%y, %empty)
  %sizes : int[] = prim::ListConstruct(%5, %4)
  %e : Tensor = aten::expand(%v, %sizes, %false)
  %c : Tensor = aten::copy_(%s2, %e, %false)
  return (%x))IR");
  expect_script_matches("aten::slice_scatter", m, {at::zeros({8, 3, 4}), longs({5})},
                        {10, highest_opset()});
}

TEST_F(Inplace, TracedIndexPutThroughSelect) {
  expect_op_matches("aten::index_put",
                    [](const Inputs& in) {
                      at::Tensor x = arg(in, 0).clone();
                      x.select(1, 0).index_put_({arg(in, 1)}, arg(in, 2));
                      return x;
                    },
                    {at::randn({4, 3}), longs({3, 1}), at::randn({2})});
}

// ----- converters called directly ---------------------------------------------------------------

TEST_F(Inplace, SelectScatter) {
  auto fn = [](int64_t dim, int64_t index) {
    return [=](const Inputs& in) { return at::select_scatter(arg(in, 0), arg(in, 1), dim, index); };
  };
  expect_op_matches("aten::select_scatter", fn(0, 1), {at::randn({3, 4}), at::randn({4})});
  expect_op_matches("aten::select_scatter", fn(-1, -1), {at::randn({2, 3, 4}), at::randn({2, 3})});
  expect_op_matches("aten::select_scatter", fn(1, 0),
                    {at::randint(-9, 9, {2, 3}), at::randint(-9, 9, {2})});
  expect_op_matches("aten::select_scatter", fn(0, 0), {at::rand({2, 3}) > 0.5, at::ones({3}) > 0});
  expect_op_matches("aten::select_scatter", fn(0, 0), {at::randn({3}), at::scalar_tensor(2.0)});
}

TEST_F(Inplace, SliceScatter) {
  auto fn = [](int64_t dim, c10::optional<int64_t> start, c10::optional<int64_t> end,
               int64_t step) {
    return [=](const Inputs& in) {
      return at::slice_scatter(arg(in, 0), arg(in, 1), dim, start, end, step);
    };
  };
  expect_op_matches("aten::slice_scatter", fn(0, 1, 3, 1), {at::randn({5, 3}), at::randn({2, 3})});
  expect_op_matches("aten::slice_scatter", fn(-1, -2, c10::nullopt, 1),
                    {at::randn({2, 5}), at::randn({2, 2})});
  expect_op_matches("aten::slice_scatter", fn(1, c10::nullopt, c10::nullopt, 2),
                    {at::randint(-9, 9, {2, 5}), at::randint(-9, 9, {2, 3})});
  expect_op_matches("aten::slice_scatter", fn(0, 1, 100, 3),
                    {at::rand({6, 2}) > 0.5, at::rand({2, 2}) > 0.5});
  expect_op_matches("aten::slice_scatter", fn(0, 4, 4, 1), {at::randn({4, 2}), at::randn({0, 2})});
}

TEST_F(Inplace, ZeroDimWrites) {
  expect_script_matches("aten::copy",
                        "def forward(self, x, v):\n  y = x.clone()\n  y.copy_(v)\n  return y\n",
                        {at::scalar_tensor(3.0), at::scalar_tensor(-1.5)});
}

// ----- errors -----------------------------------------------------------------------------------

TEST_F(Inplace, WriteThroughDiagonalWhoseBaseIsReadFails) {
  expect_export_fails(
      [](const Inputs& in) {
        at::Tensor x = arg(in, 0).clone();
        x.diagonal().add_(1);
        return x;
      },
      {at::randn({3, 3})}, 13, "aten::diagonal");
}

// Writes inside a loop to a tensor defined outside it leave the loop as carried values
// (Note [Mutation in control flow]).
TEST_F(Inplace, WriteInsideLoopToOuterTensor) {
  expect_script_generalizes(
      "prim::Loop",
      "def forward(self, x, n: int):\n  for i in range(n):\n    x[i] = float(i)\n"
      "  return x\n",
      {at::randn({3, 2}), at::scalar_tensor(3, at::kLong)},
      {{at::randn({3, 2}), at::scalar_tensor(1, at::kLong)}}, {11, 13, 17});
}

// diagonal_scatter: ScatterND of src at the diagonal's positions of dims dim1 and dim2 (opset 11).
TEST_F(Inplace, DiagonalScatter) {
  struct Case {
    std::vector<int64_t> self;
    int64_t offset, dim1, dim2;
  };
  for (const Case& c : std::vector<Case>{{{3, 3}, 0, 0, 1},
                                         {{3, 5}, 1, 0, 1},
                                         {{4, 3}, -2, 0, 1},
                                         {{2, 3, 4}, 0, -1, 0},
                                         {{2, 3, 4}, 1, 1, 2},
                                         {{3, 2}, 5, 0, 1}}) {
    SCOPED_TRACE(::testing::Message()
                 << "offset " << c.offset << " dims " << c.dim1 << ", " << c.dim2);
    at::Tensor self = at::randn(c.self);
    at::Tensor src = at::randn(at::diagonal(self, c.offset, c.dim1, c.dim2).sizes());
    auto fn = [c](const Inputs& in) {
      return at::diagonal_scatter(arg(in, 0), arg(in, 1), c.offset, c.dim1, c.dim2);
    };
    expect_op_matches("aten::diagonal_scatter", fn, {self, src}, 11);
    expect_op_matches("aten::diagonal_scatter", fn, {self > 0, src > 0}, 11);
  }
}

}  // namespace
}  // namespace torchonnx::testing
