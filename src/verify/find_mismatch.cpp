// find_mismatch (Note [Taps on intermediate values] in find_mismatch.h).
#include "verify/find_mismatch.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common/jit_util.h"
#include "export/pipeline.h"
#include "frontend/reference_guard.h"
#include "symbolic/context.h"
#include "symbolic/custom_symbolic.h"
#include "symbolic/registry.h"
#include "verify/compare.h"
#include "verify/ort_session.h"

namespace torchonnx::verification {

std::vector<at::Tensor> flatten_args(const std::vector<c10::IValue>& args) {
  std::vector<at::Tensor> out;
  for (const auto& v : args) {
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) out.push_back(t);
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) {
        out.push_back(e.isTensor() ? e.toTensor() : at::scalar_to_tensor(e.toScalar()));
      }
    } else if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isScalar()) {
      out.push_back(at::scalar_to_tensor(v.toScalar()));
    }
  }
  return out;
}

namespace {

// A node of the converters' graph and the graph outputs its tensors were given.
struct TappedNode {
  std::string kind, location, converter;
  std::vector<size_t> outputs;        // graph output positions
  std::vector<std::string> names;     // their TorchScript names
  std::unordered_set<size_t> values;  // the unique() ids of all its outputs
};

// Ops whose values are not reproducible: uninitialized memory, random numbers. Not compared.
bool nondeterministic(const torch::jit::Node* node) {
  static const std::unordered_set<std::string> kinds = {"aten::empty",
                                                        "aten::empty_like",
                                                        "aten::new_empty",
                                                        "aten::empty_strided",
                                                        "aten::rand",
                                                        "aten::rand_like",
                                                        "aten::randn",
                                                        "aten::randn_like",
                                                        "aten::randint",
                                                        "aten::randint_like",
                                                        "aten::randperm",
                                                        "aten::bernoulli",
                                                        "aten::normal",
                                                        "aten::uniform",
                                                        "aten::multinomial",
                                                        "aten::dropout",
                                                        "aten::feature_dropout",
                                                        "aten::alpha_dropout",
                                                        "aten::native_dropout",
                                                        "aten::rrelu",
                                                        "aten::rrelu_with_noise"};
  return kinds.count(node->kind().toQualString()) > 0;
}

// Whether the exporter knows `v`'s dtype and rank: only such values can be graph outputs.
bool tappable(const torch::jit::Value* v) {
  auto t = v->type()->cast<c10::TensorType>();
  return t && t->scalarType() && t->dim();
}

// The converter that serves `node` at `opset`: a custom symbolic, or the built-in one, with the
// opset range of its registration.
std::string describe_converter(const torch::jit::Node* node, int opset) {
  const std::string kind = node->kind().toQualString();
  const std::string overload = symbolic::overload_name(node);
  std::vector<std::string> keys;
  if (!overload.empty()) keys.push_back(kind + "." + overload);
  keys.push_back(kind);
  if (!kind.empty() && kind.back() == '_') keys.push_back(kind.substr(0, kind.size() - 1));
  auto range_of = [&](const symbolic::Registry& registry) -> std::optional<symbolic::OpsetRange> {
    for (const auto& key : keys) {
      auto it = registry.entries().find(key);
      if (it == registry.entries().end()) continue;
      for (const auto& r : it->second) {
        if (r.range.contains(opset)) return r.range;
      }
    }
    return std::nullopt;
  };
  if (auto r = range_of(*symbolic::custom_symbolics())) {
    return fmt::format("custom symbolic, registered from opset {}", r->since);
  }
  if (auto r = range_of(symbolic::Registry::builtin())) {
    return r->until >= kMaxOpset
               ? fmt::format("built-in converter, opset {}+", r->since)
               : fmt::format("built-in converter, opsets {}-{}", r->since, r->until);
  }
  return "no converter: an export-type fallback";
}

// The ONNX ops that compute `name` from values that are no other tap (graph inputs,
// initializers, the tapped values the node read), in graph order.
std::vector<std::string> onnx_ops_of(const onnx::GraphProto& graph, const std::string& name,
                                     const std::unordered_set<std::string>& stops) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& out : graph.node(i).output()) producer[out] = i;
  }
  std::vector<int> found;
  std::unordered_set<int> seen;
  std::vector<std::string> todo{name};
  while (!todo.empty() && found.size() < 64) {
    const std::string v = todo.back();
    todo.pop_back();
    auto it = producer.find(v);
    if (it == producer.end() || !seen.insert(it->second).second) continue;
    found.push_back(it->second);
    for (const auto& in : graph.node(it->second).input()) {
      if (!in.empty() && !stops.count(in)) todo.push_back(in);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> ops;
  for (int i : found) {
    const auto& node = graph.node(i);
    if (node.op_type() == "Constant") continue;
    ops.push_back(node.domain().empty() ? node.op_type() : node.domain() + "::" + node.op_type());
  }
  return ops;
}

// aten::view(x, sizes) as aten::reshape in the copy libtorch runs: the passes drop a
// `.contiguous()` that ONNX has no use for, and view refuses a non-contiguous input that reshape
// copies. Same values wherever view runs.
void view_as_reshape(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* node = *it++;
    for (torch::jit::Block* sub : node->blocks()) view_as_reshape(sub);
    if (node->kind() == c10::aten::view && node->inputs().size() == 2 &&
        node->input(1)->type()->cast<c10::ListType>()) {
      node->replaceWithNewSymbol(c10::aten::reshape);
      node->destroy();
    }
  }
}

