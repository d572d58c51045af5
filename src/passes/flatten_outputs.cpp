#include <torch/csrc/jit/ir/ir.h>

#include "passes/passes.h"
#include "torchonnx/errors.h"

namespace torchonnx::passes {

namespace {

void flatten(torch::jit::Value* v, std::vector<torch::jit::Value*>& out) {
  const auto kind = v->node()->kind();
  if (kind == c10::prim::TupleConstruct || kind == c10::prim::ListConstruct) {
    for (auto* in : v->node()->inputs()) flatten(in, out);
  } else if (kind == c10::prim::DictConstruct) {
    const auto inputs = v->node()->inputs();
    for (size_t i = 1; i < inputs.size(); i += 2) flatten(inputs[i], out);
  } else if (v->type()->kind() == c10::TypeKind::NoneType ||
             v->type()->kind() == c10::TypeKind::StringType) {
    // None and str outputs have no ONNX value: dropped, as torch.onnx does.
  } else {
    out.push_back(v);
  }
}

}  // namespace

void FlattenOutputs(torch::jit::Graph& graph) {
  std::vector<torch::jit::Value*> flat;
  for (auto* out : graph.outputs()) flatten(out, flat);
  while (!graph.outputs().empty()) graph.eraseOutput(graph.outputs().size() - 1);
  for (auto* v : flat) graph.registerOutput(v);
  if (flat.empty()) {
    throw ExportError(ErrorCode::kConversion,
                      "the model returns no tensor, so the ONNX graph would have no output. "
                      "Remedy: return the tensors to export from forward().");
  }
}

}  // namespace torchonnx::passes
