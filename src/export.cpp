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
#include "onnx/optimize.h"
#include "onnx/serialize.h"
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
  check_external_data_options(options.external_data);
}

// The byte offset of the first byte of `name` that makes it no printable UTF-8 (a control
// character, a malformed sequence), or npos.
size_t first_unprintable(const std::string& name) {
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    const size_t extra = c < 0x80           ? 0
                         : (c >> 5) == 0x6  ? 1
                         : (c >> 4) == 0xE  ? 2
                         : (c >> 3) == 0x1E ? 3
                                            : 4;
    if (extra == 4 || (extra == 0 && (c < 0x20 || c == 0x7F)) ||
        i + extra >= name.size() + (extra == 0)) {
      return i;
    }
    for (size_t k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(name[i + k]) & 0xC0) != 0x80) return i;
    }
    i += extra + 1;
  }
  return std::string::npos;
}

// A name for the ONNX graph must be printable UTF-8 (protobuf strings are UTF-8; control
// characters would break every printed form of the model).
void check_value_name(const std::string& name) {
  const size_t bad = first_unprintable(name);
  if (bad == std::string::npos) return;
  std::string shown;
  for (unsigned char c : name) {
    shown +=
        c >= 0x20 && c < 0x7F ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  throw ExportError(ErrorCode::kInvalidArgument,
                    fmt::format("the input/output name '{}' is not printable UTF-8 (byte {}). "
                                "Remedy: use printable names.",
                                shown, bad));
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
  for (const auto* names : {&options.input_names, &options.output_names}) {
    for (const auto& name : *names) check_value_name(name);
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

ExportedModel export_captured(frontend::CapturedGraph captured, const ExportOptions& options,
                              bool training, const ProgressSink& progress) {
  std::vector<c10::IValue> inputs = captured.example_inputs;
  for (const auto& p : captured.parameters) inputs.emplace_back(p.tensor);
  const passes::DynamicDims dynamic =
      dynamic_input_dims(captured, input_names_before_passes(captured, options), options);
  progress.report("prepare", 0, 0);
  passes::PrepareGraph(captured.graph, inputs, options, dynamic);
  log_graph_ops("after the TorchScript passes (passes/pipeline.cpp), the converters get",
                *captured.graph);
  auto signature = make_signature(captured, options);
  progress.report("convert", 0, 0);
  ir::Model model = symbolic::convert_graph(
      *captured.graph, signature, options, symbolic::Registry::builtin(), nullptr,
      [&](int64_t done, int64_t total) { progress.report("convert", done, total); });
  progress.report("optimize", 0, 0);
  optimize_model(model, {options.do_constant_folding, !training});
  if (int shared = share_duplicate_initializers(model.graph, !training)) {
    log(
        fmt::format("torchonnx: {} initializers hold the same tensor as another (tied weights{}): "
                    "stored once",
                    shared, training ? "" : " or equal values"));
  }
  symbolic::extract_module_functions(model, options.export_modules_as_functions);
  name_dynamic_dims(model.graph, options.dynamic_axes);
  model.producer_version = kVersion;
  ExportedModel exported = to_exported_model(model);
  if (const char* dump = std::getenv("TORCHONNX_DEBUG_DUMP")) {
    // For torchonnx developers: the model as converted, before validation can reject it.
    write_model(exported, dump, options);
    std::cerr << to_pretty_string(exported.proto) << std::flush;
  }
  progress.report("validate", 0, 0);
  validate_model(exported);
  rename_dynamic_outputs(exported.proto, options.dynamic_axes);
  log_model(exported.proto);
  if (options.verbose) std::cerr << to_pretty_string(exported.proto) << std::flush;
  return exported;
}

ExportedModel export_module_proto(const torch::jit::Module& model,
                                  const std::vector<c10::IValue>& args,
                                  const ExportOptions& options, const ProgressSink& progress = {}) {
  check_options(options);
  detail::ExportScope in_export;
  log(fmt::format("torchonnx: exporting TorchScript module {} ({})",
                  model.type()->name() ? model.type()->name()->qualifiedName() : "?",
                  describe_options(options)));
  ModuleModeGuard mode(model, options.training);
  progress.report("capture", 0, 0);
  frontend::CapturedGraph captured = frontend::capture_module(model, args);
  log_graph_ops("captured forward() (inlined, module attributes lifted):", *captured.graph);
  check_training_mode(*captured.graph, options, mode.training());
  try {
    return export_captured(std::move(captured), options, mode.training(), progress);
  } catch (const ExportError& e) {
    // Type propagation runs the ops on shape-only tensors and leaves a node it cannot run
    // untyped, so a forward() that fails on the example inputs (mismatched shapes or dtypes)
    // shows up later, as a converter's or the checker's complaint. Only then is the real forward
    // run: when it fails, that is the error to report (kModelRun, with libtorch's message).
    if (e.code() != ErrorCode::kConversion && e.code() != ErrorCode::kInvalidOnnx) throw;
    frontend::throw_if_forward_fails(model, args, e.what());
    throw;
  } catch (const std::exception& e) {
    // An error no pass expected (an internal error) is often the same thing: example inputs the
    // model cannot run on, met first by a pass. The forward tells.
    frontend::throw_if_forward_fails(model, args, e.what());
    throw;
  }
}

ExportedModel export_function_proto(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                                    const NamedTensors& parameters, const ExportOptions& options,
                                    const ProgressSink& progress = {}) {
  check_options(options);
  detail::ExportScope in_export;
  log(fmt::format("torchonnx: tracing a function with {} parameters ({})", parameters.size(),
                  describe_options(options)));
  progress.report("capture", 0, 0);
  frontend::CapturedGraph captured = frontend::capture_trace(fn, args, parameters);
  log_graph_ops("traced:", *captured.graph);
  const bool training = options.training == TrainingMode::kTraining;
  check_training_mode(*captured.graph, options, training);
  return export_captured(std::move(captured), options, training, progress);
}

std::string print_model(const ExportedModel& model, PrettyFormat format) {
  return format == PrettyFormat::kDot ? to_dot(model.proto) : to_pretty_string(model.proto);
}

ProgressSink progress_of(const ExportOptions& options) {
  ProgressSink sink;
  sink.callback = &options.progress;
  return sink;
}

}  // namespace

std::string export_model_to_bytes(const torch::jit::Module& model,
                                  const std::vector<c10::IValue>& args,
                                  const ExportOptions& options) {
  ExportedModel exported = export_module_proto(model, args, options);
  return model_to_bytes(exported);
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
  check_output_path(path);
  const ProgressSink progress = progress_of(options);
  ExportedModel exported = export_module_proto(model, args, options, progress);
  write_model(exported, path, options, progress);
}

std::string export_function_to_bytes(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                                     const NamedTensors& parameters, const ExportOptions& options) {
  ExportedModel exported = export_function_proto(fn, args, parameters, options);
  return model_to_bytes(exported);
}

void export_function(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                     const NamedTensors& parameters, const std::string& path,
                     const ExportOptions& options) {
  check_output_path(path);
  const ProgressSink progress = progress_of(options);
  ExportedModel exported = export_function_proto(fn, args, parameters, options, progress);
  write_model(exported, path, options, progress);
}

}  // namespace torchonnx
