// The export pipeline's driver (pipeline.h): the stages in order, for every entry point.
#include "export/pipeline.h"

#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <unordered_set>

#include "common/compat.h"
#include "export/dynamic_axes.h"
#include "export/export_log.h"
#include "export/signature.h"
#include "export/training_mode.h"
#include "frontend/frontend.h"
#include "onnx/dead_code.h"
#include "onnx/dot.h"
#include "onnx/file_util.h"
#include "onnx/model_proto.h"
#include "onnx/module_functions.h"
#include "onnx/opset_down.h"
#include "onnx/optimize.h"
#include "onnx/share_initializers.h"
#include "passes/pipeline.h"
#include "symbolic/convert.h"
#include "symbolic/functions.h"
#include "symbolic/registry.h"
#include "torchonnx/logging.h"
#include "version.h"

namespace torchonnx::pipeline {

void check_options(const ExportOptions& options) {
  const int highest = highest_opset();
  if (options.opset_version < kLowestOpset || options.opset_version > highest) {
    std::string remedy;
    if (options.opset_version > highest && options.opset_version <= kMaxOpset) {
      // torchonnx converts at this opset, but the build's onnx library cannot check the model.
      remedy = fmt::format(
          "; opsets {} to {} need a build of torchonnx with a newer onnx library (onnx 1.16 or "
          "later knows them all; this build links onnx {}, whose checker knows opsets up to {}): "
          "build torchonnx on Debian 13 (libonnx-dev 1.17; on Debian 12 in the root of "
          "scripts/debian13.sh), or export at opset {}",
          highest + 1, kMaxOpset, onnx_library_version(), onnx_library_max_opset(), highest);
    }
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("opset {} is out of range (--opset, ExportOptions::opset_version): "
                    "torchonnx exports opsets {} to {}{}",
                    options.opset_version, kLowestOpset, highest, remedy));
  }
  if (!options.export_modules_as_functions.empty() && options.opset_version < 15) {
    // ONNX local functions need IR version 8, which comes with opset 15 (as torch.onnx refuses).
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("export_modules_as_functions is not supported for opset_version {} < 15: "
                    "ONNX local functions need IR version 8, which comes with opset 15. Remedy: "
                    "export with --opset 15 or higher, or without --modules-as-functions.",
                    options.opset_version));
  }
  check_external_data_options(options.external_data);
}

ExportConfig resolve_config(const ExportOptions& options, bool training) {
  check_options(options);
  ExportConfig config;
  // Opsets 7 and 8 are converted at kMinOpset; opset_down.h takes the model there at the end.
  config.opset = std::max(options.opset_version, kMinOpset);
  config.target_opset = options.opset_version;
  config.export_type = options.operator_export_type;
  config.asked_training = options.training;
  config.training = training;
  config.input_names = options.input_names;
  config.output_names = options.output_names;
  config.dynamic_axes = options.dynamic_axes;
  config.custom_opsets = options.custom_opsets;
  config.modules_as_functions = options.export_modules_as_functions;
  config.module_attributes = options.module_attributes;
  config.export_params = options.export_params;
  config.keep_initializers_as_inputs = options.keep_initializers_as_inputs;
  config.do_constant_folding = options.do_constant_folding;
  config.drop_unused_inputs = options.drop_unused_inputs;
  config.strip_doc_string = options.strip_doc_string;
  config.verbose = options.verbose;
  config.use_external_data_format = options.use_external_data_format;
  config.external_data = options.external_data;
  return config;
}

namespace {

// Note [Inputs read for their values]: which graph inputs the captured TorchScript reads for
// values that reach an output, walking back from the outputs. torch.onnx keeps such an input
// (x.unbind() whose pieces only len() counts) even where torchonnx's type propagation folds the
// reads, and drops one whose values reach no output: read only for its shape (x.size(0),
// zeros_like(x), x.fill_(v)), which its shape inference turns into constants, or by nodes whose
// results only such reads use (`(x + 2).shape[1]`), or an element of a list nothing reads.
//
// An if whose condition depends on static sizes only (`if x.size(0) > 1:` without dynamic axes)
// is decided at export, by torch.onnx's shape inference as by torchonnx's type propagation: only
// its taken branch reads anything.
class DataLiveness {
 public:
  DataLiveness(const torch::jit::Graph& graph, const std::vector<c10::IValue>& examples,
               const passes::DynamicDims& dynamic)
      : graph_(graph), examples_(examples), dynamic_(dynamic) {
    for (const auto* out : graph.outputs()) live_.insert(out);
    visit(graph.block());
  }
  bool live(const torch::jit::Value* v) const { return live_.count(v) > 0; }

