// Fuzz target: --dynamic-axes NAME:AXIS[=LABEL][,...] (add_dynamic_axes), one spec per line of the
// input applied in turn as repeated options are. Bad specs must give ExportError(kInvalidArgument)
// and leave the axes parsed so far unchanged.
#include <cstdint>
#include <string>

#include "cli.h"
#include "fuzz_util.h"

using namespace torchonnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  DynamicAxes axes;
  size_t start = 0;
  for (int line = 0; line < 16 && start <= text.size(); ++line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string spec = text.substr(start, end - start);
    start = end + 1;
    const DynamicAxes before = axes;
    try {
      cli::add_dynamic_axes(spec, axes);
    } catch (const ExportError& e) {
      fuzz::expect_code(e, ErrorCode::kInvalidArgument);
      if (axes != before) fuzz::fail("add_dynamic_axes", "a refused spec changed the axes");
      continue;
    }
    for (const auto& [name, named_axes] : axes) {
      if (name.empty() || named_axes.empty()) fuzz::fail("add_dynamic_axes", spec.c_str());
      for (const auto& [axis, label] : named_axes) {
        if (axis < -64 || axis > 64)
          fuzz::fail("add_dynamic_axes: axis out of range", spec.c_str());
      }
    }
  }
  return 0;
}
