// The files torchonnx's tools read and write, for programs like them: tensors in ONNX's test-data
// layout (one serialized onnx.TensorProto a file: input_0.pb, output_0.pb, as --save-test-data
// and write_test_data write them), atomic writes, and the dtype names of the CLI's --input.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <string>

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

// Reads a serialized onnx.TensorProto file (any of its data layouts: raw_data or the typed
// fields); ExportError(kIo) naming the file when it is missing or malformed.
at::Tensor read_tensor_file(const std::string& path);
// Writes `tensor` as a serialized onnx.TensorProto named `name` (raw little-endian bytes).
void write_tensor_file(const at::Tensor& tensor, const std::string& name, const std::string& path);

// Checks, before an export does any work, that `path` can be written: not empty, not a folder,
// in an existing folder that this process may write. ExportError(kIo) naming the problem.
void check_output_path(const std::string& path);
// Writes `bytes` to a temporary file beside `path` and renames it over `path` once complete, so
// that a failed write never leaves a partial file. ExportError(kIo) naming the problem.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Parses a dtype name: "float32", "float", "float64", "double", "float16", "half", "bfloat16",
// "int64", "long", "int32", "int", "int16", "int8", "uint8", "bool" (the CLI's --input
// SHAPE:DTYPE); ExportError(kInvalidArgument) listing the names for any other.
at::ScalarType parse_dtype(const std::string& name);

}  // namespace torchonnx

#pragma GCC visibility pop
