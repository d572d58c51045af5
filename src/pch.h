// Precompiled header for every torchonnx translation unit that touches libtorch or libonnx.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>
