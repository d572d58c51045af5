// The torchonnx command line, as a library: the option parsers (fuzzed by fuzz/) and the CLI11 app
// (tools/cli/main.cpp runs it). Every parser throws ExportError(kInvalidArgument) with the option,
// the value and the form it expects.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "torchonnx/export.h"

namespace CLI {
class App;
}

namespace torchonnx::cli {

// --input SHAPE[:DTYPE]: "1x3x224x224", "2x7:int64", "scalar:bool".
struct InputSpec {
  std::vector<int64_t> dims;
  at::ScalarType dtype = at::kFloat;
};
// Refuses dims that are not non-negative integers and shapes of more than kMaxInputElements.
inline constexpr int64_t kMaxInputElements = int64_t{1} << 31;
InputSpec parse_input_spec(const std::string& spec);
// A random tensor of the spec (normal for floats, 0..9 for ints, 0/1 for bools).
at::Tensor make_input(const InputSpec& spec);

// --dynamic-axes NAME:AXIS[=LABEL][,AXIS[=LABEL]...] added to `axes` (an empty label is
// generated at export).
void add_dynamic_axes(const std::string& spec, DynamicAxes& axes);
// --operator-export-type ONNX|ONNX_ATEN|ONNX_ATEN_FALLBACK|RAW|ONNX_FALLTHROUGH (any case).
OperatorExportType parse_export_type(const std::string& text);
// --training EVAL|PRESERVE|TRAINING (any case).
TrainingMode parse_training_mode(const std::string& text);
// --custom-opset DOMAIN=VERSION added to `opsets`.
void add_custom_opset(const std::string& spec, std::map<std::string, int>& opsets);

// What a command line asks for, as parsed by the app of make_app().
struct Request {
  enum class Command { kNone, kExport, kPrint, kUnconvertible, kOps, kVerify };
  Command command = Command::kNone;
  std::string model_path, out_path, inputs_dir, save_dir;
  std::string program;  // --program: the program of a PT2 archive that holds several
  std::vector<std::string> input_specs;
  std::vector<std::string> libraries;  // --load-library, in order
  ExportOptions options;
  std::string print_format = "text";  // print: text | dot
  bool json = false;                  // unconvertible --json
  bool quiet = false;                 // export --quiet
  int ops_opset = 0;                  // ops --opset (0: all)
  // verify: tolerances, an existing export to check instead of exporting, find-mismatch.
  double rtol = 1e-3, atol = 1e-5, atol_scale = 1e-4;
  std::string onnx_path;
  bool find_mismatch = false;
  bool detections = false;  // verify --detections [--pixel-atol A]
  double pixel_atol = 0;

  // The option text parsed by finish(); kept so that the app can bind to them.
  struct Text {
    std::vector<std::string> input_names, output_names, dynamic_axes, functions, custom_opsets;
    std::string training = "EVAL", export_type = "ONNX", data_layout = "single";
    bool no_folding = false, no_params = false;
  } text;
};

// The CLI11 app of every subcommand, its options bound to `request`. After app->parse(argc,
// argv), call finish(request).
std::unique_ptr<CLI::App> make_app(Request& request);
// Fills request.options from the parsed text; ExportError(kInvalidArgument) on a bad value.
void finish(Request& request);

// main(): parses, runs the command; returns the exit code (ErrorCode values; 0 on success).
int run(int argc, const char* const* argv);

}  // namespace torchonnx::cli
