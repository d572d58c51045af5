// Note [Removing in-place ops]
// A converter maps values to values, so the graph given to the converters must be functional: no
// node may change a value that other nodes read. TorchScript graphs are not: an in-place op
// (`aten::add_`, `aten::index_put_`, `aten::copy_`, ...) writes its first argument, and when that
// argument is a view (`x[0]`, `x[:, 1:3]`, `x.view(-1)`) it writes the view's base too. Even a
// traced graph keeps writes through views: the tracer rebinds the written tensor to the op's
// output, but not the view's base, nor other views of that base.
//
// This pass rewrites every such write into dataflow, before type propagation:
//  1. The in-place node becomes its out-of-place twin (`add_` → `add`, `copy_` → `copy`, ...,
//     when libtorch has one with the same arguments) followed by `type_as(result, self)`, since an
//     in-place result keeps self's dtype (`x_float.add_(y_double)` stays float).
//  2. When the written value is a view, the new value is written back to the base through the
//     chain of views: select → select_scatter, slice/narrow → slice_scatter, view/reshape-like →
//     reshape back to the base's size, transpose/permute → the inverse, alias-like → the value.
//  3. Every view of the (new) base that is read after the write — the written view itself, its
//     siblings, views of views — is replayed on the new base, and reads after the write of the
//     base and of those views take the new values (`Value::replaceAllUsesAfterNodeWith`).
//
//   graph(%x, %v):                               graph(%x, %v):
//     %y = aten::clone(%x, %none)                  %y = aten::clone(%x, %none)
//     %s = aten::select(%y, %0, %0)                %s = aten::select(%y, %0, %0)
//     %c = aten::copy_(%s, %v, %false)      ⇒      %c = aten::copy(%s, %v, %false)
//     return (%x, %y)                              %t = aten::type_as(%c, %s)
//                                                  %y2 = aten::select_scatter(%y, %t, %0, %0)
//                                                  return (%x, %y2)
//
// It runs before RemoveEvalNoOps: `clone` is what tells a copy from an alias (`y = x.clone();
// y[0] = v; return x, y` must return the unmodified x), and RemoveEvalNoOps later drops the
// clone (then both x and y2 read %x, which no node writes any more).
//
// Treated as views of their first argument: select, slice, narrow, view, reshape, view_as,
// reshape_as, flatten, unflatten, squeeze, unsqueeze, _reshape_alias, transpose, swapaxes,
// swapdims, t, permute, alias, detach, contiguous, lift_fresh. reshape/flatten/contiguous copy
// when their input's strides forbid a view; like torch.onnx we assume the view (true for
// contiguous inputs). `aten::to` returns self when nothing changes but is taken as a copy.
// Other views (expand, diagonal, unfold, as_strided, unbind/split/chunk elements, ...) can be read
// but not written through while their base is read later: that is an ExportError.
//
// Writes inside loops and if-branches to tensors defined outside them leave their block as
// outputs (Note [Mutation in control flow]). List mutation is FunctionalizeLists'.
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/jit_util.h"
#include "passes/passes.h"
#include "torchonnx/errors.h"

