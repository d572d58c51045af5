// Numeric tests of the torchvision operator converters: torchvision::nms (NonMaxSuppression),
// roi_align (RoiAlign, aligned=False and True, fixed and adaptive sampling), roi_pool
// (MaxRoiPool), deform_conv2d (DeformConv, opset 19). The models call the ops through TorchScript,
// which needs torchvision's operator library: it is loaded from the path python3-torchvision gives
// (found at CMake time); without python3-torchvision the tests are skipped.
#include <ATen/ATen.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

using Ints = std::vector<int64_t>;

const char* kLibrary = TORCHONNX_TORCHVISION_OPS;

class Torchvision : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(kLibrary).empty()) {
      GTEST_SKIP() << "python3-torchvision is not installed: torchvision's operator library "
                      "(torchvision.extension._get_extension_path('_C')) was not found at CMake "
                      "time";
    }
    ASSERT_TRUE(std::filesystem::exists(kLibrary)) << kLibrary << " does not exist";
    ASSERT_NE(dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
    at::manual_seed(0);
  }
};

// n boxes (x1, y1, x2, y2) of sizes 1..6 in a 12 x 12 area: many overlap.
at::Tensor random_boxes(int64_t n) {
  at::Tensor xy = at::rand({n, 2}) * 12;
  at::Tensor wh = at::rand({n, 2}) * 5 + 1;
  return at::cat({xy, xy + wh}, 1);
}

// n distinct scores in (0, 1).
at::Tensor distinct_scores(int64_t n) {
  return (at::randperm(n, at::kFloat) + 0.5) / static_cast<double>(n);
}

// K rois (batch index, x1, y1, x2, y2) over a batch of `batch` images of `w` x `h` pixels, each
// at least `min_size` pixels wide and high.
at::Tensor random_rois(int64_t k, int64_t batch, double w, double h, double min_size) {
  at::Tensor index = at::randint(batch, {k, 1}).to(at::kFloat);
  at::Tensor x1 = at::rand({k, 1}) * (w - min_size - 1);
  at::Tensor y1 = at::rand({k, 1}) * (h - min_size - 1);
  at::Tensor x2 = x1 + min_size + at::rand({k, 1}) * (w - min_size - 1 - x1);
  at::Tensor y2 = y1 + min_size + at::rand({k, 1}) * (h - min_size - 1 - y1);
  return at::cat({index, x1, y1, x2, y2}, 1);
}

// roi_pool(x, rois, 0.5, 3, 2) returning `result` (%out or %argmax).
std::string roi_pool_ir(const std::string& result) {
  return fmt::format(R"IR(
    graph(%x : Tensor, %rois : Tensor):
      %scale : float = prim::Constant[value=0.5]()
      %height : int = prim::Constant[value=3]()
      %width : int = prim::Constant[value=2]()
      %out : Tensor, %argmax : Tensor = torchvision::roi_pool(%x, %rois, %scale, %height, %width)
      return ({}))IR",
                     result);
}

TEST_F(Torchvision, NmsKeepsTorchvisionsIndicesInScoreOrder) {
  for (double iou : {0.3, 0.5, 0.8}) {
    SCOPED_TRACE(::testing::Message() << "iou_threshold " << iou);
    auto m = ir_module(fmt::format(R"IR(
      graph(%boxes : Tensor, %scores : Tensor):
        %iou : float = prim::Constant[value={}]()
        %keep : Tensor = torchvision::nms(%boxes, %scores, %iou)
        return (%keep))IR",
                                   iou));
    expect_script_matches("torchvision::nms", m, {random_boxes(40), distinct_scores(40)},
                          {.first = 11, .last = highest_opset()});
  }
}

TEST_F(Torchvision, BatchedNmsByCoordinateOffsets) {
  // torchvision.ops.batched_nms's trick: the boxes of each class moved apart, then one nms.
  auto m = ir_module(R"IR(
    graph(%boxes : Tensor, %scores : Tensor, %idxs : Tensor):
      %one : int = prim::Constant[value=1]()
      %iou : float = prim::Constant[value=0.5]()
      %max : Tensor = aten::max(%boxes)
      %max1 : Tensor = aten::add(%max, %one, %one)
      %classes : Tensor = aten::type_as(%idxs, %boxes)
      %offsets : Tensor = aten::mul(%classes, %max1)
      %column : Tensor = aten::unsqueeze(%offsets, %one)
      %moved : Tensor = aten::add(%boxes, %column, %one)
      %keep : Tensor = torchvision::nms(%moved, %scores, %iou)
      %index : Tensor?[] = prim::ListConstruct(%keep)
      %kept_boxes : Tensor = aten::index(%boxes, %index)
      %kept_scores : Tensor = aten::index(%scores, %index)
      %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%keep, %kept_boxes, %kept_scores)
      return (%out))IR");
  expect_script_matches("torchvision::nms", m,
                        {random_boxes(30), distinct_scores(30), at::randint(3, {30})},
                        {.first = 11, .last = highest_opset()});
}

