// What the tests need to know of the CPU they run on.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace torchonnx::testing {

// Whether this is an x86-64 CPU without VNNI (no avx512_vnni, no avx_vnni flag in /proc/cpuinfo).
// There the u8s8 integer kernels of libtorch's oneDNN quantized engine (and ONNX Runtime's fused
// QLinear* kernels) use VPMADDUBSW, whose 16-bit pair sums saturate: their results are not the
// quantized ops' (Note [Quantized comparisons without VNNI] in tools/verify/verify.mjs).
inline bool int8_kernels_may_saturate() {
#if defined(__x86_64__)
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  const std::string flags = text.str();
  if (flags.empty()) return false;
  return flags.find(" avx512_vnni") == std::string::npos &&
         flags.find(" avx_vnni") == std::string::npos;
#else
  return false;
#endif
}

}  // namespace torchonnx::testing
