// torchonnx: torch.onnx.export in C++.
//
//   torch::jit::Module m = torch::jit::load("resnet18.pt");
//   torchonnx::ExportOptions options;
//   options.input_names = {"image"};
//   torchonnx::export_model(m, {torch::randn({1, 3, 224, 224})}, "resnet18.onnx", options);
//
// Include <torch/script.h> (or <torch/torch.h>) before using these functions: this header only
// forward-declares libtorch's types so that it stays cheap to include.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "torchonnx/errors.h"

namespace at {
class Tensor;
}
namespace c10 {
struct IValue;
}
namespace torch {
namespace jit {
struct Function;
struct Module;
}  // namespace jit
namespace nn {
class Module;
}
}  // namespace torch

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

// The opsets torchonnx's converters serve: kMinOpset to kMaxOpset. A build exports up to
// highest_opset(), the highest its onnx library's checker knows (onnx 1.12, Debian 12's: 17).
// The default is torch.onnx's.
inline constexpr int kMinOpset = 9;
// Opsets kLowestOpset to kMinOpset - 1 (7 and 8, which torch.onnx also exports) are reached by
// converting at kMinOpset and running ONNX's version converter down; a node it has no lower form
// for is refused (kUnsupportedOp) with the node named.
inline constexpr int kLowestOpset = 7;
inline constexpr int kMaxOpset = 21;
inline constexpr int kDefaultOpset = 17;

// The highest opset this build exports: kMaxOpset, or the highest opset of the default domain
// its onnx library knows, when lower (17 with onnx 1.12; 21 with onnx >= 1.16).
int highest_opset();

// torch.onnx.OperatorExportTypes: how ops are exported.
enum class OperatorExportType {
  kOnnx,              // every op as standard ONNX ops (the default)
  kOnnxAten,          // every ATen op as an ATen node (domain org.pytorch.aten)
  kOnnxAtenFallback,  // ONNX where a converter exists, an ATen node otherwise
  kRaw,               // the TorchScript ops as they are, in their own domains (aten, prim, ...)
  kOnnxFallthrough,   // ONNX where a converter exists, the op as is in its own domain otherwise
};

// torch.onnx.TrainingMode: the mode the model is exported in.
enum class TrainingMode {
  kEval,      // switch to eval() for the export (the default), restore the mode after
  kPreserve,  // keep the module's current mode
  kTraining,  // switch to train() for the export (dropout, batch norm in training form)
};

// dynamic_axes: input or output name → axis → label. An empty label gets a generated name
// ("<name>_dynamic_axes_<k>", k counting the axes of that name from 1, as torch.onnx names the
// axes of its list form).
using DynamicAxes = std::map<std::string, std::map<int64_t, std::string>>;

// Where the tensors of a model with external data go (torch.onnx's use_external_data_format).
// An attribute of a module instance that export_modules_as_functions records on the instance's
// call node and declares on its function, as torch.onnx does for a module's annotated attributes
// (`num_layers: int` in the class body; its value at export). Bools are ints.
struct ModuleAttribute {
  std::string name;
  std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>> value;
};

// A module of the model by its path in named_modules() ("" for the model, "lns.0"): its class
// (torch.typename, "torch.nn.modules.normalization.LayerNorm") and the attributes above.
struct ModuleAttributes {
  std::string type;
  std::vector<ModuleAttribute> attributes;
};

struct ExternalDataOptions {
  enum class Layout {
    kSingleFile,     // one data file beside the model; each tensor at its offset (the default)
    kFilePerTensor,  // one file per tensor, named after the tensor (as torch.onnx writes them)
  };
  Layout layout = Layout::kSingleFile;
  // The single data file's name, relative to the model's folder; empty: "<model file>.data".
  std::string location;
  // Tensors of fewer bytes stay inline in the model (shape constants, biases of small layers).
  int64_t size_threshold = 1024;
};

// What an export is doing, for ExportOptions::progress (called from the exporting thread).
struct ExportProgress {
  std::string stage;           // "capture", "propagate", "convert", "validate", "write"
  int64_t done = 0;            // nodes converted, or bytes written in "write"
  int64_t total = 0;           // of how many (0: not known)
  double elapsed_seconds = 0;  // since the export started
};
using ProgressCallback = std::function<void(const ExportProgress&)>;

