// Fuzz target: the TensorProto reader of --inputs (read_tensor_bytes). Bad bytes must give
// ExportError(kInvalidArgument); a tensor that is read must survive a write/read round trip.
#include <ATen/ATen.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "onnx/tensor_proto.h"

using namespace torchonnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  at::Tensor tensor;
  try {
    tensor = read_tensor_bytes(bytes, "fuzz input");
  } catch (const ExportError& e) {
    fuzz::expect_code(e, ErrorCode::kInvalidArgument);
    return 0;
  }
  if (!tensor.is_contiguous()) fuzz::fail("round trip", "the tensor read is not contiguous");
  onnx::TensorProto proto;
  to_tensor_proto(tensor, "x", &proto);
  at::Tensor back;
  try {
    back = read_tensor_bytes(proto.SerializeAsString(), "round trip");
  } catch (const ExportError& e) {
    fuzz::fail("the tensor written cannot be read back", e.what());
  }
  const auto nbytes = tensor.numel() * static_cast<int64_t>(tensor.element_size());
  if (back.sizes() != tensor.sizes() || back.scalar_type() != tensor.scalar_type() ||
      (nbytes > 0 && std::memcmp(back.data_ptr(), tensor.data_ptr(), nbytes) != 0)) {
    fuzz::fail("round trip", "the tensor read back differs");
  }
  return 0;
}
