#include "symbolic/registry.h"

#include <stdexcept>

#include "symbolic/ops/families.h"

namespace torchonnx::symbolic {

void Registry::add(const std::string& op, OpsetRange range, Converter fn) {
  if (range.since > range.until) {
    throw std::logic_error("empty opset range for " + op);
  }
  auto& regs = entries_[op];
  for (const auto& r : regs) {
    if (r.range.since <= range.until && range.since <= r.range.until) {
      throw std::logic_error("overlapping opset ranges registered for " + op);
    }
  }
  regs.push_back({range, std::move(fn)});
}

const Converter* Registry::find(const std::string& op, int opset) const {
  auto it = entries_.find(op);
  if (it == entries_.end()) return nullptr;
  for (const auto& r : it->second) {
    if (r.range.contains(opset)) return &r.fn;
  }
  return nullptr;
}

const Converter* Registry::find_for_node(const std::string& kind, int opset) const {
  if (const Converter* fn = find(kind, opset)) return fn;
  // RemoveInplaceOps rewrites in-place ops whose out-of-place form libtorch has and rewires the
  // later uses of what they write, so the out-of-place converter is exact for the ones left.
  if (kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_') {
    return find(kind.substr(0, kind.size() - 1), opset);
  }
  return nullptr;
}

const Registry& Registry::builtin() {
  static const Registry registry = [] {
    Registry r;
    for (auto* register_family : ops::kFamilies) register_family(r);
    return r;
  }();
  return registry;
}

}  // namespace torchonnx::symbolic