 private:
  // The sizes of graph input i when they are known at export (an example tensor, no dynamic axis).
  std::optional<std::vector<int64_t>> static_sizes(const torch::jit::Value* v) const {
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      if (graph_.inputs()[i] != v) continue;
      if (i >= examples_.size() || !examples_[i].isTensor() || dynamic_.count(i)) return {};
      return examples_[i].toTensor().sizes().vec();
    }
    return {};
  }

  // The value of an int or bool computed from constants and static sizes of graph inputs.
  std::optional<int64_t> at_export(const torch::jit::Value* v, int depth = 0) const {
    if (depth > 16) return {};
    const torch::jit::Node* node = v->node();
    const std::string kind = node->kind().toQualString();
    if (node->kind() == c10::prim::Constant) {
      auto iv = torch::jit::toIValue(v);
      if (iv && iv->isInt()) return iv->toInt();
      if (iv && iv->isBool()) return iv->toBool() ? 1 : 0;
      return {};
    }
    if ((kind == "aten::size" || kind == "aten::len" || kind == "aten::dim") &&
        !node->inputs().empty()) {
      auto sizes = static_sizes(node->input(0));
      if (!sizes) return {};
      const auto rank = static_cast<int64_t>(sizes->size());
      if (kind == "aten::dim") return rank;
      if (kind == "aten::len") return rank > 0 ? std::optional<int64_t>((*sizes)[0]) : std::nullopt;
      if (node->inputs().size() != 2) return {};  // size() is a list: see __getitem__
      auto d = at_export(node->input(1), depth + 1);
      if (!d || *d < -rank || *d >= rank) return {};
      return (*sizes)[*d < 0 ? *d + rank : *d];
    }
    if (kind == "aten::__getitem__" && node->inputs().size() == 2 &&
        node->input(0)->node()->kind() == c10::aten::size &&
        node->input(0)->node()->inputs().size() == 1) {
      auto sizes = static_sizes(node->input(0)->node()->input(0));
      auto k = at_export(node->input(1), depth + 1);
      if (!sizes || !k) return {};
      const auto rank = static_cast<int64_t>(sizes->size());
      if (*k < -rank || *k >= rank) return {};
      return (*sizes)[*k < 0 ? *k + rank : *k];
    }
    if (kind == "aten::__not__" && node->inputs().size() == 1) {
      auto a = at_export(node->input(0), depth + 1);
      return a ? std::optional<int64_t>(*a == 0) : std::nullopt;
    }
    static const std::unordered_set<std::string> kBinary = {
        "aten::gt",  "aten::lt",  "aten::ge",  "aten::le",      "aten::eq",    "aten::ne",
        "aten::add", "aten::sub", "aten::mul", "aten::__and__", "aten::__or__"};
    if (!kBinary.count(kind) || node->inputs().size() != 2 ||
        node->input(0)->type()->kind() == c10::TypeKind::TensorType ||
        node->input(1)->type()->kind() == c10::TypeKind::TensorType) {
      return {};
    }
    auto a = at_export(node->input(0), depth + 1);
    auto b = at_export(node->input(1), depth + 1);
    if (!a || !b) return {};
    if (kind == "aten::gt") return *a > *b;
    if (kind == "aten::lt") return *a < *b;
    if (kind == "aten::ge") return *a >= *b;
    if (kind == "aten::le") return *a <= *b;
    if (kind == "aten::eq") return *a == *b;
    if (kind == "aten::ne") return *a != *b;
    if (kind == "aten::add") return *a + *b;
    if (kind == "aten::sub") return *a - *b;
    if (kind == "aten::mul") return *a * *b;
    if (kind == "aten::__and__") return *a && *b;
    return *a || *b;
  }

  const torch::jit::Graph& graph_;
  const std::vector<c10::IValue>& examples_;
  const passes::DynamicDims& dynamic_;

