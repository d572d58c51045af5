// operator_export_type (torch.onnx.OperatorExportTypes): the converters made on the fly for a
// node that has none of its own, or that is kept as it is — an ATen node (ONNX_ATEN,
// ONNX_ATEN_FALLBACK), the op in its own domain (RAW, ONNX_FALLTHROUGH).
#include "symbolic/export_types.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "torchonnx/errors.h"

namespace torchonnx::symbolic {

using torch::jit::Node;

namespace {

// The domain torch.onnx gives ATen nodes in the ModelProto.
constexpr const char* kAtenDomain = "org.pytorch.aten";

std::pair<std::string, std::string> split_kind(const Node* node) {
  const std::string kind = node->kind().toQualString();
  auto sep = kind.find("::");
  if (sep == std::string::npos) return {"", kind};
  return {kind.substr(0, sep), kind.substr(sep + 2)};
}

// The name of argument i in the node's schema, or "arg<i>".
std::string argument_name(const Node* node, size_t i) {
  if (const auto* schema = node->maybeSchema()) {
    if (i < schema->arguments().size()) return schema->arguments()[i].name();
  }
  return fmt::format("arg{}", i);
}

// A constant argument as an ONNX tensor, or nullopt when it has no tensor form (str, device).
std::optional<at::Tensor> constant_tensor(const c10::IValue& c) {
  if (c.isTensor()) return c.toTensor();
  if (c.isInt() || c.isDouble() || c.isBool()) return at::scalar_to_tensor(c.toScalar());
  if (c.isIntList()) return at::tensor(c.toIntVector(), at::kLong);
  if (c.isDoubleList()) return at::tensor(c.toDoubleVector(), at::kDouble);
  if (c.isBoolList()) {
    std::vector<int64_t> v;
    for (bool b : c.toBoolList()) v.push_back(b);
    return at::tensor(v, at::kLong).to(at::kBool);
  }
  return std::nullopt;
}

// The inputs of a node kept as one node (ATen, fallthrough): its tensors (a Tensor[] as one input
// per element), constants as Constant tensors, None as an omitted input, str and device constants
// as string attributes named after the schema argument.
Values node_inputs(GraphContext& g, const Args& args, ir::Attributes& attributes) {
  const Node* node = args.node();
  Values inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const torch::jit::Value* v = args.jit(i);
    if (const Values* bound = g.lookup(v)) {
      inputs.insert(inputs.end(), bound->begin(), bound->end());
      continue;
    }
    if (auto c = constant_value(v)) {
      if (c->isNone()) {
        inputs.emplace_back("");
      } else if (auto t = constant_tensor(*c)) {
        inputs.push_back(g.constant(*t));
      } else if (c->isTensorList()) {
        for (const at::Tensor& t : c->toTensorVector()) inputs.push_back(g.constant(t));
      } else if (c->isString()) {
        attributes.emplace_back(argument_name(node, i), c->toStringRef());
      } else if (c->isDevice()) {
        attributes.emplace_back(argument_name(node, i), c->toDevice().str());
      } else {
        g.fail(fmt::format("argument {} ({}) is a constant {} that has no ONNX form", i,
                           argument_name(node, i), c->tagKind()));
      }
      continue;
    }
    if (v->node()->kind() == c10::prim::ListConstruct) {
      Values items = args.tensor_list(i);
      inputs.insert(inputs.end(), items.begin(), items.end());
      continue;
    }
    g.fail(fmt::format("argument {} (%{}) has no ONNX value; its producer was not converted", i,
                       v->debugName()));
  }
  return inputs;
}

// The TorchScript node's own attributes (prim::Constant's value, ...), as ONNX attributes.
void copy_node_attributes(const Node* node, ir::Attributes& attributes) {
  for (const auto& name : node->attributeNames()) {
    const std::string n = name.toUnqualString();
    switch (node->kindOf(name)) {
      case torch::jit::AttributeKind::i:
        attributes.emplace_back(n, node->i(name));
        break;
      case torch::jit::AttributeKind::f:
        attributes.emplace_back(n, node->f(name));
        break;
      case torch::jit::AttributeKind::s:
        attributes.emplace_back(n, node->s(name));
        break;
      case torch::jit::AttributeKind::t:
        attributes.emplace_back(n, node->t(name));
        break;
      case torch::jit::AttributeKind::is:
        attributes.emplace_back(n, ir::Ints(node->is(name)));
        break;
      case torch::jit::AttributeKind::fs: {
        ir::Floats fs;
        for (double f : node->fs(name)) fs.push_back(static_cast<float>(f));
        attributes.emplace_back(n, std::move(fs));
        break;
      }
      case torch::jit::AttributeKind::ss:
        attributes.emplace_back(n, ir::Strings(node->ss(name)));
        break;
      case torch::jit::AttributeKind::ival: {
        const c10::IValue& v = node->ival(name);
        if (v.isInt() || v.isBool()) {
          attributes.emplace_back(n, v.isInt() ? v.toInt() : int64_t{v.toBool()});
        } else if (v.isDouble()) {
          attributes.emplace_back(n, v.toDouble());
        } else if (v.isString()) {
          attributes.emplace_back(n, v.toStringRef());
        } else if (v.isIntList()) {
          attributes.emplace_back(n, ir::Ints(v.toIntVector()));
        } else if (v.isDevice()) {
          attributes.emplace_back(n, v.toDevice().str());
        } else if (auto t = constant_tensor(v)) {
          attributes.emplace_back(n, *t);
        } else {
          attributes.emplace_back(n, v.tagKind());  // the type, where the value has no ONNX form
        }
        break;
      }
      default:
        attributes.emplace_back(n, std::string("<") + toString(node->kindOf(name)) + ">");
    }
  }
}

void reject_blocks(GraphContext& g, const Node* node, const char* mode) {
  if (!node->blocks().empty()) {
    g.fail(fmt::format(
        "operator_export_type {} cannot keep a node with blocks (prim::If, prim::Loop) as is. "
        "Remedy: export with operator_export_type ONNX or ONNX_ATEN_FALLBACK, or trace the "
        "model so that its control flow is unrolled",
        mode));
  }
}

// The overload an ATen node names, as torch.onnx names it: torch.onnx erases number types before
// its symbolics run (_jit_pass_erase_number_types: int, float and bool values and constants become
// tensors), so the node's schema is the overload that matches with those inputs as tensors, or
// none (""). torch.clamp(x, -0.5, 0.5) is "Tensor" (clamp.Tensor), x * x.size(0) "Tensor",
// torch.where(c, x, 0.0) "self"; x + y is "" (add.Tensor's alpha, a tensor then, matches no
// overload), as are softmax(x, 1) and triu(x, 1).
std::string erased_overload_name(const Node* node) {
  torch::jit::Graph graph;
  Node* erased = graph.create(node->kind(), 0);
  for (const torch::jit::Value* v : node->inputs()) {
    c10::TypePtr type = v->type();
    if (type->isSubtypeOf(*c10::NumberType::get()) || type->isSubtypeOf(*c10::BoolType::get())) {
      type = c10::TensorType::get();
    }
    erased->addInput(graph.addInput()->setType(type));
  }
  const auto* schema = erased->maybeSchema();
  return schema != nullptr ? schema->overload_name() : "";
}

}  // namespace

