// Quantized ops: QuantizeLinear/DequantizeLinear around the float ops.
//
// A quantized TorchScript tensor is bound to the uint8/int8 ONNX tensor of the QuantizeLinear that
// made it (aten::quantize_per_tensor, or the QuantizeLinear ending a quantized:: op); its scale
// and zero point are that node's inputs, found again in the ONNX graph when a consumer
// dequantizes it (for a quantized graph input, recorded in the GraphContext: Note [Quantized
// graph inputs and outputs]). Packed weights (Conv{2,3}dPackedParamsBase, LinearPackedParamsBase)
// must be constants (torch.jit.freeze) and are unpacked at export time into int8 constants
// dequantized in the graph (per-channel with DequantizeLinear's axis from opset 13, by Sub/Mul
// before it). Biases are requantized to int32 steps of input_scale * weight_scale as QNNPACK/FBGEMM
// do. Type propagation cannot run quantized kernels on meta tensors: ranks of quantized values are
// recovered from their producers (q_rank) and dequantize's output type is set here.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <optional>
#include <unordered_map>

#include "symbolic/ops/quantized.h"

#include "onnx/dtype.h"
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

struct QParams {
  Value scale;             // float, 0-d (per tensor) or 1-D (per channel)
  Value zero_point;        // uint8/int8, same shape as scale
  at::ScalarType zp_type;  // kByte or kChar
};

