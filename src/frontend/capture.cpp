#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "common/compat.h"
#include "common/jit_util.h"
#include "frontend/archive_check.h"
#include "frontend/frontend.h"
#include "frontend/mapped_load.h"
#include "passes/passes.h"
#include "torchonnx/errors.h"
#include "torchonnx/logging.h"

// libtorch 1.13 declares this constructor in torch/csrc/jit/ir/scope.h but does not export it from
// libtorch_cpu.so (no TORCH_API); the linear-time inliner below needs it to give inlined nodes the
// call stacks torch::jit::Inline gives them. Defined as libtorch defines it.
torch::jit::ModuleInstanceInfo::ModuleInstanceInfo(c10::ClassTypePtr module_type,
                                                   std::string instance_name)
    : module_type_(std::move(module_type)), instance_name_(std::move(instance_name)) {}

namespace torchonnx {

namespace {

// "ns::name" of libtorch's "Unknown builtin op: ns::name." message, or "".
std::string unknown_builtin_op(const std::string& message) {
  const std::string marker = "Unknown builtin op: ";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  size_t end = start;
  while (end < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_' ||
          message[end] == ':' || message[end] == '.')) {
    ++end;
  }
  std::string op = message.substr(start, end - start);
  while (!op.empty() && op.back() == '.') op.pop_back();
  return op;
}

// Whether `op` ("ns::name") is in a namespace of PyTorch's own operators.
bool is_pytorch_namespace(const std::string& op) {
  for (const char* ns : {"aten::", "prim::", "quantized::", "_quantized::"}) {
    if (op.rfind(ns, 0) == 0) return true;
  }
  return false;
}

// torch::jit::load's exceptions as ExportError(kModelLoad) naming `what` (the file) and a remedy.
template <typename Load>
torch::jit::Module load_translating_errors(const std::string& what, Load&& load) {
  try {
    return load();
  } catch (const std::exception& e) {
    std::string message = e.what();
    // The first line that says something (messages about unknown ops start with a newline).
    const size_t start = std::min(message.find_first_not_of("\n "), message.size());
    std::string first_line = message.substr(start, message.find('\n', start) - start);
    // An operator of PyTorch's own namespaces that this libtorch lacks: the file was written by
    // a newer PyTorch (aten::scaled_dot_product_attention, aten::rms_norm on libtorch 1.13).
    const std::string unknown_op = unknown_builtin_op(message);
    if (!unknown_op.empty() && is_pytorch_namespace(unknown_op)) {
      throw ExportError(
          ErrorCode::kModelLoad,
          fmt::format("cannot load {} as TorchScript: it calls {}, which libtorch {} (the "
                      "libtorch this torchonnx is built against) does not have: the file was "
                      "written by a newer PyTorch.\nRemedy: {}.",
                      what, unknown_op, compat::kLibtorchVersion, compat::kNewerLibtorchRemedy));
    }
    if (message.find("maximum supported version for reading") != std::string::npos) {
      throw ExportError(
          ErrorCode::kModelLoad,
          fmt::format("cannot load {} as TorchScript: {}\nIts file format is newer than libtorch "
                      "{} (this torchonnx's) reads. Remedy: {}.",
                      what, first_line, compat::kLibtorchVersion, compat::kNewerLibtorchRemedy));
    }
    std::string remedy =
        !unknown_op.empty() || message.find("Unknown type name") != std::string::npos
            ? "It uses a custom op or class that is not registered in this process: load the "
              "library that defines it first (CLI: --load-library FILE.so)."
            : "Save it with torch.jit.save() (of a traced or scripted module) and check the file "
              "is complete.";
    throw ExportError(ErrorCode::kModelLoad, fmt::format("cannot load {} as TorchScript: {}\n{}",
                                                         what, first_line, remedy));
  }
}

}  // namespace

torch::jit::Module load_model(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ExportError(ErrorCode::kModelLoad,
                      "model file '" + path +
                          "' does not exist or is not a regular file. Remedy: check the path.");
  }
  if (std::filesystem::file_size(path, ec) == 0) {
    throw ExportError(
        ErrorCode::kModelLoad,
        "model file '" + path + "' is empty. Remedy: save the model again with torch.jit.save().");
  }
  const std::string what = "'" + path + "'";
  frontend::ArchiveLayout layout;
  frontend::check_archive_file(path, what, &layout);  // what libtorch 1.13's unpickler misses
  return load_translating_errors(what, [&] {
    // Note [Zero-copy weights]: storages in a mapping of the file, when the archive allows.
    if (std::getenv("TORCHONNX_NO_MMAP") == nullptr) {
      if (auto module = frontend::load_mapped(path, layout)) return *module;
    }
    return torch::jit::load(path);
  });
}

