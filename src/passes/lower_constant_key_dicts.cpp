// Note [Dicts with constant keys]
// Scripted models gather named values in dicts ({"logits": y, "hidden": h}) and read them back by
// name. ONNX has no dict type (its maps hold scalars and have no reader), but a dict whose keys
// are constants and whose reads name constant keys is only a naming of its values: each read is
// the value stored under its key, `k in d` and `len(d)` are constants. Such a dict is removed
// before type propagation; a dict that is written (d[k] = v, update, pop), read with a key
// computed at run time, or passed on whole (returned dicts are flattened by FlattenOutputs, which
// runs first) stays, and the export names prim::DictConstruct as unconvertible.
//
//   %d = prim::DictConstruct("a", %x, "b", %y)
//   %1 = aten::__getitem__(%d, "b")            ⇒     uses of %1 read %y
//   %2 = aten::__contains__(%d, "c")           ⇒     %2 = prim::Constant[value=0]()
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <optional>
#include <vector>

#include "passes/passes.h"

namespace torchonnx::passes {

namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// d.get(key, default): no interned symbol of its own.
const c10::Symbol kGet = c10::Symbol::fromQualString("aten::get");

// The index of the entry of `dict` (a prim::DictConstruct with constant keys) whose key equals
// the constant `key`; -1 when no entry has it; nullopt when `key` is not a constant.
std::optional<int64_t> entry_of(const Node* dict, const Value* key) {
  auto k = torch::jit::toIValue(key);
  if (!k) return std::nullopt;
  const size_t entries = dict->inputs().size() / 2;
  for (size_t e = 0; e < entries; ++e) {
    if (*torch::jit::toIValue(dict->input(2 * e)) == *k) return static_cast<int64_t>(e);
  }
  return -1;
}

// Whether every key of `dict` is a constant and every use is a read this pass can resolve.
bool lowerable(const Node* dict) {
  for (size_t i = 0; i < dict->inputs().size(); i += 2) {
    if (!torch::jit::toIValue(dict->input(i))) return false;
  }
  for (const torch::jit::Use& use : dict->output()->uses()) {
    const Node* user = use.user;
    if (use.offset != 0) return false;
    if (user->kind() == c10::aten::len && user->inputs().size() == 1) continue;
    if (user->kind() != c10::aten::__getitem__ && user->kind() != c10::aten::__contains__ &&
        user->kind() != kGet) {
      return false;
    }
    auto entry = entry_of(dict, user->input(1));
    if (!entry) return false;
    // d[k] of a key the dict lacks raises in PyTorch: left to the export to report.
    if (*entry < 0 && user->kind() == c10::aten::__getitem__) return false;
    // d.get(k) of a missing key: the default (or None).
    if (*entry < 0 && user->kind() == kGet && user->inputs().size() < 3) return false;
  }
  return true;
}

void lower(Graph& graph, Node* dict) {
  for (const torch::jit::Use& use : dict->output()->uses()) {
    Node* user = use.user;
    torch::jit::WithInsertPoint guard(user);
    Value* result = nullptr;
    if (user->kind() == c10::aten::len) {
      result = graph.insertConstant(static_cast<int64_t>(dict->inputs().size() / 2));
    } else {
      const int64_t entry = *entry_of(dict, user->input(1));
      if (user->kind() == c10::aten::__contains__) {
        result = graph.insertConstant(entry >= 0);
      } else if (entry >= 0) {
        result = dict->input(2 * entry + 1);
      } else {
        result = user->input(2);  // d.get(k, default) of a missing key
      }
    }
    user->output()->replaceAllUsesWith(result);
  }
  // The readers now have no uses; they and the dict go.
  std::vector<Node*> users;
  for (const torch::jit::Use& use : dict->output()->uses()) users.push_back(use.user);
  for (Node* user : users) user->destroy();
  dict->destroy();
}

void collect_dicts(Block* block, std::vector<Node*>& dicts) {
  for (Node* node : block->nodes()) {
    for (Block* sub : node->blocks()) collect_dicts(sub, dicts);
    if (node->kind() == c10::prim::DictConstruct) dicts.push_back(node);
  }
}

}  // namespace

void LowerConstantKeyDicts(Graph& graph) {
  std::vector<Node*> dicts;
  collect_dicts(graph.block(), dicts);
  for (Node* dict : dicts) {
    if (lowerable(dict)) lower(graph, dict);
  }
}

}  // namespace torchonnx::passes
