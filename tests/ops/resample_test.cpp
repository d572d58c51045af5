// Numeric tests of the resampling converters: upsample_nearest/linear/bilinear/bicubic/trilinear
// (both overloads, sizes and scale factors, align_corners, up- and down-sampling) at every opset,
// aten::__interpolate, the antialiased _upsample_bilinear2d_aa / _upsample_bicubic2d_aa (Resize
// antialias, 18+), grid_sampler (GridSample; 5-D from 20) and affine_grid_generator (AffineGrid
// from 20).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/op_test_util.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

using Ints = std::vector<int64_t>;
using Scales = std::vector<double>;

enum class Mode { kNearest, kLinear, kCubic };

struct Kind {
  Mode mode;
  int n;
  const char* op;
  Ints input;
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k{
      {Mode::kNearest, 1, "aten::upsample_nearest1d", {2, 3, 5}},
      {Mode::kNearest, 2, "aten::upsample_nearest2d", {2, 3, 5, 4}},
      {Mode::kNearest, 3, "aten::upsample_nearest3d", {2, 2, 3, 4, 5}},
      {Mode::kLinear, 1, "aten::upsample_linear1d", {2, 3, 5}},
      {Mode::kLinear, 2, "aten::upsample_bilinear2d", {2, 3, 5, 4}},
      {Mode::kLinear, 3, "aten::upsample_trilinear3d", {2, 2, 3, 4, 5}},
      {Mode::kCubic, 2, "aten::upsample_bicubic2d", {2, 3, 5, 4}},
  };
  return k;
}

// The .vec overload: (input, output_size?, [align_corners,] scale_factors?).
at::Tensor call_vec(const Kind& k, const at::Tensor& x, c10::optional<Ints> size, bool ac,
                    c10::optional<Scales> scales) {
  at::OptionalIntArrayRef s = size ? at::OptionalIntArrayRef(*size) : c10::nullopt;
  c10::optional<at::ArrayRef<double>> f =
      scales ? c10::optional<at::ArrayRef<double>>(*scales) : c10::nullopt;
  switch (k.mode) {
    case Mode::kNearest:
      if (k.n == 1) return at::upsample_nearest1d(x, s, f);
      if (k.n == 2) return at::upsample_nearest2d(x, s, f);
      return at::upsample_nearest3d(x, s, f);
    case Mode::kLinear:
      if (k.n == 1) return at::upsample_linear1d(x, s, ac, f);
      if (k.n == 2) return at::upsample_bilinear2d(x, s, ac, f);
      return at::upsample_trilinear3d(x, s, ac, f);
    case Mode::kCubic:
      return at::upsample_bicubic2d(x, s, ac, f);
  }
  return {};
}

// The base overload: (self, output_size, [align_corners,] scales_0?, ...).
at::Tensor call_base(const Kind& k, const at::Tensor& x, const Ints& size, bool ac,
                     const std::vector<c10::optional<double>>& sc) {
  auto at_ = [&](size_t i) { return i < sc.size() ? sc[i] : c10::nullopt; };
  switch (k.mode) {
    case Mode::kNearest:
      if (k.n == 1) return at::upsample_nearest1d(x, size, at_(0));
      if (k.n == 2) return at::upsample_nearest2d(x, size, at_(0), at_(1));
      return at::upsample_nearest3d(x, size, at_(0), at_(1), at_(2));
    case Mode::kLinear:
      if (k.n == 1) return at::upsample_linear1d(x, size, ac, at_(0));
      if (k.n == 2) return at::upsample_bilinear2d(x, size, ac, at_(0), at_(1));
      return at::upsample_trilinear3d(x, size, ac, at_(0), at_(1), at_(2));
    case Mode::kCubic:
      return at::upsample_bicubic2d(x, size, ac, at_(0), at_(1));
  }
  return {};
}

Ints first_n(Ints v, int n) {
  v.resize(n);
  return v;
}

// The op types of an export and their counts, without the Constant nodes of small constants.
std::map<std::string, int> computing_ops(const TracedFunction& fn, const Inputs& inputs,
                                         int opset) {
  auto counts = onnx_op_counts(fn, inputs, opset);
  counts.erase("Constant");
  return counts;
}

