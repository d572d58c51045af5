// The types of the ONNX values a symbolic makes, as torch.onnx's per-node shape inference gives
// them (Note [Types of a symbolic's values] in node_types.cpp).
#pragma once

#include "onnx/ir.h"
#include "symbolic/context.h"

namespace torchonnx::symbolic {

// What the exporter knows of ONNX value `name` of the graph `g` is building: for an input of the
// node being converted, its type from type propagation; for a Constant's output, its tensor's;
// for an output of a node made while converting it, what ONNX shape inference gives that node from
// the types of its inputs. Unknown (Undefined dtype, no shape) otherwise.
ir::TypeInfo infer_value_type(GraphContext& g, const Value& name);

}  // namespace torchonnx::symbolic
