// export_model & co: frontend → passes → symbolic → onnx → file.
#include "torchonnx/export.h"

#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <unordered_set>

#include "export/dynamic_axes.h"
#include "export/export_log.h"
#include "export/training_mode.h"
#include "frontend/frontend.h"
#include "onnx/dot.h"
#include "onnx/file_util.h"
#include "onnx/model_proto.h"
#include "passes/pipeline.h"
#include "symbolic/context.h"
#include "symbolic/convert.h"
#include "symbolic/functions.h"
#include "symbolic/registry.h"
#include "torchonnx/logging.h"
#include "version.h"

namespace torchonnx {

namespace {

void check_options(const ExportOptions& options) {
  if (options.opset_version < kMinOpset || options.opset_version > kMaxOpset) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("opset_version {} is not supported; torchonnx exports opsets {} "
                                  "to {}",
                                  options.opset_version, kMinOpset, kMaxOpset));
  }
  symbolic::check_modules_as_functions(options);
}

std::string default_input_name(const torch::jit::Value* v, size_t i) {
  if (v->hasDebugName()) return v->debugName();
  return fmt::format("input_{}", i);
}

// The names the user inputs will have in the ONNX graph (make_signature's).
std::vector<std::string> input_names_before_passes(const frontend::CapturedGraph& c,
                                                   const ExportOptions& options) {
  const auto inputs = c.graph->inputs();
  std::vector<std::string> names;
  for (size_t i = 0; i + c.parameters.size() < inputs.size(); ++i) {
    names.push_back(i < options.input_names.size() ? options.input_names[i]
                                                   : default_input_name(inputs[i], i));
  }
  return names;
}

symbolic::GraphSignature make_signature(const frontend::CapturedGraph& c,
                                        const ExportOptions& options) {
  const auto inputs = c.graph->inputs();
  const size_t num_user = inputs.size() - c.parameters.size();
  if (options.input_names.size() > inputs.size()) {
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} input names were given but the graph has {} inputs ({} "
                    "example inputs and {} parameters)",
                    options.input_names.size(), inputs.size(), num_user, c.parameters.size()));
  }
  if (options.output_names.size() > c.graph->outputs().size()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("{} output names were given but the model has {} outputs",
                                  options.output_names.size(), c.graph->outputs().size()));
  }
  symbolic::GraphSignature sig;
  sig.parameters = c.parameters;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < options.input_names.size()) {
      sig.input_names.push_back(options.input_names[i]);
    } else if (i < num_user) {
      sig.input_names.push_back(default_input_name(inputs[i], i));
    } else {
      sig.input_names.push_back(c.parameters[i - num_user].name);
    }
  }
  for (size_t k = 0; k < c.graph->outputs().size(); ++k) {
    sig.output_names.push_back(k < options.output_names.size() ? options.output_names[k]
                                                               : fmt::format("output_{}", k));
  }
  std::unordered_set<std::string> seen;
  for (const auto* names : {&sig.input_names, &sig.output_names}) {
    for (const auto& name : *names) {
      if (name.empty() || !seen.insert(name).second) {
        throw ExportError(ErrorCode::kInvalidArgument,
                          fmt::format("the graph's input and output names must be unique and "
                                      "non-empty, but '{}' is used twice or is empty. Remedy: "
                                      "choose other --input-names/--output-names.",
                                      name));
      }
    }
  }
  return sig;
}