namespace frontend {

torch::jit::Module load_model_from_bytes(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) {
    throw ExportError(ErrorCode::kModelLoad, "model '" + name + "' is empty");
  }
  const std::string what = "'" + name + "'";
  check_archive_bytes(bytes, what);  // what libtorch 1.13's unpickler does not check
  return load_translating_errors(what, [&] {
    std::istringstream in(bytes);
    return torch::jit::load(in);
  });
}

}  // namespace frontend

namespace frontend {

namespace {

void check_arguments(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  const auto& params = schema.arguments();  // params[0] is self
  size_t required = 0;
  for (size_t i = 1; i < params.size(); ++i) {
    if (!params[i].default_value()) required = i;
  }
  const size_t max = params.size() - 1;
  if (args.size() < required || args.size() > max) {
    std::vector<std::string> sig;
    for (size_t i = 1; i < params.size(); ++i) {
      sig.push_back(params[i].name() + ": " + params[i].type()->annotation_str());
    }
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("forward({}) takes {}{} argument{} but {} example input{} "
                    "{} given. Remedy: pass one example input per argument, in order.",
                    fmt::join(sig, ", "), required == max ? "" : "at least ", required,
                    required == 1 ? "" : "s", args.size(), args.size() == 1 ? "" : "s",
                    args.size() == 1 ? "was" : "were"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& expected = params[i + 1].type();
    auto actual = c10::unshapedType(args[i].type());
    // A 0-d tensor stands for an int/float/bool argument (test-data files hold only tensors).
    bool scalar_ok = args[i].isTensor() && args[i].toTensor().dim() == 0 &&
                     (expected->kind() == c10::TypeKind::IntType ||
                      expected->kind() == c10::TypeKind::FloatType ||
                      expected->kind() == c10::TypeKind::BoolType);
    if (!scalar_ok && !actual->isSubtypeOf(*expected)) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("example input {} is a {} but forward()'s argument '{}' is a "
                                    "{}. Remedy: pass a value of that type.",
                                    i, actual->annotation_str(), params[i + 1].name(),
                                    expected->annotation_str()));
    }
  }
}

// Converts 0-d tensors given for scalar arguments into the scalars forward() takes.
std::vector<c10::IValue> coerce_arguments(const c10::FunctionSchema& schema,
                                          const std::vector<c10::IValue>& args) {
  std::vector<c10::IValue> out = args;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto kind = schema.arguments()[i + 1].type()->kind();
    if (!out[i].isTensor()) continue;
    const at::Tensor& t = out[i].toTensor();
    if (kind == c10::TypeKind::IntType) out[i] = t.item<int64_t>();
    if (kind == c10::TypeKind::FloatType) out[i] = t.item<double>();
    if (kind == c10::TypeKind::BoolType) out[i] = t.item<bool>();
  }
  return out;
}

// A module scripted on its own whose forward is overloaded (`torch.jit.script(nn.RNN(...))`:
// forward__0 over a Tensor, forward__1 over a PackedSequence) has no `forward`: the first overload
// whose arguments are tensors, optional tensors or numbers, as the example inputs are.
c10::optional<torch::jit::Method> tensor_overload_of_forward(const torch::jit::Module& module) {
  for (const torch::jit::Method& m : module.get_methods()) {
    if (m.name().rfind("forward__", 0) != 0) continue;
    const auto& arguments = m.function().getSchema().arguments();
    bool plain = arguments.size() > 1;
    for (size_t i = 1; i < arguments.size() && plain; ++i) {
      c10::TypePtr type = arguments[i].type();
      if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
      const auto kind = type->kind();
      plain = kind == c10::TypeKind::TensorType || kind == c10::TypeKind::IntType ||
              kind == c10::TypeKind::FloatType || kind == c10::TypeKind::BoolType;
    }
    if (plain) return m;
  }
  return c10::nullopt;
}

const torch::jit::Method forward_of(const torch::jit::Module& module) {
  auto method = module.find_method("forward");
  if (!method) method = tensor_overload_of_forward(module);
  if (!method) {
    throw ExportError(ErrorCode::kModelLoad,
                      "the module has no forward() method. Remedy: export a module whose "
                      "forward is a TorchScript method (torch.jit.trace / torch.jit.script).");
  }
  return *method;
}

