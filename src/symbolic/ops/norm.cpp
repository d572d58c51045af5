// Normalization: batch_norm (inference and training), instance_norm, layer_norm,
// native_layer_norm, group_norm, native_group_norm, rms_norm, _weight_norm.
//
// The statistics-based forms are written as the same exact composition (mean, centered
// variance, (x - mean) / sqrt(var + eps)), which works at every opset, for every floating dtype and
// needs only the input's rank (sizes are computed in the graph).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <limits>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

struct Normalized {
  Value y;     // (x - mean) / sqrt(var + eps)
  Value mean;  // keepdims
  Value rstd;  // 1 / sqrt(var + eps), keepdims
};

// Normalizes `x` over `axes` with the biased variance (as PyTorch's normalization layers do).
Normalized normalize_over(GraphContext& g, const Value& x, const std::vector<int64_t>& axes,
                          double eps, at::ScalarType type) {
  Value mean = reduce(g, "ReduceMean", x, axes, true);
  Value centered = g.op("Sub", {x, mean});
  Value var = reduce(g, "ReduceMean", g.op("Mul", {centered, centered}), axes, true);
  Value denom = g.op("Sqrt", {g.op("Add", {var, g.constant_scalar(eps, type)})});
  return {g.op("Div", {centered, denom}), mean, g.op("Reciprocal", {denom})};
}

std::vector<int64_t> range_axes(int64_t from, int64_t to) {
  std::vector<int64_t> axes;
  for (int64_t i = from; i < to; ++i) axes.push_back(i);
  return axes;
}

// A per-channel [C] parameter shaped [C, 1, ..., 1] to broadcast against [N, C, d1, ...].
Value per_channel(GraphContext& g, const Value& v, int64_t rank) {
  if (rank <= 2) return v;
  return unsqueeze(g, v, range_axes(1, rank - 1));
}

// y · weight + bias with optional per-channel weight/bias at positions wi/bi.
Value channel_affine(GraphContext& g, const Args& a, Value y, size_t wi, size_t bi, int64_t rank) {
  if (!a.is_none(wi)) y = g.op("Mul", {y, per_channel(g, a.tensor(wi), rank)});
  if (!a.is_none(bi)) y = g.op("Add", {y, per_channel(g, a.tensor(bi), rank)});
  return y;
}

at::ScalarType norm_float_type(GraphContext& g, const Args& a, size_t i) {
  at::ScalarType type = a.dtype(i);
  if (!at::isFloatingType(type)) {
    g.fail("normalization of a non-floating tensor (dtype " + std::string(c10::toString(type)) +
           ")");
  }
  return type;
}

// The layer-norm composition: statistics over the last `n` dims.
Normalized layer_norm_parts(GraphContext& g, const Args& a, at::ScalarType type) {
  const int64_t rank = a.require_rank(0);
  const int64_t n = static_cast<int64_t>(a.int_list(1).size());
  Normalized r = normalize_over(g, a.tensor(0), range_axes(rank - n, rank), a.float_arg(4), type);
  if (!a.is_none(2)) r.y = g.op("Mul", {r.y, a.tensor(2)});
  if (!a.is_none(3)) r.y = g.op("Add", {r.y, a.tensor(3)});
  return r;
}

// LayerNormalization-17 over the last `n` dims (scale defaults to ones of normalized_shape).
Values layer_norm_op(GraphContext& g, const Args& a, size_t num_outputs) {
  const int64_t axis = -static_cast<int64_t>(a.int_list(1).size());
  auto shape = a.int_list(1);
  auto opts = at::TensorOptions().dtype(a.dtype(0));
  Value scale = a.is_none(2) ? g.constant(at::ones(shape, opts)) : a.tensor(2);
  Values inputs{a.tensor(0), scale};
  if (!a.is_none(3)) inputs.push_back(a.tensor(3));
  return g.op("LayerNormalization", inputs, {{"axis", axis}, {"epsilon", a.float_arg(4)}},
              num_outputs);
}

// Group norm of x [N, C, ...] with `groups` groups: statistics over [N, G, -1].
Normalized group_norm_parts(GraphContext& g, const Value& x, int64_t groups, double eps,
                            at::ScalarType type) {
  Value grouped = g.op("Reshape", {x, g.constant_ints({0, groups, -1})});
  Normalized r = normalize_over(g, grouped, {2}, eps, type);
  r.y = g.op("Reshape", {r.y, shape_of(g, x)});
  return r;
}

