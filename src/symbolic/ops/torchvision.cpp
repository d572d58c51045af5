// torchvision's operators (torchvision::nms, roi_align, roi_pool), as torchvision lowers them for
// torch.onnx (torchvision/ops/_register_onnx_ops.py): NonMaxSuppression, RoiAlign, MaxRoiPool;
// and deform_conv2d, which torchvision does not lower, as DeformConv (opset 19).
// They are registered by name, so they convert whether or not torchvision's library is loaded at
// export time (loading it is needed only to read a model that calls them).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <limits>
#include <tuple>

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

// torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor
//   ⇒  NonMaxSuppression over one batch and one class (opset 11+: from 10 ONNX has it, but
//      torchvision's lowering, like ours, needs opset 11's Squeeze/Gather forms only; ORT's
//      order is torchvision's: kept boxes by decreasing score), the kept indices its column 2.
//      Boxes (x1, y1, x2, y2) are corners, center_point_box = 0; IoU > threshold suppresses.
Values nms(GraphContext& g, const Args& a) {
  Value boxes = unsqueeze(g, cast_if(g, a.tensor(0), a.dtype(0), ScalarType::Float), {0});
  Value scores = unsqueeze(g, cast_if(g, a.tensor(1), a.dtype(1), ScalarType::Float), {0, 1});
  Value max_out = g.constant(at::tensor({std::numeric_limits<int64_t>::max()}, at::kLong));
  Value selected = g.op("NonMaxSuppression", {boxes, scores, max_out, float_1d(g, a, 2)});
  Value keep =
      squeeze(g, g.op("Gather", {selected, g.constant_ints({2})}, {{"axis", int64_t{1}}}), {1});
  return {keep};
}

// torchvision::roi_align's arguments (input, rois, spatial_scale, pooled_height, pooled_width,
// sampling_ratio, aligned) as RoiAlign's inputs and attributes (mode "avg"; sampling_ratio <= 0 is
// adaptive in both, ONNX's 0): boxes rois[:, 1:5], batch indices rois[:, 0].
struct RoiAlign {
  ScalarType type, compute_type;
  Value input, boxes, indices;
  double spatial_scale;
  bool aligned;
  ir::Attributes attrs;
};

RoiAlign roi_align_inputs(GraphContext& g, const Args& a) {
  RoiAlign r;
  r.type = a.dtype(0);
  r.compute_type = roi_type(r.type);
  r.input = cast_if(g, a.tensor(0), r.type, r.compute_type);
  Value rois = cast_if(g, a.tensor(1), a.dtype(1), r.compute_type);
  r.spatial_scale = a.float_arg(2);
  r.aligned = a.bool_arg(6);
  std::tie(r.boxes, r.indices) = split_rois(g, rois);
  r.attrs = {{"spatial_scale", static_cast<float>(r.spatial_scale)},
             {"output_height", a.int_arg(3)},
             {"output_width", a.int_arg(4)},
             {"sampling_ratio", std::max<int64_t>(a.int_arg(5), 0)},
             {"mode", std::string("avg")}};
  return r;
}

Value roi_align_output(GraphContext& g, const RoiAlign& r) {
  Value out = g.op("RoiAlign", {r.input, r.boxes, r.indices}, r.attrs);
  return cast_if(g, out, r.compute_type, r.type);
}

// torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
// int pooled_width, int sampling_ratio, bool aligned) -> Tensor
//   ⇒  RoiAlign-10 (output_half_pixel coordinates); aligned=True shifts the boxes by
//      -0.5 / spatial_scale, exact except for rois narrower than one output pixel's sampling grid
//      (ONNX then clamps their size to 1, torchvision does not with aligned)
Values roi_align10(GraphContext& g, const Args& a) {
  RoiAlign r = roi_align_inputs(g, a);
  if (r.aligned) {
    if (r.spatial_scale == 0) g.fail("roi_align with aligned=True and spatial_scale 0");
    r.boxes = g.op("Sub", {r.boxes, g.constant_scalar(0.5 / r.spatial_scale, r.compute_type)});
  }
  return {roi_align_output(g, r)};
}

