// register_custom_op_symbolic: a process-wide table of user symbolics, consulted before the
// built-in registry (which stays untouched). Op name → {opset it was registered at → function};
// the registration that applies at opset N is the one at the highest opset <= N.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <shared_mutex>

#include "symbolic/export_types.h"
#include "torchonnx/errors.h"
#include "torchonnx/symbolic.h"

namespace torchonnx {

namespace {

using symbolic::Converter;

struct Table {
  std::shared_mutex mutex;
  std::map<std::string, std::map<int, std::shared_ptr<const Converter>>> entries;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: libraries may unregister at exit
  return *t;
}

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

void add(const std::string& name, Converter fn, int opset_version) {
  auto& t = table();
  std::unique_lock lock(t.mutex);
  t.entries[name][opset_version] = std::make_shared<const Converter>(std::move(fn));
}

}  // namespace

void register_custom_op_symbolic(const std::string& name, SymbolicFunction fn, int opset_version) {
  check_registration(name, opset_version);
  if (!fn) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "register_custom_op_symbolic: empty function for '" + name + "'");
  }
  add(name, std::move(fn), opset_version);
}

void register_custom_op_symbolic(const std::string& name, ContextSymbolicFunction fn,
                                 int opset_version) {
  check_registration(name, opset_version);
  if (!fn) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "register_custom_op_symbolic: empty function for '" + name + "'");
  }
  add(
      name,
      [fn = std::move(fn)](GraphContext& g, const Args& args) {
        return fn(symbolic::make_symbolic_context(g), g, args);
      },
      opset_version);
}

bool unregister_custom_op_symbolic(const std::string& name, int opset_version) {
  auto& t = table();
  std::unique_lock lock(t.mutex);
  auto it = t.entries.find(name);
  if (it == t.entries.end()) return false;
  bool removed = it->second.erase(opset_version) > 0;
  if (it->second.empty()) t.entries.erase(it);
  return removed;
}

namespace symbolic {

namespace {
std::shared_ptr<const Converter> find_exact(const std::string& kind, int opset) {
  auto& t = table();
  std::shared_lock lock(t.mutex);
  auto it = t.entries.find(kind);
  if (it == t.entries.end()) return nullptr;
  auto reg = it->second.upper_bound(opset);  // first registration above `opset`
  if (reg == it->second.begin()) return nullptr;
  return std::prev(reg)->second;
}
}  // namespace

std::shared_ptr<const Converter> find_custom_symbolic(const std::string& kind, int opset) {
  if (auto fn = find_exact(kind, opset)) return fn;
  // An in-place op (relu_) uses the symbolic of its out-of-place form, as with built-ins.
  if (kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_') {
    return find_exact(kind.substr(0, kind.size() - 1), opset);
  }
  return nullptr;
}

}  // namespace symbolic

}  // namespace torchonnx
