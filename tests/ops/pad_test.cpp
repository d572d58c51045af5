// Numeric tests of the padding and spatial rearrangement converters: constant/reflect/replicate/
// circular padding (negative pads crop; Pad wrap from opset 19), pixel_(un)shuffle, im2col/col2im
// (Col2Im from opset 18) and the distances (pairwise_distance, cosine_similarity, cdist).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

using Ints = std::vector<int64_t>;

// The op types of an export and their counts, without the Constant nodes of small constants.
std::map<std::string, int> computing_ops(const TracedFunction& fn, const Inputs& inputs,
                                         int opset) {
  auto counts = onnx_op_counts(fn, inputs, opset);
  counts.erase("Constant");
  return counts;
}

class Pad : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- constant padding ------------------------------------------------------------------------

TEST_F(Pad, ConstantPadNdOneTwoThreeTrailingDims) {
  for (const Ints& pad : {Ints{1, 2}, Ints{1, 0, 2, 3}, Ints{0, 1, 2, 0, 1, 1}}) {
    SCOPED_TRACE(::testing::Message() << "pad " << at::IntArrayRef(pad));
    expect_op_matches("aten::constant_pad_nd",
                      [pad](const Inputs& in) { return at::constant_pad_nd(arg(in, 0), pad, 1.5); },
                      {at::randn({2, 3, 4, 5})});
  }
}

TEST_F(Pad, ConstantPadNdNegativePadsCrop) {
  expect_op_matches("aten::constant_pad_nd",
                    [](const Inputs& in) {
                      return at::constant_pad_nd(arg(in, 0), {-1, 2, 1, -2}, -3);
                    },
                    {at::randn({2, 5, 6})});
}

TEST_F(Pad, ConstantPadNdInt64AndBool) {
  expect_op_matches("aten::constant_pad_nd",
                    [](const Inputs& in) {
                      return at::constant_pad_nd(arg(in, 0), {2, 1}, 7);
                    },
                    {at::randint(-1000, 1000, {3, 4})});
  expect_op_matches("aten::constant_pad_nd",
                    [](const Inputs& in) {
                      return at::constant_pad_nd(arg(in, 0), {1, 1, 0, 2}, 1);
                    },
                    {at::randn({3, 4}) > 0});
}

TEST_F(Pad, PadConstantWithAndWithoutValue) {
  expect_op_matches("aten::pad",
                    [](const Inputs& in) {
                      return at::pad(arg(in, 0), {1, 2, 0, 1}, "constant", c10::nullopt);
                    },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::pad",
                    [](const Inputs& in) {
                      return at::pad(arg(in, 0), {-1, 2}, "constant", 2.5);
                    },
                    {at::randn({2, 3, 4})});
}

// ----- reflect / replicate ---------------------------------------------------------------------

TEST_F(Pad, PadReflectAndReplicateModes) {
  struct Case {
    Ints pad, shape;
  };
  for (const char* mode : {"reflect", "replicate"}) {
    for (const auto& c : std::vector<Case>{{{2, 1}, {2, 3, 4}},
                                           {{1, 2, 2, 0}, {2, 3, 4, 5}},
                                           {{1, 0, 0, 1, 1, 1}, {1, 2, 3, 4, 5}}}) {
      SCOPED_TRACE(::testing::Message() << mode << " pad " << at::IntArrayRef(c.pad));
      expect_op_matches(
          "aten::pad",
          [mode, c](const Inputs& in) { return at::pad(arg(in, 0), c.pad, mode, c10::nullopt); },
          {at::randn(c.shape)});
    }
  }
}

