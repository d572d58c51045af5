// Attention: the fused inference kernels of nn.MultiheadAttention / nn.TransformerEncoderLayer
// (taken by PyTorch 1.13 in eval mode without grad), and _masked_softmax.
//
// Semantics follow PyTorch 1.13's CPU kernels (aten/src/ATen/native/transformers/attention.cpp,
// transformer.cpp, SoftMax.cpp), checked by experiment:
//  - masks are boolean, True = masked out; a non-bool mask is converted to bool (nonzero = True);
//  - a fully masked softmax row gives NaN (softmax of all -inf), in PyTorch as in ONNX Runtime;
//  - _native_multi_head_attention takes a 2-D key-padding mask (B, S) (broadcast over heads and
//    queries) or a 4-D mask (B, H, T, S); mask_type must be given with a mask (1 or 2: same
//    meaning on CPU; 0, a (T, T) src_mask, is rejected by the CPU kernel);
//  - q is scaled by 1/sqrt(head_dim) after its bias; averaged weights are the mean over heads.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {
namespace {

// x · wᵀ + b for x [..., in], w [out, in], b [out].
Value linear(GraphContext& g, const Value& x, const Value& w, const Value& b) {
  Value wt = g.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}});
  return g.op("Add", {g.op("MatMul", {x, wt}), b});
}

// `mask` (any dtype) as bool: Cast to bool maps nonzero to true, as Tensor.to(bool).
Value bool_mask(GraphContext& g, const Value& mask, at::ScalarType type) {
  return type == at::kBool ? mask : g.cast(mask, at::kBool);
}

// Softmax over the last axis of `x` with the positions where `mask` (bool, broadcastable) is true
// excluded: Softmax(Where(mask, -inf, x)). The last axis is safe at every opset (Softmax before 13
// flattens to 2-D at `axis`).
Value masked_softmax_last(GraphContext& g, const Value& x, const std::optional<Value>& mask,
                          int64_t rank, at::ScalarType type) {
  Value scores = x;
  if (mask) {
    Value ninf = g.constant_scalar(-std::numeric_limits<double>::infinity(), type);
    scores = g.op("Where", {*mask, ninf, x});
  }
  return g.op("Softmax", {scores}, {{"axis", rank - 1}});
}

struct Attention {
  Value output;   // [B, T, D]
  Value weights;  // [B, H, T, S] (per head)
};

