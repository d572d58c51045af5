#include "onnx/model_proto.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "onnx/dtype.h"
#include "onnx/serialize.h"
#include "onnx/tensor_proto.h"
#include "torchonnx/errors.h"

namespace torchonnx {
namespace {

void set_type(const ir::TypeInfo& type, onnx::TypeProto* proto) {
  if (type.optional) {
    ir::TypeInfo element = type;
    element.optional = false;
    set_type(element, proto->mutable_optional_type()->mutable_elem_type());
    return;
  }
  if (type.sequence) {
    ir::TypeInfo element = type;
    element.sequence = false;
    set_type(element, proto->mutable_sequence_type()->mutable_elem_type());
    return;
  }
  auto* tensor_type = proto->mutable_tensor_type();
  if (type.dtype != at::ScalarType::Undefined) {
    tensor_type->set_elem_type(to_onnx_dtype(type.dtype));
  }
  if (type.shape) {
    auto* shape = tensor_type->mutable_shape();  // an empty shape is a 0-d tensor
    for (size_t i = 0; i < type.shape->size(); ++i) {
      auto* dim = shape->add_dim();
      if (i < type.dim_params.size() && !type.dim_params[i].empty()) {
        dim->set_dim_param(type.dim_params[i]);
      } else if ((*type.shape)[i] >= 0) {
        dim->set_dim_value((*type.shape)[i]);
      }
    }
  }
}

void fill_value_info(const ir::ValueInfo& value, onnx::ValueInfoProto* proto) {
  proto->set_name(value.name);
  set_type(value.type, proto->mutable_type());
}

void fill_graph(const ir::Graph& graph, onnx::GraphProto* proto,
                std::vector<ExportedModel::Deferred>* deferred = nullptr);

void fill_attribute(const ir::Attribute& attr, onnx::AttributeProto* proto) {
  proto->set_name(attr.name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          proto->set_type(onnx::AttributeProto_AttributeType_INT);
          proto->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          proto->set_type(onnx::AttributeProto_AttributeType_FLOAT);
          proto->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          proto->set_type(onnx::AttributeProto_AttributeType_STRING);
          proto->set_s(v);
        } else if constexpr (std::is_same_v<T, ir::Ints>) {
          proto->set_type(onnx::AttributeProto_AttributeType_INTS);
          for (int64_t x : v) proto->add_ints(x);
        } else if constexpr (std::is_same_v<T, ir::Floats>) {
          proto->set_type(onnx::AttributeProto_AttributeType_FLOATS);
          for (float x : v) proto->add_floats(x);
        } else if constexpr (std::is_same_v<T, ir::Strings>) {
          proto->set_type(onnx::AttributeProto_AttributeType_STRINGS);
          for (const auto& x : v) proto->add_strings(x);
        } else if constexpr (std::is_same_v<T, at::Tensor>) {
          proto->set_type(onnx::AttributeProto_AttributeType_TENSOR);
          to_tensor_proto(v, "", proto->mutable_t());
        } else if constexpr (std::is_same_v<T, ir::TypeInfo>) {
          proto->set_type(onnx::AttributeProto_AttributeType_TYPE_PROTO);
          set_type(v, proto->mutable_tp());
        } else {
          proto->set_type(onnx::AttributeProto_AttributeType_GRAPH);
          fill_graph(*v, proto->mutable_g());
        }
      },
      attr.value);
  // A reference to an attribute of the enclosing function (export_modules_as_functions): the
  // call gives the value; the type stays, for the checker.
  if (!attr.ref.empty()) {
    const auto type = proto->type();
    proto->Clear();
    proto->set_name(attr.name);
    proto->set_type(type);
    proto->set_ref_attr_name(attr.ref);
  }
}

void fill_node(const ir::Node& node, onnx::NodeProto* n) {
  n->set_op_type(node.op_type);
  if (!node.domain.empty()) n->set_domain(node.domain);
  n->set_name(node.name);
  for (const auto& in : node.inputs) n->add_input(in);
  for (const auto& out : node.outputs) n->add_output(out);
  // Attributes by name, as torch.onnx writes them (its g.op sorts its keyword attributes).
  std::vector<const ir::Attribute*> attributes;
  for (const auto& attr : node.attributes) attributes.push_back(&attr);
  std::stable_sort(
      attributes.begin(), attributes.end(),
      [](const ir::Attribute* a, const ir::Attribute* b) { return a->name < b->name; });
  for (const ir::Attribute* attr : attributes) fill_attribute(*attr, n->add_attribute());
  // "aten::add, model.py:12": what a reader of the ONNX file (Netron, `torchonnx print`, a
  // verification report) needs to find the TorchScript node a node came from.
  if (!node.origin.empty() || !node.source.empty()) {
    n->set_doc_string(node.source.empty()   ? node.origin
                      : node.origin.empty() ? node.source
                                            : node.origin + ", " + node.source);
  }
}

