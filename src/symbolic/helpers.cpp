#include "symbolic/helpers.h"

#include <ATen/ATen.h>

namespace torchonnx::symbolic {

Value unsqueeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes) {
  if (g.opset() >= 13) return g.op("Unsqueeze", {v, g.constant_ints(axes)});
  return g.op("Unsqueeze", {v}, {{"axes", axes}});
}

Value squeeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes) {
  if (g.opset() >= 13) return g.op("Squeeze", {v, g.constant_ints(axes)});
  return g.op("Squeeze", {v}, {{"axes", axes}});
}

Values split(GraphContext& g, const Value& v, const std::vector<int64_t>& sizes, int64_t axis) {
  if (g.opset() >= 13) {
    return g.op("Split", {v, g.constant_ints(sizes)}, {{"axis", axis}}, sizes.size());
  }
  return g.op("Split", {v}, {{"axis", axis}, {"split", sizes}}, sizes.size());
}

Value reduce(GraphContext& g, const std::string& op, const Value& v,
             const std::vector<int64_t>& axes, bool keepdims) {
  ir::Attributes attrs{{"keepdims", static_cast<int64_t>(keepdims)}};
  if (op == "ReduceSum" && g.opset() >= 13) {
    if (axes.empty()) return g.op(op, {v}, attrs);
    return g.op(op, {v, g.constant_ints(axes)}, attrs);
  }
  if (!axes.empty()) attrs.emplace_back("axes", axes);
  return g.op(op, {v}, attrs);
}

Value clip(GraphContext& g, const Value& v, std::optional<double> min, std::optional<double> max,
           at::ScalarType type) {
  if (g.opset() < 11) {
    ir::Attributes attrs;
    if (min) attrs.emplace_back("min", *min);
    if (max) attrs.emplace_back("max", *max);
    return g.op("Clip", {v}, attrs);
  }
  Value lo = min ? g.constant_scalar(*min, type) : "";
  Value hi = max ? g.constant_scalar(*max, type) : "";
  Values inputs{v, lo};
  if (max) inputs.push_back(hi);
  return g.op("Clip", inputs);
}

int64_t normalize_dim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

}  // namespace torchonnx::symbolic
