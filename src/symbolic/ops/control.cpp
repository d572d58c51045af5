// Note [Control flow]
// Scripted models keep their loops and branches: prim::Loop becomes ONNX Loop, prim::If ONNX If.
// Their blocks become subgraphs (GraphContext::convert_block inside a SubgraphScope) whose nodes
// read outer values by name, as ONNX allows. The bookkeeping ONNX demands:
//  - Loop: inputs (M, cond, carried...), body inputs (iteration, cond, carried...), body outputs
//    (cond, carried...); TorchScript's prim::Loop has the same layout, so values map one to one.
//    A for-loop's M is its trip count, a while-loop's M is INT64_MAX and its cond the condition.
//  - every subgraph output is produced inside the subgraph (an Identity where the block returns
//    an input or an outer value), with the type type propagation found (merged over branches and
//    iterations, Note [Types through control flow] in passes/type_propagation/control_flow.cpp);
//  - ints, floats and bools are 0-d Long/Double/Bool tensors; scalar lists are 1-D tensors;
//    tensor lists that cross a block boundary are ONNX sequences (opset 11+).
// Mutations of values defined outside a block were threaded through the blocks' inputs and
// outputs before (Note [Mutation in control flow] in thread_mutations.cpp).
//
// Note [Optional values]
// A value of type Optional[Tensor] that is None on one path and a tensor on another (`y:
// Optional[Tensor] = None` set in one branch; `prev` carried by a loop whose trip count is known
// only at run time) keeps its Optional type through type propagation, which folds every `is None`
// it can decide (loops of a constant trip count that carry such a value are unrolled before:
// Note [Unrolling foldable loops]). What is left is an ONNX optional, as torch.onnx makes it, from
// opset 16 (If and Loop pass optionals on from 16; Optional itself is 15): where the value crosses
// a block boundary (an If's branch outputs, a Loop's carried values) a None becomes
// Optional[type=tensor(dtype)]() and a tensor Optional(x); `y is None` becomes
// Not(OptionalHasElement(y)), and a read of the refined value OptionalGetElement(y) (Args::tensor).
// The element dtype comes from the paths that hold a tensor.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <unordered_set>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// The dtype a value crossing a block boundary has in ONNX (Undefined: keep the producer's).
at::ScalarType boundary_dtype(const torch::jit::Value* v) {
  return value_type(v).dtype;
}

// The values that flow into output k of control-flow node `node`: its branches' outputs (If), or
// its initial value and its body's result (Loop).
std::vector<const torch::jit::Value*> sources(const torch::jit::Node* node, size_t k) {
  if (node->kind() == c10::prim::If) {
    return {node->blocks()[0]->outputs()[k], node->blocks()[1]->outputs()[k]};
  }
  return {node->input(2 + k), node->blocks()[0]->outputs()[1 + k]};
}

// The element type of an optional boundary value `like` (an If or Loop output): its own dtype, or
// else that of a path holding a tensor (Note [Optional values]).
at::ScalarType optional_dtype(const torch::jit::Value* like) {
  at::ScalarType dtype = value_type(like).dtype;
  const torch::jit::Node* node = like->node();
  if (node->kind() != c10::prim::If && node->kind() != c10::prim::Loop) return dtype;
  for (const torch::jit::Value* source : sources(node, like->offset())) {
    if (dtype != at::ScalarType::Undefined) break;
    dtype = value_type(source).dtype;
  }
  return dtype;
}

// Argument i of `args` (a None, an optional or a tensor) as the ONNX optional that the boundary
// `like` of Optional type carries (Note [Optional values]).
Value optional_boundary_value(GraphContext& g, const Args& args, size_t i,
                              const torch::jit::Value* like) {
  g.require_opset(16,
                  fmt::format("output {} of this {}, None on one path and a tensor on another,",
                              like->offset(), like->node()->kind().toQualString()),
                  "ONNX If and Loop pass it on as an optional value",
                  "give the value a tensor on every path");
  at::ScalarType dtype = optional_dtype(like);
  if (dtype == at::ScalarType::Undefined) {
    g.fail(
        fmt::format("the element dtype of optional output {} is unknown (None on every path "
                    "type propagation saw)",
                    like->offset()));
  }
  if (args.is_none(i)) return g.op("Optional", {}, {{"type", ir::TypeInfo(dtype)}});
  if (g.is_optional(args.jit(i))) return g.lookup(args.jit(i))->front();
  return g.op("Optional", {args.tensor_as(i, dtype)});
}

