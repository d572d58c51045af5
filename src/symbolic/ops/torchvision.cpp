// torchvision's operators (torchvision::nms, roi_align, roi_pool), as torchvision lowers them for
// torch.onnx (torchvision/ops/_register_onnx_ops.py): NonMaxSuppression, RoiAlign, MaxRoiPool.
// They are registered by name, so they convert whether or not torchvision's library is loaded at
// export time (loading it is needed only to read a model that calls them).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <limits>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using at::ScalarType;

// A float argument as a 1-D float tensor of one element: a constant when the argument is one.
Value float_1d(GraphContext& g, const Args& a, size_t i) {
  if (a.is_constant(i)) {
    return g.constant(at::tensor({static_cast<float>(a.float_arg(i))}, at::kFloat));
  }
  return g.op("Reshape", {a.tensor_as(i, ScalarType::Float), g.constant_ints({1})});
}

// rois (K x 5: batch index, x1, y1, x2, y2) as RoiAlign's boxes (K x 4) and int64 batch indices.
std::pair<Value, Value> split_rois(GraphContext& g, const Value& rois) {
  Value indices =
      g.cast(squeeze(g, g.op("Gather", {rois, g.constant_ints({0})}, {{"axis", int64_t{1}}}), {1}),
             ScalarType::Long);
  Value boxes = g.op("Gather", {rois, g.constant_ints({1, 2, 3, 4})}, {{"axis", int64_t{1}}});
  return {boxes, indices};
}

// The floating type ONNX RoiAlign/MaxRoiPool compute in for an input of type t.
ScalarType roi_type(ScalarType t) {
  return t == ScalarType::Double || t == ScalarType::Half ? t : ScalarType::Float;
}

}  // namespace

void register_torchvision(Registry& r) {
  // torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor
  //   ⇒  NonMaxSuppression over one batch and one class (opset 11+: from 10 ONNX has it, but
  //      torchvision's lowering, like ours, needs opset 11's Squeeze/Gather forms only; ORT's
  //      order is torchvision's: kept boxes by decreasing score), the kept indices its column 2.
  //      Boxes (x1, y1, x2, y2) are corners, center_point_box = 0; IoU > threshold suppresses.
  r.add("torchvision::nms", {11, kMaxOpset}, [](GraphContext& g, const Args& a) -> Values {
    Value boxes = unsqueeze(g, cast_if(g, a.tensor(0), a.dtype(0), ScalarType::Float), {0});
    Value scores = unsqueeze(g, cast_if(g, a.tensor(1), a.dtype(1), ScalarType::Float), {0, 1});
    Value max_out = g.constant(at::tensor({std::numeric_limits<int64_t>::max()}, at::kLong));
    Value selected = g.op("NonMaxSuppression", {boxes, scores, max_out, float_1d(g, a, 2)});
    Value keep =
        squeeze(g, g.op("Gather", {selected, g.constant_ints({2})}, {{"axis", int64_t{1}}}), {1});
    return {keep};
  });

  // torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
  // int pooled_width, int sampling_ratio, bool aligned) -> Tensor
  //   ⇒  RoiAlign(mode="avg") on rois[:, 1:5] with batch indices rois[:, 0] (opset 10+).
  //      sampling_ratio <= 0 is adaptive in both (ONNX's 0). aligned=True shifts the boxes by
  //      half a pixel: from 16 coordinate_transformation_mode "half_pixel" (aligned=False is
  //      "output_half_pixel", which 16 no longer takes by default); before 16 the boxes are
  //      shifted by -0.5 / spatial_scale, exact except for rois narrower than one output pixel's
  //      sampling grid (ONNX then clamps their size to 1, torchvision does not with aligned).
  r.add("torchvision::roi_align", {10, kMaxOpset}, [](GraphContext& g, const Args& a) -> Values {
    const ScalarType t = a.dtype(0), ct = roi_type(t);
    Value input = cast_if(g, a.tensor(0), t, ct);
    Value rois = cast_if(g, a.tensor(1), a.dtype(1), ct);
    const double spatial_scale = a.float_arg(2);
    const bool aligned = a.bool_arg(6);
    auto [boxes, indices] = split_rois(g, rois);
    ir::Attributes attrs{{"spatial_scale", static_cast<float>(spatial_scale)},
                         {"output_height", a.int_arg(3)},
                         {"output_width", a.int_arg(4)},
                         {"sampling_ratio", std::max<int64_t>(a.int_arg(5), 0)},
                         {"mode", std::string("avg")}};
    if (g.opset() >= 16) {
      attrs.emplace_back("coordinate_transformation_mode",
                         std::string(aligned ? "half_pixel" : "output_half_pixel"));
    } else if (aligned) {
      if (spatial_scale == 0) g.fail("roi_align with aligned=True and spatial_scale 0");
      boxes = g.op("Sub", {boxes, g.constant_scalar(0.5 / spatial_scale, ct)});
    }
    Value out = g.op("RoiAlign", {input, boxes, indices}, attrs);
    return {cast_if(g, out, ct, t)};
  });

  // torchvision::roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
  // int pooled_width) -> (Tensor output, Tensor argmax)
  //   ⇒  MaxRoiPool(pooled_shape, spatial_scale) on the K x 5 rois (batch index first, as ONNX
  //      takes them); the argmax output has no ONNX counterpart (torchvision's lowering drops it
  //      too): a model that uses it is refused.
  r.add("torchvision::roi_pool", {}, [](GraphContext& g, const Args& a) -> Values {
    if (a.node()->outputs().size() > 1 && a.node()->output(1)->hasUses()) {
      g.fail("the argmax output of roi_pool has no ONNX equivalent (MaxRoiPool gives none)");
    }
    const ScalarType t = a.dtype(0), ct = roi_type(t);
    Value out = g.op("MaxRoiPool",
                     {cast_if(g, a.tensor(0), t, ct), cast_if(g, a.tensor(1), a.dtype(1), ct)},
                     {{"pooled_shape", std::vector<int64_t>{a.int_arg(3), a.int_arg(4)}},
                      {"spatial_scale", static_cast<float>(a.float_arg(2))}});
    return {cast_if(g, out, ct, t), ""};
  });
}

}  // namespace torchonnx::symbolic::ops
