// Note [Lists of lists]
// ONNX has sequences of tensors but no sequence of sequences, and our converters bind a list to its
// element values: a list of lists (`List[List[Tensor]]`, the per-layer [h, c] states of a stacked
// RNN) has no ONNX form of its own. Most such lists are built in straight-line code, TorchScript's
// unrolled loop over a ModuleList:
//
//   %out = prim::ListConstruct()                          (Tensor[][])
//   %s0 = prim::ListConstruct(%h0, %c0)
//   %1 = aten::append(%out, %s0)
//   %out1 = aten::list(%out)                              (FunctionalizeLists' copy)
//   %2 = aten::append(%out1, %s1)
//   %prev = aten::__getitem__(%state, %k)                 (%state an input: a ListConstruct)
//   return (..., %out2)
//
// and then their contents are known at export: each read is one of the inner lists (%s0), each
// length a constant, and a returned list of lists is its inner lists in order, flattened as
// torch.onnx flattens nested outputs. This pass follows each list of lists from its ListConstruct
// through appends, copies, concatenations and casts in the block that makes it, resolves its reads
// to the inner list values and removes it. A list of lists that a loop carries, an If returns, or
// that is read at a position computed at run time keeps its nodes, and the converters refuse it by
// name.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

#include "passes/passes.h"

namespace torchonnx::passes {

namespace {

using torch::jit::Node;
using torch::jit::Value;

const c10::Symbol kAppend = c10::Symbol::fromQualString("aten::append");
const c10::Symbol kCopy = c10::Symbol::fromQualString("aten::list");
const c10::Symbol kGetItem = c10::Symbol::fromQualString("aten::__getitem__");
const c10::Symbol kLen = c10::Symbol::fromQualString("aten::len");
const c10::Symbol kConcat = c10::Symbol::fromQualString("aten::add");

bool is_list_of_lists(const Value* v) {
  auto list = v->type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::ListType;
}

// The lists of lists made from one ListConstruct (copies and concatenations included): lowered
// together, or not at all.
struct Family {
  bool escaped = false;
  std::vector<Node*> nodes;  // the nodes that make and change its lists, in order
};

// One list of lists at a point of the block: its inner lists.
struct Contents {
  std::vector<Value*> items;
  std::shared_ptr<Family> family;
};

// A read of a list of lists, resolved at its point of the block.
struct Read {
  Node* node;
  std::vector<Value*> values;  // for the node's outputs (getitem, ListUnpack) or a length
  std::shared_ptr<Family> family;
};

class Lowering {
 public:
  explicit Lowering(torch::jit::Graph& graph) : graph_(graph) {}

  bool run() {
    torch::jit::Block* block = graph_.block();
    for (Node* node : block->nodes()) visit(node);
    // A read may resolve to another read's output (`b = [a[0]]`, then `b[0]`): follow such
    // values to the one that stays, since the reads' nodes go.
    std::unordered_map<Value*, Value*> resolved;
    for (const Read& read : reads_) {
      if (read.family->escaped || read.node->kind() == kLen) continue;
      for (size_t k = 0; k < read.values.size(); ++k)
        resolved[read.node->output(k)] = read.values[k];
    }
    auto lasting = [&](Value* v) {
      for (auto it = resolved.find(v); it != resolved.end(); it = resolved.find(v)) v = it->second;
      return v;
    };
    bool changed = false;
    for (const Read& read : reads_) {
      if (read.family->escaped) continue;
      changed = true;
      if (read.node->kind() == kLen) {
        torch::jit::WithInsertPoint at(read.node);
        read.node->output()->replaceAllUsesWith(graph_.insertConstant(
            static_cast<int64_t>(read.values.size()), read.node->sourceRange()));
        continue;
      }
      for (size_t k = 0; k < read.values.size(); ++k) {
        read.node->output(k)->replaceAllUsesWith(lasting(read.values[k]));
      }
    }
    // The graph's outputs (read after the reads above resolved): a list of lists is its inner
    // lists, flattened further by FlattenOutputs.
    std::vector<Value*> outputs;
    for (Value* out : block->outputs()) {
      auto contents = tracked(out);
      if (contents && !contents->family->escaped) {
        for (Value* item : contents->items) outputs.push_back(lasting(item));
        changed = true;
      } else {
        outputs.push_back(out);
      }
    }
    if (!changed) return false;
    while (!block->outputs().empty()) block->eraseOutput(block->outputs().size() - 1);
    for (Value* out : outputs) block->registerOutput(out);
    // Everything that read the lowered lists now reads inner lists: their nodes go, last first.
    for (const Read& read : reads_) {
      if (!read.family->escaped) read.node->destroy();
    }
    for (auto it = families_.rbegin(); it != families_.rend(); ++it) {
      if ((*it)->escaped) continue;
      // A joined family's nodes are in order within each part: sort them into block order.
      std::vector<Node*>& nodes = (*it)->nodes;
      std::sort(nodes.begin(), nodes.end(), [](Node* a, Node* b) { return a->isBefore(b); });
      for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) (*n)->destroy();
    }
    return true;
  }

