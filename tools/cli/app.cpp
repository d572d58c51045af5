// The torchonnx command line: subcommands export, print, unconvertible and ops.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/script.h>
#include <CLI/CLI.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "torchonnx/exported_program.h"
#include "torchonnx/io.h"
#include "torchonnx/operators.h"
#include "torchonnx/verify.h"
#include "torchonnx/version.h"

namespace fs = std::filesystem;

namespace torchonnx::cli {

namespace {

const std::vector<std::string> kExportTypes = {"ONNX", "ONNX_ATEN", "ONNX_ATEN_FALLBACK", "RAW",
                                               "ONNX_FALLTHROUGH"};

std::vector<c10::IValue> read_inputs(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ExportError(ErrorCode::kIo, "--inputs: '" + dir +
                                          "' is not a folder. Remedy: pass the folder holding "
                                          "input_0.pb, input_1.pb, ... (--save-test-data writes "
                                          "one)");
  }
  std::vector<c10::IValue> inputs;
  for (int i = 0;; ++i) {
    fs::path p = fs::path(dir) / fmt::format("input_{}.pb", i);
    if (!fs::exists(p, ec)) break;
    inputs.emplace_back(read_tensor_file(p.string()));
  }
  if (inputs.empty()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "--inputs: '" + dir +
                          "' holds no input_0.pb. Remedy: write one serialized onnx.TensorProto "
                          "per forward() argument as input_0.pb, input_1.pb, ... (the ONNX "
                          "test-data layout)");
  }
  return inputs;
}

// --inputs and --input give the model's flat inputs, as the ONNX graph takes them (the ONNX
// test-data layout): a Tuple[Tensor, ...] argument of forward() takes as many tensors as its type
// has elements, and one List[Tensor] argument (torchvision's detection models take
// `images: List[Tensor]`) the tensors the other arguments leave.
std::vector<c10::IValue> group_arguments(const torch::jit::Module& model,
                                         std::vector<c10::IValue> flat) {
  auto forward = model.find_method("forward");
  if (!forward) return flat;
  const auto& args = forward->function().getSchema().arguments();
  if (args.size() < 2) return flat;
  std::vector<size_t> takes;  // tensors per argument; SIZE_MAX: the list
  size_t fixed = 0, lists = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    const c10::TypePtr& type = args[i].type();
    size_t n = 1;
    if (auto tuple = type->cast<c10::TupleType>()) {
      n = tuple->elements().size();
      for (const auto& e : tuple->elements())
        if (e->kind() != c10::TypeKind::TensorType) return flat;
    } else if (auto list = type->cast<c10::ListType>()) {
      if (list->getElementType()->kind() != c10::TypeKind::TensorType) return flat;
      n = SIZE_MAX;
      ++lists;
    }
    takes.push_back(n);
    if (n != SIZE_MAX) fixed += n;
  }
  const bool grouped = lists > 0 || fixed != takes.size();
  if (!grouped || lists > 1 || flat.size() < fixed || (lists == 0 && flat.size() != fixed))
    return flat;  // nothing to group, or no unique grouping: forward's own checks report it
  for (const auto& v : flat)
    if (!v.isTensor()) return flat;
  std::vector<c10::IValue> out;
  size_t next = 0;
  for (size_t n : takes) {
    const size_t count = n == SIZE_MAX ? flat.size() - fixed : n;
    std::vector<at::Tensor> group;
    for (size_t k = 0; k < count; ++k) group.push_back(flat[next++].toTensor());
    if (n == SIZE_MAX) {
      out.emplace_back(c10::List<at::Tensor>(group));
    } else if (args[out.size() + 1].type()->kind() == c10::TypeKind::TupleType) {
      out.emplace_back(
          c10::ivalue::Tuple::create(std::vector<c10::IValue>(group.begin(), group.end())));
    } else {
      out.emplace_back(group.front());
    }
  }
  return out;
}

// The tensors of `inputs`, lists and tuples flattened (the inverse of group_arguments).
std::vector<at::Tensor> flat_tensors(const std::vector<c10::IValue>& inputs) {
  std::vector<at::Tensor> out;
  for (const auto& v : inputs) {
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) out.push_back(t);
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) out.push_back(e.toTensor());
    } else {
      out.push_back(v.isTensor() ? v.toTensor() : at::scalar_to_tensor(v.toScalar()));
    }
  }
  return out;
}

