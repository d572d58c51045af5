#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <unordered_map>

#include "common/jit_util.h"
#include "frontend/forward.h"
#include "passes/passes.h"

// libtorch 1.13 declares this constructor in torch/csrc/jit/ir/scope.h but does not export it from
// libtorch_cpu.so (no TORCH_API); the linear-time inliner below needs it to give inlined nodes the
// call stacks torch::jit::Inline gives them. Defined as libtorch defines it.
torch::jit::ModuleInstanceInfo::ModuleInstanceInfo(c10::ClassTypePtr module_type,
                                                   std::string instance_name)
    : module_type_(std::move(module_type)), instance_name_(std::move(instance_name)) {}

namespace torchonnx::frontend {

namespace {

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

}  // namespace

void inline_graph(torch::jit::Graph& graph) {
  inline_calls(graph.block());
  wrap_scalar_constants(graph.block());  // Note [Scalars recorded as tensors]
}

}  // namespace torchonnx::frontend
