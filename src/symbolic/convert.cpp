#include "symbolic/convert.h"

#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "onnx/dead_code.h"
#include "onnx/dtype.h"
#include "onnx/optimize.h"
#include "symbolic/context.h"
#include "symbolic/dispatch.h"
#include "symbolic/functions.h"
#include "symbolic/ops/quantized.h"
#include "symbolic/ops/spectral.h"
#include "symbolic/registry.h"
#include "torchonnx/errors.h"

namespace torchonnx::symbolic {

using torch::jit::Node;

namespace {

// Converts the nodes of `block` into g's current graph. With `failures` (collect-errors mode),
// nodes that cannot be converted are recorded and their outputs bound to placeholders.
// The graph inputs the nodes from `first` on read (in their subgraphs too).
std::vector<std::string> inputs_read(const ir::Graph& graph, size_t first) {
  std::unordered_set<std::string> reads;
  for (size_t i = first; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    reads.insert(node.inputs.begin(), node.inputs.end());
    for (const auto& attr : node.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_reads(**sub, reads);
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& in : graph.inputs) {
    if (reads.count(in.name)) out.push_back(in.name);
  }
  return out;
}

// Note [Converter output types]: the ONNX value a converter binds to a tensor output of its
// TorchScript node has that output's type, which type propagation (passes/propagate_types.cpp)
// computed: dtype, and sizes where they do not vary (a dynamic axis, a data-dependent size is -1).
// The converters record it in ir::Graph::value_types. Recorded for the main graph, not for the
// outputs of Loop and If (whose carried values may change shape between iterations) nor inside
// their bodies, nor for quantized or complex values (their ONNX values are of another type).
// When conversion ends, type_values (onnx/optimize.h) types the other values converters made
// (inside their lowerings, in bodies) by the shape rules of onnx/infer_shapes.cpp, in node order,
// into ir::Graph::rule_types. The optimizer's sweep reads both: it runs the rules again only on a
// node it rewrote or one that reads a value it changed (folded into a constant, retyped, read
// instead of another), so that what it knows from its own rewrites (shapes computed from folded
// constants) reaches the nodes after them; the others keep the types of conversion, which the
// rules would give them again.
void record_output_types(GraphContext& g, const Node* node, const Values& results) {
  if (!node->blocks().empty()) return;
  const auto outs = node->outputs();
  for (size_t k = 0; k < outs.size() && k < results.size(); ++k) {
    const torch::jit::Value* out = outs[k];
    if (out->type()->kind() != c10::TypeKind::TensorType || g.is_quantized(out) ||
        g.is_sequence(out) || g.is_optional(out) || results[k].empty()) {
      continue;
    }
    ir::TypeInfo type = value_type(out);
    if (type.dtype == at::ScalarType::Undefined || at::isComplexType(type.dtype) || !type.shape) {
      continue;
    }
    g.graph().value_types.emplace(results[k], std::move(type));
  }
}

// `main`: the nodes of the main graph (not of a Loop or If body).
void convert_nodes(GraphContext& g, const torch::jit::Block* block, const Registry& registry,
                   OperatorExportType mode, std::vector<ConversionFailure>* failures,
                   const std::function<void(int64_t, int64_t)>& on_progress = {},
                   std::vector<InputReads>* input_reads = nullptr, bool main = false) {
  int64_t total = 0, done = 0;
  if (on_progress) {
    for (auto it = block->nodes().begin(); it != block->nodes().end(); ++it) ++total;
  }
  for (const Node* node : block->nodes()) {
    if (on_progress && ++done % 256 == 0) on_progress(done, total);
    // Scalar, list and None constants are made by their consumers, in the type each needs (so
    // `x + 2` adds a float 2 to a float x); tensor constants are converted once and shared. RAW
    // keeps every constant as a prim::Constant node.
    if (node->kind() == c10::prim::Constant && !node->output()->type()->cast<c10::TensorType>() &&
        mode != OperatorExportType::kRaw) {
      continue;
    }
    g.set_current_node(node);
    Converter fn = resolve_converter(node, g.opset(), registry, mode);
    // A node reading a complex value takes its complex form (Note [Complex values],
    // ops/spectral.h).
    if (mode != OperatorExportType::kRaw) fn = ops::complex_form(node, std::move(fn));
    Args args(g, node);
    const size_t first_new = g.graph().nodes.size();
    Values results;
    // A float op on a quantized tensor runs on its dequantized form (ops/quantized.h).
    const bool dequantized =
        fn && mode != OperatorExportType::kRaw && ops::reads_quantized(g, node);
    auto run = [&] { return dequantized ? ops::convert_dequantized(g, node, fn) : fn(g, args); };
    std::string message;
    std::exception_ptr error;
    bool dropped = false;
    try {
      if (fn) results = run();
    } catch (const ExportError& e) {
      message = e.what();
      error = std::current_exception();
    } catch (const std::exception&) {
      // After a node failed, later converters may trip over its placeholders: only the failures
      // of convert_graph's contract are reported.
      if (failures->empty()) throw;
      dropped = true;
    }
    if (!fn || error || dropped) {
      if (!dropped) {
        failures->push_back({node->kind().toQualString(), source_location(node), message, error});
      }
      for (const auto* out : node->outputs()) g.bind(out, {g.fresh_name("unconvertible")});
      continue;
    }
    tag_module_scope(g.graph(), first_new, node);  // for export_modules_as_functions
    g.set_current_node(node);
    ops::mark_quantized_outputs(g, node);
    const auto outs = node->outputs();
    if (outs.size() == 1 && results.size() != 1 &&
        (outs[0]->type()->kind() == c10::TypeKind::ListType ||
         outs[0]->type()->kind() == c10::TypeKind::TupleType)) {
      // A list or a tuple (a torch.autograd.Function's outputs): one ONNX value per element.
      g.bind(outs[0], std::move(results));
      continue;
    }
    if (results.size() != outs.size()) {
      g.fail(fmt::format("its converter produced {} values for {} outputs (torchonnx bug)",
                         results.size(), outs.size()));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      // A converter binds the list outputs it makes as sequences, and the optionals it makes
      // (control.cpp), itself.
      if (!g.is_sequence(outs[k]) && !g.is_optional(outs[k])) g.bind(outs[k], {results[k]});
    }
    if (main) record_output_types(g, node, results);
    if (input_reads) {
      if (auto read = inputs_read(g.graph(), first_new); !read.empty()) {
        InputReads r{std::move(read), {}};
        for (const auto* out : outs) {
          if (const Values* bound = g.lookup(out)) {
            r.outputs.insert(r.outputs.end(), bound->begin(), bound->end());
          }
        }
        input_reads->push_back(std::move(r));
      }
    }
  }
  g.set_current_node(nullptr);
  if (on_progress) on_progress(total, total);
}

// Renames ONNX values throughout the graph (node inputs and outputs).
// Renames values in `graph` and in its subgraphs, whose nodes may read an outer value by name
// (a loop body reading a branch's result that is also a graph output).
void rename_values(ir::Graph& graph, const std::unordered_map<std::string, std::string>& renames) {
  if (renames.empty()) return;
  for (auto& node : graph.nodes) {
    for (auto& in : node.inputs) {
      if (auto it = renames.find(in); it != renames.end()) in = it->second;
    }
    for (auto& out : node.outputs) {
      if (auto it = renames.find(out); it != renames.end()) out = it->second;
    }
    for (auto& attr : node.attributes) {
      if (auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        rename_values(**sub, renames);
      }
    }
  }
}

// The error of an export whose conversion recorded `found` (convert_graph): every op without a
// converter at once, else the first converter's ExportError.
[[noreturn]] void throw_conversion_failures(const std::vector<ConversionFailure>& found, int opset,
                                            const Registry& registry) {
  struct Missing {
    size_t nodes = 0;
    std::vector<std::string> locations;
  };
  std::map<std::string, Missing> missing;
  for (const auto& f : found) {
    if (f.error) continue;
    Missing& m = missing[f.kind];
    ++m.nodes;
    if (!f.location.empty()) m.locations.push_back(f.location);
  }
  if (missing.empty()) std::rethrow_exception(found.front().error);
  std::string list;
  for (const auto& [kind, m] : missing) {
    const std::optional<int> lowest = registry.lowest_opset(kind);
    list += fmt::format("\n  {} ({} node{}){}{}{}", kind, m.nodes, m.nodes == 1 ? "" : "s",
                        m.locations.empty() ? "" : " at ", fmt::join(m.locations, ", "),
                        lowest && *lowest > opset ? fmt::format(" (from opset {})", *lowest) : "");
  }
  throw ExportError(
      ErrorCode::kUnsupportedOp,
      fmt::format("{} operator{} cannot be exported to ONNX opset {}:{}\nRemedy: try another "
                  "--opset, rewrite the model with supported ops, or register a custom "
                  "symbolic for them.",
                  missing.size(), missing.size() == 1 ? "" : "s", opset, list));
}

}  // namespace

ir::Model convert_graph(const torch::jit::Graph& graph, const GraphSignature& signature,
                        const ExportConfig& config, const Registry& registry,
                        std::vector<ConversionFailure>* failures,
                        const std::function<void(int64_t, int64_t)>& on_progress,
                        std::vector<InputReads>* input_reads) {
  const OperatorExportType mode = config.export_type;

  ir::Model model;
  model.opset = config.opset;
  ir::Graph& out = model.graph;
  GraphContext g(out, config.opset, &config, &signature);

  const auto inputs = graph.inputs();
  const size_t num_user = inputs.size() - signature.parameters.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = signature.input_names.at(i);
    g.bind(inputs[i], {name});
    if (i < num_user) {
      // Note [Quantized graph inputs and outputs] (ops/quantized.cpp)
      if (ops::is_quantized_tensor(inputs[i])) {
        ops::add_quantized_input(g, inputs[i], name);
      } else if (at::isComplexType(value_type(inputs[i]).dtype)) {
        // ONNX Runtime runs no complex tensors; torch.onnx refuses them too ("ScalarType
        // ComplexFloat is an unexpected tensor scalar type").
        throw ExportError(
            ErrorCode::kInvalidArgument,
            fmt::format("graph input '{}' is a {} tensor: ONNX Runtime has no complex tensors. "
                        "Remedy: pass torch.view_as_real({}) (a [..., 2] float tensor) and call "
                        "torch.view_as_complex on it inside the model",
                        name, c10::toString(value_type(inputs[i]).dtype), name));
      } else {
        out.inputs.push_back({name, value_type(inputs[i])});
      }
      continue;
    }
    if (!inputs[i]->hasUses()) continue;
    const at::Tensor& tensor = signature.parameters[i - num_user].tensor;
    ir::TypeInfo type{tensor.scalar_type(), tensor.sizes().vec()};
    if (config.export_params) {
      out.initializers.push_back({name, tensor});
      if (config.keep_initializers_as_inputs) out.inputs.push_back({name, type});
    } else {
      out.inputs.push_back({name, type});
    }
  }

