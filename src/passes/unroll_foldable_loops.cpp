// Note [Unrolling foldable loops]
// Scripted code builds small lists and numbers in loops whose trip count is known once the input
// ranks are: F.interpolate's `[scale_factor for _ in range(dim)]` with dim = x.dim() - 2, a
// `for i in range(len(shape))` that sums sizes. Such a loop computes no tensor, so its result is
// a constant of the export; left a Loop, it would carry a list that ONNX can only hold as a
// sequence, and the op reading it (Resize's scales) would get a run-time value where a constant
// is exact. After the first type propagation has made the trip count a constant, each such loop
// is replaced by its body repeated trip-count times, and type propagation runs again to fold the
// repeated bodies.
//
//   %l = prim::ListConstruct()                         %l = prim::ListConstruct()
//   %l2 = prim::Loop(%2, %true, %l)          ⇒          %a = aten::append(%l, %s)  (iteration 0)
//     block0(%i, %l1):                                 %l1 = aten::list(%l)
//       %a = aten::append(%l1, %s)                     %b = aten::append(%l1, %s) (iteration 1)
//       %l3 = aten::list(%l1)                          %l2 = aten::list(%l1)
//       -> (%true, %l3)
//
// A loop is unrolled when it is a `for` loop (constant true conditions) with a constant trip count
// of at most kMaxTrips, and either no value in it (carried, or made in its body and nested blocks)
// is or holds a tensor, or it iterates over a constant list (`for p in [[0, 1], [1, 0]]`: its body
// reads the list's element at the iteration number), whose elements are then constants (a pad
// list, a shape) where the ops need them, or it carries a value that starts as None and becomes
// a tensor (`prev: Optional[Tensor] = None` assigned in the body; torch.onnx unrolls it too):
// each copy of the body then sees None or a tensor, and its `prev is not None` folds. Other
// loops over tensors stay ONNX Loops, with their run-time trip counts.
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/passes.h"

namespace torchonnx::passes {

namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

constexpr int64_t kMaxTrips = 256;

bool holds_tensor(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) return true;
  for (const auto& contained : type->containedTypes()) {
    if (holds_tensor(contained)) return true;
  }
  return false;
}

bool block_holds_tensor(const Block* block) {
  for (const Value* v : block->inputs()) {
    if (holds_tensor(v->type())) return true;
  }
  for (const Node* node : block->nodes()) {
    for (const Value* v : node->outputs()) {
      if (holds_tensor(v->type())) return true;
    }
    for (const Block* sub : node->blocks()) {
      if (block_holds_tensor(sub)) return true;
    }
  }
  return false;
}

// Whether `v` is a list known at export: a constant, or a prim::ListConstruct of such values.
bool is_constant_list(const Value* v) {
  if (v->type()->kind() != c10::TypeKind::ListType) return false;
  const Node* node = v->node();
  if (node->kind() == c10::prim::Constant) return true;
  if (node->kind() != c10::prim::ListConstruct) return false;
  for (const Value* element : node->inputs()) {
    const bool constant = element->node()->kind() == c10::prim::Constant;
    if (!constant && !is_constant_list(element)) return false;
  }
  return true;
}

// Whether `body` reads an element of a constant list at its iteration number (`for p in <list>`).
bool iterates_constant_list(const Block* body) {
  for (const torch::jit::Use& use : body->inputs()[0]->uses()) {
    if (use.user->kind() == c10::aten::__getitem__ && use.offset == 1 &&
        is_constant_list(use.user->input(0))) {
      return true;
    }
  }
  return false;
}

// Whether the loop carries a value that starts as None and may become something else
// (`prev: Optional[Tensor] = None`, assigned in the body): unrolled, each iteration sees what the
// value is by then, and its `is None` checks and refinements fold.
bool carries_none_to_optional(const Node* loop) {
  for (size_t k = 2; k < loop->inputs().size(); ++k) {
    const Value* initial = loop->input(k);
    if (initial->type()->kind() == c10::TypeKind::NoneType ||
        (initial->node()->kind() == c10::prim::Constant &&
         torch::jit::toIValue(initial)->isNone())) {
      if (loop->output(k - 2)->type()->kind() == c10::TypeKind::OptionalType) return true;
    }
  }
  return false;
}

bool is_constant_true(const Value* v) {
  auto c = torch::jit::toIValue(v);
  return c && c->isBool() && c->toBool();
}

// The loop's trip count when it is a scalar `for` loop to unroll.
std::optional<int64_t> unrollable_trips(const Node* loop) {
  auto trips = torch::jit::toIValue(loop->input(0));
  if (!trips || !trips->isInt()) return std::nullopt;
  const int64_t n = trips->toInt();
  const Block* body = loop->blocks()[0];
  if (n < 0 || n > kMaxTrips || !is_constant_true(loop->input(1)) ||
      !is_constant_true(body->outputs()[0])) {
    return std::nullopt;
  }
  if (iterates_constant_list(body) || carries_none_to_optional(loop)) return n;
  // The body's inputs have the carried values' types: block_holds_tensor sees them.
  if (block_holds_tensor(body)) return std::nullopt;
  return n;
}

