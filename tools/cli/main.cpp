// The torchonnx command line.
//   torchonnx export MODEL.pt -o OUT.onnx (--inputs DIR | --input SHAPE[:DTYPE] ...) [--opset N]
//             [--input-names a,b] [--output-names y,z] [--verbose] [--save-test-data DIR]
//   torchonnx ops [--opset N]
//   torchonnx unconvertible MODEL.pt (--inputs DIR | --input SHAPE ...) [--opset N] [--json]
//             [--load-library LIB.so]   (exit 0: all convert, 4: some do not)
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/script.h>
#include <CLI/CLI.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "frontend/frontend.h"
#include "onnx/dtype.h"
#include "onnx/file_util.h"
#include "onnx/tensor_proto.h"
#include "torchonnx/export.h"
#include "torchonnx/operators.h"
#include "version.h"

namespace fs = std::filesystem;
using torchonnx::ErrorCode;
using torchonnx::ExportError;

namespace {

// "1x3x224x224" or "2x7:int64" → a random tensor (normal for floats, 0..9 for ints, bools 0/1).
at::Tensor make_input(const std::string& spec) {
  auto colon = spec.find(':');
  std::string dims_text = spec.substr(0, colon);
  at::ScalarType type =
      colon == std::string::npos ? at::kFloat : torchonnx::parse_dtype(spec.substr(colon + 1));
  std::vector<int64_t> dims;
  if (dims_text != "scalar") {
    size_t start = 0;
    while (start <= dims_text.size()) {
      size_t x = dims_text.find('x', start);
      std::string part = dims_text.substr(start, x == std::string::npos ? x : x - start);
      size_t used = 0;
      long long d = -1;
      try {
        d = std::stoll(part, &used);
      } catch (const std::exception&) {
      }
      if (part.empty() || used != part.size() || d < 0 || d > (1LL << 31)) {
        throw ExportError(ErrorCode::kInvalidArgument,
                          fmt::format("--input '{}': '{}' is not a valid dim; write dims as "
                                      "1x3x224x224[:dtype], or 'scalar'",
                                      spec, part));
      }
      dims.push_back(d);
      if (x == std::string::npos) break;
      start = x + 1;
    }
  }
  int64_t numel = 1;
  for (auto d : dims) {
    if (d > 0 && numel > (int64_t{1} << 31) / d) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("--input '{}' has more than 2^31 elements", spec));
    }
    numel *= d;
  }
  auto opts = at::TensorOptions().dtype(type);
  if (at::isFloatingType(type)) return at::randn(dims, opts);
  if (type == at::kBool) return at::randint(0, 2, dims, opts);
  return at::randint(0, 10, dims, opts);
}

