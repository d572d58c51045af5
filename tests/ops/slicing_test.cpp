// Numeric tests of the slicing converters: chunk/split/tensor_split/unbind, narrow/roll/flip,
// diagonal/tril/triu, as_strided/unfold.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <tuple>

#include "common/compat.h"
#include "ops/op_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

c10::IValue tuple(std::vector<at::Tensor> parts) {
  return c10::ivalue::Tuple::create(std::vector<c10::IValue>(parts.begin(), parts.end()));
}

class Slicing : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- chunk / split
// ------------------------------------------------------------------------------

TEST_F(Slicing, ChunkUneven) {
  expect_op_matches("aten::chunk",
                    [](const Inputs& in) {
                      auto parts = at::chunk(arg(in, 0), 3, 1);  // 3, 3, 1
                      return tuple(parts);
                    },
                    {at::randn({2, 7})});
}

TEST_F(Slicing, ChunkGivesFewerPiecesThanAsked) {
  expect_op_matches("aten::chunk",
                    [](const Inputs& in) {
                      auto parts = at::chunk(arg(in, 0), 4, -1);  // 2, 2, 1
                      EXPECT_EQ(parts.size(), 3u);
                      return tuple(parts);
                    },
                    {at::randn({3, 5})});
}

TEST_F(Slicing, SplitBySize) {
  expect_op_matches("aten::split",
                    [](const Inputs& in) { return tuple(at::split(arg(in, 0), 3, 0)); },
                    {at::randn({8, 2})});
}

TEST_F(Slicing, SplitBySizes) {
  expect_op_matches("aten::split",
                    [](const Inputs& in) {
                      return tuple(at::split(arg(in, 0), {1, 4, 3}, -1));
                    },
                    {at::randn({2, 8})});
}

TEST_F(Slicing, SplitWithSizes) {
  expect_op_matches("aten::split_with_sizes",
                    [](const Inputs& in) {
                      return tuple(at::split_with_sizes(arg(in, 0), {2, 1}, 1));
                    },
                    {at::randint(-9, 9, {2, 3, 2})});
}

// ----- more chunk / split
// ---------------------------------------------------------------------------

TEST_F(Slicing, UnsafeChunkAndSplit) {
  expect_op_matches("aten::unsafe_chunk",
                    [](const Inputs& in) { return tuple(at::unsafe_chunk(arg(in, 0), 3, -1)); },
                    {at::randn({2, 8})});
  expect_op_matches("aten::unsafe_split",
                    [](const Inputs& in) { return tuple(at::unsafe_split(arg(in, 0), 2, 0)); },
                    {at::randint(0, 9, {5, 2})});
  expect_op_matches("aten::unsafe_split_with_sizes",
                    [](const Inputs& in) {
                      return tuple(at::unsafe_split_with_sizes(arg(in, 0), {1, 3}, -2));
                    },
                    {at::randn({2, 4, 3}) > 0});
}

TEST_F(Slicing, SplitWithAnEmptyPiece) {
  expect_op_matches("aten::split_with_sizes",
                    [](const Inputs& in) {
                      return tuple(at::split_with_sizes(arg(in, 0), {2, 0, 1}, 1));
                    },
                    {at::randn({2, 3})});
}

TEST_F(Slicing, ConstantChunk) {
  auto m = ir_module(R"IR(
graph(%x : Tensor):
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ConstantChunk[chunks=3, dim=-1](%x)
  %d : Tensor = aten::mul(%a, %c)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%d, %b)
  return (%r))IR");
  expect_script_matches("prim::ConstantChunk", m, {at::randn({2, 7})});
}

TEST_F(Slicing, TensorSplitSections) {
  for (int64_t sections : {1, 3, 5}) {  // 5 sections of 4 elements: the last one is empty
    SCOPED_TRACE(::testing::Message() << sections << " sections");
    expect_op_matches(
        "aten::tensor_split",
        [sections](const Inputs& in) { return tuple(at::tensor_split(arg(in, 0), sections, -1)); },
        {at::randn({2, 4})});
  }
}