// Argument i of `args` as the ONNX value a boundary of type `like` carries.
Value boundary_value(GraphContext& g, const Args& args, size_t i, const torch::jit::Value* like) {
  if (value_type(like).optional) return optional_boundary_value(g, args, i, like);
  at::ScalarType dtype = boundary_dtype(like);
  if (is_tensor_list(like)) {
    if (dtype == at::ScalarType::Undefined) dtype = at::kFloat;
    return args.sequence(i, dtype);
  }
  return dtype == at::ScalarType::Undefined ? args.tensor(i) : args.tensor_as(i, dtype);
}

// Whether every dim of the type's shape is known.
bool static_shape(const ir::TypeInfo& type) {
  return type.shape &&
         std::all_of(type.shape->begin(), type.shape->end(), [](int64_t d) { return d >= 0; });
}

// The type a subgraph declares for a boundary value: its dtype, and its shape only when every
// dim is known (a declared dim that an iteration or branch contradicts fails the model).
ir::TypeInfo boundary_type(const torch::jit::Value* v) {
  ir::TypeInfo type = value_type(v);
  if (!static_shape(type)) type.shape.reset();
  if (type.optional) type.dtype = optional_dtype(v);
  return type;
}

// Binds a block input (or a control-flow node's output) to the ONNX value `name`.
void bind_boundary(GraphContext& g, const torch::jit::Value* v, const Value& name) {
  if (value_type(v).optional) {
    g.bind_optional(v, name);
  } else if (is_tensor_list(v)) {
    g.bind_sequence(v, name);
  } else {
    g.bind(v, {name});
  }
}

std::shared_ptr<ir::Graph> new_subgraph(GraphContext& g, const std::string& hint) {
  auto body = std::make_shared<ir::Graph>();
  body->name = g.fresh_name(hint);
  return body;
}

// Makes block outputs the subgraph's: for each (k, like) of `outputs`, block output k with the
// type of `like` (the node's matching output). Must run inside the subgraph's scope.
void set_outputs(GraphContext& g, const torch::jit::Block* block,
                 const std::vector<std::pair<size_t, const torch::jit::Value*>>& outputs,
                 ir::Graph& body) {
  Args ret(g, block->return_node());
  std::unordered_set<std::string> produced;
  for (const auto& node : body.nodes) produced.insert(node.outputs.begin(), node.outputs.end());
  std::unordered_set<std::string> used;
  for (const auto& [k, like] : outputs) {
    Value v = boundary_value(g, ret, k, like);
    if (!produced.count(v) || !used.insert(v).second) {
      if (value_type(like).optional) {
        v = g.op("Identity", {v});  // optionals: opset 16, checked before
      } else if (is_tensor_list(like) && !g.has(OnnxFeature::kIdentityOfSequences)) {
        // Identity takes sequences from opset 14: a copy by inserting and erasing a dummy.
        at::ScalarType dtype = boundary_type(like).dtype;
        if (dtype == at::ScalarType::Undefined) dtype = at::kFloat;
        Value dummy = g.constant(at::zeros({}, at::TensorOptions().dtype(dtype)));
        v = g.op("SequenceErase", {g.op("SequenceInsert", {v, dummy}),
                                   g.constant(at::scalar_tensor(int64_t{-1}, at::kLong))});
      } else {
        v = g.op("Identity", {v});
      }
      used.insert(v);
    }
    body.outputs.push_back({v, boundary_type(like)});
  }
}

