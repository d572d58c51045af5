// Did the export work? torchonnx::verify runs an export in ONNX Runtime (its C++ API, in-process)
// and the TorchScript module in libtorch on the same inputs, and compares every output
// (torch.onnx.verification.verify). With find_mismatch, when outputs differ, it names the first
// TorchScript node whose converted ONNX nodes compute something else than libtorch
// (torch.onnx.verification.find_mismatch).
//
//   torch::jit::Module m = torchonnx::load_model("resnet18.pt");
//   torchonnx::VerifyResult r = torchonnx::verify(m, {torch::randn({1, 3, 224, 224})});
//   if (!r.pass) std::cerr << torchonnx::format_verify_result(r);
//
// Builds without ONNX Runtime's C++ API (Debian 12: no libonnxruntime-dev) have these functions
// too: verify() then throws ExportError(kInvalidArgument) saying how to get it
// (verify_available() tells beforehand).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchonnx/export.h"

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

// The exit code of `torchonnx verify` when the outputs differ (the export ran, its results are
// wrong); other failures exit with their ErrorCode.
inline constexpr int kVerifyMismatchExitCode = 9;

struct VerifyOptions {
  // An element matches when |onnx - torch| <= A + rtol * |torch|, A = max(atol, atol_scale *
  // scale) of its output, scale = its max|torch|, at most 10x the median of its nonzero |torch| (so
  // that a few extreme elements do not make the tolerance of the others vacuous; as
  // tools/verify/verify.mjs); NaN and ±Inf must be at the same positions. The absolute tolerance
  // follows each output's scale (float32 kernels summing in another order differ by a fraction of
  // the values' size, not by a fixed amount): the tolerance of the model tests of deep float32
  // networks (tests/models/), and torch.onnx.verification's rtol. Integer and bool outputs must
  // match exactly (no tolerance).
  double rtol = 1e-3;
  double atol = 1e-5;
  double atol_scale = 1e-4;
  // Run an existing export instead of exporting (the export options must be those it was made
  // with: the input order and training mode are taken from them).
  std::string onnx_path;
  // More argument sets to compare on (other shapes of the dynamic axes), each with a label for the
  // report. When empty and options.dynamic_axes names inputs, two sets are made from the example
  // by growing every dynamic axis (size + 1, then 2 * size + 1); not with `detections` (random
  // images give detections at score ties): the result then says they were not compared.
  std::vector<std::pair<std::string, std::vector<c10::IValue>>> more_inputs;
  // libtorch's outputs on the example arguments (flattened, in output order), when the caller
  // already has them (a test that computed its reference): verify then compares with these and
  // does not run the module on the example again. Empty: verify runs it.
  std::vector<at::Tensor> expected;
  // When some output differs, find the first TorchScript node whose conversion is wrong.
  bool find_mismatch = false;
  // The outputs are detection records (torchvision's detection models): every output whose dim 0
  // is the first output's N holds one row per detection (boxes Nx4 float, labels N integer,
  // scores N float, masks Nx1xHxW, keypoints NxKx3, keypoint scores NxK). Nearly equal scores may
  // come out in another order, and a near-tie at the cut-off may swap the last detections: each
  // expected detection, in order, is matched to the unused actual one with the same label, a
  // score within tolerance and a box within pixel_atol (the closest box when several); the other
  // per-detection outputs are compared row by row under that matching, and a detection whose row
  // is out of tolerance in one of them counts as unmatched. They pass when N is equal and at least
  // 98% of the expected detections are matched (all of them when N < 50). The Node.js runner's
  // --detections (tools/verify/verify.mjs) compares the same way.
  bool detections = false;
  // With detections: the absolute tolerance of boxes and keypoints (NxKx3), which are in pixels
  // (0: atol).
  double pixel_atol = 0;
};

