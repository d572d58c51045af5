// Element type mapping between libtorch and ONNX.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "torchonnx/io.h"  // parse_dtype

namespace torchonnx {

// ONNX TensorProto::DataType for a libtorch dtype; throws ExportError for types ONNX lacks.
int32_t to_onnx_dtype(at::ScalarType type);
// libtorch dtype for an ONNX TensorProto::DataType; throws ExportError for unsupported ones.
at::ScalarType from_onnx_dtype(int32_t type);
// "Float", "Long", ... as torch.onnx's verbose graph prints them.
std::string dtype_display_name(at::ScalarType type);

}  // namespace torchonnx