// Note [Lists built by a loop before opset 13]: ONNX Loop carries sequences from opset 13 only.
// Before, a list the body only appends to (`res.append(x)` or `res += [x]` once per iteration,
// nothing else reading it in the body) becomes a scan output of the Loop — the appended tensors
// stacked along a new first axis — and after the loop the list is SplitToSequence of that, behind
// its initial elements (torch.onnx does the same).
struct AppendedElement {
  const torch::jit::Node* node = nullptr;  // the node that reads the element
  size_t input = 0;                        // the element is node->input(input)
  explicit operator bool() const { return node != nullptr; }
  const torch::jit::Value* value() const { return node->input(input); }
};

// The element appended to carried value k when the loop's body has that form, else none.
AppendedElement appended_list(GraphContext& g, const torch::jit::Node* loop, size_t k) {
  const torch::jit::Block* block = loop->blocks()[0];
  const torch::jit::Value* in = block->inputs()[1 + k];
  const torch::jit::Value* out = block->outputs()[1 + k];
  if (!is_tensor_list(in) || g.is_sequence(loop->input(2 + k))) return {};
  const torch::jit::Node* append = nullptr;
  const torch::jit::Node* copy = nullptr;
  const torch::jit::Node* concat = nullptr;
  for (const auto& use : in->uses()) {
    const std::string kind = use.user->kind().toQualString();
    if (use.offset != 0 || use.user->owningBlock() != block) return {};
    if (kind == "aten::append" && append == nullptr && concat == nullptr) {
      append = use.user;
    } else if (kind == "aten::list" && copy == nullptr) {
      copy = use.user;  // the list after the append (FunctionalizeLists)
    } else if ((kind == "aten::add_" || kind == "aten::add") && concat == nullptr &&
               append == nullptr) {
      concat = use.user;  // `res += [x]`, `res = res + [x]`
    } else {
      return {};
    }
  }
  AppendedElement element;
  if (append) {
    if (!copy || copy->output() != out || out->uses().size() != 1 ||
        !append->output()->uses().empty() || !copy->isAfter(append)) {
      return {};
    }
    element = {append, 1};
  } else if (concat) {
    const torch::jit::Node* items = concat->input(1)->node();
    if (copy || concat->output() != out || out->uses().size() != 1 ||
        items->kind() != c10::prim::ListConstruct || items->inputs().size() != 1) {
      return {};
    }
    element = {items, 0};
  } else {
    return {};
  }
  // Scan outputs stack the iterations' tensors: all must have one static shape.
  return static_shape(value_type(element.value())) ? element : AppendedElement{};
}

// A 0 of the type `v` has where it is used: the control-flow output it becomes (a branch's or
// loop body's result, or a loop's initial carried value); 0-d Float when nothing tells.
Value placeholder(GraphContext& g, const torch::jit::Value* v) {
  at::ScalarType type = at::kFloat;
  std::vector<int64_t> shape;  // 0-d unless the value's static shape is known
  for (const auto& use : v ? v->uses() : std::vector<torch::jit::Use>{}) {
    const torch::jit::Node* user = use.user;
    const torch::jit::Node* owner = user->owningBlock()->owningNode();
    const torch::jit::Value* becomes = nullptr;
    if (user == user->owningBlock()->return_node() && owner != nullptr) {
      size_t k = owner->kind() == c10::prim::Loop ? use.offset - 1 : use.offset;
      if (k < owner->outputs().size()) becomes = owner->outputs()[k];
    } else if (user->kind() == c10::prim::Loop && use.offset >= 2) {
      becomes = user->outputs()[use.offset - 2];
    }
    if (becomes == nullptr) continue;
    ir::TypeInfo info = value_type(becomes);
    if (info.dtype != at::ScalarType::Undefined) type = info.dtype;
    if (static_shape(info)) shape = *info.shape;
  }
  return g.constant(at::zeros(shape, at::TensorOptions().dtype(type)));
}

