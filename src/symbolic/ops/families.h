// The converter families. Each family file registers its converters in one function; the list
// below is the explicit table that keeps every family linked in (no static-initializer tricks).
#pragma once

namespace torchonnx::symbolic {
class Registry;
}

namespace torchonnx::symbolic::ops {

void register_prim(Registry& r);         // prim::ListConstruct, NumToTensor, size, Int, ...
void register_elementwise(Registry& r);  // add, sub, mul, div, pow, sqrt, ... with type promotion
void register_activation(Registry& r);   // relu, hardtanh, hardswish, gelu, silu, softmax, ...
void register_shape(Registry& r);        // view, reshape, flatten, cat, transpose, expand, ...
void register_slicing(Registry& r);      // chunk, split, unbind, narrow, flip, tril/triu, unfold
void register_reduction(Registry& r);    // mean, sum, ...
void register_linear(Registry& r);       // linear, addmm, matmul, mm, bmm
void register_conv(Registry& r);         // _convolution, conv1d/2d/3d
void register_pool(Registry& r);         // max/avg/adaptive pooling
void register_norm(Registry& r);         // batch_norm, layer_norm, ...
void register_logic(Registry& r);        // comparisons, logical/bitwise ops, casts
void register_creation(Registry& r);     // arange, zeros, full, eye, rand, ...
void register_index(Registry& r);        // select, slice, index, gather, index_put, scatter, ...
void register_sort(Registry& r);         // sort, topk, unique
void register_linalg(Registry& r);       // norms, det, std/var
void register_rnn(Registry& r);          // lstm, gru, rnn_tanh/relu, cells
void register_attention(Registry& r);    // _native_multi_head_attention, _transformer_encoder_...
void register_resample(Registry& r);     // upsample_*, grid_sampler, affine_grid
void register_pad(Registry& r);          // pads, pixel_shuffle, im2col/col2im, distances
void register_loss(Registry& r);         // nll_loss, cross_entropy, mse, l1, bce, kl_div
void register_quantized(Registry& r);    // quantized::*, quantize_per_tensor, dequantize
void register_embedding(Registry& r);    // embedding, embedding_bag
void register_dropout(Registry& r);      // dropout family (training mode)
void register_inplace(Registry& r);      // copy, zero, select_scatter, slice_scatter
void register_control(Registry& r);      // prim::Loop, prim::If
void register_torchvision(Registry& r);  // torchvision::nms, roi_align, roi_pool
void register_math(Registry& r);         // sinh, cosh, asinh, trunc, frac, hypot, xlogy, ...
void register_cumulative(Registry& r);   // cumprod, cummax, cummin, logcumsumexp, diff
void register_spectral(Registry& r);     // stft, istft, view_as_real/complex, windows
void register_polynomial(Registry& r);   // chebyshev, hermite, laguerre, legendre polynomials
void register_reorder(Registry& r);      // roll, fftshift, flip, fliplr/flipud, rot90
void register_squeeze(Registry& r);      // squeeze, unsqueeze
void register_masked(Registry& r);       // masked_select/fill/scatter, nonzero, where

inline constexpr void (*kFamilies[])(Registry&) = {
    register_prim,     register_elementwise, register_activation, register_shape,
    register_slicing,  register_reduction,   register_linear,     register_conv,
    register_pool,     register_norm,        register_logic,      register_creation,
    register_index,    register_sort,        register_linalg,     register_inplace,
    register_rnn,      register_attention,   register_resample,   register_pad,
    register_loss,     register_quantized,   register_embedding,  register_dropout,
    register_control,  register_torchvision, register_math,       register_cumulative,
    register_spectral, register_polynomial,  register_reorder,    register_squeeze,
    register_masked,
};

}  // namespace torchonnx::symbolic::ops
