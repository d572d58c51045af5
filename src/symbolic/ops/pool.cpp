// Pooling: max/avg pooling 1-D/2-D/3-D and adaptive average/max pooling.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

struct PoolGeometry {
  std::vector<int64_t> kernel, stride, pads, dilation;
};

// Kernel, stride (defaults to kernel), symmetric pads from schema positions 1, 2, 3.
PoolGeometry geometry(const Args& a, size_t n) {
  PoolGeometry p;
  p.kernel = expand_param(a.int_list(1), n);
  auto stride = a.int_list(2);
  p.stride = stride.empty() ? p.kernel : expand_param(stride, n);
  auto padding = expand_param(a.int_list(3), n);
  p.pads = padding;
  p.pads.insert(p.pads.end(), padding.begin(), padding.end());
  p.dilation.assign(n, 1);
  return p;
}

// Extra end padding that makes floor-mode output sizes equal PyTorch's ceil-mode ones (for
// opsets without the ceil_mode attribute, or where its sizes differ). The last window must start
// inside the input or the left padding, as in PyTorch.
std::vector<int64_t> ceil_extra_padding(const std::vector<int64_t>& input, const PoolGeometry& p) {
  const size_t n = p.kernel.size();
  std::vector<int64_t> extra(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = input[input.size() - n + i];
    int64_t span = in + 2 * p.pads[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
    int64_t out = (span + p.stride[i] - 1) / p.stride[i] + 1;
    if ((out - 1) * p.stride[i] >= in + p.pads[i]) --out;
    int64_t needed = (out - 1) * p.stride[i] + p.dilation[i] * (p.kernel[i] - 1) + 1;
    extra[i] = std::max<int64_t>(0, needed - (in + 2 * p.pads[i]));
  }
  return extra;
}

// Whether ONNX's ceil_mode (opset 10+) gives PyTorch's ceil-mode output sizes: ONNX keeps a last
// window that starts in the right padding, PyTorch drops it.
bool onnx_ceil_mode_matches(const std::vector<int64_t>& input, const PoolGeometry& p) {
  const size_t n = p.kernel.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t in = input[input.size() - n + i];
    int64_t span = in + 2 * p.pads[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
    int64_t out = (span + p.stride[i] - 1) / p.stride[i] + 1;
    if ((out - 1) * p.stride[i] >= in + p.pads[i]) return false;
  }
  return true;
}

bool any_nonzero(const std::vector<int64_t>& v) {
  return std::any_of(v.begin(), v.end(), [](int64_t e) { return e != 0; });
}

// How ceil_mode is lowered: the ceil_mode attribute when ONNX's sizes are PyTorch's (opset 10+),
// otherwise floor mode with `extra` end padding (none when floor sizes are PyTorch's).
struct CeilLowering {
  bool attribute = false;
  std::vector<int64_t> extra;
};

CeilLowering lower_ceil_mode(GraphContext& g, const Args& a, const PoolGeometry& p) {
  CeilLowering l;
  auto sizes = a.sizes(0);
  if (!sizes) {
    if (g.opset() < 10) g.fail("ceil_mode at opset 9 needs the input's static shape");
    l.attribute = true;
    return l;
  }
  l.attribute = g.opset() >= 10 && onnx_ceil_mode_matches(*sizes, p);
  if (!l.attribute) l.extra = ceil_extra_padding(*sizes, p);
  return l;
}

// aten::max_pool{1,2,3}d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0,
//                        int[] dilation=1, bool ceil_mode=False)
//   ⇒  MaxPool (ceil_mode via lower_ceil_mode: the extra padding is -inf, so always exact)
Value max_pool(GraphContext& g, const Args& a, size_t n) {
  PoolGeometry p = geometry(a, n);
  p.dilation = expand_param(a.int_list(4), n);
  const bool dilated =
      std::any_of(p.dilation.begin(), p.dilation.end(), [](int64_t d) { return d != 1; });
  if (dilated && g.opset() < 10) g.fail("dilated max pooling needs opset 10");
  CeilLowering ceil;
  if (a.bool_arg(5)) ceil = lower_ceil_mode(g, a, p);
  for (size_t i = 0; i < ceil.extra.size(); ++i) p.pads[n + i] += ceil.extra[i];
  ir::Attributes attrs{{"kernel_shape", p.kernel}, {"strides", p.stride}, {"pads", p.pads}};
  if (g.opset() >= 10) {
    attrs.emplace_back("ceil_mode", static_cast<int64_t>(ceil.attribute));
    if (dilated) attrs.emplace_back("dilations", p.dilation);
  }
  return g.op("MaxPool", {a.tensor(0)}, attrs);
}

// aten::avg_pool{1,2,3}d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0,
//                        bool ceil_mode=False, bool count_include_pad=True,
//                        int? divisor_override=None)
//   ⇒  AveragePool (ceil_mode via lower_ceil_mode; the extra padding is exact only when padding
//      is not counted)
Value avg_pool(GraphContext& g, const Args& a, size_t n) {
  PoolGeometry p = geometry(a, n);
  const bool count_include_pad = a.size() > 5 ? a.bool_arg(5) : true;
  if (a.size() > 6 && a.optional_int(6)) g.fail("divisor_override is not supported yet");
  CeilLowering ceil;
  if (a.bool_arg(4)) ceil = lower_ceil_mode(g, a, p);
  if (count_include_pad && any_nonzero(ceil.extra)) {
    g.fail(g.opset() < 10 && onnx_ceil_mode_matches(*a.sizes(0), p)
               ? "average pooling whose ceil_mode changes the output size needs opset 10"
               : "average pooling with count_include_pad whose ceil_mode windows ONNX cannot "
                 "express (PyTorch drops a last window that starts in the padding)");
  }
  for (size_t i = 0; i < ceil.extra.size(); ++i) p.pads[n + i] += ceil.extra[i];
  ir::Attributes attrs{{"kernel_shape", p.kernel},
                       {"strides", p.stride},
                       {"pads", p.pads},
                       {"count_include_pad", static_cast<int64_t>(count_include_pad)}};
  if (g.opset() >= 10) attrs.emplace_back("ceil_mode", static_cast<int64_t>(ceil.attribute));
  return g.op("AveragePool", {a.tensor(0)}, attrs);
}

// aten::adaptive_{avg,max}_pool{1,2,3}d(Tensor self, int[] output_size)
//   ⇒  GlobalXPool for output 1, XPool with kernel = stride = in/out when out divides in
Value adaptive_pool(GraphContext& g, const Args& a, size_t n, const std::string& kind) {
  auto out = expand_param(a.int_list(1), n);
  auto sizes = a.sizes(0);
  if (std::all_of(out.begin(), out.end(), [](int64_t o) { return o == 1; })) {
    return g.op("Global" + kind + "Pool", {a.tensor(0)});
  }
  if (!sizes) g.fail("adaptive pooling to a size other than 1 needs the input's static shape");
  std::vector<int64_t> kernel(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = (*sizes)[sizes->size() - n + i];
    if (out[i] <= 0 || in % out[i] != 0) {
      g.fail("adaptive pooling from size " + std::to_string(in) + " to " + std::to_string(out[i]) +
             " is not a fixed-window pooling ONNX can express; "
             "remedy: use an input size that is a multiple of the output size");
    }
    kernel[i] = in / out[i];
  }
  return g.op(kind + "Pool", {a.tensor(0)}, {{"kernel_shape", kernel}, {"strides", kernel}});
}

}  // namespace

void register_pool(Registry& r) {
  for (size_t n : {1, 2, 3}) {
    std::string d = std::to_string(n) + "d";
    r.add("aten::max_pool" + d, {},
          [n](GraphContext& g, const Args& a) -> Values { return {max_pool(g, a, n)}; });
    r.add("aten::avg_pool" + d, {},
          [n](GraphContext& g, const Args& a) -> Values { return {avg_pool(g, a, n)}; });
    r.add("aten::adaptive_avg_pool" + d, {}, [n](GraphContext& g, const Args& a) -> Values {
      return {adaptive_pool(g, a, n, "Average")};
    });
    // Returns (values, indices); the indices have no ONNX equivalent here.
    r.add("aten::adaptive_max_pool" + d, {}, [n](GraphContext& g, const Args& a) -> Values {
      if (a.node()->outputs().size() > 1 && a.node()->output(1)->hasUses()) {
        g.fail("the indices of adaptive max pooling cannot be exported");
      }
      return {adaptive_pool(g, a, n, "Max"), ""};
    });
  }
}

}  // namespace torchonnx::symbolic::ops
