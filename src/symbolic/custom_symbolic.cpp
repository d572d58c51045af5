// <torchonnx/symbolic.h>: register_custom_op_symbolic and the GraphContext/Args handles a custom
// symbolic is given.
//
// Note [Custom symbolics]
// torch.onnx's semantics: a registration of an op at opset N applies from N up until the op's
// next registration, and takes precedence over the built-in converter. The registrations are kept
// as made (op → {opset → function}, so that registering at the same opset replaces, and
// unregistering removes exactly one) and, after every change, turned into a Registry whose ranges
// run from each registration to the next — the same type as the built-in registry, so the lookup
// (overloads, the in-place form relu_ → relu) is Registry::find_for_node for both. Lookups read an
// immutable snapshot; a change builds a new one under the writer lock.
#include "symbolic/custom_symbolic.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <regex>
#include <shared_mutex>

#include "onnx/ir.h"
#include "symbolic/context.h"
#include "symbolic/dispatch.h"
#include "symbolic/node_types.h"
#include "torchonnx/errors.h"
#include "torchonnx/symbolic.h"

namespace torchonnx {

// ----- the handles a custom symbolic sees: forwarded to the converters' own classes ------------

namespace {
ir::Attributes to_ir(const Attributes& attributes) {
  ir::Attributes out;
  out.reserve(attributes.size());
  for (const auto& a : attributes) {
    std::visit([&](const auto& v) { out.emplace_back(a.name, v); }, a.value);
  }
  return out;
}
}  // namespace

int GraphContext::opset() const {
  return impl_->opset();
}
Value GraphContext::op(const std::string& type, const Values& inputs,
                       const Attributes& attributes) {
  return impl_->op(type, inputs, to_ir(attributes));
}
Values GraphContext::op(const std::string& type, const Values& inputs, const Attributes& attributes,
                        size_t num_outputs) {
  return impl_->op(type, inputs, to_ir(attributes), num_outputs);
}
Value GraphContext::constant(const at::Tensor& tensor) {
  return impl_->constant(tensor);
}
Value GraphContext::constant_ints(const std::vector<int64_t>& values) {
  return impl_->constant_ints(values);
}
Value GraphContext::constant_scalar(double value, at::ScalarType type) {
  return impl_->constant_scalar(value, type);
}
Value GraphContext::cast(const Value& v, at::ScalarType to) {
  return impl_->cast(v, to);
}
at::ScalarType GraphContext::dtype(const Value& v) const {
  ir::TypeInfo t = symbolic::infer_value_type(*impl_, v);
  return t.sequence || t.optional ? at::ScalarType::Undefined : t.dtype;
}
std::optional<std::vector<int64_t>> GraphContext::sizes(const Value& v) const {
  ir::TypeInfo t = symbolic::infer_value_type(*impl_, v);
  if (t.sequence || t.optional) return std::nullopt;
  return t.shape;
}
Values GraphContext::inline_graph(const torch::jit::Graph& graph, const Values& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    impl_->fail(fmt::format("inline_graph: the graph takes {} inputs but {} were given",
                            graph.inputs().size(), inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) impl_->bind(graph.inputs()[i], {inputs[i]});
  impl_->convert_block(graph.block());
  Values outputs;
  for (const torch::jit::Value* out : graph.outputs()) {
    const Values* bound = impl_->lookup(out);
    if (bound == nullptr || bound->size() != 1) {
      impl_->fail("inline_graph: an output of the graph is no tensor");
    }
    outputs.push_back(bound->front());
  }
  return outputs;
}
void GraphContext::fail(const std::string& message) const {
  impl_->fail(message);
}

size_t Args::size() const {
  return impl_->size();
}
const torch::jit::Node* Args::node() const {
  return impl_->node();
}
std::string Args::overload() const {
  return impl_->overload();
}
Value Args::tensor(size_t i) const {
  return impl_->tensor(i);
}
Value Args::tensor_as(size_t i, at::ScalarType type) const {
  return impl_->tensor_as(i, type);
}
Values Args::tensor_list(size_t i) const {
  return impl_->tensor_list(i);
}
Values Args::tensor_list_as(size_t i, at::ScalarType dtype) const {
  return impl_->tensor_list_as(i, dtype);
}
bool Args::is_none(size_t i) const {
  return impl_->is_none(i);
}
bool Args::is_constant(size_t i) const {
  return impl_->is_constant(i);
}
int64_t Args::int_arg(size_t i) const {
  return impl_->int_arg(i);
}
double Args::float_arg(size_t i) const {
  return impl_->float_arg(i);
}
bool Args::bool_arg(size_t i) const {
  return impl_->bool_arg(i);
}
std::string Args::str_arg(size_t i) const {
  return impl_->str_arg(i);
}
std::vector<int64_t> Args::int_list(size_t i) const {
  return impl_->int_list(i);
}
std::optional<int64_t> Args::optional_int(size_t i) const {
  return impl_->optional_int(i);
}
std::optional<double> Args::optional_float(size_t i) const {
  return impl_->optional_float(i);
}
std::optional<std::vector<int64_t>> Args::optional_int_list(size_t i) const {
  return impl_->optional_int_list(i);
}
at::ScalarType Args::dtype(size_t i) const {
  return impl_->dtype(i);
}
std::optional<std::vector<int64_t>> Args::sizes(size_t i) const {
  return impl_->sizes(i);
}
std::optional<int64_t> Args::rank(size_t i) const {
  return impl_->rank(i);
}
int64_t Args::require_rank(size_t i) const {
  return impl_->require_rank(i);
}
at::ScalarType Args::output_dtype(size_t k) const {
  return impl_->output_dtype(k);
}
std::optional<std::vector<int64_t>> Args::output_sizes(size_t k) const {
  return impl_->output_sizes(k);
}

// ----- registrations (Note [Custom symbolics]) --------------------------------------------------

namespace {

using symbolic::Converter;
using symbolic::Registry;

class CustomSymbolics {
 public:
  // Never destroyed: libraries may unregister at exit, after static destructors ran.
  static CustomSymbolics& instance() {
    static auto* table = new CustomSymbolics;
    return *table;
  }

  void add(const std::string& name, int opset, Converter fn) {
    std::unique_lock lock(mutex_);
    registrations_[name][opset] = std::move(fn);
    rebuild();
  }

  bool remove(const std::string& name, int opset) {
    std::unique_lock lock(mutex_);
    auto it = registrations_.find(name);
    if (it == registrations_.end() || it->second.erase(opset) == 0) return false;
    if (it->second.empty()) registrations_.erase(it);
    rebuild();
    return true;
  }

  std::shared_ptr<const Registry> snapshot() const {
    std::shared_lock lock(mutex_);
    return snapshot_;
  }

 private:
  // Each registration serves its opset up to the op's next registration (the last one from(N)).
  void rebuild() {
    auto next = std::make_shared<Registry>();
    for (const auto& [name, by_opset] : registrations_) {
      for (auto it = by_opset.begin(); it != by_opset.end(); ++it) {
        auto later = std::next(it);
        next->add(name,
                  later == by_opset.end() ? symbolic::from(it->first)
                                          : symbolic::OpsetRange{it->first, later->first - 1},
                  it->second);
      }
    }
    snapshot_ = std::move(next);
  }

  mutable std::shared_mutex mutex_;
  std::map<std::string, std::map<int, Converter>> registrations_;
  std::shared_ptr<const Registry> snapshot_ = std::make_shared<Registry>();
};

void check_registration(const std::string& name, int opset_version) {
  static const std::regex kName("^[a-zA-Z0-9_-]+::[a-zA-Z_-]+[a-zA-Z0-9_-]*$");
  if (!std::regex_match(name, kName)) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("register_custom_op_symbolic: '{}' is not a valid op name; "
                                  "write it as namespace::op, e.g. custom_ops::foo_forward or "
                                  "aten::relu",
                                  name));
  }
  if (name.rfind("onnx::", 0) == 0) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("register_custom_op_symbolic: '{}': the onnx namespace cannot "
                                  "be given symbolics; register the TorchScript op (aten::..., "
                                  "your_namespace::...) instead",
                                  name));
  }
  if (opset_version < 1 || opset_version > kMaxOpset) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("register_custom_op_symbolic: opset_version {} for '{}' is out "
                                  "of range; use 1 to {} (the registration applies from that "
                                  "opset up)",
                                  opset_version, name, kMaxOpset));
  }
}

