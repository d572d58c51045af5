// Test helpers: export, run in ONNX Runtime (tools/verify/verify.mjs, one server process per test
// binary), compare with libtorch.
#pragma once

#include <ATen/core/ivalue.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "torchonnx/export.h"

namespace torchonnx::testing {

struct OrtResult {
  bool ok = false;
  std::string report;
};

// Runs `model` in ONNX Runtime on DATA_DIR/input_*.pb and compares with DATA_DIR/output_*.pb.
// `detections`: the outputs are detection records (boxes, labels, scores, masks, keypoints: every
// output whose dim 0 is the first output's), compared as sets that may come in another order for
// nearly equal scores (tools/verify/verify.mjs --detections); `pixel_atol` (> 0) is then the
// absolute tolerance of boxes and keypoints, which are in pixels (default: atol).
OrtResult run_in_ort(const std::string& model, const std::string& data_dir, double rtol,
                     double atol, bool detections = false, double pixel_atol = 0);

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

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Writes the model for one opset: export_to(path, options) with options.opset_version set.
using ExportTo = std::function<void(const std::string& path, const ExportOptions& options)>;

// For each opset of [first, last]: exports with `export_to` (constant folding `fold`), runs the
// model in ORT on `inputs` and expects `expected` (gtest failures name the opset and ORT's
// report). `tested_ops` (the op kinds the converters saw) are then recorded as numerically tested
// at every opset that matched, in the file named by $TORCHONNX_OP_COVERAGE ("op<TAB>opset"
// lines, rewritten by each test process), which the coverage test compares with the registry.
void expect_exports_match(const ExportTo& export_to, const std::vector<c10::IValue>& inputs,
                          const std::vector<at::Tensor>& expected, int first, int last, bool fold,
                          Tolerance tol, const std::set<std::string>& tested_ops = {});

// Records `ops` as numerically tested at `opset` (see expect_exports_match).
void record_tested_ops(const std::set<std::string>& ops, int opset);

// Traces `fn` on `inputs`, exports at `opset`, runs the ONNX model in ORT and expects libtorch's
// outputs (gtest failures name the opset and ORT's report).
void expect_export_matches(const TracedFunction& fn, const std::vector<c10::IValue>& inputs,
                           int opset, const NamedTensors& params = {}, Tolerance tol = {});

// The same at every opset of [first, last] (default: all opsets torchonnx exports).
void expect_matches_at_opsets(const TracedFunction& fn, const std::vector<c10::IValue>& inputs,
                              int first = kMinOpset, int last = kMaxOpset,
                              const NamedTensors& params = {}, Tolerance tol = {});

}  // namespace torchonnx::testing