onnx::ModelProto export_captured(frontend::CapturedGraph captured, const ExportOptions& options) {
  std::vector<c10::IValue> inputs = captured.example_inputs;
  for (const auto& p : captured.parameters) inputs.emplace_back(p.tensor);
  const passes::DynamicDims dynamic =
      dynamic_input_dims(captured, input_names_before_passes(captured, options), options);
  passes::PrepareGraph(captured.graph, inputs, options, dynamic);
  log_graph_ops("after the TorchScript passes (passes/pipeline.cpp), the converters get",
                *captured.graph);
  auto signature = make_signature(captured, options);
  ir::Model model =
      symbolic::convert_graph(*captured.graph, signature, options, symbolic::Registry::builtin());
  symbolic::extract_module_functions(model, options.export_modules_as_functions);
  name_dynamic_dims(model.graph, options.dynamic_axes);
  model.producer_version = kVersion;
  onnx::ModelProto proto = to_model_proto(model);
  if (const char* dump = std::getenv("TORCHONNX_DEBUG_DUMP")) {
    // For torchonnx developers: the model as converted, before validation can reject it.
    std::ofstream(dump, std::ios::binary) << proto.SerializeAsString();
    std::cerr << to_pretty_string(proto) << std::flush;
  }
  validate_model(proto);
  rename_dynamic_outputs(proto, options.dynamic_axes);
  log_model(proto);
  if (options.verbose) std::cerr << to_pretty_string(proto) << std::flush;
  return proto;
}

std::string serialize(const onnx::ModelProto& proto) {
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    throw ExportError(ErrorCode::kIo, "serializing the ONNX model failed (protobuf's 2 GB limit?)");
  }
  return bytes;
}

onnx::ModelProto export_module_proto(const torch::jit::Module& model,
                                     const std::vector<c10::IValue>& args,
                                     const ExportOptions& options) {
  check_options(options);
  detail::ExportScope in_export;
  log(fmt::format("torchonnx: exporting TorchScript module {} ({})",
                  model.type()->name() ? model.type()->name()->qualifiedName() : "?",
                  describe_options(options)));
  ModuleModeGuard mode(model, options.training);
  frontend::CapturedGraph captured = frontend::capture_module(model, args);
  log_graph_ops("captured forward() (inlined, module attributes lifted):", *captured.graph);
  check_training_mode(*captured.graph, options, mode.training());
  return export_captured(std::move(captured), options);
}

onnx::ModelProto export_function_proto(const TracedFunction& fn,
                                       const std::vector<c10::IValue>& args,
                                       const NamedTensors& parameters,
                                       const ExportOptions& options) {
  check_options(options);
  detail::ExportScope in_export;
  log(fmt::format("torchonnx: tracing a function with {} parameters ({})", parameters.size(),
                  describe_options(options)));
  frontend::CapturedGraph captured = frontend::capture_trace(fn, args, parameters);
  log_graph_ops("traced:", *captured.graph);
  check_training_mode(*captured.graph, options, options.training == TrainingMode::kTraining);
  return export_captured(std::move(captured), options);
}

std::string print_model(const onnx::ModelProto& proto, PrettyFormat format) {
  return format == PrettyFormat::kDot ? to_dot(proto) : to_pretty_string(proto);
}

}  // namespace

std::string export_model_to_bytes(const torch::jit::Module& model,
                                  const std::vector<c10::IValue>& args,
                                  const ExportOptions& options) {
  return serialize(export_module_proto(model, args, options));
}

std::string export_to_pretty_string(const torch::jit::Module& model,
                                    const std::vector<c10::IValue>& args,
                                    const ExportOptions& options, PrettyFormat format) {
  return print_model(export_module_proto(model, args, options), format);
}

std::string export_function_to_pretty_string(const TracedFunction& fn,
                                             const std::vector<c10::IValue>& args,
                                             const NamedTensors& parameters,
                                             const ExportOptions& options, PrettyFormat format) {
  return print_model(export_function_proto(fn, args, parameters, options), format);
}

void export_model(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                  const std::string& path, const ExportOptions& options) {
  write_file_atomically(path, export_model_to_bytes(model, args, options));
}

std::string export_function_to_bytes(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                                     const NamedTensors& parameters, const ExportOptions& options) {
  return serialize(export_function_proto(fn, args, parameters, options));
}

void export_function(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                     const NamedTensors& parameters, const std::string& path,
                     const ExportOptions& options) {
  write_file_atomically(path, export_function_to_bytes(fn, args, parameters, options));
}

}  // namespace torchonnx