// The multi-head attention of _native_multi_head_attention: inputs by schema position.
//   (query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask?,
//    need_weights, average_attn_weights, mask_type?)
// query/key/value are given as ONNX values (the encoder layer passes its normalized input);
// `self_attention` when they are one value (one projection, then split).
Attention multi_head_attention(GraphContext& g, const Args& a, const Value& query, const Value& key,
                               const Value& value, bool self_attention, int64_t embed_dim,
                               int64_t num_heads, size_t w_at, std::optional<size_t> mask_at,
                               std::optional<int64_t> mask_type, at::ScalarType type) {
  if (num_heads <= 0 || embed_dim % num_heads != 0) {
    g.fail("embed_dim (" + std::to_string(embed_dim) + ") must be divisible by num_heads (" +
           std::to_string(num_heads) + ")");
  }
  const int64_t head_dim = embed_dim / num_heads;
  Value qkv_w = a.tensor(w_at), qkv_b = a.tensor(w_at + 1);
  Value q, k, v;
  if (self_attention) {
    // One projection, split into q, k, v along the features.
    Values qkv = split(g, linear(g, query, qkv_w, qkv_b), {embed_dim, embed_dim, embed_dim}, 2);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    Values ws = split(g, qkv_w, {embed_dim, embed_dim, embed_dim}, 0);
    Values bs = split(g, qkv_b, {embed_dim, embed_dim, embed_dim}, 0);
    q = linear(g, query, ws[0], bs[0]);
    k = linear(g, key, ws[1], bs[1]);
    v = linear(g, value, ws[2], bs[2]);
  }
  // [B, L, D] → [B, L, H, dh] (0 copies the input's dim, so B and L stay dynamic).
  Value heads = g.constant_ints({0, 0, num_heads, head_dim});
  auto split_heads = [&](const Value& t, std::vector<int64_t> perm) {
    return g.op("Transpose", {g.op("Reshape", {t, heads})}, {{"perm", perm}});
  };
  q = g.op("Mul", {q, g.constant_scalar(1.0 / std::sqrt(static_cast<double>(head_dim)), type)});
  Value qh = split_heads(q, {0, 2, 1, 3});  // [B, H, T, dh]
  Value kt = split_heads(k, {0, 2, 3, 1});  // [B, H, dh, S]
  Value vh = split_heads(v, {0, 2, 1, 3});  // [B, H, S, dh]
  Value scores = g.op("MatMul", {qh, kt});  // [B, H, T, S]

  std::optional<Value> mask;
  if (mask_at && !a.is_none(*mask_at)) {
    if (!mask_type) {
      g.fail("a mask without mask_type (PyTorch requires it: 1 = key padding, 2 = default)");
    }
    if (*mask_type == 0) {
      g.fail(
          "mask_type 0 (src_mask): PyTorch's CPU kernel does not support it; pass the mask as a "
          "4-D (batch, heads, target, source) mask with mask_type 2");
    }
    if (*mask_type != 1 && *mask_type != 2) {
      g.fail("mask_type " + std::to_string(*mask_type) + " (PyTorch takes 0, 1 or 2)");
    }
    const int64_t mask_rank = a.require_rank(*mask_at);
    Value m = bool_mask(g, a.tensor(*mask_at), a.dtype(*mask_at));
    if (mask_rank == 2) {
      m = unsqueeze(g, m, {1, 2});  // key padding (B, S) → (B, 1, 1, S)
    } else if (mask_rank != 4) {
      g.fail("an attention mask of rank " + std::to_string(mask_rank) +
             " (PyTorch takes a 2-D (batch, source) or 4-D (batch, heads, target, source) mask)");
    }
    mask = m;
  }
  Value weights = masked_softmax_last(g, scores, mask, 4, type);
  Value ctx = g.op("MatMul", {weights, vh});  // [B, H, T, dh]
  ctx = g.op("Transpose", {ctx}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  ctx = g.op("Reshape", {ctx, g.constant_ints({0, 0, embed_dim})});
  Value out = linear(g, ctx, a.tensor(w_at + 2), a.tensor(w_at + 3));
  return {out, weights};
}

// LayerNorm over the last axis: LayerNormalization from 17, mean/variance composition below.
Value layer_norm(GraphContext& g, const Value& x, const Value& w, const Value& b, double eps,
                 at::ScalarType type) {
  if (g.opset() >= 17) {
    return g.op("LayerNormalization", {x, w, b}, {{"axis", int64_t{-1}}, {"epsilon", eps}});
  }
  Value centered = g.op("Sub", {x, reduce(g, "ReduceMean", x, {-1}, true)});
  Value var = reduce(g, "ReduceMean", g.op("Mul", {centered, centered}), {-1}, true);
  Value denom = g.op("Sqrt", {g.op("Add", {var, g.constant_scalar(eps, type)})});
  return g.op("Add", {g.op("Mul", {g.op("Div", {centered, denom}), w}), b});
}

// Exact (erf) GELU: x · (1 + erf(x / √2)) / 2.
Value gelu(GraphContext& g, const Value& x, at::ScalarType type) {
  Value erf = g.op("Erf", {g.op("Div", {x, g.constant_scalar(std::sqrt(2.0), type)})});
  Value one_plus = g.op("Add", {erf, g.constant_scalar(1.0, type)});
  return g.op("Mul", {g.op("Mul", {x, one_plus}), g.constant_scalar(0.5, type)});
}

void require_float(GraphContext& g, at::ScalarType type) {
  if (type != at::kFloat && type != at::kDouble) {
    g.fail(std::string("attention on ") + c10::toString(type) +
           " inputs (PyTorch's CPU kernels take float or double)");
  }
}

}  // namespace

