// If and Loop in the type propagation (Note [Types through control flow]).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

#include "passes/type_propagation/propagator.h"

namespace torchonnx::passes::type_propagation {

// Note [Types through control flow]
// An If's outputs have the type both branches agree on; a Loop's carried values have the type
// that holds for every iteration, found by running the body until the types of its outputs
// match those of its inputs (a tensor that grows each iteration keeps its dtype and rank, its
// sizes become unknown: an approximate value). Folding stays off until that fixed point, so no
// size seen in one iteration becomes a constant.
void Propagator::visit_if(Node* node) {
  for (auto* block : node->blocks()) run_block(block);
  for (size_t k = 0; k < node->outputs().size(); ++k) {
    merge_into(node->outputs()[k], node->blocks()[0]->outputs()[k],
               node->blocks()[1]->outputs()[k]);
  }
}

// Note [Loops of a known trip count]
// A `for` loop whose trip count is known at export (a constant, not varying with the dynamic axes)
// and that never breaks (its condition is the constant true) ends with values the fixed point
// cannot give: a list that gets one append per iteration has that many elements, a state tensor
// its sizes of the last iteration. Such a loop is also run iteration by iteration, each carried
// value handed to the next, and its tensor and list outputs take what the last iteration made
// (a stacked RNN's second layer then sees the first layer's output sizes). The body's own values
// keep the fixed point's types, which hold for every iteration; so do carried numbers (never
// folded, as before). A budget of 50k node visits per propagation (~1 s of meta evaluation)
// bounds the cost of long loops; past it a loop takes the fixed point alone.
std::optional<int64_t> Propagator::exact_trip_count(Node* node) {
  Value* trip = node->inputs()[0];
  auto found = env.find(trip);
  if (found == env.end() || !found->second.isInt() || !concrete.count(trip) || shadow.count(trip) ||
      forced_varies(trip)) {
    return std::nullopt;
  }
  torch::jit::Block* body = node->blocks()[0];
  auto always = [](Value* cond) {
    auto c = torch::jit::toIValue(cond);
    return c && c->isBool() && c->toBool();
  };
  if (!always(node->inputs()[1]) || !always(body->outputs()[0])) return std::nullopt;
  int64_t nodes = 0;
  std::function<void(torch::jit::Block*)> count = [&](torch::jit::Block* b) {
    for (Node* n : b->nodes()) {
      ++nodes;
      for (torch::jit::Block* sub : n->blocks()) count(sub);
    }
  };
  count(body);
  const int64_t trips = std::max<int64_t>(0, found->second.toInt());
  if (trips * std::max<int64_t>(nodes, 1) > exact_loop_budget) return std::nullopt;
  exact_loop_budget -= trips * std::max<int64_t>(nodes, 1);
  return trips;
}

// The carried values after `trips` iterations, each recorded from the last; nullopt when one is
// not known exactly on the way (no facts, approximate, maybe None).
std::optional<std::vector<c10::IValue>> Propagator::run_iterations(Node* node, int64_t trips) {
  torch::jit::Block* body = node->blocks()[0];
  const size_t carried = node->outputs().size();
  std::vector<c10::IValue> values;
  std::vector<bool> known;
  for (size_t k = 0; k < carried; ++k) {
    Value* init = node->inputs()[2 + k];
    auto found = env.find(init);
    if (found == env.end() || approximate.count(init) || maybe_none.count(init)) {
      return std::nullopt;
    }
    values.push_back(found->second);
    known.push_back(concrete.count(init) > 0);
  }
  const bool saved_fold = fold;
  fold = false;
  bool exact = true;
  for (int64_t i = 0; i < trips && exact; ++i) {
    record(body->inputs()[0], c10::IValue(i), /*is_concrete=*/true);
    for (size_t k = 0; k < carried; ++k) {
      Value* in = body->inputs()[1 + k];
      record(in, values[k].isList() ? copy_list(values[k]) : values[k], known[k]);
    }
    run_block(body);
    for (size_t k = 0; k < carried && exact; ++k) {
      Value* out = body->outputs()[1 + k];
      auto found = env.find(out);
      exact = found != env.end() && !approximate.count(out) && !maybe_none.count(out);
      if (exact) {
        values[k] = found->second.isList() ? copy_list(found->second) : found->second;
        known[k] = concrete.count(out) > 0;
      }
    }
  }
  fold = saved_fold;
  if (!exact) return std::nullopt;
  return values;
}

void Propagator::visit_loop(Node* node) {
  torch::jit::Block* body = node->blocks()[0];
  const size_t carried = node->outputs().size();
  std::optional<std::vector<c10::IValue>> last;
  if (auto trips = exact_trip_count(node)) last = run_iterations(node, *trips);
  // The iteration number and carried ints/floats change every iteration.
  record(body->inputs()[0], c10::IValue(int64_t{1}), false, true);
  for (size_t k = 0; k < carried; ++k) {
    Value* init = node->inputs()[2 + k];
    Value* in = body->inputs()[1 + k];
    auto found = env.find(init);
    if (found == env.end()) {
      forget(in);
      continue;
    }
    // Scalars and list lengths change with the iteration: never known, never folded.
    bool scalar = found->second.isInt() || found->second.isDouble() || found->second.isBool();
    bool list = found->second.isList();
    c10::IValue start = scalar ? *placeholder(in) : list ? copy_list(found->second) : found->second;
    if (maybe_none.count(init)) {
      record_maybe_none(in, start);  // Note [Maybe None]
      continue;
    }
    record(in, start, false, scalar || list || approximate.count(init) > 0);
    copy_shadow(in, init);
  }
  const bool saved_fold = fold;
  fold = false;
  constexpr int kMaxPasses = 4;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    run_block(body);
    bool stable = true;
    for (size_t k = 0; k < carried; ++k) {
      Value* in = body->inputs()[1 + k];
      Value* out = body->outputs()[1 + k];
      if (same_signature(in, out)) continue;
      stable = false;
      widen(in, out);
    }
    if (stable) break;
    if (pass == kMaxPasses - 1) {
      for (size_t k = 0; k < carried; ++k) {
        if (!same_signature(body->inputs()[1 + k], body->outputs()[1 + k])) {
          forget(body->inputs()[1 + k]);
        }
      }
    }
  }
  fold = saved_fold;
  if (fold) run_block(body);  // fold what does not depend on the iteration
  for (size_t k = 0; k < carried; ++k) {
    Value* in = body->inputs()[1 + k];
    Value* out = node->outputs()[k];
    if (auto found = env.find(in); found != env.end() && maybe_none.count(in)) {
      record_maybe_none(out, found->second);
    } else if (found != env.end()) {
      const c10::IValue* exact = last ? &(*last)[k] : nullptr;
      if (exact && (exact->isTensor() || exact->isList())) {
        record(out, *exact, false);  // Note [Loops of a known trip count]
      } else {
        record(out, found->second, false, approximate.count(in) > 0);
      }
      // Widening drops the shadow of a carried value: the initial value's then says it varies.
      copy_shadow(out, in);
      if (!shadow.count(out)) copy_shadow(out, node->inputs()[2 + k]);
    } else {
      forget(out);
    }
  }
}

