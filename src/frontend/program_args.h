// The values of a torch.export program's arguments that are codes or words (scalar types,
// layouts, memory formats, Python's non-finite numbers, operator targets), read as libtorch's:
// for frontend/program_graph.cpp (Note [Exported programs] in exported_program.cpp).
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Optional.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace c10 {
struct OperatorName;
}

namespace torchonnx::frontend::pt2 {

// The schema's scalar type code (torch/_export/serde/schema.py ScalarType) as libtorch's.
c10::ScalarType scalar_type(int64_t code);
// The schema's layout and memory format codes as libtorch's (their integer values).
int64_t layout(int64_t code);
int64_t memory_format(int64_t code);

// Python's json writes inf and nan as the bare words Infinity, -Infinity and NaN, which JSON has
// not: outside strings they become the strings "Infinity", "-Infinity" and "NaN".
std::string quote_nonfinite(std::string_view text);
// A JSON number, or one of the words quote_nonfinite quoted.
double number(const nlohmann::json& v);

// "torch.ops.aten.conv2d.default" → aten::conv2d, overload ""; nullopt for no operator target.
std::optional<c10::OperatorName> operator_name(const std::string& target);

}  // namespace torchonnx::frontend::pt2
