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

// Splits If output `k` of `node` (a tuple) into its elements.
void split_tuple_output(Node* node, size_t k) {
  auto tuple = node->output(k)->type()->expect<c10::TupleType>();
  const size_t n = tuple->elements().size();
  for (Block* block : node->blocks()) {
    Value* whole = block->outputs()[k];
    torch::jit::WithInsertPoint guard(block->return_node());
    Node* unpack = block->owningGraph()->createTupleUnpack(whole);
    block->owningGraph()->insertNode(unpack);
    block->eraseOutput(k);
    for (size_t e = 0; e < n; ++e) block->insertOutput(k + e, unpack->output(e));
  }
  std::vector<Value*> elements;
  for (size_t e = 0; e < n; ++e) {
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

bool lower_block(Block* block) {
  bool changed = false;
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) changed = lower_block(sub) || changed;
    if (node->kind() != c10::prim::If) continue;
    for (size_t k = 0; k < node->outputs().size();) {
      if (node->output(k)->type()->kind() == c10::TypeKind::TupleType) {
        split_tuple_output(node, k);
        changed = true;
      } else {
        ++k;
      }
    }
  }
  return changed;
}

}  // namespace

bool LowerBranchTuples(torch::jit::Graph& graph) {
  return lower_block(graph.block());
}

}  // namespace torchonnx::passes
