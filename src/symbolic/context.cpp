#include "symbolic/context.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include "common/jit_util.h"
#include "onnx/dtype.h"
#include "torchonnx/errors.h"

namespace torchonnx::symbolic {

using torch::jit::Node;

std::string source_location(const Node* node) {
  const auto& range = node->sourceRange();
  if (auto flc = range.file_line_col()) {
    const auto& [file, line, col] = *flc;
    return fmt::format("{}:{}", file, line);
  }
  return "";
}

std::string GraphContext::fresh_name(const std::string& hint) {
  int& n = name_counts_[hint];
  return fmt::format("{}_{}", hint, n++);
}

Values GraphContext::op(const std::string& type, const Values& inputs, ir::Attributes attributes,
                        size_t num_outputs) {
  ir::Node node;
  auto sep = type.find("::");
  if (sep == std::string::npos) {
    node.op_type = type;
  } else {
    node.domain = type.substr(0, sep);
    node.op_type = type.substr(sep + 2);
  }
  node.name = fresh_name(node.op_type);
  node.inputs = inputs;
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(num_outputs == 1 ? node.name : fmt::format("{}.{}", node.name, i));
  }
  node.attributes = std::move(attributes);
  if (node_ != nullptr) node.source = source_location(node_);
  Values outputs = node.outputs;
  graph_.nodes.push_back(std::move(node));
  return outputs;
}

Value GraphContext::op(const std::string& type, const Values& inputs, ir::Attributes attributes) {
  return op(type, inputs, std::move(attributes), 1).front();
}

Value GraphContext::constant(const at::Tensor& tensor) {
  return op("Constant", {}, {{"value", tensor.detach().clone().contiguous()}});
}

Value GraphContext::constant_ints(const std::vector<int64_t>& values) {
  return constant(at::tensor(values, at::kLong));
}

Value GraphContext::constant_scalar(double value, at::ScalarType type) {
  return constant(at::scalar_tensor(value, at::TensorOptions().dtype(type)));
}

Value GraphContext::cast(const Value& v, at::ScalarType to) {
  return op("Cast", {v}, {{"to", static_cast<int64_t>(to_onnx_dtype(to))}});
}

const Values* GraphContext::lookup(const torch::jit::Value* v) const {
  auto it = env_.find(v);
  return it == env_.end() ? nullptr : &it->second;
}

void GraphContext::bind(const torch::jit::Value* v, Values values) {
  env_[v] = std::move(values);
}

void GraphContext::fail(const std::string& message) const {
  std::string where;
  if (node_ != nullptr) {
    std::string loc = source_location(node_);
    where = fmt::format("cannot export {}{} at opset {}: ", node_->kind().toQualString(),
                        loc.empty() ? "" : " (" + loc + ")", opset_);
  }
  throw ExportError(ErrorCode::kConversion, where + message);
}

// ---------------------------------------------------------------------------------------------

size_t Args::size() const {
  return node_->inputs().size();
}

const torch::jit::Value* Args::jit(size_t i) const {
  if (i >= node_->inputs().size()) g_.fail(fmt::format("argument {} is missing", i));
  return node_->input(i);
}

bool Args::is_none(size_t i) const {
  return jit(i)->type()->kind() == c10::TypeKind::NoneType ||
         (jit(i)->node()->kind() == c10::prim::Constant &&
          !jit(i)->node()->hasAttribute(c10::attr::value) &&
          jit(i)->type()->kind() == c10::TypeKind::OptionalType);
}

std::optional<c10::IValue> constant_value(const torch::jit::Value* v) {
  if (is_mutated(v)) return std::nullopt;
  if (auto c = torch::jit::toIValue(v)) return c;
  if (v->node()->kind() != c10::prim::ListConstruct) return std::nullopt;
  c10::impl::GenericList list(v->type()->expectRef<c10::ListType>().getElementType());
  for (const auto* in : v->node()->inputs()) {
    auto c = constant_value(in);
    if (!c) return std::nullopt;
    list.push_back(*c);
  }
  return c10::IValue(std::move(list));
}

bool Args::is_constant(size_t i) const {
  return constant_value(jit(i)).has_value();
}

c10::IValue Args::constant(size_t i) const {
  auto v = constant_value(jit(i));
  if (!v) {
    g_.fail(
        fmt::format("argument {} must be a constant, but it is computed in the graph "
                    "(%{})",
                    i, jit(i)->debugName()));
  }
  return *v;
}

int64_t Args::int_arg(size_t i) const {
  auto v = constant(i);
  if (!v.isInt()) g_.fail(fmt::format("argument {} must be an int, got {}", i, v.tagKind()));
  return v.toInt();
}

double Args::float_arg(size_t i) const {
  auto v = constant(i);
  if (v.isInt()) return static_cast<double>(v.toInt());
  if (!v.isDouble()) g_.fail(fmt::format("argument {} must be a float, got {}", i, v.tagKind()));
  return v.toDouble();
}

bool Args::bool_arg(size_t i) const {
  auto v = constant(i);
  if (v.isInt()) return v.toInt() != 0;
  if (!v.isBool()) g_.fail(fmt::format("argument {} must be a bool, got {}", i, v.tagKind()));
  return v.toBool();
}

std::string Args::str_arg(size_t i) const {
  auto v = constant(i);
  if (!v.isString()) g_.fail(fmt::format("argument {} must be a str, got {}", i, v.tagKind()));
  return v.toStringRef();
}