void register_attention(Registry& r) {
  // aten::_native_multi_head_attention(query, key, value, int embed_dim, int num_head, qkv_weight,
  //   qkv_bias, proj_weight, proj_bias, mask?, bool need_weights, bool average_attn_weights,
  //   int? mask_type) -> (Tensor, Tensor)
  //   ⇒  MatMul/Add projections, Reshape/Transpose into heads, MatMul, Where(mask, -inf) +
  //      Softmax (last axis: every opset), MatMul, Reshape, output projection; weights
  //      ReduceMean over heads when averaged, an empty tensor when not needed (PyTorch: undefined)
  r.add("aten::_native_multi_head_attention", {}, [](GraphContext& g, const Args& a) -> Values {
    const at::ScalarType type = a.dtype(0);
    require_float(g, type);
    for (size_t i : {0, 1, 2}) {
      if (a.require_rank(i) != 3) {
        g.fail("query, key and value must be 3-D (batch, sequence, embed_dim) tensors");
      }
    }
    const bool self_attention = a.jit(0) == a.jit(1) && a.jit(1) == a.jit(2);
    Attention att =
        multi_head_attention(g, a, a.tensor(0), a.tensor(1), a.tensor(2), self_attention,
                             a.int_arg(3), a.int_arg(4), 5, 9, a.optional_int(12), type);
    if (!a.bool_arg(10)) {
      return {att.output, g.constant(at::empty({0}, at::TensorOptions().dtype(type)))};
    }
    if (a.bool_arg(11)) return {att.output, reduce(g, "ReduceMean", att.weights, {1}, false)};
    return {att.output, att.weights};
  });

  // aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias,
  //   proj_weight, proj_bias, bool use_gelu, bool norm_first, float eps, norm_weight_1,
  //   norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2,
  //   mask?, mask_type?) -> Tensor
  //   ⇒  self-attention as above + residual, LayerNorm (LayerNormalization at 17, composition
  //      below), FFN MatMul/Add with Relu or erf-GELU + residual, LayerNorm; norm_first as in
  //      nn.TransformerEncoderLayer
  r.add("aten::_transformer_encoder_layer_fwd", {}, [](GraphContext& g, const Args& a) -> Values {
    const at::ScalarType type = a.dtype(0);
    require_float(g, type);
    if (a.require_rank(0) != 3) g.fail("src must be a 3-D (batch, sequence, embed_dim) tensor");
    const bool norm_first = a.bool_arg(8);
    const double eps = a.float_arg(9);
    Value src = a.tensor(0);
    auto norm = [&](const Value& x, size_t w_at) {
      return layer_norm(g, x, a.tensor(w_at), a.tensor(w_at + 1), eps, type);
    };
    Value x = norm_first ? norm(src, 10) : src;
    Attention att = multi_head_attention(g, a, x, x, x, true, a.int_arg(1), a.int_arg(2), 3, 18,
                                         a.optional_int(19), type);
    x = g.op("Add", {att.output, src});
    if (!norm_first) x = norm(x, 10);
    Value residual = x;
    if (norm_first) x = norm(x, 12);
    Value hidden = linear(g, x, a.tensor(14), a.tensor(15));
    hidden = a.bool_arg(7) ? gelu(g, hidden, type) : g.op("Relu", {hidden});
    x = g.op("Add", {linear(g, hidden, a.tensor(16), a.tensor(17)), residual});
    if (!norm_first) x = norm(x, 12);
    return {x};
  });

  // aten::_masked_softmax(Tensor self, Tensor mask, int? dim, int? mask_type) -> Tensor
  //   ⇒  Softmax(Where(mask, -inf, x)) over dim (default last); before opset 13 a dim other than
  //      the last is transposed to the end and back; fully masked rows are NaN as in PyTorch
  r.add("aten::_masked_softmax", {}, [](GraphContext& g, const Args& a) -> Values {
    const at::ScalarType type = a.dtype(0);
    require_float(g, type);
    const int64_t rank = a.require_rank(0);
    Value x = a.tensor(0);
    if (a.require_rank(1) != rank) {
      g.fail("a mask of another rank than the input (PyTorch requires the input's shape)");
    }
    Value mask = bool_mask(g, a.tensor(1), a.dtype(1));
    if (rank == 0) {
      x = unsqueeze(g, x, {0});
      mask = unsqueeze(g, mask, {0});
    }
    const int64_t r1 = std::max<int64_t>(rank, 1);
    const int64_t dim = a.is_none(2) ? r1 - 1 : normalize_dim(a.int_arg(2), r1);
    std::vector<int64_t> perm(r1);
    for (int64_t i = 0; i < r1; ++i) perm[i] = i;
    std::swap(perm[dim], perm[r1 - 1]);
    Value y = masked_softmax_last(g, transpose(g, x, perm), transpose(g, mask, perm), r1, type);
    y = transpose(g, y, perm);
    if (rank == 0) y = squeeze(g, y, {0});
    return {y};
  });
}

}  // namespace torchonnx::symbolic::ops
