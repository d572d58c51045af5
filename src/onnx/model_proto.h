// ir::Model -> onnx::ModelProto, validation, and the human-readable graph printer.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "onnx/ir.h"

namespace torchonnx {

onnx::ModelProto to_model_proto(const ir::Model& model);

// Runs onnx's checker and strict shape inference (which adds value_info); throws ExportError
// (kInvalidOnnx) naming the offending node.
void validate_model(onnx::ModelProto& model);

// The graph as torch.onnx's verbose export prints it:
//   %17 : Float(10, 64, 55, 55) = onnx::Conv[group=1, ...](%input, %w, %b)
std::string to_pretty_string(const onnx::ModelProto& model);

}  // namespace torchonnx
