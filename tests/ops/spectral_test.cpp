// Numeric tests of the signal processing converters: window functions, stft.
//
// Windows whose arguments are all constants are folded to constants when folding is on, so they
// are exported unfolded (traced: expect_unfolded_matches; scripted: kUnfolded).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

const ScriptOptions kUnfolded{kMinOpset, highest_opset(), /*fold=*/false};

class Spectral : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(0); }
};

// ----- windows ----------------------------------------------------------------------------------

TEST_F(Spectral, HannWindow) {
  for (bool periodic : {true, false}) {
    SCOPED_TRACE(periodic ? "periodic" : "symmetric");
    for (int64_t n : {0, 1, 2, 8, 11}) {
      SCOPED_TRACE(n);
      expect_unfolded_matches("aten::hann_window",
                              [n, periodic](const Inputs&) { return at::hann_window(n, periodic); },
                              {at::randn({2})});
    }
    expect_unfolded_matches(
        "aten::hann_window",
        [periodic](const Inputs&) { return at::hann_window(6, periodic, at::kDouble); },
        {at::randn({2})});
  }
  expect_unfolded_matches("aten::hann_window", [](const Inputs&) { return at::hann_window(6); },
                          {at::randn({2})});
}

TEST_F(Spectral, HannWindowOfComputedLength) {
  for (int64_t n : {1, 7}) {
    SCOPED_TRACE(n);
    expect_script_matches("aten::hann_window",
                          "def forward(self, x):\n"
                          "  return torch.hann_window(x.size(0)), torch.hann_window(x.size(0), "
                          "periodic=False)\n",
                          {at::randn({n})}, kUnfolded);
  }
}

// The other windows, as HannWindow above: every length class (0, 1, even, odd), both forms, the
// dtypes, and a length computed in the graph (1 takes the Where).
TEST_F(Spectral, HammingBlackmanBartlettWindows) {
  using Window = at::Tensor (*)(int64_t, bool, at::ScalarType);
  const std::vector<std::tuple<const char*, Window>> windows{
      {"aten::hamming_window",
       [](int64_t n, bool p, at::ScalarType t) { return at::hamming_window(n, p, at::dtype(t)); }},
      {"aten::blackman_window",
       [](int64_t n, bool p, at::ScalarType t) { return at::blackman_window(n, p, at::dtype(t)); }},
      {"aten::bartlett_window",
       [](int64_t n, bool p, at::ScalarType t) { return at::bartlett_window(n, p, at::dtype(t)); }},
  };
  for (const auto& [op, window] : windows) {
    SCOPED_TRACE(op);
    for (bool periodic : {true, false}) {
      SCOPED_TRACE(periodic ? "periodic" : "symmetric");
      for (int64_t n : {0, 1, 2, 5, 8, 11}) {
        SCOPED_TRACE(n);
        expect_unfolded_matches(
            op, [=, w = window](const Inputs&) { return w(n, periodic, at::kFloat); },
            {at::randn({2})});
      }
      expect_unfolded_matches(
          op, [=, w = window](const Inputs&) { return w(7, periodic, at::kDouble); },
          {at::randn({2})});
    }
  }
}

TEST_F(Spectral, HammingWindowCoefficients) {
  for (bool periodic : {true, false}) {
    SCOPED_TRACE(periodic ? "periodic" : "symmetric");
    expect_unfolded_matches(
        "aten::hamming_window",
        [periodic](const Inputs&) { return at::hamming_window(9, periodic, 0.5); },
        {at::randn({2})});
    expect_unfolded_matches("aten::hamming_window",
                            [periodic](const Inputs&) {
                              return at::hamming_window(10, periodic, -0.25, 1.5,
                                                        at::dtype(at::kDouble));
                            },
                            {at::randn({2})});
  }
  expect_unfolded_matches("aten::hamming_window",
                          [](const Inputs&) { return at::hamming_window(12); }, {at::randn({2})});
}