// "input:0,1=seq" → dynamic_axes["input"] = {0: "", 1: "seq"} (an empty label is generated).
void add_dynamic_axes(const std::string& spec, torchonnx::DynamicAxes& axes) {
  auto colon = spec.rfind(':');
  auto fail = [&](const std::string& why) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("--dynamic-axes '{}': {}; write NAME:AXIS[=LABEL][,AXIS[=LABEL]"
                                  "...], e.g. input:0=batch,1=sequence",
                                  spec, why));
  };
  if (colon == std::string::npos || colon == 0) fail("no NAME: before the axes");
  auto& out = axes[spec.substr(0, colon)];
  std::string rest = spec.substr(colon + 1);
  if (rest.empty()) fail("no axes after NAME:");
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    std::string item = rest.substr(start, comma == std::string::npos ? comma : comma - start);
    auto eq = item.find('=');
    std::string axis_text = item.substr(0, eq);
    size_t used = 0;
    long long axis = 0;
    try {
      axis = std::stoll(axis_text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (axis_text.empty() || used != axis_text.size()) fail("'" + axis_text + "' is not an axis");
    out[axis] = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

std::vector<c10::IValue> read_inputs(const std::string& dir) {
  if (!fs::is_directory(dir)) {
    throw ExportError(ErrorCode::kIo, "--inputs: '" + dir + "' is not a folder");
  }
  std::vector<c10::IValue> inputs;
  for (int i = 0;; ++i) {
    fs::path p = fs::path(dir) / fmt::format("input_{}.pb", i);
    if (!fs::exists(p)) break;
    inputs.emplace_back(torchonnx::read_tensor_file(p.string()));
  }
  if (inputs.empty()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "--inputs: '" + dir + "' holds no input_0.pb (ONNX test-data layout)");
  }
  return inputs;
}

void save_test_data(const torch::jit::Module& model, const std::vector<c10::IValue>& inputs,
                    const std::string& dir) {
  auto outputs = torchonnx::frontend::run_module(model, inputs);
  std::vector<at::Tensor> tensors;
  for (const auto& v : inputs) {
    tensors.push_back(v.isTensor() ? v.toTensor() : at::scalar_to_tensor(v.toScalar()));
  }
  torchonnx::write_test_data(dir, tensors, outputs);
}

// `torchonnx ops`: one "op<TAB>since-until" line per converter, sorted (tests/golden/ops.txt).
int print_operators(int opset) {
  if (opset != 0 && (opset < torchonnx::kMinOpset || opset > torchonnx::kMaxOpset)) {
    std::cerr << fmt::format(
        "torchonnx: error: --opset {} is out of range: torchonnx exports opsets "
        "{} to {}\n",
        opset, torchonnx::kMinOpset, torchonnx::kMaxOpset);
    return static_cast<int>(ErrorCode::kInvalidArgument);
  }
  for (const auto& op : torchonnx::supported_operators(opset)) {
    std::cout << fmt::format("{}\t{}-{}\n", op.name, op.since, op.until);
  }
  return 0;
}

// --load-library: a shared library registering TorchScript custom ops (TORCH_LIBRARY) and their
// symbolics (a static initializer calling torchonnx::register_custom_op_symbolic).
void load_library(const std::string& path) {
  // A bare file name would make dlopen search the library path only: name the file as given.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  if (dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* why = dlerror();
    throw ExportError(ErrorCode::kModelLoad,
                      fmt::format("--load-library {}: {}\nRemedy: check the path, and that the "
                                  "library was built against this libtorch and torchonnx (ldd "
                                  "shows the libraries it needs)",
                                  path, why ? why : "dlopen failed"));
  }
}

// "ONNX_ATEN_FALLBACK" → OperatorExportType (the names of torch.onnx.OperatorExportTypes).
torchonnx::OperatorExportType parse_export_type(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  using T = torchonnx::OperatorExportType;
  if (text == "ONNX") return T::kOnnx;
  if (text == "ONNX_ATEN") return T::kOnnxAten;
  if (text == "ONNX_ATEN_FALLBACK") return T::kOnnxAtenFallback;
  if (text == "RAW") return T::kRaw;
  if (text == "ONNX_FALLTHROUGH") return T::kOnnxFallthrough;
  throw ExportError(ErrorCode::kInvalidArgument,
                    "--operator-export-type '" + text +
                        "': use ONNX, ONNX_ATEN, ONNX_ATEN_FALLBACK, RAW or ONNX_FALLTHROUGH");
}

// "custom_domain=2" → custom_opsets["custom_domain"] = 2.
void add_custom_opset(const std::string& spec, std::map<std::string, int>& opsets) {
  auto eq = spec.find('=');
  size_t used = 0;
  int version = 0;
  if (eq != std::string::npos && eq > 0) {
    try {
      version = std::stoi(spec.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
  }
  if (eq == std::string::npos || eq == 0 || used == 0 || used != spec.size() - eq - 1 ||
      version < 1) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("--custom-opset '{}': write DOMAIN=VERSION with a version >= 1, "
                                  "e.g. --custom-opset custom_domain=2",
                                  spec));
  }
  opsets[spec.substr(0, eq)] = version;
}