// Tuple and list arguments of forward() (`xs: Tuple[Tensor, Tensor]`, `xs: List[Tensor]`)
// become one graph input per element, as torch.onnx flattens them, rebuilt in the graph by a
// TupleConstruct/ListConstruct that LowerSimpleTuples and the list converters then see through.
// A list's length is the example's. Nested containers are flattened recursively.
void flatten_container_inputs(torch::jit::Graph& graph, std::vector<c10::IValue>& examples) {
  std::vector<c10::IValue> flat;
  size_t position = 0;  // graph input of examples[i]
  for (size_t i = 0; i < examples.size(); ++i) {
    const c10::IValue& example = examples[i];
    torch::jit::Value* input = graph.inputs().at(position);
    if (!(example.isTuple() || example.isList()) || example.isIntList() || example.isDoubleList() ||
        example.isBoolList()) {
      // An argument of a Union or Optional type takes the type of its example (a tensor).
      if (example.isTensor() && input->type()->kind() != c10::TypeKind::TensorType) {
        input->setType(c10::TensorType::get());
      }
      flat.push_back(example);
      ++position;
      continue;
    }
    std::vector<c10::IValue> elements =
        example.isTuple() ? example.toTupleRef().elements().vec() : example.toListRef().vec();
    std::vector<torch::jit::Value*> values;
    for (size_t k = 0; k < elements.size(); ++k) {
      torch::jit::Value* element = graph.insertInput(
          position + k,
          fmt::format("{}.{}", input->hasDebugName() ? input->debugName() : "input", k));
      element->setType(c10::unshapedType(elements[k].type()));
      values.push_back(element);
    }
    torch::jit::Node* pack =
        example.isTuple()
            ? graph.createTuple(values)
            // The list's own element type: the argument's type may be a Union holding it.
            : graph.createList(
                  c10::unshapedType(example.type())->expectRef<c10::ListType>().getElementType(),
                  values);
    graph.prependNode(pack);
    input->replaceAllUsesWith(pack->output());
    graph.eraseInput(position + elements.size());
    // The elements may be containers themselves: look at them again.
    std::vector<c10::IValue> rest(examples.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                  examples.end());
    std::vector<c10::IValue> again(flat);
    again.insert(again.end(), elements.begin(), elements.end());
    again.insert(again.end(), rest.begin(), rest.end());
    bool nested = std::any_of(elements.begin(), elements.end(),
                              [](const c10::IValue& e) { return e.isTuple() || e.isList(); });
    if (nested) {
      // Again from the start: graph inputs and `again` correspond one to one.
      examples = std::move(again);
      flatten_container_inputs(graph, examples);
      return;
    }
    flat.insert(flat.end(), elements.begin(), elements.end());
    position += elements.size();
  }
  examples = std::move(flat);
}

// Note [Linear-time inlining]
// torch::jit::Inline inserts each callee's nodes before its call node. libtorch 1.13 gives a node
// inserted between two others the midpoint of their topological positions, and renumbers the whole
// block when there is no room left: after ~40 nodes inserted at one place, so inlining a forward()
// of N nodes renumbers its block N/40 times (quadratic: 21 s for 100k nodes). Here the block is
// rebuilt in order instead: every node, kept or inlined, is appended at the block's end (a
// constant-time position), which gives the same graph as Inline in linear time. Like Inline, each
// call is replaced by its callee's optimized graph (itself inlined by libtorch, once per function
// and process), and the inlined nodes get the InlinedCallStack that Inline gives them (module
// instance and call site, used by export_modules_as_functions and for source locations).
using CallStacks =
    std::unordered_map<torch::jit::InlinedCallStack*, torch::jit::InlinedCallStackPtr>;

struct CallSite {
  torch::jit::Function* callee;
  torch::jit::SourceRange range;
  c10::optional<torch::jit::ModuleInstanceInfo> module;
};

void set_inlined_call_stack(torch::jit::Node* node, const CallSite& site, CallStacks& stacks) {
  auto old = node->callstack();
  torch::jit::InlinedCallStack* key = old ? old->get() : nullptr;
  auto found = stacks.find(key);
  if (found == stacks.end()) {
    auto stack = old ? c10::make_intrusive<torch::jit::InlinedCallStack>(*old, site.callee,
                                                                         site.range, site.module)
                     : c10::make_intrusive<torch::jit::InlinedCallStack>(site.callee, site.range,
                                                                         site.module);
    found = stacks.emplace(key, std::move(stack)).first;
  }
  node->setCallStack(found->second);
}

