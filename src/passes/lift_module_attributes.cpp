#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/jit_util.h"
#include "passes/passes.h"
#include "torchonnx/errors.h"

namespace torchonnx::passes {

using torch::jit::Node;
using torch::jit::Value;

namespace {

struct Lifter {
  explicit Lifter(torch::jit::Graph& g) : graph(g) {}

  torch::jit::Graph& graph;
  std::unordered_map<Value*, c10::intrusive_ptr<c10::ivalue::Object>> objects;
  std::unordered_map<Value*, std::string> paths;
  std::unordered_map<const c10::TensorImpl*, Value*> lifted;  // tied weights become one input
  std::vector<NamedParameter> params;
  std::vector<Node*> dead;

  // The graph input of a tensor attribute at `path` (tied weights: one input).
  Value* lift_tensor(const at::Tensor& tensor, const std::string& path) {
    Value*& input = lifted[tensor.unsafeGetTensorImpl()];
    if (input == nullptr) {
      input = graph.addInput();
      input->setType(c10::TensorType::create(tensor));
      params.push_back({path, tensor});
    }
    return input;
  }

  // A list attribute that holds tensors (nn.LSTM's _flat_weights, a ModuleList's buffers):
  // a ListConstruct of the lifted tensors (None elements of an Optional list stay None).
  // Inserted before `node`.
  Value* lift_tensor_list(const c10::IValue& attr, const std::string& path, Node* node) {
    std::vector<Value*> elements;
    const auto list = attr.toList();
    for (size_t i = 0; i < list.size(); ++i) {
      const c10::IValue element = list.get(i);
      torch::jit::WithInsertPoint guard(node);
      elements.push_back(element.isTensor()
                             ? lift_tensor(element.toTensor(), path + "." + std::to_string(i))
                             : graph.insertConstant(element));
    }
    torch::jit::WithInsertPoint guard(node);
    Node* construct = graph.createList(list.elementType(), elements);
    graph.insertNode(construct);
    return construct->output();
  }

  static bool holds_tensors(const c10::IValue& attr) {
    if (!attr.isList()) return false;
    for (const c10::IValue& element : attr.toListRef()) {
      if (element.isTensor()) return true;
    }
    return false;
  }

  // The value of the attribute `attr` at `path` at the start of forward: a lifted tensor, a list
  // of lifted tensors, or a constant (inserted before `node`).
  Value* attribute_value(const c10::IValue& attr, const std::string& path, Node* node) {
    if (attr.isTensor()) return lift_tensor(attr.toTensor(), path);
    if (holds_tensors(attr)) return lift_tensor_list(attr, path, node);
    // Scalars, lists and custom-class objects (quantized packed weights) become constants, as
    // torch.jit.freeze makes them.
    torch::jit::WithInsertPoint guard(node);
    c10::IValue value = attr;
    if (attr.isObject() && !attr.toObjectRef().type()->is_module()) {
      // A custom-class object of a module loaded from a file holds its compilation unit
      // strongly, which a graph constant may not (a cycle): the constant refers to it weakly, as
      // torch.jit.freeze's, while the module keeps it alive.
      value = c10::IValue(attr.toObject()->copy_to_weak_compilation_ref());
    }
    auto constant = torch::jit::tryInsertConstant(graph, value);
    if (!constant) {
      throw ExportError(ErrorCode::kConversion,
                        "the model's forward reads the attribute '" + path + "' of type " +
                            attr.type()->annotation_str() +
                            ", which torchonnx cannot make a constant of (tensors, numbers, "
                            "strings, lists of them and quantized packed weights can be). Remedy: "
                            "store it as tensors or plain numbers, or trace the model");
    }
    return *constant;
  }

  // Note [Module state written in forward]
  // `self.count += 1` or `self.last = y` in forward (prim::SetAttr) gives the attribute a new
  // value for the reads after it in this run; the ONNX model keeps no state between runs, as a
  // traced model would not. Each attribute forward writes is a variable, as a local one: a
  // prim::Store at each write, a prim::Load at each read, resolved by ResolveVariables (Note
  // [Mutation in control flow]). A write inside a branch makes the attribute an If output, one in
  // a loop a loop-carried value, as torch.onnx's RemoveInplaceOpsForONNX makes them; reads that
  // no write reaches read the value from before forward ran (lifted, or a constant):
  //
  //   prim::Loop(%n, %true)                          %w1 = prim::Loop(%n, %true, %conv.weight)
  //     block0(%i):                                    block0(%i, %w):
  //       %w = prim::GetAttr[name="weight"](%conv)  ⇒    %w2 = aten::add(%w, %x)
  //       %w2 = aten::add(%w, %x)                        -> (%true, %w2)
  //       prim::SetAttr[name="weight"](%conv, %w2)   return (%w1)
  //       -> (%true)
  //   %r = prim::GetAttr[name="weight"](%conv)
  //   return (%r)
  //
  // An in-place write to an attribute's tensor (`v = self.w; v += 1`, and `self.w += 1`, whose
  // SetAttr stores the tensor the attribute holds already and goes: writes_back_in_place) is made
  // functional by RemoveInplaceOps, like any other. The export reads the state from before
  // forward() ran: run_module runs such a forward on a deep copy of the module.
  struct Variable {
    c10::intrusive_ptr<c10::ivalue::Object> owner;
    std::string name;                 // the attribute's name in `owner`
    std::vector<c10::TypePtr> types;  // of the value at entry and of each value written
  };
  std::map<std::string, Variable> variables;  // by path
  std::unordered_set<Node*> in_place_writes;  // SetAttrs of the tensor the attribute holds
  std::vector<Node*> writes;