namespace torchonnx::passes {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

namespace {

const char* kViewRemedy =
    "Remedy: clone() the view, write to the clone, and assemble the result out of place (e.g. "
    "with torch.cat, torch.where or index_put).";

std::string kind_of(const Node* node) {
  return node->kind().toQualString();
}

std::string where(const Node* node) {
  std::string loc = source_location(node);
  return loc.empty() ? "" : " at " + loc;
}

[[noreturn]] void fail(const Node* node, const std::string& what, const std::string& remedy) {
  throw ExportError(ErrorCode::kConversion,
                    fmt::format("{}{}: {}\n{}", kind_of(node), where(node), what, remedy));
}

bool is_tensor(const Value* v) {
  return v->type()->cast<c10::TensorType>() != nullptr;
}

// How a view is written back into its base.
enum class ViewKind {
  kNone,         // not a view of its first argument
  kSelect,       // select_scatter
  kSlice,        // slice_scatter
  kNarrow,       // slice_scatter [start, start + length)
  kReshape,      // reshape to the base's size
  kTranspose,    // transpose(d0, d1) again
  kT,            // t() again
  kPermute,      // permute by the inverse
  kIdentity,     // the value itself
  kUnsupported,  // a view we cannot write back through
};

ViewKind view_kind(const Node* node) {
  static const std::unordered_map<std::string, ViewKind> kKinds = {
      {"aten::select", ViewKind::kSelect},       {"aten::slice", ViewKind::kSlice},
      {"aten::narrow", ViewKind::kNarrow},       {"aten::view", ViewKind::kReshape},
      {"aten::reshape", ViewKind::kReshape},     {"aten::view_as", ViewKind::kReshape},
      {"aten::reshape_as", ViewKind::kReshape},  {"aten::flatten", ViewKind::kReshape},
      {"aten::unflatten", ViewKind::kReshape},   {"aten::squeeze", ViewKind::kReshape},
      {"aten::unsqueeze", ViewKind::kReshape},   {"aten::_reshape_alias", ViewKind::kReshape},
      {"aten::transpose", ViewKind::kTranspose}, {"aten::swapaxes", ViewKind::kTranspose},
      {"aten::swapdims", ViewKind::kTranspose},  {"aten::t", ViewKind::kT},
      {"aten::permute", ViewKind::kPermute},     {"aten::alias", ViewKind::kIdentity},
      {"aten::detach", ViewKind::kIdentity},     {"aten::contiguous", ViewKind::kIdentity},
      {"aten::lift_fresh", ViewKind::kIdentity},
  };
  if (node->inputs().empty() || node->outputs().size() != 1) return ViewKind::kNone;
  if (!is_tensor(node->input(0)) || !is_tensor(node->output())) return ViewKind::kNone;
  auto it = kKinds.find(kind_of(node));
  if (it != kKinds.end()) return it->second;
  // Any other op whose schema says its result aliases its first argument without writing it.
  if (kind_of(node) == "aten::to") return ViewKind::kNone;  // see the note: taken as a copy
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (!schema || schema->returns().empty() || schema->arguments().empty()) return ViewKind::kNone;
  const c10::AliasInfo* out = schema->returns()[0].alias_info();
  const c10::AliasInfo* in = schema->arguments()[0].alias_info();
  if (out && in && !out->isWrite() && !in->isWrite()) return ViewKind::kUnsupported;
  return ViewKind::kNone;
}

// In-place ops that change only the metadata of self (its shape), not its elements: the base of a
// view written by them does not change.
bool is_metadata_only(const std::string& kind) {
  static const std::unordered_set<std::string> kOps = {
      "aten::squeeze_",  "aten::unsqueeze_", "aten::transpose_", "aten::t_",
      "aten::swapaxes_", "aten::swapdims_",  "aten::detach_"};
  return kOps.count(kind) > 0;
}

bool is_unsupported_inplace(const Node* node) {
  static const std::unordered_set<std::string> kOps = {"aten::as_strided_", "aten::resize_",
                                                       "aten::resize_as_", "aten::set_"};
  return kOps.count(kind_of(node)) > 0;
}

// A tensor taken out of a list an aliasing op made (unbind, split, chunk): a view we cannot
// write back through.
const Node* list_view_source(const Value* v) {
  const Node* node = v->node();
  if (node->kind() != c10::prim::ListUnpack && kind_of(node) != "aten::__getitem__") {
    return nullptr;
  }
  const Node* list = node->input(0)->node();
  const c10::FunctionSchema* schema = list->maybeSchema();
  if (!schema || schema->arguments().empty() || schema->returns().empty()) return nullptr;
  if (schema->returns()[0].alias_info() && schema->arguments()[0].alias_info()) return list;
  return nullptr;
}

// The value of an int[] argument: a constant or a ListConstruct of constants.
std::optional<std::vector<int64_t>> constant_ints(Value* v) {
  if (auto c = torch::jit::toIValue(v); c && c->isIntList()) return c->toIntVector();
  if (v->node()->kind() != c10::prim::ListConstruct) return std::nullopt;
  std::vector<int64_t> out;
  for (Value* e : v->node()->inputs()) {
    auto c = torch::jit::toIValue(e);
    if (!c || !c->isInt()) return std::nullopt;
    out.push_back(c->toInt());
  }
  return out;
}

struct Rewriter {
  explicit Rewriter(Graph& g) : graph(g) {}

