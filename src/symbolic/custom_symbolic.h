// Custom symbolics (register_custom_op_symbolic, <torchonnx/symbolic.h>) as a Registry of their
// own, layered over the built-in one: resolve_converter (export_types.cpp) asks it first.
#pragma once

#include <memory>

#include "symbolic/registry.h"

namespace torchonnx::symbolic {

// The custom symbolics registered now, as a registry: a registration at opset N serves
// [N, next registration of the op - 1] (or from(N)). An immutable snapshot: registrations made
// later give a new one, so a caller may use it (and the converters it holds) without a lock.
std::shared_ptr<const Registry> custom_symbolics();

}  // namespace torchonnx::symbolic
