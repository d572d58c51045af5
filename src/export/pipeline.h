// The export pipeline: every entry point of include/torchonnx/export.h (to a file, to bytes, to a
// pretty string, the unconvertible ops; TorchScript modules, traced C++ callables and
// torch::nn::Modules) runs these stages, in this order, through run_pipeline:
//
//   training flags set (export/training_mode.h) → options checked and resolved (resolve_config)
//   → capture (frontend/) → TorchScript passes (passes/pipeline.cpp) → graph signature
//   (export/signature.h) → convert (symbolic/) → ONNX rewrites (onnx/optimize.h)
//   → ExportedModel (onnx/serialize.h) → validate [→ write_model]
//
// Every stage after the resolution reads the one ExportConfig (Note [One resolved configuration]
// in common/export_config.h), not ExportOptions.
//
// The unconvertible-ops query runs the same stages up to conversion, which then collects every
// node that cannot be converted instead of stopping at the first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/export_config.h"
#include "onnx/serialize.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Graph;
}

namespace torchonnx {
struct ModelModes;
}

namespace torchonnx::pipeline {

// What is exported: a TorchScript module's forward() on example arguments (without self), or a
// C++ callable traced on them, reading `parameters` (`modes`: the training flags of the modules it
// runs, a torch::nn::Module's; null for a plain function).
struct ModuleSource {
  const torch::jit::Module* module;
  const std::vector<c10::IValue>* args;
};
struct TraceSource {
  const TracedFunction* fn;
  const std::vector<c10::IValue>* args;
  const NamedTensors* parameters;
  const ModelModes* modes = nullptr;
};

// The check of ExportOptions (opset range, modules-as-functions, external data); ExportError
// (kInvalidArgument) naming the option and the remedy. resolve_config runs it, before any work.
void check_options(const ExportOptions& options);

// The options checked and resolved into the export's configuration; `training`: whether the model
// is exported in training mode (TrainingModeGuard::training()).
ExportConfig resolve_config(const ExportOptions& options, bool training);

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

// The whole pipeline and write_model: the model written to `path` (checked first: an unwritable
// path fails before any work), reporting to options.progress.
void export_to_file(const ModuleSource& source, const std::string& path,
                    const ExportOptions& options);
void export_to_file(const TraceSource& source, const std::string& path,
                    const ExportOptions& options);

// The pipeline up to conversion: every op that cannot be converted (all at once).
std::vector<UnconvertibleOp> unconvertible_ops(const ModuleSource& source,
                                               const ExportOptions& options);

}  // namespace torchonnx::pipeline