TEST_F(Slicing, TensorSplitIndices) {
  for (auto indices : std::vector<std::vector<int64_t>>{{1, 3}, {2, 2, 9}, {-1}, {3, 1}}) {
    SCOPED_TRACE(::testing::Message() << indices.size() << " indices from " << indices[0]);
    expect_op_matches(
        "aten::tensor_split",
        [indices](const Inputs& in) { return tuple(at::tensor_split(arg(in, 0), indices, 0)); },
        {at::randint(0, 9, {5, 2})});
  }
}

// Note: tensors made inside a traced C++ function (at::tensor(...)) are traced as aten::empty,
// whose folded value is uninitialized; constant tensors are made outside and captured.
TEST_F(Slicing, TensorSplitByTensor) {
  at::Tensor indices = at::tensor({1, 2}, at::kLong);
  expect_op_matches(
      "aten::tensor_split",
      [indices](const Inputs& in) { return tuple(at::tensor_split(arg(in, 0), indices, 1)); },
      {at::randn({2, 4}) > 0});
  at::Tensor sections = at::scalar_tensor(2, at::kLong);
  expect_op_matches(
      "aten::tensor_split",
      [sections](const Inputs& in) { return tuple(at::tensor_split(arg(in, 0), sections)); },
      {at::randn({3, 2})});
}

// The indices or sections are an input of the graph (opset 11+): the pieces' bounds are computed.
TEST_F(Slicing, TensorSplitByATensorComputedInTheGraph) {
  ScriptOptions from11;
  from11.first = 11;
  // indices of static length 3: 4 pieces, read by index (a Tensor[] of known length)
  for (auto indices : std::vector<std::vector<int64_t>>{{1, 3, 4}, {2, 2, 9}, {-2, 1, 3}}) {
    SCOPED_TRACE(::testing::Message() << "indices from " << indices[0]);
    expect_script_matches("aten::tensor_split", R"(
def forward(self, x, i):
    r = torch.tensor_split(x, i, 1)
    return r[0], r[1] * 2, r[2], r[3]
)",
                          {at::randn({2, 5, 3}), at::tensor(indices, at::kLong)}, from11);
  }
  // sections unpacked into 3 values: sizes 2, 2, 1 of 5
  expect_script_matches("aten::tensor_split", R"(
def forward(self, x, s):
    a, b, c = torch.tensor_split(x, s, -1)
    return a, b, c
)",
                        {at::randn({3, 5}), at::scalar_tensor(3, at::kLong)}, from11);
  // sections read as a list: a sequence (SplitToSequence) of as many pieces as `s` says
  expect_script_matches("aten::tensor_split", R"(
def forward(self, x, s):
    r = torch.tensor_split(x, s, 0)
    return r[0], r[-1], torch.cat(r, 0)
)",
                        {at::randn({7, 2}), at::scalar_tensor(3, at::kLong)}, from11);
}

TEST_F(Slicing, TensorSplitByATensorComputedInTheGraphBelowOpset11) {
  auto m = script_module(R"(
def forward(self, x, i):
    a, b = torch.tensor_split(x, i)
    return a, b
)");
  Inputs in{at::randn({4}), at::tensor({1}, at::kLong)};
  ExportOptions o;
  o.opset_version = 10;
  EXPECT_TRUE(ThrowsExportError([&] { export_model_to_bytes(m, in, o); }, ErrorCode::kConversion,
                                {"aten::tensor_split", "needs opset 11", "Remedy"}));
}

TEST_F(Slicing, Unbind) {
  for (int64_t dim : {0, 1, -1}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    expect_op_matches("aten::unbind",
                      [dim](const Inputs& in) { return tuple(arg(in, 0).unbind(dim)); },
                      {at::randn({2, 3, 1})});
  }
  expect_op_matches("aten::unbind", [](const Inputs& in) { return tuple(arg(in, 0).unbind()); },
                    {at::randint(0, 9, {3})});
}

// ----- narrow / roll / flip
// -----------------------------------------------------------------------

