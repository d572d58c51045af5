// ir::Model -> onnx::ModelProto, validation, and the human-readable graph printer.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "onnx/ir.h"

namespace torchonnx {

onnx::ModelProto to_model_proto(const ir::Model& model);

// Clears the doc_string of every node (in subgraphs and local functions too).
void strip_doc_strings(onnx::ModelProto& model);

// The highest opset of the default ONNX domain that the onnx library this build links knows (its
// checker and shape inference reject models of later opsets), and its version ("1.12.0").
int onnx_library_max_opset();
const char* onnx_library_version();

// Runs onnx's checker and strict shape inference (which adds value_info); throws ExportError
// (kInvalidOnnx) naming the offending node.
void validate_model(onnx::ModelProto& model);

// The graph as torch.onnx's verbose export prints it:
//   %17 : Float(10, 64, 55, 55) = onnx::Conv[group=1, ...](%input, %w, %b)
std::string to_pretty_string(const onnx::ModelProto& model);

}  // namespace torchonnx