// prim::Uninitialized() -> Any  ⇒  a 0 of the type the value has where it is used (the outputs
// of a branch that raises); a tuple (LowerBranchTuples unpacks it in the branch) is one per
// element, each typed where that element goes.
Values uninitialized(GraphContext& g, const Args& a) {
  const torch::jit::Value* out = a.node()->output();
  if (auto tuple = out->type()->cast<c10::TupleType>()) {
    std::vector<const torch::jit::Value*> elements(tuple->elements().size(), nullptr);
    for (const auto& use : out->uses()) {
      if (use.user->kind() != c10::prim::TupleUnpack) continue;
      for (size_t k = 0; k < elements.size() && k < use.user->outputs().size(); ++k) {
        elements[k] = use.user->outputs()[k];
      }
    }
    Values items;
    for (const auto* element : elements) items.push_back(placeholder(g, element));
    return items;
  }
  return {placeholder(g, out)};
}

// prim::If(bool cond) -> (...) with two blocks  ⇒  If(cond) then_branch/else_branch
Values if_(GraphContext& g, const Args& a) {
  const torch::jit::Node* node = a.node();
  for (size_t k = 0; k < node->outputs().size(); ++k) {
    if (is_tensor_list(node->outputs()[k])) {
      g.require_opset(13, "an if whose branches produce a list of tensors",
                      "ONNX If passes lists as sequences", "build the list after the if");
    }
    auto then_type = value_type(node->blocks()[0]->outputs()[k]);
    auto else_type = value_type(node->blocks()[1]->outputs()[k]);
    const bool uninitialized =
        node->blocks()[0]->outputs()[k]->node()->kind() == c10::prim::Uninitialized ||
        node->blocks()[1]->outputs()[k]->node()->kind() == c10::prim::Uninitialized;
    if (!g.has(OnnxFeature::kIfBranchShapes) && uninitialized &&
        !static_shape(value_type(node->outputs()[k]))) {
      g.fail(fmt::format(
          "output {} of this if is set in one branch only (a return or raise inside a loop or "
          "branch), with a shape known only at run time; ONNX If before opset 11 needs both "
          "branches to have one shape. Remedy: export with opset_version >= 11",
          k));
    }
    if (!g.has(OnnxFeature::kIfBranchShapes) && static_shape(then_type) &&
        static_shape(else_type) && then_type.shape != else_type.shape) {
      g.fail(fmt::format(
          "output {} of this if has shape [{}] in one branch and [{}] in the other; ONNX If "
          "allows branches of different shapes from opset 11. Remedy: export with "
          "opset_version >= 11",
          k, fmt::join(*then_type.shape, ", "), fmt::join(*else_type.shape, ", ")));
    }
  }
  Value cond = a.tensor_as(0, at::kBool);
  std::vector<std::pair<size_t, const torch::jit::Value*>> outputs;  // branch output k ↔ output k
  for (size_t k = 0; k < node->outputs().size(); ++k) {
    outputs.emplace_back(k, node->outputs()[k]);
  }
  std::shared_ptr<ir::Graph> branches[2];
  for (size_t b = 0; b < 2; ++b) {
    branches[b] = new_subgraph(g, b == 0 ? "then" : "else");
    SubgraphScope scope(g, *branches[b]);
    g.convert_block(node->blocks()[b]);
    g.set_current_node(node);
    set_outputs(g, node->blocks()[b], outputs, *branches[b]);
  }
  Values results = g.op("If", {cond}, {{"then_branch", branches[0]}, {"else_branch", branches[1]}},
                        node->outputs().size());
  for (size_t k = 0; k < results.size(); ++k) bind_boundary(g, node->outputs()[k], results[k]);
  return results;
}