  Graph& graph;
  Node* anchor = nullptr;                 // the last node of the functional form of the write
  std::unordered_set<const Node*> added;  // nodes this rewrite inserted after the anchor
  std::unordered_map<const Value*, bool> live_memo;

  // Whether `user` reads its input after the write (a node of the original graph after it).
  bool reads_after(const Node* user) const { return !added.count(user) && user->isAfter(anchor); }

  // Whether `block` is the write's block or encloses it; sets `through_loop` when a prim::Loop
  // lies between them.
  bool encloses_anchor(const torch::jit::Block* block, bool* through_loop = nullptr) const {
    bool loop = false;
    for (const Node* n = anchor; n != nullptr;) {
      if (n->owningBlock() == block) {
        if (through_loop) *through_loop = loop;
        return true;
      }
      n = n->owningBlock()->owningNode();
      if (n != nullptr && n->kind() == c10::prim::Loop) loop = true;
    }
    return false;
  }

  // A view of the written tensor's base made before the write, in the write's block or in a
  // block enclosing it (a view made before an if-branch or loop that writes its base).
  bool is_view_user(const torch::jit::Use& use) const {
    return use.offset == 0 && view_kind(use.user) != ViewKind::kNone &&
           encloses_anchor(use.user->owningBlock()) && use.user->isBefore(anchor);
  }

  // Whether `v` (or a view of it made before the write) is read after the write. A value defined
  // outside a loop that encloses the write is read after it whenever it is read at all: the next
  // iteration reads the new value.
  bool live(const Value* v) {
    if (auto it = live_memo.find(v); it != live_memo.end()) return it->second;
    bool through_loop = false;
    if (encloses_anchor(v->node()->owningBlock(), &through_loop) && through_loop && v->hasUses()) {
      return live_memo[v] = true;
    }
    bool result = false;
    for (const auto& use : v->uses()) {
      if (reads_after(use.user) || (is_view_user(use) && live(use.user->output()))) {
        result = true;
        break;
      }
    }
    live_memo[v] = result;
    return result;
  }

  // Whether the alias tree of `v`, other than the branch through view node `excluded`, is read
  // after the write.
  bool live_excluding(const Value* v, const Node* excluded) {
    for (const auto& use : v->uses()) {
      if (use.user == excluded) continue;
      if (reads_after(use.user) || (is_view_user(use) && live(use.user->output()))) return true;
    }
    const Node* producer = v->node();
    if (view_kind(producer) != ViewKind::kNone) return live_excluding(producer->input(0), producer);
    return false;
  }

  Value* insert(c10::Symbol kind, std::vector<torch::jit::NamedValue> args, Node* like) {
    Value* out = graph.insert(kind, args);
    out->node()->setSourceRange(like->sourceRange());
    out->node()->setScope(like->scope());
    added.insert(out->node());
    return out;
  }

  Value* constant(const c10::IValue& v) { return graph.insertConstant(v); }

