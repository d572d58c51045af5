// Normalization: batch_norm (inference), layer_norm.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

void register_norm(Registry& r) {
  // aten::batch_norm(input, weight?, bias?, running_mean?, running_var?, bool training,
  //                  float momentum, float eps, bool cudnn_enabled)  ⇒  BatchNormalization
  r.add("aten::batch_norm", {}, [](GraphContext& g, const Args& a) -> Values {
    if (a.bool_arg(5)) {
      g.fail(
          "batch_norm in training mode (batch statistics) is not supported yet; export the "
          "model in eval mode");
    }
    if (a.is_none(3) || a.is_none(4)) g.fail("batch_norm without running statistics");
    auto sizes = a.sizes(3);
    if (!sizes) g.fail("the running mean's shape is unknown");
    at::ScalarType type = a.dtype(0);
    auto opts = at::TensorOptions().dtype(type);
    Value scale = a.is_none(1) ? g.constant(at::ones(*sizes, opts)) : a.tensor(1);
    Value bias = a.is_none(2) ? g.constant(at::zeros(*sizes, opts)) : a.tensor(2);
    return {g.op("BatchNormalization", {a.tensor(0), scale, bias, a.tensor(3), a.tensor(4)},
                 {{"epsilon", a.float_arg(7)}, {"momentum", 1.0 - a.float_arg(6)}})};
  });
  // aten::layer_norm(input, int[] normalized_shape, weight?, bias?, float eps, bool cudnn)
  //   ⇒  LayerNormalization (17+); mean/variance decomposition (9–16)
  r.add("aten::layer_norm", {17, kMaxOpset}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t axis = -static_cast<int64_t>(a.int_list(1).size());
    auto shape = a.int_list(1);
    auto opts = at::TensorOptions().dtype(a.dtype(0));
    Value scale = a.is_none(2) ? g.constant(at::ones(shape, opts)) : a.tensor(2);
    Values inputs{a.tensor(0), scale};
    if (!a.is_none(3)) inputs.push_back(a.tensor(3));
    return {g.op("LayerNormalization", inputs, {{"axis", axis}, {"epsilon", a.float_arg(4)}})};
  });
  r.add("aten::layer_norm", {9, 16}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    const int64_t n = static_cast<int64_t>(a.int_list(1).size());
    std::vector<int64_t> axes;
    for (int64_t i = rank - n; i < rank; ++i) axes.push_back(i);
    at::ScalarType type = a.dtype(0);
    Value x = a.tensor(0);
    Value centered = g.op("Sub", {x, reduce(g, "ReduceMean", x, axes, true)});
    Value var = reduce(g, "ReduceMean", g.op("Mul", {centered, centered}), axes, true);
    Value denom = g.op("Sqrt", {g.op("Add", {var, g.constant_scalar(a.float_arg(4), type)})});
    Value y = g.op("Div", {centered, denom});
    if (!a.is_none(2)) y = g.op("Mul", {y, a.tensor(2)});
    if (!a.is_none(3)) y = g.op("Add", {y, a.tensor(3)});
    return {y};
  });
}

}  // namespace torchonnx::symbolic::ops