// Replaces `loop` by `trips` copies of its body, inserted before it.
void unroll(Graph& graph, Node* loop, int64_t trips) {
  Block* body = loop->blocks()[0];
  torch::jit::WithInsertPoint guard(loop);
  std::vector<Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
  for (int64_t i = 0; i < trips; ++i) {
    std::unordered_map<Value*, Value*> env;
    env[body->inputs()[0]] = graph.insertConstant(i);
    for (size_t k = 0; k < carried.size(); ++k) env[body->inputs()[1 + k]] = carried[k];
    auto lookup = [&](Value* v) {
      auto it = env.find(v);
      return it == env.end() ? v : it->second;
    };
    for (Node* node : body->nodes()) {
      Node* copy = graph.insertNode(graph.createClone(node, lookup));
      for (size_t j = 0; j < node->outputs().size(); ++j) env[node->output(j)] = copy->output(j);
    }
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = lookup(body->outputs()[1 + k]);
  }
  for (size_t k = 0; k < carried.size(); ++k) loop->output(k)->replaceAllUsesWith(carried[k]);
  loop->destroy();
}

// Whether `v` is None: a None constant or a value of type None.
bool is_none(const Value* v) {
  if (v->type()->kind() == c10::TypeKind::NoneType) return true;
  auto c = torch::jit::toIValue(v);
  return c && c->isNone();
}

// Whether `v` is None whenever the values in `assumed` are: a None, its refinement
// (unchecked_cast), an If output None in both branches, a Loop output that starts None and that
// the body keeps None.
bool stays_none(Value* v, std::unordered_set<Value*>& assumed) {
  if (is_none(v) || assumed.count(v)) return true;
  Node* node = v->node();
  if (node->kind() == c10::prim::unchecked_cast) return stays_none(node->input(), assumed);
  const size_t k = v->offset();
  if (node->kind() == c10::prim::If) {
    return stays_none(node->blocks()[0]->outputs()[k], assumed) &&
           stays_none(node->blocks()[1]->outputs()[k], assumed);
  }
  if (node->kind() == c10::prim::Loop) {
    if (!stays_none(node->input(2 + k), assumed)) return false;
    Block* body = node->blocks()[0];
    assumed.insert(body->inputs()[1 + k]);
    return stays_none(body->outputs()[1 + k], assumed);
  }
  return false;
}

// Note [Values that stay None]: a loop that carries a value which is None on entry and that its
// body keeps None (`prev: Optional[Tensor] = None` assigned only under `if prev is not None`, or
// in a loop of 0 trips) carries nothing: its reads become None, which folds their `is None` and
// removes the branches that could not run. Likewise an If output that is None in both branches.
// Nodes are visited before their blocks, so an outer loop's finding reaches the inner ones.
bool drop_none_carried(Graph& graph, Node* node) {
  bool changed = false;
  Value* none = nullptr;
  auto none_value = [&] {
    if (!none) {
      torch::jit::WithInsertPoint guard(graph.block()->nodes().front());
      none = graph.insertConstant(c10::IValue());
    }
    return none;
  };
  if (node->kind() == c10::prim::Loop) {
    Block* body = node->blocks()[0];
    for (size_t k = node->outputs().size(); k-- > 0;) {
      Value* in = body->inputs()[1 + k];
      std::unordered_set<Value*> assumed{in};
      if (!is_none(node->input(2 + k)) || !stays_none(body->outputs()[1 + k], assumed)) continue;
      in->replaceAllUsesWith(none_value());
      node->output(k)->replaceAllUsesWith(none_value());
      body->eraseOutput(1 + k);
      body->eraseInput(1 + k);
      node->removeInput(2 + k);
      node->eraseOutput(k);
      changed = true;
    }
  } else if (node->kind() == c10::prim::If) {
    for (size_t k = node->outputs().size(); k-- > 0;) {
      std::unordered_set<Value*> assumed;
      if (!stays_none(node->output(k), assumed)) continue;
      node->output(k)->replaceAllUsesWith(none_value());
      for (Block* b : node->blocks()) b->eraseOutput(k);
      node->eraseOutput(k);
      changed = true;
    }
  }
  return changed;
}

// Unrolls the foldable loops of `block` and its nested blocks; whether any was.
bool unroll_block(Graph& graph, Block* block) {
  bool changed = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it;
    ++it;  // `node` may be destroyed
    changed = drop_none_carried(graph, node) || changed;
    for (Block* sub : node->blocks()) changed = unroll_block(graph, sub) || changed;
    if (node->kind() != c10::prim::Loop) continue;
    if (auto trips = unrollable_trips(node)) {
      unroll(graph, node, *trips);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool UnrollFoldableLoops(Graph& graph) {
  return unroll_block(graph, graph.block());
}

}  // namespace torchonnx::passes
