// Note [Graph optimization]
// torch.onnx runs, after conversion, an eval-mode peephole (batch norm folded into the conv before
// it) and constant folding (nodes whose inputs are all constants or parameters computed at export
// time and stored as initializers), then dead-code elimination. We do the same on ir::Graph, plus a
// few chain simplifications, in one forward sweep over the nodes (they are in topological order):
//
//  - every value's use count and producer are built once; a node is removed by decrementing the
//    use counts of what it reads (a producer whose outputs drop to no use is removed in turn, with
//    a work list), and a node equivalent to one of its inputs is removed by recording an alias
//    that later nodes apply to their inputs as the sweep reaches them. Every step is O(1) per node
//    (plus the tensor arithmetic of folding), so the pass is linear in the graph's size;
//  - the sweep knows the types of values (graph inputs, initializers, constants, the types of
//    conversion, Note [Converter output types] in symbolic/convert.cpp, and the shape rules of
//    common ops again on the nodes it rewrites and after them; anything else is unknown), for
//    Cast no-ops, static Shape folding, Reshape/Expand no-ops and MatMul+Add → Gemm on 2-D
//    inputs. A dim of -1 is unknown:
//    dynamic axes come to us as -1 (passes/propagate_types.cpp), so Shape of a value that varies
//    with them is never folded;
//  - constants are the outputs of Constant nodes and the initializers that are not graph inputs:
//    with keep_initializers_as_inputs the initializers can be overridden at run time, and with
//    export_params=false the parameters are plain graph inputs, so neither is ever folded into;
//  - folding never makes a tensor much larger than what it frees (Expand, ConstantOfShape, Tile,
//    Range to something big stay nodes), so a weight read by two nodes (a tied lm_head) is not
//    copied by folding its Transpose; a Transpose feeding a 2-D MatMul becomes Gemm's transB, and
//    one feeding a Gemm flips its transA/transB before the sweep (fold_gemm_transposes), so that
//    a weight read through t() keeps its tensor and name instead of folding into a copy;
//  - values that are graph outputs, graph inputs or read by a subgraph (Loop/If bodies read outer
//    values by name) are never renamed or replaced; a subgraph is optimized on its own when the
//    sweep reaches its node, with the outer constants known then (an If condition in a Loop body
//    computed from parameters folds), and its folded values become Constant nodes instead of
//    initializers;
//  - an If whose condition folds is replaced by the branch it takes (Note [If of a constant
//    condition]);
//  - fold_constants=false keeps constant subgraphs (torch.onnx's do_constant_folding=False) but
//    still removes no-ops and dead nodes; eval_mode=false (training) keeps batch norm.
#include "onnx/optimize.h"

#include <ATen/ATen.h>

#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "onnx/dead_code.h"
#include "onnx/graph_optimizer.h"

namespace torchonnx {

namespace optimizer {

using ir::Graph;
using ir::Node;
using ir::TypeInfo;

namespace {

void collect_names(const Graph& g, std::unordered_set<std::string>& names) {
  for (const auto& v : g.inputs) names.insert(v.name);
  for (const auto& v : g.outputs) names.insert(v.name);
  for (const auto& init : g.initializers) names.insert(init.name);
  for (const auto& node : g.nodes) {
    names.insert(node.name);
    names.insert(node.outputs.begin(), node.outputs.end());
    for (const auto& attr : node.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        collect_names(**sub, names);
      }
    }
  }
}

// The value of a Constant node.
std::optional<at::Tensor> constant_value(const Node& n) {
  if (n.op_type != "Constant" || !n.domain.empty() || n.outputs.size() != 1) return std::nullopt;
  for (const auto& a : n.attributes) {
    if (a.name == "value") {
      if (const auto* t = std::get_if<at::Tensor>(&a.value)) return *t;
    } else if (a.name == "value_float") {
      if (const auto* f = std::get_if<float>(&a.value)) return at::scalar_tensor(*f, at::kFloat);
    } else if (a.name == "value_int") {
      if (const auto* i = std::get_if<int64_t>(&a.value)) return at::scalar_tensor(*i, at::kLong);
    } else if (a.name == "value_ints") {
      if (const auto* v = std::get_if<ir::Ints>(&a.value)) return at::tensor(*v, at::kLong);
    } else if (a.name == "value_floats") {
      if (const auto* v = std::get_if<ir::Floats>(&a.value)) return at::tensor(*v, at::kFloat);
    }
  }
  return std::nullopt;
}

}  // namespace

// One sweep: each node's subgraphs (each on its own, with the constants known so far), the
// peepholes, constant folding, and the inference of the types the next nodes' rewrites read.
void GraphOptimizer::run() {
  if (!g_.typed) GraphOptimizer(g_, options_, opset_, outer_, names_).type_values();
  fold_gemm_transposes();
  index();
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (removed_[i]) continue;
    Node& n = g_.nodes[i];
    // What conversion typed n from: a rewrite of n's reads or op retypes it (type_outputs).
    const std::vector<std::string> reads = n.inputs;
    const std::string op = n.op_type;
    for (auto& in : n.inputs) {
      if (auto it = alias_.find(in); it != alias_.end()) in = it->second;
    }
    for (auto& attr : n.attributes) {
      if (auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        GraphOptimizer(**sub, options_, opset_, this, names_).run();
      }
    }
    if (simplify(i)) continue;
    if (options_.fold_constants && fold(i)) continue;
    const Node& m = g_.nodes[i];
    type_outputs(m, m.inputs != reads || m.op_type != op || touched_.count(m.name) > 0);
  }
  finish();
}