// The message of a TorchScript interpreter error: its last line ("RuntimeError: ..."), after the
// traceback.
std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

std::optional<Mismatch> find_mismatch(const torch::jit::Module& model,
                                      const std::vector<c10::IValue>& args,
                                      const ExportOptions& options, const VerifyOptions& verify,
                                      std::string& note) {
  std::vector<TappedNode> taps;
  std::vector<c10::IValue> reference;
  std::vector<size_t> output_ids;  // the unique() id of each graph output's value
  std::string run_error;
  auto tap = [&](torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs) {
    for (torch::jit::Node* node : graph.block()->nodes()) {
      if (node->kind() == c10::prim::Constant) continue;
      if (nondeterministic(node)) continue;
      TappedNode t{node->kind().toQualString(),
                   source_location(node),
                   describe_converter(node, options.opset_version),
                   {},
                   {},
                   {}};
      for (torch::jit::Value* v : node->outputs()) {
        t.values.insert(v->unique());
        if (!tappable(v)) continue;
        t.outputs.push_back(graph.outputs().size());
        t.names.push_back("%" + v->debugName());
        graph.registerOutput(v);
      }
      if (!t.outputs.empty()) taps.push_back(std::move(t));
    }
    for (const torch::jit::Value* v : graph.outputs()) output_ids.push_back(v->unique());
    // libtorch's value of every output, from the same graph (Note [Forward runs interpreted] in
    // frontend/run_forward.cpp: the interpreter, not a graph executor).
    try {
      c10::InferenceMode guard;
      frontend::ReferenceKernelsGuard reference_kernels;  // Note [References without oneDNN]
      auto copy = graph.copy();
      view_as_reshape(copy->block());
      torch::jit::Code code(copy, "verify");
      torch::jit::InterpreterState state(code);
      torch::jit::Stack stack;
      for (const auto& in : inputs) {
        stack.push_back(in.isTensor() ? c10::IValue(in.toTensor().clone()) : in);
      }
      state.run(stack);
      reference = std::move(stack);
    } catch (const std::exception& e) {
      run_error = e.what();
    }
  };
  ExportedModel exported;
  try {
    exported = pipeline::export_model(pipeline::ModuleSource{&model, &args}, options, tap);
  } catch (const ExportError& e) {
    note =
        fmt::format("the export with every intermediate value as an output failed: {}", e.what());
    return std::nullopt;
  }
  if (!run_error.empty()) {
    note = fmt::format("libtorch could not run the converters' graph: {}", last_line(run_error));
    return std::nullopt;
  }
  const onnx::GraphProto graph = exported.proto.graph();
  std::unordered_set<std::string> sources;  // graph inputs and initializers
  for (const auto& in : graph.input()) sources.insert(in.name());
  for (const auto& init : graph.initializer()) sources.insert(init.name());
  const OrtModel ort = OrtModel::from_bytes(model_to_bytes(exported));
  const std::vector<at::Tensor> actual = ort.run(flatten_args(args));
  if (actual.size() != reference.size()) {
    note = fmt::format("the ONNX model returned {} values and libtorch {}: cannot pair them",
                       actual.size(), reference.size());
    return std::nullopt;
  }
  int64_t compared = 0;
  for (const auto& t : taps) {
    ++compared;
    for (size_t j = 0; j < t.outputs.size(); ++j) {
      const size_t k = t.outputs[j];
      if (!reference[k].isTensor()) continue;
      const OutputCheck c = compare(t.names[j], actual[k], reference[k].toTensor(), verify);
      if (c.pass) continue;
      Mismatch m;
      m.kind = t.kind;
      m.location = t.location;
      m.converter = t.converter;
      // The walk back stops at the graph inputs and at the outputs holding other nodes' values.
      std::unordered_set<std::string> stops = sources;
      for (int p = 0; p < graph.output_size(); ++p) {
        if (!t.values.count(output_ids.at(p))) stops.insert(graph.output(p).name());
      }
      m.onnx_ops = onnx_ops_of(graph, graph.output(static_cast<int>(k)).name(), stops);
      m.opset = options.opset_version;
      m.value = t.names[j];
      m.max_abs_error = c.max_abs_error;
      m.detail = c.note;
      m.nodes_compared = compared;
      return m;
    }
  }
  note = fmt::format(
      "all {} nodes' tensors match libtorch's on these inputs (the difference comes from values "
      "that are no tensors, or shows only on other inputs)",
      compared);
  return std::nullopt;
}

}  // namespace torchonnx::verification