// `torchonnx unconvertible`: one line (or a JSON object) per unconvertible op; exit 0 when there
// are none, ErrorCode::kUnsupportedOp (4) when there are.
int print_unconvertible(const torch::jit::Module& model, const std::vector<c10::IValue>& inputs,
                        const torchonnx::ExportOptions& options, bool json) {
  auto ops = torchonnx::unconvertible_ops(model, inputs, options);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& op : ops) {
      out.push_back({{"op", op.name},
                     {"count", op.count},
                     {"locations", op.locations},
                     {"errors", op.errors}});
    }
    std::cout << nlohmann::json{{"opset", options.opset_version}, {"unconvertible", out}}.dump(2)
              << "\n";
  } else {
    for (const auto& op : ops) {
      std::string where =
          op.locations.empty() ? "-" : fmt::format("{}", fmt::join(op.locations, ","));
      std::cout << fmt::format("{}\t{} node{}\t{}", op.name, op.count, op.count == 1 ? "" : "s",
                               where);
      std::cout << "\t"
                << (op.errors.empty() ? "no converter at this opset"
                                      : "converter failed: " + op.errors.front())
                << "\n";
    }
    if (ops.empty()) {
      std::cerr << fmt::format("torchonnx: every op converts at opset {}\n", options.opset_version);
    }
  }
  return ops.empty() ? 0 : static_cast<int>(ErrorCode::kUnsupportedOp);
}

}  // namespace

// A progress bar on stderr for exports that take more than ~2 s: stage, nodes or bytes done,
// redrawn at most 10 times a second; the line is cleared when the export ends.
class ProgressBar {
 public:
  torchonnx::ProgressCallback callback() {
    return [this](const torchonnx::ExportProgress& p) { update(p); };
  }
  ~ProgressBar() { finish(); }
  void finish() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  void update(const torchonnx::ExportProgress& p) {
    if (p.elapsed_seconds < 2.0) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && p.stage == stage_ && now - last_ < std::chrono::milliseconds(100) &&
        p.done != p.total)
      return;
    last_ = now;
    stage_ = p.stage;
    shown_ = true;
    std::string line = fmt::format("torchonnx: {:<9}", p.stage);
    if (p.total > 0) {
      constexpr int kWidth = 30;
      const double f = std::min(1.0, static_cast<double>(p.done) / static_cast<double>(p.total));
      const int filled = static_cast<int>(f * kWidth);
      line += fmt::format(" [{}{}] {:3.0f}%", std::string(filled, '#'),
                          std::string(kWidth - filled, '.'), f * 100);
      line += p.stage == "write" ? fmt::format(" {:.0f}/{:.0f} MB", p.done / 1e6, p.total / 1e6)
                                 : fmt::format(" {}/{} nodes", p.done, p.total);
    }
    line += fmt::format(" {:.1f} s", p.elapsed_seconds);
    std::cerr << "\r\033[K" << line << std::flush;
  }

  bool shown_ = false;
  std::string stage_;
  std::chrono::steady_clock::time_point last_{};
};

