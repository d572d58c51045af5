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
  // In a traced graph an in-place op's result replaces its input for every later use, so the
  // out-of-place converter is exact (torch.onnx does the same).
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