// protobuf refuses messages over 2 GB: models whose tensors pass this size get external data.
inline constexpr int64_t kProtobufLimitBytes = (int64_t{1} << 31) - 1;

// Mirrors the keyword arguments of torch.onnx.export (PyTorch 1.13).
struct ExportOptions {
  // Names for the graph inputs in order: the flattened example arguments, then the parameters
  // (as in torch.onnx, a shorter list names only the first inputs).
  std::vector<std::string> input_names;
  // Names for the flattened model outputs in order.
  std::vector<std::string> output_names;
  int opset_version = kDefaultOpset;
  // Store the parameters as initializers; when false, they become graph inputs without values.
  bool export_params = true;
  // Print the exported graph to the log stream (stderr by default) in torch.onnx's format.
  bool verbose = false;
  // Leave out each node's doc_string (the TorchScript op and source line it came from, which
  // `torchonnx print`, Netron and verification reports show). torch.onnx writes them only with
  // verbose=True; the Python package sets this to `not verbose`.
  bool strip_doc_string = false;
  // Fold subgraphs whose inputs are all constants (shape arithmetic, casts of constants, ...).
  bool do_constant_folding = true;
  // Also list the initializers among the graph inputs (needed by some old runtimes).
  bool keep_initializers_as_inputs = false;
  // Remove the graph inputs that no node reads once the graph is optimized (an input used only for
  // its static shape, or not at all), as torch.onnx does; the names given by input_names stay
  // with the inputs that remain. Off by default in C++ and the CLI (--drop-unused-inputs), so
  // that the model's inputs are forward()'s flattened arguments whatever it computes; on in the
  // Python package (torchonnx.export, torch.onnx's semantics).
  bool drop_unused_inputs = false;
  // Axes of inputs and outputs whose size is known only at run time: the graph computes every
  // shape that depends on them (Shape/Gather/...) instead of baking the example's sizes.
  DynamicAxes dynamic_axes;
  OperatorExportType operator_export_type = OperatorExportType::kOnnx;
  TrainingMode training = TrainingMode::kEval;
  // Opset versions of custom domains used by custom symbolics (domain → version; default 1).
  std::map<std::string, int> custom_opsets;
  // Module types (qualified TorchScript class names such as "__torch__.torch.nn.modules.linear.
  // Linear", or the bare class name "Linear") whose instances become ONNX local functions
  // (opset 15+). torch.onnx's export_modules_as_functions; "*" selects every module type the
  // graph records a call of (torch.onnx's export_modules_as_functions=True).
  std::set<std::string> export_modules_as_functions;
  // The modules' attributes for those functions, by module path (the Python package fills it
  // from the annotations of the module classes; empty: calls carry only the attributes whose
  // values differ between instances).
  std::map<std::string, ModuleAttributes> module_attributes;
  // Store tensors of size_threshold bytes or more outside the model file (ONNX external data).
  // Switched on by itself when the model would pass protobuf's 2 GB limit; export_model only
  // (the *_to_bytes functions have no folder to put the data in and throw on such models).
  bool use_external_data_format = false;
  ExternalDataOptions external_data;
  // Called as the export advances (stages, nodes, bytes written); may be empty.
  ProgressCallback progress;
};

// A model's forward pass over flattened arguments, for tracing.
using TracedFunction = std::function<c10::IValue(const std::vector<c10::IValue>&)>;
using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// ExportError (kInvalidArgument) when `options` cannot be exported with: an opset outside
// kLowestOpset..highest_opset(), modules as functions below opset 15, an external-data location
// that is no plain file name. Every export function checks this first; call it to check before
// loading a model.
void check_export_options(const ExportOptions& options);

// Exports a TorchScript module (loaded from a .pt or built in C++). `args` are the example
// arguments of forward(), without self. Writes `path` atomically: on failure nothing is left.
void export_model(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                  const std::string& path, const ExportOptions& options = {});
// The same, returning the serialized ModelProto.
std::string export_model_to_bytes(const torch::jit::Module& model,
                                  const std::vector<c10::IValue>& args,
                                  const ExportOptions& options = {});

// Traces `fn` on `args` (as torch.onnx traces an nn.Module) and exports the trace. Every tensor of
// `parameters` that `fn` reads becomes an initializer with the given name.
void export_function(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                     const NamedTensors& parameters, const std::string& path,
                     const ExportOptions& options = {});
std::string export_function_to_bytes(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                                     const NamedTensors& parameters,
                                     const ExportOptions& options = {});