TEST_F(Slicing, Narrow) {
  for (auto [dim, start, length] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 1, 2}, {-1, 0, 4}, {1, -3, 2}, {1, -2, 2}, {1, 2, 0}}) {
    SCOPED_TRACE(::testing::Message()
                 << "narrow(" << dim << ", " << start << ", " << length << ")");
    auto fn = [dim = dim, start = start, length = length](const Inputs& in) {
      return arg(in, 0).narrow(dim, start, length);
    };
    expect_op_matches("aten::narrow", fn, {at::randn({3, 4})});
    expect_op_matches("aten::narrow", fn, {at::randint(0, 9, {3, 4}) > 4});
  }
}

TEST_F(Slicing, NarrowWithATensorStart) {
  for (int64_t start : {1, -2}) {
    SCOPED_TRACE(::testing::Message() << "start " << start);
    auto fn = [](const Inputs& in) { return arg(in, 0).narrow(1, arg(in, 1), 2); };
    Inputs inputs{at::randn({2, 5}), at::scalar_tensor(start, at::kLong)};
    expect_op_matches("aten::narrow", fn, inputs, 10, highest_opset());
    expect_export_fails(fn, inputs, 9, "opset 10");
  }
}

// fftshift / ifftshift: a roll by half of each size (odd sizes tell them apart).
TEST_F(Slicing, FftShift) {
  auto all = [](const Inputs& in) { return at::fft_fftshift(arg(in, 0)); };
  auto inv = [](const Inputs& in) { return at::fft_ifftshift(arg(in, 0)); };
  auto some = [](const Inputs& in) { return at::fft_fftshift(arg(in, 0), at::IntArrayRef{-1}); };
  auto inv_some = [](const Inputs& in) {
    return at::fft_ifftshift(arg(in, 0), at::IntArrayRef{0, 2});
  };
  for (const at::Tensor& x :
       {at::randn({5}), at::randn({4, 5}), at::randn({3, 1, 7}), at::randint(0, 9, {2, 3})}) {
    expect_op_matches("aten::fft_fftshift", all, {x});
    expect_op_matches("aten::fft_ifftshift", inv, {x});
    expect_op_matches("aten::fft_fftshift", some, {x});
  }
  expect_op_matches("aten::fft_ifftshift", inv_some, {at::randn({3, 4, 5})});
}

TEST_F(Slicing, Roll) {
  for (auto [shifts, dims] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{1}, {0}}, {{-1}, {1}}, {{5}, {-1}}, {{2, -7}, {0, 1}}, {{3}, {}}, {{0}, {1}}}) {
    SCOPED_TRACE(::testing::Message() << shifts.size() << " shifts from " << shifts[0]);
    auto fn = [shifts = shifts, dims = dims](const Inputs& in) {
      return arg(in, 0).roll(shifts, dims);
    };
    expect_op_matches("aten::roll", fn, {at::randn({3, 4})});
    expect_op_matches("aten::roll", fn, {at::randint(0, 9, {3, 4})});
  }
  expect_op_matches("aten::roll", [](const Inputs& in) { return arg(in, 0).roll(1, 0); },
                    {at::randn({3}) > 0});
}

TEST_F(Slicing, Flip) {
  for (auto dims : std::vector<std::vector<int64_t>>{{0}, {-1}, {0, 2}, {1, -1, 0}, {}}) {
    SCOPED_TRACE(::testing::Message() << dims.size() << " dims");
    auto fn = [dims](const Inputs& in) { return arg(in, 0).flip(dims) * 1; };
    expect_op_matches("aten::flip", fn, {at::randn({2, 3, 4})});
    expect_op_matches("aten::flip", fn, {at::randn({2, 3, 4}) > 0});
    expect_op_matches("aten::flip", fn, {at::randint(0, 9, {2, 3, 4})});
  }
  // Dims of size 1 and 0 are their own flip.
  expect_op_matches("aten::flip",
                    [](const Inputs& in) {
                      return arg(in, 0).flip({0, 1, 2});
                    },
                    {at::randn({2, 1, 0})});
}