void set_inlined_call_stack_in_blocks(torch::jit::Node* node, const CallSite& site,
                                      CallStacks& stacks) {
  for (torch::jit::Block* block : node->blocks()) {
    for (torch::jit::Node* inner : block->nodes()) {
      set_inlined_call_stack(inner, site, stacks);
      set_inlined_call_stack_in_blocks(inner, site, stacks);
    }
  }
}

// Appends the body of `callee_graph` at the end of `call`'s block in place of `call` (which
// torch::jit::inlineCallTo does by inserting before `call`).
void inline_call_at_end(torch::jit::Node* call, torch::jit::GraphFunction* callee,
                        torch::jit::Graph& callee_graph) {
  torch::jit::Graph& graph = *call->owningGraph();
  CallSite site{callee, call->sourceRange(), c10::nullopt};
  if (call->kind() == c10::prim::CallMethod) {
    auto type = call->input(0)->type()->cast<c10::ClassType>();
    std::string instance = "INSTANCE_NAME_UNKNOWN";
    if (call->input(0)->node()->kind() == c10::prim::GetAttr) {
      instance = call->input(0)->node()->s(c10::attr::name);
    } else if (!graph.inputs().empty() && call->input(0) == graph.inputs()[0]) {
      instance = "SELF";
    }
    site.module = torch::jit::ModuleInstanceInfo(type, instance);
  }
  std::unordered_map<torch::jit::Value*, torch::jit::Value*> values;
  for (size_t i = 0; i < callee_graph.inputs().size(); ++i) {
    values[callee_graph.inputs()[i]] = call->inputs().at(i);
  }
  auto map = [&](torch::jit::Value* v) { return values.at(v); };
  CallStacks stacks;
  torch::jit::Block* block = call->owningBlock();
  for (torch::jit::Node* node : callee_graph.nodes()) {
    torch::jit::Node* clone = graph.createClone(node, map);
    clone->insertBefore(block->return_node());
    for (size_t i = 0; i < node->outputs().size(); ++i)
      values[node->outputs()[i]] = clone->outputs()[i];
    // As inlineCallTo: the call stacks of nodes with outputs (found through its value map).
    if (clone->outputs().empty()) continue;
    set_inlined_call_stack(clone, site, stacks);
    set_inlined_call_stack_in_blocks(clone, site, stacks);
  }
  for (size_t i = 0; i < call->outputs().size(); ++i) {
    torch::jit::Value* out = map(callee_graph.outputs().at(i));
    if (call->outputs()[i]->hasDebugName()) out->setDebugName(call->outputs()[i]->debugName());
    call->outputs()[i]->replaceAllUsesWith(out);
  }
  call->destroy();
}

void inline_calls(torch::jit::Block* block) {
  std::vector<torch::jit::Node*> nodes(block->nodes().begin(), block->nodes().end());
  for (torch::jit::Node* node : nodes) {
    torch::jit::GraphFunction* callee = nullptr;
    if (node->kind() == c10::prim::CallFunction || node->kind() == c10::prim::CallMethod) {
      callee = torch::jit::tryToGraphFunction(node);
    }
    if (callee == nullptr) {
      for (torch::jit::Block* sub : node->blocks()) inline_calls(sub);
      node->moveBefore(block->return_node());  // keeps the order, at a constant-time position
      continue;
    }
    if (node->kind() == c10::prim::CallFunction) node->removeInput(0);
    std::shared_ptr<torch::jit::Graph> body = callee->optimized_graph();
    inline_call_at_end(node, callee, *body);
  }
}

void inline_graph(torch::jit::Graph& graph) {
  inline_calls(graph.block());
  wrap_scalar_constants(graph.block());  // Note [Scalars recorded as tensors]
}

}  // namespace

