// The symbolic registry: aten/prim op name → converters, each serving an opset range.
// Lookup picks the converter whose range holds the target opset (ranges of one op never overlap).
//
// A name is a node kind ("aten::div") or a kind with its schema's overload name
// ("aten::div.Tensor_mode") where the overloads need different lowerings: a node is looked up by
// "kind.overload" first, then by "kind". A converter by "kind" serves every overload without one
// of its own, or, registered with add_unnamed, only the unnamed one (the op's other overloads each
// have their own; one that has not is not converted). A node's overload is resolved once (Note
// [Overloads resolved once] in common/jit_util.h), not by the converters. A range that
// holds for every later opset is open-ended, `from(N)`; a lowering that changes at an opset is a
// second registration with a closed range before it. The lowest opset an op is registered at is the
// lowest it can be exported at.
#pragma once

#include <functional>
#include <map>
#include <optional>
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

// [opset, kMaxOpset]: a lowering that holds for every later opset.
inline constexpr OpsetRange from(int opset) {
  return {opset, kMaxOpset};
}

struct Registration {
  OpsetRange range;
  Converter fn;
  bool unnamed_only = false;  // serves the op's unnamed overload only (add_unnamed)
};

class Registry {
 public:
  // Throws std::logic_error when `range` overlaps one already registered for `op`.
  void add(const std::string& op, OpsetRange range, Converter fn);
  // The converter of `kind`'s unnamed overload ("aten::max(Tensor self)"), not of its named ones
  // ("aten::max.dim"), which are registered apart or not converted.
  void add_unnamed(const std::string& kind, OpsetRange range, Converter fn);
  // Registers for `op` every converter of `target` and of its overloads ("target.x" as "op.x"):
  // for ops that take the same arguments (view_copy as view).
  void alias(const std::string& op, const std::string& target);
  const Converter* find(const std::string& op, int opset) const;
  // The converter for a node of `kind` whose schema overload is `overload` ("" when none):
  // "kind.overload", then "kind"; for an in-place op (relu_) then its out-of-place form (relu).
  const Converter* find_for_node(const std::string& kind, int opset,
                                 const std::string& overload = "") const;
  // The lowest opset at which `kind` (any of its overloads, or its out-of-place form) has a
  // converter; nullopt when it has none at all.
  std::optional<int> lowest_opset(const std::string& kind) const;
  const std::map<std::string, std::vector<Registration>>& entries() const { return entries_; }

  // All of torchonnx's converters, registered once on first use.
  static const Registry& builtin();

 private:
  void add_registration(const std::string& op, Registration r);
  const Converter* find_entry(const std::string& op, int opset, bool named_overload) const;

  std::map<std::string, std::vector<Registration>> entries_;
};

}  // namespace torchonnx::symbolic