int main(int argc, char** argv) {
  CLI::App app{"torchonnx: export TorchScript models to ONNX, without Python"};
  app.set_version_flag("--version", std::string("torchonnx ") + torchonnx::kVersion);
  app.require_subcommand(1);

  auto* exp = app.add_subcommand("export", "Export a TorchScript .pt file to ONNX");
  std::string model_path, out_path, inputs_dir, save_dir;
  std::vector<std::string> input_specs, input_names, output_names;
  torchonnx::ExportOptions options;
  exp->add_option("model", model_path,
                  "TorchScript file (torch.jit.save of a traced or scripted module)")
      ->required();
  exp->add_option("-o,--output", out_path, "The .onnx file to write")->required();
  auto* inputs_opt = exp->add_option("--inputs", inputs_dir,
                                     "Folder with input_0.pb, input_1.pb, ... (serialized "
                                     "TensorProto, one per forward() argument)");
  auto* input_opt = exp->add_option("--input", input_specs,
                                    "A random example argument: SHAPE[:DTYPE], e.g. 1x3x224x224 "
                                    "or 2x7:int64 (repeat per argument)");
  inputs_opt->excludes(input_opt);
  exp->add_option("--opset", options.opset_version, "ONNX opset version (9-17)")
      ->default_val(torchonnx::kDefaultOpset);
  exp->add_option("--input-names", input_names, "Names of the graph inputs, in order")
      ->delimiter(',');
  exp->add_option("--output-names", output_names, "Names of the graph outputs, in order")
      ->delimiter(',');
  std::vector<std::string> dynamic_axes_specs;
  exp->add_option("--dynamic-axes", dynamic_axes_specs,
                  "NAME:AXIS[=LABEL][,AXIS[=LABEL]...]: axes of an input or output whose size "
                  "varies at run time (repeat per name), e.g. --dynamic-axes input:0=batch,1 "
                  "--dynamic-axes output:0=batch; an axis without a label gets "
                  "NAME_dynamic_axes_K");
  std::vector<std::string> function_types;
  exp->add_option("--modules-as-functions", function_types,
                  "TYPE[,TYPE...]: export every instance of these nn.Module types as an ONNX "
                  "local function (opset 15+; torch.onnx's export_modules_as_functions). A TYPE "
                  "is a bare class name (Linear, TransformerEncoderLayer) or a qualified one "
                  "(torch.nn.modules.linear.Linear or __torch__.torch.nn.modules.linear.Linear)")
      ->delimiter(',');
  exp->add_flag("--verbose", options.verbose, "Print the exported graph");
  bool quiet = false;
  exp->add_flag("--quiet", quiet,
                "No progress bar (shown on a terminal for exports that take over 2 s)");
  exp->add_flag("--external-data", options.use_external_data_format,
                "Store the tensors outside the model file as ONNX external data (torch.onnx's "
                "use_external_data_format); automatic when the model would pass protobuf's 2 GB "
                "limit");
  exp->add_option("--external-data-threshold", options.external_data.size_threshold,
                  "BYTES: tensors smaller than this stay inside the model file")
      ->default_val(options.external_data.size_threshold);
  std::string data_layout = "single";
  exp->add_option("--external-data-layout", data_layout,
                  "single: one data file beside the model, tensors at offsets (default); "
                  "per-tensor: one file per tensor, named after it (as torch.onnx writes them)")
      ->check(CLI::IsMember({"single", "per-tensor"}));
  exp->add_option("--external-data-location", options.external_data.location,
                  "FILE: the name of the single data file, in the model's folder (default: "
                  "OUT.onnx.data)");
  exp->add_option("--save-test-data", save_dir,
                  "Write the example inputs and libtorch's outputs as DIR/input_*.pb and "
                  "DIR/output_*.pb");

  // The flags of torch.onnx.export's training, do_constant_folding, export_params and
  // keep_initializers_as_inputs, on `export` and `print`.
  std::string training_text = "EVAL";
  bool no_folding = false, no_params = false;
  auto add_mode_flags = [&](CLI::App* sub) {
    sub->add_option("--training", training_text,
                    "EVAL (default: the module in eval mode), PRESERVE (the mode the .pt was saved "
                    "in) or TRAINING (train mode: dropout as Dropout with training_mode, "
                    "batch_norm as BatchNormalization in training form, from batch statistics); "
                    "the module's mode is restored after")
        ->check(CLI::IsMember({"EVAL", "PRESERVE", "TRAINING"}, CLI::ignore_case));
    sub->add_flag("--no-constant-folding", no_folding,
                  "Keep shape and constant arithmetic (Shape, Gather, ...) in the graph instead of "
                  "folding it (torch.onnx's do_constant_folding=False)");
    sub->add_flag("--no-export-params", no_params,
                  "Make the parameters graph inputs without values (no initializers): feed the "
                  "weights at run time (export_params=False)");
    sub->add_flag("--keep-initializers-as-inputs", options.keep_initializers_as_inputs,
                  "Also list the initializers among the graph inputs, so that a runtime may "
                  "override them (keep_initializers_as_inputs=True; some old runtimes need it)");
  };
  add_mode_flags(exp);
  std::string export_type_text = "ONNX";
  std::vector<std::string> custom_opset_specs, libraries;
  exp->add_option("--operator-export-type", export_type_text,
                  "ONNX (default: standard ONNX ops only), ONNX_ATEN (every aten op as an ATen "
                  "node of domain org.pytorch.aten), ONNX_ATEN_FALLBACK (ATen nodes only for aten "
                  "ops that do not convert), RAW (the TorchScript ops as they are, domains aten, "
                  "prim, ...) or ONNX_FALLTHROUGH (ops that do not convert kept as they are, in "
                  "their namespace's domain). Only ONNX models run in standard runtimes")
      ->check(CLI::IsMember({"ONNX", "ONNX_ATEN", "ONNX_ATEN_FALLBACK", "RAW", "ONNX_FALLTHROUGH"},
                            CLI::ignore_case));
  exp->add_option("--custom-opset", custom_opset_specs,
                  "DOMAIN=VERSION: the opset version of a custom domain used by custom symbolics "
                  "(repeat per domain; default 1), e.g. --custom-opset custom_domain=2");
  exp->add_option("--load-library", libraries,
                  "FILE.so: a library registering TorchScript custom ops (TORCH_LIBRARY) and "
                  "their ONNX symbolics (torchonnx::register_custom_op_symbolic), loaded before "
                  "the model (repeatable)");

  auto* unconv = app.add_subcommand(
      "unconvertible",
      "List every op of the model that cannot be exported at the opset (no converter, or a "
      "converter that rejects the node), with counts and source locations. Exit status: 0 when "
      "all convert, 4 when some do not (other errors as for export)");
  bool unconv_json = false;
  unconv->add_option("model", model_path, "TorchScript file")->required();
  unconv->add_option("--inputs", inputs_dir, "As for export")
      ->excludes(
          unconv->add_option("--input", input_specs, "As for export: SHAPE[:DTYPE], per argument"));
  unconv->add_option("--opset", options.opset_version, "ONNX opset version (9-17)")
      ->default_val(torchonnx::kDefaultOpset);
  unconv->add_flag("--json", unconv_json,
                   "Print JSON: {\"opset\": N, \"unconvertible\": [{\"op\", \"count\", "
                   "\"locations\", \"errors\"}, ...]} instead of one OP<TAB>COUNT<TAB>LOCATIONS"
                   "<TAB>REASON line per op");
  unconv->add_option("--load-library", libraries, "As for export: FILE.so (repeatable)");

  auto* print = app.add_subcommand(
      "print",
      "Export as `export` does and print the ONNX graph instead of writing the model: as text "
      "(torch.onnx.export_to_pretty_string's format) or as Graphviz DOT (render with "
      "`dot -Tsvg`)");
  std::string print_format = "text";
  print->add_option("model", model_path, "TorchScript file")->required();
  print->add_option("-o,--output", out_path, "Write to FILE instead of stdout");
  print
      ->add_option("--format", print_format,
                   "text (one line per node with types) or dot (Graphviz: a box per node, "
                   "tensor types and shapes on the edges, initializers listed in their node)")
      ->check(CLI::IsMember({"text", "dot"}))
      ->default_val("text");
  print->add_option("--inputs", inputs_dir, "As for export")
      ->excludes(
          print->add_option("--input", input_specs, "As for export: SHAPE[:DTYPE], per argument"));
  print->add_option("--opset", options.opset_version, "ONNX opset version (9-17)")
      ->default_val(torchonnx::kDefaultOpset);
  print->add_option("--input-names", input_names, "Names of the graph inputs, in order")
      ->delimiter(',');
  print->add_option("--output-names", output_names, "Names of the graph outputs, in order")
      ->delimiter(',');
  print->add_option("--dynamic-axes", dynamic_axes_specs, "As for export: NAME:AXIS[=LABEL],...");
  print->add_option("--modules-as-functions", function_types, "As for export: TYPE[,TYPE...]")
      ->delimiter(',');
  add_mode_flags(print);
  print->add_option("--operator-export-type", export_type_text, "As for export")
      ->check(CLI::IsMember({"ONNX", "ONNX_ATEN", "ONNX_ATEN_FALLBACK", "RAW", "ONNX_FALLTHROUGH"},
                            CLI::ignore_case));
  print->add_option("--custom-opset", custom_opset_specs, "As for export: DOMAIN=VERSION");
  print->add_option("--load-library", libraries, "As for export: FILE.so (repeatable)");

  auto* ops = app.add_subcommand(
      "ops", "List the operators torchonnx converts, one line per converter: OP<TAB>SINCE-UNTIL");
  int ops_opset = 0;
  ops->add_option("--opset", ops_opset, "Only the operators converted at this opset");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : static_cast<int>(ErrorCode::kInvalidArgument);
  }

  if (ops->parsed()) return print_operators(ops_opset);

  try {
    if (inputs_dir.empty() && input_specs.empty()) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        "no example inputs: pass --inputs DIR or one --input SHAPE[:DTYPE] per "
                        "forward() argument");
    }
    options.input_names = input_names;
    options.output_names = output_names;
    std::string mode = training_text;
    for (auto& c : mode) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    options.training = mode == "TRAINING"   ? torchonnx::TrainingMode::kTraining
                       : mode == "PRESERVE" ? torchonnx::TrainingMode::kPreserve
                                            : torchonnx::TrainingMode::kEval;
    options.do_constant_folding = !no_folding;
    options.export_params = !no_params;
    for (const auto& spec : dynamic_axes_specs) add_dynamic_axes(spec, options.dynamic_axes);
    options.export_modules_as_functions.insert(function_types.begin(), function_types.end());
    options.operator_export_type = parse_export_type(export_type_text);
    for (const auto& spec : custom_opset_specs) add_custom_opset(spec, options.custom_opsets);
    for (const auto& lib : libraries) load_library(lib);
    at::manual_seed(0);
    std::vector<c10::IValue> inputs;
    if (!inputs_dir.empty()) {
      inputs = read_inputs(inputs_dir);
    } else {
      for (const auto& spec : input_specs) inputs.emplace_back(make_input(spec));
    }
    torch::jit::Module model = torchonnx::load_model(model_path);
    if (unconv->parsed()) return print_unconvertible(model, inputs, options, unconv_json);
    if (print->parsed()) {
      std::string text = torchonnx::export_to_pretty_string(
          model, inputs, options,
          print_format == "dot" ? torchonnx::PrettyFormat::kDot : torchonnx::PrettyFormat::kText);
      if (out_path.empty()) {
        std::cout << text << std::flush;
      } else {
        torchonnx::write_file_atomically(out_path, text);
      }
      return 0;
    }
    // export_model switches the mode for the export and restores it; --save-test-data runs the
    // module in the mode it was exported in.
    if (options.training != torchonnx::TrainingMode::kPreserve && model.hasattr("training")) {
      model.train(options.training == torchonnx::TrainingMode::kTraining);
    }
    if (data_layout == "per-tensor") {
      options.external_data.layout = torchonnx::ExternalDataOptions::Layout::kFilePerTensor;
    }
    ProgressBar bar;
    if (!quiet && isatty(STDERR_FILENO)) options.progress = bar.callback();
    torchonnx::export_model(model, inputs, out_path, options);
    bar.finish();
    options.progress = nullptr;
    if (!save_dir.empty()) save_test_data(model, inputs, save_dir);
    std::cerr << "torchonnx: wrote " << out_path << "\n";
    return 0;
  } catch (const ExportError& e) {
    std::cerr << "torchonnx: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "torchonnx: internal error: " << e.what() << "\n";
    return 1;
  }
}
