// What differs between the libtorch and onnx versions torchonnx builds against: libtorch 1.13 +
// onnx 1.12 (Debian 12), libtorch 2.6 + onnx 1.17 (Debian 13) and libtorch 2.14 + onnx 1.20
// (Debian forky). Code elsewhere asks these names
// instead of testing versions itself. (Build-level differences are in CMakeLists.txt: Debian 13's
// onnx headers need ONNX_ML and ONNX_NAMESPACE, which its CMake targets carry.)
#pragma once

#include <torch/version.h>

namespace torchonnx::compat {

// The libtorch this torchonnx was built against, as "1.13.0".
inline constexpr const char* kLibtorchVersion = TORCH_VERSION;
inline constexpr int kLibtorchMajor = TORCH_VERSION_MAJOR;

// aten::_unique2 asked for the counts but not the inverse: libtorch 1.13 computes the inverse
// anyway, libtorch 2.x returns it empty. The converter gives what the build's libtorch gives.
inline constexpr bool kUniqueComputesInverseForCounts = TORCH_VERSION_MAJOR < 2;

// aten::ldexp: libtorch 2.14 scales exactly where the power of two alone over- or underflows
// (ldexp(0, 500) = 0, ldexp(inf, -1000) = inf); libtorch 1.13 and 2.6 compute x * 2^e, NaN for
// both. (Seen on 2.14 and not on 2.6; which release between changed it is not known here.)
inline constexpr bool kLdexpScalesExactly = TORCH_VERSION_MAJOR > 2 ||
                                            (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 14);

// aten::quantile's ranks q·(n - 1): libtorch 2.14 computes them in double (0.1f·5 is above 0.5,
// so 'nearest' takes element 1), libtorch 1.13 and 2.6 in the input's dtype (0.5 in float:
// element 0). (Seen on 2.14 and not on 2.6, as kLdexpScalesExactly.)
inline constexpr bool kQuantileRanksInDouble = TORCH_VERSION_MAJOR > 2 ||
                                               (TORCH_VERSION_MAJOR == 2 &&
                                                TORCH_VERSION_MINOR >= 14);

// Where to export files that need a newer libtorch than this build's (a remedy, for messages).
inline constexpr const char* kNewerLibtorchRemedy =
    "export it with torchonnx built against a newer libtorch: the Debian forky build (libtorch "
    "2.14) or the Debian 13 build (libtorch 2.6); on another machine `bash scripts/root.sh forky` "
    "builds and runs it in a Debian forky root";

}  // namespace torchonnx::compat
