#include <torch/csrc/jit/ir/ir.h>

#include <string>
#include <vector>

#include "passes/passes.h"

namespace torchonnx::passes {

namespace {

// A dropout-like op whose `train` argument (input 2) is a constant False: the identity. Dropouts in
// training mode (constant True, or computed) are kept for the dropout converters
// (symbolic/ops/dropout.cpp); aten::native_dropout (two outputs) is converted in both modes.
bool is_eval_dropout(const torch::jit::Node* node) {
  static const std::vector<std::string> kDropouts = {"aten::dropout",
                                                     "aten::dropout_",
                                                     "aten::feature_dropout",
                                                     "aten::feature_dropout_",
                                                     "aten::alpha_dropout",
                                                     "aten::alpha_dropout_",
                                                     "aten::feature_alpha_dropout",
                                                     "aten::feature_alpha_dropout_"};
  const std::string kind = node->kind().toQualString();
  if (std::find(kDropouts.begin(), kDropouts.end(), kind) == kDropouts.end()) return false;
  auto train = torch::jit::toIValue(node->input(2));
  return train && train->isBool() && !train->toBool();
}

bool is_identity(const torch::jit::Node* node) {
  static const std::vector<std::string> kIdentities = {
      "aten::detach",          "aten::contiguous", "aten::clone", "aten::lift_fresh",
      "aten::lift_fresh_copy", "aten::lift",       "aten::alias", "aten::detach_"};
  const std::string kind = node->kind().toQualString();
  return std::find(kIdentities.begin(), kIdentities.end(), kind) != kIdentities.end() ||
         is_eval_dropout(node);
}

// An error message built by aten::format (`raise ValueError("... {}".format(x))` in scripted
// code, e.g. torch.nn.functional.interpolate's checks) and only raised: ONNX cannot raise (the
// raise converts to nothing), so the message is replaced by its format string, a constant.
bool is_raised_message(const torch::jit::Node* node) {
  static const c10::Symbol kFormat = c10::Symbol::fromQualString("aten::format");
  if (node->kind() != kFormat || node->outputs().size() != 1 || node->inputs().empty()) {
    return false;
  }
  if (!torch::jit::toIValue(node->input(0))) return false;
  for (const torch::jit::Use& use : node->output()->uses()) {
    if (use.user->kind() != c10::prim::RaiseException) return false;
  }
  return true;
}

// Note [Grad-mode contexts]: `with torch.no_grad():` (or enable_grad) in scripted code, e.g.
// F.gaussian_nll_loss's clamp of the variance, is a prim::CreateObject of the context class, a
// prim::SetAttr of its previous mode, and prim::Enter / prim::Exit around the body. Gradients do
// not exist in the exported graph: the context goes, its body stays.
bool is_grad_mode_context(const torch::jit::Node* node) {
  if (node->kind() != c10::prim::CreateObject) return false;
  auto type = node->output()->type()->cast<c10::ClassType>();
  if (!type || !type->name()) return false;
  const std::string name = type->name()->qualifiedName();
  if (name != "__torch__.torch.autograd.grad_mode.no_grad" &&
      name != "__torch__.torch.autograd.grad_mode.enable_grad") {
    return false;
  }
  for (const torch::jit::Use& use : node->output()->uses()) {
    const c10::Symbol kind = use.user->kind();
    if (kind == c10::prim::Exit && use.user->output()->hasUses()) return false;
    if (kind != c10::prim::SetAttr && kind != c10::prim::Enter && kind != c10::prim::Exit) {
      return false;
    }
  }
  return true;
}

void collect_grad_mode_contexts(torch::jit::Block* block, std::vector<torch::jit::Node*>& found) {
  for (torch::jit::Node* node : block->nodes()) {
    for (auto* sub : node->blocks()) collect_grad_mode_contexts(sub, found);
    if (is_grad_mode_context(node)) found.push_back(node);
  }
}

void remove_grad_mode_contexts(torch::jit::Graph& graph) {
  std::vector<torch::jit::Node*> contexts;
  collect_grad_mode_contexts(graph.block(), contexts);
  for (torch::jit::Node* context : contexts) {
    std::vector<torch::jit::Node*> users;
    for (const torch::jit::Use& use : context->output()->uses()) users.push_back(use.user);
    for (torch::jit::Node* user : users) user->destroy();
    context->destroy();
  }
}

void remove_in_block(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* node = *it++;
    for (auto* sub : node->blocks()) remove_in_block(sub);
    // ONNX cannot raise (the converter of prim::RaiseException makes nothing, as in torch.onnx):
    // dropped here, an If left without work (`if hx.size() != expected: raise ...`) and the
    // check computing its condition go as dead code, instead of a comparison of lists known only
    // at run time being converted for nothing.
    // aten::warn (warnings.warn in scripted code, e.g. F.upsample_bilinear's deprecation) and
    // prim::Print (print() in scripted code) have no ONNX form either: torch.onnx drops them too
    // (its _jit_pass_onnx_remove_print); what only they read (an f-string's aten::format) goes as
    // dead code.
    static const c10::Symbol kWarn = c10::Symbol::fromQualString("aten::warn");
    if (node->kind() == c10::prim::RaiseException || node->kind() == kWarn ||
        node->kind() == c10::prim::Print) {
      node->destroy();
      continue;
    }
    if (is_raised_message(node)) {
      node->output()->replaceAllUsesWith(node->input(0));
      node->destroy();
      continue;
    }
    if (is_identity(node) && node->outputs().size() == 1) {
      node->output()->replaceAllUsesWith(node->input(0));
      node->destroy();
    }
  }
}

}  // namespace

void RemoveEvalNoOps(torch::jit::Graph& graph) {
  remove_grad_mode_contexts(graph);
  remove_in_block(graph.block());
}

}  // namespace torchonnx::passes