std::vector<int64_t> Args::int_list(size_t i) const {
  auto v = constant(i);
  if (v.isInt()) return {v.toInt()};
  if (!v.isIntList()) {
    g_.fail(fmt::format("argument {} must be a constant int[], got {}", i, v.tagKind()));
  }
  return v.toIntVector();
}

std::optional<int64_t> Args::optional_int(size_t i) const {
  if (is_none(i)) return std::nullopt;
  auto v = constant(i);
  if (v.isNone()) return std::nullopt;
  return int_arg(i);
}

std::optional<double> Args::optional_float(size_t i) const {
  if (is_none(i)) return std::nullopt;
  auto v = constant(i);
  if (v.isNone()) return std::nullopt;
  return float_arg(i);
}

std::optional<std::vector<int64_t>> Args::optional_int_list(size_t i) const {
  if (is_none(i)) return std::nullopt;
  auto v = constant(i);
  if (v.isNone()) return std::nullopt;
  return int_list(i);
}

namespace {

at::ScalarType scalar_dtype(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::IntType:
      return at::kLong;
    case c10::TypeKind::FloatType:
      return at::kDouble;
    case c10::TypeKind::BoolType:
      return at::kBool;
    default:
      return at::ScalarType::Undefined;
  }
}

at::ScalarType value_dtype(const torch::jit::Value* v) {
  if (auto t = v->type()->cast<c10::TensorType>()) {
    return t->scalarType().value_or(at::ScalarType::Undefined);
  }
  return scalar_dtype(v->type());
}

std::optional<std::vector<int64_t>> value_sizes(const torch::jit::Value* v) {
  if (auto t = v->type()->cast<c10::TensorType>()) {
    if (auto sizes = t->sizes().concrete_sizes()) return *sizes;
    return std::nullopt;
  }
  if (scalar_dtype(v->type()) != at::ScalarType::Undefined) return std::vector<int64_t>{};
  return std::nullopt;
}

}  // namespace

at::ScalarType Args::dtype(size_t i) const {
  return value_dtype(jit(i));
}

std::optional<std::vector<int64_t>> Args::sizes(size_t i) const {
  return value_sizes(jit(i));
}

std::optional<int64_t> Args::rank(size_t i) const {
  if (auto t = jit(i)->type()->cast<c10::TensorType>()) {
    if (auto dim = t->dim()) return static_cast<int64_t>(*dim);
    return std::nullopt;
  }
  if (scalar_dtype(jit(i)->type()) != at::ScalarType::Undefined) return 0;
  return std::nullopt;
}

int64_t Args::require_rank(size_t i) const {
  auto r = rank(i);
  if (!r) {
    g_.fail(
        fmt::format("the rank of argument {} (%{}) is unknown; type propagation could not "
                    "compute it",
                    i, jit(i)->debugName()));
  }
  return *r;
}

at::ScalarType Args::output_dtype(size_t k) const {
  return value_dtype(node_->output(k));
}

std::optional<std::vector<int64_t>> Args::output_sizes(size_t k) const {
  return value_sizes(node_->output(k));
}

Value Args::tensor(size_t i) const {
  const torch::jit::Value* v = jit(i);
  if (const Values* bound = g_.lookup(v)) {
    if (bound->size() != 1) {
      g_.fail(fmt::format("argument {} is a list of {} values where a tensor is expected", i,
                          bound->size()));
    }
    return bound->front();
  }
  if (auto c = torch::jit::toIValue(v)) {
    if (c->isTensor()) return g_.constant(c->toTensor());
    if (c->isInt() || c->isDouble() || c->isBool()) {
      return g_.constant(at::scalar_to_tensor(c->toScalar()));
    }
    if (c->isIntList()) return g_.constant_ints(c->toIntVector());
    g_.fail(fmt::format("argument {} (a constant {}) cannot be a tensor", i, c->tagKind()));
  }
  g_.fail(fmt::format("argument {} (%{}) has no ONNX value; its producer was not converted", i,
                      v->debugName()));
}

Value Args::tensor_as(size_t i, at::ScalarType type) const {
  const torch::jit::Value* v = jit(i);
  if (auto c = torch::jit::toIValue(v)) {
    // A constant is made in the wanted type directly (no Cast node); a tensor constant already of
    // that type is shared through its binding.
    if (c->isTensor() && (!g_.lookup(v) || c->toTensor().scalar_type() != type)) {
      return g_.constant(c->toTensor().to(type));
    }
    if (!g_.lookup(v) && (c->isInt() || c->isDouble() || c->isBool())) {
      return g_.constant(at::scalar_tensor(c->toScalar(), at::TensorOptions().dtype(type)));
    }
  }
  Value t = tensor(i);
  return dtype(i) == type ? t : g_.cast(t, type);
}

Values Args::tensor_list(size_t i) const {
  const torch::jit::Value* v = jit(i);
  if (const Values* bound = g_.lookup(v)) return *bound;
  if (v->node()->kind() == c10::prim::ListConstruct) {
    Values out;
    Args inner(g_, v->node());
    for (size_t k = 0; k < inner.size(); ++k) out.push_back(inner.tensor(k));
    return out;
  }
  if (auto c = torch::jit::toIValue(v); c && c->isTensorList()) {
    Values out;
    for (const at::Tensor& t : c->toTensorVector()) out.push_back(g_.constant(t));
    return out;
  }
  g_.fail(fmt::format("argument {} must be a list of tensors built in the graph", i));
}

}  // namespace torchonnx::symbolic
