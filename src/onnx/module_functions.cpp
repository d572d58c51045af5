// export_modules_as_functions, the ONNX stage's part. Note [Module functions]:
//
// convert_nodes tags every ONNX node with the module instances its TorchScript node ran in
// (module_scope, from the InlinedCallStack torch::jit::Inline leaves on inlined nodes). After
// conversion, extract_module_functions looks, graph by graph (subgraphs first, then their owner;
// deeper instances before the instances that contain them), for the instances of the selected
// types, and replaces the nodes of each by one call of an ir::Function:
// - members: the nodes whose scope starts with the instance's scope, except Constant nodes (which
//   constant pooling shares between instances): a Constant the members read is copied into the
//   function body. Nodes that passes created without a scope and that sit between members (they
//   read a member's output and a member reads theirs) join the members, else the call would
//   depend on itself.
// - inputs: the values the members read and do not produce (activations, and parameters as torch.
//   onnx passes them); outputs: the values they produce that other nodes or the graph outputs read.
// - the body is renamed canonically (inputs x0.., values v0.., nodes n0..) so that instances with
//   the same structure share one function (Note [Function attributes]); other structures of the
//   same class get "Name.1", "Name.2", ... (torch.onnx's names);
// - the call takes the place of the first member, and the graph is then sorted topologically
//   (stable) so that nodes that ran between members and read their outputs follow the call.
#include "onnx/module_functions.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "torchonnx/errors.h"
#include "torchonnx/logging.h"

namespace torchonnx {

namespace {

// "path:Type@site" → "Type".
std::string entry_type(const std::string& entry) {
  const size_t colon = entry.rfind(':') + 1;
  return entry.substr(colon, entry.find('@', colon) - colon);
}

std::string without_torch_prefix(const std::string& type) {
  const std::string prefix = "__torch__.";
  return type.rfind(prefix, 0) == 0 ? type.substr(prefix.size()) : type;
}

std::string bare_name(const std::string& type) {
  return type.substr(type.rfind('.') + 1);
}

// torch.onnx's domain: the Python module of the class ("__main__" for the main script's classes,
// which TorchScript names "__torch__.Class").
std::string domain_of(const std::string& type) {
  std::string path = without_torch_prefix(type);
  auto dot = path.rfind('.');
  return dot == std::string::npos ? "__main__" : path.substr(0, dot);
}

// ExportOptions::export_modules_as_functions = {"*"}: every module type (torch.onnx's True).
constexpr const char* kAllModuleTypes = "*";

bool selects(const std::string& option, const std::string& type) {
  return option == kAllModuleTypes || option == type || option == without_torch_prefix(type) ||
         option == bare_name(type);
}

using Names = std::vector<std::string>;
using NameSet = std::unordered_set<std::string>;

std::vector<std::shared_ptr<ir::Graph>*> subgraphs(ir::Node& node) {
  std::vector<std::shared_ptr<ir::Graph>*> out;
  for (auto& attr : node.attributes) {
    if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) out.push_back(g);
  }
  return out;
}

// The values a node reads, its subgraphs' reads (outer-scope references) included, in order.
void deep_reads(const ir::Node& node, Names& out) {
  for (const auto& in : node.inputs) {
    if (!in.empty()) out.push_back(in);
  }
  for (const auto& attr : node.attributes) {
    if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
      for (const auto& n : (*g)->nodes) deep_reads(n, out);
      for (const auto& o : (*g)->outputs) out.push_back(o.name);
    }
  }
}

// The values a node defines: its outputs and, in its subgraphs, their inputs and values.
void deep_defs(const ir::Node& node, NameSet& out) {
  out.insert(node.outputs.begin(), node.outputs.end());
  for (const auto& attr : node.attributes) {
    if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
      for (const auto& in : (*g)->inputs) out.insert(in.name);
      for (const auto& n : (*g)->nodes) deep_defs(n, out);
    }
  }
}