// torchvision::roi_align(...)  ⇒  RoiAlign-16, coordinate_transformation_mode "half_pixel" for
//   aligned=True, "output_half_pixel" (which 16 no longer takes by default) for False
Values roi_align16(GraphContext& g, const Args& a) {
  RoiAlign r = roi_align_inputs(g, a);
  r.attrs.emplace_back("coordinate_transformation_mode",
                       std::string(r.aligned ? "half_pixel" : "output_half_pixel"));
  return {roi_align_output(g, r)};
}

// torchvision::roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
// int pooled_width) -> (Tensor output, Tensor argmax)
//   ⇒  MaxRoiPool(pooled_shape, spatial_scale) on the K x 5 rois (batch index first, as ONNX
//      takes them); the argmax output has no ONNX counterpart (torchvision's lowering drops it
//      too): a model that uses it is refused.
Values roi_pool(GraphContext& g, const Args& a) {
  if (a.node()->outputs().size() > 1 && a.node()->output(1)->hasUses()) {
    g.fail("the argmax output of roi_pool has no ONNX equivalent (MaxRoiPool gives none)");
  }
  const ScalarType t = a.dtype(0), ct = roi_type(t);
  Value out =
      g.op("MaxRoiPool", {cast_if(g, a.tensor(0), t, ct), cast_if(g, a.tensor(1), a.dtype(1), ct)},
           {{"pooled_shape", std::vector<int64_t>{a.int_arg(3), a.int_arg(4)}},
            {"spatial_scale", static_cast<float>(a.float_arg(2))}});
  return {cast_if(g, out, ct, t), ""};
}

// torchvision::deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask,
// Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h,
// SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor
//   ⇒  DeformConv (19+): the same bilinear sampling at the offset positions (zero outside the
//      input) times the mask; torchvision passes zeros for a missing bias and a zero (N, 1) mask
//      with use_mask=False, which DeformConv then does not get.
Values deform_conv2d19(GraphContext& g, const Args& a) {
  const ScalarType type = a.dtype(0);
  if (type != ScalarType::Float && type != ScalarType::Double) {
    g.fail("deform_conv2d is exported for float and double inputs (ONNX Runtime's DeformConv)");
  }
  if (a.require_rank(0) != 4) g.fail("deform_conv2d takes a 4-D input");
  const int64_t pad_h = a.int_arg(7), pad_w = a.int_arg(8);
  Values inputs{a.tensor(0), a.tensor_as(1, type), a.tensor_as(2, type), a.tensor_as(4, type)};
  if (a.bool_arg(13)) inputs.push_back(a.tensor_as(3, type));
  ir::Attributes attrs{{"strides", std::vector<int64_t>{a.int_arg(5), a.int_arg(6)}},
                       {"pads", std::vector<int64_t>{pad_h, pad_w, pad_h, pad_w}},
                       {"dilations", std::vector<int64_t>{a.int_arg(9), a.int_arg(10)}},
                       {"group", a.int_arg(11)},
                       {"offset_group", a.int_arg(12)}};
  if (auto w = a.sizes(1); w && w->size() == 4) {
    attrs.emplace_back("kernel_shape", std::vector<int64_t>{(*w)[2], (*w)[3]});
  }
  return {g.op("DeformConv", inputs, attrs)};
}

}  // namespace

void register_torchvision(Registry& r) {
  r.add("torchvision::nms", from(11), nms);
  r.add("torchvision::roi_align", {10, 15}, roi_align10);
  r.add("torchvision::roi_align", from(16), roi_align16);
  r.add("torchvision::roi_pool", from(9), roi_pool);
  r.add("torchvision::deform_conv2d", from(19), deform_conv2d19);
}

}  // namespace torchonnx::symbolic::ops
