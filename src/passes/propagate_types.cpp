// Note [Type propagation on meta tensors]
// torch.onnx learns types and shapes by running the model (tracing) or by its own ONNX shape
// inference. We learn them without arithmetic: each node runs on meta tensors (shape and dtype
// only), with a few ops rerouted where libtorch 1.13 lacks a meta kernel. Values that depend only
// on constants and on static shapes (x.size(0), int arithmetic, NumToTensor, shape lists) are
// computed for real: they are "concrete" and, when folding is on, replaced by constants — the
// equivalent of torch.onnx's constant folding of Shape/Gather chains. Dynamic axes must keep such
// values symbolic; that is decided before this pass by which inputs are marked dynamic.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "common/jit_util.h"
#include "passes/passes.h"
#include "passes/type_propagation/propagator.h"

namespace torchonnx::passes::type_propagation {

namespace {

bool is_foldable(const c10::IValue& v) {
  if (v.isInt() || v.isDouble() || v.isBool() || v.isIntList() || v.isDoubleList() ||
      v.isBoolList() || v.isString() || v.isDevice())
    return true;
  if (v.isTensor()) return v.toTensor().defined() && !v.toTensor().requires_grad();
  return false;
}

// Whether two results of a node agree (numbers and lists by value, tensors by sizes).
bool same_value(const c10::IValue& a, const c10::IValue& b) {
  if (a.tagKind() != b.tagKind()) return false;
  if (a.isTensor()) {
    const at::Tensor &x = a.toTensor(), &y = b.toTensor();
    return x.defined() == y.defined() && (!x.defined() || x.sizes() == y.sizes());
  }
  if (a.isList()) {
    auto x = a.toListRef(), y = b.toListRef();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!same_value(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isTuple()) {
    const auto &x = a.toTupleRef().elements(), &y = b.toTupleRef().elements();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!same_value(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isInt()) return a.toInt() == b.toInt();
  if (a.isDouble()) return a.toDouble() == b.toDouble();
  if (a.isBool()) return a.toBool() == b.toBool();
  if (a.isString()) return a.toStringRef() == b.toStringRef();
  return true;  // None, devices, dtypes: not shapes
}

size_t max_unique(torch::jit::Block* block) {
  size_t n = 0;
  for (Value* v : block->inputs()) n = std::max(n, v->unique());
  for (Node* node : block->nodes()) {
    for (Value* v : node->outputs()) n = std::max(n, v->unique());
    for (torch::jit::Block* sub : node->blocks()) n = std::max(n, max_unique(sub));
  }
  return n;
}

// Every value of `block` in a fixed order (a block's inputs, then each node's outputs followed by
// its blocks'): the same order in a graph and in its copy.
void collect_values(torch::jit::Block* block, std::vector<Value*>& out) {
  for (Value* v : block->inputs()) out.push_back(v);
  for (Node* node : block->nodes()) {
    for (Value* v : node->outputs()) out.push_back(v);
    for (torch::jit::Block* sub : node->blocks()) collect_values(sub, out);
  }
}

}  // namespace

// Sized for the graph up front (the largest Value::unique() + 1).
void Propagator::reserve(size_t uniques) {
  env.reserve(uniques);
  concrete.reserve(uniques);
  approximate.reserve(uniques);
}

// Known, and the same whatever the sizes of the dynamic axes: may become a constant.
bool Propagator::foldable(Value* v) const {
  return concrete.count(v) && !shadow.count(v) && !forced_varies(v);
}

void Propagator::set_tensor_type(Value* v, const at::Tensor& t) {
  if (!t.defined()) return;
  type_key.clear();
  type_key.push_back(static_cast<int64_t>(t.scalar_type()));
  type_key.push_back(t.dim());
  type_key.insert(type_key.end(), t.sizes().begin(), t.sizes().end());
  type_key.insert(type_key.end(), t.strides().begin(), t.strides().end());
  auto found = tensor_types.find(type_key);
  if (found == tensor_types.end()) {
    found = tensor_types
                .emplace(type_key, c10::TensorType::create(t.scalar_type(), at::Device(at::kCPU),
                                                           t.sizes(), t.strides(), false))
                .first;
  }
  v->setType(found->second);
}

void Propagator::record(Value* v, c10::IValue value, bool is_concrete, bool is_approximate) {
  // A value may be recorded again (each pass over a loop body): the latest facts hold.
  concrete.erase(v);
  approximate.erase(v);
  maybe_none.erase(v);
  shadow.erase(v);
  if (value.isTensor() && is_approximate) {
    // Note [Approximate values]: computed from a placeholder (a scalar read from tensor data,
    // a data-dependent shape): its dtype and rank are right, its sizes are not known.
    const at::Tensor& t = value.toTensor();
    if (t.defined()) {
      v->setType(c10::TensorType::create(
          t.scalar_type(), at::Device(at::kCPU), c10::SymbolicShape(c10::optional<size_t>(t.dim())),
          c10::VaryingShape<c10::Stride>(static_cast<size_t>(t.dim())), false));
    }
  } else if (value.isTensor()) {
    set_tensor_type(v, value.toTensor());
  }
  if (is_concrete && !is_approximate) concrete.insert(v);
  if (is_approximate) approximate.insert(v);
  env[v] = std::move(value);
  apply_forced(v);
}

// No facts about `v`: its converter sees an unknown type.
void Propagator::forget(Value* v) {
  env.erase(v);
  concrete.erase(v);
  approximate.erase(v);
  maybe_none.erase(v);
  if (v->type()->cast<c10::TensorType>()) v->setType(c10::TensorType::get());
}

// Note [Maybe None]
// `y: Optional[Tensor] = None` set in one branch of a data-dependent if, or `prev` that a loop
// of a run-time trip count carries from None to a tensor, is None on one path and a tensor on
// another. Such a value keeps an Optional type (of the tensor's dtype and rank); its `is None`
// is not folded, and what `unchecked_cast` (the refinement under `y is not None`) gives is the
// tensor. The converters make it an ONNX optional (Note [Optional values] in ops/control.cpp).
// Recording either path's value instead would type it Tensor or None, and fold `y is None` to
// the wrong constant.
void Propagator::record_maybe_none(Value* v, const c10::IValue& some) {
  record(v, some, false, true);
  if (some.isNone()) return;  // None on every path seen
  if (some.isTensor() && v->type()->kind() == c10::TypeKind::TensorType) {
    v->setType(c10::OptionalType::create(v->type()));
  } else if (v->type()->kind() != c10::TypeKind::OptionalType) {
    v->setType(c10::OptionalType::create(some.type()));
  }
  maybe_none.insert(v);
}

// A stand-in for a scalar whose value depends on tensor data (int(x), x.item(), ...): keeps
// propagating dtypes and ranks downstream (Note [Approximate values]).
std::optional<c10::IValue> Propagator::placeholder(const Value* v) {
  switch (v->type()->kind()) {
    case c10::TypeKind::IntType:
      return c10::IValue(int64_t{1});
    case c10::TypeKind::FloatType:
      return c10::IValue(1.0);
    case c10::TypeKind::BoolType:
      return c10::IValue(false);
    default:
      return std::nullopt;
  }
}

void Propagator::run_block(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    visit_or_inline(node);
  }
}

void Propagator::visit_or_inline(Node* node) {
  if (fold && node->kind() == c10::prim::If && foldable(node->input(0))) {
    inline_taken_branch(node);
  } else if (node->kind() == c10::prim::If) {
    visit_if(node);
  } else if (node->kind() == c10::prim::Loop) {
    visit_loop(node);
  } else {
    visit(node);
  }
}

// prim::isinstance (torch.jit.isinstance, isinstance on a Union or Optional value) depends on the
// type of its input only, which is known at export even where its value is not: a constant, so
// that the branch it guards folds (the other one may hold ops that do not apply to the value's
// real type, x[0] of a Tensor where the Union was a list). An approximate None (a loop-carried
// Optional) is no type known.
void Propagator::visit_isinstance(Node* node) {
  auto found = env.find(node->input());
  if (found == env.end() || maybe_none.count(node->input()) ||
      (found->second.isNone() && approximate.count(node->input()))) {
    return;
  }
  const c10::TypePtr type = found->second.type();
  bool is = false;
  for (const c10::TypePtr& candidate : node->tys(c10::attr::types)) {
    is = is || type->isSubtypeOf(*candidate);
  }
  record(node->output(), c10::IValue(is), /*is_concrete=*/true);
}

void Propagator::visit(Node* node) {
  if (node->kind() == c10::prim::Uninitialized) return;  // no value: the other path decides
  if (node->kind() == c10::prim::Constant) {
    // A list constant's IValue shares its storage with the node's attribute: a copy, so that an
    // append run on it (an unrolled loop's, once per evaluation) does not change the constant.
    if (auto v = torch::jit::toIValue(node->output())) {
      record(node->output(), v->isList() ? copy_list(*v) : *v, true);
    }
    return;
  }
  if (!node->blocks().empty()) return;  // other nodes with blocks: left untyped
  if (node->kind() == c10::prim::isinstance) {
    visit_isinstance(node);
    return;
  }
  // The refinement under `x is not None` (prim::unchecked_cast) of a value that is None here: the
  // branch it is in is not taken with this value, so its result is no value (the other path
  // decides), not None. Recording None would make the branch's output maybe None (Note [Maybe
  // None]) and give a Tensor value an Optional type, which no tensor op's schema takes.
  if (node->kind() == c10::prim::unchecked_cast) {
    auto found = env.find(node->input());
    const c10::TypeKind out_kind = node->output()->type()->kind();
    if (found != env.end() && found->second.isNone() && out_kind != c10::TypeKind::OptionalType &&
        out_kind != c10::TypeKind::NoneType) {
      forget(node->output());
      return;
    }
  }
  // Decided at export whatever the inputs (Note [Facts known at export]).
  if (auto known = known_at_export(node)) {
    record(node->output(), c10::IValue(*known), true);
    if (fold) fold_outputs(node);
    return;
  }
  // Note [Maybe None]: whether such a value is None is known only at run time.
  if (node->kind() == c10::aten::__is__ || node->kind() == c10::aten::__isnot__) {
    for (Value* in : node->inputs()) {
      if (maybe_none.count(in)) {
        record(node->output(), c10::IValue(false), false, true);
        return;
      }
    }
    // Decided by the types: a value that is never None against None (also when its sizes are
    // approximate), or two values that are never None: Note [Identity at export] (their meta
    // stand-ins are new objects each time, so running the op would call `x is x` false).
    auto is_none_type = [](const Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; };
    const bool some0 = never_none(node->input(0)), some1 = never_none(node->input(1));
    if ((some0 && some1) || (some0 && is_none_type(node->input(1))) ||
        (some1 && is_none_type(node->input(0)))) {
      const bool same = some0 && some1 && same_object(node->input(0), node->input(1));
      record(node->output(), c10::IValue(same == (node->kind() == c10::aten::__is__)), true);
      if (fold) fold_outputs(node);
      return;
    }
  }
  torch::jit::Stack stack, inputs_before;
  stack.reserve(node->inputs().size());
  bool all_concrete = true;
  bool approx = false;
  bool shapes_exact = false;  // approximate only through scalars that do not change the shapes
  for (Value* in : node->inputs()) {
    auto found = env.find(in);
    if (found == env.end()) {
      auto stand_in = placeholder(in);
      if (!stand_in) return;  // unknown input: leave outputs untyped
      stack.push_back(*stand_in);
      all_concrete = false;
      approx = true;
      continue;
    }
    all_concrete = all_concrete && concrete.count(in) > 0;
    approx = approx || approximate.count(in) > 0;
    stack.push_back(found->second);
  }
  static const std::unordered_set<c10::Symbol> kPlumbing = {
      c10::prim::ListConstruct, c10::prim::TupleConstruct, c10::prim::ListUnpack,
      c10::prim::TupleUnpack, c10::prim::unchecked_cast};
  if (!kPlumbing.count(node->kind()) && !node->maybeOperator()) return;
  if (!all_concrete) {
    for (auto& v : stack) v = to_meta(v);
  }
  // Note [Dynamic axes]: the same node on the shadow values, when an input has one.
  // Without one (always, when no axis is dynamic) the shadow stack is not built at all.
  torch::jit::Stack shadow_stack;
  bool shadowed = false;
  bool shadow_unknown = false;  // an input's shadow is not known: nor are the outputs'
  bool scalar_input_varies = false;
  if (!shadow.empty()) {
    for (Value* in : node->inputs()) shadowed = shadowed || shadow.count(in) > 0;
  }
  if (shadowed) shadow_stack.reserve(stack.size());
  for (size_t i = 0; shadowed && i < node->inputs().size(); ++i) {
    Value* in = node->inputs()[i];
    auto found = shadow.find(in);
    if (found == shadow.end()) {
      // A list the node mutates must not be mutated twice.
      shadow_stack.push_back(writes_input(node, i) ? copy_list(stack[i]) : stack[i]);
      continue;
    }
    const c10::IValue& v = found->second;
    shadow_unknown = shadow_unknown || v.isNone();
    scalar_input_varies = scalar_input_varies || v.isInt() || v.isDouble() || v.isBool() ||
                          (v.isTensor() && v.toTensor().defined() && !v.toTensor().is_meta());
    shadow_stack.push_back(v.isNone() ? stack[i] : copy_list(v));
  }
  if (!all_concrete) {
    for (auto& v : shadow_stack) v = to_meta(v);
  }
  try {
    inputs_before = stack;  // an operation pops its inputs even when it throws
    execute(node, stack, inputs_before, all_concrete, approx, shapes_exact, env);
  } catch (const std::exception& e) {
    // No meta kernel (e.g. data-dependent shapes): the converter sees an unknown shape.
    if (std::getenv("TORCHONNX_DEBUG_TYPES")) {
      std::string what = e.what();
      std::cerr << "type propagation: " << node->kind().toQualString() << ": "
                << what.substr(0, what.find('\n')) << "\n";
    }
    if (!approx || !split_placeholders(node, inputs_before, stack)) return;
  }
  torch::jit::Stack shadow_before;
  if (shadowed) shadow_before = shadow_stack;
  // Approximate results (from placeholders) get a shadow too: later shadow runs need one.
  bool shadow_ok = shadowed && !shadow_unknown;
  if (shadow_ok) {
    try {
      bool shadow_approx = approx, unused = false;
      execute(node, shadow_stack, shadow_before, all_concrete, shadow_approx, unused, shadow);
      shadow_ok = shadow_stack.size() == stack.size();
    } catch (const std::exception& e) {
      shadow_ok = false;
      ++shadow_failures;
      if (std::getenv("TORCHONNX_DEBUG_TYPES")) {
        std::string what = e.what();
        std::cerr << "type propagation (dynamic axes): " << node->kind().toQualString() << ": "
                  << what.substr(0, what.find('\n')) << "\n";
      }
    }
  }
  // Note [Mutated lists]: list ops (append, insert, pop, ...) mutate their list argument; the
  // meta copy the op mutated becomes the list's value for later nodes. A list that was known
  // stays known only when what was written into it is (`res = []; res.append(t)` with t
  // computed from the inputs: res holds t's meta tensor from then on).
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    if (writes_input(node, i) && inputs_before[i].isList()) {
      if (!all_concrete) concrete.erase(node->inputs()[i]);
      env[node->inputs()[i]] = inputs_before[i];
      // A list that did not vary varies from the write of a varying value on (`scales = [];
      // scales.append(s.item())`, s computed from a dynamic size).
      const bool now_varies = shadowed && (!shadow_ok || scalar_input_varies ||
                                           !same_value(inputs_before[i], shadow_before[i]));
      if (shadow.count(node->inputs()[i]) || now_varies) {
        shadow[node->inputs()[i]] = shadow_ok ? shadow_before[i] : c10::IValue();
      }
    }
  }
  if (stack.size() != node->outputs().size()) return;
  // empty/empty_like/new_empty have undefined contents: never constants.
  static const SymbolSet kUndefinedContents =
      symbols({"aten::empty", "aten::empty_like", "aten::new_empty", "aten::empty_strided"});
  const bool deterministic = !node->isNondeterministic() && !kUndefinedContents.count(node->kind());
  for (size_t i = 0; i < stack.size(); ++i) {
    // Tensors are known only when computed from known tensors; non-tensor results of meta
    // tensors (sizes, dims, dtypes) are always known because shapes are static here.
    // An output varies with the dynamic axes when the shadow run gives another value; a
    // number computed from a varying number always varies (n // 100 may agree by chance).
    std::optional<c10::IValue> varies;
    if (shadowed && !shadow_ok) {
      varies = c10::IValue();
    } else if (shadowed) {
      const c10::IValue& a = stack[i];
      const c10::IValue& b = shadow_stack[i];
      bool differ;
      if (a.isTensor() && b.isTensor()) {
        const at::Tensor &x = a.toTensor(), &y = b.toTensor();
        differ = x.defined() != y.defined() || (x.defined() && x.sizes() != y.sizes());
        // A known tensor (NumToTensor(x.size(0)), ...) varies with its contents too.
        // A known tensor computed from a varying number or known tensor varies too, even when
        // the two runs agree by chance (floor(h * 800 / min(h, w)) is 800 for any square
        // image).
        if (!differ && x.defined() && !x.is_meta() && !y.is_meta() && !x.is_quantized()) {
          differ = scalar_input_varies || x.scalar_type() != y.scalar_type() || !at::equal(x, y);
        }
      } else {
        // x.dim(), x.dtype, ... read no contents: they vary only when the shadow run says so
        // (a mask's dtype is Bool whatever its contents, also when those contents are known
        // zeros from a run without meta kernels).
        differ = (scalar_input_varies && !reads_rank_or_dtype(node)) || !same_value(a, b);
      }
      if (differ) varies = b;
    }
    // The rank and dtype of an approximate tensor are right: x.dim(), x.dtype are known.
    const bool exact_facts = reads_rank_or_dtype(node) && !holds_tensor(stack[i]);
    // A meta tensor has no data: never known, whatever the inputs were.
    bool known = deterministic && (!approx || exact_facts) &&
                 (all_concrete || !holds_tensor(stack[i]) || is_shape_tensor(node)) &&
                 !holds_meta_tensor(stack[i]);
    bool out_approx = approx && !exact_facts && !(shapes_exact && stack[i].isTensor());
    if (!varies && stack[i].isTensor() && picks_from_varying_list(node)) {
      varies = union_of_elements(stack[i].toTensor(),
                                 {env.at(node->input(0)), shadow.at(node->input(0))});
    }
    record(node->outputs()[i], std::move(stack[i]), known, out_approx);
    if (varies) set_shadow(node->outputs()[i], std::move(*varies));
  }
  if (fold) fold_outputs(node);
}

void Propagator::fold_outputs(Node* node) {
  for (Value* out : node->outputs()) {
    // A node just cloned by inline_taken_branch has no uses yet: it is folded too, and the
    // later clones take the constant (folded_to).
    if (!foldable(out) || (!out->hasUses() && !inlining) || is_mutated(out)) continue;
    const c10::IValue& v = env[out];
    if (!is_foldable(v)) continue;
    torch::jit::WithInsertPoint guard(node);
    auto constant = graph.insertConstant(v);
    if (v.isTensor()) set_tensor_type(constant, v.toTensor());
    env[constant] = v;
    concrete.insert(constant);
    out->replaceAllUsesWith(constant);
    if (inlining) folded_to[out] = constant;
  }
}

// A list of ints, floats or bools (no tensors: those stay unknown).
bool is_scalar_list(const c10::IValue& v) {
  return v.isIntList() || v.isDoubleList() || v.isBoolList();
}

int propagate(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs, bool fold,
              const DynamicDims& dynamic, const ShadowSizes& shadow_sizes,
              const std::vector<VaryInfo>* forced, std::vector<VaryInfo>* found) {
  Propagator p{graph, fold};
  p.reserve(max_unique(graph.block()) + 1);
  if (forced) {
    std::vector<Value*> values;
    collect_values(graph.block(), values);
    for (size_t i = 0; i < values.size() && i < forced->size(); ++i) {
      const VaryInfo& info = (*forced)[i];
      if (info.varies || !info.unknown_dims.empty()) p.forced[values[i]] = info;
    }
  }
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i) {
    Value* in = graph.inputs()[i];
    if (is_scalar_list(inputs[i])) {
      // Note [List inputs]: a List[int] (float, bool) input, e.g. pads passed to F.pad: its
      // example value stands for it (its length and elements may differ at run time:
      // approximate), so the ops reading it get a dtype and rank.
      p.record(in, copy_list(inputs[i]), false, true);
      continue;
    }
    if (!inputs[i].isTensor()) continue;
    const at::Tensor& t = inputs[i].toTensor();
    p.record(in, to_meta(t), false);
    if (t.defined() && !t.is_meta()) p.examples[in] = t;
    auto dims = dynamic.find(i);
    if (dims == dynamic.end() || dims->second.empty() || !t.defined()) continue;
    p.set_shadow(
        in, at::empty(shadow_sizes(t.sizes().vec(), dims->second), t.options().device(at::kMeta)));
  }
  p.run_block(graph.block());
  if (found) {
    std::vector<Value*> values;
    collect_values(graph.block(), values);
    found->assign(values.size(), VaryInfo{});
    for (size_t i = 0; i < values.size(); ++i) {
      Value* v = values[i];
      VaryInfo& info = (*found)[i];
      info.varies = p.shadow.count(v) > 0;
      if (!info.varies || !p.env.count(v) || p.approximate.count(v)) continue;
      auto type = v->type()->cast<c10::TensorType>();
      auto sizes = type ? type->sizes().sizes() : c10::nullopt;
      if (!sizes) continue;
      info.unknown_dims.resize(sizes->size());
      for (size_t d = 0; d < sizes->size(); ++d) info.unknown_dims[d] = !(*sizes)[d].has_value();
    }
  }
  return p.shadow_failures;
}

}  // namespace torchonnx::passes::type_propagation

namespace torchonnx::passes {

// Note [Dynamic axes] in type_propagation/dynamic_shadow.cpp.
void PropagateTypes(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs, bool fold,
                    const DynamicDims& dynamic) {
  bool any = false;
  for (const auto& [i, dims] : dynamic) any = any || !dims.empty();
  if (!any) {
    type_propagation::propagate(graph, inputs, fold, dynamic, nullptr);
    return;
  }
  type_propagation::propagate_with_shadows(graph, inputs, fold, dynamic);
}

}  // namespace torchonnx::passes
