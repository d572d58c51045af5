// Convolutions: _convolution (what tracing records), _convolution_mode, convolution, conv1d/2d/3d,
// conv_transpose1d/2d/3d and conv_tbc.
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

// Conv / ConvTranspose of input 0 with weight 1 and optional bias 2. The number of spatial dims
// comes from the weight's rank; an unbatched input (rank one less than the weight's, which
// PyTorch accepts for conv*d) gets a batch dim of 1 around the op.
Value convolution(GraphContext& g, const Args& a, const ConvParams& p) {
  const int64_t wrank = a.require_rank(1);
  const size_t n = static_cast<size_t>(wrank - 2);
  auto stride = expand_param(p.stride, n), dilation = expand_param(p.dilation, n);
  std::vector<int64_t> pads;
  if (p.padding_mode == "valid") {
    pads.assign(2 * n, 0);
  } else if (p.padding_mode == "same") {
    // PyTorch pads total = d·(k−1), the extra one at the end.
    auto wsizes = a.sizes(1);  // static shape: the kernel size decides the pads
    if (!wsizes) g.fail("padding='same' needs the weight's static shape");
    pads.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t total = dilation[i] * ((*wsizes)[i + 2] - 1);
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
  ir::Attributes attrs{
      {"strides", stride}, {"pads", pads}, {"dilations", dilation}, {"group", p.groups}};
  // kernel_shape as torch.onnx writes it; ONNX infers it from the weight when its shape is unknown.
  if (auto wsizes = a.sizes(1)) {
    attrs.emplace_back("kernel_shape", std::vector<int64_t>(wsizes->begin() + 2, wsizes->end()));
  }
  if (p.transposed) {
    auto output_padding = expand_param(p.output_padding, n);
    if (std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v; })) {
      attrs.emplace_back("output_padding", output_padding);
    }
  }
  if (!at::isFloatingType(a.dtype(0))) {
    g.fail(std::string("ONNX Conv takes float types only, not ") + c10::toString(a.dtype(0)) +
           "; remedy: convert the input and weight to float");
  }
  const int64_t xrank = a.require_rank(0);
  const bool unbatched = xrank == wrank - 1;
  if (!unbatched && xrank != wrank) {
    g.fail("a convolution input of rank " + std::to_string(xrank) + " with a weight of rank " +
           std::to_string(wrank));
  }
  Value x = a.tensor(0);
  if (unbatched) x = unsqueeze(g, x, {0});
  Values inputs{x, a.tensor(1)};
  if (!a.is_none(2)) inputs.push_back(a.tensor(2));
  Value y = g.op(p.transposed ? "ConvTranspose" : "Conv", inputs, attrs);
  return unbatched ? squeeze(g, y, {0}) : y;
}

// aten::_convolution(input, weight, bias?, stride, padding, dilation, transposed,
//                    output_padding, groups, benchmark, deterministic, cudnn[, allow_tf32])
// aten::convolution(input, weight, bias?, stride, padding, dilation, transposed,
//                   output_padding, groups)
//   ⇒  Conv / ConvTranspose
Values convolution_op(GraphContext& g, const Args& a) {
  ConvParams p;
  p.stride = a.int_list(3);
  p.padding = a.int_list(4);
  p.dilation = a.int_list(5);
  p.transposed = a.bool_arg(6);
  p.output_padding = a.int_list(7);
  p.groups = a.int_arg(8);
  return {convolution(g, a, p)};
}

// aten::conv{1,2,3}d(input, weight, bias?, int[] stride, int[] padding, int[] dilation, int groups)
//   ⇒  Conv with symmetric pads
Values conv_nd(GraphContext& g, const Args& a) {
  ConvParams p;
  p.stride = a.int_list(3);
  p.padding = a.int_list(4);
  p.dilation = a.int_list(5);
  p.groups = a.int_arg(6);
  return {convolution(g, a, p)};
}

// aten::conv{1,2,3}d.padding(input, weight, bias?, int[] stride, str padding, int[] dilation,
//   int groups)
// aten::_convolution_mode(input, weight, bias?, stride, str padding, dilation, groups): what
//   tracing records for conv*d(padding="same"/"valid")
//   ⇒  Conv with the pads of "same" (the extra one at the end) or "valid" (none)
Values conv_nd_padding_mode(GraphContext& g, const Args& a) {
  ConvParams p;
  p.stride = a.int_list(3);
  p.padding_mode = a.str_arg(4);
  p.dilation = a.int_list(5);
  p.groups = a.int_arg(6);
  return {convolution(g, a, p)};
}

// aten::conv_transpose{1,2,3}d(input, weight, bias?, stride, padding, output_padding, groups,
//                              dilation)
//   ⇒  ConvTranspose (pads and output_padding as attributes)
Values conv_transpose_nd(GraphContext& g, const Args& a) {
  ConvParams p;
  p.stride = a.int_list(3);
  p.padding = a.int_list(4);
  p.output_padding = a.int_list(5);
  p.groups = a.int_arg(6);
  p.dilation = a.int_list(7);
  p.transposed = true;
  return {convolution(g, a, p)};
}

// aten::conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor
//   ⇒  Transpose (T,B,C)→(B,C,T), weight (K,Cin,Cout)→(Cout,Cin,K), Conv with pads [pad, pad],
//      Transpose back to (T',B,Cout)
Values conv_tbc(GraphContext& g, const Args& a) {
  const int64_t pad = a.int_arg(3);
  if (!at::isFloatingType(a.dtype(0))) g.fail("ONNX Conv takes float types only");
  if (a.require_rank(0) != 3 || a.require_rank(1) != 3) {
    g.fail("conv_tbc takes a 3-D input and a 3-D weight");
  }
  Value x = transpose(g, a.tensor(0), {1, 2, 0});
  Value w = transpose(g, a.tensor(1), {2, 1, 0});
  Value y = g.op("Conv", {x, w, a.tensor(2)},
                 {{"pads", std::vector<int64_t>{pad, pad}},
                  {"strides", std::vector<int64_t>{1}},
                  {"dilations", std::vector<int64_t>{1}}});
  return {transpose(g, y, {2, 0, 1})};
}

}  // namespace

void register_conv(Registry& r) {
  r.add("aten::_convolution", from(9), convolution_op);
  r.add("aten::convolution", from(9), convolution_op);
  for (const std::string op : {"aten::conv1d", "aten::conv2d", "aten::conv3d"}) {
    r.add_unnamed(op, from(9), conv_nd);
    r.add(op + ".padding", from(9), conv_nd_padding_mode);
  }
  r.add("aten::_convolution_mode", from(9), conv_nd_padding_mode);
  r.add("aten::conv_transpose1d", from(9), conv_transpose_nd);
  r.add("aten::conv_transpose2d", from(9), conv_transpose_nd);
  r.add("aten::conv_transpose3d", from(9), conv_transpose_nd);
  r.add("aten::conv_tbc", from(9), conv_tbc);
}

}  // namespace torchonnx::symbolic::ops
