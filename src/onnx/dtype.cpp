#include "onnx/dtype.h"

#include <onnx/onnx_pb.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <utility>

#include "torchonnx/errors.h"

namespace torchonnx {
namespace {

struct DtypeRow {
  at::ScalarType torch;
  onnx::TensorProto_DataType onnx;
  const char* display;
};

// Float8 (libtorch 2.1+; ONNX 1.14's FLOAT8E4M3FN = 17 and FLOAT8E5M2 = 19, from opset 19, by
// number: Debian 12's libonnx 1.12 names neither).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define TORCHONNX_HAS_FLOAT8 1
constexpr size_t kDtypeCount = 14;
#else
constexpr size_t kDtypeCount = 12;
#endif

constexpr std::array<DtypeRow, kDtypeCount> kDtypes{{
    {at::kFloat, onnx::TensorProto_DataType_FLOAT, "Float"},
    {at::kDouble, onnx::TensorProto_DataType_DOUBLE, "Double"},
    {at::kHalf, onnx::TensorProto_DataType_FLOAT16, "Half"},
    {at::kBFloat16, onnx::TensorProto_DataType_BFLOAT16, "BFloat16"},
    {at::kLong, onnx::TensorProto_DataType_INT64, "Long"},
    {at::kInt, onnx::TensorProto_DataType_INT32, "Int"},
    {at::kShort, onnx::TensorProto_DataType_INT16, "Short"},
    {at::kChar, onnx::TensorProto_DataType_INT8, "Char"},
    {at::kByte, onnx::TensorProto_DataType_UINT8, "Byte"},
    {at::kBool, onnx::TensorProto_DataType_BOOL, "Bool"},
    {at::kComplexFloat, onnx::TensorProto_DataType_COMPLEX64, "ComplexFloat"},
    {at::kComplexDouble, onnx::TensorProto_DataType_COMPLEX128, "ComplexDouble"},
#ifdef TORCHONNX_HAS_FLOAT8
    {at::ScalarType::Float8_e4m3fn, static_cast<onnx::TensorProto_DataType>(17), "Float8_e4m3fn"},
    {at::ScalarType::Float8_e5m2, static_cast<onnx::TensorProto_DataType>(19), "Float8_e5m2"},
#endif
}};

}  // namespace

int32_t to_onnx_dtype(at::ScalarType type) {
  for (const auto& row : kDtypes) {
    if (row.torch == type) return row.onnx;
  }
  throw ExportError(ErrorCode::kConversion,
                    std::string("ONNX has no element type for torch dtype ") + c10::toString(type));
}

at::ScalarType from_onnx_dtype(int32_t type) {
  for (const auto& row : kDtypes) {
    if (row.onnx == type) return row.torch;
  }
  throw ExportError(ErrorCode::kInvalidArgument,
                    "unsupported ONNX element type " + std::to_string(type) +
                        " (supported: float, double, float16, bfloat16, int8/16/32/64, uint8, "
                        "bool, complex64/128)");
}

std::string dtype_display_name(at::ScalarType type) {
  for (const auto& row : kDtypes) {
    if (row.torch == type) return row.display;
  }
  return c10::toString(type);
}

at::ScalarType parse_dtype(const std::string& name) {
  static const std::pair<const char*, at::ScalarType> kNames[] = {
      {"float32", at::kFloat},     {"float", at::kFloat},  {"float64", at::kDouble},
      {"double", at::kDouble},     {"float16", at::kHalf}, {"half", at::kHalf},
      {"bfloat16", at::kBFloat16}, {"int64", at::kLong},   {"long", at::kLong},
      {"int32", at::kInt},         {"int", at::kInt},      {"int16", at::kShort},
      {"int8", at::kChar},         {"uint8", at::kByte},   {"bool", at::kBool},
  };
  for (const auto& [n, t] : kNames) {
    if (name == n) return t;
  }
  throw ExportError(ErrorCode::kInvalidArgument,
                    "unknown dtype '" + name +
                        "'; use one of float32, float64, float16, bfloat16, int64, int32, int16, "
                        "int8, uint8, bool");
}

}  // namespace torchonnx