void collect_node_names(const std::vector<ir::Node>& nodes, NameSet& names) {
  for (const auto& n : nodes) {
    names.insert(n.name);
    for (const auto& attr : n.attributes) {
      if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_node_names((*g)->nodes, names);
      }
    }
  }
}

bool is_constant(const ir::Node& node) {
  return node.op_type == "Constant" && node.domain.empty() && node.inputs.empty();
}

bool has_prefix(const std::vector<std::string>& scope, const std::vector<std::string>& prefix) {
  return scope.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), scope.begin());
}

// --- canonical bodies ---------------------------------------------------------------------------

class Canonicalizer {
 public:
  explicit Canonicalizer(const Names& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) names_[inputs[i]] = fmt::format("x{}", i);
  }

  ir::Node node(const ir::Node& in) {
    ir::Node out = in;
    out.name = fmt::format("n{}", nodes_++);
    out.scope.clear();
    for (auto& name : out.inputs) name = use(name);
    for (auto& attr : out.attributes) {
      if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) attr.value = graph(**g);
    }
    for (auto& name : out.outputs) name = define(name);
    return out;
  }

  std::string use(const std::string& name) const {
    if (name.empty()) return name;
    auto it = names_.find(name);
    return it == names_.end() ? name : it->second;
  }

 private:
  std::string define(const std::string& name) {
    if (name.empty()) return name;
    return names_[name] = fmt::format("v{}", values_++);
  }

  std::shared_ptr<ir::Graph> graph(const ir::Graph& in) {
    auto out = std::make_shared<ir::Graph>();
    out->name = fmt::format("g{}", graphs_++);
    for (const auto& v : in.inputs) out->inputs.push_back({define(v.name), v.type});
    for (const auto& n : in.nodes) out->nodes.push_back(node(n));
    for (const auto& v : in.outputs) out->outputs.push_back({use(v.name), v.type});
    for (const auto& init : in.initializers)
      out->initializers.push_back({use(init.name), init.tensor});
    for (const auto& [name, type] : in.value_types) {
      if (names_.count(name)) out->value_types[names_.at(name)] = type;
    }
    for (const auto& [name, type] : in.rule_types) {
      if (names_.count(name)) out->rule_types[names_.at(name)] = type;
    }
    out->typed = in.typed;
    return out;
  }

  std::unordered_map<std::string, std::string> names_;
  int values_ = 0;
  int nodes_ = 0;
  int graphs_ = 0;
};

void dump_graph(const ir::Graph& g, std::string& out);

void dump_tensor(const at::Tensor& tensor, std::string& out) {
  at::Tensor t = tensor.contiguous().cpu();
  out += fmt::format("T{}[{}]", static_cast<int>(t.scalar_type()), fmt::join(t.sizes(), ","));
  out.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
}

bool is_graph(const ir::AttrValue& v) {
  return std::holds_alternative<std::shared_ptr<ir::Graph>>(v);
}

void dump_value(const ir::AttrValue& value, std::string& out);

// With `values` false, the node's structure: attribute names and kinds, not their values (but
// subgraphs whole), so that instances that differ only in attribute values share a function.
void dump_node(const ir::Node& n, std::string& out, bool values = true) {
  out += fmt::format("{}::{}({})->({})", n.domain, n.op_type, fmt::join(n.inputs, ","),
                     fmt::join(n.outputs, ","));
  for (const auto& attr : n.attributes) {
    out += "|" + attr.name + "=";
    if (!attr.ref.empty()) out += "@" + attr.ref + ":";
    if (!values && !is_graph(attr.value)) {
      out += fmt::format("K{}", attr.value.index());
      continue;
    }
    dump_value(attr.value, out);
  }
  out += "\n";
}

