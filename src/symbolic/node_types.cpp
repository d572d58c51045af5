// Note [Types of a symbolic's values]
// torch.onnx runs ONNX shape inference on each node a symbolic adds (g.op), so a symbolic can read
// the rank and sizes of the values it made: torchvision's lower NonMaxSuppression's selected
// indices with torch.onnx's own select and squeeze, and that squeeze removes the dim only when it
// knows its size is 1 (else it builds an If). torchonnx's converters read types through Args only,
// so the values they make carry none; this gives a value its type when asked, by the same means:
// the node that made it is run through onnx's shape inference alone, as a one-node model whose
// inputs are typed (recursively, by the same rule) and whose Constant inputs are initializers, so
// that inference reads their values (Reshape's shape, Unsqueeze's axes). The inputs of the
// TorchScript node being converted have their types from type propagation; a value read from
// elsewhere (an enclosing graph, a node of another domain) is unknown, as are values past a
// budget of nodes, so that a query never walks back through the whole graph.
#include "symbolic/node_types.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_map>

#include "onnx/dtype.h"
#include "onnx/model_proto.h"

namespace torchonnx::symbolic {

namespace {

constexpr int kNodeBudget = 64;  // nodes inferred for one query, at most

bool known(const ir::TypeInfo& t) {
  return t.dtype != at::ScalarType::Undefined || t.shape.has_value();
}

std::optional<ir::TypeInfo> from_proto(const onnx::TypeProto& type) {
  ir::TypeInfo info;
  const onnx::TypeProto* t = &type;
  if (t->has_optional_type()) {
    info.optional = true;
    t = &t->optional_type().elem_type();
  }
  if (t->has_sequence_type()) {
    info.sequence = true;
    t = &t->sequence_type().elem_type();
  }
  if (!t->has_tensor_type()) return std::nullopt;
  const auto& tensor = t->tensor_type();
  if (tensor.elem_type() != onnx::TensorProto_DataType_UNDEFINED) {
    try {
      info.dtype = from_onnx_dtype(tensor.elem_type());
    } catch (const std::exception&) {
      info.dtype = at::ScalarType::Undefined;  // a type libtorch lacks (a string tensor)
    }
  }
  if (tensor.has_shape()) {
    std::vector<int64_t> shape;
    for (const auto& dim : tensor.shape().dim()) {
      shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
    info.shape = std::move(shape);
  }
  return info;
}

class Inference {
 public:
  explicit Inference(GraphContext& g) : g_(g) {}

  ir::TypeInfo type(const Value& name) {
    if (name.empty()) return {};
    if (auto it = memo_.find(name); it != memo_.end()) return it->second;
    ir::TypeInfo t = compute(name);
    memo_[name] = t;
    return t;
  }

 private:
  ir::TypeInfo compute(const Value& name) {
    // An input of the TorchScript node: its type from type propagation.
    if (const torch::jit::Node* node = g_.current_node()) {
      for (const torch::jit::Value* in : node->inputs()) {
        const Values* bound = g_.lookup(in);
        if (bound != nullptr && bound->size() == 1 && bound->front() == name &&
            !g_.is_sequence(in) && !g_.is_optional(in)) {
          ir::TypeInfo t = value_type(in);
          if (known(t)) return t;
        }
      }
    }
    const ir::Node* producer = find_producer(name);
    if (producer == nullptr) return {};
    if (producer->op_type == "Constant" && producer->domain.empty()) {
      if (const at::Tensor* t = constant_of(*producer)) {
        return ir::TypeInfo(t->scalar_type(), t->sizes().vec());
      }
      return {};
    }
    if (!producer->domain.empty() && producer->domain != "ai.onnx") return {};
    if (--budget_ < 0) return {};
    return infer(*producer, name);
  }

  const ir::Node* find_producer(const Value& name) const {
    const auto& nodes = g_.graph().nodes;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      for (const auto& out : it->outputs) {
        if (out == name) return &*it;
      }
    }
    return nullptr;
  }

  static const at::Tensor* constant_of(const ir::Node& node) {
    for (const auto& a : node.attributes) {
      if (a.name == "value") return std::get_if<at::Tensor>(&a.value);
    }
    return nullptr;
  }

  // ONNX shape inference of `node` alone; the type it gives `name` (one of its outputs).
  ir::TypeInfo infer(const ir::Node& node, const Value& name) {
    ir::Model model;
    model.opset = g_.opset();
    ir::Node copy = node;
    copy.source.clear();
    copy.origin.clear();
    std::unordered_map<std::string, bool> added;
    for (const auto& in : node.inputs) {
      if (in.empty() || added.count(in)) continue;
      added[in] = true;
      const ir::Node* producer = find_producer(in);
      if (producer != nullptr && producer->op_type == "Constant" && producer->domain.empty()) {
        if (const at::Tensor* t = constant_of(*producer)) {
          model.graph.initializers.push_back({in, *t});
          continue;
        }
      }
      ir::TypeInfo t = type(in);
      if (known(t)) model.graph.inputs.push_back({in, t});
    }
    model.graph.nodes.push_back(std::move(copy));
    onnx::ModelProto proto = to_model_proto(model);
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                          /*data_prop=*/true);
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception&) {
      return {};  // what inference cannot type stays unknown, as in torch.onnx
    }
    ir::TypeInfo result;
    for (const auto& info : proto.graph().value_info()) {
      auto t = from_proto(info.type());
      if (!t) continue;
      if (info.name() == name) result = *t;
      memo_.emplace(info.name(), *t);  // the node's other outputs
    }
    return result;
  }

  GraphContext& g_;
  std::unordered_map<std::string, ir::TypeInfo> memo_;
  int budget_ = kNodeBudget;
};

}  // namespace

ir::TypeInfo infer_value_type(GraphContext& g, const Value& name) {
  return Inference(g).type(name);
}

}  // namespace torchonnx::symbolic