// batch_norm's missing weight (1) or bias (0): one value per channel of the input, a constant
// when the channel count is known (opsets 7 and 8, reached through ONNX's version converter, have
// no ConstantOfShape), else ConstantOfShape of the input's dim 1.
Value channel_fill(GraphContext& g, const Args& a, double value, at::ScalarType type) {
  const auto opts = at::TensorOptions().dtype(type);
  if (auto sizes = a.sizes(0); sizes && sizes->size() >= 2 && (*sizes)[1] >= 0) {
    return g.constant(at::full({(*sizes)[1]}, value, opts));
  }
  return g.op("ConstantOfShape", {dims_of(g, a.tensor(0), {1})},
              {{"value", at::full({1}, value, opts)}});
}

// batch_norm in training mode with running statistics, float/double and rank >= 2:
// BatchNormalization with training_mode=1 and its 3 outputs (`training_mode_attr`, opset 14+), or
// with the 5 outputs that mean training mode (9–13).
Value batch_norm_training(GraphContext& g, const Args& a, at::ScalarType type,
                          bool training_mode_attr) {
  Value scale = a.is_none(1) ? channel_fill(g, a, 1, type) : a.tensor(1);
  Value bias = a.is_none(2) ? channel_fill(g, a, 0, type) : a.tensor(2);
  ir::Attributes attrs{{"epsilon", a.float_arg(7)}, {"momentum", 1.0 - a.float_arg(6)}};
  if (training_mode_attr) {
    attrs.emplace_back("training_mode", int64_t{1});
    return g.op("BatchNormalization", {a.tensor(0), scale, bias, a.tensor(3), a.tensor(4)}, attrs,
                3)[0];
  }
  return g.op("BatchNormalization", {a.tensor(0), scale, bias, a.tensor(3), a.tensor(4)}, attrs,
              5)[0];
}

// aten::batch_norm(input, weight?, bias?, running_mean?, running_var?, bool training,
//                  float momentum, float eps, bool cudnn_enabled) -> Tensor
//   ⇒  BatchNormalization (inference); in training, as torch.onnx: BatchNormalization with
//   training_mode=1 and its 3 outputs (14+), with the 5 outputs that mean training mode
//   (9–13); ONNX Runtime (inference build) runs both, normalizing with the batch statistics.
//   The updated running statistics (outputs 1, 2) are dead: the model's in-place update of
//   its buffers is a side effect the exported graph does not reproduce. Without running
//   statistics (track_running_stats=False: nothing to update), other float dtypes (Half,
//   BFloat16: ORT's CPU kernel lacks them) and ranks < 2: the batch statistics composition.
//   (torch.onnx feeds zeros/ones as running statistics there; ONNX Runtime 1.30 then computes
//   the inference form whenever bias, mean and var are constant 0, 0 and 1.)
Values batch_norm_of(GraphContext& g, const Args& a, bool training_mode_attr) {
  at::ScalarType type = norm_float_type(g, a, 0);
  if (a.bool_arg(5)) {
    const int64_t rank = a.require_rank(0);
    if (rank >= 2 && (type == at::kFloat || type == at::kDouble) && !a.is_none(3) &&
        !a.is_none(4)) {
      return {batch_norm_training(g, a, type, training_mode_attr)};
    }
    std::vector<int64_t> axes{0};
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    Normalized n = normalize_over(g, a.tensor(0), axes, a.float_arg(7), type);
    return {channel_affine(g, a, n.y, 1, 2, rank)};
  }
  if (a.is_none(3) || a.is_none(4)) {
    g.fail("batch_norm in eval mode without running statistics");
  }
  Value scale = a.is_none(1) ? channel_fill(g, a, 1, type) : a.tensor(1);
  Value bias = a.is_none(2) ? channel_fill(g, a, 0, type) : a.tensor(2);
  return {g.op("BatchNormalization", {a.tensor(0), scale, bias, a.tensor(3), a.tensor(4)},
               {{"epsilon", a.float_arg(7)}, {"momentum", 1.0 - a.float_arg(6)}})};
}

Values batch_norm_9(GraphContext& g, const Args& a) {
  return batch_norm_of(g, a, /*training_mode_attr=*/false);
}

Values batch_norm_14(GraphContext& g, const Args& a) {
  return batch_norm_of(g, a, /*training_mode_attr=*/true);
}