// prim::Loop(int max_trip_count, bool cond, carried...) -> (carried...) with one block
// (int i, carried...) -> (bool cond, carried...)  ⇒  Loop(M, cond, carried...) body
Values loop(GraphContext& g, const Args& a) {
  const torch::jit::Node* node = a.node();
  const torch::jit::Block* block = node->blocks()[0];
  const size_t num_carried = node->outputs().size();
  // Carried lists become scan outputs before opset 13 (see the note).
  std::vector<AppendedElement> scanned(num_carried);
  for (size_t k = 0; k < num_carried; ++k) {
    if (g.has(OnnxFeature::kLoopSequences) || !is_tensor_list(node->outputs()[k])) continue;
    scanned[k] = appended_list(g, node, k);
    if (!scanned[k]) {
      g.fail(
          "the loop changes a list of tensors other than by one append per iteration of a "
          "tensor of static shape; ONNX Loop carries lists (sequences) from opset 13. Remedy: "
          "export with opset_version >= 13, or only append same-shaped tensors to the list in "
          "the loop");
    }
  }
  Values inputs{a.tensor_as(0, at::kLong), a.tensor_as(1, at::kBool)};
  for (size_t k = 0; k < num_carried; ++k) {
    if (!scanned[k]) inputs.push_back(boundary_value(g, a, 2 + k, node->outputs()[k]));
  }
  auto body = new_subgraph(g, "loop_body");
  {
    SubgraphScope scope(g, *body);
    Value iteration = g.fresh_name("iteration");
    Value cond_in = g.fresh_name("cond");
    body->inputs.push_back({iteration, {at::kLong, std::vector<int64_t>{}}});
    body->inputs.push_back({cond_in, {at::kBool, std::vector<int64_t>{}}});
    g.bind(block->inputs()[0], {iteration});
    for (size_t k = 0; k < num_carried; ++k) {
      const torch::jit::Value* carried = block->inputs()[1 + k];
      if (scanned[k]) {
        g.bind(carried, {});  // the body's append then binds the list to [element]
        continue;
      }
      Value name = g.fresh_name(carried->hasDebugName() ? carried->debugName() : "carried");
      // The carried value has the loop output's type (merged over all iterations).
      body->inputs.push_back({name, boundary_type(node->outputs()[k])});
      bind_boundary(g, carried, name);
    }
    g.convert_block(block);
    g.set_current_node(node);
    std::vector<std::pair<size_t, const torch::jit::Value*>> outs{{0, block->outputs()[0]}};
    for (size_t k = 0; k < num_carried; ++k) {
      if (!scanned[k]) outs.emplace_back(1 + k, node->outputs()[k]);
    }
    set_outputs(g, block, outs, *body);
    body->outputs[0].type = {at::kBool, std::vector<int64_t>{}};
    for (size_t k = 0; k < num_carried; ++k) {
      if (!scanned[k]) continue;
      Value element = g.op("Identity", {Args(g, scanned[k].node).tensor(scanned[k].input)});
      body->outputs.push_back({element, {value_type(scanned[k].value()).dtype, std::nullopt}});
    }
  }
  Values loop = g.op("Loop", inputs, {{"body", body}}, num_carried);
  // ONNX orders the Loop's outputs: final carried values, then scan outputs.
  size_t next_carried = 0;
  size_t next_scan = 0;
  for (const auto& n : scanned) next_scan += n ? 0 : 1;
  Values results(num_carried);
  for (size_t k = 0; k < num_carried; ++k) {
    const torch::jit::Value* out = node->outputs()[k];
    if (!scanned[k]) {
      results[k] = loop[next_carried++];
      bind_boundary(g, out, results[k]);
      continue;
    }
    at::ScalarType dtype = value_type(scanned[k].value()).dtype;
    Value seq = g.op("SplitToSequence", {loop[next_scan++]}, {{"axis", 0}, {"keepdims", 0}});
    // The list's initial elements come first.
    Values initial =
        dtype == at::ScalarType::Undefined ? a.tensor_list(2 + k) : a.tensor_list_as(2 + k, dtype);
    for (size_t j = 0; j < initial.size(); ++j) {
      seq = g.op(
          "SequenceInsert",
          {seq, initial[j], g.constant(at::scalar_tensor(static_cast<int64_t>(j), at::kLong))});
    }
    g.bind_sequence(out, seq);
    results[k] = seq;
  }
  return results;
}

}  // namespace

void register_control(Registry& r) {
  r.add("prim::Uninitialized", from(9), uninitialized);
  r.add("prim::If", from(9), if_);
  r.add("prim::Loop", from(9), loop);
}

}  // namespace torchonnx::symbolic::ops