// Note [Converter output types] (symbolic/convert.cpp): type propagation's types hold; the shape
// rules' types of conversion hold unless the sweep changed n or what n reads (a folded input, a
// read of another value, an input retyped), and then the rules run again on n, with what the
// sweep knows now.
void GraphOptimizer::type_outputs(const Node& n, bool changed) {
  if (propagated_types(n) || n.outputs.empty()) return;
  if (changed || changed_reads(n)) {
    infer(n);
  } else if (auto it = g_.rule_types.find(n.outputs[0]); it != g_.rule_types.end()) {
    types_[n.outputs[0]] = it->second;
  }
}

// n's outputs that type propagation typed (ir::Graph::value_types) take those types; true when
// its first output is one (the shape rules type only that one).
bool GraphOptimizer::propagated_types(const Node& n) {
  bool recorded = false;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    auto it = g_.value_types.find(n.outputs[k]);
    if (it == g_.value_types.end() || graph_inputs_.count(n.outputs[k])) continue;
    types_[n.outputs[k]] = it->second;
    recorded = recorded || k == 0;
  }
  return recorded;
}

namespace {

bool same_type(const TypeInfo& a, const TypeInfo& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.sequence == b.sequence &&
         a.optional == b.optional && a.dim_params == b.dim_params;
}

}  // namespace

bool GraphOptimizer::changed_reads(const Node& n) const {
  for (const auto& v : n.inputs) {
    if (v.empty()) continue;
    if (is_folded(v)) return true;
    // What no node of this graph makes (a graph input, an initializer, an outer value) keeps the
    // type index() gave it.
    if (!producer_.count(v)) continue;
    const TypeInfo* now = type(v);
    const std::optional<TypeInfo> then = converted_type(v);
    if ((now == nullptr) != !then.has_value()) return true;
    if (now != nullptr && !same_type(*now, *then)) return true;
  }
  return false;
}

// What types_ held for `v`, made by a node of this graph, once type_values had typed the graph.
std::optional<TypeInfo> GraphOptimizer::converted_type(const std::string& v) const {
  if (auto it = g_.value_types.find(v); it != g_.value_types.end()) return it->second;
  if (auto it = g_.rule_types.find(v); it != g_.rule_types.end()) return it->second;
  if (auto it = consts_.find(v); it != consts_.end()) {  // a Constant node's
    return TypeInfo(it->second.scalar_type(), it->second.sizes().vec());
  }
  return std::nullopt;
}

bool GraphOptimizer::is_folded(const std::string& v) const {
  if (folded_names_.count(v)) return true;
  return outer_ != nullptr && !producer_.count(v) && !graph_inputs_.count(v) &&
         outer_->is_folded(v);
}

