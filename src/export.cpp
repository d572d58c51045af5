// export_model & co: frontend → passes → symbolic → onnx → file.
#include "torchonnx/export.h"

#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <unordered_set>

#include "frontend/frontend.h"
#include "onnx/file_util.h"
#include "onnx/model_proto.h"
#include "passes/pipeline.h"
#include "symbolic/convert.h"
#include "symbolic/registry.h"
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
}

std::string default_input_name(const torch::jit::Value* v, size_t i) {
  if (v->hasDebugName()) return v->debugName();
  return fmt::format("input_{}", i);
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
  passes::PrepareGraph(captured.graph, inputs, options);
  auto signature = make_signature(captured, options);
  ir::Model model =
      symbolic::convert_graph(*captured.graph, signature, options, symbolic::Registry::builtin());
  model.producer_version = kVersion;
  onnx::ModelProto proto = to_model_proto(model);
  if (const char* dump = std::getenv("TORCHONNX_DEBUG_DUMP")) {
    // For torchonnx developers: the model as converted, before validation can reject it.
    std::ofstream(dump, std::ios::binary) << proto.SerializeAsString();
    std::cerr << to_pretty_string(proto) << std::flush;
  }
  validate_model(proto);
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

}  // namespace

std::string export_model_to_bytes(const torch::jit::Module& model,
                                  const std::vector<c10::IValue>& args,
                                  const ExportOptions& options) {
  check_options(options);
  return serialize(export_captured(frontend::capture_module(model, args), options));
}

void export_model(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                  const std::string& path, const ExportOptions& options) {
  write_file_atomically(path, export_model_to_bytes(model, args, options));
}

std::string export_function_to_bytes(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                                     const NamedTensors& parameters, const ExportOptions& options) {
  check_options(options);
  return serialize(export_captured(frontend::capture_trace(fn, args, parameters), options));
}

void export_function(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                     const NamedTensors& parameters, const std::string& path,
                     const ExportOptions& options) {
  write_file_atomically(path, export_function_to_bytes(fn, args, parameters, options));
}

}  // namespace torchonnx