// aten::foo → org.pytorch.aten::ATen[operator="foo", overload_name="..."].
Values aten_node(GraphContext& g, const Args& args) {
  const Node* node = args.node();
  reject_blocks(g, node, "ONNX_ATEN");
  ir::Attributes attributes;
  Values inputs = node_inputs(g, args, attributes);
  attributes.insert(attributes.begin(),
                    {ir::Attribute("operator", split_kind(node).second),
                     ir::Attribute("overload_name", erased_overload_name(node))});
  return g.op(std::string(kAtenDomain) + "::ATen", inputs, std::move(attributes),
              node->outputs().size());
}

// ns::op kept as the node "op" of domain "ns" (ONNX_FALLTHROUGH; RAW, where constants are kept
// as prim::Constant nodes too).
Values kept_node(GraphContext& g, const Args& args, const char* mode) {
  const Node* node = args.node();
  reject_blocks(g, node, mode);
  auto [ns, op] = split_kind(node);
  ir::Attributes attributes;
  Values inputs = node_inputs(g, args, attributes);
  copy_node_attributes(node, attributes);
  return g.op(ns + "::" + op, inputs, std::move(attributes), node->outputs().size());
}

// `primary`, and where it throws an ExportError, `fallback` (the nodes `primary` added dropped).
Converter with_fallback(Converter primary, Converter fallback) {
  return [primary = std::move(primary), fallback = std::move(fallback)](
             GraphContext& g, const Args& args) -> Values {
    const size_t mark = g.graph().nodes.size();
    ir::Graph* graph = &g.graph();
    try {
      return primary(g, args);
    } catch (const ExportError&) {
      if (&g.graph() == graph && graph->nodes.size() >= mark) graph->nodes.resize(mark);
      g.set_current_node(args.node());
      return fallback(g, args);
    }
  };
}

}  // namespace torchonnx::symbolic