// The typing of a converted graph: the same walk as the sweep's, without its rewrites, so that
// the types the sweep reads of a node it does not change are those the rules give it there.
void GraphOptimizer::type_values() {
  index();
  for (const Node& n : g_.nodes) {
    for (const auto& attr : n.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        GraphOptimizer(**sub, options_, opset_, this, names_).type_values();
      }
    }
    if (propagated_types(n) || n.outputs.empty() || n.inputs.empty()) continue;
    infer(n);
    if (auto it = types_.find(n.outputs[0]); it != types_.end()) {
      g_.rule_types[n.outputs[0]] = it->second;
    }
  }
  g_.typed = true;
}

void GraphOptimizer::index() {
  const size_t count = g_.nodes.size();
  removed_.assign(count, false);
  for (const auto& in : g_.inputs) {
    protected_.insert(in.name);
    // A subgraph's inputs (loop-carried values) may change shape from one iteration to the next.
    if (main_) types_[in.name] = in.type;
    graph_inputs_.insert(in.name);
  }
  for (const auto& out : g_.outputs) {
    protected_.insert(out.name);
    graph_outputs_.insert(out.name);
    ++uses_[out.name];
  }
  for (const auto& init : g_.initializers) {
    if (!graph_inputs_.count(init.name)) {
      consts_[init.name] = init.tensor;
      types_[init.name] = TypeInfo(init.tensor.scalar_type(), init.tensor.sizes().vec());
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const Node& n = g_.nodes[i];
    for (const auto& in : n.inputs) {
      if (!in.empty()) ++uses_[in];
    }
    for (const auto& out : n.outputs) {
      if (!out.empty()) producer_[out] = i;
    }
    if (has_subgraph(n)) {
      std::unordered_set<std::string> reads;
      for (const auto& attr : n.attributes) {
        if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
          collect_reads(**sub, reads);
        }
      }
      for (const auto& r : reads) {
        protected_.insert(r);
        ++uses_[r];
        subgraph_reads_[i].push_back(r);
      }
    }
    if (auto c = constant_value(n)) {
      consts_[n.outputs[0]] = *c;
      types_[n.outputs[0]] = TypeInfo(c->scalar_type(), c->sizes().vec());
    }
  }
}

std::string GraphOptimizer::fresh(const std::string& base) {
  for (size_t k = names_.size();; ++k) {
    std::string name = base + "_" + std::to_string(k);
    if (names_.insert(name).second) return name;
  }
}

const Node* GraphOptimizer::producer(const std::string& v) const {
  auto it = producer_.find(v);
  if (it == producer_.end() || removed_[it->second]) return nullptr;
  return &g_.nodes[it->second];
}

// The producer of `v` when `v` is read only once (by the node being simplified) and may go.
const Node* GraphOptimizer::sole_producer(const std::string& v, const char* op) const {
  const Node* p = producer(v);
  if (p == nullptr || p->op_type != op || !p->domain.empty() || protected_.count(v)) {
    return nullptr;
  }
  auto it = uses_.find(v);
  return it != uses_.end() && it->second == 1 ? p : nullptr;
}

const at::Tensor* GraphOptimizer::constant(const std::string& v) const {
  auto it = consts_.find(v);
  if (it != consts_.end()) return &it->second;
  // A value this graph does not define is an outer value (names are unique in the model).
  if (outer_ != nullptr && !producer_.count(v) && !graph_inputs_.count(v)) {
    return outer_->constant(v);
  }
  return nullptr;
}

const TypeInfo* GraphOptimizer::type(const std::string& v) const {
  auto it = types_.find(v);
  return it == types_.end() ? nullptr : &it->second;
}

void GraphOptimizer::release(const std::string& v) {
  if (v.empty()) return;
  std::vector<std::string> work{v};
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    if (--uses_[name] > 0) continue;
    auto it = producer_.find(name);
    if (it == producer_.end() || removed_[it->second]) continue;
    const Node& p = g_.nodes[it->second];
    bool dead = true;
    for (const auto& out : p.outputs) dead = dead && (out.empty() || uses_[out] <= 0);
    if (!dead) continue;
    removed_[it->second] = true;
    for (const auto& in : p.inputs) {
      if (!in.empty()) work.push_back(in);
    }
    if (auto r = subgraph_reads_.find(it->second); r != subgraph_reads_.end()) {
      for (const auto& name2 : r->second) work.push_back(name2);
    }
  }
}

void GraphOptimizer::remove(size_t i) {
  removed_[i] = true;
  for (const auto& in : g_.nodes[i].inputs) release(in);
}