TEST_F(Torchvision, RoiAlign) {
  at::Tensor x = at::randn({2, 3, 10, 12});
  // Rois in image pixels (spatial_scale 0.5), at least 4 pixels (2 feature pixels) wide.
  at::Tensor rois = random_rois(7, 2, 24, 20, 4);
  for (int64_t sampling : {2, 0, -1}) {
    for (bool aligned : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "sampling_ratio " << sampling << " aligned " << aligned);
      auto m = ir_module(fmt::format(R"IR(
        graph(%x : Tensor, %rois : Tensor):
          %scale : float = prim::Constant[value=0.5]()
          %height : int = prim::Constant[value=3]()
          %width : int = prim::Constant[value=4]()
          %sampling : int = prim::Constant[value={}]()
          %aligned : bool = prim::Constant[value={}]()
          %out : Tensor = torchvision::roi_align(%x, %rois, %scale, %height, %width, %sampling, %aligned)
          return (%out))IR",
                                     sampling, aligned ? 1 : 0));
      expect_script_matches("torchvision::roi_align", m, {x, rois},
                            {.first = 10, .last = highest_opset(), .tol = {1e-4, 1e-5}});
    }
  }
}

TEST_F(Torchvision, RoiAlignOfDoubles) {
  at::Tensor x = at::randn({1, 2, 8, 8}, at::kDouble);
  at::Tensor rois = random_rois(4, 1, 8, 8, 2).to(at::kDouble);
  auto m = ir_module(R"IR(
    graph(%x : Tensor, %rois : Tensor):
      %scale : float = prim::Constant[value=1.0]()
      %two : int = prim::Constant[value=2]()
      %aligned : bool = prim::Constant[value=0]()
      %out : Tensor = torchvision::roi_align(%x, %rois, %scale, %two, %two, %two, %aligned)
      return (%out))IR");
  expect_script_matches("torchvision::roi_align", m, {x, rois},
                        {.first = 10, .last = highest_opset(), .tol = {1e-6, 1e-8}});
}

TEST_F(Torchvision, RoiPool) {
  at::Tensor x = at::randn({2, 3, 10, 12});
  at::Tensor rois = random_rois(6, 2, 24, 20, 2);
  expect_script_matches("torchvision::roi_pool", ir_module(roi_pool_ir("%out")), {x, rois});
}

TEST_F(Torchvision, RoiPoolArgmaxIsRefused) {
  expect_module_export_fails(ir_module(roi_pool_ir("%argmax")),
                             {at::randn({1, 3, 10, 12}), random_rois(3, 1, 24, 20, 2)}, 17,
                             "argmax");
}

// torchvision::deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
// dilation_h, dilation_w, groups, offset_groups, use_mask), as torchvision.ops.deform_conv2d calls
// it (a zero (N, 1) mask with use_mask=False, zeros for a missing bias).
std::string deform_conv_ir(Ints stride, Ints pad, Ints dilation, int64_t groups,
                           int64_t offset_groups, bool use_mask) {
  return fmt::format(R"IR(
    graph(%x : Tensor, %w : Tensor, %offset : Tensor, %mask : Tensor, %b : Tensor):
      %sh : int = prim::Constant[value={}]()
      %sw : int = prim::Constant[value={}]()
      %ph : int = prim::Constant[value={}]()
      %pw : int = prim::Constant[value={}]()
      %dh : int = prim::Constant[value={}]()
      %dw : int = prim::Constant[value={}]()
      %g : int = prim::Constant[value={}]()
      %og : int = prim::Constant[value={}]()
      %use_mask : bool = prim::Constant[value={}]()
      %y : Tensor = torchvision::deform_conv2d(%x, %w, %offset, %mask, %b, %sh, %sw, %ph, %pw, %dh, %dw, %g, %og, %use_mask)
      return (%y))IR",
                     stride[0], stride[1], pad[0], pad[1], dilation[0], dilation[1], groups,
                     offset_groups, use_mask ? 1 : 0);
}