// With `deferred`, initializers of kDeferredTensorBytes or more get only their name, dims and type;
// their tensors are listed in `deferred` (Note [Streaming serializer]).
void fill_graph(const ir::Graph& graph, onnx::GraphProto* proto,
                std::vector<ExportedModel::Deferred>* deferred) {
  proto->set_name(graph.name);
  for (const auto& input : graph.inputs) fill_value_info(input, proto->add_input());
  for (const auto& output : graph.outputs) fill_value_info(output, proto->add_output());
  proto->mutable_initializer()->Reserve(static_cast<int>(graph.initializers.size()));
  for (const auto& init : graph.initializers) {
    const at::Tensor& t = init.tensor;
    if (deferred == nullptr ||
        t.numel() * static_cast<int64_t>(t.element_size()) < kDeferredTensorBytes) {
      to_tensor_proto(t, init.name, proto->add_initializer());
      continue;
    }
    to_tensor_header(t, init.name, proto->add_initializer());
    // A view (a folded transpose) is made contiguous only when written, one at a time.
    deferred->push_back({proto->initializer_size() - 1, t.device().is_cpu() ? t : t.to(at::kCPU)});
  }
  for (const auto& node : graph.nodes) fill_node(node, proto->add_node());
}

}  // namespace

namespace {

onnx::ModelProto build_model_proto(const ir::Model& model,
                                   std::vector<ExportedModel::Deferred>* deferred) {
  onnx::ModelProto proto;
  proto.set_ir_version(onnx::IR_VERSION);
  proto.set_producer_name(model.producer_name);
  proto.set_producer_version(model.producer_version);
  if (!model.doc_string.empty()) proto.set_doc_string(model.doc_string);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(model.opset);
  for (const auto& [domain, version] : model.extra_opsets) {
    auto* extra = proto.add_opset_import();
    extra->set_domain(domain);
    extra->set_version(version);
  }
  fill_graph(model.graph, proto.mutable_graph(), deferred);
  // Local functions (export_modules_as_functions), importing the model's opsets (function
  // domains included: the extraction adds them to extra_opsets).
  for (const auto& fn : model.functions) {
    auto* f = proto.add_functions();
    f->set_name(fn.name);
    f->set_domain(fn.domain);
    for (const auto& in : fn.inputs) f->add_input(in);
    for (const auto& out : fn.outputs) f->add_output(out);
    for (const auto& attr : fn.attributes) f->add_attribute(attr);
    for (const auto& node : fn.nodes) fill_node(node, f->add_node());
    *f->mutable_opset_import() = proto.opset_import();
  }
  return proto;
}

}  // namespace

int onnx_library_max_opset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  return it == ranges.end() ? 0 : it->second.second;
}

const char* onnx_library_version() {
  return onnx::LAST_RELEASE_VERSION;
}

namespace {
void strip_doc_strings(onnx::GraphProto& graph);
void strip_node_doc_strings(onnx::NodeProto& node) {
  node.clear_doc_string();
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.has_g()) strip_doc_strings(*attr.mutable_g());
    for (auto& g : *attr.mutable_graphs()) strip_doc_strings(g);
  }
}
void strip_doc_strings(onnx::GraphProto& graph) {
  for (auto& node : *graph.mutable_node()) strip_node_doc_strings(node);
}
}  // namespace

void strip_doc_strings(onnx::ModelProto& model) {
  strip_doc_strings(*model.mutable_graph());
  for (auto& f : *model.mutable_functions()) {
    for (auto& node : *f.mutable_node()) strip_node_doc_strings(node);
  }
}

onnx::ModelProto to_model_proto(const ir::Model& model) {
  return build_model_proto(model, nullptr);
}

ExportedModel to_exported_model(const ir::Model& model) {
  ExportedModel out;
  out.proto = build_model_proto(model, &out.deferred);
  return out;
}