void dump_value(const ir::AttrValue& value, std::string& out) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          out += fmt::format("i{}", v);
        } else if constexpr (std::is_same_v<T, float>) {
          out += fmt::format("f{:a}", v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += fmt::format("s{}:{}", v.size(), v);
        } else if constexpr (std::is_same_v<T, ir::Ints>) {
          out += fmt::format("I[{}]", fmt::join(v, ","));
        } else if constexpr (std::is_same_v<T, ir::Floats>) {
          out += "F[";
          for (float x : v) out += fmt::format("{:a},", x);
          out += "]";
        } else if constexpr (std::is_same_v<T, ir::Strings>) {
          out += "S[";
          for (const auto& x : v) out += fmt::format("{}:{},", x.size(), x);
          out += "]";
        } else if constexpr (std::is_same_v<T, at::Tensor>) {
          dump_tensor(v, out);
        } else if constexpr (std::is_same_v<T, ir::TypeInfo>) {
          out += fmt::format("Y{}{}{}", static_cast<int>(v.dtype), v.sequence ? "s" : "",
                             v.optional ? "o" : "");
        } else {
          out += "G{";
          dump_graph(*v, out);
          out += "}";
        }
      },
      value);
}

void dump_graph(const ir::Graph& g, std::string& out) {
  for (const auto& v : g.inputs) out += v.name + ",";
  out += ";";
  for (const auto& n : g.nodes) dump_node(n, out);
  for (const auto& v : g.outputs) out += v.name + ",";
  for (const auto& init : g.initializers) {
    out += init.name;
    dump_tensor(init.tensor, out);
  }
}

// --- extraction ---------------------------------------------------------------------------------

// Slots: the attributes of a canonical body that are not subgraphs, in order (node, attribute).
using Slots = std::vector<std::pair<size_t, size_t>>;
// Structure key → the slots whose values differ between the calls of that structure.
using DifferingSlots = std::map<std::string, std::set<size_t>>;

ir::Attribute to_attribute(const ModuleAttribute& a) {
  return std::visit(
      [&](const auto& v) -> ir::Attribute {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<double>>) {
          return ir::Attribute(a.name, ir::Floats(v.begin(), v.end()));
        } else {
          return ir::Attribute(a.name, v);
        }
      },
      a.value);
}

// "path:Type@site/method" → "path" (the instance names of the call stack, joined).
std::string entry_path(const std::string& entry) {
  return entry.substr(0, entry.rfind(':'));
}

struct Extractor {
  ir::Model& model;
  const std::set<std::string>& types;
  const std::map<std::string, ModuleAttributes>& modules;
  const DifferingSlots& known;  // found by the previous round (Note [Function attributes])
  DifferingSlots differing;     // found by this round
  NameSet node_names;
  std::map<std::string, std::vector<std::string>> first_values;  // structure key → slot values
  std::map<std::string, size_t> by_structure;  // structure key → index in model.functions
  std::map<std::string, int> variants;         // domain + name → functions of that class
  std::map<std::string, int> call_counts;      // function name → calls made
  std::map<size_t, std::vector<std::pair<size_t, std::string>>> slot_attributes;  // slot → name

  bool selected(const std::string& entry) const {
    const std::string type = entry_type(entry);
    return std::any_of(types.begin(), types.end(),
                       [&](const std::string& t) { return selects(t, type); });
  }

  // The path in named_modules() of the instance (ExportOptions::module_attributes' key). The call
  // stack names a ModuleList's or ModuleDict's element by its index or key alone ("0" for
  // "lns.0": the container is not called); such an element is found under the one container
  // child of its parent that has it (of its type, if several have).
  std::optional<std::string> module_path(const std::vector<std::string>& instance) const {
    if (modules.empty()) return std::nullopt;
    std::string path, parent;
    for (const auto& entry : instance) {
      const std::string stack_path = entry_path(entry);
      if (stack_path.empty()) continue;  // the model itself
      std::string name = stack_path;
      if (!parent.empty() && stack_path.rfind(parent + ".", 0) == 0) {
        name = stack_path.substr(parent.size() + 1);
      }
      parent = stack_path;
      const std::string prefix = path.empty() ? "" : path + ".";
      if (modules.count(prefix + name)) {
        path = prefix + name;
        continue;
      }
      std::vector<std::string> found;
      for (const auto& [candidate, module] : modules) {
        if (candidate.rfind(prefix, 0) != 0) continue;
        const std::string rest = candidate.substr(prefix.size());
        const size_t dot = rest.find('.');
        if (dot != std::string::npos && rest.substr(dot + 1) == name) found.push_back(candidate);
      }
      if (found.size() > 1) {
        const std::string type = without_torch_prefix(entry_type(entry));
        found.erase(
            std::remove_if(found.begin(), found.end(),
                           [&](const std::string& c) { return modules.at(c).type != type; }),
            found.end());
      }
      if (found.size() != 1) return std::nullopt;
      path = found[0];
    }
    return path;
  }

