// Quantized tensors read by float ops (Note [Quantized tensors through float ops] in
// quantized.cpp).
#pragma once

#include "symbolic/context.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

// Whether `node` is an aten op other than quantize/dequantize that reads a quantized tensor.
bool reads_quantized(const GraphContext& g, const torch::jit::Node* node);

// Converts such a node with `fn` on its dequantized inputs, and quantizes its tensor outputs again
// with the first quantized input's scale and zero point (torch.onnx's quantized_args): max_pool2d,
// relu, flatten, reshape, upsampling, ... of a quantized tensor.
Values convert_dequantized(GraphContext& g, const torch::jit::Node* node, const Converter& fn);

// Marks the outputs of a quantize_per_tensor or quantized:: node as quantized tensors.
void mark_quantized_outputs(GraphContext& g, const torch::jit::Node* node);

// Note [Quantized graph inputs and outputs] in quantized.cpp: whether `v` is a tensor of a
// quantized dtype (QUInt8, QInt8, ...).
bool is_quantized_tensor(const torch::jit::Value* v);

// Adds quantized graph input `input` to g's graph as the inputs <name>_value, <name>_scale and
// <name>_zero_point, and binds it to the first.
void add_quantized_input(GraphContext& g, const torch::jit::Value* input, const std::string& name);

// The graph outputs quantized output `output`, bound to `q`, becomes: q, its scale and its zero
// point, each with its type.
std::vector<ir::ValueInfo> quantized_output(GraphContext& g, const torch::jit::Value* output,
                                            const Value& q);

}  // namespace torchonnx::symbolic::ops