TEST_F(Pad, ReflectionPad1d2d3d) {
  expect_op_matches("aten::reflection_pad1d",
                    [](const Inputs& in) {
                      return at::reflection_pad1d(arg(in, 0), {2, 3});
                    },
                    {at::randn({2, 3, 5})});
  expect_op_matches("aten::reflection_pad2d",
                    [](const Inputs& in) {
                      return at::reflection_pad2d(arg(in, 0), {1, 2, 3, 0});
                    },
                    {at::randn({2, 3, 4, 5})});
  expect_op_matches("aten::reflection_pad3d",
                    [](const Inputs& in) {
                      return at::reflection_pad3d(arg(in, 0), {1, 0, 2, 1, 0, 1});
                    },
                    {at::randn({1, 2, 3, 4, 5})});
}

TEST_F(Pad, ReplicationPad1d2d3d) {
  expect_op_matches("aten::replication_pad1d",
                    [](const Inputs& in) {
                      return at::replication_pad1d(arg(in, 0), {3, 1});
                    },
                    {at::randn({2, 3, 4})});
  expect_op_matches("aten::replication_pad2d",
                    [](const Inputs& in) {
                      return at::replication_pad2d(arg(in, 0), {0, 2, 1, 3});
                    },
                    {at::randn({2, 3, 4, 5})});
  expect_op_matches("aten::replication_pad3d",
                    [](const Inputs& in) {
                      return at::replication_pad3d(arg(in, 0), {2, 1, 0, 1, 1, 1});
                    },
                    {at::randn({1, 2, 3, 4, 5})});
}

TEST_F(Pad, ReflectAndReplicateDouble) {
  // ATen implements reflection/replication padding for floating types only.
  expect_op_matches("aten::reflection_pad1d",
                    [](const Inputs& in) {
                      return at::reflection_pad1d(arg(in, 0), {2, 1});
                    },
                    {at::randn({2, 3, 5}, at::kDouble)});
  expect_op_matches("aten::replication_pad2d",
                    [](const Inputs& in) {
                      return at::replication_pad2d(arg(in, 0), {1, 1, 2, 0});
                    },
                    {at::randn({1, 2, 3, 4}, at::kDouble)});
}

// ----- circular --------------------------------------------------------------------------------

TEST_F(Pad, CircularOneTwoThreeDims) {
  // _pad_circular pads every dim after (N, C).
  const Ints shape{2, 3, 3, 4, 5};
  for (const Ints& pad : {Ints{2, 1}, Ints{1, 2, 2, 0}, Ints{1, 0, 0, 1, 2, 1}}) {
    SCOPED_TRACE(::testing::Message() << "pad " << at::IntArrayRef(pad));
    expect_op_matches("aten::_pad_circular",
                      [pad](const Inputs& in) { return at::_pad_circular(arg(in, 0), pad); },
                      {at::randn(Ints(shape.begin(), shape.begin() + 2 + pad.size() / 2))});
  }
}

TEST_F(Pad, PadCircularModeNegativeAndInt64) {
  expect_op_matches("aten::pad",
                    [](const Inputs& in) {
                      return at::pad(arg(in, 0), {-1, 2, 1, 1}, "circular", c10::nullopt);
                    },
                    {at::randint(-100, 100, {2, 3, 4, 5})});
}

// From opset 19 circular padding is one Pad in mode wrap (Slice + Concat per padded side below);
// negative pads still crop with a Slice first.
TEST_F(Pad, CircularIsPadWrapFromOpset19) {
  TORCHONNX_SKIP_BELOW_OPSET(19);
  const TracedFunction fn = [](const Inputs& in) {
    return at::pad(arg(in, 0), {1, 2, 2, 1}, "circular", c10::nullopt);
  };
  const Inputs x{at::randn({2, 3, 4, 5})};
  expect_op_matches("aten::pad", fn, x, 19);
  EXPECT_EQ(computing_ops(fn, x, 19), (std::map<std::string, int>{{"Pad", 1}}));
  EXPECT_EQ(computing_ops(fn, x, 18), (std::map<std::string, int>{{"Concat", 2}, {"Slice", 4}}));
  const TracedFunction crop = [](const Inputs& in) {
    return at::_pad_circular(arg(in, 0), {-1, 2, 1, -2});
  };
  expect_op_matches("aten::_pad_circular", crop, x, 19);
  EXPECT_EQ(computing_ops(crop, x, 19), (std::map<std::string, int>{{"Pad", 1}, {"Slice", 1}}));
  for (const at::Tensor& t : {at::randint(-100, 100, {2, 3, 4}, at::kLong),
                              at::randint(0, 2, {2, 3, 4}, at::kLong).to(at::kBool)}) {
    expect_op_matches(
        "aten::_pad_enum",
        [](const Inputs& in) {
          return at::_pad_enum(arg(in, 0), {2, 1, 0, 1}, 2, c10::nullopt);
        },
        {t}, 19);
  }
}

