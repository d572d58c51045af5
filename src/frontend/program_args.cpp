// The libtorch 2.x build only (the 1.13 build refuses .pt2 files: exported_program.cpp).
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2

#include "frontend/program_args.h"

#include <ATen/core/operator_name.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <fmt/format.h>

#include <limits>
#include <map>

#include "torchonnx/errors.h"

namespace torchonnx::frontend::pt2 {

using json = nlohmann::json;

c10::ScalarType scalar_type(int64_t code) {
  switch (code) {
    case 1:
      return at::kByte;
    case 2:
      return at::kChar;
    case 3:
      return at::kShort;
    case 4:
      return at::kInt;
    case 5:
      return at::kLong;
    case 6:
      return at::kHalf;
    case 7:
      return at::kFloat;
    case 8:
      return at::kDouble;
    case 9:
      return at::kComplexHalf;
    case 10:
      return at::kComplexFloat;
    case 11:
      return at::kComplexDouble;
    case 12:
      return at::kBool;
    case 13:
      return at::kBFloat16;
    case 28:
      return at::kUInt16;
    // Schema 8.20 (PyTorch 2.14).
    case 29:
      return at::kFloat8_e4m3fn;
    case 30:
      return at::kFloat8_e5m2;
    case 31:
      return at::kFloat8_e4m3fnuz;
    case 32:
      return at::kFloat8_e5m2fnuz;
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 8
    case 33:
      return c10::ScalarType::Float8_e8m0fnu;
#endif
    case 34:
      return at::kUInt32;
    case 35:
      return at::kUInt64;
    default:
      throw ExportError(ErrorCode::kModelLoad, fmt::format("unknown scalar type code {}", code));
  }
}

int64_t layout(int64_t code) {
  static const std::map<int64_t, c10::Layout> kLayouts = {
      {1, c10::kSparse},    {2, c10::kSparseCsr}, {3, c10::kSparseCsc}, {4, c10::kSparseBsr},
      {5, c10::kSparseBsc}, {6, c10::kMkldnn},    {7, c10::kStrided}};
  auto it = kLayouts.find(code);
  if (it == kLayouts.end()) {
    throw ExportError(ErrorCode::kModelLoad, fmt::format("unknown layout code {}", code));
  }
  return static_cast<int64_t>(it->second);
}

int64_t memory_format(int64_t code) {
  switch (code) {
    case 1:
      return static_cast<int64_t>(c10::MemoryFormat::Contiguous);
    case 2:
      return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast);
    case 3:
      return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast3d);
    case 4:
      return static_cast<int64_t>(c10::MemoryFormat::Preserve);
    default:
      throw ExportError(ErrorCode::kModelLoad, fmt::format("unknown memory format code {}", code));
  }
}

// Python's json writes inf and nan as the bare words Infinity, -Infinity and NaN, which JSON has
// not: outside strings they become the strings "Infinity", "-Infinity" and "NaN".
std::string quote_nonfinite(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (text.compare(i, word.size(), word) == 0) {
        out += '"';
        out += word;
        out += '"';
        i += word.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(c);
  }
  return out;
}

// A JSON number, or one of the words quote_nonfinite quoted.
double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    throw ExportError(ErrorCode::kModelLoad, "'" + s + "' is no number");
  }
  return v.get<double>();
}

// "torch.ops.aten.conv2d.default" → aten::conv2d, overload "".
std::optional<c10::OperatorName> operator_name(const std::string& target) {
  static const std::string kPrefix = "torch.ops.";
  if (target.rfind(kPrefix, 0) != 0) return std::nullopt;
  const std::string rest = target.substr(kPrefix.size());
  const size_t dot1 = rest.find('.');
  const size_t dot2 = rest.rfind('.');
  if (dot1 == std::string::npos || dot2 == dot1) return std::nullopt;
  std::string overload = rest.substr(dot2 + 1);
  if (overload == "default") overload.clear();
  return c10::OperatorName(rest.substr(0, dot1) + "::" + rest.substr(dot1 + 1, dot2 - dot1 - 1),
                           overload);
}

}  // namespace torchonnx::frontend::pt2

#endif
