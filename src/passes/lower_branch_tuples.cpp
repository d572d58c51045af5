// Note [Tuples out of branches]
// A scripted function with two returns of a tuple (`if c: return a, b` ... `return None, b`)
// leaves an If whose output is the tuple; torch::jit::LowerSimpleTuples only forwards a tuple
// that is built and unpacked in one block. Here each tuple output of an If becomes one output
// per element: each branch unpacks its tuple at its end, and after the If the tuple is built
// again from the new outputs, so that LowerSimpleTuples can forward the elements to their
// readers. Nested tuples take one more round each.
//
//   %t = prim::If(%c)                           %a, %b = prim::If(%c)
//     block0(): -> (%t0)               ⇒          block0(): %a0, %b0 = prim::TupleUnpack(%t0)
//     block1(): -> (%t1)                                   -> (%a0, %b0)
//                                                 block1(): ... -> (%a1, %b1)
//                                              %t = prim::TupleConstruct(%a, %b)
#include <torch/csrc/jit/ir/ir.h>

#include <vector>

#include "passes/passes.h"

namespace torchonnx::passes {

namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// Inserts `tuple`'s elements as outputs k, k+1, ... of `block`, in place of output k (the tuple).
void split_block_output(Block* block, size_t k) {
  Value* whole = block->outputs()[k];
  const size_t n = whole->type()->expectRef<c10::TupleType>().elements().size();
  torch::jit::WithInsertPoint guard(block->return_node());
  Node* unpack = block->owningGraph()->insertNode(block->owningGraph()->createTupleUnpack(whole));
  block->eraseOutput(k);
  for (size_t e = 0; e < n; ++e) block->insertOutput(k + e, unpack->output(e));
}

// Replaces `node`'s output k (a tuple) by one output per element, k, k+1, ..., and builds the
// tuple again after the node for its readers.
void split_node_output(Node* node, size_t k, const c10::TupleTypePtr& tuple) {
  std::vector<Value*> elements;
  for (size_t e = 0; e < tuple->elements().size(); ++e) {
    elements.push_back(node->insertOutput(k + 1 + e)->setType(tuple->elements()[e]));
  }
  Value* old = node->output(k);
  torch::jit::WithInsertPoint guard(node->next());
  Node* construct = node->owningGraph()->createTuple(elements, tuple->schema() ? tuple : nullptr);
  node->owningGraph()->insertNode(construct);
  construct->output()->setType(old->type());
  old->replaceAllUsesWith(construct->output());
  node->eraseOutput(k);
}

// Splits carried value `k` of the prim::Loop `loop` (a tuple) into its elements.
void split_loop_carry(Node* loop, size_t k) {
  auto tuple = loop->output(k)->type()->expect<c10::TupleType>();
  const size_t n = tuple->elements().size();
  torch::jit::Graph* graph = loop->owningGraph();
  // The initial value (input 2 + k: after the trip count and the condition).
  {
    torch::jit::WithInsertPoint guard(loop);
    Node* unpack = graph->insertNode(graph->createTupleUnpack(loop->input(2 + k)));
    loop->removeInput(2 + k);
    for (size_t e = 0; e < n; ++e) loop->insertInput(2 + k + e, unpack->output(e));
  }
  // The body's input (1 + k: after the iteration number) and output (1 + k: after the condition).
  Block* body = loop->blocks()[0];
  std::vector<Value*> elements;
  for (size_t e = 0; e < n; ++e) {
    elements.push_back(body->insertInput(2 + k + e)->setType(tuple->elements()[e]));
  }
  Node* construct = graph->createTuple(elements, tuple->schema() ? tuple : nullptr);
  construct->insertAfter(body->param_node());
  construct->output()->setType(tuple);
  body->inputs()[1 + k]->replaceAllUsesWith(construct->output());
  body->eraseInput(1 + k);
  split_block_output(body, 1 + k);
  split_node_output(loop, k, tuple);
}

// Splits If output `k` of `node` (a tuple) into its elements.
void split_tuple_output(Node* node, size_t k) {
  auto tuple = node->output(k)->type()->expect<c10::TupleType>();
  for (Block* block : node->blocks()) split_block_output(block, k);
  split_node_output(node, k, tuple);
}

bool lower_block(Block* block) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) changed = lower_block(sub) || changed;
    if (node->kind() != c10::prim::If && node->kind() != c10::prim::Loop) continue;
    for (size_t k = 0; k < node->outputs().size();) {
      if (node->output(k)->type()->kind() == c10::TypeKind::TupleType) {
        if (node->kind() == c10::prim::If) {
          split_tuple_output(node, k);
        } else {
          split_loop_carry(node, k);
        }
        changed = true;
      } else {
        ++k;
      }
    }
  }
  return changed;
}