TEST_F(Spectral, WindowsOfComputedLength) {
  for (int64_t n : {1, 6, 7}) {
    SCOPED_TRACE(n);
    // dtype 7 is float64 (torch.float64 is no value in TorchScript source here).
    for (const char* op : {"hamming_window", "blackman_window", "bartlett_window"}) {
      SCOPED_TRACE(op);
      expect_script_matches(std::string("aten::") + op,
                            fmt::format("def forward(self, x):\n"
                                        "  return torch.{0}(x.size(0)), torch.{0}(x.size(0), "
                                        "periodic=False, dtype=7)\n",
                                        op),
                            {at::randn({n})}, kUnfolded);
    }
    // Coefficients computed in the graph.
    expect_script_matches("aten::hamming_window",
                          "def forward(self, x, a: float):\n"
                          "  return torch.hamming_window(x.size(0), False, alpha=a, beta=2 * a)\n",
                          {at::randn({n}), 0.3}, kUnfolded);
  }
}

// The out= overloads of every window (Note [Factory overloads]): the window in the out tensor's
// dtype (float here, double for one), of a computed length.
TEST_F(Spectral, WindowsIntoOutTensors) {
  for (const char* op : {"hann_window", "hamming_window", "blackman_window", "bartlett_window"}) {
    SCOPED_TRACE(op);
    expect_script_matches(std::string("aten::") + op,
                          fmt::format("def forward(self, x):\n"
                                      "  o0 = torch.empty([0])\n  o1 = torch.empty([0], dtype=7)\n"
                                      "  return torch.{0}(x.size(0), out=o0), "
                                      "torch.{0}(x.size(0), False, out=o1)\n",
                                      op),
                          {at::randn({6})}, kUnfolded);
  }
  expect_script_matches("aten::hamming_window",
                        "def forward(self, x):\n"
                        "  o0 = torch.empty([0])\n  o1 = torch.empty([0])\n"
                        "  return torch.hamming_window(x.size(0), True, 0.5, out=o0), "
                        "torch.hamming_window(x.size(0), False, 0.6, 0.3, out=o1)\n",
                        {at::randn({7})}, kUnfolded);
}

// The windows' cosines are written with Sin: ONNX Runtime's Cos has no double kernel up to at
// least 1.21 (Debian 13's; tools/verify's 1.30 has one), so a window computed in double with Cos
// failed there ("Could not find an implementation for Cos(7)"). A length given as an int input,
// float and double windows; on a build with ONNX Runtime in-process (Debian 13) through it as well.
TEST_F(Spectral, WindowsWithoutDoubleCos) {
  for (const char* op : {"hann_window", "hamming_window", "blackman_window"}) {
    for (const char* dtype : {"6", "7"}) {  // float32, float64
      SCOPED_TRACE(fmt::format("{} of dtype {}", op, dtype));
      const torch::jit::Module m = script_module(fmt::format(
          "def forward(self, x, n: int):\n"
          "  return x + torch.{0}(n, dtype={1}), x + torch.{0}(n, periodic=False, dtype={1})\n",
          op, dtype));
      const Inputs inputs{at::randn({10}, at::dtype(dtype[0] == '6' ? at::kFloat : at::kDouble)),
                          int64_t{10}};
      expect_script_matches(std::string("aten::") + op, m, inputs, {kMinOpset, 16});
      for (int opset = kMinOpset; opset <= 16; ++opset) {
        ExportOptions options;
        options.opset_version = opset;
        const std::string out = temp_dir(fmt::format("window_opset{}", opset)) + "/model.onnx";
        export_model(m, inputs, out, options);
        const onnx::ModelProto model = read_model_file(out);
        for (const auto& node : model.graph().node()) {
          EXPECT_NE(node.op_type(), "Cos") << "at opset " << opset;
        }
        if (in_process_verify()) {  // ONNX Runtime 1.21 in-process (Debian 13)
          try {
            const VerifyResult r = verify_export(m, inputs, out, options, verify_options({}));
            EXPECT_TRUE(r.pass) << "at opset " << opset << ": " << format_verify_result(r);
          } catch (const ExportError& e) {
            ADD_FAILURE() << "at opset " << opset << ": " << e.what();
          }
        }
      }
    }
  }
}

// ----- stft (opset 17: DFT) ----------------------------------------------------------------------