namespace {

// Note [Parameter order]: the parameters are graph inputs in the order of the module's
// state_dict (each module's parameters, then its buffers, then its submodules'), as torch.onnx
// orders them, so that input_names after the example inputs name the same tensors ("learned_0"
// of the documentation's AlexNet is features.0.weight). LiftModuleAttributes lifts them in the
// order forward() reads them, which differs for traced modules (the tracer records a Linear's
// bias before its weight). A module's attributes are in state_dict order: TorchScript adds an
// nn.Module's parameters, buffers and submodules to its type in that order. Tensors that are no
// attribute path of the module (elements of list attributes) keep their order, after the others.
void order_parameters_as_state_dict(torch::jit::Graph& graph, std::vector<NamedParameter>& params,
                                    const torch::jit::Module& module) {
  std::unordered_map<std::string, size_t> rank;
  for (const auto& attribute : module.named_attributes(/*recurse=*/true)) {
    rank.emplace(attribute.name, rank.size());
  }
  auto rank_of = [&](const NamedParameter& p) {
    auto it = rank.find(p.name);
    return it == rank.end() ? rank.size() : it->second;
  };
  std::vector<size_t> order(params.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank_of(params[a]) < rank_of(params[b]); });
  if (std::is_sorted(order.begin(), order.end())) return;
  const size_t first = graph.inputs().size() - params.size();
  std::vector<size_t> permutation(graph.inputs().size());
  for (size_t i = 0; i < permutation.size(); ++i) permutation[i] = i;
  std::vector<NamedParameter> ordered;
  for (size_t i = 0; i < order.size(); ++i) {
    permutation[first + i] = first + order[i];
    ordered.push_back(params[order[i]]);
  }
  graph.block()->permuteInputs(permutation);
  params = std::move(ordered);
}

}  // namespace

CapturedGraph capture_module(const torch::jit::Module& module,
                             const std::vector<c10::IValue>& args) {
  auto method = forward_of(module);
  const auto& schema = method.function().getSchema();
  check_arguments(schema, args);
  CapturedGraph out;
  out.graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
  inline_graph(*out.graph);
  out.parameters = passes::LiftModuleAttributes(*out.graph, module);
  order_parameters_as_state_dict(*out.graph, out.parameters, module);
  out.example_inputs = coerce_arguments(schema, args);
  // Arguments left to their defaults are constants of the graph.
  const auto& params = schema.arguments();
  for (size_t i = out.example_inputs.size() + 1; i < params.size(); ++i) {
    auto* input = out.graph->inputs().at(out.example_inputs.size());
    torch::jit::WithInsertPoint guard(out.graph->block()->nodes().front());
    input->replaceAllUsesWith(out.graph->insertConstant(*params[i].default_value()));
    out.graph->eraseInput(out.example_inputs.size());
  }
  // Arguments given as None (an Optional left out by passing None, as torch.onnx's callers and
  // _decide_input_format do) are constants too: torch.onnx drops None inputs from the graph.
  for (size_t i = out.example_inputs.size(); i-- > 0;) {
    if (!out.example_inputs[i].isNone()) continue;
    auto* input = out.graph->inputs().at(i);
    torch::jit::WithInsertPoint guard(out.graph->block()->nodes().front());
    input->replaceAllUsesWith(out.graph->insertConstant(c10::IValue()));
    out.graph->eraseInput(i);
    out.example_inputs.erase(out.example_inputs.begin() + static_cast<std::ptrdiff_t>(i));
  }
  flatten_container_inputs(*out.graph, out.example_inputs);
  return out;
}

namespace {

// What capture_trace saw in the example arguments and the outputs, for its warnings.
struct TraceNotes {
  bool dict_input = false;
  bool str_input = false;
  bool scalar_input = false;
  bool dict_output = false;
  bool str_output = false;
};

std::string key_string(const c10::IValue& key) {
  if (key.isString()) return key.toStringRef();
  if (key.isInt()) return std::to_string(key.toInt());
  std::ostringstream os;
  os << key;
  return os.str();
}

// Appends the tensors of example argument `v` (nested tuples, lists and dict values in order) to
// `leaves`, named `name` or `name.<key>` / `name.<index>`. Strings, scalars and None stay
// constants.
void flatten_argument(const c10::IValue& v, const std::string& name,
                      std::vector<c10::IValue>& leaves, std::vector<std::string>& names,
                      TraceNotes& notes) {
  if (v.isTensor()) {
    leaves.push_back(v);
    names.push_back(name);
  } else if (v.isTuple()) {
    const auto& elements = v.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      flatten_argument(elements[i], fmt::format("{}.{}", name, i), leaves, names, notes);
    }
  } else if (v.isList()) {
    const auto list = v.toListRef();
    for (size_t i = 0; i < list.size(); ++i) {
      flatten_argument(list[i], fmt::format("{}.{}", name, i), leaves, names, notes);
    }
  } else if (v.isGenericDict()) {
    notes.dict_input = true;
    for (const auto& kv : v.toGenericDict()) {
      flatten_argument(kv.value(), name + "." + key_string(kv.key()), leaves, names, notes);
    }
  } else if (v.isString()) {
    notes.str_input = true;
  } else if (!v.isNone()) {
    notes.scalar_input = true;
  }
}