// The ListConstruct that makes `block`'s output k when the list is the block's own (made in it,
// read by nothing else): a fresh list, which no later mutation can reach.
Node* own_list_construct(Block* block, size_t k) {
  Value* v = block->outputs()[k];
  Node* node = v->node();
  if (node->kind() != c10::prim::ListConstruct || node->owningBlock() != block ||
      v->uses().size() != 1) {
    return nullptr;
  }
  return node;
}

// Splits If output `k` (a list of tensors both branches build with `n` elements) into its elements.
void split_list_output(Node* node, size_t k, size_t n) {
  auto list = node->output(k)->type()->expect<c10::ListType>();
  for (Block* block : node->blocks()) {
    Node* construct = own_list_construct(block, k);
    block->eraseOutput(k);
    for (size_t e = 0; e < n; ++e) block->insertOutput(k + e, construct->input(e));
  }
  std::vector<Value*> elements;
  for (size_t e = 0; e < n; ++e) {
    elements.push_back(node->insertOutput(k + 1 + e)->setType(list->getElementType()));
  }
  Value* old = node->output(k);
  torch::jit::WithInsertPoint guard(node->next());
  Node* construct = node->owningGraph()->createList(list->getElementType(), elements);
  node->owningGraph()->insertNode(construct);
  old->replaceAllUsesWith(construct->output());
  node->eraseOutput(k);
}

bool lower_branch_lists(Block* block) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) changed = lower_branch_lists(sub) || changed;
    if (node->kind() != c10::prim::If) continue;
    for (size_t k = 0; k < node->outputs().size(); ++k) {
      auto list = node->output(k)->type()->cast<c10::ListType>();
      if (!list || list->getElementType()->kind() != c10::TypeKind::TensorType) continue;
      Node* a = own_list_construct(node->blocks()[0], k);
      Node* b = own_list_construct(node->blocks()[1], k);
      if (!a || !b || a->inputs().size() != b->inputs().size()) continue;
      const size_t n = a->inputs().size();
      split_list_output(node, k, n);
      k += n - 1;  // past the elements (n == 0: the list built again after the If)
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool LowerBranchTuples(torch::jit::Graph& graph) {
  return lower_block(graph.block());
}

// Note [Lists out of branches]
// An If whose branches both return a list of tensors they build there with the same number of
// elements (`r = [a, b] if c else [d, e]`, or a helper's tuple holding a list, split by
// LowerBranchTuples and forwarded by LowerSimpleTuples) returns the elements instead, and the list
// is built again after the If: its length is known at export, so it needs no ONNX sequence (none
// exists before opset 11, and a sequence output is not a tensor output).
bool LowerBranchLists(torch::jit::Graph& graph) {
  return lower_branch_lists(graph.block());
}

// Note [Tuple refinements]
// `if hx is None: hx = (zeros, zeros)` in a scripted nn.LSTMCell leaves the tuple behind a
// prim::unchecked_cast (Optional[Tuple] refined to Tuple) in the other branch; once the branch is
// decided (a tuple is never None), the cast stands between the TupleConstruct and its
// TupleIndex/TupleUnpack readers, and LowerSimpleTuples forwards only direct readers. A cast of a
// value that is a tuple already does nothing: its readers read the value.
void ForwardTupleCasts(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end(); ++it) {
    Node* node = *it;
    for (Block* sub : node->blocks()) ForwardTupleCasts(sub);
    if (node->kind() == c10::prim::unchecked_cast &&
        node->input()->type()->kind() == c10::TypeKind::TupleType &&
        node->input()->type()->isSubtypeOf(*node->output()->type())) {
      node->output()->replaceAllUsesWith(node->input());
      it.destroyCurrent();
    }
  }
}

}  // namespace torchonnx::passes