// Exports `m` once at `opset` with every dim of every input dynamic (inputs x0, x1, ...), on the
// first of `cases`, then runs it in ONNX Runtime on each case and expects libtorch's outputs.
// Returns whether the model has a node converted from `op`.
bool expect_dynamic_matches(const std::string& op, const torch::jit::Module& m,
                            const std::vector<Inputs>& cases, int opset) {
  SCOPED_TRACE(::testing::Message() << "opset " << opset);
  ExportOptions options;
  options.opset_version = opset;
  options.do_constant_folding = false;
  for (size_t i = 0; i < cases[0].size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    options.input_names.push_back(name);
    DynamicAxes::mapped_type axes;
    for (int64_t d = 0; d < cases[0][i].toTensor().dim(); ++d) axes[d] = "";
    options.dynamic_axes[name] = axes;
  }
  const std::string dir = temp_dir("resample_dynamic");
  export_model(m, cases[0], dir + "/model.onnx", options);
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::string data = dir + "/case" + std::to_string(c);
    std::filesystem::create_directories(data);
    write_test_data(data, cases[c], frontend::run_module(m, cloned(cases[c])));
    OrtResult r = run_in_ort(dir + "/model.onnx", data);
    EXPECT_TRUE(r.ok) << "case " << c << " (first input " << cases[c][0].toTensor().sizes()
                      << "): " << r.report;
  }
  const bool has_op = model_has_node_from(read_model_file(dir + "/model.onnx"), op);
  std::filesystem::remove_all(dir);
  return has_op;
}

class Resample : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

std::vector<bool> align_values(const Kind& k) {
  return k.mode == Mode::kNearest ? std::vector<bool>{false} : std::vector<bool>{false, true};
}

// ----- .vec overload: output sizes
TEST_F(Resample, VecOutputSize) {
  for (const Kind& k : kinds()) {
    for (bool ac : align_values(k)) {
      for (const Ints& size : {Ints{7, 9, 8}, Ints{3, 3, 2}, Ints{1, 1, 1}, Ints{10, 8, 10}}) {
        Ints s = first_n(size, k.n);
        SCOPED_TRACE(::testing::Message()
                     << k.op << " size " << at::IntArrayRef(s) << " align " << ac);
        expect_op_matches(
            k.op,
            [k, s, ac](const Inputs& in) { return call_vec(k, arg(in, 0), s, ac, c10::nullopt); },
            {at::randn(k.input)});
      }
    }
  }
}

// ----- .vec overload: scale factors (integer, non-integer up, down)
TEST_F(Resample, VecScaleFactors) {
  for (const Kind& k : kinds()) {
    for (bool ac : align_values(k)) {
      for (const Scales& scales : {Scales{2.0, 3.0, 2.0}, Scales{1.7, 2.5, 1.3},
                                   Scales{0.6, 0.5, 0.75}, Scales{0.34, 1.5, 0.4}}) {
        Scales sc(scales.begin(), scales.begin() + k.n);
        SCOPED_TRACE(::testing::Message()
                     << k.op << " scales " << at::ArrayRef<double>(sc) << " align " << ac);
        expect_op_matches(
            k.op,
            [k, sc, ac](const Inputs& in) { return call_vec(k, arg(in, 0), c10::nullopt, ac, sc); },
            {at::randn(k.input)});
      }
    }
  }
}

// ----- base overload: output_size with and without the scales PyTorch maps coordinates with
TEST_F(Resample, BaseOverload) {
  for (const Kind& k : kinds()) {
    for (bool ac : align_values(k)) {
      Ints in_spatial(k.input.end() - k.n, k.input.end());
      // Scales 1.5 whose floor(in * 1.5) is the output size: PyTorch maps with 1/1.5, not in/out.
      Ints size;
      std::vector<c10::optional<double>> scales;
      for (int64_t v : in_spatial) {
        size.push_back(static_cast<int64_t>(std::floor(v * 1.5)));
        scales.emplace_back(1.5);
      }
      for (bool with_scales : {false, true}) {
        SCOPED_TRACE(::testing::Message() << k.op << " size " << at::IntArrayRef(size) << " scales "
                                          << with_scales << " align " << ac);
        auto sc = with_scales ? scales : std::vector<c10::optional<double>>{};
        expect_op_matches(
            k.op,
            [k, size, sc, ac](const Inputs& in) { return call_base(k, arg(in, 0), size, ac, sc); },
            {at::randn(k.input)});
      }
    }
  }
}