// The example argument `example` with its tensors replaced by the traced ones, taken in order
// from `leaves` (the inverse of flatten_argument).
c10::IValue rebuild_argument(const c10::IValue& example, const torch::jit::Stack& leaves,
                             size_t& next) {
  if (example.isTensor()) return leaves.at(next++);
  if (example.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& e : example.toTupleRef().elements()) {
      elements.push_back(rebuild_argument(e, leaves, next));
    }
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (example.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const auto& e : example.toListRef())
      list.push_back(rebuild_argument(e, leaves, next).toTensor());
    return list;
  }
  if (example.isList()) {
    c10::impl::GenericList list(example.toList().elementType());
    for (const auto& e : example.toListRef()) list.push_back(rebuild_argument(e, leaves, next));
    return list;
  }
  if (example.isGenericDict()) {
    const auto dict = example.toGenericDict();
    c10::impl::GenericDict out(dict.keyType(), dict.valueType());
    for (const auto& kv : dict) out.insert(kv.key(), rebuild_argument(kv.value(), leaves, next));
    return out;
  }
  return example;
}

// The traced function's output as torch.onnx exports it: the tensors of nested tuples, lists and
// dict values (keys removed) in order; strings and None removed.
void flatten_output(const c10::IValue& v, std::vector<c10::IValue>& out, TraceNotes& notes) {
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten_output(e, out, notes);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten_output(e, out, notes);
  } else if (v.isGenericDict()) {
    notes.dict_output = true;
    for (const auto& kv : v.toGenericDict()) flatten_output(kv.value(), out, notes);
  } else if (v.isString()) {
    notes.str_output = true;
  } else if (!v.isNone()) {
    out.push_back(v);  // tensors (the tracer rejects other values with a clear message)
  }
}

void print_warnings(const TraceNotes& notes) {
  if (notes.dict_input) {
    warn(
        "a dict is among the example inputs: its tensors become graph inputs in insertion order, "
        "and everything computed from its keys (membership, iteration order) is fixed to the "
        "values seen at tracing. Check that the exported model does what you expect.");
  }
  if (notes.str_input || notes.scalar_input) {
    warn(fmt::format(
        "the {} example input(s) were fixed at tracing: computations that depend on them use the "
        "constant values seen during the traced run.",
        notes.str_input && notes.scalar_input ? "str and number"
        : notes.str_input                     ? "str"
                                              : "number"));
  }
  if (notes.dict_output) {
    warn(
        "the model returns a dict: it is replaced by the flattened sequence of its values (keys "
        "removed), as torch.onnx does.");
  }
  if (notes.str_output) {
    warn("the model returns a str: str outputs have no ONNX value and are removed.");
  }
}

}  // namespace

CapturedGraph capture_trace(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                            const NamedTensors& parameters) {
  TraceNotes notes;
  std::vector<c10::IValue> leaves;
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) {
    flatten_argument(args[i], fmt::format("input_{}", i), leaves, names, notes);
  }
  torch::jit::Stack inputs(leaves.begin(), leaves.end());
  for (const auto& [name, tensor] : parameters) inputs.emplace_back(tensor);
  const size_t num_leaves = leaves.size();
  std::pair<std::shared_ptr<torch::jit::tracer::TracingState>, torch::jit::Stack> traced;
  try {
    traced = torch::jit::tracer::trace(
        inputs,
        [&](torch::jit::Stack in) -> torch::jit::Stack {
          std::vector<c10::IValue> rebuilt;
          size_t next = 0;
          for (const auto& a : args) rebuilt.push_back(rebuild_argument(a, in, next));
          c10::IValue result = fn(rebuilt);
          if (result.isTensor()) return {result};
          std::vector<c10::IValue> flat;
          flatten_output(result, flat, notes);
          return {c10::ivalue::Tuple::create(std::move(flat))};
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false);
  } catch (const ExportError&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw ExportError(
        ErrorCode::kModelRun,
        "tracing the model failed: " + what.substr(0, what.find("\nException raised")) +
            "\nRemedy: check that the example inputs are valid for the model.");
  }
  print_warnings(notes);
  CapturedGraph out;
  out.graph = traced.first->graph;
  for (size_t i = 0; i < num_leaves; ++i) {
    auto* input = out.graph->inputs().at(i);
    if (!input->hasDebugName()) input->setDebugName(names[i]);
  }
  out.example_inputs = leaves;
  for (const auto& [name, tensor] : parameters) out.parameters.push_back({name, tensor});
  return out;
}