  static std::string join(const std::string& base, const std::string& name) {
    return base.empty() ? name : base + "." + name;
  }

  // The path of the module `v` is ("" for self, "conv" for self.conv), or nullopt when it is none.
  std::optional<std::string> module_path(Value* v, Value* self) {
    if (v == self) return std::string();
    if (v->node()->kind() != c10::prim::GetAttr) return std::nullopt;
    auto base = module_path(v->node()->input(), self);
    if (!base) return std::nullopt;
    return join(*base, v->node()->s(c10::attr::name));
  }

  // The path of the attribute `node` writes (prim::SetAttr), or nullopt.
  std::optional<std::string> written_path(Node* node, Value* self) {
    if (node->kind() != c10::prim::SetAttr) return std::nullopt;
    auto base = module_path(node->input(0), self);
    if (!base) return std::nullopt;
    return join(*base, node->s(c10::attr::name));
  }

  // Whether `node` or a node in its blocks writes the attribute at `path`.
  bool writes_attribute(Node* node, const std::string& path, Value* self) {
    if (written_path(node, self) == path) return true;
    for (torch::jit::Block* block : node->blocks()) {
      for (Node* inner : block->nodes()) {
        if (writes_attribute(inner, path, self)) return true;
      }
    }
    return false;
  }

  // Whether the write `set` of the attribute at `path` stores the tensor the attribute holds
  // already: its value is the result of in-place ops on a read of the same attribute, with no
  // other write of it in between (`self.acc += y` is GetAttr, aten::add_, SetAttr). Such a write
  // changes no attribute; its in-place op is the mutation, which RemoveInplaceOps threads to
  // every name of the tensor (also to `v = self.acc` read before a loop that adds to it).
  bool writes_back_in_place(Node* set, const std::string& path, Value* self) {
    Value* v = set->input(1);
    while (v->node()->kind() != c10::prim::GetAttr) {
      Node* op = v->node();
      const c10::FunctionSchema* schema = op->maybeSchema();
      if (!schema || op->outputs().size() != 1 || !writes_input(op, 0)) return false;
      const c10::AliasInfo* returned = schema->returns().at(0).alias_info();
      if (returned == nullptr || !returned->isWrite()) return false;
      v = op->input(0);
    }
    Node* get = v->node();
    auto base = module_path(get->input(), self);
    if (!base || join(*base, get->s(c10::attr::name)) != path) return false;
    if (get->owningBlock() != set->owningBlock()) return false;
    for (Node* node = get->next(); node != set; node = node->next()) {
      if (writes_attribute(node, path, self)) return false;
    }
    return true;
  }

  // The paths of the attributes forward writes (prim::SetAttr), with the types written; the
  // writes that store the tensor the attribute holds already go, with nothing in their place.
  void collect_writes(torch::jit::Block* block, Value* self) {
    for (Node* node : block->nodes()) {
      for (torch::jit::Block* sub : node->blocks()) collect_writes(sub, self);
      auto path = written_path(node, self);
      if (!path) continue;
      if (writes_back_in_place(node, *path, self)) {
        in_place_writes.insert(node);
        continue;
      }
      variables[*path].types.push_back(node->input(1)->type());
    }
  }

  // The variable of the attribute `name` of `object`, at `path`, if forward writes it; records
  // the attribute's owner and the type of its value at entry.
  const Variable* variable_of(const std::string& path, Value* object, const std::string& name) {
    auto it = variables.find(path);
    if (it == variables.end()) return nullptr;
    Variable& var = it->second;
    if (!var.owner) {
      var.owner = objects.at(object);
      var.name = name;
      var.types.push_back(var.owner->getAttr(name).type());
    }
    return &var;
  }