// How the detection records of one set of inputs matched (VerifyOptions::detections).
struct DetectionMatch {
  std::vector<size_t> outputs;  // the per-detection outputs (indices among the outputs)
  int64_t count = 0;            // N, libtorch's detections
  int64_t matched = 0;          // matched by label, score and box, and within tolerance elsewhere
  int64_t needed = 0;           // N when N < 50, else 98% of N (rounded up)
  int64_t differing = 0;  // matched by label, score and box but out of tolerance in another output
  bool pass = false;
  std::string note;  // why none could be matched (shapes differ, no boxes among them)
};

// One output on one set of inputs.
struct OutputCheck {
  std::string name;                     // the ONNX output's name
  std::vector<int64_t> shape;           // ONNX Runtime's
  std::vector<int64_t> expected_shape;  // libtorch's
  std::string dtype;                    // ONNX Runtime's ("float32")
  std::string expected_dtype;           // libtorch's
  double max_abs_error = 0;             // over the elements both have finite
  double max_rel_error = 0;             // |onnx - torch| / |torch|, over nonzero finite |torch|
  int64_t mismatched = 0;               // elements out of tolerance (NaN/Inf misplacements too)
  bool nan_inf_match = true;            // NaN and ±Inf at the same positions
  bool pass = false;
  std::string note;  // why it fails when not by value (shape, dtype, ...)
};

// All outputs on one set of inputs.
struct InputSetCheck {
  std::string label;  // "example", "dynamic: size + 1", or VerifyOptions::more_inputs' label
  std::vector<OutputCheck> outputs;
  bool pass = false;
  // With VerifyOptions::detections: how the detections matched (the per-detection outputs'
  // checks are under that matching).
  std::optional<DetectionMatch> detections;
  std::string skipped;  // non-empty: not compared, and why (libtorch rejects these shapes)
  std::string error;    // non-empty: ONNX Runtime failed on these inputs (a fixed shape?)
};

// find_mismatch's answer: the first node (in graph order) of the graph the converters got whose
// ONNX values differ from libtorch's while the values it reads match.
struct Mismatch {
  std::string kind;                   // "aten::relu"
  std::string location;               // "model.py:41" ("" when the graph has no source info)
  std::string converter;              // "custom symbolic (registered from opset 9)", "built-in ..."
  std::vector<std::string> onnx_ops;  // the ONNX ops it became ("Sigmoid")
  int opset = 0;
  std::string value;  // the TorchScript value that differs ("%x.3")
  double max_abs_error = 0;
  std::string detail;          // shape or dtype difference, when that is what differs
  int64_t nodes_compared = 0;  // nodes whose outputs were compared before and with this one
};

struct VerifyResult {
  bool pass = false;
  int opset = 0;
  double rtol = 0, atol = 0, atol_scale = 0;
  std::vector<InputSetCheck> input_sets;  // the example first
  // Set when find_mismatch was asked and some output differs: the node, or nullopt with
  // mismatch_note saying why none was found.
  std::optional<Mismatch> mismatch;
  std::string mismatch_note;
};

// Whether this build runs ONNX Runtime in-process (built with libonnxruntime-dev).
bool verify_available();
// ExportError(kInvalidArgument) saying how to get a build that verifies, when this one cannot.
void check_verify_available();

// Exports `model` on `args` with `options` (or takes verify_options.onnx_path), runs both and
// compares. ExportError for what keeps it from comparing (export errors, a model ONNX Runtime
// rejects: kInvalidOnnx; a build without ONNX Runtime: kInvalidArgument); differing outputs are
// no error but a result with pass == false.
VerifyResult verify(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                    const ExportOptions& options = {}, const VerifyOptions& verify_options = {});

// The table `torchonnx verify` prints: one line per output and input set (output, shape, dtype,
// max abs error, max rel error, pass), a summary line, and the mismatching node when one was
// found, as in:
//   aten::relu (model.py:3) → Sigmoid [custom symbolic, registered from opset 9] at opset 17:
//   max abs error 0.73
std::string format_verify_result(const VerifyResult& result);
// The one-line description of a mismatch (the line above).
std::string format_mismatch(const Mismatch& mismatch);
// The result as JSON (`torchonnx verify --json`).
std::string verify_result_json(const VerifyResult& result);

}  // namespace torchonnx

#pragma GCC visibility pop