// Circular pads computed in the graph: Pad wrap takes them as an input (19+); ONNX Runtime crops
// the negative ones first, as PyTorch does. Below 19 the export names the remedy.
TEST_F(Pad, CircularPadsComputedInTheGraph) {
  const char* ir = R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %n : int = aten::size(%x, %0)
  %pad : int[] = prim::ListConstruct(%n, %m1, %m1, %n)
  %mode : str = prim::Constant[value="circular"]()
  %v : NoneType = prim::Constant()
  %y : Tensor = aten::pad(%x, %pad, %mode, %v)
  return (%y))IR";
  const Inputs in{at::randn({2, 3, 4, 5})};
  expect_module_export_fails(ir_module(ir), in, 11, "export with opset >= 19",
                             ErrorCode::kConversion, /*fold=*/false);
  TORCHONNX_SKIP_BELOW_OPSET(19);
  expect_module_export_fails(ir_module(ir), in, 18,
                             "circular padding with pads computed in the graph needs Pad's wrap "
                             "mode (opset 19)",
                             ErrorCode::kConversion, /*fold=*/false);
  expect_script_matches("aten::pad", ir_module(ir), in, {19, highest_opset(), /*fold=*/false});
}

TEST_F(Pad, PadsComputedInTheGraph) {
  // Without folding, x.size(0) stays in the graph: the pads are an ONNX input (opset 11).
  const ScriptOptions so{11, highest_opset(), /*fold=*/false};
  Inputs in{at::randn({2, 3, 4})};
  expect_script_matches("aten::constant_pad_nd",
                        "def forward(self, x):\n"
                        "  return torch.constant_pad_nd(x, [x.size(0), 1, -1, x.size(0)], 2.5)\n",
                        in, so);
  for (const char* mode : {"reflect", "replicate"}) {
    auto pad = ir_module(std::string(R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %n : int = aten::size(%x, %0)
  %pad : int[] = prim::ListConstruct(%n, %1)
  %mode : str = prim::Constant[value=")IR") +
                         mode + R"IR("]()
  %v : NoneType = prim::Constant()
  %y : Tensor = aten::pad(%x, %pad, %mode, %v)
  return (%y))IR");
    expect_script_matches("aten::pad", pad, in, so);
  }
  auto m = script_module(
      "def forward(self, x):\n"
      "  return torch.constant_pad_nd(x, [x.size(0), 1])\n");
  ExportOptions o;
  o.opset_version = 10;
  o.do_constant_folding = false;
  EXPECT_TRUE(
      ThrowsExportError([&] { export_model(m, in, ::testing::TempDir() + "/pad_dyn10.onnx", o); },
                        ErrorCode::kConversion,
                        {"cannot export aten::constant_pad_nd",
                         // torch.onnx's words (PyTorch's test_unsupported_pad matches them)
                         "Unsupported: ONNX export of Pad in opset 10. The sizes of the padding "
                         "must be constant",
                         "pads computed in the graph need opset 11", "export with opset >= 11"}));
}