// --save-test-data DIR: checked before any work (an existing folder, or one that can be made).
void check_test_data_dir(const std::string& dir) {
  std::error_code ec;
  fs::path p(dir);
  if (fs::exists(p, ec) && !fs::is_directory(p, ec)) {
    throw ExportError(ErrorCode::kIo, "--save-test-data: '" + dir +
                                          "' is a file, not a folder. Remedy: name a folder.");
  }
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  if (::access(p.c_str(), W_OK | X_OK) != 0) {
    throw ExportError(ErrorCode::kIo, "--save-test-data: cannot write in '" + p.string() +
                                          "'. Remedy: choose a writable folder.");
  }
}

// The example inputs and libtorch's outputs as DIR/input_*.pb, DIR/output_*.pb; returns the
// files written.
std::vector<std::string> save_test_data(const torch::jit::Module& model,
                                        const std::vector<c10::IValue>& inputs,
                                        TrainingMode training, const std::string& dir) {
  const std::vector<at::Tensor> outputs = reference_outputs(model, inputs, training);
  const std::vector<at::Tensor> tensors = flat_tensors(inputs);
  std::vector<std::string> files;
  for (size_t i = 0; i < tensors.size(); ++i)
    files.push_back(fmt::format("{}/input_{}.pb", dir, i));
  for (size_t i = 0; i < outputs.size(); ++i)
    files.push_back(fmt::format("{}/output_{}.pb", dir, i));
  try {
    write_test_data(dir, tensors, outputs);
  } catch (...) {
    for (const auto& f : files) std::remove(f.c_str());
    throw;
  }
  return files;
}

void check_opset(int opset) {
  ExportOptions options;
  options.opset_version = opset;
  check_export_options(options);
}