  // Subgraphs first (instances that start inside them), then the graph's own instances.
  void run(ir::Graph& graph, const std::vector<std::string>& owner_scope) {
    for (auto& node : graph.nodes) {
      for (auto* sub : subgraphs(node)) {
        // A copy: subgraphs may be shared between nodes.
        *sub = std::make_shared<ir::Graph>(**sub);
        run(**sub, node.scope);
      }
    }
    std::vector<std::vector<std::string>> instances;
    std::set<std::vector<std::string>> seen;
    for (const auto& node : graph.nodes) {
      for (size_t d = 0; d < node.scope.size(); ++d) {
        if (!selected(node.scope[d])) continue;
        std::vector<std::string> prefix(node.scope.begin(), node.scope.begin() + d + 1);
        // An instance the owner of this subgraph belongs to is extracted in the enclosing graph.
        if (has_prefix(owner_scope, prefix)) continue;
        if (seen.insert(prefix).second) instances.push_back(std::move(prefix));
      }
    }
    std::stable_sort(instances.begin(), instances.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& instance : instances) extract(graph, instance);
  }

  void extract(ir::Graph& graph, const std::vector<std::string>& instance) {
    auto& nodes = graph.nodes;
    const size_t n = nodes.size();
    std::vector<char> member(n, 0);
    size_t first = n;
    for (size_t i = 0; i < n; ++i) {
      if (!is_constant(nodes[i]) && has_prefix(nodes[i].scope, instance)) {
        member[i] = 1;
        first = std::min(first, i);
      }
    }
    if (first == n) return;  // only constants: nothing to call

    // Unscoped nodes between members join them (see the Note).
    std::vector<Names> reads(n);
    for (size_t i = 0; i < n; ++i) deep_reads(nodes[i], reads[i]);
    NameSet downstream_values;
    std::vector<char> down(n, 0);
    for (size_t i = first; i < n; ++i) {
      bool d = member[i];
      if (!d) {
        for (const auto& r : reads[i]) d = d || downstream_values.count(r);
        down[i] = d;
      }
      if (d) downstream_values.insert(nodes[i].outputs.begin(), nodes[i].outputs.end());
    }
    NameSet upstream_reads;
    for (size_t i = n; i-- > 0;) {
      bool up = member[i];
      if (!up) {
        for (const auto& o : nodes[i].outputs) up = up || upstream_reads.count(o);
        if (up && down[i]) member[i] = 1;
      }
      if (up) upstream_reads.insert(reads[i].begin(), reads[i].end());
    }

    // The body: copies of the Constants the members read, then the members.
    std::unordered_map<std::string, size_t> constant_of;
    for (size_t i = 0; i < n; ++i) {
      if (!member[i] && is_constant(nodes[i])) constant_of[nodes[i].outputs.at(0)] = i;
    }
    std::vector<ir::Node> body;
    NameSet copied;
    for (size_t i = 0; i < n; ++i) {
      if (!member[i]) continue;
      for (const auto& r : reads[i]) {
        auto it = constant_of.find(r);
        if (it != constant_of.end() && copied.insert(r).second) body.push_back(nodes[it->second]);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (member[i]) body.push_back(nodes[i]);
    }

    // Inputs: what the body reads and does not define, in order of first read.
    NameSet defined;
    for (const auto& node : body) deep_defs(node, defined);
    Names inputs;
    NameSet input_set;
    for (const auto& node : body) {
      Names r;
      deep_reads(node, r);
      for (const auto& name : r) {
        if (!defined.count(name) && input_set.insert(name).second) inputs.push_back(name);
      }
    }
    // Outputs: what the members produce that the other nodes or the graph outputs read.
    NameSet read_outside;
    for (size_t i = 0; i < n; ++i) {
      if (!member[i]) read_outside.insert(reads[i].begin(), reads[i].end());
    }
    for (const auto& o : graph.outputs) read_outside.insert(o.name);
    Names outputs;
    for (size_t i = 0; i < n; ++i) {
      if (!member[i]) continue;
      for (const auto& o : nodes[i].outputs) {
        if (!o.empty() && read_outside.count(o)) outputs.push_back(o);
      }
    }
    if (outputs.empty()) return;  // nothing of it is used (dead code): leave it as it is

    // The canonical body; instances of one class with the same structure share a function.
    Canonicalizer canon(inputs);
    ir::Function fn;
    for (const auto& node : body) fn.nodes.push_back(canon.node(node));
    for (size_t i = 0; i < inputs.size(); ++i) fn.inputs.push_back(canon.use(inputs[i]));
    for (const auto& o : outputs) fn.outputs.push_back(canon.use(o));
    std::string key;
    for (const auto& name : fn.inputs) key += name + ",";
    key += ";";
    for (const auto& node : fn.nodes) dump_node(node, key, /*values=*/false);
    for (const auto& name : fn.outputs) key += name + ",";

    const std::string type = entry_type(instance.back());
    fn.domain = domain_of(type);
    key = fn.domain + "\n" + bare_name(type) + "\n" + key;

    // This call's attribute values, against the first call's (Note [Function attributes]).
    Slots slots;
    std::vector<std::string> values;
    std::vector<ir::Attribute> slot_values;
    for (size_t i = 0; i < fn.nodes.size(); ++i) {
      for (size_t a = 0; a < fn.nodes[i].attributes.size(); ++a) {
        if (is_graph(fn.nodes[i].attributes[a].value)) continue;
        slots.emplace_back(i, a);
        slot_values.push_back(fn.nodes[i].attributes[a]);
        values.emplace_back();
        dump_value(fn.nodes[i].attributes[a].value, values.back());
      }
    }
    if (auto [it, fresh] = first_values.emplace(key, values); !fresh) {
      for (size_t k = 0; k < values.size(); ++k) {
        if (values[k] != it->second[k]) differing[key].insert(k);
      }
    }

    size_t index;
    if (auto it = by_structure.find(key); it != by_structure.end()) {
      index = it->second;
    } else {
      // torch.onnx's names: "Block", then "Block.1", "Block.2" for other structures.
      int k = variants[fn.domain + "::" + bare_name(type)]++;
      fn.name = k == 0 ? bare_name(type) : fmt::format("{}.{}", bare_name(type), k);
      index = model.functions.size();
      if (auto d = known.find(key); d != known.end()) {
        std::map<std::string, int> taken;
        for (size_t k : d->second) {
          auto [node, attr] = slots.at(k);
          auto& a = fn.nodes[node].attributes[attr];
          std::string name = "inferred::" + fn.nodes[node].op_type + "_" + a.name;
          if (int c = taken[name]++; c > 0) name += fmt::format(".{}", c);
          a.ref = name;
          fn.attributes.push_back(name);
          slot_attributes[index].emplace_back(k, name);
        }
      }
      model.functions.push_back(std::move(fn));
      by_structure.emplace(key, index);
      model.extra_opsets.emplace(model.functions.back().domain, 1);
    }
    const ir::Function& f = model.functions[index];

    ir::Node call;
    call.op_type = f.name;
    call.domain = f.domain;
    do {
      call.name = fmt::format("{}_{}", f.name, call_counts[f.name]++);
    } while (!node_names.insert(call.name).second);
    call.inputs = inputs;
    call.outputs = outputs;
    // Its attributes: the values that differ between calls, then the module's annotated ones.
    if (auto it = slot_attributes.find(index); it != slot_attributes.end()) {
      for (const auto& [k, name] : it->second) {
        ir::Attribute a = slot_values.at(k);
        a.name = name;
        call.attributes.push_back(std::move(a));
      }
    }
    if (auto path = module_path(instance)) {
      ir::Function& mutable_f = model.functions[index];
      for (const auto& attr : modules.at(*path).attributes) {
        call.attributes.push_back(to_attribute(attr));
        if (std::find(mutable_f.attributes.begin(), mutable_f.attributes.end(), attr.name) ==
            mutable_f.attributes.end()) {
          mutable_f.attributes.push_back(attr.name);
        }
      }
    }
    call.source = nodes[first].source;
    call.scope.assign(instance.begin(), instance.end() - 1);

    std::vector<ir::Node> rest;
    rest.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (i == first) rest.push_back(std::move(call));
      if (!member[i]) rest.push_back(std::move(nodes[i]));
    }
    nodes = sort_topologically(std::move(rest));
  }

