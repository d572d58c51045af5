// The export pipeline: every entry point of include/torchonnx/export.h (to a file, to bytes, to a
// pretty string, the unconvertible ops; TorchScript modules, traced C++ callables and
// torch::nn::Modules) runs these stages, in this order, through run_pipeline:
//
//   check_options → capture (frontend/) → TorchScript passes (passes/pipeline.cpp)
//   → graph signature (export/signature.h) → convert (symbolic/) → ONNX rewrites (onnx/optimize.h)
//   → ExportedModel (onnx/serialize.h) → validate
//
// The unconvertible-ops query runs the same stages up to conversion, which then collects every
// node that cannot be converted instead of stopping at the first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnx/serialize.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx::pipeline {

// What is exported: a TorchScript module's forward() on example arguments (without self), or a
// C++ callable traced on them, reading `parameters`.
struct ModuleSource {
  const torch::jit::Module* module;
  const std::vector<c10::IValue>* args;
};
struct TraceSource {
  const TracedFunction* fn;
  const std::vector<c10::IValue>* args;
  const NamedTensors* parameters;
};

// The one check of ExportOptions (opset range, modules-as-functions, external data), before any
// work; ExportError (kInvalidArgument) naming the option and the remedy.
void check_options(const ExportOptions& options);

// The whole pipeline: the model, not yet written (write_model / model_to_bytes).
ExportedModel export_model(const ModuleSource& source, const ExportOptions& options,
                           const ProgressSink& progress = {});
ExportedModel export_model(const TraceSource& source, const ExportOptions& options,
                           const ProgressSink& progress = {});

// Called with the graph the converters get (after the TorchScript passes) and the values of its
// inputs (the example inputs, then the parameters). It may register more graph outputs: they are
// exported as further outputs, named output_<k> by their position (the verifier's taps on
// intermediate values, src/verify/).
using PreparedGraphHook =
    std::function<void(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs)>;
ExportedModel export_model(const ModuleSource& source, const ExportOptions& options,
                           const PreparedGraphHook& on_prepared);

// The pipeline up to conversion: every op that cannot be converted (all at once).
std::vector<UnconvertibleOp> unconvertible_ops(const ModuleSource& source,
                                               const ExportOptions& options);

}  // namespace torchonnx::pipeline