TEST_F(Resample, BaseOverloadInconsistentScalesFail) {
  const Kind& k = kinds()[4];  // bilinear
  Inputs inputs{at::randn(k.input)};
  // A scale for one dim only, different from output/input.
  auto partial = [k](const Inputs& in) {
    return call_base(k, arg(in, 0), {8, 8}, false, {1.7, c10::nullopt});
  };
  expect_export_fails(partial, inputs, 13, "scales for all dims");
  // A scale whose floor(in * scale) is not the output size.
  auto mismatched = [k](const Inputs& in) {
    return call_base(k, arg(in, 0), {9, 9}, false, {1.5, 1.5});
  };
  expect_export_fails(mismatched, inputs, 13, "cannot take both");
}

// Nearest at opsets 9/10: integer factors use Upsample/Resize-10, others a Gather.
TEST_F(Resample, NearestLowOpsetLowerings) {
  const Kind& k = kinds()[1];
  for (const Scales& sc : {Scales{2.0, 3.0}, Scales{1.5, 0.5}}) {
    expect_op_matches(
        k.op,
        [k, sc](const Inputs& in) { return call_vec(k, arg(in, 0), c10::nullopt, false, sc); },
        {at::randn(k.input)}, 9, 10);
  }
}

// Dtypes: double input (Resize takes it at 11+, the MatMul lowering below).
TEST_F(Resample, DoubleInput) {
  for (const Kind& k : kinds()) {
    for (bool ac : align_values(k)) {
      SCOPED_TRACE(::testing::Message() << k.op << " align " << ac);
      Scales sc(k.n, 2.0);
      expect_op_matches(
          k.op,
          [k, sc, ac](const Inputs& in) { return call_vec(k, arg(in, 0), c10::nullopt, ac, sc); },
          {at::randn(k.input, at::kDouble)});
    }
  }
}

// ----- TorchScript IR (torch._C._nn is not reachable from Module::define): output sizes computed
// in the graph (kept without constant folding), and the .vec overload with scale factors
const char* kSizePrelude =
    "graph(%x : Tensor):\n"
    "  %c1 : int = prim::Constant[value=1]()\n"
    "  %c2 : int = prim::Constant[value=2]()\n"
    "  %c3 : int = prim::Constant[value=3]()\n"
    "  %f : bool = prim::Constant[value=0]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %h : int = aten::size(%x, %c2)\n"
    "  %h2 : int = aten::mul(%h, %c2)\n"
    "  %w : int = aten::size(%x, %c3)\n"
    "  %w1 : int = aten::add(%w, %c1)\n"
    "  %sz : int[] = prim::ListConstruct(%h2, %w1)\n";

struct ComputedSizeCase {
  const char* op;
  const char* call;
};
const ComputedSizeCase kComputedSizes[] = {
    {"aten::upsample_bilinear2d", "aten::upsample_bilinear2d(%x, %sz, %f, %none)"},  // .vec
    {"aten::upsample_bicubic2d", "aten::upsample_bicubic2d(%x, %sz, %f, %none, %none)"},
    {"aten::upsample_nearest2d", "aten::upsample_nearest2d(%x, %sz, %none)"},  // .vec
    {"aten::upsample_nearest2d", "aten::upsample_nearest2d(%x, %sz, %none, %none)"},
};

std::string computed_size_ir(const ComputedSizeCase& c) {
  return std::string(kSizePrelude) + "  %y : Tensor = " + c.call + "\n  return (%y)\n";
}

TEST_F(Resample, ComputedSizes) {
  ScriptOptions so;
  so.first = 11;
  so.fold = false;
  for (const auto& c : kComputedSizes) {
    SCOPED_TRACE(c.call);
    expect_script_matches(c.op, ir_module(computed_size_ir(c)), {at::randn({2, 3, 4, 5})}, so);
    // A double input with sizes unknown to the exporter: Resize in float, cast back.
    expect_script_matches(c.op, ir_module(computed_size_ir(c)),
                          {at::randn({2, 3, 4, 5}, at::kDouble)}, so);
  }
}