TEST_F(Slicing, DiagEmbed) {
  for (auto [offset, d1, d2] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, -2, -1}, {1, -2, -1}, {-2, -2, -1}, {0, -1, -2}, {1, 0, 2}, {-1, 2, 0}, {3, 1, 0}}) {
    SCOPED_TRACE(::testing::Message()
                 << "diag_embed(" << offset << ", " << d1 << ", " << d2 << ")");
    auto fn = [offset = offset, d1 = d1, d2 = d2](const Inputs& in) {
      return at::diag_embed(arg(in, 0), offset, d1, d2);
    };
    expect_op_matches("aten::diag_embed", fn, {at::randn({2, 3})});
    expect_op_matches("aten::diag_embed", fn, {floats({kInf, -0.0f, kNaN, 2, -1, 0}).view({3, 2})});
    expect_op_matches("aten::diag_embed", fn, {at::randint(-9, 9, {2, 4}, at::kLong)});
    expect_op_matches("aten::diag_embed", fn, {at::randn({2, 2}) > 0});
  }
  auto fn = [](const Inputs& in) { return at::diag_embed(arg(in, 0)); };
  expect_op_matches("aten::diag_embed", fn, {at::randn({4})});
  expect_op_matches("aten::diag_embed", fn, {at::randn({2, 3, 4})});
  expect_op_matches("aten::diag_embed", fn, {at::randn({0, 3})});
  expect_op_matches("aten::diag_embed", fn, {at::randn({2, 0})});
}

TEST_F(Slicing, DiagAndDiagflat) {
  for (int64_t offset : {0, 1, -1, 3, -2}) {
    SCOPED_TRACE(offset);
    auto diag = [offset](const Inputs& in) { return at::diag(arg(in, 0), offset) * 1; };
    auto flat = [offset](const Inputs& in) { return at::diagflat(arg(in, 0), offset); };
    expect_op_matches("aten::diag", diag, {at::randn({4})});                         // 1-D
    expect_op_matches("aten::diag", diag, {at::randint(-9, 9, {3, 5}, at::kLong)});  // 2-D
    expect_op_matches("aten::diagflat", flat, {at::randn({2, 3})});
    expect_op_matches("aten::diagflat", flat, {floats({kInf, kNaN, -0.0f})});
  }
  expect_op_matches("aten::diagflat", [](const Inputs& in) { return at::diagflat(arg(in, 0)); },
                    {at::scalar_tensor(2.5)});
  expect_op_matches("aten::diag", [](const Inputs& in) { return at::diag(arg(in, 0)); },
                    {at::randn({3}) > 0});
}

TEST_F(Slicing, HsplitVsplitDsplit) {
  auto h = [](const Inputs& in) { return tuple(at::hsplit(arg(in, 0), 2)); };
  auto h_at = [](const Inputs& in) { return tuple(at::hsplit(arg(in, 0), {1, 3, 3})); };
  auto v = [](const Inputs& in) { return tuple(at::vsplit(arg(in, 0), 3)); };
  auto v_at = [](const Inputs& in) { return tuple(at::vsplit(arg(in, 0), {-1, 5})); };
  auto d = [](const Inputs& in) { return tuple(at::dsplit(arg(in, 0), 2)); };
  auto d_at = [](const Inputs& in) { return tuple(at::dsplit(arg(in, 0), {1})); };
  expect_op_matches("aten::hsplit", h, {at::randn({3, 4})});
  expect_op_matches("aten::hsplit", h, {at::randn({6})});  // 1-D: along dim 0
  expect_op_matches("aten::hsplit", h_at, {at::randint(-9, 9, {2, 5, 2}, at::kLong)});
  expect_op_matches("aten::vsplit", v, {at::randn({6, 2}) > 0});
  expect_op_matches("aten::vsplit", v_at, {at::randn({4, 3})});
  expect_op_matches("aten::dsplit", d, {at::randn({2, 3, 4})});
  expect_op_matches("aten::dsplit", d_at, {at::randn({2, 1, 3, 2})});
}

