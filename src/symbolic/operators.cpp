#include "torchonnx/operators.h"

#include <algorithm>

#include "symbolic/registry.h"

namespace torchonnx {

std::vector<OperatorSupport> supported_operators(int opset) {
  if (opset >= kLowestOpset && opset < kMinOpset) opset = kMinOpset;
  std::vector<OperatorSupport> out;
  for (const auto& [name, registrations] : symbolic::Registry::builtin().entries()) {
    for (const auto& r : registrations) {
      if (opset == 0 || r.range.contains(opset))
        out.push_back({name, r.range.since, r.range.until});
    }
  }
  std::sort(out.begin(), out.end(), [](const OperatorSupport& a, const OperatorSupport& b) {
    return a.name != b.name ? a.name < b.name : a.since < b.since;
  });
  return out;
}

}  // namespace torchonnx
