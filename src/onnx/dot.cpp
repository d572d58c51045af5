// ModelProto → Graphviz DOT (see dot.h).
#include "onnx/dot.h"

#include <fmt/format.h>

#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/dtype.h"

namespace torchonnx {

namespace {

// Initializers listed in a node's box before the rest is summarized as a count.
constexpr int kMaxListedInitializers = 4;

std::string elem_type_text(int32_t elem_type) {
  if (elem_type == 0) return "Tensor";
  try {
    return dtype_display_name(from_onnx_dtype(elem_type));
  } catch (const std::exception&) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  }
}

std::string type_text(const onnx::TypeProto& type) {
  if (type.has_sequence_type())
    return "Sequence[" + type_text(type.sequence_type().elem_type()) + "]";
  if (type.has_optional_type())
    return "Optional[" + type_text(type.optional_type().elem_type()) + "]";
  if (type.has_optional_type())
    return "Optional[" + type_text(type.optional_type().elem_type()) + "]";
  if (!type.has_tensor_type()) return "";
  const auto& t = type.tensor_type();
  std::string s = elem_type_text(t.elem_type());
  if (!t.has_shape()) return s;
  std::vector<std::string> dims;
  for (const auto& d : t.shape().dim()) {
    dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value())
                                     : (d.has_dim_param() ? d.dim_param() : "?"));
  }
  return s + "(" + fmt::format("{}", fmt::join(dims, ", ")) + ")";
}

std::string initializer_text(const onnx::TensorProto& t) {
  return elem_type_text(t.data_type()) + "(" + fmt::format("{}", fmt::join(t.dims(), ", ")) + ")";
}

struct Scope {
  std::unordered_map<std::string, std::string> producer;      // tensor → DOT node id
  std::unordered_map<std::string, std::string> types;         // tensor → "Float(1, 3)"
  std::unordered_map<std::string, std::string> initializers;  // name → type text
};

class DotWriter {
 public:
  std::string render(const onnx::ModelProto& model) {
    const auto& g = model.graph();
    os_ << "digraph " << dot_quote(g.name().empty() ? "onnx" : g.name()) << " {\n"
        << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11];\n"
        << "  node [fontname=\"Helvetica\", fontsize=10];\n"
        << "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n";
    write_graph(g, Scope{}, "  ", "");
    os_ << "}\n";
    return os_.str();
  }

 private:
  std::ostringstream os_;
  int next_id_ = 0;

  std::string fresh(const char* prefix) { return fmt::format("{}{}", prefix, next_id_++); }

  void edge(const std::string& indent, const std::string& from, const std::string& to,
            const std::string& label, bool dashed) {
    os_ << indent << dot_quote(from) << " -> " << dot_quote(to);
    std::vector<std::string> attrs;
    if (!label.empty()) attrs.push_back("label=" + dot_quote(label));
    if (dashed) attrs.push_back("style=dashed");
    if (!attrs.empty()) os_ << " [" << fmt::format("{}", fmt::join(attrs, ", ")) << "]";
    os_ << ";\n";
  }

  // Writes `g`'s inputs, nodes and outputs. `scope` holds the enclosing graphs' values (ONNX
  // subgraphs read them by name); `owner` is the If/Loop node of a subgraph ("" at the top).
  void write_graph(const onnx::GraphProto& g, Scope scope, const std::string& indent,
                   const std::string& owner) {
    std::unordered_set<std::string> local;  // values produced in this graph
    for (const auto& init : g.initializer()) {
      scope.initializers[init.name()] = initializer_text(init);
      scope.types[init.name()] = initializer_text(init);
      scope.producer.erase(init.name());
    }
    for (const auto& v : g.value_info()) scope.types[v.name()] = type_text(v.type());
    for (const auto& v : g.output()) scope.types[v.name()] = type_text(v.type());
    for (const auto& v : g.input()) {
      scope.types[v.name()] = type_text(v.type());
      if (scope.initializers.count(v.name())) continue;  // keep_initializers_as_inputs
      std::string id = fresh("in");
      const std::string type = type_text(v.type());
      os_ << indent << dot_quote(id) << " [shape=ellipse, style=filled, fillcolor="
          << (owner.empty() ? "\"#d5f5e3\"" : "\"#eeeeee\"")
          << ", label=" << dot_quote(type.empty() ? v.name() : v.name() + "\n" + type) << "];\n";
      scope.producer[v.name()] = id;
      local.insert(v.name());
    }
    for (const auto& node : g.node()) {
      const std::string id = fresh("n");
      std::string label = node.domain().empty() || node.domain() == "ai.onnx"
                              ? node.op_type()
                              : node.domain() + "::" + node.op_type();
      if (!node.name().empty()) label += "\n" + node.name();
      int listed = 0, more = 0;
      for (const auto& in : node.input()) {
        auto it = scope.initializers.find(in);
        if (it == scope.initializers.end() || scope.producer.count(in)) continue;
        if (listed < kMaxListedInitializers) {
          label += "\n" + in + ": " + it->second;
          ++listed;
        } else {
          ++more;
        }
      }
      if (more > 0) label += fmt::format("\n(+{} more initializers)", more);
      const bool is_constant = node.op_type() == "Constant" && node.domain().empty();
      os_ << indent << dot_quote(id) << " [shape=box, style=\"rounded,filled\", fillcolor="
          << (is_constant ? "\"#f4f4f4\"" : "\"#dde8f7\"") << ", label=" << dot_quote(label)
          << "];\n";
      for (const auto& in : node.input()) {
        if (in.empty()) continue;
        auto p = scope.producer.find(in);
        if (p == scope.producer.end()) continue;  // an initializer, listed in the box
        edge(indent, p->second, id, scope.types[in], !local.count(in));
      }
      for (const auto& a : node.attribute()) {
        std::vector<const onnx::GraphProto*> bodies;
        if (a.has_g()) bodies.push_back(&a.g());
        for (const auto& sub : a.graphs()) bodies.push_back(&sub);
        for (const auto* body : bodies) {
          os_ << indent << "subgraph " << dot_quote(fresh("cluster_")) << " {\n"
              << indent << "  label=" << dot_quote(node.op_type() + " " + a.name()) << ";\n"
              << indent << "  style=\"rounded,dashed\"; color=\"#888888\";\n";
          write_graph(*body, scope, indent + "  ", id);
          os_ << indent << "}\n";
        }
      }
      for (const auto& out : node.output()) {
        if (out.empty()) continue;
        scope.producer[out] = id;
        local.insert(out);
      }
    }
    for (const auto& v : g.output()) {
      auto p = scope.producer.find(v.name());
      if (!owner.empty()) {
        // A subgraph's result goes back to its If/Loop node.
        if (p != scope.producer.end()) edge(indent, p->second, owner, scope.types[v.name()], true);
        continue;
      }
      std::string id = fresh("out");
      const std::string type = type_text(v.type());
      os_ << indent << dot_quote(id) << " [shape=ellipse, style=filled, fillcolor=\"#fde2c8\", "
          << "label=" << dot_quote(type.empty() ? v.name() : v.name() + "\n" + type) << "];\n";
      if (p != scope.producer.end()) edge(indent, p->second, id, scope.types[v.name()], false);
    }
  }
};

}  // namespace

std::string dot_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      continue;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string to_dot(const onnx::ModelProto& model) {
  return DotWriter().render(model);
}

}  // namespace torchonnx