TEST_F(Torchvision, DeformConv2d) {
  TORCHONNX_SKIP_BELOW_OPSET(19);
  struct Case {
    Ints stride, pad, dilation, kernel;
    int64_t groups, offset_groups;
    bool use_mask;
  };
  for (const auto& c : std::vector<Case>{{{1, 1}, {0, 0}, {1, 1}, {3, 3}, 1, 1, false},
                                         {{1, 1}, {1, 1}, {1, 1}, {3, 3}, 2, 2, true},
                                         {{2, 1}, {1, 2}, {2, 1}, {3, 2}, 2, 1, true},
                                         {{1, 2}, {0, 1}, {1, 2}, {2, 3}, 1, 2, false}}) {
    SCOPED_TRACE(::testing::Message()
                 << "kernel " << at::IntArrayRef(c.kernel) << " stride "
                 << at::IntArrayRef(c.stride) << " groups " << c.groups << " offset_groups "
                 << c.offset_groups << " mask " << c.use_mask);
    const int64_t h = 7, w = 8, cin = 4, cout = 6;
    const int64_t ho = (h + 2 * c.pad[0] - c.dilation[0] * (c.kernel[0] - 1) - 1) / c.stride[0] + 1;
    const int64_t wo = (w + 2 * c.pad[1] - c.dilation[1] * (c.kernel[1] - 1) - 1) / c.stride[1] + 1;
    const int64_t taps = c.kernel[0] * c.kernel[1];
    // Offsets up to a few pixels: some sampling points fall between pixels, some outside.
    Inputs in{at::randn({2, cin, h, w}),
              at::randn({cout, cin / c.groups, c.kernel[0], c.kernel[1]}),
              at::randn({2, 2 * c.offset_groups * taps, ho, wo}) * 2,
              c.use_mask ? at::rand({2, c.offset_groups * taps, ho, wo}) : at::zeros({2, 1}),
              c.use_mask ? at::randn({cout}) : at::zeros({cout})};
    expect_script_matches("torchvision::deform_conv2d",
                          ir_module(deform_conv_ir(c.stride, c.pad, c.dilation, c.groups,
                                                   c.offset_groups, c.use_mask)),
                          in, {.first = 19, .last = highest_opset(), .tol = {1e-4, 1e-5}});
  }
}

// Below opset 19 there is no DeformConv: the error names the opset it converts from.
TEST_F(Torchvision, DeformConv2dBelowOpset19) {
  Inputs in{at::randn({1, 2, 5, 5}), at::randn({3, 2, 3, 3}), at::randn({1, 18, 3, 3}),
            at::zeros({1, 1}), at::zeros({3})};
  expect_module_export_fails(ir_module(deform_conv_ir({1, 1}, {0, 0}, {1, 1}, 1, 1, false)), in, 17,
                             "from opset 19", ErrorCode::kUnsupportedOp);
}

// ----- patterns of torchvision's detection models -------------------------------------------

// boxes.split(num_per_image) with sizes computed from other tensors' shapes (kept in the graph
// when they vary with dynamic axes, here with folding off): one Slice per piece between the
// running sums of the sizes.
TEST_F(Torchvision, SplitBySizesComputedInTheGraph) {
  const char* source =
      "def forward(self, x, y):\n"
      "    n = y.size(0)\n"
      "    a, b = x.split([n, x.size(0) - n], 0)\n"
      "    return a * 2.0, b + 1.0\n";
  expect_script_matches("aten::split", source, {at::randn({7, 4}), at::randn({3})},
                        {.first = 11, .last = highest_opset(), .fold = false});
}

// x1, y1, x2, y2 = boxes.unbind(1) on boxes whose sizes depend on data (boxes[mask]): as many
// pieces as the unpacking takes.
TEST_F(Torchvision, UnbindOfDataDependentRowsIntoUnpackedColumns) {
  const char* source =
      "def forward(self, boxes, scores):\n"
      "    kept = boxes[scores > 0.5]\n"
      "    x1, y1, x2, y2 = kept.unbind(1)\n"
      "    return (x2 - x1) * (y2 - y1)\n";
  expect_script_matches("aten::unbind", source, {random_boxes(12), distinct_scores(12)},
                        {.first = 11, .last = highest_opset()});
}

}  // namespace
}  // namespace torchonnx::testing