// A List[int] argument: the pad list's length is known at run time only (Note [Pad list of
// run-time length]); shorter lists pad fewer dims, negative pads crop.
TEST_F(Pad, PadListArgument) {
  auto m = script_module(
      "def forward(self, x, pad: List[int]):\n"
      "  return torch.constant_pad_nd(x, pad, 1.5)\n");
  auto ints = [](std::vector<int64_t> v) { return c10::IValue(c10::List<int64_t>(v)); };
  const at::Tensor x = at::randn({2, 2, 4, 4});
  expect_script_generalizes("aten::constant_pad_nd", m, {x, ints({2, 4})},
                            {{x, ints({1, 0, 3, -1})}, {x, ints({0, 1, 1, 0, 2, 2, 1, 1})}},
                            {11, 17});
  auto reflect = ir_module(R"IR(
graph(%x : Tensor, %pad : int[]):
  %mode : str = prim::Constant[value="reflect"]()
  %v : NoneType = prim::Constant()
  %y : Tensor = aten::pad(%x, %pad, %mode, %v)
  return (%y))IR");
  expect_script_generalizes("aten::pad", reflect, {x, ints({2, 1, 1, 0})},
                            {{x, ints({1, 0, 3, 2})}, {x, ints({0, 3, 2, 2})}}, {11, 17});
}

TEST_F(Pad, UnknownModeFails) {
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %pad : int[] = prim::Constant[value=[1, 1]]()
  %mode : str = prim::Constant[value="wrap"]()
  %v : NoneType = prim::Constant()
  %y : Tensor = aten::pad(%x, %pad, %mode, %v)
  return (%y))IR");
  ExportOptions o;
  // The converter refuses the mode; the export then runs forward(), which refuses it too, and
  // reports that (kModelRun) with the converter's message appended.
  EXPECT_TRUE(ThrowsExportError(
      [&] {
        export_model(m, {at::randn({2, 3})}, ::testing::TempDir() + "/pad_wrap.onnx", o);
      },
      ErrorCode::kModelRun,
      {"forward() failed on the example inputs", "Unrecognised padding mode wrap",
       "The export stopped first with: cannot export aten::pad", "unknown padding mode 'wrap'"}));
}

// ----- pixel shuffle ---------------------------------------------------------------------------

TEST_F(Pad, PixelShuffle) {
  expect_op_matches("aten::pixel_shuffle",
                    [](const Inputs& in) { return at::pixel_shuffle(arg(in, 0), 2); },
                    {at::randn({2, 12, 3, 4})});
  expect_op_matches("aten::pixel_shuffle",
                    [](const Inputs& in) { return at::pixel_shuffle(arg(in, 0), 3); },
                    {at::randn({9, 2, 3})});
  expect_op_matches("aten::pixel_shuffle",
                    [](const Inputs& in) { return at::pixel_shuffle(arg(in, 0), 2); },
                    {at::randint(-100, 100, {2, 3, 4, 2, 3})});
}

TEST_F(Pad, PixelUnshuffle) {
  expect_op_matches("aten::pixel_unshuffle",
                    [](const Inputs& in) { return at::pixel_unshuffle(arg(in, 0), 2); },
                    {at::randn({2, 3, 4, 6})});
  expect_op_matches("aten::pixel_unshuffle",
                    [](const Inputs& in) { return at::pixel_unshuffle(arg(in, 0), 3); },
                    {at::randint(-100, 100, {2, 6, 3})});
  expect_op_matches("aten::pixel_unshuffle",
                    [](const Inputs& in) { return at::pixel_unshuffle(arg(in, 0), 2); },
                    {at::randn({2, 2, 3, 4, 2})});
}

// ----- im2col / col2im -------------------------------------------------------------------------

struct FoldCase {
  Ints kernel, dilation, padding, stride;
};

const std::vector<FoldCase> kFoldCases{{{2, 2}, {1, 1}, {0, 0}, {1, 1}},
                                       {{3, 2}, {1, 2}, {1, 0}, {2, 1}},
                                       {{2, 3}, {2, 1}, {1, 2}, {2, 3}}};