// Traces a torch::nn::Module through `forward`; its parameters and buffers become initializers
// named by their state_dict names ("features.0.weight").
void export_module(torch::nn::Module& module, const TracedFunction& forward,
                   const std::vector<c10::IValue>& args, const std::string& path,
                   const ExportOptions& options = {});

// How export_to_pretty_string prints the exported graph.
enum class PrettyFormat {
  kText,  // torch.onnx's format: "%y : Float(2, 4) = onnx::Gemm[alpha=1, ...](%x, %w, %b)"
  kDot,   // Graphviz DOT: one box per node, tensor types and shapes on the edges
};

// torch.onnx.export_to_pretty_string: exports as export_model does (same options, including the
// training mode) and returns the ONNX graph printed as text instead of the serialized model.
std::string export_to_pretty_string(const torch::jit::Module& model,
                                    const std::vector<c10::IValue>& args,
                                    const ExportOptions& options = {},
                                    PrettyFormat format = PrettyFormat::kText);
// The same for a traced function (as export_function).
std::string export_function_to_pretty_string(const TracedFunction& fn,
                                             const std::vector<c10::IValue>& args,
                                             const NamedTensors& parameters,
                                             const ExportOptions& options = {},
                                             PrettyFormat format = PrettyFormat::kText);

// Calls scripted code from a traced function, keeping its control flow. Outside tracing, runs
// `method` of `module` (or `function`) on `args` (trailing arguments with defaults may be left
// out) and returns its result. While torchonnx traces (export_function, export_module), runs it
// with tracing paused and inserts its TorchScript graph, loops and ifs included, into the trace:
// the traced ops that follow consume its outputs. Without it, the tracer would record the ops the
// interpreter runs, unrolling loops and freezing branches. The module's tensors that the traced
// function receives as `parameters` stay named graph inputs (initializers); its other tensors and
// attributes become constants.
//
//   auto cu = torch::jit::compile("def loop(x, y):\n  for i in range(int(y)):\n    x = x + i\n"
//                                 "  return x\n");
//   export_function([&](const std::vector<c10::IValue>& in) {
//     return call_scripted(cu->get_function("loop"), {in[0], in[1]});
//   }, {x, count}, {}, "loop.onnx");
c10::IValue call_scripted(const torch::jit::Module& module, std::vector<c10::IValue> args,
                          const std::string& method = "forward");
c10::IValue call_scripted(torch::jit::Function& function, std::vector<c10::IValue> args);

// libtorch's outputs of `model` on `args`, flattened to tensors as the exported graph's outputs
// are, with forward() run in the mode an export with `training` runs it in (the module's and its
// submodules' modes switched for the run and restored after): the outputs write_test_data stores
// beside the inputs. ExportError(kModelRun) when forward() throws.
std::vector<at::Tensor> reference_outputs(const torch::jit::Module& model,
                                          const std::vector<c10::IValue>& args,
                                          TrainingMode training = TrainingMode::kEval);

// Writes DIR/input_<i>.pb and DIR/output_<i>.pb (serialized onnx.TensorProto, the ONNX test-data
// layout) so that an export can be checked in any runtime. Creates DIR if needed.
void write_test_data(const std::string& dir, const std::vector<at::Tensor>& inputs,
                     const std::vector<at::Tensor>& outputs);

// torch.onnx.utils.unconvertible_ops: the ops of `model` that cannot be exported with `options`
// (opset_version, operator_export_type, custom symbolics), all of them at once — ops without a
// converter, and ops whose converter rejects some of their nodes (the conversion runs on, recording
// each node's error). Sorted by name; empty when the model can be exported.
struct UnconvertibleOp {
  std::string name;                    // TorchScript kind, "aten::erfinv"
  int64_t count = 0;                   // how many nodes of this kind cannot be converted
  std::vector<std::string> locations;  // "file.py:12" of each such node that has source info
  std::vector<std::string> errors;     // the converter's messages (distinct); empty: no converter
};
std::vector<UnconvertibleOp> unconvertible_ops(const torch::jit::Module& model,
                                               const std::vector<c10::IValue>& args,
                                               const ExportOptions& options = {});

// Loads a TorchScript file with a clear ExportError for missing, corrupt or non-TorchScript files.
torch::jit::Module load_model(const std::string& path);

}  // namespace torchonnx

#pragma GCC visibility pop
