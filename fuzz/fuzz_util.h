// Shared by the fuzz targets: a crash report for an exception that must not escape.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "torchonnx/errors.h"

namespace torchonnx::fuzz {

// Aborts (a libFuzzer crash) naming what escaped: only ExportError of the expected code is an
// acceptable failure of a parser of user input.
[[noreturn]] inline void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "fuzz target bug: %s: %s\n", what, detail);
  std::abort();
}

inline void expect_code(const ExportError& e, ErrorCode code) {
  if (e.code() != code) fail("ExportError with an unexpected code", e.what());
}

}  // namespace torchonnx::fuzz