// return_complex=False: the real and imaginary parts in a last dim of 2.
TEST_F(Spectral, StftWithoutCentering) {
  at::Tensor x = at::randn({2, 40});
  const Tolerance tol{1e-4, 1e-4};
  // n_fft, hop_length, win_length, window (Hann of win_length or none), normalized, onesided.
  for (auto [n_fft, hop, win, hann, normalized, onesided] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, bool, bool, bool>>{
           {8, 2, 8, true, false, true},
           {8, 3, 6, true, true, true},
           {10, 4, 10, false, false, false},
           {9, 5, 5, false, true, true},
           {16, 16, 12, true, false, false}}) {
    SCOPED_TRACE(::testing::Message() << "n_fft " << n_fft << " hop " << hop << " win " << win);
    at::Tensor window = hann ? at::hann_window(win) : at::Tensor();
    auto fn = [=](const Inputs& in) {
      return at::stft(arg(in, 0), n_fft, hop, win,
                      hann ? c10::optional<at::Tensor>(window) : c10::nullopt,
                      /*center=*/false, "reflect", normalized, onesided, /*return_complex=*/false);
    };
    expect_op_matches("aten::stft", fn, {x}, 17, highest_opset(), {}, tol);
  }
}

TEST_F(Spectral, StftCentered) {
  const Tolerance tol{1e-4, 1e-4};
  for (const char* mode : {"reflect", "constant", "replicate"}) {
    SCOPED_TRACE(mode);
    expect_op_matches(
        "aten::stft",
        [mode](const Inputs& in) {
          return at::stft(arg(in, 0), 8, 2, 8, at::hann_window(8), /*center=*/true, mode, false,
                          true, false);
        },
        {at::randn({2, 30})}, 17, highest_opset(), {}, tol);
  }
  // A 1-D double signal with the defaults: hop n_fft / 4, win_length n_fft, no window.
  expect_op_matches(
      "aten::stft",
      [](const Inputs& in) {
        return at::stft(arg(in, 0), 16, c10::nullopt, c10::nullopt, c10::nullopt, true, "reflect",
                        false, c10::nullopt, false);
      },
      {at::randn({50}, at::kDouble)}, 17, highest_opset(), {}, tol);
}

// The overload without `center` (aten::stft, PyTorch's older signature, which torch.stft calls
// after padding in Python): the frames of the signal as it is.
TEST_F(Spectral, StftWithoutCenterOverload) {
  // libtorch 2.14's schema has a ninth argument, align_to_window (None here).
  bool align_to_window = false;
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString("aten::stft"))) {
    align_to_window |= op->schema().overload_name().empty() && op->schema().arguments().size() == 9;
  }
  auto m = ir_module(std::string(R"IR(
graph(%x : Tensor):
  %n : int = prim::Constant[value=8]()
  %hop : int = prim::Constant[value=3]()
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::stft(%x, %n, %hop, %none, %none, %f, %t, %f)IR") +
                     (align_to_window ? ", %none)" : ")") + R"IR(
  return (%y))IR");
  ScriptOptions so;
  so.first = 17;
  so.tol = {1e-4, 1e-4};
  expect_script_matches("aten::stft", m, {at::randn({2, 30})}, so);
}

TEST_F(Spectral, StftInScript) {
  // torch.stft pads (center) in Python, then calls the overload without center.
  expect_script_matches("aten::stft",
                        "def forward(self, x, w):\n"
                        "  return torch.stft(x, 8, hop_length=3, window=w, center=True,\n"
                        "                    normalized=True, return_complex=False)\n",
                        {at::randn({3, 33}), at::hann_window(8)},
                        {17, highest_opset(), true, {1e-4, 1e-4}});
}

TEST_F(Spectral, StftFailsClearly) {
  at::Tensor x = at::randn({2, 40});
  expect_export_fails(
      [](const Inputs& in) {
        return at::stft(arg(in, 0), 8, 2, 8, c10::nullopt, true, "circular", false, true, false);
      },
      {x}, 17, "pad_mode 'circular'");
}

// ----- complex values (Note [Complex values]) ----------------------------------------------------