  // Kahn's algorithm, taking the ready node that came first.
  static std::vector<ir::Node> sort_topologically(std::vector<ir::Node> nodes) {
    const size_t n = nodes.size();
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < n; ++i) {
      for (const auto& o : nodes[i].outputs) {
        if (!o.empty()) producer[o] = i;
      }
    }
    std::vector<std::vector<size_t>> users(n);
    std::vector<size_t> pending(n, 0);
    for (size_t i = 0; i < n; ++i) {
      Names r;
      deep_reads(nodes[i], r);
      std::set<size_t> deps;
      for (const auto& name : r) {
        auto it = producer.find(name);
        if (it != producer.end() && it->second != i) deps.insert(it->second);
      }
      pending[i] = deps.size();
      for (size_t d : deps) users[d].push_back(i);
    }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.push(i);
    }
    std::vector<ir::Node> out;
    out.reserve(n);
    while (!ready.empty()) {
      size_t i = ready.top();
      ready.pop();
      for (size_t u : users[i]) {
        if (--pending[u] == 0) ready.push(u);
      }
      out.push_back(std::move(nodes[i]));
    }
    if (out.size() != n) {
      throw ExportError(ErrorCode::kConversion,
                        "export_modules_as_functions: extracting a module function made the graph "
                        "cyclic (torchonnx bug); please report it with the model, or export "
                        "without --modules-as-functions.");
    }
    return out;
  }
};

