// Test helpers: export, run in ONNX Runtime (tools/verify/verify.mjs, one server process per test
// binary), compare with libtorch.
#pragma once

#include <ATen/core/ivalue.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "torchonnx/export.h"
#include "torchonnx/verify.h"

namespace torchonnx::testing {

struct OrtResult {
  bool ok = false;
  std::string report;
};

// How close ONNX Runtime's outputs must be to libtorch's (tools/verify/verify.mjs). A float
// element matches when |ort - ref| <= A + rtol * |ref|, A = max(atol, atol_scale * scale) of its
// output, scale = max|ref| capped at 10x the median nonzero |ref| (a few extreme elements, 1e30 in
// an edge-case test, do not widen the tolerance of the others): the absolute tolerance follows the
// output's scale, so an output of O(1e-9) is not "compared" against a fixed atol larger than
// itself. The floor atol is PyTorch's own for fp32 ONNX tests (1e-7); the default atol_scale is
// 1e-5 of the scale.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
  double atol_scale = 1e-5;
  // > 0: a quantized output whose quantization step this is: besides the above, an element may
  // differ by one step, but at most 2% of them may and the mean |error| stays under 0.1 step (so
  // a zero-point off by one, or floor instead of round, fails).
  double step = 0;
  // The fraction of elements that may be one step away (the mean |error| may then reach
  // max(0.1, step_fraction) step).
  double step_fraction = 0.02;
  // With `step`: the reference computes quantized ops exactly (libtorch's QNNPACK), so on a CPU
  // where ONNX Runtime's fused u8s8 kernels saturate (x86-64 without VNNI) the outputs compared
  // are those of its graph optimization level basic (Note [Quantized comparisons without VNNI] in
  // tools/verify/verify.mjs).
  bool exact_int8 = false;
};

// Exact equality (NaN where libtorch has NaN): for ops whose ONNX lowering computes the same
// float operations as ATen (a dtype round trip, rounding), where any tolerance lets a wrong
// lowering through: floor for round(decimals=2) errs by < 0.01, which rtol 1e-3 of values ~100
// accepts.
inline constexpr Tolerance kExact{0, 0, 0};

// Runs `model` in ONNX Runtime on DATA_DIR/input_*.pb and compares with DATA_DIR/output_*.pb.
// `detections`: the outputs are detection records (boxes, labels, scores, masks, keypoints: every
// output whose dim 0 is the first output's), compared as sets that may come in another order for
// nearly equal scores (tools/verify/verify.mjs --detections); `pixel_atol` (> 0) is then the
// absolute tolerance of boxes and keypoints, which are in pixels (default: atol).
OrtResult run_in_ort(const std::string& model, const std::string& data_dir, Tolerance tol = {},
                     bool detections = false, double pixel_atol = 0);

// On a build with ONNX Runtime in-process (torchonnx::verify_available(): Debian 13) the model
// tests compare through torchonnx::verify instead of run_in_ort: the export at `onnx_path` (made
// from `model` with `options`) run in ONNX Runtime against libtorch on `args` (and on
// v.more_inputs). Records the model as run_in_ort does (TORCHONNX_RECORD_MODELS).
// Whether the model tests compare through verify_export: verify_available(), unless
// TORCHONNX_TEST_NODE_RUNNER=1 asks for tools/verify/verify.mjs (to compare the two runners).
bool in_process_verify();
// `reference_dir`: a test-data folder with libtorch's outputs on `args` (output_K.pb, as the test
// wrote them for run_in_ort): verify compares with those instead of running the module again.
VerifyResult verify_export(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                           const std::string& onnx_path, const ExportOptions& options,
                           VerifyOptions v, const std::string& reference_dir = "");
// The VerifyOptions of a Tolerance (without `step`: quantized outputs stay with run_in_ort).
VerifyOptions verify_options(const Tolerance& tol);

// The model in `bytes` (a gtest failure when they do not parse).
onnx::ModelProto parse_model(const std::string& bytes);
// The contents of a file ("" when it cannot be read), and the ONNX model in a file.
std::string read_file(const std::string& path);
onnx::ModelProto read_model_file(const std::string& path);

// What `torchonnx ARGS` printed and its exit code.
struct CliResult {
  int exit_code = -1;
  std::string output;
};

// Runs the torchonnx command line ($TORCHONNX_CLI, set by ctest) with `args` (shell words),
// capturing stdout and, when `with_stderr`, stderr too. A gtest failure when TORCHONNX_CLI is not
// set.
CliResult run_cli(const std::string& args, bool with_stderr = true);

// A fresh empty folder under the test temp dir.
std::string temp_dir(const std::string& hint);

