// The public export functions of torchonnx/export.h: each runs the pipeline (pipeline.h) and
// writes, serializes or prints its result.
#include <torch/csrc/jit/api/module.h>

#include <algorithm>

#include "export/pipeline.h"
#include "export/training_mode.h"
#include "frontend/frontend.h"
#include "onnx/dot.h"
#include "onnx/file_util.h"
#include "onnx/model_proto.h"
#include "onnx/serialize.h"
#include "torchonnx/export.h"

namespace torchonnx {

namespace {

std::string print_model(const ExportedModel& model, PrettyFormat format) {
  return format == PrettyFormat::kDot ? to_dot(model.proto) : to_pretty_string(model.proto);
}

}  // namespace

std::vector<at::Tensor> reference_outputs(const torch::jit::Module& model,
                                          const std::vector<c10::IValue>& args,
                                          TrainingMode training) {
  TrainingModeGuard mode(model_modes(model), training);
  return frontend::run_module(model, args);
}

std::string export_model_to_bytes(const torch::jit::Module& model,
                                  const std::vector<c10::IValue>& args,
                                  const ExportOptions& options) {
  ExportedModel exported = pipeline::export_model(pipeline::ModuleSource{&model, &args}, options);
  return model_to_bytes(exported);
}

std::string export_to_pretty_string(const torch::jit::Module& model,
                                    const std::vector<c10::IValue>& args,
                                    const ExportOptions& options, PrettyFormat format) {
  return print_model(pipeline::export_model(pipeline::ModuleSource{&model, &args}, options),
                     format);
}

std::string export_function_to_pretty_string(const TracedFunction& fn,
                                             const std::vector<c10::IValue>& args,
                                             const NamedTensors& parameters,
                                             const ExportOptions& options, PrettyFormat format) {
  return print_model(
      pipeline::export_model(pipeline::TraceSource{&fn, &args, &parameters}, options), format);
}

void export_model(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                  const std::string& path, const ExportOptions& options) {
  pipeline::export_to_file(pipeline::ModuleSource{&model, &args}, path, options);
}

std::string export_function_to_bytes(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                                     const NamedTensors& parameters, const ExportOptions& options) {
  ExportedModel exported =
      pipeline::export_model(pipeline::TraceSource{&fn, &args, &parameters}, options);
  return model_to_bytes(exported);
}

void export_function(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                     const NamedTensors& parameters, const std::string& path,
                     const ExportOptions& options) {
  pipeline::export_to_file(pipeline::TraceSource{&fn, &args, &parameters}, path, options);
}

int highest_opset() {
  return std::min(kMaxOpset, onnx_library_max_opset());
}

void check_export_options(const ExportOptions& options) {
  pipeline::check_options(options);
}

std::vector<UnconvertibleOp> unconvertible_ops(const torch::jit::Module& model,
                                               const std::vector<c10::IValue>& args,
                                               const ExportOptions& options) {
  return pipeline::unconvertible_ops(pipeline::ModuleSource{&model, &args}, options);
}

}  // namespace torchonnx
