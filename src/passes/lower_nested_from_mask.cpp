// Note [Nested tensors from a padding mask]
// A scripted nn.TransformerEncoder given a src_key_padding_mask takes its "sparsity fast path" in
// inference (no grad: Note [Facts known at export]): it packs the padded batch into a nested
// tensor, which holds only the tokens the mask keeps, runs each layer's fused kernel on it without
// a mask, and pads the result back with zeros:
//
//   %n = aten::_nested_tensor_from_mask(%x, %keep, %false)
//   %y1 = aten::_transformer_encoder_layer_fwd(%n, ..., %none, %none)
//   %y2 = aten::_transformer_encoder_layer_fwd(%y1, ..., %none, %none)
//   %out = aten::to_padded_tensor(%y2, %zero, %size)
//
// ONNX has no nested tensors, but this one is the padded batch with the mask beside it: attention
// over the kept tokens only is attention with the dropped ones as a key padding mask (every other
// op of the layer works token by token), and padding back puts zeros where the mask drops:
//
//   %drop = aten::logical_not(%keep)
//   %y1 = aten::_transformer_encoder_layer_fwd(%x, ..., %drop, %one)     (mask_type 1: key padding)
//   %y2 = aten::_transformer_encoder_layer_fwd(%y1, ..., %drop, %one)
//   %out = aten::masked_fill(%y2, aten::unsqueeze(%drop, -1), %zero)
//
// The encoder checks that the mask is left-aligned (the kept tokens first, as padding at the end
// makes it) before it packs: that check is data-dependent and taken as true at export, the common
// case; a mask that drops leading tokens gives zeros at the dropped positions where eager PyTorch
// would give the layers' values there (the kept positions match either way).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>
#include <vector>

#include "passes/passes.h"
#include "torchonnx/errors.h"

namespace torchonnx::passes {

namespace {

using torch::jit::Node;
using torch::jit::Value;

const c10::Symbol kFromMask = c10::Symbol::fromQualString("aten::_nested_tensor_from_mask");
const c10::Symbol kLayer = c10::Symbol::fromQualString("aten::_transformer_encoder_layer_fwd");
const c10::Symbol kToPadded = c10::Symbol::fromQualString("aten::to_padded_tensor");
// _transformer_encoder_layer_fwd(src, ..., Tensor? mask=None, int? mask_type=None)
constexpr size_t kLayerMask = 18;
constexpr size_t kLayerMaskType = 19;

// The type of `mask.unsqueeze(-1)`: bool, its sizes and 1 when they are known.
c10::TypePtr unsqueezed_type(const Value* mask) {
  auto type = mask->type()->cast<c10::TensorType>();
  if (type) {
    if (auto sizes = type->sizes().concrete_sizes()) {
      sizes->push_back(1);
      return c10::TensorType::createContiguous(at::kBool, at::kCPU, *sizes);
    }
    if (auto rank = type->sizes().size()) {
      return c10::TensorType::create(at::kBool, at::kCPU, *rank + 1, false);
    }
  }
  return c10::TensorType::get()->withScalarType(at::kBool);
}

void collect_from_masks(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* node : block->nodes()) {
    for (torch::jit::Block* sub : node->blocks()) collect_from_masks(sub, out);
    if (node->kind() == kFromMask) out.push_back(node);
  }
}

[[noreturn]] void refuse(const Node* node, const std::string& why) {
  throw ExportError(ErrorCode::kConversion,
                    "cannot export " + std::string(node->kind().toQualString()) + ": " + why +
                        "\nRemedy: run the model without the nested-tensor fast path (e.g. "
                        "nn.TransformerEncoder(..., enable_nested_tensor=False)).");
}

void lower(Node* from_mask) {
  torch::jit::Graph& graph = *from_mask->owningGraph();
  Value* x = from_mask->input(0);
  Value* keep = from_mask->input(1);
  torch::jit::WithInsertPoint guard(from_mask);
  Node* drop_node = graph.create(c10::Symbol::fromQualString("aten::logical_not"), {keep});
  graph.insertNode(drop_node);
  drop_node->output()->setType(keep->type());
  Value* drop = drop_node->output();
  Value* key_padding = graph.insertConstant(int64_t{1});

  // The values that stand for the nested tensor: its packing, then each layer's output.
  std::vector<Value*> nested{from_mask->output()};
  for (size_t i = 0; i < nested.size(); ++i) {
    Value* v = nested[i];
    const auto uses = v->uses();
    for (const torch::jit::Use& use : uses) {
      Node* user = use.user;
      if (user->kind() == kLayer && use.offset == 0 && user->inputs().size() > kLayerMaskType) {
        if (user->input(kLayerMask)->type()->kind() != c10::TypeKind::NoneType) {
          refuse(user, "a layer given both a nested tensor and a mask");
        }
        user->replaceInput(kLayerMask, drop);
        user->replaceInput(kLayerMaskType, key_padding);
        nested.push_back(user->output());
      } else if (user->kind() == kToPadded && use.offset == 0) {
        torch::jit::WithInsertPoint at(user);
        Value* minus_one = graph.insertConstant(int64_t{-1});
        Node* dims = graph.create(c10::aten::unsqueeze, {drop, minus_one});
        graph.insertNode(dims);
        dims->output()->setType(unsqueezed_type(keep));
        Node* fill = graph.create(c10::aten::masked_fill, {v, dims->output(), user->input(1)});
        graph.insertNode(fill);
        fill->output()->setType(user->output()->type());
        user->output()->replaceAllUsesWith(fill->output());
        user->destroy();
      } else {
        refuse(user,
               "an op other than the encoder layers reads the nested tensor made from the "
               "padding mask");
      }
    }
  }
  from_mask->output()->replaceAllUsesWith(x);
  from_mask->destroy();
}

}  // namespace

void LowerNestedFromMask(torch::jit::Graph& graph) {
  std::vector<Node*> found;
  collect_from_masks(graph.block(), found);
  for (Node* node : found) lower(node);
}

}  // namespace torchonnx::passes