const Tolerance kFft{1e-4, 1e-4};

// stft(return_complex=True) read by view_as_real, real, imag and abs, on 1-D and batched signals.
TEST_F(Spectral, ComplexStftPassesThrough) {
  for (at::Tensor x : {at::randn({2, 50}), at::randn({37})}) {
    SCOPED_TRACE(x.dim());
    auto spectrum = [](const at::Tensor& x) {
      return at::stft(x, 16, 4, 12, at::hann_window(12), /*center=*/true, "reflect", false,
                      c10::nullopt, /*return_complex=*/true);
    };
    expect_op_matches(
        "aten::view_as_real",
        [=](const Inputs& in) { return at::view_as_real(spectrum(arg(in, 0))); }, {x}, 17,
        highest_opset(), {}, kFft);
    expect_op_matches(
        "aten::real", [=](const Inputs& in) { return at::real(spectrum(arg(in, 0))); }, {x}, 17,
        highest_opset(), {}, kFft);
    expect_op_matches(
        "aten::imag", [=](const Inputs& in) { return at::imag(spectrum(arg(in, 0))); }, {x}, 17,
        highest_opset(), {}, kFft);
    expect_op_matches(
        "aten::abs", [=](const Inputs& in) { return at::abs(spectrum(arg(in, 0))).pow(2); }, {x},
        17, highest_opset(), {}, kFft);
  }
  // A double signal, not onesided, normalized, without center.
  expect_op_matches(
      "aten::abs",
      [](const Inputs& in) {
        at::Tensor s = at::stft(arg(in, 0), 10, 3, c10::nullopt, c10::nullopt, false, "reflect",
                                /*normalized=*/true, /*onesided=*/false, true);
        return std::make_tuple(at::abs(s), at::view_as_real(s));
      },
      {at::randn({3, 40}, at::kDouble)}, 17, highest_opset(), {}, kFft);
}

TEST_F(Spectral, ComplexStftInScript) {
  expect_script_matches(
      std::vector<std::string>{"aten::abs", "aten::real", "aten::imag"},
      script_module("def forward(self, x, w):\n"
                    "  s = torch.stft(x, 16, hop_length=5, window=w, return_complex=True)\n"
                    "  return s.abs().pow(2), s.real ** 2 + s.imag ** 2, torch.view_as_real(s)\n"),
      {at::randn({2, 64}), at::hann_window(16)}, {17, highest_opset(), true, kFft});
}

// view_as_complex makes a complex value from a [..., 2] pair at any opset; real of a real tensor
// is the tensor.
TEST_F(Spectral, ViewAsComplex) {
  at::Tensor x = at::randn({3, 4, 2});
  x.index_put_({0, 0}, 0);  // |0| = 0
  x.index_put_({0, 1, 0}, -3);
  expect_op_matches("aten::view_as_complex",
                    [](const Inputs& in) {
                      at::Tensor z = at::view_as_complex(arg(in, 0));
                      return std::make_tuple(at::abs(z), at::real(z), at::imag(z),
                                             at::view_as_real(z));
                    },
                    {x});
  expect_op_matches("aten::abs",
                    [](const Inputs& in) { return at::abs(at::view_as_complex(arg(in, 0))); },
                    {at::randn({2}, at::kDouble)});
  // Large parts: their squares overflow float, not the double they are summed in.
  expect_op_matches("aten::abs",
                    [](const Inputs& in) { return at::abs(at::view_as_complex(arg(in, 0))); },
                    {at::tensor({3e30f, -4e30f, 1e-30f, 0.0f}).reshape({2, 2})});
  expect_script_matches("aten::real", "def forward(self, x):\n  return x.real + 1\n",
                        {at::randn({2, 3})});
  // Scripted .real / .imag of a complex value (a C++ trace records view_as_real + select).
  expect_script_matches(std::vector<std::string>{"aten::real", "aten::imag"},
                        script_module("def forward(self, x):\n  z = torch.view_as_complex(x)\n"
                                      "  return z.real * 2, z.imag + 1\n"),
                        {x});
  expect_script_matches("aten::view_as_real",
                        "def forward(self, x):\n"
                        "  return torch.view_as_real(torch.view_as_complex(x)) * 2\n",
                        {x});
}

