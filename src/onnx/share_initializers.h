// Initializer deduplication, run on the converted model before it is written.
#pragma once

#include "onnx/ir.h"

namespace torchonnx {

// Shares initializers that hold the same tensor (tied weights: one storage, same view) and, when
// `by_value`, initializers with equal contents (torch.onnx's deduplication in eval mode): the
// duplicates' readers read the first one, and the duplicates are dropped. Returns how many were.
int share_duplicate_initializers(ir::Graph& graph, bool by_value);

}  // namespace torchonnx
