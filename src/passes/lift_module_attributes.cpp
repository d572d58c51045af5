#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_map>

#include "passes/passes.h"
#include "torchonnx/errors.h"

namespace torchonnx::passes {

using torch::jit::Node;
using torch::jit::Value;

namespace {

struct Lifter {
  torch::jit::Graph& graph;
  std::unordered_map<Value*, c10::intrusive_ptr<c10::ivalue::Object>> objects;
  std::unordered_map<Value*, std::string> paths;
  std::unordered_map<const c10::TensorImpl*, Value*> lifted;  // tied weights become one input
  std::vector<NamedParameter> params;
  std::vector<Node*> dead;

  void run_on_block(torch::jit::Block* block) {
    for (Node* node : block->nodes()) {
      for (torch::jit::Block* sub : node->blocks()) run_on_block(sub);
      if (node->kind() != c10::prim::GetAttr) continue;
      auto it = objects.find(node->input());
      if (it == objects.end()) continue;
      const std::string& name = node->s(c10::attr::name);
      std::string path = paths[node->input()].empty() ? name : paths[node->input()] + "." + name;
      c10::IValue attr = it->second->getAttr(name);
      Value* out = node->output();
      if (attr.isObject() && attr.toObjectRef().type()->is_module()) {
        objects[out] = attr.toObject();
        paths[out] = path;
      } else if (attr.isTensor()) {
        const at::Tensor& tensor = attr.toTensor();
        Value*& input = lifted[tensor.unsafeGetTensorImpl()];
        if (input == nullptr) {
          input = graph.addInput();
          input->setType(c10::TensorType::create(tensor));
          params.push_back({path, tensor});
        }
        out->replaceAllUsesWith(input);
      } else {
        // Scalars, lists and custom-class objects (quantized packed weights) become constants,
        // as torch.jit.freeze makes them.
        torch::jit::WithInsertPoint guard(node);
        auto constant = graph.insertConstant(attr);
        out->replaceAllUsesWith(constant);
      }
      dead.push_back(node);
    }
  }
};

}  // namespace

std::vector<NamedParameter> LiftModuleAttributes(torch::jit::Graph& graph,
                                                 const torch::jit::Module& module) {
  Value* self = graph.inputs().at(0);
  Lifter lifter{graph};
  lifter.objects[self] = module._ivalue();
  lifter.paths[self] = "";
  lifter.run_on_block(graph.block());
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