TEST_F(Pad, Im2col) {
  for (const auto& c : kFoldCases) {
    SCOPED_TRACE(::testing::Message() << "kernel " << at::IntArrayRef(c.kernel));
    expect_op_matches("aten::im2col",
                      [c](const Inputs& in) {
                        return at::im2col(arg(in, 0), c.kernel, c.dilation, c.padding, c.stride);
                      },
                      {at::randn({2, 3, 7, 8})});
  }
  expect_op_matches("aten::im2col",
                    [](const Inputs& in) {
                      return at::im2col(arg(in, 0), {2, 2}, {1, 1}, {1, 1}, {2, 2});
                    },
                    {at::randn({3, 5, 6})});
  // an empty batch: no size is left to infer
  expect_op_matches("aten::im2col",
                    [](const Inputs& in) {
                      return at::im2col(arg(in, 0), {2, 2}, {1, 1}, {0, 0}, {1, 1});
                    },
                    {at::randn({0, 1, 5, 5})});
}

TEST_F(Pad, Col2im) {
  const Ints out{7, 8};
  for (const auto& c : kFoldCases) {
    SCOPED_TRACE(::testing::Message() << "kernel " << at::IntArrayRef(c.kernel));
    at::Tensor cols =
        at::im2col(at::randn({2, 3, 7, 8}), c.kernel, c.dilation, c.padding, c.stride);
    expect_op_matches("aten::col2im",
                      [c, out](const Inputs& in) {
                        return at::col2im(arg(in, 0), out, c.kernel, c.dilation, c.padding,
                                          c.stride);
                      },
                      {at::randn(cols.sizes())});
  }
  at::Tensor cols = at::im2col(at::randn({1, 3, 5, 6}), {2, 2}, {1, 1}, {1, 1}, {2, 2}).squeeze(0);
  expect_op_matches("aten::col2im",
                    [](const Inputs& in) {
                      return at::col2im(arg(in, 0), {5, 6}, {2, 2}, {1, 1}, {1, 1}, {2, 2});
                    },
                    {at::randn(cols.sizes())});
}

// From opset 18 col2im is one Col2Im (ConvTranspose with one-hot kernels and Reshapes below); the
// output size may then be computed in the graph.
TEST_F(Pad, Col2imIsCol2ImFromOpset18) {
  TORCHONNX_SKIP_BELOW_OPSET(18);
  const TracedFunction fn = [](const Inputs& in) {
    return at::col2im(arg(in, 0), {7, 8}, {3, 2}, {1, 2}, {1, 0}, {2, 1});
  };
  const Inputs x{
      at::randn(at::im2col(at::randn({2, 3, 7, 8}), {3, 2}, {1, 2}, {1, 0}, {2, 1}).sizes())};
  expect_op_matches("aten::col2im", fn, x, 18);
  EXPECT_EQ(computing_ops(fn, x, 18), (std::map<std::string, int>{{"Col2Im", 1}}));
  EXPECT_EQ(computing_ops(fn, x, 17),
            (std::map<std::string, int>{{"ConvTranspose", 1}, {"Reshape", 2}}));
  const std::string source =
      "def forward(self, x, like):\n"
      "  return torch.col2im(x, [like.size(2), like.size(3)], [2, 2], [1, 1], [1, 1], [2, 2])\n";
  const Inputs dynamic{at::randn({2, 12, 12}), at::randn({1, 1, 5, 6})};
  expect_script_matches("aten::col2im", source, dynamic, {18, highest_opset(), /*fold=*/false});
  expect_script_fails(source, dynamic, 17, "aten::col2im", ErrorCode::kConversion,
                      /*fold=*/false);
  expect_export_fails(fn, {at::randn(x[0].toTensor().sizes(), at::kDouble)}, 18,
                      "float32 inputs only (ONNX Runtime's Col2Im)");
}

TEST_F(Pad, Im2colNeedsFloat) {
  expect_export_fails(
      [](const Inputs& in) {
        return at::im2col(arg(in, 0), {2, 2}, {1, 1}, {0, 0}, {1, 1});
      },
      {at::randn({1, 2, 4, 4}, at::kDouble)}, 13, "float32");
}