// Nearest to output sizes computed in the graph (F.interpolate(x, size=[v * 2 for v in
// x.size()[2:]]) traced), over input sizes known only at run time: below opset 11 a Gather of
// indices computed in the graph, Resize from 11. Up- and down-sampling, integer and other ratios
// (w + 1: 5 -> 6, 3 -> 4), float, double and uint8.
TEST_F(Resample, NearestComputedSizesDynamicShapes) {
  const std::string down =
      "graph(%x : Tensor):\n"
      "  %c1 : int = prim::Constant[value=1]()\n"
      "  %c2 : int = prim::Constant[value=2]()\n"
      "  %c3 : int = prim::Constant[value=3]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %h : int = aten::size(%x, %c2)\n"
      "  %h1 : int = aten::sub(%h, %c1)\n"
      "  %w : int = aten::size(%x, %c3)\n"
      "  %w2 : int = aten::floordiv(%w, %c2)\n"
      "  %sz : int[] = prim::ListConstruct(%h1, %w2)\n"
      "  %y : Tensor = aten::upsample_nearest2d(%x, %sz, %none)\n"
      "  return (%y)\n";
  std::vector<std::string> irs{down};
  for (const auto& c : kComputedSizes) {
    if (std::string(c.op) == "aten::upsample_nearest2d") irs.push_back(computed_size_ir(c));
  }
  for (const std::string& ir : irs) {
    SCOPED_TRACE(ir);
    for (at::ScalarType type : {at::kFloat, at::kDouble, at::kByte}) {
      SCOPED_TRACE(type);
      auto input = [type](Ints shape) {
        return type == at::kByte ? at::randint(0, 255, shape, at::kByte)
                                 : at::randn(shape, at::TensorOptions().dtype(type));
      };
      const std::vector<Inputs> cases{{input({2, 3, 4, 5})},
                                      {input({1, 2, 3, 7})},
                                      {input({1, 1, 6, 3})},
                                      {input({2, 1, 2, 2})}};
      for (int opset : with_newest_opsets({9, 10, 11, 13, 17})) {
        EXPECT_TRUE(
            expect_dynamic_matches("aten::upsample_nearest2d", ir_module(ir), cases, opset));
        record_tested_op("aten::upsample_nearest2d", opset, true);
      }
    }
  }
}

// Below opset 11 the linear and cubic lowerings need the output sizes as constants.
TEST_F(Resample, ComputedSizesNeedOpset11) {
  for (const auto& c : kComputedSizes) {
    if (std::string(c.op) == "aten::upsample_nearest2d") continue;
    for (int opset : {9, 10}) {
      SCOPED_TRACE(::testing::Message() << c.call << " opset " << opset);
      ExportOptions options;
      options.opset_version = opset;
      options.do_constant_folding = false;
      EXPECT_TRUE(ThrowsExportError(
          [&] {
            export_model_to_bytes(ir_module(computed_size_ir(c)), {at::randn({2, 3, 4, 5})},
                                  options);
          },
          ErrorCode::kConversion,
          {"needs static input and output sizes", "export with opset >= 11"}));
    }
  }
}

TEST_F(Resample, IrScaleFactors) {
  expect_script_matches("aten::upsample_nearest2d",
                        ir_module("graph(%x : Tensor):\n"
                                  "  %a : float = prim::Constant[value=2.]()\n"
                                  "  %b : float = prim::Constant[value=1.5]()\n"
                                  "  %none : NoneType = prim::Constant()\n"
                                  "  %s : float[] = prim::ListConstruct(%a, %b)\n"
                                  "  %y : Tensor = aten::upsample_nearest2d(%x, %none, %s)\n"
                                  "  return (%y)\n"),
                        {at::randn({2, 3, 4, 5})});
}