// What must agree between iterations: dtype and sizes of a tensor (rank for an approximate
// one), the element signature of a list; scalars are placeholders already.
std::string Propagator::signature(const c10::IValue& v, bool approx) const {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return "undefined";
    std::string s = std::string(c10::toString(t.scalar_type())) + "/" + std::to_string(t.dim());
    if (!approx) {
      for (int64_t d : t.sizes()) s += "," + std::to_string(d);
    }
    return s;
  }
  if (v.isList()) {
    auto list = v.toListRef();
    return "[" + (list.empty() ? std::string() : signature(list[0], true)) + "]";
  }
  if (v.isTuple()) {
    std::string s = "(";
    for (const auto& e : v.toTupleRef().elements()) s += signature(e, approx) + ";";
    return s + ")";
  }
  return v.tagKind();
}

// Whether the carried input `in` already covers the body's output `out`.
bool Propagator::same_signature(Value* in, Value* out) const {
  auto ei = env.find(in), eo = env.find(out);
  if (ei == env.end() || eo == env.end()) return eo == env.end();
  // Note [Maybe None]: a carried value that may be None covers None and what it is otherwise.
  if (maybe_none.count(out) && !maybe_none.count(in)) return false;
  if (maybe_none.count(in) && eo->second.isNone()) return true;
  const bool approx = approximate.count(in) > 0;
  if (!approx && approximate.count(out)) return false;  // exact sizes cannot cover unknown ones
  return signature(ei->second, approx) == signature(eo->second, approx);
}

