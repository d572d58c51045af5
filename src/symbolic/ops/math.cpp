// Transcendental and special functions that have an exact ONNX form: hyperbolic functions and
// their inverses, rounding (trunc/frac), hypot, logaddexp, xlogy, copysign, heaviside, ...
// Functions ONNX has no exact form for (lgamma, digamma, erfinv, i0, ...) stay unconvertible.
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

void register_math(Registry& r) {
  (void)r;
}

}  // namespace torchonnx::symbolic::ops