// torchaudio's Spectrogram (functional.spectrogram): the batch dims packed before stft, the complex
// spectrum reshaped to them after (reading its sizes), divided by the window's norm, |.|^power.
constexpr const char* kTorchaudioSpectrogram =
    "def forward(self, waveform):\n"
    "  shape = waveform.size()\n"
    "  waveform = waveform.reshape(-1, shape[-1])\n"
    "  spec_f = torch.stft(waveform, 64, 16, 64, self.window, True, 'reflect', False, True,\n"
    "                      return_complex=True)\n"
    "  spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])\n"
    "  spec_f /= self.window.pow(2.0).sum().sqrt()\n"
    "  return spec_f.abs().pow(2.0), spec_f.abs()\n";

TEST_F(Spectral, ComplexReshapeSizeAndScaling) {
  const at::Tensor window = at::hann_window(64);
  for (at::Tensor x : {at::randn({2, 3, 300}), at::randn({300})}) {
    SCOPED_TRACE(x.dim());
    expect_script_matches(std::vector<std::string>{"aten::reshape", "aten::div", "aten::abs"},
                          script_module(kTorchaudioSpectrogram, {{"window", window}}), {x},
                          {17, highest_opset(), true, kFft});
    expect_op_matches(
        "aten::reshape",
        [=](const Inputs& in) {
          at::Tensor w = arg(in, 0);
          at::Tensor flat = w.reshape({-1, w.size(-1)});
          at::Tensor s = at::stft(flat, 64, 16, 64, window, true, "reflect", false, true, true);
          std::vector<int64_t> sizes(w.sizes().begin(), w.sizes().end() - 1);
          sizes.push_back(s.size(-2));
          sizes.push_back(s.size(-1));
          s = s.reshape(sizes) * 0.5;
          return at::abs(s / window.pow(2).sum().sqrt());
        },
        {x}, 17, highest_opset(), {}, kFft);
  }
  // Sizes of a complex value (unfolded: folding makes them constants); mul and div by a real tensor
  // that broadcasts, and by a number.
  expect_script_matches(
      std::vector<std::string>{"aten::size", "aten::mul", "aten::view"},
      script_module("def forward(self, x, y):\n"
                    "  z = torch.view_as_complex(x)\n"
                    "  n = z.size()\n"
                    "  z = (y * z / 2).view(n[0] * n[1], n[2])\n"
                    "  return torch.view_as_real(z), z.size(-1) + z.size(0) + x.size(-1)\n"),
      {at::randn({2, 3, 4, 2}), at::randn({3, 1})}, kUnfolded);
  // type_as of a complex value to another's (complex) type: the pair itself. Its complex form was
  // written but not registered (the plain type_as converter ran on the pair).
  expect_script_matches("aten::type_as",
                        script_module("def forward(self, x, y):\n"
                                      "  z = torch.view_as_complex(x)\n"
                                      "  w = torch.view_as_complex(y)\n"
                                      "  return torch.view_as_real(z.type_as(w) * 2.0)\n"),
                        {at::randn({3, 4, 2}), at::randn({2, 2})}, kUnfolded);
}

TEST_F(Spectral, ComplexValuesReachingOtherOpsFailClearly) {
  at::Tensor x = at::randn({2, 40});
  auto spectrum = [](const at::Tensor& x) {
    return at::stft(x, 8, 2, 8, c10::nullopt, false, "reflect", false, true,
                    /*return_complex=*/true);
  };
  expect_export_fails(
      [=](const Inputs& in) { return at::view_as_real(at::add(spectrum(arg(in, 0)), 2)); }, {x}, 17,
      "its complex result reaches aten::add");
  expect_export_fails([=](const Inputs& in) { return spectrum(arg(in, 0)); }, {x}, 17,
                      "its complex result reaches an output of the graph");
  expect_export_fails([](const Inputs& in) { return at::view_as_complex(arg(in, 0)).sum(); },
                      {at::randn({3, 2})}, 13, "its complex result reaches aten::sum");
}

