// Opsets below the converters' range (kLowestOpset up to kMinOpset - 1): the model is converted at
// kMinOpset and taken down by ONNX's own version converter (onnx::version_conversion), as
// onnx.version_converter.convert_version does in Python.
#pragma once

#include "onnx/serialize.h"

namespace torchonnx {

// Rewrites `model` (exported at its default-domain opset, kMinOpset) to `target_opset`, keeping
// deferred initializers deferred. A node ONNX's version converter has no lower form for is
// refused with ExportError(kUnsupportedOp) naming the node, the op it came from and a remedy.
void convert_opset_down(ExportedModel& model, int target_opset);

}  // namespace torchonnx
