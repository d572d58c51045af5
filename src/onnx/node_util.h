// Small helpers of the ONNX-stage rewrites (onnx/optimize.cpp and the files it drives): reading and
// setting a node's attributes, constant tensors as integer lists, and static shapes (a dim of -1 is
// unknown, as in ir::TypeInfo).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/ir.h"

namespace torchonnx::optimizer {

using Shape = std::vector<int64_t>;

// Bytes of a tensor's elements.
int64_t bytes_of(const at::Tensor& t);

const ir::AttrValue* find_attr(const ir::Node& n, const std::string& name);
std::optional<int64_t> attr_int(const ir::Node& n, const std::string& name);
std::optional<std::vector<int64_t>> attr_ints(const ir::Node& n, const std::string& name);
// Replaces the attribute of the same name, or adds it.
void set_attr(ir::Node& n, ir::Attribute attr);
// Whether `n` has a graph attribute (Loop/If bodies).
bool has_subgraph(const ir::Node& n);

// The elements of `t`, as int64.
std::vector<int64_t> ints_of(const at::Tensor& t);
// Every dim of `t` is known.
bool is_static(const ir::TypeInfo& t);
// Numpy-style broadcast of two shapes (-1: unknown dim), or nullopt when they do not broadcast.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);
int64_t normalize_axis(int64_t axis, int64_t rank);
bool is_float(at::ScalarType t);
// The axes of a Squeeze/Unsqueeze: its second input from opset 13 (looked up in `constants`), an
// attribute before.
std::optional<std::vector<int64_t>> axes_of(
    const ir::Node& n, int opset, const std::unordered_map<std::string, at::Tensor>& constants);

}  // namespace torchonnx::optimizer