namespace {

void strip_generated_dims(onnx::TypeProto* type) {
  if (type->has_optional_type()) {
    strip_generated_dims(type->mutable_optional_type()->mutable_elem_type());
    return;
  }
  if (type->has_sequence_type()) {
    strip_generated_dims(type->mutable_sequence_type()->mutable_elem_type());
    return;
  }
  if (!type->has_tensor_type() || !type->tensor_type().has_shape()) return;
  for (auto& dim : *type->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
    if (dim.has_dim_param() && dim.dim_param().rfind("unk__", 0) == 0) dim.clear_dim_param();
  }
}

// ONNX shape inference names the dims it cannot compute "unk__N" and may give two values the same
// name though their sizes differ at run time (the pieces of SplitToSequence): ONNX Runtime then
// plans one buffer for both and fails. Those dims are left unnamed instead.
void strip_generated_dims(onnx::GraphProto* graph) {
  for (auto* values : {graph->mutable_value_info(), graph->mutable_output()}) {
    for (auto& value : *values) strip_generated_dims(value.mutable_type());
  }
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) strip_generated_dims(attr.mutable_g());
    }
  }
}

}  // namespace

namespace {

// The outputs of `graph` and of its subgraphs whose tensor type has no element type, and the
// main graph's outputs of unknown rank, which the checker requires (values type propagation
// could not type).
void collect_untyped_outputs(onnx::GraphProto* graph, bool main,
                             std::vector<onnx::ValueInfoProto*>& out) {
  // An If whose branches return tensors of different ranks (`return x[1:]` or `return x` by a
  // condition on dynamic sizes) has an output of unknown rank. onnx's checker wants a shape on a
  // graph output: it gets an empty one, as torch.onnx writes it (ONNX Runtime checks no rank).
  std::unordered_set<std::string> of_any_rank;
  if (main) {
    for (const auto& node : graph->node()) {
      if (node.op_type() == "If") of_any_rank.insert(node.output().begin(), node.output().end());
    }
  }
  for (auto& output : *graph->mutable_output()) {
    auto* type = output.mutable_type();
    if (!type->has_tensor_type()) continue;
    if (main && type->tensor_type().elem_type() != 0 && !type->tensor_type().has_shape() &&
        of_any_rank.count(output.name())) {
      type->mutable_tensor_type()->mutable_shape();
    }
    if (type->tensor_type().elem_type() == 0 || (main && !type->tensor_type().has_shape())) {
      out.push_back(&output);
    }
  }
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) collect_untyped_outputs(attr.mutable_g(), false, out);
    }
  }
}

// Note [Untyped outputs]: a graph or subgraph output whose element type (or, for the graph's
// outputs, rank) type propagation did not find fails the export here, naming it, rather than in
// onnx's checker ("Field 'elem_type' of 'type' is required"). Typing it from ONNX's shape
// inference instead would hide the usual cause: the op that makes it fails on the example
// inputs, and so would the model's forward (the pipeline then reports the forward's error).
void check_typed_outputs(onnx::ModelProto& model) {
  std::vector<onnx::ValueInfoProto*> untyped;
  collect_untyped_outputs(model.mutable_graph(), true, untyped);
  if (untyped.empty()) return;
  throw ExportError(
      ErrorCode::kConversion,
      fmt::format("the element type or rank of '{}' (an output of the graph or of a loop or "
                  "branch body) is not known at export: type propagation could not run the op "
                  "that makes it on the example inputs. Remedy: check the example inputs, or "
                  "give the value a fixed dtype and rank in the model (e.g. .float(), .reshape)",
                  untyped.front()->name()));
}

// The Optional node without input (a None) of `graph` that makes `name`, looking through
// Identity; null when `name` is made otherwise, or outside `graph`.
onnx::NodeProto* none_producer(onnx::GraphProto& graph, std::string name) {
  for (int hops = 0; hops <= graph.node_size(); ++hops) {
    onnx::NodeProto* found = nullptr;
    for (auto& node : *graph.mutable_node()) {
      if (std::find(node.output().begin(), node.output().end(), name) != node.output().end()) {
        found = &node;
        break;
      }
    }
    if (found == nullptr) return nullptr;
    if (found->op_type() == "Optional") {
      return found->input_size() == 0 || found->input(0).empty() ? found : nullptr;
    }
    if (found->op_type() != "Identity" || found->input_size() != 1) return nullptr;
    name = found->input(0);
  }
  return nullptr;
}

bool has_optional_tensor_shape(const onnx::TypeProto& type) {
  return type.has_optional_type() && type.optional_type().elem_type().has_tensor_type() &&
         type.optional_type().elem_type().tensor_type().has_shape();
}