  // The type of the variable of `var`: Tensor when all its values are tensors, else their union
  // (Optional[Tensor] for a tensor attribute that is None at entry), else the declared type.
  static c10::TypePtr type_of(const Variable& var) {
    const bool tensors = std::all_of(var.types.begin(), var.types.end(), [](const auto& t) {
      return t->template cast<c10::TensorType>() != nullptr;
    });
    if (tensors) return c10::TensorType::get();
    std::ostringstream why_not;
    if (auto unified = c10::unifyTypeList(var.types, why_not)) return *unified;
    return var.owner->type()->getAttribute(var.name);
  }

  static std::string variable_name(const std::string& path) { return "self." + path; }

  void run_on_block(torch::jit::Block* block) {
    for (Node* node : block->nodes()) {
      for (torch::jit::Block* sub : node->blocks()) run_on_block(sub);
      if (node->kind() == c10::prim::SetAttr && objects.count(node->input(0))) {
        const std::string& name = node->s(c10::attr::name);
        const std::string path = join(paths[node->input(0)], name);
        if (!in_place_writes.count(node)) {
          variable_of(path, node->input(0), name);
          graph.createStore(variable_name(path), node->input(1))->insertBefore(node);
        }
        writes.push_back(node);
        continue;
      }
      if (node->kind() != c10::prim::GetAttr) continue;
      auto it = objects.find(node->input());
      if (it == objects.end()) continue;
      const std::string& name = node->s(c10::attr::name);
      const std::string path = join(paths[node->input()], name);
      if (const Variable* var = variable_of(path, node->input(), name)) {
        Value* load =
            graph.createLoad(variable_name(path), type_of(*var))->insertBefore(node)->output();
        node->output()->replaceAllUsesWith(load);
        dead.push_back(node);
        continue;
      }
      c10::IValue attr = it->second->getAttr(name);
      Value* out = node->output();
      if (attr.isObject() && attr.toObjectRef().type()->is_module()) {
        objects[out] = attr.toObject();
        paths[out] = path;
        dead.push_back(node);
        continue;
      }
      out->replaceAllUsesWith(attribute_value(attr, path, node));
      dead.push_back(node);
    }
  }

  // Resolves the variables of the attributes forward writes (see the note).
  void resolve_written_attributes() {
    std::map<std::string, c10::TypePtr> types;
    for (const auto& [path, var] : variables) {
      if (var.owner) types[variable_name(path)] = type_of(var);
    }
    if (types.empty()) return;
    ResolveVariables(graph, types, [&](const std::string& name) {
      const std::string path = name.substr(variable_name("").size());
      const Variable& var = variables.at(path);
      return attribute_value(var.owner->getAttr(var.name), path, graph.block()->nodes().front());
    });
  }
};

const Node* python_call(const torch::jit::Block* block) {
  for (const Node* node : block->nodes()) {
    if (node->kind() == c10::prim::PythonOp) return node;
    for (const torch::jit::Block* sub : node->blocks()) {
      if (const Node* found = python_call(sub)) return found;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<NamedParameter> LiftModuleAttributes(torch::jit::Graph& graph,
                                                 const torch::jit::Module& module) {
  Value* self = graph.inputs().at(0);
  Lifter lifter(graph);
  lifter.objects[self] = module._ivalue();
  lifter.paths[self] = "";
  lifter.collect_writes(graph.block(), self);
  lifter.run_on_block(graph.block());
  for (Node* write : lifter.writes) write->destroy();
  // Chains are walked in order, so destroying in reverse removes users before their producers.
  for (auto it = lifter.dead.rbegin(); it != lifter.dead.rend(); ++it) {
    if (!(*it)->output()->hasUses()) (*it)->destroy();
  }
  lifter.resolve_written_attributes();
  if (self->hasUses()) {
    // A submodule method TorchScript leaves to Python (@torch.jit.ignore): a prim::PythonOp
    // reading the submodule. torch.onnx's words first ("Couldn't export Python operator").
    if (const Node* call = python_call(graph.block())) {
      const auto* op = static_cast<const torch::jit::PythonOp*>(call);
      throw ExportError(
          ErrorCode::kConversion,
          fmt::format("Couldn't export Python operator {} ({}): a method TorchScript leaves to "
                      "Python (@torch.jit.ignore), which has no graph to convert. Remedy: make "
                      "it scriptable (drop @torch.jit.ignore), or trace the model instead.",
                      op->name(), source_location(call)));
    }
    const Node* user = self->uses().front().user;
    throw ExportError(ErrorCode::kConversion,
                      "the model's forward uses `self` through " +
                          std::string(user->kind().toQualString()) +
                          ", which torchonnx cannot turn into parameters (only attribute reads of "
                          "tensors, submodules and constants are supported). Remedy: make the "
                          "module's state plain attributes, or trace the model instead.");
  }
  graph.eraseInput(0);
  return std::move(lifter.params);
}

}  // namespace torchonnx::passes
