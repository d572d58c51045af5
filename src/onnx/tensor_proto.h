// at::Tensor <-> onnx::TensorProto, and the ONNX test-data files (input_0.pb, output_0.pb).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "torchonnx/io.h"  // read_tensor_file, write_tensor_file

namespace onnx {
class TensorProto;
}

namespace torchonnx {

// Fills `proto` with the tensor's name, element type and dims, without its bytes.
void to_tensor_header(const at::Tensor& tensor, const std::string& name, onnx::TensorProto* proto);
// Fills `proto` with the tensor's dims, element type and raw little-endian bytes.
void to_tensor_proto(const at::Tensor& tensor, const std::string& name, onnx::TensorProto* proto);
// Reads any of TensorProto's data layouts (raw_data or the typed repeated fields).
at::Tensor from_tensor_proto(const onnx::TensorProto& proto);

// Reads a serialized TensorProto from bytes in memory; `name` (a quoted file name, say) appears
// in the error.
at::Tensor read_tensor_bytes(const std::string& bytes, const std::string& name);

}  // namespace torchonnx