// Makes the carried input `in` cover `out` too: the same dtype and rank, sizes unknown.
void Propagator::widen(Value* in, Value* out) {
  auto found = env.find(out);
  if (found == env.end()) {
    forget(in);
    return;
  }
  if (!env.count(in)) {  // an uninitialized initial value (a return inside the loop)
    record(in, found->second, false, true);
    return;
  }
  const c10::IValue& cur = env.at(in);
  const c10::IValue& next = found->second;
  // None in one iteration, something else in another (Note [Maybe None]).
  if (cur.isNone() != next.isNone() || maybe_none.count(out)) {
    const c10::IValue some = cur.isNone() ? next : cur;
    record_maybe_none(in, some);
    return;
  }
  if (cur.isTensor() && next.isTensor() &&
      (!cur.toTensor().defined() || !next.toTensor().defined() ||
       cur.toTensor().scalar_type() != next.toTensor().scalar_type() ||
       cur.toTensor().dim() != next.toTensor().dim())) {
    forget(in);
    return;
  }
  // A list keeps the elements of the longer one (an empty list learns its element type).
  c10::IValue widened = cur.isList() && cur.toListRef().empty() ? copy_list(next) : cur;
  record(in, widened, false, true);
}

// The type of a control-flow output that is `a` or `b`; it varies with the dynamic axes when
// either does.
void Propagator::merge_into(Value* out, Value* a, Value* b) {
  merge_values(out, a, b);
  if (!env.count(out)) return;
  if (a->node()->kind() != c10::prim::Uninitialized) copy_shadow(out, a);
  if (!shadow.count(out) && b->node()->kind() != c10::prim::Uninitialized) copy_shadow(out, b);
}

void Propagator::merge_values(Value* out, Value* a, Value* b) {
  auto ea = env.find(a), eb = env.find(b);
  // A branch that raises leaves its outputs uninitialized: the other branch decides.
  if (a->node()->kind() == c10::prim::Uninitialized) ea = env.end();
  if (b->node()->kind() == c10::prim::Uninitialized) eb = env.end();
  if (ea == env.end() && eb == env.end()) {
    forget(out);
    return;
  }
  if (ea == env.end() || eb == env.end()) {
    auto& only = ea == env.end() ? *eb : *ea;
    if (maybe_none.count(only.first)) {
      record_maybe_none(out, only.second);
      return;
    }
    record(out, only.second, false, approximate.count(only.first) > 0);
    return;
  }
  // None on one path, something else on the other, or either maybe None (Note [Maybe None]).
  if (ea->second.isNone() != eb->second.isNone() || maybe_none.count(a) || maybe_none.count(b)) {
    record_maybe_none(out, ea->second.isNone() ? eb->second : ea->second);
    return;
  }
  // A list from either branch may have either length.
  const bool approx = approximate.count(a) || approximate.count(b) || ea->second.isList();
  if (signature(ea->second, approx) == signature(eb->second, approx) &&
      !(ea->second.isInt() || ea->second.isDouble() || ea->second.isBool())) {
    // Tensors of unknown sizes: the larger placeholder stands for both (see below).
    const bool b_larger = approx && ea->second.isTensor() && eb->second.isTensor() &&
                          ea->second.toTensor().defined() && eb->second.toTensor().defined() &&
                          eb->second.toTensor().numel() > ea->second.toTensor().numel();
    record(out, b_larger ? eb->second : ea->second, false, approx);
    return;
  }
  if (ea->second.isTensor() && eb->second.isTensor()) {
    const at::Tensor &ta = ea->second.toTensor(), &tb = eb->second.toTensor();
    if (ta.defined() && tb.defined() && ta.scalar_type() == tb.scalar_type() &&
        ta.dim() == tb.dim()) {
      // The larger one stands for both: an empty placeholder (`if x.numel() == 0: return
      // torch.empty(0)`) would make later placeholders disagree (split sizes [0] of a tensor
      // of 1 row).
      record(out, tb.numel() > ta.numel() ? eb->second : ea->second, false, true);
      return;
    }
    forget(out);
    if (ta.defined() && tb.defined() && ta.scalar_type() == tb.scalar_type()) {
      // Branches of different ranks: the dtype both give, the rank unknown.
      out->setType(c10::TensorType::get()->withScalarType(ta.scalar_type()));
    }
    return;
  }
  if (auto stand_in = placeholder(out)) {
    record(out, *stand_in, false, true);
    return;
  }
  record(out, ea->second.isList() && ea->second.toListRef().empty() ? eb->second : ea->second,
         false, true);
}