// ----- istft (opset 17: DFT inverse=1 and overlap-add) -------------------------------------------

// istft of spectra that are not the STFT of any signal (perturbed), so that the inverse DFT, the
// conjugate-symmetric extension, the window and the envelope division all count.
TEST_F(Spectral, Istft) {
  struct Case {
    int64_t n_fft, hop, win;
    bool hann, center, normalized;
    c10::optional<bool> onesided;
    c10::optional<int64_t> length;
  };
  for (const Case& c :
       std::vector<Case>{{16, 4, 16, true, true, false, c10::nullopt, c10::nullopt},
                         {16, 4, 12, true, true, true, true, c10::nullopt},
                         {15, 5, 15, true, false, false, c10::nullopt, c10::nullopt},
                         {16, 4, 16, true, true, false, false, c10::nullopt},
                         {16, 4, 16, true, true, false, true, 70},
                         {16, 4, 16, true, true, false, true, 50},
                         {16, 8, 16, false, false, false, true, c10::nullopt},
                         {7, 2, 7, true, true, false, c10::nullopt, 30}}) {
    SCOPED_TRACE(::testing::Message() << "n_fft " << c.n_fft << " hop " << c.hop << " win " << c.win
                                      << " center " << c.center);
    // Hann windows are 0 at their ends: without center the first sample's envelope is 0, which
    // PyTorch rejects; a Hamming window is not.
    at::Tensor window = !c.hann    ? at::Tensor()
                        : c.center ? at::hann_window(c.win)
                                   : at::hamming_window(c.win);
    const c10::optional<at::Tensor> w =
        window.defined() ? c10::optional<at::Tensor>(window) : c10::nullopt;
    at::Tensor x = at::randn({2, 80});
    at::Tensor s =
        at::stft(x, c.n_fft, c.hop, c.win, w, c.center, "reflect", c.normalized, c.onesided, true);
    at::Tensor pair = at::view_as_real(s + 0.1 * at::randn_like(s)).contiguous();
    auto fn = [=](const Inputs& in) {
      return at::istft(at::view_as_complex(arg(in, 0)), c.n_fft, c.hop, c.win, w, c.center,
                       c.normalized, c.onesided, c.length, false);
    };
    expect_op_matches("aten::istft", fn, {pair}, 17, highest_opset(), {}, kFft);
    // Unbatched.
    expect_op_matches("aten::istft", fn, {pair[1].contiguous()}, 17, highest_opset(), {}, kFft);
  }
}

TEST_F(Spectral, IstftOfStftRestoresTheSignal) {
  for (auto type : {at::kFloat, at::kDouble}) {
    expect_op_matches(
        "aten::istft",
        [](const Inputs& in) {
          at::Tensor w = at::hann_window(32, true, arg(in, 0).scalar_type());
          at::Tensor s = at::stft(arg(in, 0), 32, 8, 32, w, true, "reflect", false, true, true);
          return at::istft(s, 32, 8, 32, w, true, false, true, arg(in, 0).size(-1), false);
        },
        {at::randn({3, 100}, type)}, 17, highest_opset(), {}, kFft);
  }
  // The window made in the graph.
  expect_script_matches("aten::istft",
                        "def forward(self, x):\n"
                        "  w = torch.hamming_window(12)\n"
                        "  s = torch.stft(x, 12, hop_length=3, window=w, return_complex=True)\n"
                        "  return torch.istft(s, 12, hop_length=3, window=w)\n",
                        {at::randn({50})}, {17, highest_opset(), true, kFft});
}

// ----- a spectrogram front end
// --------------------------------------------------------------------

