// Peephole and constant-folding passes over the converted ONNX graph (ir::Model), so that the
// exported graph is no larger than torch.onnx's. Note [Graph optimization] in optimize.cpp.
#pragma once

#include "onnx/ir.h"

namespace torchonnx {

struct OptimizeOptions {
  bool fold_constants = true;  // ExportOptions::do_constant_folding
  bool eval_mode = true;       // the model is exported in eval mode: batch norm folds into conv
};

// Rewrites `model.graph` (and the bodies of its Loop/If nodes) in place: batch norm folded into
// the convolution before it (eval mode), nodes computed from constants replaced by initializers
// (fold_constants), redundant Identity/Cast/Transpose/Reshape/Squeeze/Unsqueeze chains removed,
// MatMul+Add on 2-D inputs fused into Gemm, dead nodes and unused initializers dropped. Graph
// inputs, graph outputs and the outer values a subgraph reads keep their names; initializers that
// are also graph inputs (keep_initializers_as_inputs) are never treated as constants.
void optimize_model(ir::Model& model, const OptimizeOptions& options);

// Types the values of a converted graph and of its subgraphs that type propagation did not
// (those a converter made inside its lowering): the shape rules of onnx/infer_shapes.cpp, run
// once when conversion ends, into ir::Graph::rule_types (Note [Converter output types] in
// symbolic/convert.cpp). optimize_model types a graph that was not typed so first.
void type_values(ir::Graph& graph, int opset);

}  // namespace torchonnx
