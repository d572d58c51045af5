// The parsers of the CLI's option values.
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cctype>
#include <optional>

#include "cli.h"
#include "torchonnx/io.h"

namespace torchonnx::cli {

namespace {

// A whole decimal integer (optional sign), or nullopt: no spaces, no trailing text, no overflow.
std::optional<int64_t> parse_int(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || std::isspace(static_cast<unsigned char>(text[0]))) {
    return std::nullopt;
  }
  return value;
}

std::string upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

InputSpec parse_input_spec(const std::string& spec) {
  InputSpec out;
  const auto colon = spec.find(':');
  const std::string dims_text = spec.substr(0, colon);
  if (colon != std::string::npos) {
    try {
      out.dtype = parse_dtype(spec.substr(colon + 1));
    } catch (const ExportError& e) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("--input '{}': {}", spec, e.what()));
    }
  }
  if (dims_text == "scalar") return out;
  int64_t extent = 1;
  size_t start = 0;
  while (true) {
    const size_t x = dims_text.find('x', start);
    const std::string part =
        dims_text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    const auto d = parse_int(part);
    if (!d || *d < 0 || part[0] == '+' || part[0] == '-') {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("--input '{}': '{}' is not a valid dim (a whole number >= 0); "
                                    "write dims as 1x3x224x224[:dtype], or 'scalar[:dtype]'",
                                    spec, part));
    }
    // Bounded without the zeros too: libtorch 2.x computes an empty tensor's strides from them.
    if (*d > 0 && extent > kMaxInputElements / *d) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("--input '{}' has more than 2^31 elements; pass a smaller "
                                    "example (dynamic axes export other sizes)",
                                    spec));
    }
    if (*d > 0) extent *= *d;
    out.dims.push_back(*d);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return out;
}

at::Tensor make_input(const InputSpec& spec) {
  auto opts = at::TensorOptions().dtype(spec.dtype);
  if (at::isFloatingType(spec.dtype)) return at::randn(spec.dims, opts);
  if (spec.dtype == at::kBool) return at::randint(0, 2, spec.dims, opts);
  return at::randint(0, 10, spec.dims, opts);
}

void add_dynamic_axes(const std::string& spec, DynamicAxes& axes) {
  auto fail = [&](const std::string& why) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("--dynamic-axes '{}': {}; write NAME:AXIS[=LABEL][,AXIS[=LABEL]"
                                  "...], e.g. input:0=batch,1=sequence",
                                  spec, why));
  };
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0) fail("no NAME: before the axes");
  const std::string rest = spec.substr(colon + 1);
  if (rest.empty()) fail("no axes after NAME:");
  std::map<int64_t, std::string> parsed;
  size_t start = 0;
  while (true) {
    const size_t comma = rest.find(',', start);
    const std::string item =
        rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto eq = item.find('=');
    const std::string axis_text = item.substr(0, eq);
    const auto axis = parse_int(axis_text);
    if (!axis || *axis < -64 || *axis > 64) fail("'" + axis_text + "' is not an axis");
    if (parsed.count(*axis)) fail(fmt::format("axis {} is given twice", *axis));
    parsed[*axis] = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  auto& out = axes[spec.substr(0, colon)];
  for (auto& [axis, label] : parsed) out[axis] = std::move(label);
}

OperatorExportType parse_export_type(const std::string& text) {
  const std::string name = upper(text);
  using T = OperatorExportType;
  if (name == "ONNX") return T::kOnnx;
  if (name == "ONNX_ATEN") return T::kOnnxAten;
  if (name == "ONNX_ATEN_FALLBACK") return T::kOnnxAtenFallback;
  if (name == "RAW") return T::kRaw;
  if (name == "ONNX_FALLTHROUGH") return T::kOnnxFallthrough;
  throw ExportError(ErrorCode::kInvalidArgument,
                    "--operator-export-type '" + text +
                        "': use ONNX, ONNX_ATEN, ONNX_ATEN_FALLBACK, RAW or ONNX_FALLTHROUGH");
}

TrainingMode parse_training_mode(const std::string& text) {
  const std::string name = upper(text);
  if (name == "EVAL") return TrainingMode::kEval;
  if (name == "PRESERVE") return TrainingMode::kPreserve;
  if (name == "TRAINING") return TrainingMode::kTraining;
  throw ExportError(ErrorCode::kInvalidArgument,
                    "--training '" + text + "': use EVAL, PRESERVE or TRAINING");
}

void add_custom_opset(const std::string& spec, std::map<std::string, int>& opsets) {
  const auto eq = spec.find('=');
  const auto version = eq == std::string::npos ? std::nullopt : parse_int(spec.substr(eq + 1));
  if (eq == std::string::npos || eq == 0 || !version || *version < 1 || *version > 1000000) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("--custom-opset '{}': write DOMAIN=VERSION with a version >= 1, "
                                  "e.g. --custom-opset custom_domain=2",
                                  spec));
  }
  opsets[spec.substr(0, eq)] = static_cast<int>(*version);
}

}  // namespace torchonnx::cli
