// The frontend: where TorchScript graphs come from (a loaded module, or a traced C++ callable).
#pragma once

#include <ATen/core/ivalue.h>

#include <memory>
#include <string>
#include <vector>

#include "common/named_parameter.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
struct Module;
}  // namespace torch::jit

namespace torchonnx::frontend {

// load_model() of an in-memory archive (the .pt fuzz target's entry): ExportError(kModelLoad)
// naming `name` when it is no TorchScript.
torch::jit::Module load_model_from_bytes(const std::string& bytes, const std::string& name);

// A graph whose inputs are the flattened user inputs followed by the parameters.
struct CapturedGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<c10::IValue> example_inputs;  // one per user input of `graph`
  std::vector<NamedParameter> parameters;   // one per trailing input of `graph`
  // The qualified TorchScript class of a captured module ("" for a trace): an instance for
  // export_modules_as_functions (set by the export pipeline).
  std::string module_type;
};

// forward() of `module`, inlined, with module attributes lifted to named parameters. Checks the
// number and types of `args` against forward()'s schema.
CapturedGraph capture_module(const torch::jit::Module& module,
                             const std::vector<c10::IValue>& args);

// Traces `fn` on `args`; tensors of `parameters` that `fn` reads become named graph inputs. The
// tensors of tuple, list and dict arguments become graph inputs in order ("input_0.key"), str and
// number arguments constants; dict outputs become their values and str outputs are dropped (each
// with a warning on stderr, as torch.onnx does).
CapturedGraph capture_trace(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                            const NamedTensors& parameters);

// Runs forward() on `args` (ExportError kModelRun when it throws) and returns the outputs
// flattened as the exported graph's outputs are.
std::vector<at::Tensor> run_module(const torch::jit::Module& module,
                                   const std::vector<c10::IValue>& args);
// ExportError(kModelRun) when forward() fails on `args`: libtorch's message, then
// `export_error` (the error the export stopped with, which such a failure usually explains).
// Returns when the forward runs.
void throw_if_forward_fails(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                            const std::string& export_error);
// Flattens nested tuples/lists/dict values into tensors (ints and floats become 0-d tensors).
std::vector<at::Tensor> flatten_tensors(const c10::IValue& value);

}  // namespace torchonnx::frontend