 private:
  std::shared_ptr<Contents> make(Value* v, std::vector<Value*> items,
                                 std::shared_ptr<Family> family) {
    auto contents = std::make_shared<Contents>();
    contents->items = std::move(items);
    contents->family = std::move(family);
    lists_[v] = contents;
    return contents;
  }

  // Joins two families (a concatenation of lists of two constructions): one escape spoils both.
  // By value: the loop below reassigns the Contents' families the caller's references point at.
  void join(std::shared_ptr<Family> into, std::shared_ptr<Family> from) {
    if (into == from) return;
    into->escaped = into->escaped || from->escaped;
    into->nodes.insert(into->nodes.end(), from->nodes.begin(), from->nodes.end());
    for (auto& [value, contents] : lists_) {
      if (contents->family == from) contents->family = into;
    }
    for (Read& read : reads_) {
      if (read.family == from) read.family = into;
    }
    from->escaped = true;  // emptied: nothing of its own is left to lower
    from->nodes.clear();
  }

  std::shared_ptr<Contents> tracked(Value* v) {
    auto it = lists_.find(v);
    return it == lists_.end() ? nullptr : it->second;
  }

  // A use of a tracked list that this pass does not resolve: the list stays as it is.
  void escape_inputs(Node* node) {
    for (Value* in : node->inputs()) {
      if (auto contents = tracked(in)) contents->family->escaped = true;
    }
  }

  void visit(Node* node) {
    const c10::Symbol kind = node->kind();
    // A list of lists read inside a loop or a branch, or one that they make, is not followed.
    if (!node->blocks().empty()) {
      escape_inputs(node);
      escape_captured(node);
      return;
    }
    if (kind == c10::prim::ListConstruct && is_list_of_lists(node->output())) {
      auto family = std::make_shared<Family>();
      family->nodes.push_back(node);
      families_.push_back(family);
      make(node->output(), node->inputs().vec(), family);
      return;
    }
    if (kind == kAppend && node->inputs().size() == 2) {
      if (auto contents = tracked(node->input(0))) {
        contents->items.push_back(node->input(1));
        contents->family->nodes.push_back(node);
        lists_[node->output()] = contents;  // append returns the list itself
        return;
      }
    } else if (kind == kCopy && node->inputs().size() == 1) {
      if (auto contents = tracked(node->input(0))) {
        contents->family->nodes.push_back(node);
        make(node->output(), contents->items, contents->family);
        return;
      }
    } else if (kind == c10::prim::unchecked_cast) {
      if (auto contents = tracked(node->input(0))) {
        contents->family->nodes.push_back(node);
        lists_[node->output()] = contents;
        return;
      }
    } else if (kind == kConcat && node->inputs().size() == 2 && is_list_of_lists(node->output())) {
      auto a = tracked(node->input(0));
      auto b = tracked(node->input(1));
      if (a && b) {
        join(a->family, b->family);
        a->family->nodes.push_back(node);
        std::vector<Value*> items = a->items;
        items.insert(items.end(), b->items.begin(), b->items.end());
        make(node->output(), std::move(items), a->family);
        return;
      }
    } else if (kind == kGetItem && node->inputs().size() == 2) {
      if (auto contents = tracked(node->input(0))) {
        auto index = torch::jit::constant_as<int64_t>(node->input(1));
        const auto n = static_cast<int64_t>(contents->items.size());
        if (index && *index < n && *index >= -n) {
          const int64_t i = *index < 0 ? *index + n : *index;
          reads_.push_back({node, {contents->items[static_cast<size_t>(i)]}, contents->family});
          return;
        }
      }
    } else if (kind == kLen && node->inputs().size() == 1) {
      if (auto contents = tracked(node->input(0))) {
        reads_.push_back({node, contents->items, contents->family});
        return;
      }
    } else if (kind == c10::prim::ListUnpack) {
      if (auto contents = tracked(node->input(0))) {
        if (contents->items.size() == node->outputs().size()) {
          reads_.push_back({node, contents->items, contents->family});
          return;
        }
      }
    }
    escape_inputs(node);
  }

  // The tracked lists that the blocks of `node` read from outside them.
  void escape_captured(Node* node) {
    for (torch::jit::Block* block : node->blocks()) {
      for (Node* inner : block->nodes()) {
        escape_inputs(inner);
        escape_captured(inner);
      }
      for (Value* out : block->outputs()) {
        if (auto contents = tracked(out)) contents->family->escaped = true;
      }
    }
  }

  torch::jit::Graph& graph_;
  std::unordered_map<Value*, std::shared_ptr<Contents>> lists_;
  std::vector<std::shared_ptr<Family>> families_;
  std::vector<Read> reads_;
};

}  // namespace

bool LowerNestedLists(torch::jit::Graph& graph) {
  return Lowering(graph).run();
}

}  // namespace torchonnx::passes