  std::vector<ConversionFailure> found;
  std::vector<ConversionFailure>* sink = failures != nullptr ? failures : &found;
  g.set_block_converter([&registry, mode, sink](GraphContext& ctx, const torch::jit::Block* block) {
    convert_nodes(ctx, block, registry, mode, sink);
  });
  convert_nodes(g, graph.block(), registry, mode, sink, on_progress, input_reads, /*main=*/true);
  if (failures != nullptr) return model;  // collect-errors mode: the nodes were what counted
  if (!found.empty()) throw_conversion_failures(found, config.opset, registry);

  // Outputs: rename the producing value to the requested name; Identity where a value is an input,
  // an initializer or already used as another output.
  std::unordered_map<std::string, std::string> renames;
  std::unordered_set<std::string> taken;
  std::unordered_set<std::string> graph_inputs;
  for (const auto& in : out.inputs) graph_inputs.insert(in.name);
  for (const auto& init : out.initializers) graph_inputs.insert(init.name);
  const auto outputs = graph.outputs();
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string& name = signature.output_names.at(k);
    Value v;
    ir::TypeInfo out_type = value_type(outputs[k]);
    if (const Values* bound = g.lookup(outputs[k])) {
      const auto list = outputs[k]->type()->cast<c10::ListType>();
      const bool scalar_list =
          list && !is_tensor_list(outputs[k]) && out_type.dtype != at::ScalarType::Undefined;
      if (scalar_list && bound->size() == 1 && !g.is_sequence(outputs[k]) && g.opset() >= 11) {
        // A list of ints, floats or bools computed at run time (one 1-D tensor here; a list built
        // by ListConstruct was flattened to its elements, passes/flatten_outputs.cpp) is returned
        // as a sequence of 0-d tensors, one per element, as torch.onnx returns it and as
        // libtorch's returned list flattens.
        v = g.op("SplitToSequence", {g.cast(bound->front(), out_type.dtype)},
                 {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}});
        out_type = ir::TypeInfo(out_type.dtype, std::vector<int64_t>{}, /*sequence=*/true);
      } else if (is_tensor_list(outputs[k]) && !g.is_sequence(outputs[k])) {
        // A List[Tensor] of a length known at export is returned as an ONNX sequence, as
        // torch.onnx returns a scripted model's list (a traced model's lists are flattened
        // before, passes/flatten_outputs.cpp).
        if (g.opset() < 11) {
          throw ExportError(ErrorCode::kConversion,
                            fmt::format("output {} is a list of {} tensors, which ONNX returns "
                                        "as a sequence, new in opset 11. Remedy: export with "
                                        "opset_version >= 11, or return a tuple of tensors",
                                        k, bound->size()));
        }
        if (bound->empty()) {
          at::ScalarType dtype = value_type(outputs[k]).dtype;
          if (dtype == at::ScalarType::Undefined) dtype = at::kFloat;
          v = g.op("SequenceEmpty", {}, {{"dtype", static_cast<int64_t>(to_onnx_dtype(dtype))}});
        } else {
          v = g.op("SequenceConstruct", *bound);
        }
      } else if (bound->size() != 1) {
        throw ExportError(ErrorCode::kConversion,
                          fmt::format("output {} is {} values; return a tensor, a tuple of "
                                      "tensors or a list of tensors",
                                      k, bound->size()));
      } else {
        v = bound->front();
      }
    } else {
      // A constant output: a tensor, or an int/float/bool as a 0-d Long/Double/Bool tensor.
      auto c = torch::jit::toIValue(outputs[k]);
      if (c && c->isNone() && g.opset() >= 15) {
        // A scripted model's None output (kept by FlattenOutputs from opset 15): an empty
        // optional of a float tensor, as torch.onnx writes it.
        ir::TypeInfo type(at::kFloat);
        type.optional = true;
        const Value none = g.op("Optional", {}, {{"type", ir::TypeInfo(at::kFloat)}});
        renames[none] = name;
        taken.insert(none);
        out.outputs.push_back({name, type});
        continue;
      }
      if (c && (c->isIntList() || c->isDoubleList() || c->isBoolList())) {
        // A list of numbers known at export (the sizes of a static shape): as a computed one
        // above, a sequence of 0-d tensors from opset 11 (an empty one: SequenceEmpty), one 1-D
        // tensor below.
        const at::ScalarType dtype = out_type.dtype;
        std::vector<at::Tensor> items;
        for (const auto& e : c->toListRef()) {
          items.push_back(at::scalar_to_tensor(e.toScalar()).to(dtype));
        }
        if (g.opset() < 11) {
          v = g.constant(items.empty() ? at::empty({0}, at::TensorOptions().dtype(dtype))
                                       : at::stack(items));
        } else {
          Values elements;
          for (const auto& t : items) elements.push_back(g.constant(t));
          v = elements.empty() ? g.op("SequenceEmpty", {},
                                      {{"dtype", static_cast<int64_t>(to_onnx_dtype(dtype))}})
                               : g.op("SequenceConstruct", elements);
          out_type = ir::TypeInfo(dtype, std::vector<int64_t>{}, /*sequence=*/true);
        }
      } else if (!c || !(c->isTensor() || c->isInt() || c->isDouble() || c->isBool())) {
        throw ExportError(ErrorCode::kConversion,
                          fmt::format("output {} is a constant of type {}, which ONNX cannot "
                                      "return; return tensors or numbers",
                                      k, outputs[k]->type()->annotation_str()));
      } else {
        v = g.constant(c->isTensor() ? c->toTensor() : at::scalar_to_tensor(c->toScalar()));
      }
    }
    // A quantized output is three: its values, scale and zero point (Note [Quantized graph inputs
    // and outputs] in ops/quantized.cpp).
    std::vector<ir::ValueInfo> values{{v, out_type}};
    if (g.is_quantized(outputs[k])) values = ops::quantized_output(g, outputs[k], v);
    for (size_t j = 0; j < values.size(); ++j) {
      const std::string out_name = j == 0 ? name : name + (j == 1 ? "_scale" : "_zero_point");
      v = values[j].name;
      if (graph_inputs.count(v) || taken.count(v) || renames.count(v)) {
        g.graph().nodes.push_back(
            {"Identity", "", g.fresh_name("Identity"), {v}, {out_name}, {}, "", {}, {}});
      } else {
        renames[v] = out_name;
      }
      taken.insert(v);
      out.outputs.push_back({out_name, values[j].type});
    }
  }
  rename_values(out, renames);
  if (input_reads) {
    for (auto& r : *input_reads) {
      for (auto& name : r.outputs) {
        if (auto it = renames.find(name); it != renames.end()) name = it->second;
      }
    }
  }
  remove_dead_nodes(out);
  type_values(out, model.opset);
  add_domain_opsets(model,
                    config.custom_opsets);  // custom domains, ATen, RAW/fallthrough namespaces
  return model;
}

}  // namespace torchonnx::symbolic
