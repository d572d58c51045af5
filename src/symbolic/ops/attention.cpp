// Attention: the fused inference kernels of nn.MultiheadAttention / nn.TransformerEncoderLayer
// (taken by PyTorch 1.13 and 2.x in eval mode without grad), _masked_softmax, and PyTorch 2.x's
// F.scaled_dot_product_attention.
//
// Semantics follow PyTorch 1.13's CPU kernels (aten/src/ATen/native/transformers/attention.cpp,
// transformer.cpp, SoftMax.cpp), checked by experiment:
//  - masks are boolean, True = masked out; a non-bool mask is converted to bool (nonzero = True);
//  - a fully masked softmax row gives NaN (softmax of all -inf), in PyTorch as in ONNX Runtime;
//  - _native_multi_head_attention takes a 2-D key-padding mask (B, S) (broadcast over heads and
//    queries) or a 4-D mask (B, H, T, S); mask_type must be given with a mask (1 or 2: same
//    meaning on CPU; 0, a (T, T) src_mask, is rejected by the CPU kernel);
//  - q is scaled by 1/sqrt(head_dim) after its bias; averaged weights are the mean over heads.
// scaled_dot_product_attention (PyTorch 2.6's math and CPU flash kernels, checked by experiment):
//  - a bool attn_mask is the opposite of the fused kernels' masks: True = takes part; a float mask
//    is added to the scores; is_causal keeps key j for query i when j <= i (top-left aligned);
//  - a query whose keys are all excluded gets zero output (not NaN as in _masked_softmax).
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
  if (g.has(OnnxFeature::kLayerNormalization)) {
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

// The causal mask of scaled_dot_product_attention for scores [..., L, S]: true where query i may
// attend key j, i.e. j <= i (torch.ones(L, S).tril(): aligned to the top left, also when L != S).
// Built from the scores' run-time shape, so L and S stay dynamic.
Value causal_mask(GraphContext& g, const Value& scores, int64_t rank) {
  Value rows = unsqueeze(g, arange(g, dim_size(g, scores, rank - 2)), {1});  // [L, 1]
  Value cols = unsqueeze(g, arange(g, dim_size(g, scores, rank - 1)), {0});  // [1, S]
  return g.op("Not", {g.op("Greater", {cols, rows})});
}

// `x` [..., Hk, S, E] with each head repeated `times` times in a row: [..., Hk*times, S, E]
// (repeat_interleave over dim -3, as enable_gqa repeats key and value heads).
Value repeat_heads(GraphContext& g, const Value& x, const std::vector<int64_t>& sizes,
                   int64_t times) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> expanded;  // sizes with `times` before the last two (the caller: rank >= 3)
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d + 2 == sizes.size()) expanded.push_back(times);
    expanded.push_back(sizes[d]);
  }
  Value e = g.op("Expand", {unsqueeze(g, x, {rank - 2}), g.constant_ints(expanded)});
  std::vector<int64_t> merged(sizes);
  merged[rank - 3] *= times;
  return g.op("Reshape", {e, g.constant_ints(merged)});
}

// aten::_native_multi_head_attention(query, key, value, int embed_dim, int num_head, qkv_weight,
//   qkv_bias, proj_weight, proj_bias, mask?, bool need_weights, bool average_attn_weights,
//   int? mask_type) -> (Tensor, Tensor)
//   ⇒  MatMul/Add projections, Reshape/Transpose into heads, MatMul, Where(mask, -inf) +
//      Softmax (last axis: every opset), MatMul, Reshape, output projection; weights
//      ReduceMean over heads when averaged, an empty tensor when not needed (PyTorch: undefined)
Values native_multi_head_attention(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  require_float(g, type);
  for (size_t i : {0, 1, 2}) {
    if (a.require_rank(i) != 3) {
      g.fail("query, key and value must be 3-D (batch, sequence, embed_dim) tensors");
    }
  }
  const bool self_attention = a.jit(0) == a.jit(1) && a.jit(1) == a.jit(2);
  Attention att = multi_head_attention(g, a, a.tensor(0), a.tensor(1), a.tensor(2), self_attention,
                                       a.int_arg(3), a.int_arg(4), 5, 9, a.optional_int(12), type);
  if (!a.bool_arg(10)) {
    return {att.output, g.constant(at::empty({0}, at::TensorOptions().dtype(type)))};
  }
  if (a.bool_arg(11)) return {att.output, reduce(g, "ReduceMean", att.weights, {1}, false)};
  return {att.output, att.weights};
}

// aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias,
//   proj_weight, proj_bias, bool use_gelu, bool norm_first, float eps, norm_weight_1,
//   norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2,
//   mask?, mask_type?) -> Tensor
//   ⇒  self-attention as above + residual, LayerNorm (LayerNormalization at 17, composition
//      below), FFN MatMul/Add with Relu or erf-GELU + residual, LayerNorm; norm_first as in
//      nn.TransformerEncoderLayer
Values transformer_encoder_layer_fwd(GraphContext& g, const Args& a) {
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
}

// aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value,
//   Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None,
//   bool enable_gqa=False) -> Tensor                                          (PyTorch >= 2.0)
//   ⇒  Softmax(q·kᵀ·scale + mask)·v: a bool mask excludes where it is False, a float mask is
//      added, is_causal excludes keys after the query (top-left aligned); scale defaults to
//      1/√E; enable_gqa repeats key/value heads to the query's. Every opset (last-axis Softmax).
Values scaled_dot_product_attention(GraphContext& g, const Args& a) {
  const at::ScalarType type = a.dtype(0);
  require_float(g, type);
  const int64_t rank = a.require_rank(0);
  if (rank < 2 || a.require_rank(1) != rank || a.require_rank(2) != rank) {
    g.fail(
        "query, key and value of the same rank (>= 2) are needed: (..., L, E), (..., S, E), "
        "(..., S, Ev)");
  }
  const double dropout_p = a.float_arg(4);
  if (dropout_p != 0.0) {
    g.fail("dropout_p = " + std::to_string(dropout_p) +
           ": scaled_dot_product_attention applies dropout whatever the module's mode, which "
           "ONNX inference cannot reproduce; pass dropout_p=0.0 when not training (as "
           "nn.MultiheadAttention does in eval mode)");
  }
  const bool is_causal = a.bool_arg(5);
  const size_t n = a.size();
  const std::optional<double> scale = n > 6 ? a.optional_float(6) : std::nullopt;
  const bool enable_gqa = n > 7 && a.bool_arg(7);

  Value q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
  if (enable_gqa) {
    auto qs = a.sizes(0), ks = a.sizes(1), vs = a.sizes(2);
    if (rank < 3 || !qs || !ks || !vs || (*qs)[rank - 3] < 0 || (*ks)[rank - 3] <= 0 ||
        (*vs)[rank - 3] <= 0) {
      g.fail("enable_gqa needs the head counts (dim -3) of query, key and value known");
    }
    const int64_t hq = (*qs)[rank - 3];
    if (hq != (*ks)[rank - 3] || hq != (*vs)[rank - 3]) {
      for (auto* s : {&*ks, &*vs}) {
        if (hq % (*s)[rank - 3] != 0) {
          g.fail("enable_gqa: the query's head count must be a multiple of key's and value's");
        }
        for (int64_t d : *s) {
          if (d < 0) g.fail("enable_gqa with differing head counts needs static key/value sizes");
        }
      }
      if ((*ks)[rank - 3] != hq) k = repeat_heads(g, k, *ks, hq / (*ks)[rank - 3]);
      if ((*vs)[rank - 3] != hq) v = repeat_heads(g, v, *vs, hq / (*vs)[rank - 3]);
    }
  }

  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[rank - 2], perm[rank - 1]);
  Value scores = g.op("MatMul", {q, transpose(g, k, perm)});  // [..., L, S]
  Value factor;
  if (scale) {
    factor = g.constant_scalar(*scale, type);
  } else if (auto qs = a.sizes(0); qs && qs->back() > 0) {
    factor = g.constant_scalar(1.0 / std::sqrt(static_cast<double>(qs->back())), type);
  } else {
    Value e = g.cast(dim_size(g, q, rank - 1), type);
    factor = g.op("Reciprocal", {g.op("Sqrt", {e})});
  }
  scores = g.op("Mul", {scores, factor});

  std::optional<Value> keep;  // bool, true where a key takes part
  if (is_causal) keep = causal_mask(g, scores, rank);
  if (!a.is_none(3)) {
    const at::ScalarType mask_type = a.dtype(3);
    if (mask_type == at::kBool) {
      keep = keep ? g.op("And", {*keep, a.tensor(3)}) : a.tensor(3);
    } else {
      scores = g.op("Add", {scores, cast_if(g, a.tensor(3), mask_type, type)});
    }
  }
  if (keep) {
    scores = g.op("Where", {*keep, scores, g.constant_scalar(-INFINITY, type)});
  }
  Value weights = g.op("Softmax", {scores}, {{"axis", rank - 1}});
  if (keep || !a.is_none(3)) {
    // PyTorch 2.x gives a query whose keys are all excluded (bool mask, causal or -inf float
    // mask) zero weights (its "safe softmax"), where Softmax of all -inf is NaN. Such a row's
    // maximum is -inf, below the lowest finite value; NaN rows (NaN inputs) stay NaN.
    const double lowest = type == at::kDouble ? std::numeric_limits<double>::lowest()
                                              : std::numeric_limits<float>::lowest();
    Value dead = g.op("Less", {reduce(g, "ReduceMax", scores, {rank - 1}, true),
                               g.constant_scalar(lowest, type)});
    weights = g.op("Where", {dead, g.constant_scalar(0.0, type), weights});
  }
  return {g.op("MatMul", {weights, v})};
}

// aten::_masked_softmax(Tensor self, Tensor mask, int? dim, int? mask_type) -> Tensor
//   ⇒  Softmax(Where(mask, -inf, x)) over dim (default last); before opset 13 a dim other than
//      the last is transposed to the end and back; fully masked rows are NaN as in PyTorch
Values masked_softmax(GraphContext& g, const Args& a) {
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
}

}  // namespace

void register_attention(Registry& r) {
  r.add("aten::_native_multi_head_attention", from(9), native_multi_head_attention);
  r.add("aten::_transformer_encoder_layer_fwd", from(9), transformer_encoder_layer_fwd);
  r.add("aten::scaled_dot_product_attention", from(9), scaled_dot_product_attention);
  r.add("aten::_masked_softmax", from(9), masked_softmax);
}

}  // namespace torchonnx::symbolic::ops