// `torchonnx ops`: one "op<TAB>since-until" line per converter, sorted (tests/golden/ops.txt).
int print_operators(int opset) {
  if (opset != 0) check_opset(opset);
  for (const auto& op : supported_operators(opset)) {
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

// `torchonnx unconvertible`: one line (or a JSON object) per unconvertible op; exit 0 when there
// are none, ErrorCode::kUnsupportedOp (4) when there are.
int print_unconvertible(const torch::jit::Module& model, const std::vector<c10::IValue>& inputs,
                        const ExportOptions& options, bool json) {
  auto ops = unconvertible_ops(model, inputs, options);
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

// verify: the table (or JSON) on stdout; exit 0 when every output matches, 9 when some differ.
// With dynamic axes and --inputs .../test_data_set_N, the other test_data_set_* folders beside it
// (the ONNX test-data layout of a model's other shapes) are compared too.
int run_verify(const torch::jit::Module& model, const std::vector<c10::IValue>& inputs,
               const Request& r) {
  VerifyOptions v;
  v.rtol = r.rtol;
  v.atol = r.atol;
  v.atol_scale = r.atol_scale;
  v.onnx_path = r.onnx_path;
  v.find_mismatch = r.find_mismatch;
  v.detections = r.detections;
  v.pixel_atol = r.pixel_atol;
  std::error_code ec;
  if (!v.onnx_path.empty() && !fs::is_regular_file(v.onnx_path, ec)) {
    throw ExportError(ErrorCode::kIo, "--onnx: '" + v.onnx_path +
                                          "' is no file. Remedy: pass the .onnx file to check, "
                                          "or leave --onnx out to export and check");
  }
  const fs::path dir = fs::absolute(r.inputs_dir, ec).lexically_normal();
  if (!r.inputs_dir.empty() && !r.options.dynamic_axes.empty() &&
      dir.filename().string().rfind("test_data_set_", 0) == 0) {
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir.parent_path(), ec)) {
      const auto name = entry.path().filename().string();
      if (entry.is_directory(ec) && name.rfind("test_data_set_", 0) == 0 &&
          entry.path().lexically_normal() != dir) {
        sets.push_back(entry.path());
      }
    }
    std::sort(sets.begin(), sets.end());
    for (const auto& set : sets) {
      v.more_inputs.emplace_back(set.filename().string(),
                                 group_arguments(model, read_inputs(set.string())));
    }
  }
  const VerifyResult result = verify(model, inputs, r.options, v);
  std::cout << (r.json ? verify_result_json(result) : format_verify_result(result)) << std::flush;
  return result.pass ? 0 : kVerifyMismatchExitCode;
}

// A progress bar on stderr for exports that take more than ~2 s: stage, nodes or bytes done,
// redrawn at most 10 times a second; the line is cleared when the export ends.
class ProgressBar {
 public:
  ProgressCallback callback() {
    return [this](const ExportProgress& p) { update(p); };
  }
  ~ProgressBar() { finish(); }
  void finish() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  void update(const ExportProgress& p) {
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

// The model and its example inputs, shared by export, print and unconvertible.
void add_model_options(CLI::App* sub, Request& r, const std::string& input_help) {
  sub->add_option("model", r.model_path,
                  "TorchScript file (torch.jit.save of a traced or scripted module), or a "
                  "torch.export program (.pt2, torch.export.save of PyTorch 2.3+; the libtorch "
                  "2.x builds): its example inputs and dynamic dims are the defaults of --inputs "
                  "and --dynamic-axes")
      ->required();
  sub->add_option("--program", r.program,
                  "NAME: the program of a .pt2 PT2 archive that holds several (its "
                  "models/NAME.json); by default the only one");
  sub->add_option("--inputs", r.inputs_dir,
                  "Folder with input_0.pb, input_1.pb, ... (serialized TensorProto, one per "
                  "forward() argument)")
      ->excludes(sub->add_option("--input", r.input_specs, input_help));
  sub->add_option("--opset", r.options.opset_version,
                  fmt::format("ONNX opset version ({}-{})", kLowestOpset, highest_opset()))
      ->default_val(kDefaultOpset);
  sub->add_option("--operator-export-type", r.text.export_type,
                  "ONNX (default: standard ONNX ops only), ONNX_ATEN (every aten op as an ATen "
                  "node of domain org.pytorch.aten), ONNX_ATEN_FALLBACK (ATen nodes only for aten "
                  "ops that do not convert), RAW (the TorchScript ops as they are, domains aten, "
                  "prim, ...) or ONNX_FALLTHROUGH (ops that do not convert kept as they are, in "
                  "their namespace's domain). Only ONNX models run in standard runtimes")
      ->check(CLI::IsMember(kExportTypes, CLI::ignore_case));
  sub->add_option("--custom-opset", r.text.custom_opsets,
                  "DOMAIN=VERSION: the opset version of a custom domain used by custom symbolics "
                  "(repeat per domain; default 1), e.g. --custom-opset custom_domain=2");
  sub->add_option("--load-library", r.libraries,
                  "FILE.so: a library registering TorchScript custom ops (TORCH_LIBRARY) and "
                  "their ONNX symbolics (torchonnx::register_custom_op_symbolic), loaded before "
                  "the model (repeatable)");
}

// The flags of torch.onnx.export that shape the graph, on `export` and `print`.
void add_graph_options(CLI::App* sub, Request& r) {
  sub->add_option("--input-names", r.text.input_names, "Names of the graph inputs, in order")
      ->delimiter(',');
  sub->add_option("--output-names", r.text.output_names, "Names of the graph outputs, in order")
      ->delimiter(',');
  sub->add_option("--dynamic-axes", r.text.dynamic_axes,
                  "NAME:AXIS[=LABEL][,AXIS[=LABEL]...]: axes of an input or output whose size "
                  "varies at run time (repeat per name), e.g. --dynamic-axes input:0=batch,1 "
                  "--dynamic-axes output:0=batch; an axis without a label gets "
                  "NAME_dynamic_axes_K");
  sub->add_option("--modules-as-functions", r.text.functions,
                  "TYPE[,TYPE...]: export every instance of these nn.Module types as an ONNX "
                  "local function (opset 15+; torch.onnx's export_modules_as_functions). A TYPE "
                  "is a bare class name (Linear, TransformerEncoderLayer) or a qualified one "
                  "(torch.nn.modules.linear.Linear or __torch__.torch.nn.modules.linear.Linear)")
      ->delimiter(',');
  sub->add_option("--training", r.text.training,
                  "EVAL (default: the module in eval mode), PRESERVE (the mode the .pt was saved "
                  "in) or TRAINING (train mode: dropout as Dropout with training_mode, "
                  "batch_norm as BatchNormalization in training form, from batch statistics); "
                  "the module's mode is restored after")
      ->check(CLI::IsMember({"EVAL", "PRESERVE", "TRAINING"}, CLI::ignore_case));
  sub->add_flag("--no-constant-folding", r.text.no_folding,
                "Keep shape and constant arithmetic (Shape, Gather, ...) in the graph instead of "
                "folding it (torch.onnx's do_constant_folding=False)");
  sub->add_flag("--no-export-params", r.text.no_params,
                "Make the parameters graph inputs without values (no initializers): feed the "
                "weights at run time (export_params=False)");
  sub->add_flag("--keep-initializers-as-inputs", r.options.keep_initializers_as_inputs,
                "Also list the initializers among the graph inputs, so that a runtime may "
                "override them (keep_initializers_as_inputs=True; some old runtimes need it)");
  sub->add_flag("--drop-unused-inputs", r.options.drop_unused_inputs,
                "Remove the graph inputs no node reads (one used only for its static shape), as "
                "torch.onnx does (not with --save-test-data, whose files are one per argument)");
}

using Command = Request::Command;

}  // namespace

std::unique_ptr<CLI::App> make_app(Request& r) {
  auto app = std::make_unique<CLI::App>(
      "torchonnx: export TorchScript models to ONNX, without Python.\nExit codes: 0 success, 1 "
      "internal error, 2 invalid argument, 3 model file not loadable, 4 unsupported operators, "
      "5 a converter rejected a node, 6 invalid ONNX produced, 7 reading inputs or writing the "
      "output failed, 8 the model's forward failed, 9 verify: ONNX Runtime's outputs differ "
      "from libtorch's.",
      "torchonnx");
  app->set_version_flag("--version", std::string("torchonnx ") + kVersion);
  app->require_subcommand(1);
  const std::string input_help =
      "A random example argument: SHAPE[:DTYPE], e.g. 1x3x224x224 or 2x7:int64 or scalar "
      "(repeat per argument; dtypes float32, float64, float16, bfloat16, int64, int32, int16, "
      "int8, uint8, bool)";

  auto* exp = app->add_subcommand("export", "Export a TorchScript .pt file to ONNX");
  exp->callback([&r] { r.command = Command::kExport; });
  add_model_options(exp, r, input_help);
  exp->add_option("-o,--output", r.out_path, "The .onnx file to write")->required();
  add_graph_options(exp, r);
  exp->add_flag("--verbose", r.options.verbose, "Print the exported graph");
  exp->add_flag("--strip-doc-string", r.options.strip_doc_string,
                "Leave out each node's doc_string (its TorchScript op and source line), as "
                "torch.onnx does without verbose=True");
  exp->add_flag("--quiet", r.quiet,
                "No progress bar (shown on a terminal for exports that take over 2 s)");
  exp->add_flag("--external-data", r.options.use_external_data_format,
                "Store the tensors outside the model file as ONNX external data (torch.onnx's "
                "use_external_data_format); automatic when the model would pass protobuf's 2 GB "
                "limit");
  exp->add_option("--external-data-threshold", r.options.external_data.size_threshold,
                  "BYTES: tensors smaller than this stay inside the model file")
      ->default_val(r.options.external_data.size_threshold)
      ->check(CLI::NonNegativeNumber);
  exp->add_option("--external-data-layout", r.text.data_layout,
                  "single: one data file beside the model, tensors at offsets (default); "
                  "per-tensor: one file per tensor, named after it (as torch.onnx writes them)")
      ->check(CLI::IsMember({"single", "per-tensor"}));
  exp->add_option("--external-data-location", r.options.external_data.location,
                  "FILE: the name of the single data file, in the model's folder (a plain file "
                  "name; default: OUT.onnx.data)");
  exp->add_option("--save-test-data", r.save_dir,
                  "Write the example inputs and libtorch's outputs as DIR/input_*.pb and "
                  "DIR/output_*.pb");

  auto* print = app->add_subcommand(
      "print",
      "Export as `export` does and print the ONNX graph instead of writing the model: as text "
      "(torch.onnx.export_to_pretty_string's format) or as Graphviz DOT (render with "
      "`dot -Tsvg`)");
  print->callback([&r] { r.command = Command::kPrint; });
  add_model_options(print, r, input_help);
  print->add_option("-o,--output", r.out_path, "Write to FILE instead of stdout");
  print
      ->add_option("--format", r.print_format,
                   "text (one line per node with types) or dot (Graphviz: a box per node, "
                   "tensor types and shapes on the edges, initializers listed in their node)")
      ->check(CLI::IsMember({"text", "dot"}))
      ->default_val("text");
  add_graph_options(print, r);

  auto* unconv = app->add_subcommand(
      "unconvertible",
      "List every op of the model that cannot be exported at the opset (no converter, or a "
      "converter that rejects the node), with counts and source locations. Exit status: 0 when "
      "all convert, 4 when some do not (other errors as for export)");
  unconv->callback([&r] { r.command = Command::kUnconvertible; });
  add_model_options(unconv, r, input_help);
  unconv->add_flag("--json", r.json,
                   "Print JSON: {\"opset\": N, \"unconvertible\": [{\"op\", \"count\", "
                   "\"locations\", \"errors\"}, ...]} instead of one OP<TAB>COUNT<TAB>LOCATIONS"
                   "<TAB>REASON line per op");

  auto* ver = app->add_subcommand(
      "verify",
      "Export as `export` does (or take --onnx FILE), run the model in ONNX Runtime (in-process) "
      "and in libtorch on the same inputs, and compare every output: a table of output, shape, "
      "dtype, max abs/rel error, pass. With --dynamic-axes also on test_data_set_* folders beside "
      "--inputs DIR, or on the example with every dynamic axis grown. Exit status: 0 when all "
      "match, 9 when some differ (other errors as for export; 2 on a build without ONNX "
      "Runtime's C++ API, with how to get it)");
  ver->callback([&r] { r.command = Command::kVerify; });
  add_model_options(ver, r, input_help);
  add_graph_options(ver, r);
  ver->add_option("--rtol", r.rtol,
                  "Relative tolerance: an element matches when |onnx - torch| <= atol + rtol * "
                  "|torch|")
      ->default_val(r.rtol);
  ver->add_option("--atol", r.atol, "Absolute tolerance (the least)")->default_val(r.atol);
  ver->add_option("--atol-scale", r.atol_scale,
                  "The absolute tolerance of an output is max(atol, atol-scale * scale), scale = "
                  "max|output|, at most 10x its median nonzero |value| (0: atol alone)")
      ->default_val(r.atol_scale);
  ver->add_option("--onnx", r.onnx_path,
                  "FILE: check this export (made with the same flags) instead of exporting");
  ver->add_flag("--detections", r.detections,
                "The outputs are detection records (torchvision's detection models: boxes, labels, "
                "scores, masks, keypoints: the outputs whose dim 0 is the first one's N): each of "
                "libtorch's detections is matched to one of ONNX Runtime's with the same label, a "
                "close score and box (nearly equal scores may come in another order), the other "
                "outputs are compared under that matching; they pass when 98% match (all when N < "
                "50)");
  ver->add_option("--pixel-atol", r.pixel_atol,
                  "With --detections: the absolute tolerance of boxes and keypoints, in pixels "
                  "(default: --atol)");
  ver->add_flag("--find-mismatch", r.find_mismatch,
                "When outputs differ, name the first TorchScript node whose ONNX nodes compute "
                "something else (its op, source line, converter, opset and error), comparing "
                "every intermediate tensor");
  ver->add_flag(
      "--json", r.json,
      "Print JSON: {\"pass\", \"opset\", \"rtol\", \"atol\", \"atol_scale\", \"input_sets\": "
      "[{\"inputs\", \"pass\", \"outputs\": [{\"name\", \"shape\", \"dtype\", "
      "\"max_abs_error\", \"max_rel_error\", \"pass\", ...}]}], \"mismatch\"} "
      "instead of the table");

  auto* ops = app->add_subcommand(
      "ops", "List the operators torchonnx converts, one line per converter: OP<TAB>SINCE-UNTIL");
  ops->callback([&r] { r.command = Command::kOps; });
  ops->add_option("--opset", r.ops_opset, "Only the operators converted at this opset");
  return app;
}

void finish(Request& r) {
  auto& o = r.options;
  if (r.command == Command::kOps) return;
  // No example inputs is right for a forward() without arguments (`torch.arange(5)`); for one
  // with arguments the export names them ("forward(x: Tensor) takes 1 argument but 0 example
  // inputs were given").
  for (const auto& spec : r.input_specs) parse_input_spec(spec);  // checked before any work
  o.input_names = r.text.input_names;
  o.output_names = r.text.output_names;
  o.training = parse_training_mode(r.text.training);
  o.do_constant_folding = !r.text.no_folding;
  o.export_params = !r.text.no_params;
  for (const auto& spec : r.text.dynamic_axes) add_dynamic_axes(spec, o.dynamic_axes);
  o.export_modules_as_functions.insert(r.text.functions.begin(), r.text.functions.end());
  o.operator_export_type = parse_export_type(r.text.export_type);
  for (const auto& spec : r.text.custom_opsets) add_custom_opset(spec, o.custom_opsets);
  if (r.text.data_layout == "per-tensor") {
    o.external_data.layout = ExternalDataOptions::Layout::kFilePerTensor;
  }
  check_export_options(o);  // before any work (loading the model)
}

int run(int argc, const char* const* argv) {
  Request r;
  auto app = make_app(r);
  const auto is_command = [&](const std::string& name) {
    return !app->get_subcommands([&](const CLI::App* sub) { return sub->get_name() == name; })
                .empty();
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::cerr << fmt::format(
        "torchonnx: error: unknown command '{}': use export, print, unconvertible, verify or ops "
        "(torchonnx --help)\n",
        argv[1]);
    return static_cast<int>(ErrorCode::kInvalidArgument);
  }
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app->exit(e) == 0 ? 0 : static_cast<int>(ErrorCode::kInvalidArgument);
  }
  try {
    if (r.command == Command::kOps) return print_operators(r.ops_opset);
    finish(r);
    for (const auto& lib : r.libraries) load_library(lib);
    at::manual_seed(0);
    std::vector<c10::IValue> inputs;
    if (!r.inputs_dir.empty()) {
      inputs = read_inputs(r.inputs_dir);
    } else {
      for (const auto& spec : r.input_specs)
        inputs.emplace_back(make_input(parse_input_spec(spec)));
    }
    if (r.command == Command::kVerify) check_verify_available();  // before loading the model
    if (r.command == Command::kExport) check_output_path(r.out_path);
    if (r.command == Command::kPrint && !r.out_path.empty()) check_output_path(r.out_path);
    if (!r.save_dir.empty()) check_test_data_dir(r.save_dir);
    torch::jit::Module model;
    if (is_exported_program(r.model_path)) {  // a .pt2: its example inputs and dynamic dims
      const ExportedProgram program = load_exported_program(r.model_path, r.program);
      for (const auto& note : program.notes) std::cerr << "torchonnx: note: " << note << "\n";
      model = program.module;
      if (r.inputs_dir.empty() && r.input_specs.empty()) inputs = program.example_inputs;
      r.options = program_options(program, r.options);
    } else {
      if (!r.program.empty()) {
        throw ExportError(ErrorCode::kInvalidArgument,
                          fmt::format("--program {}: '{}' is no torch.export archive (.pt2); "
                                      "--program names a program of a PT2 archive that holds "
                                      "several. Remedy: leave it out for a TorchScript file",
                                      r.program, r.model_path));
      }
      model = load_model(r.model_path);
    }
    inputs = group_arguments(model, std::move(inputs));
    if (r.command == Command::kUnconvertible) {
      return print_unconvertible(model, inputs, r.options, r.json);
    }
    if (r.command == Command::kVerify) return run_verify(model, inputs, r);
    if (r.command == Command::kPrint) {
      std::string text = export_to_pretty_string(
          model, inputs, r.options,
          r.print_format == "dot" ? PrettyFormat::kDot : PrettyFormat::kText);
      if (r.out_path.empty()) {
        std::cout << text << std::flush;
      } else {
        write_file_atomically(r.out_path, text);
      }
      return 0;
    }
    // Test data first (the forward runs there), removed again when the export fails: a failed
    // command leaves no file behind.
    if (!r.save_dir.empty() && r.options.drop_unused_inputs) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        "--save-test-data writes one input file per argument, and "
                        "--drop-unused-inputs may remove some of the model's inputs. Remedy: "
                        "use one of them");
    }
    std::vector<std::string> test_files;
    if (!r.save_dir.empty())
      test_files = save_test_data(model, inputs, r.options.training, r.save_dir);
    try {
      ProgressBar bar;
      if (!r.quiet && isatty(STDERR_FILENO)) r.options.progress = bar.callback();
      export_model(model, inputs, r.out_path, r.options);
    } catch (...) {
      for (const auto& f : test_files) std::remove(f.c_str());
      throw;
    }
    std::cerr << "torchonnx: wrote " << r.out_path << "\n";
    return 0;
  } catch (const ExportError& e) {
    std::cerr << "torchonnx: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "torchonnx: error: out of memory. Remedy: export with smaller example inputs, "
                 "or on a machine with more memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "torchonnx: internal error: " << e.what()
              << "\nThis is a torchonnx bug: please report it with the command line and model.\n";
    return 1;
  }
}

}  // namespace torchonnx::cli
