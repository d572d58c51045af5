#include "common/jit_util.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

namespace torchonnx {

namespace {

// Whether a value of type `actual` can stand for an argument of type `expected` by kind (see
// Note [Overloads resolved once]).
bool fits(const c10::TypePtr& expected, const c10::TypePtr& actual) {
  using K = c10::TypeKind;
  if (actual->isSubtypeOf(*expected)) return true;
  const K want = expected->kind(), have = actual->kind();
  if (want == K::OptionalType) {
    return have == K::NoneType ||
           fits(expected->expectRef<c10::OptionalType>().getElementType(), actual);
  }
  if (want == K::VarType || want == K::AnyType) return true;
  auto number = [](K k) {
    return k == K::IntType || k == K::FloatType || k == K::BoolType || k == K::NumberType ||
           k == K::ComplexType;
  };
  switch (want) {
    case K::TensorType:
      return have == K::TensorType;
    case K::ListType:
      return have == K::ListType && fits(expected->expectRef<c10::ListType>().getElementType(),
                                         actual->expectRef<c10::ListType>().getElementType());
    case K::NumberType:
      return number(have);
    case K::FloatType:
      return have == K::FloatType || have == K::IntType;
    default:
      return want == have;
  }
}

}  // namespace

const c10::FunctionSchema* node_schema(const torch::jit::Node* node) {
  if (const c10::FunctionSchema* schema = node->maybeSchema()) return schema;
  const auto inputs = node->inputs();
  for (const auto& op : torch::jit::getAllOperatorsFor(node->kind())) {
    const c10::FunctionSchema& schema = op->schema();
    const auto& args = schema.arguments();
    if (schema.is_vararg() || args.size() != inputs.size()) continue;
    bool all = true;
    for (size_t i = 0; all && i < args.size(); ++i) all = fits(args[i].type(), inputs[i]->type());
    if (all) return &schema;
  }
  return nullptr;
}

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

namespace {
const torch::jit::Value* refined_from(const torch::jit::Value* v) {
  while (v->node()->kind() == c10::prim::unchecked_cast) v = v->node()->input();
  return v;
}
}  // namespace

bool same_object(const torch::jit::Value* a, const torch::jit::Value* b) {
  return refined_from(a) == refined_from(b);
}

bool never_none(const torch::jit::Value* v) {
  const auto kind = v->type()->kind();
  return kind != c10::TypeKind::NoneType && kind != c10::TypeKind::OptionalType &&
         kind != c10::TypeKind::AnyType;
}

void wrap_scalar_constants(torch::jit::Block* block) {
  for (torch::jit::Node* node : block->nodes()) {
    for (torch::jit::Block* sub : node->blocks()) wrap_scalar_constants(sub);
    if (node->kind() != c10::prim::Constant || !node->hasAttribute(c10::attr::value) ||
        node->kindOf(c10::attr::value) != torch::jit::AttributeKind::t) {
      continue;
    }
    const at::Tensor& t = node->t(c10::attr::value);
    if (!t.defined() || t.dim() != 0 || t.requires_grad() || !t.device().is_cpu() ||
        t.unsafeGetTensorImpl()->is_wrapped_number() ||
        !(t.scalar_type() == at::kDouble || t.scalar_type() == at::kLong)) {
      continue;
    }
    at::Tensor wrapped = t.clone();
    wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
    node->t_(c10::attr::value, wrapped);
  }
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