// Drops the Constant nodes nothing reads any more (their readers moved into functions).
void remove_unread_constants(ir::Graph& graph) {
  NameSet read;
  for (const auto& node : graph.nodes) {
    Names r;
    deep_reads(node, r);
    read.insert(r.begin(), r.end());
  }
  for (const auto& o : graph.outputs) read.insert(o.name);
  graph.nodes.erase(std::remove_if(graph.nodes.begin(), graph.nodes.end(),
                                   [&](const ir::Node& node) {
                                     return is_constant(node) && !read.count(node.outputs.at(0));
                                   }),
                    graph.nodes.end());
}

void collect_types(const std::vector<ir::Node>& nodes, std::set<std::string>& types, bool& scoped) {
  for (const auto& node : nodes) {
    scoped = scoped || !node.scope.empty();
    for (const auto& entry : node.scope) types.insert(entry_type(entry));
    for (const auto& attr : node.attributes) {
      if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_types((*g)->nodes, types, scoped);
      }
    }
  }
}

void prepend_scope(ir::Graph& graph, const std::string& entry) {
  for (auto& node : graph.nodes) {
    node.scope.insert(node.scope.begin(), entry);
    for (auto& attr : node.attributes) {
      if (auto* g = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        *g = std::make_shared<ir::Graph>(**g);  // a copy: subgraphs may be shared
        prepend_scope(**g, entry);
      }
    }
  }
}

}  // namespace

