#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>

#include "passes/passes.h"
#include "torchonnx/errors.h"
#include "torchonnx/logging.h"

namespace torchonnx::passes {

namespace {

bool is_tensor_list(const torch::jit::Value* v) {
  const auto list = v->type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

struct Flattener {
  bool keep_none = false;
  bool keep_tensor_lists = false;
  std::vector<torch::jit::Value*> out;
  bool dropped_str = false;
  bool flattened_dict = false;

  // `in_list`: v is an element of a returned list; a list of lists (a stacked RNN's [h, c] per
  // layer) is flattened to its tensors, as torch.onnx flattens it.
  void flatten(torch::jit::Value* v, bool in_list = false) {
    const auto kind = v->node()->kind();
    const auto type = v->type()->kind();
    if (kind == c10::prim::ListConstruct && keep_tensor_lists && !in_list && is_tensor_list(v)) {
      out.push_back(v);  // one ONNX sequence (symbolic/convert.cpp), as torch.onnx returns it
    } else if (kind == c10::prim::TupleConstruct || kind == c10::prim::ListConstruct) {
      const bool list = in_list || kind == c10::prim::ListConstruct;
      for (auto* in : v->node()->inputs()) flatten(in, list);
    } else if (kind == c10::prim::DictConstruct) {
      // Keys and values alternate; a dict's values iterate in insertion order.
      flattened_dict = true;
      const auto inputs = v->node()->inputs();
      for (size_t i = 1; i < inputs.size(); i += 2) flatten(inputs[i], in_list);
    } else if (type == c10::TypeKind::DictType) {
      throw ExportError(ErrorCode::kConversion,
                        "the model returns a dict built by " +
                            std::string(v->node()->kind().toQualString()) +
                            ", whose values cannot be listed when exporting (only dicts built in "
                            "forward, {\"a\": x, ...}, are flattened into outputs). Remedy: return "
                            "a tuple of the dict's values.");
    } else if (type == c10::TypeKind::StringType) {
      dropped_str = true;  // str outputs have no ONNX value: dropped, as torch.onnx does
    } else if (type == c10::TypeKind::NoneType || v->mustBeNone()) {
      // None outputs are dropped, as torch.onnx drops them, or kept from opset 15, where
      // torch.onnx returns a scripted model's None as an empty optional.
      if (keep_none) out.push_back(v);
    } else {
      out.push_back(v);
    }
  }
};

}  // namespace

void FlattenOutputs(torch::jit::Graph& graph, bool keep_none, bool keep_tensor_lists) {
  Flattener f;
  f.keep_none = keep_none;
  f.keep_tensor_lists = keep_tensor_lists;
  for (auto* out : graph.outputs()) f.flatten(out);
  while (!graph.outputs().empty()) graph.eraseOutput(graph.outputs().size() - 1);
  for (auto* v : f.out) graph.registerOutput(v);
  if (std::none_of(f.out.begin(), f.out.end(),
                   [](torch::jit::Value* v) { return !v->mustBeNone(); })) {
    throw ExportError(ErrorCode::kConversion,
                      "the model returns no tensor, so the ONNX graph would have no output. "
                      "Remedy: return the tensors to export from forward().");
  }
  if (f.flattened_dict) {
    warn(
        "the model returns a dict: it is replaced by the flattened sequence of its values (keys "
        "removed), as torch.onnx does.");
  }
  if (f.dropped_str) {
    warn("the model returns a str: str outputs have no ONNX value and are removed.");
  }
}

void DropNoneOutputs(torch::jit::Graph& graph) {
  for (size_t i = graph.outputs().size(); i-- > 0;) {
    if (graph.outputs()[i]->mustBeNone() && graph.outputs().size() > 1) graph.eraseOutput(i);
  }
}

}  // namespace torchonnx::passes