// aten::_native_batch_norm_legit_no_training(input, weight?, bias?, running_mean, running_var,
//     float momentum, float eps) -> (Tensor, Tensor, Tensor)  (torch.export's core ATen form of an
//     inference batch_norm)
//   ⇒  BatchNormalization; the saved mean and inverse std, which PyTorch leaves empty (shape [0])
//   in inference, as empty constants
Values native_batch_norm_no_training(GraphContext& g, const Args& a) {
  at::ScalarType type = norm_float_type(g, a, 0);
  Value scale = a.is_none(1) ? channel_fill(g, a, 1, type) : a.tensor(1);
  Value bias = a.is_none(2) ? channel_fill(g, a, 0, type) : a.tensor(2);
  Value y = g.op("BatchNormalization", {a.tensor(0), scale, bias, a.tensor(3), a.tensor(4)},
                 {{"epsilon", a.float_arg(6)}, {"momentum", 1.0 - a.float_arg(5)}});
  Value empty = g.constant(at::empty({0}, at::TensorOptions().dtype(type)));
  return {y, empty, empty};
}

// aten::instance_norm(input, weight?, bias?, running_mean?, running_var?, bool use_input_stats,
//                     float momentum, float eps, bool cudnn_enabled) -> Tensor
//   ⇒  statistics over dims 2.. (use_input_stats); running statistics otherwise
Values instance_norm(GraphContext& g, const Args& a) {
  at::ScalarType type = norm_float_type(g, a, 0);
  const int64_t rank = a.require_rank(0);
  if (rank < 2) g.fail("instance_norm of a tensor of rank < 2");
  const double eps = a.float_arg(7);
  Value x = a.tensor(0);
  Value y;
  if (a.bool_arg(5)) {
    y = normalize_over(g, x, range_axes(2, rank), eps, type).y;
  } else {
    if (a.is_none(3) || a.is_none(4)) {
      g.fail("instance_norm with use_input_stats=False needs running statistics");
    }
    Value mean = per_channel(g, a.tensor(3), rank);
    Value var = per_channel(g, a.tensor(4), rank);
    Value denom = g.op("Sqrt", {g.op("Add", {var, g.constant_scalar(eps, type)})});
    y = g.op("Div", {g.op("Sub", {x, mean}), denom});
  }
  return {channel_affine(g, a, y, 1, 2, rank)};
}

// aten::layer_norm(input, int[] normalized_shape, weight?, bias?, float eps, bool cudnn) -> Tensor
//   ⇒  mean/variance composition (9–16)
Values layer_norm_9(GraphContext& g, const Args& a) {
  return {layer_norm_parts(g, a, norm_float_type(g, a, 0)).y};
}

// aten::layer_norm(...) -> Tensor  ⇒  LayerNormalization (17+)
Values layer_norm_17(GraphContext& g, const Args& a) {
  return layer_norm_op(g, a, 1);
}

// aten::native_layer_norm(input, SymInt[] normalized_shape, weight?, bias?, float eps)
//   -> (out, mean, rstd)  ⇒  the composition (9–16)
Values native_layer_norm_9(GraphContext& g, const Args& a) {
  Normalized n = layer_norm_parts(g, a, norm_float_type(g, a, 0));
  return {n.y, n.mean, n.rstd};
}

// aten::native_layer_norm(...) -> (out, mean, rstd)  ⇒  LayerNormalization with Mean/InvStdDev
//   outputs (17+, float input); the composition for other dtypes (ONNX Runtime computes the
//   statistics in float)
Values native_layer_norm_17(GraphContext& g, const Args& a) {
  at::ScalarType type = norm_float_type(g, a, 0);
  if (type == at::kFloat) return layer_norm_op(g, a, 3);
  Normalized n = layer_norm_parts(g, a, type);
  return {n.y, n.mean, n.rstd};
}

// aten::group_norm(input, int num_groups, weight?, bias?, float eps, bool cudnn) -> Tensor
//   ⇒  statistics over Reshape(x, [N, G, -1]), reshaped back, per-channel affine
Values group_norm(GraphContext& g, const Args& a) {
  at::ScalarType type = norm_float_type(g, a, 0);
  const int64_t rank = a.require_rank(0);
  Normalized n = group_norm_parts(g, a.tensor(0), a.int_arg(1), a.float_arg(4), type);
  return {channel_affine(g, a, n.y, 2, 3, rank)};
}

// aten::group_norm from opset 21  ⇒  GroupNormalization-21 (per-channel scale and bias, ones and
// zeros of C when absent; statistics in float, stash_type 1); float input of rank >= 3 (other
// dtypes and (N, C) inputs: the composition)
Values group_norm21(GraphContext& g, const Args& a) {
  at::ScalarType type = norm_float_type(g, a, 0);
  if (type != at::kFloat || a.require_rank(0) < 3) return group_norm(g, a);
  auto channels = [&](const Args& a, size_t i, double fill) {
    if (!a.is_none(i)) return a.tensor_as(i, type);
    return g.op("ConstantOfShape", {dims_of(g, a.tensor(0), {1})},
                {{"value", at::full({1}, fill, at::TensorOptions().dtype(type))}});
  };
  return {g.op("GroupNormalization", {a.tensor(0), channels(a, 2, 1), channels(a, 3, 0)},
               {{"epsilon", a.float_arg(4)}, {"num_groups", a.int_arg(1)}})};
}

