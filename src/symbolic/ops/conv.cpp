// Convolutions: _convolution (what tracing records), _convolution_mode, convolution, conv1d/2d/3d.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  std::optional<std::string> padding_mode;  // "same" / "valid" of conv2d(padding: str)
};

Value convolution(GraphContext& g, const Args& a, const ConvParams& p) {
  auto wsizes = a.sizes(1);
  if (!wsizes) g.fail("the weight's shape is unknown");
  const size_t n = wsizes->size() - 2;
  std::vector<int64_t> kernel(wsizes->begin() + 2, wsizes->end());
  auto stride = expand_param(p.stride, n), dilation = expand_param(p.dilation, n);
  std::vector<int64_t> pads;
  if (p.padding_mode == "valid") {
    pads.assign(2 * n, 0);
  } else if (p.padding_mode == "same") {
    // PyTorch pads total = d·(k−1), the extra one at the end.
    pads.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t total = dilation[i] * (kernel[i] - 1);
      pads[i] = total / 2;
      pads[i + n] = total - total / 2;
    }
  } else if (p.padding_mode) {
    g.fail("unknown padding '" + *p.padding_mode + "'");
  } else {
    auto padding = expand_param(p.padding, n);
    pads = padding;
    pads.insert(pads.end(), padding.begin(), padding.end());
  }
  ir::Attributes attrs{{"kernel_shape", kernel},
                       {"strides", stride},
                       {"pads", pads},
                       {"dilations", dilation},
                       {"group", p.groups}};
  if (p.transposed) {
    auto output_padding = expand_param(p.output_padding, n);
    if (std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v; })) {
      attrs.emplace_back("output_padding", output_padding);
    }
  }
  Values inputs{a.tensor(0), a.tensor(1)};
  if (!a.is_none(2)) inputs.push_back(a.tensor(2));
  return g.op(p.transposed ? "ConvTranspose" : "Conv", inputs, attrs);
}

}  // namespace

void register_conv(Registry& r) {
  // aten::_convolution(input, weight, bias?, stride, padding, dilation, transposed,
  //                    output_padding, groups, benchmark, deterministic, cudnn, allow_tf32)
  // aten::convolution(input, weight, bias?, stride, padding, dilation, transposed,
  //                   output_padding, groups)
  //   ⇒  Conv / ConvTranspose
  for (const char* op : {"aten::_convolution", "aten::convolution"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      ConvParams p{a.int_list(3), a.int_list(4), a.int_list(5),
                   a.int_list(7), a.bool_arg(6), a.int_arg(8)};
      return {convolution(g, a, p)};
    });
  }
  // aten::conv{1,2,3}d(input, weight, bias?, stride, padding (int[] | str), dilation, groups)
  // aten::_convolution_mode(input, weight, bias?, stride, str padding, dilation, groups): what
  //   tracing records for conv*d(padding="same"/"valid")
  //   ⇒  Conv
  for (const char* op :
       {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::_convolution_mode"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      ConvParams p;
      p.stride = a.int_list(3);
      if (a.constant(4).isString()) {
        p.padding_mode = a.str_arg(4);
      } else {
        p.padding = a.int_list(4);
      }
      p.dilation = a.int_list(5);
      p.groups = a.int_arg(6);
      return {convolution(g, a, p)};
    });
  }
}

}  // namespace torchonnx::symbolic::ops