TEST_F(Slicing, NarrowCopy) {
  for (auto [dim, start, length] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 1, 2}, {1, -3, 2}, {-1, 0, 0}, {1, 2, 2}}) {
    auto fn = [dim = dim, start = start, length = length](const Inputs& in) {
      return at::narrow_copy(arg(in, 0), dim, start, length);
    };
    expect_op_matches("aten::narrow_copy", fn, {at::randn({3, 4})});
  }
}

TEST_F(Slicing, FliplrFlipud) {
  auto lr = [](const Inputs& in) { return at::fliplr(arg(in, 0)) * 1; };
  auto ud = [](const Inputs& in) { return at::flipud(arg(in, 0)) * 1; };
  for (const at::Tensor& x :
       {at::randn({3, 4}), at::randn({2, 3, 4}) > 0, at::randint(-9, 9, {4, 2, 3}, at::kLong)}) {
    expect_op_matches("aten::fliplr", lr, {x});
    expect_op_matches("aten::flipud", ud, {x});
  }
  expect_op_matches("aten::flipud", ud, {floats({1, kInf, kNaN, -0.0f, -3})});  // 1-D
  expect_op_matches("aten::fliplr", lr, {at::randn({5, 1})});                   // size-1 dim
  expect_op_matches("aten::flipud", ud, {at::randn({0, 3})});                   // empty dim
}

TEST_F(Slicing, Rot90) {
  for (int64_t k : {1, 2, 3, 0, 4, -1, -2, -3, 5}) {
    for (std::vector<int64_t> dims :
         std::vector<std::vector<int64_t>>{{0, 1}, {1, 0}, {-1, 0}, {2, -2}}) {
      SCOPED_TRACE(::testing::Message() << "k " << k << " dims " << dims[0] << ", " << dims[1]);
      auto fn = [k, dims](const Inputs& in) { return at::rot90(arg(in, 0), k, dims) * 1; };
      expect_op_matches("aten::rot90", fn, {at::randn({2, 3, 4})});
    }
  }
  auto fn = [](const Inputs& in) { return at::rot90(arg(in, 0)); };
  expect_op_matches("aten::rot90", fn, {at::randint(-9, 9, {3, 5}, at::kLong)});
  expect_op_matches("aten::rot90", fn, {at::randn({3, 5}) > 0});
}

// ----- diagonal / tril / triu
// ------------------------------------------------------------------------

TEST_F(Slicing, Diagonal) {
  for (auto [offset, d1, d2] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 0, 1}, {1, 0, 1}, {-1, 0, 1}, {2, -1, 0}, {-2, 1, 2}, {0, 2, 0}, {5, 0, 1}}) {
    SCOPED_TRACE(::testing::Message() << "diagonal(" << offset << ", " << d1 << ", " << d2 << ")");
    auto fn = [offset = offset, d1 = d1, d2 = d2](const Inputs& in) {
      return arg(in, 0).diagonal(offset, d1, d2);
    };
    expect_op_matches("aten::diagonal", fn, {at::randn({3, 4, 2})});
    expect_op_matches("aten::diagonal", fn, {at::randint(0, 9, {3, 4, 2}) > 4});
  }
  expect_op_matches("aten::diagonal", [](const Inputs& in) { return arg(in, 0).diagonal(); },
                    {at::randint(0, 9, {4, 3})});
  expect_unfolded_matches("aten::diagonal",
                          [](const Inputs& in) { return arg(in, 0).diagonal(-1, 1, -1); },
                          {at::randn({2, 4, 3})});
}

TEST_F(Slicing, DiagonalOfEmptyDims) {
  expect_op_matches("aten::diagonal", [](const Inputs& in) { return arg(in, 0).diagonal(0, 0, 2); },
                    {at::randn({3, 2, 0})});
  expect_op_matches("aten::diagonal", [](const Inputs& in) { return arg(in, 0).diagonal(1); },
                    {at::randn({0, 4})});
}

