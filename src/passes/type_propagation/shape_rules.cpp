// Shape rules for ops that libtorch's C++ runs without a meta kernel (Note [Ops without a meta
// kernel] in meta_eval.cpp): each gives the output libtorch's CPU kernel gives, same dtype, sizes
// from the inputs' sizes, without running it.
#include <ATen/ATen.h>
#include <ATen/InferSize.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "passes/type_propagation/propagator.h"

namespace torchonnx::passes::type_propagation {

namespace {

std::vector<int64_t> conv_output_size(at::IntArrayRef input, at::IntArrayRef weight,
                                      std::vector<int64_t> stride, std::vector<int64_t> padding,
                                      std::vector<int64_t> dilation, bool transposed,
                                      std::vector<int64_t> output_padding, int64_t groups) {
  const size_t n = input.size() - 2;
  auto at_i = [](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
    return v.empty() ? fallback : v[v.size() == 1 ? 0 : i];
  };
  std::vector<int64_t> out{input[0], transposed ? weight[1] * groups : weight[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = input[i + 2], k = weight[i + 2];
    int64_t s = at_i(stride, i, 1), p = at_i(padding, i, 0), d = at_i(dilation, i, 1);
    out.push_back(transposed ? (in - 1) * s - 2 * p + d * (k - 1) + at_i(output_padding, i, 0) + 1
                             : (in + 2 * p - d * (k - 1) - 1) / s + 1);
  }
  return out;
}

}  // namespace

bool apply_convolution_rule(const Node* node, torch::jit::Stack& stack) {
  static const auto kConvolutions =
      std::unordered_set<c10::Symbol>{c10::Symbol::fromQualString("aten::_convolution"),
                                      c10::Symbol::fromQualString("aten::convolution")};
  if (!kConvolutions.count(node->kind()) || !stack.at(0).toTensor().is_meta()) return false;
  // libtorch's C++ convolution has no meta kernel (Python registers one): shape rule here.
  const at::Tensor& x = stack[0].toTensor();
  const at::Tensor& w = stack[1].toTensor();
  const auto stride = stack[3].toIntVector(), padding = stack[4].toIntVector();
  const auto dilation = stack[5].toIntVector(), output_padding = stack[7].toIntVector();
  const bool transposed = stack[6].toBool();
  const int64_t groups = stack[8].toInt();
  // The rule computes sizes without libtorch's checks: arguments it would refuse (an input of
  // another rank, channels that do not match, a kernel larger than the padded input) go to the
  // zeros fallback, where libtorch's kernel gives its own error.
  const auto spatial = static_cast<size_t>(w.dim()) - 2;
  bool fits = x.dim() == w.dim() && w.dim() >= 3 && groups > 0 && stride.size() == spatial &&
              padding.size() == spatial && dilation.size() == spatial &&
              (!transposed || output_padding.size() == spatial) &&
              x.size(1) == (transposed ? w.size(0) : w.size(1) * groups) &&
              (transposed || w.size(0) % groups == 0);
  for (size_t i = 0; fits && i < spatial; ++i) {
    fits = stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0 &&
           (transposed || x.size(2 + i) + 2 * padding[i] >= dilation[i] * (w.size(2 + i) - 1) + 1);
  }
  if (!fits) {
    throw std::invalid_argument("convolution: the input, weight and arguments do not fit");
  }
  stack.assign(
      1, c10::IValue(at::empty(conv_output_size(x.sizes(), w.sizes(), stride, padding, dilation,
                                                transposed, output_padding, groups),
                               x.options())));
  return true;
}

// Note [Channels of a convolution]
// Every dim of an input may be named dynamic, its channels too (torchvision's region-proposal
// tests do), but a convolution takes only the channels its weight fits: a shadow run (Note
// [Dynamic axes]) at other channels would fail there, and the output would vary entirely. Any
// input the model runs on has those channels, so the shadow run gives the convolution those,
// and its output's channels (the weight's) stay known while its batch and spatial dims vary.
void fit_convolution_channels(const Node* node, torch::jit::Stack& stack) {
  static const auto kConvolutions =
      std::unordered_set<c10::Symbol>{c10::Symbol::fromQualString("aten::_convolution"),
                                      c10::Symbol::fromQualString("aten::convolution")};
  if (!kConvolutions.count(node->kind()) || stack.size() < 9 || !stack[0].isTensor() ||
      !stack[1].isTensor() || !stack[6].isBool() || !stack[8].isInt()) {
    return;
  }
  const at::Tensor& x = stack[0].toTensor();
  const at::Tensor& w = stack[1].toTensor();
  if (!x.defined() || !w.defined() || !x.is_meta() || x.dim() != w.dim() || x.dim() < 3) return;
  const int64_t channels = stack[6].toBool() ? w.size(0) : w.size(1) * stack[8].toInt();
  if (x.size(1) == channels) return;
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes[1] = channels;
  stack[0] = at::empty(sizes, x.options());
}

// Shape rules for common ops without a meta kernel (Note [Ops without a meta kernel]): replaces
// the inputs on `stack` by meta outputs; false when `node` has none or its inputs do not fit.
// Each gives the output libtorch's CPU kernel gives: same dtype, sizes from the inputs' sizes.
bool apply_shape_rule(Node* node, torch::jit::Stack& stack) {
  static const c10::Symbol kBatchNorm = c10::Symbol::fromQualString("aten::batch_norm");
  static const c10::Symbol kLayerNorm = c10::Symbol::fromQualString("aten::layer_norm");
  static const c10::Symbol kGroupNorm = c10::Symbol::fromQualString("aten::group_norm");
  static const c10::Symbol kInstanceNorm = c10::Symbol::fromQualString("aten::instance_norm");
  static const c10::Symbol kRelu = c10::Symbol::fromQualString("aten::relu");
  // libtorch 2.x's C++ has no meta kernel for these two (Python registers them): each miss costs
  // an exception and a run on zeros (mobilenet_v3's every block).
  static const c10::Symbol kHardswish = c10::Symbol::fromQualString("aten::hardswish");
  static const c10::Symbol kHardtanh = c10::Symbol::fromQualString("aten::hardtanh");
  static const c10::Symbol kEmbedding = c10::Symbol::fromQualString("aten::embedding");
  static const c10::Symbol kView = c10::Symbol::fromQualString("aten::view");
  const c10::Symbol kind = node->kind();
  if (kind == kView) {
    // RemoveEvalNoOps drops contiguous(), so view(x.transpose(1, 2).contiguous(), ...) reaches
    // here on a non-contiguous meta tensor, where view throws (a c10::Error, costly): the zeros
    // fallback would view a contiguous copy. Same sizes, without the error.
    if (stack.size() != 2 || !stack[0].isTensor() || !stack[1].isIntList()) return false;
    const at::Tensor& self = stack[0].toTensor();
    if (!self.defined() || !self.is_meta() || self.is_contiguous()) return false;
    const std::vector<int64_t> sizes = at::infer_size(stack[1].toIntVector(), self.numel());
    stack.assign(1, c10::IValue(at::empty(sizes, self.options())));
    return true;
  }
  static const c10::Symbol kRoiAlign = c10::Symbol::fromQualString("torchvision::roi_align");
  static const c10::Symbol kRoiPool = c10::Symbol::fromQualString("torchvision::roi_pool");
  if (kind == kRoiAlign || kind == kRoiPool) {
    // roi_align/roi_pool(input N x C x H x W, rois K x 5, spatial_scale, pooled_height,
    // pooled_width, ...): K x C x pooled_height x pooled_width (roi_pool: and its int64 argmax).
    if (stack.size() < 5 || !stack[0].isTensor() || !stack[1].isTensor() || !stack[3].isInt() ||
        !stack[4].isInt()) {
      return false;
    }
    const at::Tensor &input = stack[0].toTensor(), &rois = stack[1].toTensor();
    if (!input.defined() || !rois.defined() || !input.is_meta() || input.dim() != 4 ||
        rois.dim() != 2) {
      return false;
    }
    const std::vector<int64_t> sizes{rois.size(0), input.size(1), stack[3].toInt(),
                                     stack[4].toInt()};
    at::Tensor out = at::empty(sizes, input.options());
    if (kind == kRoiAlign) {
      stack.assign(1, c10::IValue(out));
    } else {
      stack.assign(
          {c10::IValue(out), c10::IValue(at::empty(sizes, out.options().dtype(at::kLong)))});
    }
    return true;
  }
  static const c10::Symbol kSdpa =
      c10::Symbol::fromQualString("aten::scaled_dot_product_attention");
  if (kind == kSdpa) {
    // scaled_dot_product_attention(query (..., L, E), key, value (..., S, Ev), ...): (..., L, Ev)
    // in the query's dtype. libtorch 2.x's C++ has no meta kernel for it (Python registers one),
    // and its zeros run costs an attention.
    if (stack.size() < 3 || !stack[0].isTensor() || !stack[2].isTensor()) return false;
    const at::Tensor &q = stack[0].toTensor(), &v = stack[2].toTensor();
    if (!q.defined() || !v.defined() || q.dim() < 2 || v.dim() < 2) return false;
    std::vector<int64_t> sizes = q.sizes().vec();
    sizes.back() = v.size(-1);
    stack.assign(1, c10::IValue(at::empty(sizes, q.options().device(at::kMeta))));
    return true;
  }
  if (kind != kBatchNorm && kind != kLayerNorm && kind != kGroupNorm && kind != kInstanceNorm &&
      kind != kRelu && kind != kEmbedding && kind != kHardswish && kind != kHardtanh) {
    return false;
  }
  if (stack.empty() || !stack[0].isTensor() || node->outputs().size() != 1) return false;
  const at::Tensor& first = stack[0].toTensor();
  if (!first.defined() || !first.is_meta()) return false;
  if (kind == kEmbedding) {
    // embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): a row per index.
    if (stack.size() != 5 || !stack[1].isTensor() || first.dim() != 2) return false;
    const at::Tensor& indices = stack[1].toTensor();
    if (!indices.defined() || !indices.is_meta() ||
        !(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt)) {
      return false;
    }
    std::vector<int64_t> sizes = indices.sizes().vec();
    sizes.push_back(first.size(1));
    stack.assign(1, c10::IValue(at::empty(sizes, first.options())));
    return true;
  }
  // Normalizations, relu, hardswish, hardtanh: the input's sizes and dtype (contiguous, as their
  // kernels give them).
  if (!at::isFloatingType(first.scalar_type()) && kind != kRelu) return false;
  if (kind == kRelu && (stack.size() != 1 || first.scalar_type() == at::kBool)) return false;
  stack.assign(1, c10::IValue(at::empty(first.sizes(), first.options())));
  return true;
}

// Note [Placeholders that disagree]: placeholders of data-dependent sizes come from different
// places (an int read from data is 1, a tensor of rows kept by nms has its own count), so an op
// that checks sizes against each other can fail on them where the model never does:
// split_with_sizes(x, [n]) with n not x.size(0), cat of pieces whose other dims disagree. Their
// results only need dtype and rank (they are approximate): one piece per size, of x's sizes with
// the split dim set to that size; the first piece's sizes with the cat dim summed; view/reshape
// to sizes that the placeholder has too few or many elements for (a key padding mask of
// `arange(int(lengths.max()))` viewed as (bsz, 1, 1, src_len)): the sizes asked for, -1 as 1;
// expand: the sizes asked for, -1 as the input's dim; a list of another length than it is unpacked
// into (chunk(x, n) with n read from data, then `a, b = ...`): each output as its first element;
// copy (copy_ made functional) of a src that does not broadcast to a placeholder self (`x[:y] = v`
// traced with y read from data: v is expanded to the example's slice sizes): self's sizes;
// arange whose bounds are in the wrong order for its step (arange(x.size(0), end) with end read
// from data: its placeholder is 1): one element of arange's dtype (out's, the dtype argument's,
// else the default float for a floating bound and int64 otherwise).
bool split_placeholders(const Node* node, const torch::jit::Stack& inputs,
                        torch::jit::Stack& outputs) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (node->kind() == c10::aten::arange && schema != nullptr &&
      inputs.size() == schema->arguments().size()) {
    std::optional<at::ScalarType> dtype;
    bool floating = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string& name = schema->arguments()[i].name();
      if (name == "out" && inputs[i].isTensor() && inputs[i].toTensor().defined()) {
        dtype = inputs[i].toTensor().scalar_type();
      } else if (name == "dtype" && inputs[i].isInt()) {
        dtype = static_cast<at::ScalarType>(inputs[i].toInt());
      } else if (name == "start" || name == "end" || name == "step") {
        floating = floating || inputs[i].isDouble() ||
                   (inputs[i].isScalar() && inputs[i].toScalar().isFloatingPoint());
      }
    }
    if (!dtype) dtype = floating ? at::typeMetaToScalarType(at::get_default_dtype()) : at::kLong;
    outputs.assign(1, c10::IValue(at::empty({1}, at::TensorOptions(at::kMeta).dtype(*dtype))));
    return true;
  }
  static const c10::Symbol kCopy = c10::Symbol::fromQualString("aten::copy");
  if (node->kind() == kCopy && !inputs.empty() && inputs[0].isTensor() &&
      inputs[0].toTensor().defined()) {
    const at::Tensor& self = inputs[0].toTensor();
    outputs.assign(1, c10::IValue(at::empty(self.sizes(), self.options().device(at::kMeta))));
    return true;
  }
  if (node->kind() == c10::prim::ListUnpack && inputs.size() == 1 && inputs[0].isList()) {
    auto list = inputs[0].toListRef();
    if (list.empty()) return false;
    outputs.assign(node->outputs().size(), list[0]);
    return true;
  }
  static const SymbolSet kReshapes = symbols({"aten::view", "aten::reshape", "aten::expand"});
  if (kReshapes.count(node->kind()) && inputs.size() >= 2 && inputs[0].isTensor() &&
      inputs[1].isIntList()) {
    const at::Tensor& x = inputs[0].toTensor();
    if (!x.defined()) return false;
    std::vector<int64_t> sizes = inputs[1].toIntVector();
    const bool expand = node->kind() == c10::aten::expand;
    if (expand && sizes.size() < static_cast<size_t>(x.dim())) return false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] >= 0) continue;
      const int64_t from_x = static_cast<int64_t>(d + x.dim()) - static_cast<int64_t>(sizes.size());
      sizes[d] = expand && from_x >= 0 ? x.size(from_x) : 1;
    }
    outputs.assign(1, c10::IValue(at::empty(sizes, x.options().device(at::kMeta))));
    return true;
  }
  static const c10::Symbol kCat = c10::Symbol::fromQualString("aten::cat");
  if (node->kind() == kCat && inputs.size() == 2 && inputs[0].isTensorList() && inputs[1].isInt()) {
    // cat of pieces whose other dims disagree: the first piece's sizes, the dim summed.
    auto pieces = inputs[0].toTensorList();
    if (pieces.empty()) return false;
    const at::Tensor first = pieces.get(0);
    if (!first.defined() || first.dim() == 0) return false;
    const int64_t dim = at::maybe_wrap_dim(inputs[1].toInt(), first.dim());
    std::vector<int64_t> sizes = first.sizes().vec();
    sizes[dim] = 0;
    for (const at::Tensor t : pieces) {
      if (!t.defined() || t.dim() != first.dim()) return false;
      sizes[dim] += t.size(dim);
    }
    outputs.assign(1, c10::IValue(at::empty(sizes, first.options().device(at::kMeta))));
    return true;
  }
  static const SymbolSet kSplits = symbols({"aten::split_with_sizes", "aten::split"});
  if (!kSplits.count(node->kind()) || inputs.size() != 3 || !inputs[0].isTensor() ||
      !inputs[1].isIntList() || !inputs[2].isInt()) {
    return false;
  }
  const at::Tensor& x = inputs[0].toTensor();
  if (!x.defined() || x.dim() == 0) return false;
  const int64_t dim = at::maybe_wrap_dim(inputs[2].toInt(), x.dim());
  c10::List<at::Tensor> pieces;
  for (int64_t size : inputs[1].toIntVector()) {
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes[dim] = std::max<int64_t>(size, 0);
    pieces.push_back(at::empty(sizes, x.options().device(at::kMeta)));
  }
  outputs.assign(1, c10::IValue(pieces));
  return true;
}

}  // namespace torchonnx::passes::type_propagation
