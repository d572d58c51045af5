// export_modules_as_functions, the conversion's part: every ONNX node is tagged with the module
// instances its TorchScript node ran in (module_scope), which onnx/module_functions.cpp reads to
// extract the functions (Note [Module functions] there).
#include "symbolic/functions.h"

#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/scope.h>

#include "onnx/module_functions.h"
#include "torchonnx/errors.h"

namespace torchonnx::symbolic {

std::vector<std::string> module_scope(const torch::jit::Node* node) {
  std::vector<std::string> scope;
  auto callstack = node->callstack();
  if (!callstack) return scope;
  std::string path;
  for (const auto& entry : (*callstack)->vec()) {
    const auto& instance = std::get<2>(entry);
    if (!instance || !instance->class_type()) continue;
    path = path.empty() ? instance->instance_name() : path + "." + instance->instance_name();
    // The call site tells apart instances the names do not: ModuleList elements are named by
    // their index only, so enc.0 and dec.0 are both "0". The method tells apart the calls of one
    // instance in a traced graph, which has no call sites: the tracer records each call of a
    // submodule as a method of its own (forward, forward1, ...).
    const auto& site = std::get<1>(entry);
    const torch::jit::Function* method = std::get<0>(entry);
    scope.push_back(fmt::format(
        "{}:{}@{}/{}", path, demangle_type_name(instance->class_type()->name()->qualifiedName()),
        site.source() ? static_cast<int64_t>(site.start()) : -1, method ? method->name() : ""));
  }
  return scope;
}

void tag_module_scope(ir::Graph& graph, size_t first, const torch::jit::Node* node) {
  if (first >= graph.nodes.size()) return;
  auto scope = module_scope(node);
  if (scope.empty()) return;
  for (size_t i = first; i < graph.nodes.size(); ++i) graph.nodes[i].scope = scope;
}

}  // namespace torchonnx::symbolic