std::string demangle_type_name(const std::string& qualified) {
  std::string out;
  size_t start = 0;
  while (start <= qualified.size()) {
    size_t end = qualified.find('.', start);
    if (end == std::string::npos) end = qualified.size();
    std::string atom = qualified.substr(start, end - start);
    if (atom.rfind("___torch_mangle_", 0) != 0) {
      if (!out.empty()) out += '.';
      out += atom;
    }
    start = end + 1;
  }
  return out;
}

void extract_module_functions(ir::Model& model, const std::set<std::string>& types,
                              const std::map<std::string, ModuleAttributes>& module_attributes) {
  if (types.empty()) return;
  std::set<std::string> present;
  bool scoped = false;
  collect_types(model.graph.nodes, present, scoped);
  // The model itself is an instance too (torch.onnx makes its class a function when selected):
  // every node's scope starts with it.
  if (!model.module_type.empty()) {
    const std::string root = fmt::format(":{}@-1/forward", demangle_type_name(model.module_type));
    prepend_scope(model.graph, root);
    present.insert(entry_type(root));
    scoped = true;
  }
  if (!scoped) {
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("export_modules_as_functions ({}): the graph records no module calls. Only "
                    "TorchScript modules (a .pt traced or scripted in Python, or a "
                    "torch::jit::Module) keep their submodule structure; graphs traced from C++ "
                    "callables (export_function, export_module) have none. Remedy: export a "
                    "TorchScript module, or drop the option.",
                    fmt::join(types, ", ")));
  }
  std::vector<std::string> missing;
  for (const auto& t : types) {
    if (t != kAllModuleTypes && std::none_of(present.begin(), present.end(),
                                             [&](const std::string& p) { return selects(t, p); })) {
      missing.push_back(t);
    }
  }
  // A type the graph has no call of, beside types it has, is what torch.onnx accepts in silence: a
  // module whose ops all vanish at export (an eval Dropout, as in torch.onnx's own
  // test_local_function) leaves no call. Only a request of which nothing is present (a misspelt
  // type) is an error.
  const size_t requested = types.size() - types.count(kAllModuleTypes);
  if (!missing.empty() && missing.size() < requested) {
    warn(fmt::format(
        "export_modules_as_functions: no call of module type{} {} in the graph (a module whose "
        "ops all vanish at export, as an eval Dropout, leaves none): no function for it",
        missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")));
  } else if (!missing.empty()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("export_modules_as_functions: no instance of module type{} {} "
                                  "in the model. Its module types are: {}. Remedy: name one of "
                                  "them (the qualified name or the bare class name).",
                                  missing.size() == 1 ? "" : "s", fmt::join(missing, ", "),
                                  fmt::join(present, ", ")));
  }
  // Note [Function attributes]: as torch.onnx does, the calls of one class whose bodies have the
  // same structure (nodes, their wiring, attribute names) share one function, and the attributes
  // whose values differ between them become attributes of the function, named
  // "inferred::<op_type>_<attribute>" as torch.onnx names them: the body refers to them
  // (ref_attr_name) and each call gives its value (CELU(1.0) and CELU(2.0): one function, each
  // call with its alpha). Which values differ is known once every call is seen, and the calls
  // inside a function's body are part of that body's structure, so the extraction runs again on
  // the original graph with what the previous round found, until a round finds nothing new (a
  // round per level of nesting). The annotated attributes of the module (module_attributes) are
  // added to every call and declared on its function.
  DifferingSlots known;
  for (int round = 0;; ++round) {
    ir::Model trial = model;
    Extractor ex{trial, types, module_attributes, known, {}, {}, {}, {}, {}, {}, {}};
    collect_node_names(trial.graph.nodes, ex.node_names);
    ex.run(trial.graph, {});
    if (ex.differing == known || round == 16) {
      remove_unread_constants(trial.graph);
      model = std::move(trial);
      return;
    }
    known = std::move(ex.differing);
  }
}

}  // namespace torchonnx
