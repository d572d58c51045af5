// Fuzz target: --input SHAPE[:DTYPE] (parse_input_spec, parse_dtype) and the example tensor made
// from a spec. Bad specs must give ExportError(kInvalidArgument); a spec that parses has dims
// >= 0 and at most kMaxInputElements elements.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "cli.h"
#include "fuzz_util.h"
#include "onnx/dtype.h"

using namespace torchonnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    parse_dtype(text);
  } catch (const ExportError& e) {
    fuzz::expect_code(e, ErrorCode::kInvalidArgument);
  }
  cli::InputSpec spec;
  try {
    spec = cli::parse_input_spec(text);
  } catch (const ExportError& e) {
    fuzz::expect_code(e, ErrorCode::kInvalidArgument);
    return 0;
  }
  int64_t numel = 1;
  for (int64_t d : spec.dims) {
    if (d < 0) fuzz::fail("parse_input_spec", ("negative dim in " + text).c_str());
    numel *= d;
  }
  if (numel > cli::kMaxInputElements)
    fuzz::fail("parse_input_spec", ("too large: " + text).c_str());
  // The example tensor torchonnx would make (small ones only: the fuzzer's memory is bounded).
  if (numel <= 4096) {
    at::Tensor t = cli::make_input(spec);
    if (t.sizes() != at::IntArrayRef(spec.dims) || t.scalar_type() != spec.dtype) {
      fuzz::fail("make_input", ("wrong tensor for " + text).c_str());
    }
  }
  return 0;
}