// Drops what is recorded of the values of `node` (outputs, and its blocks' values) before the
// node is destroyed.
void Propagator::forget_destroyed(Node* node) {
  auto drop = [this](Value* v) {
    forced.erase(v);
    env.erase(v);
    concrete.erase(v);
    approximate.erase(v);
    maybe_none.erase(v);
    shadow.erase(v);
  };
  for (Value* out : node->outputs()) drop(out);
  for (torch::jit::Block* block : node->blocks()) {
    for (Value* in : block->inputs()) drop(in);
    for (Node* inner : block->nodes()) forget_destroyed(inner);
  }
}

// An If whose condition is known (`if x.device.type == 'cpu'`, `if x.dim() == 4`) is replaced
// by the nodes of the branch it takes, each propagated as it is inserted.
// Returns the values that replaced the If's outputs.
std::vector<Value*> Propagator::inline_taken_branch(Node* node) {
  torch::jit::Block* taken = node->blocks().at(env.at(node->input(0)).toBool() ? 0 : 1);
  std::unordered_map<Value*, Value*> clones;
  auto map = [&](Value* v) {
    auto it = clones.find(v);
    return it == clones.end() ? v : it->second;
  };
  torch::jit::WithInsertPoint guard(node);
  for (Node* inner : taken->nodes()) {
    Node* clone = graph.insertNode(graph.createClone(inner, map));
    for (size_t i = 0; i < inner->outputs().size(); ++i) {
      clones[inner->outputs()[i]] = clone->outputs()[i];
      auto found = forced.find(inner->outputs()[i]);
      if (found != forced.end()) forced[clone->outputs()[i]] = found->second;
    }
    if (fold && clone->kind() == c10::prim::If && foldable(clone->input(0))) {
      // A nested If is replaced too: later clones must use its replacements, not its
      // (destroyed) outputs.
      std::vector<Value*> replaced = inline_taken_branch(clone);
      for (size_t i = 0; i < inner->outputs().size(); ++i) {
        clones[inner->outputs()[i]] = replaced[i];
      }
    } else {
      ++inlining;
      visit_or_inline(clone);
      --inlining;
      for (size_t i = 0; i < inner->outputs().size(); ++i) {
        auto folded = folded_to.find(clone->outputs()[i]);
        if (folded == folded_to.end()) continue;
        clones[inner->outputs()[i]] = folded->second;
        folded_to.erase(folded);
      }
    }
  }
  std::vector<Value*> replaced;
  for (size_t i = 0; i < node->outputs().size(); ++i) {
    replaced.push_back(map(taken->outputs()[i]));
    node->outputs()[i]->replaceAllUsesWith(replaced.back());
  }
  // The facts kept by Value* must go with the values: a value made later may be given the
  // address of one destroyed here, and would inherit them (a stale `forced` made a cloned
  // `not True` vary with the dynamic axes, and the If it decides stayed in the graph).
  forget_destroyed(node);
  node->destroy();
  return replaced;
}

}  // namespace torchonnx::passes::type_propagation