// Nearest on uint8 (PyTorch's CPU kernel takes it; Resize's nearest too, the opset 9/10 Gather
// any type).
TEST_F(Resample, NearestUint8) {
  for (const Kind& k : {kinds()[0], kinds()[1], kinds()[2]}) {
    for (const Scales& scales : {Scales{2.0, 3.0, 2.0}, Scales{1.7, 0.5, 1.3}}) {
      Scales sc(scales.begin(), scales.begin() + k.n);
      SCOPED_TRACE(::testing::Message() << k.op << " scales " << at::ArrayRef<double>(sc));
      expect_op_matches(
          k.op,
          [k, sc](const Inputs& in) { return call_vec(k, arg(in, 0), c10::nullopt, false, sc); },
          {at::randint(0, 255, k.input, at::kByte)});
    }
  }
}

// ----- aten::__interpolate (only reachable from IR: scripted F.interpolate compiles to
// upsample_*)
TEST_F(Resample, Interpolate) {
  struct Case {
    const char* mode;
    const char* align;  // "None" or a bool constant
    const char* extra;  // how size/scale_factor are given
    Ints input;
  };
  const std::string none = "%none : NoneType = prim::Constant()\n";
  for (const auto& c : std::vector<Case>{
           {"nearest", "None", "scale", {2, 3, 4, 5}},
           {"nearest", "None", "keep", {2, 3, 4, 5}},
           {"bilinear", "0", "keep", {2, 3, 4, 5}},
           {"bicubic", "1", "keep", {2, 3, 4, 5}},
           {"bilinear", "0", "scale", {2, 3, 4, 5}},
           {"bilinear", "1", "size", {2, 3, 4, 5}},
           {"bicubic", "0", "recompute", {2, 3, 4, 5}},
           {"linear", "1", "scale", {2, 3, 6}},
           {"trilinear", "0", "size", {1, 2, 3, 4, 5}},
       }) {
    std::string ir = "graph(%x : Tensor):\n  " + none;
    ir += std::string("  %mode : str = prim::Constant[value=\"") + c.mode + "\"]()\n";
    ir += std::string("  %ac : ") +
          (std::string(c.align) == "None"
               ? "NoneType = prim::Constant()\n"
               : std::string("bool = prim::Constant[value=") + c.align + "]()\n");
    ir += "  %f : bool = prim::Constant[value=0]()\n  %t : bool = prim::Constant[value=1]()\n";
    ir +=
        "  %s1 : float = prim::Constant[value=1.7]()\n  %s2 : float = prim::Constant[value=2.]()\n";
    ir += "  %scales : float[] = prim::ListConstruct(%s1, %s2)\n";
    ir += "  %sz : int = prim::Constant[value=3]()\n";
    std::string extra = c.extra;
    if (extra == "scale") {
      ir += std::string("  %y : Tensor = aten::__interpolate(%x, %none, %") +
            (c.input.size() == 4 ? "scales" : "s1") + ", %mode, %ac, %none, %f)\n";
    } else if (extra == "keep") {  // recompute_scale_factor=False: the scales map coordinates
      ir += "  %y : Tensor = aten::__interpolate(%x, %none, %scales, %mode, %ac, %f, %f)\n";
    } else if (extra == "recompute") {
      ir += "  %y : Tensor = aten::__interpolate(%x, %none, %scales, %mode, %ac, %t, %f)\n";
    } else {
      ir += "  %y : Tensor = aten::__interpolate(%x, %sz, %none, %mode, %ac, %none, %f)\n";
    }
    ir += "  return (%y)\n";
    SCOPED_TRACE(ir);
    expect_script_matches("aten::__interpolate", ir_module(ir), {at::randn(c.input)});
  }
}

// ----- antialiased interpolation (Resize antialias, opset 18)

// _upsample_<mode>2d_aa(x, size, align_corners) when only a size is given, else the .vec overload
// (x, size?, align_corners, scale_factors?).
at::Tensor call_aa(bool cubic, const at::Tensor& x, c10::optional<Ints> size,
                   c10::optional<Scales> scales, bool ac = false) {
  if (size && !scales) {
    return cubic ? at::_upsample_bicubic2d_aa(x, *size, ac)
                 : at::_upsample_bilinear2d_aa(x, *size, ac);
  }
  at::OptionalIntArrayRef s = size ? at::OptionalIntArrayRef(*size) : c10::nullopt;
  c10::optional<at::ArrayRef<double>> f =
      scales ? c10::optional<at::ArrayRef<double>>(*scales) : c10::nullopt;
  return cubic ? at::_upsample_bicubic2d_aa(x, s, ac, f) : at::_upsample_bilinear2d_aa(x, s, ac, f);
}