// ----- distances -------------------------------------------------------------------------------

TEST_F(Pad, PairwiseDistanceNorms) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {2.0, 1.0, inf, -inf, 3.0, 0.0, 0.5}) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "p " << p << " keepdim " << keepdim);
      expect_op_matches("aten::pairwise_distance",
                        [p, keepdim](const Inputs& in) {
                          return at::pairwise_distance(arg(in, 0), arg(in, 1), p, 1e-6, keepdim);
                        },
                        {at::randn({4, 5}), at::randn({4, 5})});
    }
  }
}

TEST_F(Pad, PairwiseDistanceBroadcastAndEps) {
  expect_op_matches(
      "aten::pairwise_distance",
      [](const Inputs& in) { return at::pairwise_distance(arg(in, 0), arg(in, 1), 2, 0.1, false); },
      {at::randn({2, 3, 5}), at::randn({5})});
}

TEST_F(Pad, CosineSimilarity) {
  expect_op_matches(
      "aten::cosine_similarity",
      [](const Inputs& in) { return at::cosine_similarity(arg(in, 0), arg(in, 1), 1, 1e-8); },
      {at::randn({4, 5}), at::randn({4, 5})});
  expect_op_matches(
      "aten::cosine_similarity",
      [](const Inputs& in) { return at::cosine_similarity(arg(in, 0), arg(in, 1), -1, 1e-8); },
      {at::randn({2, 3, 5}), at::randn({3, 1})});
}

TEST_F(Pad, CosineSimilarityClampsEachNormByEps) {
  // ATen 1.13 clamps each norm: ‖x1‖ = 1e-9 < eps gives 0.1, not 1 (x1·x2 / max(‖x1‖‖x2‖, eps)).
  expect_op_matches(
      "aten::cosine_similarity",
      [](const Inputs& in) { return at::cosine_similarity(arg(in, 0), arg(in, 1), 1, 1e-8); },
      {at::tensor({1e-9f, 0.0f, 3.0f, 4.0f}).view({2, 2}),
       at::tensor({100.0f, 0.0f, 0.0f, 0.0f}).view({2, 2})});
}

TEST_F(Pad, Cdist) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {2.0, 1.0, inf, 3.0, 0.0}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    expect_op_matches("aten::cdist",
                      [p](const Inputs& in) { return at::cdist(arg(in, 0), arg(in, 1), p); },
                      {at::randn({2, 4, 3}), at::randn({2, 5, 3})});
  }
  expect_op_matches("aten::cdist",
                    [](const Inputs& in) { return at::cdist(arg(in, 0), arg(in, 1)); },
                    {at::randn({4, 3}), at::randn({6, 3})});
  // More than 25 rows: ATen's p = 2 switches to its matrix-product form (rounding differs only).
  expect_op_matches("aten::cdist",
                    [](const Inputs& in) { return at::cdist(arg(in, 0), arg(in, 1)); },
                    {at::randn({30, 4}), at::randn({27, 4})});
  // Batch dims broadcast.
  expect_op_matches("aten::cdist",
                    [](const Inputs& in) { return at::cdist(arg(in, 0), arg(in, 1), 1.0); },
                    {at::randn({2, 1, 4, 3}), at::randn({3, 5, 3})});
}

// What libtorch's C++ F::pad records (aten::_pad_enum, mode as at::padding_mode).
TEST_F(Pad, PadEnumOfEveryMode) {
  for (int64_t mode : {0, 1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "mode " << mode);
    c10::optional<double> value;
    if (mode == 3) value = 1.5;
    expect_op_matches("aten::_pad_enum",
                      [mode, value](const Inputs& in) {
                        return at::_pad_enum(arg(in, 0), {1, 2, 2, 0}, mode, value);
                      },
                      {at::randn({2, 3, 4, 5})});
  }
}

}  // namespace
}  // namespace torchonnx::testing