// Node i computes the same as `to`: later readers of its output read `to` instead.
bool GraphOptimizer::replace_by(size_t i, const std::string& to) {
  const std::string out = g_.nodes[i].outputs[0];
  if (protected_.count(out)) return false;
  alias_[out] = to;
  uses_[to] += uses_[out];
  uses_[out] = 0;
  remove(i);
  return true;
}

void GraphOptimizer::set_input(Node& n, size_t k, const std::string& v) {
  std::string old = n.inputs[k];
  n.inputs[k] = v;
  if (!v.empty()) ++uses_[v];
  release(old);
}

// A new constant (an initializer of the main graph, a Constant node of a subgraph).
std::string GraphOptimizer::add_constant(const std::string& base, at::Tensor t) {
  std::string name = fresh(base);
  record_constant(name, std::move(t));
  return name;
}

// A large folded transpose of a weight stays a view of the weight's storage: the serializer
// writes it in order one tensor at a time (Note [Streaming serializer]), so folding copies no
// weight bytes and peak memory does not grow. Other results are made contiguous (a small slice
// of a big buffer does not keep the buffer's layout).
void GraphOptimizer::record_constant(const std::string& name, at::Tensor t) {
  t = t.detach();
  if (!t.is_contiguous() && !(t.is_non_overlapping_and_dense() && bytes_of(t) > kSmallFoldBytes)) {
    t = t.contiguous();
  }
  types_[name] = TypeInfo(t.scalar_type(), t.sizes().vec());
  consts_[name] = t;
  folded_.push_back(name);
  folded_names_.insert(name);
}

// Rebuilds the graph: folded constants that are equal stored once, removed and dead nodes dropped,
// folded values stored (initializers of the main graph, Constant nodes of a subgraph).
void GraphOptimizer::finish() {
  // Identical folded constants are stored once.
  std::unordered_map<std::string, std::string> renames;
  if (!folded_.empty()) {
    std::unordered_map<size_t, std::vector<std::string>> by_hash;
    for (const auto& name : folded_) {
      if (uses_[name] <= 0 || protected_.count(name)) continue;
      if (!consts_.at(name).is_contiguous()) continue;  // views: shared by storage at writing
      const at::Tensor& t = consts_.at(name);
      std::string_view bytes(static_cast<const char*>(t.data_ptr()),
                             static_cast<size_t>(bytes_of(t)));
      size_t h = std::hash<std::string_view>()(bytes) ^ static_cast<size_t>(t.scalar_type());
      for (int64_t d : t.sizes()) h = h * 31 + static_cast<size_t>(d);
      auto& bucket = by_hash[h];
      bool found = false;
      for (const auto& other : bucket) {
        const at::Tensor& o = consts_.at(other);
        if (o.scalar_type() == t.scalar_type() && o.sizes() == t.sizes() &&
            std::memcmp(o.data_ptr(), t.data_ptr(), bytes.size()) == 0) {
          renames[name] = other;
          found = true;
          break;
        }
      }
      if (!found) bucket.push_back(name);
    }
  }
  std::vector<Node> nodes;
  nodes.reserve(g_.nodes.size());
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (removed_[i]) continue;
    Node& n = g_.nodes[i];
    for (auto& in : n.inputs) {
      if (auto it = renames.find(in); it != renames.end()) in = it->second;
    }
    if (inline_constant_if(n, nodes)) continue;
    nodes.push_back(std::move(n));
  }
  // Dead code (backwards from the outputs; subgraph reads count as reads of their node).
  Liveness liveness = find_live_nodes(nodes, g_.outputs);
  const std::vector<bool>& keep = liveness.keep;
  const std::unordered_set<std::string>& live = liveness.live;
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  std::vector<Node> constants;  // folded values of a subgraph, as Constant nodes
  std::vector<ir::Initializer> inits;
  for (auto& init : g_.initializers) {
    if (live.count(init.name) || graph_inputs_.count(init.name)) inits.push_back(std::move(init));
  }
  for (const auto& name : folded_) {
    if (!live.count(name) || renames.count(name)) continue;
    const at::Tensor& t = consts_.at(name);
    if (main_) {
      inits.push_back({name, t});
    } else {
      constants.push_back(
          {"Constant", "", fresh("Constant"), {}, {name}, {{"value", t}}, "", {}, {}});
    }
  }
  for (auto& c : constants) kept.push_back(std::move(c));
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(nodes[i]));
  }
  g_.nodes = std::move(kept);
  g_.initializers = std::move(inits);
  // Known types: folded values get theirs from their tensors; removed values are forgotten. The
  // rules' types were those of the graph as converted: a rewritten graph is typed again.
  if (!g_.value_types.empty() || !folded_.empty()) {
    for (auto it = g_.value_types.begin(); it != g_.value_types.end();) {
      it = live.count(it->first) || graph_inputs_.count(it->first) ? std::next(it)
                                                                   : g_.value_types.erase(it);
    }
    for (const auto& name : folded_) {
      if (live.count(name) && !renames.count(name)) g_.value_types[name] = types_.at(name);
    }
  }
  g_.rule_types.clear();
  g_.typed = false;
}