// aten::native_group_norm(input, weight?, bias?, N, C, HxW, int group, float eps)
//   -> (out, mean [N, G], rstd [N, G])  ⇒  the group_norm composition
Values native_group_norm(GraphContext& g, const Args& a) {
  at::ScalarType type = norm_float_type(g, a, 0);
  const int64_t rank = a.require_rank(0);
  Normalized n = group_norm_parts(g, a.tensor(0), a.int_arg(6), a.float_arg(7), type);
  return {channel_affine(g, a, n.y, 1, 2, rank), squeeze(g, n.mean, {2}), squeeze(g, n.rstd, {2})};
}

// aten::rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None)
//   -> Tensor                                                               (PyTorch >= 2.4)
//   ⇒  x / Sqrt(ReduceMean(x·x over the last len(normalized_shape) axes) + eps) · weight, with
//      eps defaulting to the dtype's machine epsilon (torch.finfo(x.dtype).eps), as PyTorch
Values rms_norm(GraphContext& g, const Args& a) {
  const at::ScalarType type = norm_float_type(g, a, 0);
  const int64_t rank = a.require_rank(0);
  const auto normalized = list_length(a, 1);
  if (!normalized || *normalized > rank) {
    g.fail("normalized_shape must be a list of static length at most the input's rank");
  }
  double eps;
  if (auto given = a.optional_float(3)) {
    eps = *given;
  } else if (type == at::kDouble) {
    eps = std::numeric_limits<double>::epsilon();
  } else if (type == at::kHalf) {
    eps = 0.0009765625;  // torch.finfo(torch.float16).eps
  } else if (type == at::kBFloat16) {
    eps = 0.0078125;  // torch.finfo(torch.bfloat16).eps
  } else {
    eps = std::numeric_limits<float>::epsilon();
  }
  Value x = a.tensor(0);
  // An empty normalized_shape reduces over every axis, as PyTorch's mean(dim=[]) does.
  Value ms =
      reduce(g, "ReduceMean", g.op("Mul", {x, x}), range_axes(rank - *normalized, rank), true);
  Value y = g.op("Div", {x, g.op("Sqrt", {g.op("Add", {ms, g.constant_scalar(eps, type)})})});
  if (!a.is_none(2)) y = g.op("Mul", {y, a.tensor(2)});
  return {y};
}

// aten::_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor  ⇒  v · g / ‖v‖₂ over all dims but
//   `dim` (dim = -1 means over all dims, as torch.nn.utils.weight_norm's dim=None)
Values weight_norm(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  int64_t dim = a.int_arg(2);
  if (dim < -1) dim += rank;
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim) axes.push_back(i);
  }
  Value v = a.tensor(0);
  // Over no dims (1-D v, dim 0) the norm is |v|; `reduce` with no axes would reduce all.
  if (axes.empty()) return {g.op("Mul", {v, g.op("Div", {a.tensor(1), g.op("Abs", {v})})})};
  Value norm = g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {v, v}), axes, true)});
  return {g.op("Mul", {v, g.op("Div", {a.tensor(1), norm})})};
}

}  // namespace

void register_norm(Registry& r) {
  r.add("aten::batch_norm", {9, 13}, batch_norm_9);
  r.add("aten::batch_norm", from(14), batch_norm_14);
  r.add("aten::_native_batch_norm_legit_no_training", from(9), native_batch_norm_no_training);
  r.add("aten::instance_norm", from(9), instance_norm);
  r.add("aten::layer_norm", {9, 16}, layer_norm_9);
  r.add("aten::layer_norm", from(17), layer_norm_17);
  r.add("aten::native_layer_norm", {9, 16}, native_layer_norm_9);
  r.add("aten::native_layer_norm", from(17), native_layer_norm_17);
  r.add("aten::group_norm", {9, 20}, group_norm);
  r.add("aten::group_norm", from(21), group_norm21);
  r.add("aten::native_group_norm", from(9), native_group_norm);
  r.add("aten::rms_norm", from(9), rms_norm);
  r.add("aten::_weight_norm", from(9), weight_norm);
}

}  // namespace torchonnx::symbolic::ops