// Gives the None `none` makes the type `like` (an optional of a shaped tensor) unless it has a
// shape already; returns whether it changed.
bool shape_none(onnx::NodeProto* none, const onnx::TypeProto& like) {
  if (none == nullptr || !has_optional_tensor_shape(like)) return false;
  for (auto& attr : *none->mutable_attribute()) {
    if (attr.name() != "type") continue;
    if (!attr.tp().has_tensor_type() || attr.tp().tensor_type().has_shape() ||
        attr.tp().tensor_type().elem_type() !=
            like.optional_type().elem_type().tensor_type().elem_type()) {
      return false;
    }
    *attr.mutable_tp() = like.optional_type().elem_type();
    return true;
  }
  return false;
}

// Note [The shape of a None]: `y = None` in one branch of an If and a tensor in the other, or as
// the initial value of a loop that sets a tensor, make an ONNX optional. Its None (an Optional
// node without input) says only the element type, and shape inference then merges the two paths
// to an optional of unknown shape. A None has no shape to contradict: it gets the other path's,
// dim names included, so that both branches, the If or Loop and the graph output say
// optional(tensor(float, ["batch"])), as torch.onnx writes them. Returns whether a None changed.
bool shape_nones(onnx::GraphProto* graph) {
  bool changed = false;
  for (auto& node : *graph->mutable_node()) {
    onnx::GraphProto* branches[2] = {nullptr, nullptr};
    onnx::GraphProto* body = nullptr;
    for (auto& attr : *node.mutable_attribute()) {
      if (!attr.has_g()) continue;
      changed = shape_nones(attr.mutable_g()) || changed;
      if (attr.name() == "then_branch") branches[0] = attr.mutable_g();
      if (attr.name() == "else_branch") branches[1] = attr.mutable_g();
      if (attr.name() == "body") body = attr.mutable_g();
    }
    if (node.op_type() == "If" && branches[0] && branches[1]) {
      const int n = std::min(branches[0]->output_size(), branches[1]->output_size());
      for (int k = 0; k < n; ++k) {
        for (int b = 0; b < 2; ++b) {
          onnx::ValueInfoProto* none = branches[b]->mutable_output(k);
          const onnx::TypeProto& other = branches[1 - b]->output(k).type();
          if (!has_optional_tensor_shape(none->type()) &&
              shape_none(none_producer(*branches[b], none->name()), other)) {
            *none->mutable_type() = other;
            changed = true;
          }
        }
      }
    } else if (node.op_type() == "Loop" && body) {
      // Carried value k: the Loop's input 2 + k, the body's output 1 + k.
      for (int k = 0; k + 2 < node.input_size() && k + 1 < body->output_size(); ++k) {
        changed =
            shape_none(none_producer(*graph, node.input(2 + k)), body->output(1 + k).type()) ||
            changed;
      }
    }
  }
  return changed;
}

}  // namespace

void validate_model(onnx::ModelProto& model) {
  check_typed_outputs(model);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw ExportError(ErrorCode::kInvalidOnnx,
                      std::string("the exported model fails onnx's checker: ") + e.what() +
                          "\nThis is a torchonnx bug in the converter of the node named above; "
                          "please report it with the model.");
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
    if (shape_nones(model.mutable_graph())) {
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
    }
    strip_generated_dims(model.mutable_graph());
  } catch (const std::exception& e) {
    throw ExportError(ErrorCode::kInvalidOnnx,
                      std::string("the exported model fails ONNX shape inference: ") + e.what() +
                          "\nThis is a torchonnx bug in the converter of the node named above; "
                          "please report it with the model.");
  }
}

namespace {

std::string type_string(const onnx::TypeProto& type) {
  if (type.has_sequence_type())
    return "Sequence[" + type_string(type.sequence_type().elem_type()) + "]";
  if (type.has_optional_type())
    return "Optional[" + type_string(type.optional_type().elem_type()) + "]";
  if (!type.has_tensor_type()) return "Dynamic";
  const auto& t = type.tensor_type();
  std::string s = t.elem_type() ? dtype_display_name(from_onnx_dtype(t.elem_type())) : "Tensor";
  if (!t.has_shape()) return s;
  std::vector<std::string> dims;
  for (const auto& d : t.shape().dim()) {
    dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value())
                                     : (d.has_dim_param() ? d.dim_param() : "*"));
  }
  return s + "(" + fmt::format("{}", fmt::join(dims, ", ")) + ")";
}