  // The base `view->input(0)` with the view's elements replaced by `updated`.
  Value* write_back(Node* view, Value* updated) {
    Value* base = view->input(0);
    switch (view_kind(view)) {
      case ViewKind::kSelect:
        return insert(c10::aten::select_scatter, {base, updated, view->input(1), view->input(2)},
                      view);
      case ViewKind::kSlice:
        return insert(
            c10::aten::slice_scatter,
            {base, updated, view->input(1), view->input(2), view->input(3), view->input(4)}, view);
      case ViewKind::kNarrow: {
        auto start = torch::jit::toIValue(view->input(2));
        auto length = torch::jit::toIValue(view->input(3));
        if (!start || !start->isInt() || !length || !length->isInt()) {
          fail(view, "a write through narrow() with a start or length computed in the graph",
               kViewRemedy);
        }
        int64_t s = start->toInt();
        int64_t e = s + length->toInt();
        c10::IValue end = (s < 0 && e >= 0) ? c10::IValue() : c10::IValue(e);
        return insert(c10::aten::slice_scatter,
                      {base, updated, view->input(1), constant(s), constant(end), constant(1)},
                      view);
      }
      case ViewKind::kReshape: {
        Value* size = insert(c10::aten::size, {base}, view);
        return insert(c10::aten::reshape, {updated, size}, view);
      }
      case ViewKind::kTranspose:
        return insert(c10::aten::transpose, {updated, view->input(1), view->input(2)}, view);
      case ViewKind::kT:
        return insert(c10::aten::t, {updated}, view);
      case ViewKind::kPermute: {
        auto dims = constant_ints(view->input(1));
        if (!dims) {
          fail(view, "a write through permute() with dims computed in the graph", kViewRemedy);
        }
        const std::vector<int64_t>& perm = *dims;
        const int64_t rank = static_cast<int64_t>(perm.size());
        std::vector<int64_t> inverse(perm.size());
        for (int64_t i = 0; i < rank; ++i) inverse[(perm[i] % rank + rank) % rank] = i;
        return insert(c10::aten::permute, {updated, constant(inverse)}, view);
      }
      case ViewKind::kIdentity:
        return updated;
      case ViewKind::kNone:
      case ViewKind::kUnsupported:
        break;
    }
    fail(view, "cannot write through this view (torchonnx bug: unexpected view kind)", kViewRemedy);
  }

  // Replays, on `fresh` (the new value of `old`), every view of `old` made before the write and
  // read after it; records the old → new pairs.
  void refresh(Value* old, Value* fresh, std::vector<std::pair<Value*, Value*>>& renames) {
    renames.emplace_back(old, fresh);
    std::vector<Node*> views;
    for (const auto& use : old->uses()) {
      if (is_view_user(use) && live(use.user->output())) views.push_back(use.user);
    }
    for (Node* view : views) {
      Node* replay = graph.insertNode(graph.createClone(view, [](Value* v) { return v; }));
      replay->replaceInput(0, fresh);
      replay->output()->setType(view->output()->type());
      added.insert(replay);
      refresh(view->output(), replay->output(), renames);
    }
  }

