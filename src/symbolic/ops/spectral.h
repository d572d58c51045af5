// Complex values carried as [..., 2] pairs (Note [Complex values] in ops/spectral.cpp), for the
// converters of other families that read one.
#pragma once

#include "symbolic/context.h"

namespace torchonnx::symbolic::ops {

// aten::abs of a complex input: the modulus of each element.
Values complex_abs(GraphContext& g, const Args& a);

}  // namespace torchonnx::symbolic::ops
