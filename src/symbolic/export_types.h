// The fallbacks of ExportOptions::operator_export_type (torch.onnx.OperatorExportTypes): a node
// as an ATen node, or kept as it is in its own domain.
#pragma once

#include "symbolic/registry.h"

namespace torchonnx::symbolic {

// aten::foo as org.pytorch.aten::ATen[operator="foo", overload_name="..."] (ONNX_ATEN,
// ONNX_ATEN_FALLBACK), its overload named as torch.onnx names it.
Values aten_node(GraphContext& g, const Args& args);

// ns::op kept as the node "op" of domain "ns" (ONNX_FALLTHROUGH; RAW, where constants are kept
// as prim::Constant nodes too); `mode` names the export type in its errors.
Values kept_node(GraphContext& g, const Args& args, const char* mode);

// `primary`, and where it throws an ExportError, `fallback` (the nodes `primary` added dropped).
Converter with_fallback(Converter primary, Converter fallback);

}  // namespace torchonnx::symbolic