  void rewrite(Node* node) {
    Value* self = node->input(0);
    for (size_t i = 1; i < node->inputs().size(); ++i) {
      if (writes_input(node, i) && is_tensor(node->input(i))) {
        fail(node, fmt::format("writes its argument {} (an out= variant)", i),
             "Remedy: use the functional form of the op (y = op(x) instead of op(x, out=y)).");
      }
    }
    if (kind_of(node) == "aten::set_" && node->inputs().size() == 2 && is_tensor(node->input(1))) {
      // Note [set_ of a tensor]: x.set_(y) makes x share y's storage, sizes and strides: from
      // then on x *is* y (as torch.onnx exports it), so later reads of x read y, and later
      // in-place writes through either name write the one value both names now denote. Views
      // of x taken before keep the old storage, and a base x is a view of does not change: no
      // write-back, as for the ops that change only the metadata of self.
      Value* source = node->input(1);
      node->output()->replaceAllUsesWith(source);
      ReplaceUsesAfter(graph, self, source, node);
      node->destroy();
      return;
    }
    if (is_unsupported_inplace(node)) {
      fail(node, "changes the size or storage of a tensor in place",
           "Remedy: use the out-of-place form (x = x.as_strided(...), x.new_empty(...)).");
    }
    const std::string kind = kind_of(node);
    const bool metadata = is_metadata_only(kind);

    // The chain of views from the written value up to its base (the first value that is not a
    // view), checked before anything changes.
    std::vector<Node*> chain;
    Value* top = self;
    while (!metadata && view_kind(top->node()) != ViewKind::kNone) {
      chain.push_back(top->node());
      top = top->node()->input(0);
    }

    // 1. The functional form of the write.
    Value* fresh = nullptr;
    Node* twin = nullptr;
    // add_ -> add; the in-place operators of Python's `|=`, `&=`, `^=`, `<<=`, `>>=` (aten::__ior__
    // in a trace) -> __or__, ...
    const std::string dunder = "aten::__i";
    if (kind.rfind(dunder, 0) == 0 && kind.size() > dunder.size() + 2 &&
        kind.compare(kind.size() - 2, 2, "__") == 0) {
      twin = graph.create(c10::Symbol::fromQualString("aten::__" + kind.substr(dunder.size())),
                          node->inputs(), 1);
    } else if (kind.size() > 1 && kind.back() == '_') {
      twin = graph.create(c10::Symbol::fromQualString(kind.substr(0, kind.size() - 1)),
                          node->inputs(), 1);
    }
    if (twin != nullptr && twin->maybeSchema() != nullptr) {
      twin->setSourceRange(node->sourceRange());
      twin->setScope(node->scope());
      twin->output()->setType(node->output()->type());
      twin->insertBefore(node);
      fresh = twin->output();
      if (!metadata) {
        torch::jit::WithInsertPoint guard(node);
        fresh = graph.insert(c10::aten::type_as, {fresh, self});
        fresh->node()->setSourceRange(node->sourceRange());
      }
      node->output()->replaceAllUsesWith(self);  // the op returns self
      anchor = fresh->node();
      node->destroy();
    } else {
      // No out-of-place twin (copy_.Tensor, ...): the node stays, and its converter is the
      // out-of-place one (Registry::find_for_node); its output is the new value of self, and reads
      // of that output are reads of self after the write.
      if (twin != nullptr) twin->destroy();
      fresh = node->output();
      anchor = node;
      auto uses = fresh->uses();
      for (const auto& use : uses) use.user->replaceInput(use.offset, self);
    }
    if (const Node* list = list_view_source(top); list != nullptr && !chain.empty()) {
      if (live_excluding(list->input(0), list)) {
        fail(anchor,
             fmt::format("writes to an element of {}{}, a view of a tensor read later",
                         kind_of(list), where(list)),
             kViewRemedy);
      }
    }
    torch::jit::WithInsertPoint guard(anchor->next());

    std::vector<std::pair<Value*, Value*>> renames;
    if (metadata) {
      // A shape change of self: other views and the base keep their shape and elements.
      renames.emplace_back(self, fresh);
    } else {
      // 2. Write back up the chain of views.
      Value* updated = fresh;
      Value* base = self;
      for (Node* view : chain) {
        if (view_kind(view) == ViewKind::kUnsupported) {
          if (live_excluding(view->input(0), view)) {
            fail(anchor,
                 fmt::format("writes through a view made by {}{}, whose base is read later",
                             kind_of(view), where(view)),
                 kViewRemedy);
          }
          break;  // nothing reads the base again: the write stays below this view
        }
        updated = write_back(view, updated);
        base = view->input(0);
      }
      // 3. Later reads of the base and of its views take the new values.
      refresh(base, updated, renames);
    }
    Node* last = graph.insertPoint()->prev();
    for (auto& [old, new_value] : renames) ReplaceUsesAfter(graph, old, new_value, last);
  }
};

void collect_in_place_writes(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* node : block->nodes()) {
    for (auto* sub : node->blocks()) collect_in_place_writes(sub, out);
    if (node->inputs().empty() || node->outputs().size() != 1) continue;
    if (!writes_input(node, 0) || !is_tensor(node->input(0))) continue;
    out.push_back(node);
  }
}

}  // namespace

void RemoveInplaceOps(Graph& graph) {
  std::vector<Node*> writes;
  collect_in_place_writes(graph.block(), writes);
  for (Node* node : writes) {
    Rewriter r(graph);
    r.rewrite(node);
  }
}

}  // namespace torchonnx::passes