// The tensor held by the Constant node that makes `name`, if any.
std::optional<at::Tensor> constant_of(GraphContext& g, const Value& name) {
  const auto& nodes = g.graph().nodes;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (it->outputs.size() != 1 || it->outputs[0] != name) continue;
    if (it->op_type != "Constant") return std::nullopt;
    for (const auto& attr : it->attributes) {
      if (attr.name == "value") return std::get<at::Tensor>(attr.value);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The element type of ONNX value `v` where its producer states it: a Constant's tensor, a Cast's
// `to`.
std::optional<at::ScalarType> element_type_of(GraphContext& g, const Value& v) {
  const auto& nodes = g.graph().nodes;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (it->outputs.size() != 1 || it->outputs[0] != v) continue;
    if (it->op_type == "Constant") {
      if (auto c = constant_of(g, v)) return c->scalar_type();
    } else if (it->op_type == "Cast") {
      for (const auto& attr : it->attributes) {
        if (attr.name == "to") {
          return from_onnx_dtype(static_cast<int32_t>(std::get<int64_t>(attr.value)));
        }
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Scale and zero point of quantized ONNX value `q`: those of the QuantizeLinear that produced it,
// or of the quantized graph input it is.
QParams qparams_of(GraphContext& g, const Value& q) {
  std::optional<std::pair<Value, Value>> found;
  if (const auto* p = g.qparams(q)) found = *p;
  const auto& nodes = g.graph().nodes;
  for (auto it = nodes.rbegin(); !found && it != nodes.rend(); ++it) {
    if (it->outputs.size() != 1 || it->outputs[0] != q) continue;
    if (it->op_type != "QuantizeLinear" || it->inputs.size() < 3) break;
    found = {it->inputs[1], it->inputs[2]};
  }
  if (!found) {
    g.fail(
        "a quantized input does not come from aten::quantize_per_tensor, a quantized:: op or a "
        "quantized graph input (quantized tensors passed through ops torchonnx does not convert "
        "on their dequantized form are not supported). Remedy: quantize inside the model "
        "(QuantStub) and keep only quantized:: ops on quantized tensors");
  }
  return {found->first, found->second, element_type_of(g, found->second).value_or(at::kByte)};
}

// ONNX's zero-point element type for a torch quantized dtype.
at::ScalarType zero_point_type(GraphContext& g, at::ScalarType qtype) {
  switch (qtype) {
    case at::kQUInt8:
      return at::kByte;
    case at::kQInt8:
      return at::kChar;
    default:
      g.fail(fmt::format("quantized dtype {} has no ONNX QuantizeLinear form (uint8 and int8 only)",
                         c10::toString(qtype)));
  }
}

Value dequantize(GraphContext& g, const Value& q) {
  QParams p = qparams_of(g, q);
  return g.op("DequantizeLinear", {q, p.scale, p.zero_point});
}

Value quantize(GraphContext& g, const Value& x, double scale, int64_t zero_point,
               at::ScalarType zp_type) {
  return g.op("QuantizeLinear", {x, g.constant_scalar(scale, at::kFloat),
                                 g.constant_scalar(static_cast<double>(zero_point), zp_type)});
}

// Output of a quantized:: op: `y` (float) quantized with the node's output scale and zero point
// at args `scale_i`, `scale_i + 1`, in the element type of quantized input `like`.
Value requantize(GraphContext& g, const Args& a, const Value& y, size_t scale_i,
                 const Value& like) {
  return quantize(g, y, a.float_arg(scale_i), a.int_arg(scale_i + 1), qparams_of(g, like).zp_type);
}

// The rank of a quantized TorchScript value: its type when type propagation knew it (it cannot
// run quantized kernels on meta tensors), else from the op that produced it.
int64_t q_rank(GraphContext& g, const torch::jit::Value* v) {
  if (auto t = v->type()->cast<c10::TensorType>(); t && t->dim())
    return static_cast<int64_t>(*t->dim());
  const torch::jit::Node* n = v->node();
  const std::string kind = n->kind().toQualString();
  // conv1d, conv_transpose2d_relu, ...: batch, channels and 1-3 spatial dims.
  if (kind.rfind("quantized::conv", 0) == 0) {
    for (char d : {'1', '2', '3'}) {
      if (kind.find(std::string(1, d) + "d") != std::string::npos) return 2 + (d - '0');
    }
  }
  if (kind == "quantized::cat" && n->input(0)->node()->kind() == c10::prim::ListConstruct &&
      n->input(0)->node()->inputs().size() > 0)
    return q_rank(g, n->input(0)->node()->input(0));
  if ((kind.rfind("quantized::", 0) == 0 && kind != "quantized::cat") ||
      kind == "aten::quantize_per_tensor")
    return q_rank(g, n->input(0));
  g.fail(fmt::format("the rank of %{} (made by {}) is unknown", v->debugName(), kind));
}

// A weight unpacked from packed params, dequantized in the graph.
Value dequantized_weight(GraphContext& g, const at::Tensor& w) {
  if (!w.is_quantized()) g.fail("the packed weight is not quantized");
  at::ScalarType zp_type = zero_point_type(g, w.scalar_type());
  Value q = g.constant(w.int_repr());
  if (w.qscheme() == at::kPerTensorAffine) {
    Value scale = g.constant_scalar(w.q_scale(), at::kFloat);
    Value zp = g.constant_scalar(static_cast<double>(w.q_zero_point()), zp_type);
    return g.op("DequantizeLinear", {q, scale, zp});
  }
  if (w.qscheme() != at::kPerChannelAffine && w.qscheme() != at::kPerChannelAffineFloatQParams) {
    g.fail("packed weight has an unsupported quantization scheme");
  }
  if (w.qscheme() == at::kPerChannelAffineFloatQParams) {
    g.fail("per-channel weights with float zero points have no ONNX form");
  }
  const int64_t axis = w.q_per_channel_axis();
  at::Tensor scales = w.q_per_channel_scales().to(at::kFloat);
  at::Tensor zps = w.q_per_channel_zero_points();
  if (g.has(OnnxFeature::kPerChannelQuantization)) {
    Value scale = g.constant(scales);
    Value zp = g.constant(zps.to(zp_type));
    return g.op("DequantizeLinear", {q, scale, zp}, {{"axis", axis}});
  }
  // DequantizeLinear has no axis before 13: (q - zp) * scale with both broadcast along `axis`.
  std::vector<int64_t> shape(w.dim(), 1);
  shape[axis] = w.size(axis);
  Value zp_b = g.constant(zps.to(at::kFloat).reshape(shape));
  Value scale_b = g.constant(scales.reshape(shape));
  Value wf = g.op("Sub", {g.cast(q, at::kFloat), zp_b});
  return g.op("Mul", {wf, scale_b});
}

// The bias as the quantized kernels use it: int32 steps of input_scale * weight_scale, zero point
// 0. A DequantizeLinear of the int32 bias (scalar scale, or axis 0 from opset 13; the zero point
// shaped like the scale, as ORT requires); per-channel below 13 the dequantized float bias.
// Computed at export time when the input's scale is a constant; in the graph when it is known
// only at run time (a quantized graph input, Note [Quantized graph inputs and outputs]).
// (Keeping it a DequantizeLinear also stops ORT's own bias quantization of QDQ Conv/Gemm, which
// inserts Round even at opset 10 where Round does not exist.)
Value requantized_bias(GraphContext& g, const at::Tensor& bias, const Value& in_scale,
                       const at::Tensor& w) {
  at::Tensor w_scale = w.qscheme() == at::kPerTensorAffine
                           ? at::scalar_tensor(w.q_scale(), at::kFloat)
                           : w.q_per_channel_scales().to(at::kFloat);
  const bool per_channel = w_scale.dim() == 1;
  Value step_v, q_v;
  if (auto s = constant_of(g, in_scale)) {
    if (s->numel() != 1) g.fail("the input's quantization scale is not a scalar");
    at::Tensor step = w_scale * s->to(at::kFloat).reshape({});
    at::Tensor q = at::round(bias.to(at::kFloat) / step).to(at::kInt);
    if (per_channel && !g.has(OnnxFeature::kPerChannelQuantization))
      return g.constant(q.to(at::kFloat) * step);
    step_v = g.constant(step);
    q_v = g.constant(q);
  } else {
    step_v = g.op("Mul", {g.constant(w_scale), in_scale});
    Value x = g.op("Div", {g.constant(bias.to(at::kFloat)), step_v});
    // Round is opset 11; before, floor(x + 0.5) (which differs from rounding half to even only
    // on exact halves).
    Value rounded = g.has(OnnxFeature::kRound)
                        ? g.op("Round", {x})
                        : g.op("Floor", {g.op("Add", {x, g.constant_scalar(0.5, at::kFloat)})});
    q_v = g.cast(rounded, at::kInt);
    if (per_channel && !g.has(OnnxFeature::kPerChannelQuantization))
      return g.op("Mul", {g.cast(q_v, at::kFloat), step_v});
  }
  ir::Attributes attrs;
  if (per_channel) attrs.push_back({"axis", int64_t{0}});
  return g.op("DequantizeLinear", {q_v, step_v, g.constant(at::zeros_like(w_scale, at::kInt))},
              attrs);
}

c10::Stack call_op(GraphContext& g, const char* name, const c10::IValue& packed) {
  auto handle = c10::Dispatcher::singleton().findSchema({name, ""});
  if (!handle) g.fail(fmt::format("libtorch has no operator {} to unpack the weights", name));
  c10::Stack stack{packed};
  handle->callBoxed(stack);
  return stack;
}

c10::IValue packed_params(GraphContext& g, const Args& a, size_t i) {
  if (!a.is_constant(i)) {
    g.fail(
        "the packed weights are not a constant. Remedy: torch.jit.freeze the traced quantized "
        "model before saving it");
  }
  return a.constant(i);
}

std::vector<int64_t> as_ints(const c10::IValue& v) {
  return v.toIntVector();
}

// The last `n` entries of `v`: the packed params of a 1-D convolution hold 2-D parameters whose
// first entry is the unit dim conv1d adds (stride [1, s], padding [0, p], ...).
std::vector<int64_t> last(std::vector<int64_t> v, size_t n) {
  if (v.size() > n) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(n));
  return v;
}

// A quantized convolution: its spatial dims (1-3), whether it is transposed, whether a ReLU is
// fused. 1-D and 2-D ops take Conv2dPackedParamsBase, 3-D ones Conv3dPackedParamsBase, queried by
// quantized::conv{2,3}d_stride/padding/... and unpacked by quantized::<op>_unpack.
struct ConvSpec {
  int64_t dims;
  bool transposed;
  bool relu;
  const char* unpack;  // quantized::conv1d_unpack, quantized::conv_transpose2d_unpack, ...
};

struct QConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  size_t scale_i = 2;  // schema position of the output scale (then the zero point)
};

// The convolution parameters of a quantized conv node: from the packed params (new overloads) or
// from the node's arguments (the legacy non-transposed overloads: 8 arguments).
QConvParams conv_params(GraphContext& g, const Args& a, const c10::IValue& packed,
                        const ConvSpec& spec) {
  QConvParams p;
  const size_t n = static_cast<size_t>(spec.dims);
  if (!spec.transposed && a.size() == 8) {
    p.stride = a.int_list(2);
    p.padding = a.int_list(3);
    p.dilation = a.int_list(4);
    p.groups = a.int_arg(5);
    p.scale_i = 6;
  } else {
    const std::string q = spec.dims == 3 ? "quantized::conv3d_" : "quantized::conv2d_";
    auto ints = [&](const char* what) {
      return as_ints(call_op(g, (q + what).c_str(), packed)[0]);
    };
    const bool transposed = call_op(g, (q + "transpose").c_str(), packed).at(0).toInt() != 0;
    if (transposed != spec.transposed) {
      g.fail(fmt::format("the packed weights are those of a {}transposed convolution, the op a {}",
                         transposed ? "" : "non-",
                         spec.transposed ? "transposed one" : "plain one"));
    }
    p.stride = last(ints("stride"), n);
    p.padding = last(ints("padding"), n);
    p.dilation = last(ints("dilation"), n);
    if (spec.transposed) p.output_padding = last(ints("output_padding"), n);
    p.groups = call_op(g, (q + "groups").c_str(), packed).at(0).toInt();
  }
  p.stride = expand_param(p.stride, n);
  p.padding = expand_param(p.padding, n);
  p.dilation = expand_param(p.dilation, n);
  return p;
}

// quantized::conv{1,2,3}d[_relu], quantized::conv_transpose{1,2,3}d:
// Dequantize → Conv / ConvTranspose (→ Relu) → Quantize.
Converter conv(ConvSpec spec) {
  return [=](GraphContext& g, const Args& a) -> Values {
    c10::IValue packed = packed_params(g, a, 1);
    QConvParams p = conv_params(g, a, packed, spec);
    c10::Stack unpacked = call_op(g, spec.unpack, packed);
    at::Tensor w = unpacked.at(0).toTensor();
    if (w.dim() != spec.dims + 2) {
      g.fail(fmt::format("the unpacked weight has {} dims, expected {}", w.dim(), spec.dims + 2));
    }
    if (spec.transposed && w.qscheme() != at::kPerTensorAffine) {
      // Per-channel scales run along the output channels, dim 1 (per group) of a transposed
      // weight, which the requantized bias does not follow; PyTorch 1.13 cannot make them.
      g.fail("transposed quantized convolutions with per-channel weights are not supported");
    }
    Value qx = a.tensor(0);
    QParams in = qparams_of(g, qx);
    Values inputs{g.op("DequantizeLinear", {qx, in.scale, in.zero_point}),
                  dequantized_weight(g, w)};
    if (unpacked.at(1).isTensor() && unpacked.at(1).toTensor().defined()) {
      inputs.push_back(requantized_bias(g, unpacked.at(1).toTensor(), in.scale, w));
    }
    std::vector<int64_t> pads = p.padding;
    pads.insert(pads.end(), p.padding.begin(), p.padding.end());
    // static shape: the kernel size of a constant weight.
    ir::Attributes attrs{{"kernel_shape", w.sizes().slice(2).vec()},
                         {"strides", p.stride},
                         {"pads", pads},
                         {"dilations", p.dilation},
                         {"group", p.groups}};
    if (spec.transposed) attrs.emplace_back("output_padding", p.output_padding);
    Value y = g.op(spec.transposed ? "ConvTranspose" : "Conv", inputs, attrs);
    if (spec.relu) y = g.op("Relu", {y});
    return {requantize(g, a, y, p.scale_i, qx)};
  };
}

// quantized::linear[_relu]: Dequantize → MatMul(x, Wᵀ) + b (→ Relu) → Quantize.
Converter linear(bool relu) {
  return [=](GraphContext& g, const Args& a) -> Values {
    c10::Stack unpacked = call_op(g, "quantized::linear_unpack", packed_params(g, a, 1));
    at::Tensor w = unpacked.at(0).toTensor();
    Value qx = a.tensor(0);
    QParams in = qparams_of(g, qx);
    Value weight = dequantized_weight(g, w);
    Value x = g.op("DequantizeLinear", {qx, in.scale, in.zero_point});
    Value y = g.op("MatMul", {x, transpose(g, weight, {1, 0})});
    if (unpacked.at(1).isTensor() && unpacked.at(1).toTensor().defined()) {
      y = g.op("Add", {y, requantized_bias(g, unpacked.at(1).toTensor(), in.scale, w)});
    }
    if (relu) y = g.op("Relu", {y});
    return {requantize(g, a, y, 2, qx)};
  };
}

// y = mean-variance normalization of `x` over `axes` (biased variance, as the kernels).
Value normalize(GraphContext& g, const Value& x, const std::vector<int64_t>& axes, double eps) {
  Value mean = reduce(g, "ReduceMean", x, axes, true);
  Value d = g.op("Sub", {x, mean});
  Value var = reduce(g, "ReduceMean", g.op("Mul", {d, d}), axes, true);
  Value denom = g.op("Sqrt", {g.op("Add", {var, g.constant_scalar(eps, at::kFloat)})});
  return g.op("Div", {d, denom});
}

// y * weight + bias with weight/bias (shape [C]) broadcast along dim 1 of a rank-`rank` tensor.
Value q_channel_affine(GraphContext& g, const Args& a, Value y, size_t w_i, size_t b_i,
                       int64_t rank) {
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d < rank - 1; ++d) trailing.push_back(d);
  auto shaped = [&](size_t i) {
    Value v = a.tensor_as(i, at::kFloat);
    return trailing.empty() ? v : unsqueeze(g, v, trailing);
  };
  if (!a.is_none(w_i)) y = g.op("Mul", {y, shaped(w_i)});
  if (!a.is_none(b_i)) y = g.op("Add", {y, shaped(b_i)});
  return y;
}

void require_tensor_overload(GraphContext& g, const Args& a, size_t n) {
  if (a.size() != n) {
    g.fail(
        "only the overload with an output scale and zero point is supported (the Scalar and out= "
        "overloads are not)");
  }
}

Converter q_binary(const std::string& onnx_op, bool relu) {
  return [=](GraphContext& g, const Args& a) -> Values {
    require_tensor_overload(g, a, 4);
    Value qa = a.tensor(0);
    Value y = g.op(onnx_op, {dequantize(g, qa), dequantize(g, a.tensor(1))});
    if (relu) y = g.op("Relu", {y});
    return {requantize(g, a, y, 2, qa)};
  };
}

// x fake-quantized to [quant_min, quant_max] (args range_i, range_i + 1) with the scale and zero
// point of args 1 and 2 (scalars or tensors), per tensor or along `axis`.
Value fake_quantize(GraphContext& g, const Args& a, std::optional<int64_t> axis, size_t range_i) {
  const int64_t qmin = a.int_arg(range_i), qmax = a.int_arg(range_i + 1);
  at::ScalarType zp_type;
  if (qmin >= 0 && qmax <= 255) {
    zp_type = at::kByte;
  } else if (qmin >= -128 && qmax <= 127) {
    zp_type = at::kChar;
  } else {
    g.fail(
        fmt::format("fake quantization to [{}, {}] has no ONNX form: QuantizeLinear takes uint8 "
                    "[0, 255] or int8 [-128, 127]",
                    qmin, qmax));
  }
  const bool full = (zp_type == at::kByte && qmin == 0 && qmax == 255) ||
                    (zp_type == at::kChar && qmin == -128 && qmax == 127);
  if (!full) {
    g.require_opset(
        12,
        fmt::format("fake quantization to [{}, {}] (clipped in the integer domain)", qmin, qmax),
        "Clip of int8/uint8");
  }
  Value scale = a.tensor_as(1, at::kFloat);
  Value zero_point = a.tensor_as(2, zp_type);
  ir::Attributes attrs;
  if (axis) attrs.emplace_back("axis", *axis);
  Value x = a.dtype(0) == at::kFloat ? a.tensor(0) : a.tensor_as(0, at::kFloat);
  Value q = g.op("QuantizeLinear", {x, scale, zero_point}, attrs);
  if (!full) {
    q = g.op("Clip", {q, g.constant_scalar(static_cast<double>(qmin), zp_type),
                      g.constant_scalar(static_cast<double>(qmax), zp_type)});
  }
  Value y = g.op("DequantizeLinear", {q, scale, zero_point}, attrs);
  return a.output_dtype() == at::kFloat || a.output_dtype() == at::ScalarType::Undefined
             ? y
             : g.cast(y, a.output_dtype());
}

// aten::quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) /
// .tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, ScalarType dtype)  ⇒
// QuantizeLinear (uint8 for quint8, int8 for qint8). A scale or zero point computed in the graph
// (a scripted torch.ao Quantize module's `float(self.scale)`, `int(self.zero_point)` of its
// one-element buffers, which are initializers) is QuantizeLinear's input as it is, reshaped to
// 0-d (per tensor) and cast to float / the zero point's type, as torch.onnx's quantize_helper.
Values quantize_per_tensor(GraphContext& g, const Args& a) {
  if (a.size() != 4 || a.jit(0)->type()->kind() == c10::TypeKind::ListType) {
    g.fail("only quantize_per_tensor(Tensor, float scale, int zero_point, dtype) is supported");
  }
  auto qtype = static_cast<at::ScalarType>(a.int_arg(3));
  const at::ScalarType zp_type = zero_point_type(g, qtype);
  Value x = a.tensor_as(0, at::kFloat);
  if (a.is_constant(1) && a.is_constant(2)) {
    double scale =
        a.constant(1).isTensor() ? a.constant(1).toTensor().item<double>() : a.float_arg(1);
    int64_t zp = a.constant(2).isTensor() ? a.constant(2).toTensor().item<int64_t>() : a.int_arg(2);
    return {quantize(g, x, scale, zp, zp_type)};
  }
  // Reshaped before the Cast: qparams_of reads the zero point's type from its Cast.
  auto scalar = [&](size_t i, at::ScalarType type) {
    Value v = g.op("Reshape", {a.tensor(i), g.constant_ints({})});
    return g.cast(v, type);
  };
  Value scale = scalar(1, at::kFloat);
  Value zero_point = scalar(2, zp_type);
  return {g.op("QuantizeLinear", {x, scale, zero_point})};
}

// aten::dequantize.self(Tensor self) -> Tensor  ⇒  DequantizeLinear
Values dequantize_self(GraphContext& g, const Args& a) {
  if (a.jit(0)->type()->kind() != c10::TypeKind::TensorType) {
    g.fail("only dequantize(Tensor) is supported (not lists)");
  }
  return {dequantize(g, a.tensor(0))};
}

// quantized::cat(Tensor[] qx, int dim, float? scale, int? zero_point)  ⇒  DQ each → Concat → Q
// (without scale/zero point: the first input's, as libtorch)
Values q_cat(GraphContext& g, const Args& a) {
  Values qs = a.tensor_list(0);
  if (qs.empty()) g.fail("cat of an empty list");
  const torch::jit::Node* list = a.jit(0)->node();
  int64_t dim = a.int_arg(1);
  if (dim < 0) {
    if (list->kind() != c10::prim::ListConstruct) g.fail("negative dim on a list of unknown rank");
    dim = normalize_dim(dim, q_rank(g, list->input(0)));
  }
  Values xs;
  for (const Value& qx : qs) xs.push_back(dequantize(g, qx));
  Value y = g.op("Concat", xs, {{"axis", dim}});
  if (a.is_none(2) != a.is_none(3)) g.fail("scale and zero_point must be given together");
  if (a.is_none(2)) {
    QParams first = qparams_of(g, qs[0]);
    return {g.op("QuantizeLinear", {y, first.scale, first.zero_point})};
  }
  return {requantize(g, a, y, 2, qs[0])};
}

// quantized::hardswish(Tensor input, float scale, int zp)  ⇒  DQ → x * HardSigmoid(x; 1/6, 1/2)
// → Q
Values q_hardswish10(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  Value x = dequantize(g, qx);
  Value y = g.op("Mul", {x, g.op("HardSigmoid", {x}, {{"alpha", 1.0 / 6}, {"beta", 0.5}})});
  return {requantize(g, a, y, 1, qx)};
}

// quantized::hardswish(Tensor input, float scale, int zp)  ⇒  DQ → HardSwish → Q
Values q_hardswish14(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  Value y = g.op("HardSwish", {dequantize(g, qx)});
  return {requantize(g, a, y, 1, qx)};
}

// quantized::sigmoid(Tensor qx, float scale, int zp)  ⇒  DQ → Sigmoid → Q
Values q_sigmoid(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  return {requantize(g, a, g.op("Sigmoid", {dequantize(g, qx)}), 1, qx)};
}

// quantized::leaky_relu(Tensor qx, Scalar slope, bool inplace, float scale, int zp)  ⇒
// DQ → LeakyRelu → Q
Values q_leaky_relu(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  Value y = g.op("LeakyRelu", {dequantize(g, qx)}, {{"alpha", a.float_arg(1)}});
  return {requantize(g, a, y, 3, qx)};
}

// quantized::layer_norm(Tensor x, int[] normalized_shape, Tensor? w, Tensor? b, float eps,
// float scale, int zp)  ⇒  DQ → normalization over the last len(shape) dims, affine → Q
Values q_layer_norm(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  const int64_t rank = q_rank(g, a.jit(0));
  const auto k = static_cast<int64_t>(a.int_list(1).size());
  std::vector<int64_t> axes;
  for (int64_t d = rank - k; d < rank; ++d) axes.push_back(d);
  Value y = normalize(g, dequantize(g, qx), axes, a.float_arg(4));
  if (!a.is_none(2)) y = g.op("Mul", {y, a.tensor_as(2, at::kFloat)});
  if (!a.is_none(3)) y = g.op("Add", {y, a.tensor_as(3, at::kFloat)});
  return {requantize(g, a, y, 5, qx)};
}

// quantized::group_norm(Tensor x, int num_groups, Tensor? w, Tensor? b, float eps, float scale,
// int zp)  ⇒  DQ → Reshape [N, G, -1], normalization over dim 2, Reshape back, affine → Q
Values q_group_norm(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  const int64_t rank = q_rank(g, a.jit(0));
  Value x = dequantize(g, qx);
  Value grouped = g.op("Reshape", {x, g.constant_ints({0, a.int_arg(1), -1})});
  Value y = normalize(g, grouped, {2}, a.float_arg(4));
  y = g.op("Reshape", {y, shape_of(g, x)});
  return {requantize(g, a, q_channel_affine(g, a, y, 2, 3, rank), 5, qx)};
}

// quantized::instance_norm(Tensor x, Tensor? w, Tensor? b, float eps, float scale, int zp)  ⇒
// DQ → normalization over dims 2.., affine → Q
Values q_instance_norm(GraphContext& g, const Args& a) {
  Value qx = a.tensor(0);
  const int64_t rank = q_rank(g, a.jit(0));
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Value y = normalize(g, dequantize(g, qx), axes, a.float_arg(3));
  return {requantize(g, a, q_channel_affine(g, a, y, 1, 2, rank), 4, qx)};
}

// aten::fake_quantize_per_tensor_affine(Tensor self, float|Tensor scale, int|Tensor zero_point,
//   int quant_min, int quant_max)  ⇒  DequantizeLinear(QuantizeLinear(x)) in uint8 for
//   [0, 255], int8 for [-128, 127]; other ranges are clipped in the integer domain (12+).
Values fake_quantize_per_tensor(GraphContext& g, const Args& a) {
  return {fake_quantize(g, a, /*axis=*/std::nullopt, 3)};
}

// aten::fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis,
//   int quant_min, int quant_max)  ⇒  the same with a per-axis scale (DequantizeLinear's axis,
//   opset 13)
Values fake_quantize_per_channel(GraphContext& g, const Args& a) {
  return {fake_quantize(g, a, normalize_dim(a.int_arg(3), a.require_rank(0)), 4)};
}

}  // namespace

// Note [Quantized tensors through float ops]
// A quantized model may apply plain aten ops to quantized tensors: torch.ao's quantized modules
// call F.max_pool2d, relu, flatten or interpolate on them (a QAT-converted conv followed by a
// MaxPool2d). libtorch computes them on the integer values with the input's scale and zero point;
// torch.onnx (quantized_args) dequantizes the inputs, runs the float op and quantizes the result
// again with the input's scale and zero point, which is exact for these ops (each commutes with
// the monotone, affine dequantization). The same here, for every aten op that reads a tensor
// marked quantized; its tensor outputs are quantized tensors in turn.
bool reads_quantized(const GraphContext& g, const torch::jit::Node* node) {
  const c10::Symbol kind = node->kind();
  if (!kind.is_aten() || kind == c10::aten::dequantize || kind == c10::aten::quantize_per_tensor) {
    return false;
  }
  for (const torch::jit::Value* in : node->inputs()) {
    if (g.is_quantized(in)) return true;
  }
  return false;
}

// Whether output `v` of an op on quantized inputs is a quantized tensor: a tensor whose dtype
// type propagation could not find (it cannot run quantized kernels on meta tensors) or a quantized
// one; sizes, ints and lists are not.
bool quantized_result(const torch::jit::Value* v) {
  auto t = v->type()->cast<c10::TensorType>();
  return t && (!t->scalarType() || c10::isQIntType(*t->scalarType()));
}

// The output scale and zero point libtorch's quantized kernels of sigmoid, hardsigmoid and tanh
// fix, whatever the input's: their range [0, 1] or [-1, 1] in 256 steps (qsigmoid.cpp, ...; the
// zero point by the element type, uint8 / int8). torch.onnx's quantized_args gives the same for
// uint8.
struct FixedQParams {
  double scale;
  int64_t zero_point_uint8, zero_point_int8;
};

std::optional<FixedQParams> fixed_output_qparams(const torch::jit::Node* node) {
  static const std::unordered_map<c10::Symbol, FixedQParams> kFixed{
      {c10::aten::sigmoid, {1.0 / 256, 0, -128}},
      {c10::aten::hardsigmoid, {1.0 / 256, 0, -128}},
      {c10::aten::tanh, {2.0 / 256, 128, 0}},
  };
  auto it = kFixed.find(node->kind());
  if (it == kFixed.end()) return std::nullopt;
  return it->second;
}

Values convert_dequantized(GraphContext& g, const torch::jit::Node* node, const Converter& fn) {
  std::optional<QParams> first;
  std::vector<std::pair<const torch::jit::Value*, Values>> saved;
  for (const torch::jit::Value* in : node->inputs()) {
    const Values* bound = g.lookup(in);
    if (!g.is_quantized(in) || bound == nullptr || bound->size() != 1) continue;
    QParams p = qparams_of(g, bound->front());
    if (!first) first = p;
    saved.emplace_back(in, *bound);
    g.bind(in, {g.op("DequantizeLinear", {bound->front(), p.scale, p.zero_point})});
  }
  Values out;
  try {
    out = fn(g, Args(g, node));
  } catch (...) {
    for (auto& [v, values] : saved) g.bind(v, values);
    throw;
  }
  for (auto& [v, values] : saved) g.bind(v, values);
  if (!first || out.size() != node->outputs().size()) return out;
  if (auto fixed = fixed_output_qparams(node)) {
    const int64_t zp =
        first->zp_type == at::kChar ? fixed->zero_point_int8 : fixed->zero_point_uint8;
    first = QParams{g.constant_scalar(fixed->scale, at::kFloat),
                    g.constant_scalar(static_cast<double>(zp), first->zp_type), first->zp_type};
  }
  for (size_t k = 0; k < out.size(); ++k) {
    if (!quantized_result(node->output(k))) continue;
    out[k] = g.op("QuantizeLinear", {out[k], first->scale, first->zero_point});
  }
  return out;
}

void mark_quantized_outputs(GraphContext& g, const torch::jit::Node* node) {
  // Symbol comparisons: this runs for every converted node.
  static const c10::Symbol kQuantized = c10::Symbol::fromQualString("namespaces::quantized");
  const bool quantizes =
      node->kind() == c10::aten::quantize_per_tensor || node->kind().ns() == kQuantized;
  const bool passes_on = !quantizes && reads_quantized(g, node);
  for (const torch::jit::Value* out : node->outputs()) {
    if (out->type()->kind() != c10::TypeKind::TensorType) continue;
    if (quantizes || (passes_on && quantized_result(out))) g.mark_quantized(out);
  }
}

// Note [Quantized graph inputs and outputs]
// A quantized tensor crosses the model's boundary as three ONNX values, as torch.onnx passes it
// (its UnpackQuantizedTensorInputs and quantize_helper's tuple, flattened): an input `x` is the
// inputs x_value (uint8/int8, x's shape), x_scale (double, 0-d) and x_zero_point (int64, 0-d),
// what torch.onnx.verification feeds for a quantized tensor (utils.unpack_quantized_tensor); a
// quantized output is the outputs value, scale (float, 0-d) and zero point (uint8/int8, 0-d).
//
//   graph(%x : QUInt8(2, 3)):               x_value : uint8[2, 3], x_scale : double,
//     %y = aten::relu(%x)            ⇒      x_zero_point : int64
//     return (%y)                           s = Cast<float>(x_scale); z = Cast<uint8>(x_zero_point)
//                                           y = QuantizeLinear(Relu(DequantizeLinear(x_value, s,
//                                               z)), s, z)
//                                           outputs: y, y_scale = s, y_zero_point = z
bool is_quantized_tensor(const torch::jit::Value* v) {
  auto t = v->type()->cast<c10::TensorType>();
  return t && t->scalarType() && c10::isQIntType(*t->scalarType());
}

void add_quantized_input(GraphContext& g, const torch::jit::Value* input, const std::string& name) {
  const at::ScalarType zp_type =
      zero_point_type(g, *input->type()->expect<c10::TensorType>()->scalarType());
  ir::TypeInfo type = value_type(input);
  type.dtype = zp_type;
  ir::Graph& graph = g.graph();
  const Value value = name + "_value", scale = name + "_scale", zero_point = name + "_zero_point";
  graph.inputs.push_back({value, type});
  graph.inputs.push_back({scale, ir::TypeInfo(at::kDouble, std::vector<int64_t>{})});
  graph.inputs.push_back({zero_point, ir::TypeInfo(at::kLong, std::vector<int64_t>{})});
  g.set_qparams(value, g.cast(scale, at::kFloat), g.cast(zero_point, zp_type));
  g.bind(input, {value});
  g.mark_quantized(input);
}

std::vector<ir::ValueInfo> quantized_output(GraphContext& g, const torch::jit::Value* output,
                                            const Value& q) {
  QParams p = qparams_of(g, q);
  ir::TypeInfo type = value_type(output);
  type.dtype = p.zp_type;
  return {{q, type},
          {p.scale, ir::TypeInfo(at::kFloat, std::vector<int64_t>{})},
          {p.zero_point, ir::TypeInfo(p.zp_type, std::vector<int64_t>{})}};
}

// QuantizeLinear/DequantizeLinear exist from opset 10: every converter here starts there.
void register_quantized(Registry& r) {
  r.add("aten::quantize_per_tensor", from(10), quantize_per_tensor);
  r.add("aten::dequantize", from(10), dequantize_self);

  // quantized::conv1d/conv2d.new(Tensor qx, Conv2dPackedParamsBase w, float scale, int zp),
  // quantized::conv3d.new(Tensor qx, Conv3dPackedParamsBase w, float scale, int zp) (and the
  // legacy conv2d/conv3d(qx, w, stride, padding, dilation, groups, scale, zp))  ⇒
  // Dequantize → Conv → Quantize (per-channel weights: DequantizeLinear axis from 13)
  r.add("quantized::conv1d", from(10), conv({1, false, false, "quantized::conv1d_unpack"}));
  r.add("quantized::conv2d", from(10), conv({2, false, false, "quantized::conv2d_unpack"}));
  r.add("quantized::conv3d", from(10), conv({3, false, false, "quantized::conv3d_unpack"}));
  // quantized::conv{1,2,3}d_relu(...), the same arguments  ⇒  Dequantize → Conv → Relu → Quantize
  r.add("quantized::conv1d_relu", from(10), conv({1, false, true, "quantized::conv1d_unpack"}));
  r.add("quantized::conv2d_relu", from(10), conv({2, false, true, "quantized::conv2d_unpack"}));
  r.add("quantized::conv3d_relu", from(10), conv({3, false, true, "quantized::conv3d_unpack"}));
  // quantized::conv_transpose{1,2}d(Tensor qx, Conv2dPackedParamsBase w, float scale, int zp),
  // quantized::conv_transpose3d(Tensor qx, Conv3dPackedParamsBase w, float scale, int zp)  ⇒
  // Dequantize → ConvTranspose (pads, output_padding from the packed params) → Quantize
  r.add("quantized::conv_transpose1d", from(10),
        conv({1, true, false, "quantized::conv_transpose1d_unpack"}));
  r.add("quantized::conv_transpose2d", from(10),
        conv({2, true, false, "quantized::conv_transpose2d_unpack"}));
  r.add("quantized::conv_transpose3d", from(10),
        conv({3, true, false, "quantized::conv_transpose3d_unpack"}));

  // quantized::linear(Tensor X, LinearPackedParamsBase W, float scale, int zp)  ⇒
  // Dequantize → MatMul(x, Wᵀ) + b → Quantize
  r.add("quantized::linear", from(10), linear(/*relu=*/false));
  // quantized::linear_relu(Tensor X, LinearPackedParamsBase W, float scale, int zp)  ⇒
  // Dequantize → MatMul(x, Wᵀ) + b → Relu → Quantize
  r.add("quantized::linear_relu", from(10), linear(/*relu=*/true));

  // quantized::add(Tensor qa, Tensor qb, float scale, int zero_point)  ⇒  DQ → Add → Q
  r.add("quantized::add", from(10), q_binary("Add", false));
  // quantized::add_relu(Tensor qa, Tensor qb, float scale, int zero_point)  ⇒  DQ → Add, Relu → Q
  r.add("quantized::add_relu", from(10), q_binary("Add", true));
  // quantized::mul(Tensor qa, Tensor qb, float scale, int zero_point)  ⇒  DQ → Mul → Q
  r.add("quantized::mul", from(10), q_binary("Mul", false));

  r.add("quantized::cat", from(10), q_cat);
  r.add("quantized::hardswish", {10, 13}, q_hardswish10);
  r.add("quantized::hardswish", from(14), q_hardswish14);
  r.add("quantized::sigmoid", from(10), q_sigmoid);
  r.add("quantized::leaky_relu", from(10), q_leaky_relu);
  r.add("quantized::layer_norm", from(10), q_layer_norm);
  r.add("quantized::group_norm", from(10), q_group_norm);
  r.add("quantized::instance_norm", from(10), q_instance_norm);
  r.add("aten::fake_quantize_per_tensor_affine", from(10), fake_quantize_per_tensor);
  r.add("aten::fake_quantize_per_channel_affine", from(13), fake_quantize_per_channel);
}

}  // namespace torchonnx::symbolic::ops