TEST_F(Slicing, TrilAndTriu) {
  at::Tensor x = at::randn({2, 3, 4});
  x.index_put_({0, 0, 3}, std::numeric_limits<float>::infinity());  // above the diagonal: zeroed
  for (int64_t k : {0, 1, -1, 5, -4}) {
    SCOPED_TRACE(::testing::Message() << "diagonal " << k);
    expect_op_matches("aten::tril", [k](const Inputs& in) { return arg(in, 0).tril(k); }, {x});
    expect_op_matches("aten::triu", [k](const Inputs& in) { return arg(in, 0).triu(k); }, {x});
    expect_unfolded_matches("aten::tril", [k](const Inputs& in) { return arg(in, 0).tril(k); },
                            {x});
  }
}

TEST_F(Slicing, TrilAndTriuOfInt64AndBool) {
  expect_op_matches("aten::tril", [](const Inputs& in) { return arg(in, 0).tril(); },
                    {at::randint(1, 9, {4, 3})});
  expect_op_matches("aten::triu", [](const Inputs& in) { return arg(in, 0).triu(1); },
                    {at::randint(1, 9, {3, 3})});
  expect_op_matches("aten::tril", [](const Inputs& in) { return arg(in, 0).tril(-1); },
                    {at::randn({3, 3}) > -5});
  expect_op_matches("aten::triu", [](const Inputs& in) { return arg(in, 0).triu(); },
                    {at::randn({2, 3}) > -5});
}

// A diagonal computed in the graph (from an int argument): Trilu's k input from 14, the Range
// mask at 11-13 (issue 24); before 11 the mask is a constant, which needs a constant diagonal.
TEST_F(Slicing, TrilAndTriuWithAComputedDiagonal) {
  const std::string src = R"(
def forward(self, x, d: int):
  return torch.triu(x, d - 1) + torch.tril(x, 1 - d)
)";
  const at::Tensor x = at::randn({4, 5});
  expect_script_generalizes("aten::triu", src, {x, c10::IValue(int64_t{1})},
                            {{x, c10::IValue(int64_t{3})}, {x, c10::IValue(int64_t{-2})}},
                            {11, 13, 14, 17});
  expect_script_fails(src, {x, c10::IValue(int64_t{1})}, 10, "need opset >= 11");
}

// ----- as_strided / unfold
// -----------------------------------------------------------------------------

TEST_F(Slicing, AsStrided) {
  expect_op_matches("aten::as_strided",
                    [](const Inputs& in) {
                      return arg(in, 0).as_strided({3, 3}, {1, 2});
                    },
                    {at::randn({3, 4})});
  expect_op_matches("aten::as_strided",
                    [](const Inputs& in) {
                      return arg(in, 0).as_strided({2, 2, 2}, {4, 1, 3}, 1);
                    },
                    {at::randint(0, 9, {12})});
  expect_op_matches("aten::as_strided",
                    [](const Inputs& in) { return arg(in, 0).as_strided({}, {}, 5) + 1; },
                    {at::randn({2, 3})});
}

TEST_F(Slicing, Unfold) {
  for (auto [dim, size, step] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 2, 1}, {1, 3, 2}, {-1, 2, 3}, {1, 5, 1}, {2, 1, 1}}) {
    SCOPED_TRACE(::testing::Message() << "unfold(" << dim << ", " << size << ", " << step << ")");
    auto fn = [dim = dim, size = size, step = step](const Inputs& in) {
      return arg(in, 0).unfold(dim, size, step);
    };
    expect_op_matches("aten::unfold", fn, {at::randn({3, 5, 2})});
    expect_op_matches("aten::unfold", fn, {at::randn({3, 5, 2}) > 0});
  }
  expect_op_matches("aten::unfold", [](const Inputs& in) { return arg(in, 0).unfold(0, 1, 1); },
                    {at::scalar_tensor(2.5)});
  expect_unfolded_matches("aten::unfold",
                          [](const Inputs& in) { return arg(in, 0).unfold(-2, 2, 2); },
                          {at::randint(0, 9, {5, 3})});
}

}  // namespace
}  // namespace torchonnx::testing