std::string attribute_string(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto_AttributeType_INT:
      return std::to_string(a.i());
    case onnx::AttributeProto_AttributeType_FLOAT:
      return fmt::format("{}", a.f());
    case onnx::AttributeProto_AttributeType_STRING:
      return "\"" + a.s() + "\"";
    case onnx::AttributeProto_AttributeType_INTS:
      return fmt::format("[{}]", fmt::join(a.ints(), ", "));
    case onnx::AttributeProto_AttributeType_FLOATS:
      return fmt::format("[{}]", fmt::join(a.floats(), ", "));
    case onnx::AttributeProto_AttributeType_TENSOR: {
      at::Tensor t = from_tensor_proto(a.t());
      if (t.numel() == 1) {
        std::ostringstream os;
        os << "{" << t.item() << "}";
        return os.str();
      }
      return "<Tensor " + type_string([&] {
               onnx::TypeProto tp;
               tp.mutable_tensor_type()->set_elem_type(a.t().data_type());
               for (auto d : a.t().dims())
                 tp.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
               return tp;
             }()) +
             ">";
    }
    case onnx::AttributeProto_AttributeType_GRAPH:
      return "<Graph>";
    default:
      return "<?>";
  }
}

}  // namespace

namespace {

// Prints `g`'s nodes at `indent`; subgraphs (Loop bodies, If branches) as indented blocks, in the
// style of TorchScript's graph printer. `types` holds the types of the enclosing graphs' values.
void print_nodes(const onnx::GraphProto& g, const std::string& indent,
                 std::unordered_map<std::string, std::string> types, std::ostringstream& os) {
  for (const auto& v : g.input()) types[v.name()] = type_string(v.type());
  for (const auto& v : g.value_info()) types[v.name()] = type_string(v.type());
  for (const auto& v : g.output()) types[v.name()] = type_string(v.type());
  auto type_of = [&](const std::string& name) -> std::string {
    if (auto it = types.find(name); it != types.end()) return it->second;
    return "Dynamic";
  };
  for (const auto& node : g.node()) {
    std::vector<std::string> outs, ins, attrs;
    std::vector<const onnx::AttributeProto*> graphs;
    for (const auto& o : node.output()) outs.push_back("%" + o + " : " + type_of(o));
    for (const auto& i : node.input()) ins.push_back(i.empty() ? "None" : "%" + i);
    for (const auto& a : node.attribute()) {
      if (a.type() == onnx::AttributeProto_AttributeType_GRAPH) {
        graphs.push_back(&a);
      } else {
        attrs.push_back(a.name() + "=" + attribute_string(a));
      }
    }
    std::string domain = node.domain().empty() ? "onnx" : node.domain();
    os << indent << fmt::format("{}", fmt::join(outs, ", ")) << " = " << domain
       << "::" << node.op_type();
    if (!attrs.empty()) os << "[" << fmt::format("{}", fmt::join(attrs, ", ")) << "]";
    os << "(" << fmt::format("{}", fmt::join(ins, ", ")) << ")";
    if (!node.doc_string().empty()) os << "  # " << node.doc_string();
    os << "\n";
    for (const auto* a : graphs) {
      const onnx::GraphProto& sub = a->g();
      std::vector<std::string> params;
      for (const auto& v : sub.input()) {
        params.push_back("%" + v.name() + " : " + type_string(v.type()));
      }
      os << indent << "  " << a->name() << "(" << fmt::format("{}", fmt::join(params, ", "))
         << "):\n";
      print_nodes(sub, indent + "    ", types, os);
      std::vector<std::string> rets;
      for (const auto& o : sub.output()) rets.push_back("%" + o.name());
      os << indent << "    -> (" << fmt::format("{}", fmt::join(rets, ", ")) << ")\n";
    }
  }
}

}  // namespace

std::string to_pretty_string(const onnx::ModelProto& model) {
  const auto& g = model.graph();
  std::unordered_map<std::string, std::string> types;
  for (const auto& init : g.initializer()) {
    onnx::TypeProto tp;
    tp.mutable_tensor_type()->set_elem_type(init.data_type());
    for (auto d : init.dims())
      tp.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    types[init.name()] = type_string(tp);
  }
  for (const auto& v : g.input()) types[v.name()] = type_string(v.type());

  std::ostringstream os;
  std::vector<std::string> params;
  for (const auto& v : g.input()) params.push_back("%" + v.name() + " : " + types[v.name()]);
  for (const auto& init : g.initializer()) {
    if (std::any_of(g.input().begin(), g.input().end(),
                    [&](const auto& v) { return v.name() == init.name(); }))
      continue;
    params.push_back("%" + init.name() + " : " + types[init.name()]);
  }
  os << "graph(" << fmt::format("{}", fmt::join(params, ",\n      ")) << "):\n";
  print_nodes(g, "  ", types, os);
  std::vector<std::string> rets;
  for (const auto& o : g.output()) rets.push_back("%" + o.name());
  os << "  return (" << fmt::format("{}", fmt::join(rets, ", ")) << ")\n";
  return os.str();
}

}  // namespace torchonnx