template <typename Function>
void check_function(const std::string& name, const Function& fn) {
  if (!fn) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "register_custom_op_symbolic: empty function for '" + name + "'");
  }
}

}  // namespace

void register_custom_op_symbolic(const std::string& name, SymbolicFunction fn, int opset_version) {
  check_registration(name, opset_version);
  check_function(name, fn);
  // Shared, so that copies of the converter (each snapshot, each lookup) do not copy the user's
  // function object.
  auto user = std::make_shared<const SymbolicFunction>(std::move(fn));
  CustomSymbolics::instance().add(name, opset_version,
                                  [user](symbolic::GraphContext& g, const symbolic::Args& args) {
                                    GraphContext pg(g);
                                    Args pargs(args);
                                    return (*user)(pg, pargs);
                                  });
}

void register_custom_op_symbolic(const std::string& name, ContextSymbolicFunction fn,
                                 int opset_version) {
  check_registration(name, opset_version);
  check_function(name, fn);
  auto user = std::make_shared<const ContextSymbolicFunction>(std::move(fn));
  CustomSymbolics::instance().add(name, opset_version,
                                  [user](symbolic::GraphContext& g, const symbolic::Args& args) {
                                    GraphContext pg(g);
                                    Args pargs(args);
                                    return (*user)(symbolic::make_symbolic_context(g), pg, pargs);
                                  });
}

bool unregister_custom_op_symbolic(const std::string& name, int opset_version) {
  return CustomSymbolics::instance().remove(name, opset_version);
}

namespace symbolic {
std::shared_ptr<const Registry> custom_symbolics() {
  return CustomSymbolics::instance().snapshot();
}
}  // namespace symbolic

}  // namespace torchonnx