  static bool shape_only(const torch::jit::Node* node) {
    static const std::unordered_set<std::string> kinds = {
        "aten::size",       "aten::dim",       "aten::numel",       "prim::shape",
        "prim::dtype",      "prim::device",    "prim::layout",      "prim::is_cuda",
        "aten::new_zeros",  "aten::new_ones",  "aten::new_empty",   "aten::new_full",
        "aten::zeros_like", "aten::ones_like", "aten::empty_like",  "aten::full_like",
        "aten::fill_",      "aten::zero_",     "aten::_dim_arange", "aten::is_floating_point"};
    if (node->kind() == c10::aten::len) {
      return node->inputs()[0]->type()->kind() == c10::TypeKind::TensorType;
    }
    return kinds.count(node->kind().toQualString()) > 0;
  }

  // The nodes of `block`, last first; a loop body's or an undecided branch's outputs are all
  // live, a branch decided at export has the if's.
  void visit(const torch::jit::Block* block, bool all_outputs_live = true) {
    if (all_outputs_live) {
      for (const auto* out : block->outputs()) live_.insert(out);
    }
    std::vector<const torch::jit::Node*> nodes(block->nodes().begin(), block->nodes().end());
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const torch::jit::Node* node = *it;
      const std::string kind = node->kind().toQualString();
      bool any_live = std::any_of(node->outputs().begin(), node->outputs().end(),
                                  [&](const torch::jit::Value* v) { return live(v); });
      // An in-place write into a live tensor (y.copy_(x) before `return y`) or module state.
      const bool in_place = kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_';
      if (in_place && !node->inputs().empty() && live(node->inputs()[0])) any_live = true;
      if (node->kind() == c10::prim::SetAttr) any_live = true;
      if ((node->kind() == c10::aten::fill_ || node->kind() == c10::aten::zero_) &&
          node->input(0)->node()->owningBlock() == block) {
        // Uses after it read the filled tensor: the values before it reach none of them.
        live_.erase(node->input(0));
        continue;
      }
      if (kind == "aten::set_" && node->inputs().size() == 2 &&
          node->input(1)->type()->kind() == c10::TypeKind::TensorType &&
          node->input(0)->node()->owningBlock() == block) {
        // x.set_(y) (Note [set_ of a tensor] in passes/remove_inplace_ops.cpp): uses after it
        // read y; the values of x before it reach none of them.
        if (any_live) live_.insert(node->input(1));
        live_.erase(node->input(0));
        continue;
      }
      if (!any_live || shape_only(node)) continue;
      const torch::jit::Node* construct = node->inputs().empty() ? nullptr : node->input(0)->node();
      if ((node->kind() == c10::prim::ListUnpack || node->kind() == c10::prim::TupleUnpack) &&
          (construct->kind() == c10::prim::ListConstruct ||
           construct->kind() == c10::prim::TupleConstruct) &&
          construct->inputs().size() == node->outputs().size()) {
        // Only the elements read reach the output.
        for (size_t k = 0; k < node->outputs().size(); ++k) {
          if (live(node->output(k))) live_.insert(construct->input(k));
        }
        continue;
      }
      if ((node->kind() == c10::aten::type_as || node->kind() == c10::aten::to) &&
          node->inputs().size() >= 2 &&
          node->input(1)->type()->kind() == c10::TypeKind::TensorType) {
        // x.to(other), x.type_as(other): other only for its dtype and device.
        live_.insert(node->input(0));
        for (size_t i = 2; i < node->inputs().size(); ++i) live_.insert(node->input(i));
        continue;
      }
      if (node->kind() == c10::prim::If && node->inputs().size() == 1) {
        if (auto cond = at_export(node->input(0))) {
          // Decided at export: the taken branch's outputs are the if's.
          const torch::jit::Block* taken = node->blocks()[*cond ? 0 : 1];
          for (size_t k = 0; k < node->outputs().size(); ++k) {
            if (live(node->output(k))) live_.insert(taken->outputs()[k]);
          }
          visit(taken, /*all_outputs_live=*/false);
          continue;
        }
      }
      for (const auto* in : node->inputs()) live_.insert(in);
      for (const auto* b : node->blocks()) visit(b);
    }
  }

  std::unordered_set<const torch::jit::Value*> live_;
};

