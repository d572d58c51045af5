#include "common/jit_util.h"

#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

namespace torchonnx {

bool writes_input(const torch::jit::Node* node, size_t i) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (!schema || i >= schema->arguments().size()) return false;
  const c10::AliasInfo* alias = schema->arguments()[i].alias_info();
  return alias != nullptr && alias->isWrite();
}

bool is_mutated(const torch::jit::Value* v) {
  for (const torch::jit::Use& use : v->uses()) {
    if (writes_input(use.user, use.offset)) return true;
  }
  return false;
}

std::string source_location(const torch::jit::Node* node) {
  const auto& range = node->sourceRange();
  if (auto flc = range.file_line_col()) {
    const auto& [file, line, col] = *flc;
    // A .pt loaded mapped has its code under .data/ts_code/ (Note [Mapped import]): the name
    // the code has in the .pt.
    const std::string mapped_prefix = ".data/ts_code/";
    if (file.rfind(mapped_prefix, 0) == 0) {
      return fmt::format("{}:{}", file.substr(mapped_prefix.size()), line);
    }
    return fmt::format("{}:{}", file, line);
  }
  return "";
}

}  // namespace torchonnx