const char* aa_op(bool cubic) {
  return cubic ? "aten::_upsample_bicubic2d_aa" : "aten::_upsample_bilinear2d_aa";
}

TEST_F(Resample, AntialiasedDownsampling) {
  TORCHONNX_SKIP_BELOW_OPSET(18);
  for (bool cubic : {false, true}) {
    // Output sizes (down, uneven, down in one dim and up in the other, the same size).
    for (const Ints& size : {Ints{4, 5}, Ints{3, 7}, Ints{16, 3}, Ints{10, 12}}) {
      SCOPED_TRACE(::testing::Message() << aa_op(cubic) << " size " << at::IntArrayRef(size));
      expect_op_matches(
          aa_op(cubic),
          [cubic, size](const Inputs& in) {
            return call_aa(cubic, arg(in, 0), size, c10::nullopt);
          },
          {at::randn({2, 3, 10, 12})}, 18);
    }
    // Scale factors (.vec): PyTorch maps coordinates and sizes its filter with them.
    for (const Scales& sc : {Scales{0.4, 0.5}, Scales{0.3, 1.5}}) {
      SCOPED_TRACE(::testing::Message() << aa_op(cubic) << " scales " << at::ArrayRef<double>(sc));
      expect_op_matches(
          aa_op(cubic),
          [cubic, sc](const Inputs& in) { return call_aa(cubic, arg(in, 0), c10::nullopt, sc); },
          {at::randn({2, 3, 10, 12})}, 18);
    }
  }
  // One Resize (antialias 1).
  const TracedFunction fn = [](const Inputs& in) {
    return call_aa(false, arg(in, 0), Ints{4, 5}, c10::nullopt);
  };
  EXPECT_EQ(computing_ops(fn, {at::randn({1, 2, 10, 12})}, 18),
            (std::map<std::string, int>{{"Resize", 1}}));
}

// Below opset 18 the antialiased ops have no converter (the error names opset 18);
// align_corners=True fails from 18 too (PyTorch's filter centres are not a Resize coordinate
// mode). aten::__interpolate takes no antialias: libtorch's refuses it ("not yet supported").
TEST_F(Resample, AntialiasedFailures) {
  const Inputs x{at::randn({1, 2, 10, 12})};
  const TracedFunction fn = [](const Inputs& in) {
    return call_aa(false, arg(in, 0), Ints{4, 5}, c10::nullopt);
  };
  expect_export_fails(fn, x, 17, "from opset 18", ErrorCode::kUnsupportedOp);
  TORCHONNX_SKIP_BELOW_OPSET(18);
  expect_export_fails(
      [](const Inputs& in) {
        return call_aa(true, arg(in, 0), Ints{4, 5}, c10::nullopt, true);
      },
      x, 18, "align_corners=True");
}

// ----- grid_sampler
TEST_F(Resample, GridSampler) {
  static const char* modes[] = {"bilinear", "nearest", "bicubic"};
  static const char* paddings[] = {"zeros", "border", "reflection"};
  for (int64_t mode : {0, 1, 2}) {
    for (int64_t padding : {0, 1, 2}) {
      for (bool ac : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << modes[mode] << " " << paddings[padding] << " align " << ac);
        // Grid points up to 1.3 fall outside [-1, 1] and exercise the padding mode.
        Inputs inputs{at::randn({2, 3, 5, 6}), at::rand({2, 4, 7, 2}) * 2.6 - 1.3};
        expect_op_matches(
            "aten::grid_sampler",
            [mode, padding, ac](const Inputs& in) {
              return at::grid_sampler(arg(in, 0), arg(in, 1), mode, padding, ac);
            },
            inputs, 16);
      }
    }
  }
}

