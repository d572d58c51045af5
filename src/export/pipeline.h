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

#include <string>
#include <vector>

#include "onnx/serialize.h"
#include "torchonnx/export.h"

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

// The pipeline up to conversion: every op that cannot be converted (all at once).
std::vector<UnconvertibleOp> unconvertible_ops(const ModuleSource& source,
                                               const ExportOptions& options);

}  // namespace torchonnx::pipeline
