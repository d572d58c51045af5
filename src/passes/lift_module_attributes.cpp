#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_map>

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

  // Note [Module state written in forward]: `self.count += 1` or `self.last = y` in forward
  // (prim::SetAttr) gives the attribute a new value for the reads after it in this run; the
  // ONNX model keeps no state between runs, as a traced model would not. A write inside a loop
  // or branch would make the value depend on the path taken: refused. An in-place write to an
  // attribute's tensor (`v = self.w; v += 1`) is made functional by RemoveInplaceOps, like any
  // other. The export reads the state from before forward() ran: run_module runs such a forward
  // on a deep copy of the module.
  std::unordered_map<std::string, Value*> assigned;
  std::vector<Node*> writes;

  void run_on_block(torch::jit::Block* block) {
    for (Node* node : block->nodes()) {
      for (torch::jit::Block* sub : node->blocks()) run_on_block(sub);
      if (node->kind() == c10::prim::SetAttr && objects.count(node->input(0))) {
        const std::string& name = node->s(c10::attr::name);
        const std::string& base = paths[node->input(0)];
        const std::string path = base.empty() ? name : base + "." + name;
        if (block != graph.block()) {
          throw ExportError(
              ErrorCode::kConversion,
              "the model's forward writes the module attribute '" + path +
                  "' inside a loop or branch (prim::SetAttr); its value after it would depend on "
                  "the path taken. Remedy: compute the new value as a local variable and assign "
                  "it once, outside the loop or branch, or trace the model");
        }
        assigned[path] = node->input(1);
        writes.push_back(node);
        continue;
      }
      if (node->kind() != c10::prim::GetAttr) continue;
      auto it = objects.find(node->input());
      if (it == objects.end()) continue;
      const std::string& name = node->s(c10::attr::name);
      std::string path = paths[node->input()].empty() ? name : paths[node->input()] + "." + name;
      if (auto written = assigned.find(path); written != assigned.end()) {
        node->output()->replaceAllUsesWith(written->second);
        dead.push_back(node);
        continue;
      }
      c10::IValue attr = it->second->getAttr(name);
      Value* out = node->output();
      if (attr.isObject() && attr.toObjectRef().type()->is_module()) {
        objects[out] = attr.toObject();
        paths[out] = path;
      } else if (attr.isTensor()) {
        out->replaceAllUsesWith(lift_tensor(attr.toTensor(), path));
      } else if (holds_tensors(attr)) {
        out->replaceAllUsesWith(lift_tensor_list(attr, path, node));
      } else {
        // Scalars, lists and custom-class objects (quantized packed weights) become constants,
        // as torch.jit.freeze makes them.
        torch::jit::WithInsertPoint guard(node);
        auto constant = torch::jit::tryInsertConstant(graph, attr);
        if (!constant) {
          throw ExportError(
              ErrorCode::kConversion,
              "the model's forward reads the attribute '" + path + "' of type " +
                  attr.type()->annotation_str() +
                  ", which torchonnx cannot make a constant of (tensors, numbers, strings, "
                  "lists of them and quantized packed weights can be). Remedy: store it as "
                  "tensors or plain numbers, or trace the model");
        }
        out->replaceAllUsesWith(*constant);
      }
      dead.push_back(node);
    }
  }
};

}  // namespace

std::vector<NamedParameter> LiftModuleAttributes(torch::jit::Graph& graph,
                                                 const torch::jit::Module& module) {
  Value* self = graph.inputs().at(0);
  Lifter lifter(graph);
  lifter.objects[self] = module._ivalue();
  lifter.paths[self] = "";
  lifter.run_on_block(graph.block());
  for (Node* write : lifter.writes) write->destroy();
  // Chains are walked in order, so destroying in reverse removes users before their producers.
  for (auto it = lifter.dead.rbegin(); it != lifter.dead.rend(); ++it) {
    if (!(*it)->output()->hasUses()) (*it)->destroy();
  }
  if (self->hasUses()) {
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