// Writes input_i.pb / output_i.pb.
void write_test_data(const std::string& dir, const std::vector<c10::IValue>& inputs,
                     const std::vector<at::Tensor>& outputs);

// Writes the model for one opset: export_to(path, options) with options.opset_version set.
using ExportTo = std::function<void(const std::string& path, const ExportOptions& options)>;

// For each opset of [first, last]: exports with `export_to` (constant folding `fold`), runs the
// model in ORT on `inputs` and expects `expected` (gtest failures name the opset and ORT's
// report).
//
// `ops_under_test` ({"aten::flip"}; may be empty): ONNX Runtime must have run what their
// converters wrote. When constant folding removed every node converted from one of them
// (torchonnx's own evaluator computed it, not ORT), the opset is exported and compared again
// without folding. Each op is then recorded as numerically tested at the opset
// (record_tested_op), with whether a node converted from it was in the model ORT ran.
void expect_exports_match(const ExportTo& export_to, const std::vector<c10::IValue>& inputs,
                          const std::vector<at::Tensor>& expected, int first, int last, bool fold,
                          Tolerance tol, const std::vector<std::string>& ops_under_test = {});

// Why a model test's reference `outputs` could not show a wrong export: a floating output of more
// than one element whose finite values are all equal, whose scale (verification::output_scale)
// is below 1e-6 (a relative tolerance compares nothing) or whose values vary by less than 1e-3
// of its scale (a constant within the tolerance would pass). "" when every output carries signal.
std::string outputs_without_signal(const std::vector<at::Tensor>& outputs);

// Which branches of an If ran: of an If of the main graph one at most; of an If in a Loop body
// either or both (iterations may take different ones); neither when it did not run.
struct BranchesRun {
  bool then_branch = false;
  bool else_branch = false;
};
// Ifs by their first output.
using IfBranchesRun = std::map<std::string, BranchesRun>;

// The TorchScript ops, with their overloads ("aten::div.Tensor_mode"; the nodes' doc_strings name
// them), whose converted nodes ONNX Runtime ran to compute the outputs of `model`: Constant and
// Identity nodes and nodes no output depends on do not count, and of an If, at any depth, only the
// branches `branches_run` says ran (an If it does not name counts neither branch).
std::set<std::string> ops_run(const onnx::ModelProto& model,
                              const IfBranchesRun& branches_run = {});
// Which branches of each If of the model at `model_path` ran on the inputs of `data_dir` (an ONNX
// test-data folder with its expected outputs). Of the main graph's Ifs, ORT runs the model with
// their conditions as extra outputs; of an If inside a subgraph (a branch, a Loop body), ORT runs
// the model once per branch with that branch made to fail when it runs (a Reshape of the
// condition to a size it cannot have, as an extra output of the If).
IfBranchesRun if_branches_taken(const std::string& model_path, const std::string& data_dir);
// Whether `ran` (ops_run) holds `op` or one of its overloads ("aten::div" for
// "aten::div.Tensor_mode", not "aten::divide").
bool ran_node_from(const std::set<std::string>& ran, const std::string& op);
// Whether ORT ran a node of `model` converted from `op` (ops_run, no If of the main graph known).
bool model_has_node_from(const onnx::ModelProto& model, const std::string& op);

// Records op `op` as numerically tested at `opset` in the file $TORCHONNX_OP_COVERAGE (lines
// "op<TAB>opset<TAB>node|no-node"; each test process starts the file afresh), which the coverage
// test compares with the registry. `ran_in_ort`: a node converted from `op` was in the model ORT
// ran (not folded away, not a converter that writes no node).
void record_tested_op(const std::string& op, int opset, bool ran_in_ort);
// The same for each of `op` and its overloads that `ran` (ops_run) holds, by the name it holds
// ("aten::div.Tensor_mode"; the coverage test credits a registration of the overload, else the
// op's); `op` without a node when it holds none.
void record_tested_op(const std::string& op, int opset, const std::set<std::string>& ran);

// Traces `fn` on `inputs`, exports at `opset`, runs the ONNX model in ORT and expects libtorch's
// outputs (gtest failures name the opset and ORT's report).
void expect_export_matches(const TracedFunction& fn, const std::vector<c10::IValue>& inputs,
                           int opset, const NamedTensors& params = {}, Tolerance tol = {});

// The same at every opset of [first, last] (default: all opsets torchonnx exports).
void expect_matches_at_opsets(const TracedFunction& fn, const std::vector<c10::IValue>& inputs,
                              int first = kMinOpset, int last = highest_opset(),
                              const NamedTensors& params = {}, Tolerance tol = {});

}  // namespace torchonnx::testing