std::vector<bool> inputs_read_for_data(const torch::jit::Graph& graph,
                                       const std::vector<c10::IValue>& examples,
                                       const passes::DynamicDims& dynamic) {
  const DataLiveness liveness(graph, examples, dynamic);
  std::vector<bool> out;
  for (const auto* in : graph.inputs()) out.push_back(liveness.live(in));
  return out;
}

// The TorchScript passes, the graph signature and the conversion of a captured graph. With
// `failures`, conversion collects the nodes it cannot convert (and the model is not for use).
ir::Model convert(frontend::CapturedGraph& captured, const ExportConfig& config,
                  const ProgressSink& progress,
                  std::vector<symbolic::ConversionFailure>* failures = nullptr,
                  const PreparedGraphHook* on_prepared = nullptr,
                  std::vector<symbolic::InputReads>* input_reads = nullptr) {
  std::vector<c10::IValue> inputs = captured.example_inputs;
  for (const auto& p : captured.parameters) inputs.emplace_back(p.tensor);
  const passes::DynamicDims dynamic =
      dynamic_input_dims(captured, user_input_names(captured, config), config);
  const size_t graph_inputs = captured.graph->inputs().size();
  // Only drop_unused_inputs reads what the graph reads of its inputs.
  const std::vector<bool> read_for_data =
      input_reads ? inputs_read_for_data(*captured.graph, inputs, dynamic) : std::vector<bool>{};
  progress.report("prepare", 0, 0);
  passes::PrepareGraph(captured.graph, inputs, config, dynamic);
  log_graph_ops("after the TorchScript passes (passes/pipeline.cpp), the converters get",
                *captured.graph);
  if (on_prepared && *on_prepared) (*on_prepared)(*captured.graph, inputs);
  const symbolic::GraphSignature signature = make_signature(captured, config);
  if (input_reads && captured.graph->inputs().size() == graph_inputs) {
    // An input the model reads for its values stays, as a read of itself.
    const size_t user_inputs = graph_inputs - captured.parameters.size();
    for (size_t i = 0; i < user_inputs && i < signature.input_names.size(); ++i) {
      if (read_for_data[i]) {
        input_reads->push_back({{signature.input_names[i]}, {signature.input_names[i]}});
      }
    }
  }
  progress.report("convert", 0, 0);
  return symbolic::convert_graph(
      *captured.graph, signature, config, symbolic::Registry::builtin(), failures,
      [&](int64_t done, int64_t total) { progress.report("convert", done, total); }, input_reads);
}

// The graph inputs drop_unused_inputs keeps although no node reads them any more: those a
// converter read to compute a result that stays computed after optimization. torch.onnx replaces
// a TorchScript node whose outputs its shape inference knows (x.size(0), zeros_like(x) at static
// shapes) by a constant, and drops an input only such nodes read; an input read for a result that
// stays computed (view_as's Shape of `other`, also once the optimizer folds that Shape) stays.
std::unordered_set<std::string> inputs_read_for_computed_results(
    const ir::Graph& graph, const std::vector<symbolic::InputReads>& reads) {
  // The values computed from graph inputs at run time (not from initializers and constants
  // only, as a ConstantOfShape of a folded Shape).
  std::unordered_set<std::string> computed;
  for (const auto& in : graph.inputs) computed.insert(in.name);
  for (const auto& node : graph.nodes) {
    std::unordered_set<std::string> reads(node.inputs.begin(), node.inputs.end());
    for (const auto& attr : node.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_reads(**sub, reads);
      }
    }
    if (std::any_of(reads.begin(), reads.end(),
                    [&](const std::string& v) { return computed.count(v) > 0; })) {
      computed.insert(node.outputs.begin(), node.outputs.end());
    }
  }
  // torch.onnx's shape inference folds no Shape of a 0-d tensor: one a converter read stays.
  std::unordered_set<std::string> kept;
  for (const auto& in : graph.inputs) {
    if (in.type.shape && in.type.shape->empty()) {
      for (const auto& r : reads) {
        if (std::find(r.inputs.begin(), r.inputs.end(), in.name) != r.inputs.end()) {
          kept.insert(in.name);
        }
      }
    }
  }
  for (const auto& r : reads) {
    if (std::any_of(r.outputs.begin(), r.outputs.end(),
                    [&](const std::string& v) { return computed.count(v) > 0; })) {
      kept.insert(r.inputs.begin(), r.inputs.end());
    }
  }
  return kept;
}