std::vector<at::Tensor> flatten_tensors(const c10::IValue& value) {
  std::vector<at::Tensor> out;
  std::function<void(const c10::IValue&)> walk = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) walk(e);
    } else if (v.isList()) {
      for (const auto& e : v.toListRef()) walk(e);
    } else if (v.isGenericDict()) {
      for (const auto& kv : v.toGenericDict()) walk(kv.value());
    } else if (v.isInt() || v.isDouble() || v.isBool()) {
      out.push_back(at::scalar_to_tensor(v.toScalar()));
    }
  };
  walk(value);
  return out;
}

namespace {

// The TorchScript interpreter's error ("The following operation failed in the TorchScript
// interpreter. Traceback of TorchScript, serialized code ... original code ... RuntimeError: ...")
// as its cause (the last line) followed by the traceback of the model's source (its first and
// last 8 lines when longer than 16).
std::string describe_interpreter_error(const std::string& what) {
  // Without libtorch's C++ stack ("Exception raised from ...", "frame #N: ...").
  std::vector<std::string> lines;
  std::istringstream in(what);
  bool in_stack = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Exception raised from", 0) == 0) in_stack = true;
    if (in_stack && (line.rfind("frame #", 0) == 0 || line.rfind("Exception raised", 0) == 0)) {
      continue;
    }
    in_stack = false;
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return "(no message)";
  // The cause: the last "SomethingError: ..." line, or the last line.
  size_t cause_at = lines.size() - 1;
  for (size_t i = lines.size(); i-- > 0;) {
    const auto colon = lines[i].find("Error: ");
    if (colon != std::string::npos && colon > 0 && lines[i].find_first_of(" \t") > colon) {
      cause_at = i;
      break;
    }
  }
  const std::string cause = lines[cause_at];
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(cause_at));
  lines.push_back(cause);
  size_t from = lines.size() - 1;
  for (const char* header :
       {"Traceback of TorchScript, original code", "Traceback of TorchScript"}) {
    for (size_t i = 0; i + 1 < lines.size() && from == lines.size() - 1; ++i) {
      if (lines[i].rfind(header, 0) == 0) from = i;
    }
  }
  std::string out = cause;
  if (from + 1 < lines.size()) {
    out += "\n" + lines[from];
    const size_t begin = from + 1, end = lines.size() - 1;  // the traceback, without the cause
    for (size_t i = begin; i < end; ++i) {
      if (end - begin > 16 && i == begin + 8) {
        out += "\n  ...";
        i = end - 8;
      }
      out += "\n" + lines[i];
    }
  }
  return out;
}

// Whether `v` may be (a view of) a module attribute's tensor: read by prim::GetAttr, passed on
// by an op whose result aliases its first argument (views, in-place ops), or carried by a Loop or
// If from such a value.
bool may_alias_attribute(const torch::jit::Value* v,
                         std::unordered_set<const torch::jit::Value*>& seen) {
  if (!seen.insert(v).second) return false;
  const torch::jit::Node* node = v->node();
  if (node->kind() == c10::prim::GetAttr) return true;
  if (node->kind() == c10::prim::Param) {
    const torch::jit::Node* loop = node->owningBlock()->owningNode();
    if (loop == nullptr || loop->kind() != c10::prim::Loop || v->offset() == 0) return false;
    // Body input i (i >= 1) is the loop's input i + 1 on entry and body output i afterwards.
    return may_alias_attribute(loop->input(v->offset() + 1), seen) ||
           may_alias_attribute(loop->blocks()[0]->outputs()[v->offset()], seen);
  }
  if (node->kind() == c10::prim::Loop) {
    return may_alias_attribute(node->input(v->offset() + 2), seen) ||
           may_alias_attribute(node->blocks()[0]->outputs()[v->offset() + 1], seen);
  }
  if (node->kind() == c10::prim::If) {
    for (const torch::jit::Block* b : node->blocks()) {
      if (may_alias_attribute(b->outputs()[v->offset()], seen)) return true;
    }
    return false;
  }
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (schema == nullptr || schema->returns().empty() || schema->arguments().empty()) return false;
  if (schema->returns()[0].alias_info() == nullptr ||
      schema->arguments()[0].alias_info() == nullptr) {
    return false;
  }
  return may_alias_attribute(node->input(0), seen);
}

