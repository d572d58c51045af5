// Note [Mutation in control flow]
// After RemoveInplaceOps and FunctionalizeLists every write makes a new value (x → x2), and reads
// after the write must read x2. In straight-line code that is Value::replaceAllUsesAfterNodeWith.
// When the write is inside a loop body or an if-branch and x is defined outside it, the new value
// must leave the block: as an output of both branches of an If, as a loop-carried value of a Loop
// (reads in the body, also those before the write, read the carried value). That is SSA
// construction for one variable, done here as TorchScript's frontend does it: x becomes a
// variable (prim::Store after its definition and after the write, prim::Load before each read),
// control-flow nodes get inputs/outputs for variables stored inside them, then loads and stores
// are resolved against the stores in scope and erased (ResolveVariables, which also makes module
// attributes written in loops and branches values: Note [Module state written in forward]).
//
//   %x = ...                                  %x = ...
//   prim::Loop(%n, %true)                     %x3 = prim::Loop(%n, %true, %x)
//     block0(%i):                     ⇒         block0(%i, %x1):
//       %y = aten::add(%x, %i)                    %y = aten::add(%x1, %i)
//       %x2 = aten::mul(%y, 2)   # x *= 2         %x2 = aten::mul(%y, 2)
//       -> (%true)                                -> (%true, %x2)
//   return (%x)                               return (%x3)
#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "common/jit_util.h"
#include "passes/passes.h"

namespace torchonnx::passes {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

namespace {

// Variables stored in a block and the blocks it encloses, innermost scope first.
struct Scope {
  std::shared_ptr<Scope> parent;
  std::set<std::string> stored;
  bool defines(const std::string& name) const {
    return stored.count(name) || (parent && parent->defines(name));
  }
};

struct SsaBuilder {
  Graph& graph;
  const std::map<std::string, c10::TypePtr>& types;
  const std::function<Value*(const std::string&)>& at_entry;
  std::unordered_map<std::string, Value*> entry_values;

  Value* load_before(Node* node, const std::string& name) {
    return graph.createLoad(name, types.at(name))->insertBefore(node)->output();
  }
  void store_after(Node* node, Value* v, const std::string& name) {
    graph.createStore(name, v)->insertAfter(node);
  }

  // Adds the inputs and outputs control-flow nodes need for the variables stored inside them;
  // returns the variables `block` stores (directly or in its control flow).
  std::set<std::string> add_control_flow(Block* block, const std::shared_ptr<Scope>& parent) {
    auto scope = std::make_shared<Scope>(Scope{parent, {}});
    for (Node* node : block->nodes()) {
      if (node->kind() == c10::prim::Store) {
        scope->stored.insert(node->s(c10::attr::name));
      } else if (node->kind() == c10::prim::If) {
        std::set<std::string> names;
        for (Block* b : node->blocks()) {
          auto inner = add_control_flow(b, scope);
          names.insert(inner.begin(), inner.end());
        }
        for (const auto& name : names) {
          if (!scope->defines(name)) continue;  // local to the branch
          for (Block* b : node->blocks()) {
            b->registerOutput(load_before(b->return_node(), name));
          }
          store_after(node, node->addOutput()->setType(types.at(name)), name);
          scope->stored.insert(name);
        }
      } else if (node->kind() == c10::prim::Loop) {
        Block* body = node->blocks()[0];
        auto names = add_control_flow(body, scope);
        for (const auto& name : names) {
          if (!scope->defines(name)) continue;  // local to the body
          node->addInput(load_before(node, name));
          Value* carried = body->addInput()->setType(types.at(name));
          graph.createStore(name, carried)->insertAfter(body->param_node());
          body->registerOutput(load_before(body->return_node(), name));
          store_after(node, node->addOutput()->setType(types.at(name)), name);
          scope->stored.insert(name);
        }
      } else {
        for (Block* b : node->blocks()) add_control_flow(b, scope);
      }
    }
    return scope->stored;
  }

  // The value a load reads when no store reaches it: the variable's value at entry.
  Value* entry_value(const std::string& name) {
    Value*& value = entry_values[name];
    if (value == nullptr) {
      TORCH_INTERNAL_ASSERT(at_entry, "ResolveVariables: '", name, "' is loaded before a store");
      value = at_entry(name);
    }
    return value;
  }

  // Replaces each load by the value last stored in scope; erases loads and stores.
  void erase_loads_stores(Block* block, std::unordered_map<std::string, Value*> env) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it++;
      if (node->kind() == c10::prim::Store) {
        env[node->s(c10::attr::name)] = node->input();
        node->destroy();
      } else if (node->kind() == c10::prim::Load) {
        auto stored = env.find(node->s(c10::attr::name));
        node->output()->replaceAllUsesWith(
            stored != env.end() ? stored->second : entry_value(node->s(c10::attr::name)));
        node->destroy();
      } else {
        for (Block* b : node->blocks()) erase_loads_stores(b, env);
      }
    }
  }
};

}  // namespace

void ReplaceUsesAfter(Graph& graph, Value* old_value, Value* new_value, Node* anchor) {
  if (old_value == new_value) return;
  if (old_value->node()->owningBlock() == anchor->owningBlock()) {
    old_value->replaceAllUsesAfterNodeWith(anchor, new_value);
    return;
  }
  // Crosses blocks: SSA construction for one variable (see the note).
  const std::string name = "torchonnx.mutated";
  c10::TypePtr type = old_value->type();
  if (type->cast<c10::TensorType>()) type = c10::TensorType::get();
  auto uses = old_value->uses();
  for (const auto& use : uses) {
    Value* load = graph.createLoad(name, type)->insertBefore(use.user)->output();
    use.user->replaceInput(use.offset, load);
  }
  if (old_value->node()->kind() == c10::prim::Param) {
    Block* block = old_value->node()->owningBlock();
    graph.createStore(name, old_value)->insertAfter(block->param_node());
  } else {
    graph.createStore(name, old_value)->insertAfter(old_value->node());
  }
  graph.createStore(name, new_value)->insertAfter(anchor);
  ResolveVariables(graph, {{name, type}});
}

void ResolveVariables(Graph& graph, const std::map<std::string, c10::TypePtr>& types,
                      const std::function<Value*(const std::string&)>& at_entry) {
  SsaBuilder ssa{graph, types, at_entry, {}};
  std::shared_ptr<Scope> entry;
  if (at_entry) {
    entry = std::make_shared<Scope>();
    for (const auto& [name, type] : types) entry->stored.insert(name);
  }
  ssa.add_control_flow(graph.block(), entry);
  ssa.erase_loads_stores(graph.block(), {});
}

namespace {

void collect_list_writes(Block* block, std::vector<Node*>& out) {
  for (Node* node : block->nodes()) {
    for (Block* b : node->blocks()) collect_list_writes(b, out);
    if (node->inputs().empty() || !node->input(0)->type()->cast<c10::ListType>()) continue;
    if (writes_input(node, 0)) out.push_back(node);
  }
}

}  // namespace

void FunctionalizeLists(Graph& graph) {
  std::vector<Node*> writes;
  collect_list_writes(graph.block(), writes);
  for (Node* node : writes) {
    Value* list = node->input(0);
    torch::jit::WithInsertPoint guard(node->next());
    Value* updated = graph.insert(c10::aten::list, {list});
    updated->node()->setSourceRange(node->sourceRange());
    updated->setType(list->type());
    ReplaceUsesAfter(graph, list, updated, updated->node());
  }
}

}  // namespace torchonnx::passes