// The ONNX stage of a converted model: rewrites, the serialized form, validation.
ExportedModel finish(ir::Model& model, const ExportConfig& config, const ProgressSink& progress,
                     const std::vector<symbolic::InputReads>& input_reads) {
  const bool training = config.training;
  progress.report("optimize", 0, 0);
  optimize_model(model, {config.do_constant_folding, !training});
  // drop_unused_inputs removes the inputs the optimized graph does not read, as torch.onnx does,
  // except those inputs_read_for_computed_results keeps.
  if (config.drop_unused_inputs) {
    if (int dropped = remove_unused_inputs(
            model.graph, inputs_read_for_computed_results(model.graph, input_reads))) {
      log(
          fmt::format("torchonnx: {} graph inputs are read by no node: dropped "
                      "(drop_unused_inputs)",
                      dropped));
    }
  }
  if (int shared = share_duplicate_initializers(model.graph, !training)) {
    log(
        fmt::format("torchonnx: {} initializers hold the same tensor as another (tied weights{}): "
                    "stored once",
                    shared, training ? "" : " or equal values"));
  }
  extract_module_functions(model, config.modules_as_functions, config.module_attributes);
  name_dynamic_dims(model.graph, config.dynamic_axes);
  // Note [Producer]: the model says PyTorch produced it, as torch.onnx's models do
  // (producer_name "pytorch", producer_version libtorch's release without its local suffix, as
  // torch.onnx.producer_version): tools key on it (ONNX Runtime's transformer optimizer,
  // PyTorch's own tests). The metadata entry "exporter" names torchonnx (not the doc_string:
  // torch.onnx's models without verbose have none, and tests check that they are stripped).
  const std::string libtorch = compat::kLibtorchVersion;
  model.producer_name = "pytorch";
  model.producer_version = libtorch.substr(0, libtorch.find('+'));
  ExportedModel exported = to_exported_model(model);
  auto* exporter = exported.proto.add_metadata_props();
  exporter->set_key("exporter");
  exporter->set_value(fmt::format("torchonnx {}", kVersion));
  if (config.target_opset < config.opset) convert_opset_down(exported, config.target_opset);
  if (config.strip_doc_string) strip_doc_strings(exported.proto);
  if (const char* dump = std::getenv("TORCHONNX_DEBUG_DUMP")) {
    // For torchonnx developers: the model as converted, before validation can reject it.
    write_model(exported, dump, config);
    std::cerr << to_pretty_string(exported.proto) << std::flush;
  }
  progress.report("validate", 0, 0);
  validate_model(exported);
  rename_dynamic_outputs(exported.proto, config.dynamic_axes);
  log_model(exported.proto);
  if (config.verbose) std::cerr << to_pretty_string(exported.proto) << std::flush;
  return exported;
}

// Captures `source` inside an export scope, with the modules' training flags set as the options
// ask (TrainingModeGuard) and the options resolved into the configuration (Note [One resolved
// configuration]), and runs `stages` on the captured graph with that configuration. For a module,
// an error of the stages is first checked against a real forward run: type propagation runs the
// ops on shape-only tensors and leaves a node it cannot run untyped, so a forward() that fails on
// the example inputs (mismatched shapes or dtypes) shows up later, as a converter's or the
// checker's complaint, or as an error no pass expected; when the real forward fails, that is the
// error to report (kModelRun, with libtorch's message).
template <class Stages>
auto run_pipeline(const ModuleSource& source, const ExportOptions& options,
                  const ProgressSink& progress, Stages&& stages) {
  const torch::jit::Module& model = *source.module;
  TrainingModeGuard mode(model_modes(model), options.training);
  const ExportConfig config = resolve_config(options, mode.training());
  detail::ExportScope in_export;
  log(fmt::format("torchonnx: exporting TorchScript module {} ({})",
                  model.type()->name() ? model.type()->name()->qualifiedName() : "?",
                  describe_config(config)));
  progress.report("capture", 0, 0);
  frontend::CapturedGraph captured = frontend::capture_module(model, *source.args);
  if (model.type()->name()) captured.module_type = model.type()->name()->qualifiedName();
  log_graph_ops("captured forward() (inlined, module attributes lifted):", *captured.graph);
  check_training_mode(*captured.graph, config);
  try {
    return stages(captured, config);
  } catch (const ExportError& e) {
    if (e.code() != ErrorCode::kConversion && e.code() != ErrorCode::kInvalidOnnx) throw;
    frontend::throw_if_forward_fails(model, *source.args, e.what());
    throw;
  } catch (const std::exception& e) {
    frontend::throw_if_forward_fails(model, *source.args, e.what());
    throw;
  }
}