// Volumes (5-D input, 5-D grid): GridSample-20 (trilinear as "linear", nearest).
TEST_F(Resample, GridSampler3d) {
  TORCHONNX_SKIP_BELOW_OPSET(20);
  static const char* modes[] = {"bilinear", "nearest"};
  static const char* paddings[] = {"zeros", "border", "reflection"};
  for (int64_t mode : {0, 1}) {
    for (int64_t padding : {0, 1, 2}) {
      for (bool ac : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << modes[mode] << " " << paddings[padding] << " align " << ac);
        Inputs inputs{at::randn({2, 3, 4, 5, 6}), at::rand({2, 3, 4, 2, 3}) * 2.6 - 1.3};
        expect_op_matches(
            "aten::grid_sampler",
            [mode, padding, ac](const Inputs& in) {
              return at::grid_sampler(arg(in, 0), arg(in, 1), mode, padding, ac);
            },
            inputs, 20);
      }
    }
  }
}

TEST_F(Resample, GridSampler3dFails) {
  auto fn = [](const Inputs& in) { return at::grid_sampler(arg(in, 0), arg(in, 1), 0, 0, false); };
  for (int opset = 16; opset <= std::min(19, highest_opset()); ++opset) {
    expect_export_fails(fn, {at::randn({1, 2, 3, 4, 5}), at::rand({1, 2, 2, 2, 3})}, opset,
                        "GridSample-20 (5-D volumes); export with opset >= 20");
  }
}

// ----- affine_grid_generator
TEST_F(Resample, AffineGrid) {
  for (bool ac : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "align " << ac);
    expect_op_matches("aten::affine_grid_generator",
                      [ac](const Inputs& in) {
                        return at::affine_grid_generator(arg(in, 0), {2, 3, 4, 5}, ac);
                      },
                      {at::randn({2, 2, 3})});
    expect_op_matches("aten::affine_grid_generator",
                      [ac](const Inputs& in) {
                        return at::affine_grid_generator(arg(in, 0), {2, 1, 3, 4, 5}, ac);
                      },
                      {at::randn({2, 3, 4})});
    // A dim of size 1 (its coordinate is 0).
    expect_op_matches("aten::affine_grid_generator",
                      [ac](const Inputs& in) {
                        return at::affine_grid_generator(arg(in, 0), {1, 3, 1, 6}, ac);
                      },
                      {at::randn({1, 2, 3}, at::kDouble)});
  }
}

// From opset 20 one AffineGrid (MatMul with a constant base grid, Transpose and Reshape below);
// a spatial dim of size 1 with align_corners=True keeps the MatMul form (AffineGrid puts it at -1,
// PyTorch at 0).
TEST_F(Resample, AffineGridIsAffineGridFromOpset20) {
  TORCHONNX_SKIP_BELOW_OPSET(20);
  for (bool ac : {false, true}) {
    for (const Ints& size : {Ints{2, 3, 4, 5}, Ints{2, 1, 3, 4, 5}, Ints{2, 3, 1, 6}}) {
      SCOPED_TRACE(::testing::Message() << "size " << at::IntArrayRef(size) << " align " << ac);
      const TracedFunction fn = [ac, size](const Inputs& in) {
        return at::affine_grid_generator(arg(in, 0), size, ac);
      };
      const int64_t n = static_cast<int64_t>(size.size()) - 2;
      const Inputs theta{at::randn({2, n, n + 1})};
      expect_op_matches("aten::affine_grid_generator", fn, theta, 20);
      const auto counts = computing_ops(fn, theta, 20);
      if (ac && size[2] == 1) {
        EXPECT_EQ(counts.count("AffineGrid"), 0u);
        EXPECT_EQ(counts.at("MatMul"), 1);
      } else {
        EXPECT_EQ(counts, (std::map<std::string, int>{{"AffineGrid", 1}}));
      }
      EXPECT_EQ(computing_ops(fn, theta, 19),
                (std::map<std::string, int>{{"MatMul", 1}, {"Reshape", 1}, {"Transpose", 1}}));
    }
  }
  expect_op_matches(
      "aten::affine_grid_generator",
      [](const Inputs& in) {
        return at::affine_grid_generator(arg(in, 0), {1, 2, 3, 4}, true);
      },
      {at::randn({1, 2, 3}, at::kDouble)}, 20);
}