// Note [If of a constant condition]
// An If whose condition is a constant once parameters fold (`if bool((self.w * self.w).mean() <
// 0.5)`: the JIT passes see the parameter as an input, not a constant) is replaced by the nodes of
// the branch it takes, and Identity nodes give the branch's outputs the If's output names.
// torch.onnx folds such conditions too. Left in place inside a Loop body, ONNX Runtime 1.30's
// optimizer inlines the If itself and loses its output ("Missing Input: If_0"; found by the
// fuzzer). The branch was optimized before (its folded values are Constant nodes), and its names
// are unique in the model, so its nodes move as they are. Branches with sequence or optional
// outputs stay: an Identity of those needs opset 14/16.
bool GraphOptimizer::inline_constant_if(Node& n, std::vector<Node>& nodes) {
  if (n.op_type != "If" || !n.domain.empty() || !options_.fold_constants) return false;
  const at::Tensor* cond = constant(n.inputs[0]);
  if (cond == nullptr || cond->numel() != 1) return false;
  const char* taken = cond->item().toBool() ? "then_branch" : "else_branch";
  std::shared_ptr<Graph> branch;
  for (auto& attr : n.attributes) {
    if (attr.name != taken) continue;
    if (auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) branch = *sub;
  }
  if (!branch || branch->outputs.size() != n.outputs.size()) return false;
  for (const auto& out : branch->outputs) {
    if (out.type.sequence || out.type.optional) return false;
  }
  // A branch output that its producer in the branch gives to nothing else takes the If output's
  // name; the others (outer values, outputs read again) get an Identity.
  std::unordered_map<std::string, int> reads;
  std::unordered_map<std::string, std::pair<size_t, size_t>> producers;  // node, output index
  for (const auto& out : branch->outputs) ++reads[out.name];
  for (auto& bn : branch->nodes) {
    for (const auto& in : bn.inputs) ++reads[in];
    if (has_subgraph(bn)) {
      std::unordered_set<std::string> sub_reads;
      for (const auto& attr : bn.attributes) {
        if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
          collect_reads(**sub, sub_reads);
        }
      }
      for (const auto& r : sub_reads) ++reads[r];
    }
    for (size_t j = 0; j < bn.outputs.size(); ++j) producers[bn.outputs[j]] = {nodes.size(), j};
    nodes.push_back(std::move(bn));
  }
  for (auto& [name, type] : branch->value_types) g_.value_types.emplace(name, type);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const std::string& out = branch->outputs[k].name;
    auto p = producers.find(out);
    if (p != producers.end() && reads[out] == 1) {
      nodes[p->second.first].outputs[p->second.second] = n.outputs[k];
      g_.value_types.erase(out);
      continue;
    }
    g_.value_types.emplace(out, branch->outputs[k].type);
    Node identity{"Identity", "",       fresh("Identity"), {out},  {n.outputs[k]},
                  {},         n.source, n.origin,          n.scope};
    nodes.push_back(std::move(identity));
  }
  return true;
}

}  // namespace optimizer

void type_values(ir::Graph& graph, int opset) {
  std::unordered_set<std::string> names;
  optimizer::GraphOptimizer(graph, OptimizeOptions{}, opset, nullptr, names).type_values();
}

void optimize_model(ir::Model& model, const OptimizeOptions& options) {
  std::unordered_set<std::string> names;
  optimizer::collect_names(model.graph, names);
  optimizer::GraphOptimizer(model.graph, options, model.opset, nullptr, names).run();
}

}  // namespace torchonnx