template <class Stages>
auto run_pipeline(const TraceSource& source, const ExportOptions& options,
                  const ProgressSink& progress, Stages&& stages) {
  TrainingModeGuard mode(source.modes ? *source.modes : ModelModes{}, options.training);
  const ExportConfig config = resolve_config(options, mode.training());
  detail::ExportScope in_export;
  log(fmt::format("torchonnx: tracing a function with {} parameters ({})",
                  source.parameters->size(), describe_config(config)));
  progress.report("capture", 0, 0);
  frontend::CapturedGraph captured =
      frontend::capture_trace(*source.fn, *source.args, *source.parameters);
  log_graph_ops("traced:", *captured.graph);
  check_training_mode(*captured.graph, config);
  return stages(captured, config);
}

// The whole pipeline from a captured graph to the model, not yet written.
auto all_stages(const ProgressSink& progress, const PreparedGraphHook* on_prepared = nullptr) {
  return [&progress, on_prepared](frontend::CapturedGraph& captured, const ExportConfig& config) {
    std::vector<symbolic::InputReads> input_reads;
    ir::Model model = convert(captured, config, progress, nullptr, on_prepared,
                              config.drop_unused_inputs ? &input_reads : nullptr);
    model.module_type = captured.module_type;
    return finish(model, config, progress, input_reads);
  };
}

// The whole pipeline, and the model written to `path`.
auto to_file(const std::string& path, const ProgressSink& progress) {
  return [&path, &progress](frontend::CapturedGraph& captured, const ExportConfig& config) {
    ExportedModel exported = all_stages(progress)(captured, config);
    write_model(exported, path, config, progress);
  };
}

}  // namespace

ExportedModel export_model(const ModuleSource& source, const ExportOptions& options,
                           const ProgressSink& progress) {
  return run_pipeline(source, options, progress, all_stages(progress));
}

ExportedModel export_model(const TraceSource& source, const ExportOptions& options,
                           const ProgressSink& progress) {
  return run_pipeline(source, options, progress, all_stages(progress));
}

ExportedModel export_model(const ModuleSource& source, const ExportOptions& options,
                           const PreparedGraphHook& on_prepared) {
  const ProgressSink progress;
  return run_pipeline(source, options, progress, all_stages(progress, &on_prepared));
}

void export_to_file(const ModuleSource& source, const std::string& path,
                    const ExportOptions& options) {
  check_output_path(path);
  const ProgressSink progress{&options.progress};
  run_pipeline(source, options, progress, to_file(path, progress));
}

void export_to_file(const TraceSource& source, const std::string& path,
                    const ExportOptions& options) {
  check_output_path(path);
  const ProgressSink progress{&options.progress};
  run_pipeline(source, options, progress, to_file(path, progress));
}

std::vector<UnconvertibleOp> unconvertible_ops(const ModuleSource& source,
                                               const ExportOptions& options) {
  const ProgressSink progress;
  return run_pipeline(source, options, progress,
                      [&](frontend::CapturedGraph& captured, const ExportConfig& config) {
                        std::vector<symbolic::ConversionFailure> failures;
                        convert(captured, config, progress, &failures);
                        std::map<std::string, UnconvertibleOp> by_kind;
                        for (const auto& f : failures) {
                          auto& op = by_kind[f.kind];
                          op.name = f.kind;
                          ++op.count;
                          if (!f.location.empty()) op.locations.push_back(f.location);
                          if (!f.message.empty() && std::find(op.errors.begin(), op.errors.end(),
                                                              f.message) == op.errors.end()) {
                            op.errors.push_back(f.message);
                          }
                        }
                        std::vector<UnconvertibleOp> out;
                        for (auto& [kind, op] : by_kind) out.push_back(std::move(op));
                        return out;
                      });
}

}  // namespace torchonnx::pipeline