// Whether `node` or a node in its blocks writes module state: an attribute (prim::SetAttr,
// `self.count += 1`) or, in place, an attribute's tensor (`v = self.w; v += 1`).
bool writes_module_state(const torch::jit::Node* node) {
  if (node->kind() == c10::prim::SetAttr) return true;
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    std::unordered_set<const torch::jit::Value*> seen;
    if (writes_input(node, i) && may_alias_attribute(node->input(i), seen)) return true;
  }
  for (const torch::jit::Block* block : node->blocks()) {
    for (const torch::jit::Node* inner : block->nodes()) {
      if (writes_module_state(inner)) return true;
    }
  }
  return false;
}

// A copy of `v` with fresh tensors: forward() may write its arguments in place (`x *= 2`), and
// the caller's examples (the inputs saved beside the reference outputs) must stay as they were.
c10::IValue fresh_copy(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().clone();
  if (v.isList()) {
    c10::impl::GenericList out(v.toList().elementType());
    for (const c10::IValue& e : v.toListRef()) out.push_back(fresh_copy(e));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const c10::IValue& e : v.toTupleRef().elements()) elements.push_back(fresh_copy(e));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  return v;
}

}  // namespace

std::vector<at::Tensor> run_module(const torch::jit::Module& module,
                                   const std::vector<c10::IValue>& args) {
  auto method = forward_of(module);
  const auto& schema = method.function().getSchema();
  check_arguments(schema, args);
  auto inputs = coerce_arguments(schema, args);
  for (c10::IValue& input : inputs) input = fresh_copy(input);
  // Arguments left out take their defaults (the graph is run as is, not through the method).
  for (size_t i = inputs.size() + 1; i < schema.arguments().size(); ++i) {
    inputs.push_back(*schema.arguments()[i].default_value());
  }
  try {
    c10::InferenceMode guard;
    // Note [Forward runs interpreted]: forward() is run as the interpreter runs its inlined graph,
    // not through the function's graph executor. libtorch's profiling executor optimizes a graph
    // from its second run on, and on libtorch 2.6 that takes minutes for a detection model's graph
    // (ssdlite320: first run 1 s, the second not done after 3 min) and miscompiles hand-written
    // graphs (aten::add of a NumToTensor(bool) run as add(Scalar, Scalar)). Switching the
    // optimizer off around method() is no remedy: the function then caches an un-inlined
    // "optimized" graph, which capture_module's inlining would meet.
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    inline_graph(*graph);
    torch::jit::Code code(graph, "forward");
    torch::jit::InterpreterState state(code);
    torch::jit::Stack stack;
    stack.reserve(inputs.size() + 1);
    // A forward that writes module state (prim::SetAttr, `self.count += 1`, or in place through
    // an attribute's tensor, `v = self.w; v += 1`) runs on a copy: the export reads the state as
    // it was (Note [Module state written in forward]).
    bool writes_state = false;
    for (const torch::jit::Node* node : graph->nodes()) {
      writes_state = writes_state || writes_module_state(node);
    }
    stack.emplace_back(writes_state ? module.deepcopy()._ivalue() : module._ivalue());
    for (const auto& input : inputs) stack.push_back(fresh_copy(input));
    try {
      state.run(stack);
    } catch (const std::exception&) {
      // libtorch 1.13's interpreter fails some graphs that its graph executor, which prepares
      // them first, runs (an "undefined" tensor in a loop; the fuzzer found it): the forward
      // fails only when that run fails too.
      torch::jit::Module target = writes_state ? module.deepcopy() : module;
      std::vector<c10::IValue> again;
      for (const auto& input : inputs) again.push_back(fresh_copy(input));
      return flatten_tensors(forward_of(target)(std::move(again)));
    }
    if (stack.size() == 1) return flatten_tensors(stack.front());
    return flatten_tensors(c10::ivalue::Tuple::create(std::move(stack)));
  } catch (const std::exception& e) {
    throw ExportError(ErrorCode::kModelRun,
                      "the model's forward() failed on the example inputs: " +
                          describe_interpreter_error(e.what()) +
                          "\nRemedy: check the example inputs' shapes and dtypes (one per "
                          "forward() argument, in order).");
  }
}

void throw_if_forward_fails(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                            const std::string& export_error) {
  try {
    run_module(module, args);
  } catch (const ExportError& e) {
    if (e.code() != ErrorCode::kModelRun) throw;
    const std::string first = export_error.substr(0, export_error.find('\n'));
    throw ExportError(ErrorCode::kModelRun,
                      fmt::format("{}\n(The export stopped first with: {})", e.what(), first));
  }
}

}  // namespace frontend
}  // namespace torchonnx
