#include "symbolic/context.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>

#include "common/jit_util.h"
#include "onnx/dtype.h"
#include "torchonnx/errors.h"

namespace torchonnx::symbolic {

using torch::jit::Node;

std::string overload_name(const Node* node) {
  const c10::FunctionSchema* schema = node_schema(node);  // Note [Overloads resolved once]
  return schema != nullptr ? schema->overload_name() : "";
}

namespace {

std::optional<at::ScalarType> tensor_dtype(const torch::jit::Value* v) {
  if (auto t = v->type()->cast<c10::TensorType>()) {
    if (auto s = t->scalarType()) return *s;
  }
  return std::nullopt;
}

// The dtype of the tensors a Tensor[] value holds, found from what was put into it: through
// appends, copies, loop-carried values and branches.
std::optional<at::ScalarType> list_element_dtype(
    const torch::jit::Value* v, std::unordered_set<const torch::jit::Value*>& seen) {
  if (!seen.insert(v).second) return std::nullopt;
  const Node* node = v->node();
  auto first_of = [&](std::initializer_list<const torch::jit::Value*> candidates) {
    for (const auto* c : candidates) {
      if (!c) continue;
      auto d = c->type()->cast<c10::ListType>() ? list_element_dtype(c, seen) : tensor_dtype(c);
      if (d) return d;
    }
    return std::optional<at::ScalarType>();
  };
  // Elements put into the list by a mutation (append, insert, l[i] = t).
  for (const auto& use : v->uses()) {
    if (use.offset != 0) continue;
    const std::string user = use.user->kind().toQualString();
    size_t element = user == "aten::append"                                  ? 1
                     : (user == "aten::insert" || user == "aten::_set_item") ? 2
                                                                             : 0;
    if (user == "aten::add_" && use.user->inputs().size() == 2) {
      // `res += [x]`: the elements of the list added.
      if (auto d = first_of({use.user->input(1)})) return d;
      continue;
    }
    if (element == 0 || element >= use.user->inputs().size()) continue;
    if (auto d = tensor_dtype(use.user->input(element))) return d;
  }
  const std::string kind = node->kind().toQualString();
  if (node->kind() == c10::prim::Param) {
    const Node* owner = node->owningBlock()->owningNode();
    if (!owner || owner->kind() != c10::prim::Loop) return std::nullopt;
    const auto* block = node->owningBlock();
    size_t k = v->offset();  // block input k ↔ loop input k + 1 ↔ block output k
    return first_of({block->outputs()[k], owner->input(k + 1)});
  }
  if (node->kind() == c10::prim::Loop) {
    size_t k = v->offset();
    return first_of({node->blocks()[0]->outputs()[k + 1], node->input(k + 2)});
  }
  if (node->kind() == c10::prim::If) {
    size_t k = v->offset();
    return first_of({node->blocks()[0]->outputs()[k], node->blocks()[1]->outputs()[k]});
  }
  if (node->kind() == c10::prim::ListConstruct) {
    for (const auto* in : node->inputs()) {
      if (auto d = tensor_dtype(in)) return d;
    }
    return std::nullopt;
  }
  if (kind == "aten::append") return first_of({node->input(1), node->input(0)});
  if ((kind == "aten::add" || kind == "aten::add_") && node->inputs().size() == 2 &&
      node->input(1)->type()->cast<c10::ListType>()) {
    return first_of({node->input(0), node->input(1)});  // `a + b` of lists
  }
  if (kind == "aten::insert" || kind == "aten::_set_item") {
    return first_of({node->input(2), node->input(0)});
  }
  if (!node->inputs().empty()) return first_of({node->input(0)});
  return std::nullopt;
}

}  // namespace

ir::TypeInfo value_type(const torch::jit::Value* v) {
  ir::TypeInfo info;
  info.dtype = dtype_of(v->type());
  if (auto opt = v->type()->cast<c10::OptionalType>()) {
    // Optional[Tensor]: an ONNX optional of the tensor (opset 15+), when not None at export.
    if (auto t = opt->getElementType()->cast<c10::TensorType>()) {
      info.dtype = t->scalarType().value_or(at::ScalarType::Undefined);
      if (auto rank = t->sizes().size()) {
        std::vector<int64_t> shape;
        for (size_t i = 0; i < *rank; ++i) shape.push_back(t->sizes()[i].value_or(-1));
        info.shape = shape;
      }
      info.optional = true;
    }
    return info;
  }
  if (auto t = v->type()->cast<c10::TensorType>()) {
    if (auto rank = t->sizes().size()) {
      // Unknown dims (data-dependent sizes) are written as -1: dims without a value.
      std::vector<int64_t> shape;
      for (size_t i = 0; i < *rank; ++i) shape.push_back(t->sizes()[i].value_or(-1));
      info.shape = shape;
    }
  } else if (info.dtype != at::ScalarType::Undefined) {
    info.shape = std::vector<int64_t>{};  // an int/float/bool: a 0-d tensor
  } else if (auto list = v->type()->cast<c10::ListType>()) {
    info.dtype = dtype_of(list->getElementType());
    if (info.dtype != at::ScalarType::Undefined) {
      info.shape = std::vector<int64_t>{-1};  // a scalar list is one 1-D tensor
    } else if (is_tensor_list(v)) {
      std::unordered_set<const torch::jit::Value*> seen;
      info.dtype = list_element_dtype(v, seen).value_or(at::ScalarType::Undefined);
      info.sequence = true;
    }
  }
  return info;
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
  if (node_ != nullptr) {
    node.source = source_location(node_);
    // The op with its schema overload ("aten::div.Tensor_mode"): which of an op's lowerings
    // made the node (the coverage of converters per overload reads it).
    const std::string overload = overload_name(node_);
    node.origin = overload.empty() ? std::string(node_->kind().toQualString())
                                   : fmt::format("{}.{}", node_->kind().toQualString(), overload);
  }
  Values outputs = node.outputs;
  graph_->nodes.push_back(std::move(node));
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
  if (type == at::ScalarType::Undefined) {
    fail(
        "a constant of the operand's dtype is needed, but the dtype is unknown (type propagation "
        "could not compute it)");
  }
  return constant(at::scalar_tensor(value, at::TensorOptions().dtype(type)));
}

Value GraphContext::cast(const Value& v, at::ScalarType to) {
  if (to == at::ScalarType::Undefined) {
    fail(
        "the dtype an operand must be cast to is unknown (type propagation could not compute "
        "it)");
  }
  return op("Cast", {v}, {{"to", static_cast<int64_t>(to_onnx_dtype(to))}});
}

const Values* GraphContext::lookup(const torch::jit::Value* v) const {
  auto it = env_.find(v);
  return it == env_.end() ? nullptr : &it->second;
}

void GraphContext::remember(const torch::jit::Value* v) {
  if (undo_.empty()) return;
  auto it = env_.find(v);
  undo_.back().push_back({v, it == env_.end() ? std::nullopt : std::optional<Values>(it->second),
                          sequences_.count(v) > 0, optionals_.count(v) > 0});
}

void GraphContext::bind(const torch::jit::Value* v, Values values) {
  remember(v);
  sequences_.erase(v);
  optionals_.erase(v);
  env_[v] = std::move(values);
}

void GraphContext::bind_sequence(const torch::jit::Value* v, const Value& sequence) {
  remember(v);
  env_[v] = {sequence};
  sequences_.insert(v);
  optionals_.erase(v);
}

void GraphContext::bind_optional(const torch::jit::Value* v, const Value& optional) {
  remember(v);
  env_[v] = {optional};
  sequences_.erase(v);
  optionals_.insert(v);
}

void GraphContext::convert_block(const torch::jit::Block* block) {
  const torch::jit::Node* node = node_;
  block_converter_(*this, block);
  node_ = node;
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

void GraphContext::require_opset(int opset, const std::string& what, const std::string& needs,
                                 const std::string& otherwise) const {
  if (opset_ >= opset) return;
  fail(fmt::format("{} needs opset {}{}. Remedy: export with opset >= {}{}", what, opset,
                   needs.empty() ? "" : " (" + needs + ")", opset,
                   otherwise.empty() ? "" : ", or " + otherwise));
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

at::ScalarType dtype_of(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::IntType:
      return at::kLong;
    case c10::TypeKind::FloatType:
      return at::kDouble;
    case c10::TypeKind::BoolType:
      return at::kBool;
    case c10::TypeKind::TensorType:
      return type->expectRef<c10::TensorType>().scalarType().value_or(at::ScalarType::Undefined);
    default:
      return at::ScalarType::Undefined;
  }
}

bool is_tensor_list(const torch::jit::Value* v) {
  auto list = v->type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

namespace {

std::optional<std::vector<int64_t>> value_sizes(const torch::jit::Value* v) {
  if (auto t = v->type()->cast<c10::TensorType>()) {
    if (auto sizes = t->sizes().concrete_sizes()) return *sizes;
    return std::nullopt;
  }
  if (dtype_of(v->type()) != at::ScalarType::Undefined) return std::vector<int64_t>{};
  return std::nullopt;
}

// A converter meets a quantized tensor only in its dequantized form, float (the quantized::
// converters, and Note [Quantized tensors through float ops] in ops/quantized.cpp): its constants
// and casts are made in float, not in a quantized dtype ONNX lacks.
at::ScalarType as_converted(at::ScalarType type) {
  return c10::isQIntType(type) ? at::kFloat : type;
}

}  // namespace

at::ScalarType Args::dtype(size_t i) const {
  return as_converted(dtype_of(jit(i)->type()));
}

std::optional<std::vector<int64_t>> Args::sizes(size_t i) const {
  return value_sizes(jit(i));
}

std::optional<int64_t> Args::dim_size(size_t i, int64_t dim) const {
  const auto shape = value_type(jit(i)).shape;
  if (!shape) return std::nullopt;
  const auto rank = static_cast<int64_t>(shape->size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank || (*shape)[dim] < 0) return std::nullopt;
  return (*shape)[dim];
}

std::optional<int64_t> Args::rank(size_t i) const {
  if (auto t = jit(i)->type()->cast<c10::TensorType>()) {
    if (auto dim = t->dim()) return static_cast<int64_t>(*dim);
    return std::nullopt;
  }
  if (dtype_of(jit(i)->type()) != at::ScalarType::Undefined) return 0;
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
  return as_converted(dtype_of(node_->output(k)->type()));
}

std::optional<std::vector<int64_t>> Args::output_sizes(size_t k) const {
  return value_sizes(node_->output(k));
}

namespace {

// A constant list of ints, floats or bools as a 1-D tensor (int64, float64, bool).
at::Tensor scalar_list_tensor(const c10::IValue& list) {
  if (list.isIntList()) return at::tensor(list.toIntVector(), at::TensorOptions(at::kLong));
  if (list.isDoubleList()) return at::tensor(list.toDoubleVector(), at::TensorOptions(at::kDouble));
  std::vector<int64_t> values;
  for (bool b : list.toBoolList()) values.push_back(b);
  return at::tensor(values, at::TensorOptions(at::kLong)).to(at::kBool);
}

}  // namespace

Value Args::tensor(size_t i) const {
  const torch::jit::Value* v = jit(i);
  if (const Values* bound = g_.lookup(v)) {
    if (bound->size() != 1) {
      g_.fail(fmt::format("argument {} is a list of {} values where a tensor is expected", i,
                          bound->size()));
    }
    // An optional read as a tensor: TorchScript refined it (`x is not None`) before this use.
    if (g_.is_optional(v)) return g_.op("OptionalGetElement", {bound->front()});
    return bound->front();
  }
  if (auto c = torch::jit::toIValue(v)) {
    if (c->isTensor()) return g_.constant(c->toTensor());
    if (c->isInt() || c->isDouble() || c->isBool()) {
      return g_.constant(at::scalar_to_tensor(c->toScalar()));
    }
    if (c->isIntList()) return g_.constant_ints(c->toIntVector());
    // A float or bool list (the empty list a loop appends run-time scale factors to).
    if (c->isDoubleList() || c->isBoolList()) return g_.constant(scalar_list_tensor(*c));
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
    if (!g_.lookup(v) && (c->isIntList() || c->isDoubleList() || c->isBoolList())) {
      return g_.constant(scalar_list_tensor(*c).to(type));
    }
  }
  Value t = tensor(i);
  return dtype(i) == type ? t : g_.cast(t, type);
}

Values Args::tensor_list(size_t i) const {
  const torch::jit::Value* v = jit(i);
  if (g_.is_sequence(v)) {
    g_.fail(fmt::format(
        "argument {} is a list whose length is known only at run time (built or changed in a "
        "loop or an if), and this op needs its elements at export time. Remedy: build the list "
        "with a fixed number of elements, or combine its elements with torch.stack/torch.cat",
        i));
  }
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

bool Args::is_sequence(size_t i) const {
  return g_.is_sequence(jit(i));
}

Values Args::tensor_list_as(size_t i, at::ScalarType dtype) const {
  Values items = tensor_list(i);
  const torch::jit::Node* list = jit(i)->node();
  if (list->kind() != c10::prim::ListConstruct) return items;
  for (size_t k = 0; k < items.size() && k < list->inputs().size(); ++k) {
    at::ScalarType t = as_converted(dtype_of(list->input(k)->type()));
    if (t != at::ScalarType::Undefined && t != dtype) items[k] = g_.cast(items[k], dtype);
  }
  return items;
}

Value Args::sequence(size_t i, at::ScalarType dtype) const {
  if (g_.opset() < 11) {
    g_.fail(
        "a list whose length is known only at run time (built or changed in a loop or an if) "
        "needs ONNX sequences, which opset 11 introduced. Remedy: export with opset_version >= 11, "
        "or build the list with a fixed number of elements");
  }
  if (is_sequence(i)) return g_.lookup(jit(i))->front();
  Values items = tensor_list_as(i, dtype);  // elements of one sequence share a dtype
  if (items.empty()) {
    return g_.op("SequenceEmpty", {}, {{"dtype", static_cast<int64_t>(to_onnx_dtype(dtype))}});
  }
  return g_.op("SequenceConstruct", items);
}

}  // namespace torchonnx::symbolic
