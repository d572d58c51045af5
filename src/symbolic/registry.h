// The symbolic registry: aten/prim op name → converters, each serving a closed opset range.
// Lookup picks the converter whose range holds the target opset (ranges of one op never overlap).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "torchonnx/export.h"

namespace torchonnx::symbolic {

class GraphContext;
class Args;

using Value = std::string;  // the name of an ONNX value
using Values = std::vector<Value>;
// Converts one TorchScript node; returns one ONNX value per node output (a list output may take
// several values: its elements).
using Converter = std::function<Values(GraphContext&, const Args&)>;

struct OpsetRange {
  int since = kMinOpset;
  int until = kMaxOpset;
  bool contains(int opset) const { return since <= opset && opset <= until; }
};

struct Registration {
  OpsetRange range;
  Converter fn;
};

class Registry {
 public:
  // Throws std::logic_error when `range` overlaps one already registered for `op`.
  void add(const std::string& op, OpsetRange range, Converter fn);
  const Converter* find(const std::string& op, int opset) const;
  // The converter for `op`, or for its out-of-place form when `op` is in-place (relu_ → relu).
  const Converter* find_for_node(const std::string& kind, int opset) const;
  const std::map<std::string, std::vector<Registration>>& entries() const { return entries_; }

  // All of torchonnx's converters, registered once on first use.
  static const Registry& builtin();

 private:
  std::map<std::string, std::vector<Registration>> entries_;
};

}  // namespace torchonnx::symbolic