// torchaudio's HTK mel filterbank (melscale_fbanks, norm=None): [n_freqs, n_mels] triangles
// between mel-spaced frequencies from 0 to sample_rate / 2.
at::Tensor mel_filterbank(int64_t n_freqs, int64_t n_mels, double sample_rate) {
  auto hz_to_mel = [](double f) { return 2595.0 * std::log10(1.0 + f / 700.0); };
  at::Tensor all_freqs = at::linspace(0, sample_rate / 2, n_freqs, at::kDouble);
  at::Tensor m_pts = at::linspace(0, hz_to_mel(sample_rate / 2), n_mels + 2, at::kDouble);
  at::Tensor f_pts = 700.0 * (at::pow(10.0, m_pts / 2595.0) - 1.0);
  at::Tensor f_diff = f_pts.slice(0, 1) - f_pts.slice(0, 0, -1);
  at::Tensor slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1);
  at::Tensor down = -slopes.slice(1, 0, -2) / f_diff.slice(0, 0, -1);
  at::Tensor up = slopes.slice(1, 2) / f_diff.slice(0, 1);
  return at::clamp_min(at::minimum(down, up), 0).to(at::kFloat);
}

// One second of 16 kHz "speech": a chirp, a tone and noise (a realistic dynamic range: the log-mel
// features span several decades), `batch` rows (none for 0: a 1-D signal).
at::Tensor audio(int64_t batch) {
  at::Tensor t = at::arange(16000, at::kFloat) / 16000;
  at::Tensor x = 0.5 * at::sin(2 * M_PI * (200 + 1500 * t) * t) + 0.2 * at::sin(2 * M_PI * 440 * t);
  if (batch == 0) return x + 0.01 * at::randn({16000});
  return x.unsqueeze(0) * at::linspace(0.5, 1.5, batch).unsqueeze(1) +
         0.01 * at::randn({batch, 16000});
}

// log(mel · |stft|² + 1e-6) with a Hann window, n_fft 400, hop 160, centered with reflection: a
// speech model's front end (Whisper-style log-mel features), 80 HTK mel bands. Tolerance kFft (rtol
// and atol 1e-4): the features reach |x| ≈ 12 and the export differs from libtorch by up to 3e-4,
// in weak bands, where a float32 FFT's rounding (~1e-7 of a frame's largest bin) is a visible
// fraction of the band's energy: PyTorch's own float32 and float64 results differ by up to 4e-4
// on the same audio. (With ONNX Runtime's DFT in float the difference was 5e-2: see dft() in
// spectral.cpp.)
constexpr const char* kLogMelSource =
    "def forward(self, x):\n"
    "  s = torch.stft(x, 400, hop_length=160, window=self.window, center=True,\n"
    "                 pad_mode='reflect', return_complex=True)\n"
    "  power = s.abs().pow(2)\n"
    "  mel = torch.matmul(power.transpose(-1, -2), self.mel).transpose(-1, -2)\n"
    "  return torch.log(mel + 1e-6)\n";

TEST_F(Spectral, LogMelSpectrogram) {
  const at::Tensor window = at::hann_window(400);
  const at::Tensor mel = mel_filterbank(201, 80, 16000);
  for (int64_t batch : {0, 3}) {
    SCOPED_TRACE(batch);
    const at::Tensor x = audio(batch);
    expect_op_matches(
        "aten::stft",
        [=](const Inputs& in) {
          at::Tensor s = at::stft(arg(in, 0), 400, 160, 400, window, true, "reflect", false,
                                  c10::nullopt, true);
          at::Tensor power = at::abs(s).pow(2);
          return at::log(at::matmul(power.transpose(-1, -2), mel).transpose(-1, -2) + 1e-6);
        },
        {x}, 17, highest_opset(), {}, kFft);
    expect_script_matches(std::vector<std::string>{"aten::stft", "aten::abs"},
                          script_module(kLogMelSource, {{"window", window}, {"mel", mel}}), {x},
                          {17, highest_opset(), true, kFft});
    // The deprecated real form, which torch.onnx 2.6 exports (and not the complex one).
    std::string real_form = kLogMelSource;
    auto replace = [&](const std::string& from, const std::string& to) {
      real_form.replace(real_form.find(from), from.size(), to);
    };
    replace("return_complex=True", "return_complex=False");
    replace("s.abs().pow(2)", "s.pow(2).sum(-1)");
    expect_script_matches(std::vector<std::string>{"aten::stft"},
                          script_module(real_form, {{"window", window}, {"mel", mel}}), {x},
                          {17, highest_opset(), true, kFft});
  }
}

}  // namespace
}  // namespace torchonnx::testing
