#include "onnx/tensor_proto.h"

#include <ATen/ATen.h>
#include <onnx/onnx_pb.h>

#include <fmt/format.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/dtype.h"
#include "onnx/file_util.h"
#include "torchonnx/errors.h"
#include "torchonnx/export.h"

namespace torchonnx {

void to_tensor_header(const at::Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->set_name(name);
  proto->set_data_type(to_onnx_dtype(tensor.scalar_type()));
  for (int64_t d : tensor.sizes()) proto->add_dims(d);
}

void to_tensor_proto(const at::Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  at::Tensor t = tensor.contiguous();
  if (t.device().type() != at::kCPU) t = t.to(at::kCPU);
  to_tensor_header(t, name, proto);
  // bool is one byte in both libtorch and ONNX raw_data; all other types share the layout.
  proto->set_raw_data(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
}

namespace {

// Checked against the dims before anything is allocated: a file cannot make torchonnx allocate
// more than its own size (times the element size) by claiming absurd dims.
template <typename T, typename Field>
at::Tensor from_field(const Field& field, at::IntArrayRef dims, int64_t numel, at::ScalarType type,
                      const std::string& name) {
  if (static_cast<int64_t>(field.size()) != numel) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("TensorProto '{}' holds {} values but its dims [{}] need {}",
                                  name, field.size(), fmt::join(dims, ", "), numel));
  }
  at::Tensor t = at::empty(dims, at::TensorOptions().dtype(type));
  auto* out = static_cast<T*>(t.data_ptr());
  int64_t i = 0;
  for (const auto& v : field) out[i++] = static_cast<T>(v);
  return t;
}

}  // namespace

at::Tensor from_tensor_proto(const onnx::TensorProto& proto) {
  if (proto.has_data_location() &&
      proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    throw ExportError(ErrorCode::kInvalidArgument, "TensorProto '" + proto.name() +
                                                       "' keeps its data externally; test-data "
                                                       "files must hold their values inline");
  }
  std::vector<int64_t> dims;
  constexpr int64_t kMaxElements = int64_t{1} << 34;
  int64_t numel = 1;
  // The product of the dims but zeros: libtorch 2.x computes strides from it even for an empty
  // tensor (and throws "Stride calculation overflowed"), so it is bounded too.
  int64_t extent = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0 || (d > 0 && extent > kMaxElements / d)) {
      throw ExportError(
          ErrorCode::kInvalidArgument,
          "TensorProto '" + proto.name() + "' has an invalid or absurd dim " + std::to_string(d));
    }
    numel *= d;
    if (d > 0) extent *= d;
    dims.push_back(d);
  }
  at::ScalarType type = from_onnx_dtype(proto.data_type());
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    const auto element_size = static_cast<int64_t>(c10::elementSize(type));
    if (static_cast<int64_t>(raw.size()) != numel * element_size) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("TensorProto '{}' has {} bytes of raw_data but its dims [{}] "
                                    "and type {} need {}",
                                    proto.name(), raw.size(), fmt::join(dims, ", "),
                                    c10::toString(type), numel * element_size));
    }
    at::Tensor t = at::empty(dims, at::TensorOptions().dtype(type));
    if (!raw.empty()) std::memcpy(t.data_ptr(), raw.data(), raw.size());
    return t;
  }
  switch (type) {
    case at::kFloat:
      return from_field<float>(proto.float_data(), dims, numel, type, proto.name());
    case at::kDouble:
      return from_field<double>(proto.double_data(), dims, numel, type, proto.name());
    case at::kLong:
      return from_field<int64_t>(proto.int64_data(), dims, numel, type, proto.name());
    case at::kInt:
      return from_field<int32_t>(proto.int32_data(), dims, numel, type, proto.name());
    case at::kShort:
      return from_field<int16_t>(proto.int32_data(), dims, numel, type, proto.name());
    case at::kChar:
      return from_field<int8_t>(proto.int32_data(), dims, numel, type, proto.name());
    case at::kByte:
      return from_field<uint8_t>(proto.int32_data(), dims, numel, type, proto.name());
    case at::kBool:
      return from_field<bool>(proto.int32_data(), dims, numel, type, proto.name());
    default:
      throw ExportError(ErrorCode::kInvalidArgument, "TensorProto '" + proto.name() + "' of type " +
                                                         c10::toString(type) +
                                                         " must use raw_data");
  }
}

at::Tensor read_tensor_bytes(const std::string& bytes, const std::string& name) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(kProtobufLimitBytes) || !proto.ParseFromString(bytes)) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      name +
                          " is not a serialized onnx.TensorProto (the ONNX test-data format, as "
                          "written by --save-test-data or onnx.numpy_helper), or is truncated. "
                          "Remedy: write it with onnx.numpy_helper.from_array(a)."
                          "SerializeToString()");
  }
  try {
    return from_tensor_proto(proto);
  } catch (const ExportError& e) {
    throw ExportError(e.code(), name + ": " + e.what());
  }
}

at::Tensor read_tensor_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(kProtobufLimitBytes)) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("'{}' has {} bytes: a TensorProto cannot pass protobuf's 2 GB "
                                  "limit. Remedy: pass a smaller example input (dynamic axes "
                                  "export other sizes)",
                                  path, size));
  }
  return read_tensor_bytes(read_file(path), "'" + path + "'");
}

void write_tensor_file(const at::Tensor& tensor, const std::string& name, const std::string& path) {
  onnx::TensorProto proto;
  to_tensor_proto(tensor, name, &proto);
  write_file_atomically(path, proto.SerializeAsString());
}

void write_test_data(const std::string& dir, const std::vector<at::Tensor>& inputs,
                     const std::vector<at::Tensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ExportError(ErrorCode::kIo, "cannot create folder '" + dir + "': " + ec.message());
  for (size_t i = 0; i < inputs.size(); ++i) {
    write_tensor_file(inputs[i], fmt::format("input_{}", i), fmt::format("{}/input_{}.pb", dir, i));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    write_tensor_file(outputs[i], fmt::format("output_{}", i),
                      fmt::format("{}/output_{}.pb", dir, i));
  }
}

}  // namespace torchonnx