// A size computed in the graph: AffineGrid takes it as an input (20+, align_corners=False).
TEST_F(Resample, AffineGridOfComputedSize) {
  auto ir = [](bool ac) {
    return fmt::format(R"IR(
graph(%theta : Tensor, %x : Tensor):
  %ac : bool = prim::Constant[value={}]()
  %size : int[] = aten::size(%x)
  %y : Tensor = aten::affine_grid_generator(%theta, %size, %ac)
  return (%y))IR",
                       ac ? 1 : 0);
  };
  const Inputs in{at::randn({2, 2, 3}), at::randn({2, 3, 5, 4})};
  for (bool ac : {false, true}) {
    expect_module_export_fails(ir_module(ir(ac)), in, 17,
                               "a size computed in the graph needs ONNX AffineGrid; export with "
                               "opset >= 20",
                               ErrorCode::kConversion, /*fold=*/false);
  }
  TORCHONNX_SKIP_BELOW_OPSET(20);
  expect_script_matches("aten::affine_grid_generator", ir_module(ir(false)), in,
                        {20, highest_opset(), /*fold=*/false});
  // Sizes known only at run time, spatial dims of size 1 among them (PyTorch's coordinate there
  // is 0, AffineGrid's -1 in ONNX's reference, +1 in ONNX Runtime): one export, every case.
  for (bool ac : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "align " << ac);
    const std::vector<Inputs> cases2d{
        {at::randn({2, 2, 3}), at::randn({2, 3, 5, 4})},
        {at::randn({1, 2, 3}), at::randn({1, 2, 1, 4})},
        {at::randn({3, 2, 3}), at::randn({3, 1, 5, 1})},
        {at::randn({2, 2, 3}), at::randn({2, 1, 1, 1})},
    };
    const std::vector<Inputs> cases3d{
        {at::randn({2, 3, 4}), at::randn({2, 3, 4, 5, 3})},
        {at::randn({1, 3, 4}), at::randn({1, 2, 1, 5, 3})},
        {at::randn({2, 3, 4}), at::randn({2, 2, 4, 1, 3})},
        {at::randn({2, 3, 4}), at::randn({2, 2, 2, 3, 1})},
        {at::randn({1, 3, 4}), at::randn({1, 1, 1, 1, 1})},
    };
    for (int opset = 20; opset <= highest_opset(); ++opset) {
      for (const auto* cases : {&cases2d, &cases3d}) {
        EXPECT_TRUE(expect_dynamic_matches("aten::affine_grid_generator", ir_module(ir(ac)), *cases,
                                           opset));
      }
      // A double theta.
      EXPECT_TRUE(
          expect_dynamic_matches("aten::affine_grid_generator", ir_module(ir(ac)),
                                 {{at::randn({2, 2, 3}, at::kDouble), at::randn({2, 3, 1, 4})},
                                  {at::randn({1, 2, 3}, at::kDouble), at::randn({1, 3, 5, 4})}},
                                 opset));
      record_tested_op("aten::affine_grid_generator", opset, true);
    }
  }
}

// Spatial transformer: affine_grid then grid_sample (2-D; 3-D from opset 20).
TEST_F(Resample, AffineGridThenGridSample) {
  expect_op_matches(
      "aten::grid_sampler",
      [](const Inputs& in) {
        auto grid = at::affine_grid_generator(arg(in, 1), {2, 3, 6, 5}, false);
        return at::grid_sampler(arg(in, 0), grid, 0, 0, false);
      },
      {at::randn({2, 3, 6, 5}), at::randn({2, 2, 3}) * 0.5}, 16);
  TORCHONNX_SKIP_BELOW_OPSET(20);
  expect_op_matches(
      "aten::grid_sampler",
      [](const Inputs& in) {
        auto grid = at::affine_grid_generator(arg(in, 1), {2, 3, 4, 6, 5}, false);
        return at::grid_sampler(arg(in, 0), grid, 0, 1, false);
      },
      {at::randn({2, 3, 4, 6, 5}), at::randn({2, 3, 4}) * 0.5}, 20);
}

}  // namespace
}  // namespace torchonnx::testing
