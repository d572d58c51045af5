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
//  - a light dtype/shape inference runs along the sweep (graph inputs, initializers, constants,
//    and the shape rules of common ops; anything else is unknown), for Cast no-ops, static Shape
//    folding, Reshape/Expand no-ops and MatMul+Add → Gemm on 2-D inputs. A dim of -1 is unknown:
//    dynamic axes come to us as -1 (passes/propagate_types.cpp), so Shape of a value that varies
//    with them is never folded;
//  - constants are the outputs of Constant nodes and the initializers that are not graph inputs:
//    with keep_initializers_as_inputs the initializers can be overridden at run time, and with
//    export_params=false the parameters are plain graph inputs, so neither is ever folded into;
//  - folding never makes a tensor much larger than what it frees (Expand, ConstantOfShape, Tile,
//    Range to something big stay nodes), so a weight read by two nodes (a tied lm_head) is not
//    copied by folding its Transpose; a Transpose feeding a 2-D MatMul becomes Gemm's transB;
//  - values that are graph outputs, graph inputs or read by a subgraph (Loop/If bodies read outer
//    values by name) are never renamed or replaced; subgraphs are optimized on their own, where
//    folded values become Constant nodes instead of initializers;
//  - fold_constants=false keeps constant subgraphs (torch.onnx's do_constant_folding=False) but
//    still removes no-ops and dead nodes; eval_mode=false (training) keeps batch norm.
#include "onnx/optimize.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "onnx/dtype.h"

namespace torchonnx {

namespace {

using ir::Graph;
using ir::Node;
using ir::TypeInfo;
using Shape = std::vector<int64_t>;

// A folded tensor may always be this large; beyond, only as large as the constants it frees.
constexpr int64_t kSmallFoldBytes = 64 * 1024;

int64_t bytes_of(const at::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

const ir::AttrValue* find_attr(const Node& n, const std::string& name) {
  for (const auto& a : n.attributes) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

std::optional<int64_t> attr_int(const Node& n, const std::string& name) {
  const auto* v = find_attr(n, name);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> attr_ints(const Node& n, const std::string& name) {
  const auto* v = find_attr(n, name);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<ir::Ints>(v)) return *i;
  return std::nullopt;
}

void set_attr(Node& n, ir::Attribute attr) {
  for (auto& a : n.attributes) {
    if (a.name == attr.name) {
      a.value = std::move(attr.value);
      return;
    }
  }
  n.attributes.push_back(std::move(attr));
}

void erase_attr(Node& n, const std::string& name) {
  n.attributes.erase(std::remove_if(n.attributes.begin(), n.attributes.end(),
                                    [&](const ir::Attribute& a) { return a.name == name; }),
                     n.attributes.end());
}

bool has_subgraph(const Node& n) {
  for (const auto& a : n.attributes) {
    if (std::holds_alternative<std::shared_ptr<Graph>>(a.value)) return true;
  }
  return false;
}

// Every name the nodes of `g` and of its subgraphs read (outer-scope references included).
void collect_reads(const Graph& g, std::unordered_set<std::string>& reads) {
  for (const auto& node : g.nodes) {
    reads.insert(node.inputs.begin(), node.inputs.end());
    for (const auto& attr : node.attributes) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        collect_reads(**sub, reads);
        for (const auto& out : (*sub)->outputs) reads.insert(out.name);
      }
    }
  }
}

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

std::vector<int64_t> ints_of(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous().reshape({-1});
  const int64_t* p = l.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + l.numel());
}

bool is_static(const TypeInfo& t) {
  if (!t.shape) return false;
  for (int64_t d : *t.shape) {
    if (d < 0) return false;
  }
  return true;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
    const int64_t y = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
    if (x == 1) {
      out[k] = y;
    } else if (y == 1 || x == y) {
      out[k] = x;
    } else if (x < 0 || y < 0) {
      out[k] = x < 0 ? y : x;
      if (x < 0 && y < 0) out[k] = -1;
    } else {
      return std::nullopt;  // not broadcastable
    }
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// Every value of `from` is exactly representable in `to`.
bool lossless(at::ScalarType from, at::ScalarType to) {
  using S = at::ScalarType;
  if (from == to || from == S::Bool) return true;
  auto in = [&](std::initializer_list<S> types) {
    return std::find(types.begin(), types.end(), to) != types.end();
  };
  switch (from) {
    case S::Byte:
      return in({S::Short, S::Int, S::Long, S::Half, S::Float, S::Double});
    case S::Char:
      return in({S::Short, S::Int, S::Long, S::Half, S::Float, S::Double});
    case S::Short:
      return in({S::Int, S::Long, S::Float, S::Double});
    case S::Int:
      return in({S::Long, S::Double});
    case S::Half:
    case S::BFloat16:
      return in({S::Float, S::Double});
    case S::Float:
      return in({S::Double});
    default:
      return false;
  }
}

bool is_float(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf;
}

// The axes of a Squeeze/Unsqueeze: its second input from opset 13, an attribute before.
std::optional<std::vector<int64_t>> axes_of(const Node& n, int opset,
                                            const std::unordered_map<std::string, at::Tensor>& c) {
  if (opset >= 13) {
    if (n.inputs.size() < 2 || n.inputs[1].empty()) return std::nullopt;
    auto it = c.find(n.inputs[1]);
    if (it == c.end()) return std::nullopt;
    return ints_of(it->second);
  }
  return attr_ints(n, "axes");
}

// Computes `n` on constant inputs with libtorch, or nullopt when the op is not one we fold.
// `limit` bounds the output of the ops that can grow (checked before computing).
std::optional<at::Tensor> evaluate(const Node& n, const std::vector<at::Tensor>& in, int opset,
                                   int64_t limit) {
  const std::string& op = n.op_type;
  auto has = [&](size_t k) { return k < in.size() && in[k].defined(); };
  if (!has(0) && op != "Range") return std::nullopt;
  const at::Tensor& x = in[0];
  auto same_type = [&](const at::Tensor& t) { return t.to(x.scalar_type()); };
  if (op == "Identity") return x;
  if (op == "Transpose") {
    std::vector<int64_t> perm = attr_ints(n, "perm").value_or(std::vector<int64_t>{});
    if (perm.empty()) {
      for (int64_t d = x.dim() - 1; d >= 0; --d) perm.push_back(d);
    }
    return x.permute(perm);
  }
  if (op == "Cast") {
    auto to = attr_int(n, "to");
    if (!to) return std::nullopt;
    return x.to(from_onnx_dtype(static_cast<int32_t>(*to)));
  }
  if (op == "Reshape") {
    if (!has(1)) return std::nullopt;
    std::vector<int64_t> shape = ints_of(in[1]);
    const bool allowzero = attr_int(n, "allowzero").value_or(0) != 0;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 0 && !allowzero) {
        if (static_cast<int64_t>(k) >= x.dim()) return std::nullopt;
        shape[k] = x.size(static_cast<int64_t>(k));
      }
    }
    return x.reshape(shape);
  }
  if (op == "Flatten") {
    const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(1), x.dim());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
    return x.reshape({outer, outer == 0 ? 0 : x.numel() / outer});
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::optional<std::vector<int64_t>> axes;
    if (opset >= 13) {
      if (has(1)) axes = ints_of(in[1]);
    } else {
      axes = attr_ints(n, "axes");
    }
    if (op == "Squeeze") {
      if (!axes) return x.squeeze();
      std::vector<int64_t> a;
      for (int64_t v : *axes) a.push_back(normalize_axis(v, x.dim()));
      std::sort(a.rbegin(), a.rend());
      at::Tensor t = x;
      for (int64_t v : a) {
        if (t.size(v) != 1) return std::nullopt;
        t = t.squeeze(v);
      }
      return t;
    }
    if (!axes) return std::nullopt;
    const int64_t rank = x.dim() + static_cast<int64_t>(axes->size());
    std::vector<int64_t> a;
    for (int64_t v : *axes) a.push_back(normalize_axis(v, rank));
    std::sort(a.begin(), a.end());
    at::Tensor t = x;
    for (int64_t v : a) t = t.unsqueeze(v);
    return t;
  }
  if (op == "Concat") {
    auto axis = attr_int(n, "axis");
    if (!axis) return std::nullopt;
    std::vector<at::Tensor> parts;
    for (const auto& t : in) {
      if (!t.defined() || t.scalar_type() != x.scalar_type()) return std::nullopt;
      parts.push_back(t);
    }
    return at::cat(parts, normalize_axis(*axis, x.dim()));
  }
  if (op == "Gather") {
    if (!has(1)) return std::nullopt;
    const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), x.dim());
    at::Tensor idx = in[1].to(at::kLong);
    idx = at::where(idx < 0, idx + x.size(axis), idx);
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
    for (int64_t d : idx.sizes()) shape.push_back(d);
    for (int64_t d = axis + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
    return at::index_select(x, axis, idx.reshape({-1})).reshape(shape);
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset >= 10) {
      if (!has(1) || !has(2)) return std::nullopt;
      starts = ints_of(in[1]);
      ends = ints_of(in[2]);
      if (has(3)) axes = ints_of(in[3]);
      if (has(4)) steps = ints_of(in[4]);
    } else {
      starts = attr_ints(n, "starts").value_or(std::vector<int64_t>{});
      ends = attr_ints(n, "ends").value_or(std::vector<int64_t>{});
      axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
    }
    if (starts.size() != ends.size()) return std::nullopt;
    if (axes.empty()) {
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
    at::Tensor t = x;
    for (size_t k = 0; k < starts.size(); ++k) {
      if (steps[k] <= 0) return std::nullopt;
      const int64_t axis = normalize_axis(axes[k], x.dim());
      const int64_t dim = t.size(axis);
      auto clamp = [dim](int64_t v) {
        if (v < 0) v += dim;
        return std::clamp<int64_t>(v, 0, dim);
      };
      const int64_t s = clamp(starts[k]);
      const int64_t e = std::max(s, clamp(ends[k]));
      t = t.slice(axis, s, e, steps[k]);
    }
    return t;
  }
  if (op == "Shape") {
    const int64_t rank = x.dim();
    int64_t start =
        std::clamp<int64_t>(normalize_axis(attr_int(n, "start").value_or(0), rank), 0, rank);
    int64_t end =
        std::clamp<int64_t>(normalize_axis(attr_int(n, "end").value_or(rank), rank), 0, rank);
    std::vector<int64_t> dims(x.sizes().begin() + start, x.sizes().begin() + std::max(start, end));
    return at::tensor(dims, at::kLong);
  }
  if (op == "Size") return at::scalar_tensor(x.numel(), at::kLong);
  // Elementwise ops: ONNX gives both operands the same type; the result keeps it.
  static const std::unordered_set<std::string> kBinary = {
      "Add",   "Sub",  "Mul",     "Div",         "Pow",
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      "And",   "Or",   "Xor"};
  if (kBinary.count(op)) {
    if (!has(1)) return std::nullopt;
    const at::Tensor& y = in[1];
    auto shape = broadcast(x.sizes().vec(), y.sizes().vec());
    if (!shape) return std::nullopt;
    int64_t numel = 1;
    for (int64_t d : *shape) numel *= d;
    if (numel * static_cast<int64_t>(x.element_size()) > limit) return std::nullopt;
    if (op == "Add") return same_type(x + y);
    if (op == "Sub") return same_type(x - y);
    if (op == "Mul") return same_type(x * y);
    if (op == "Div") {
      if (at::isIntegralType(x.scalar_type(), /*includeBool=*/false)) {
        return same_type(at::div(x, y, "trunc"));
      }
      return same_type(x / y);
    }
    if (op == "Pow") return same_type(at::pow(x, y));
    if (op == "Equal") return at::eq(x, y);
    if (op == "Less") return at::lt(x, y);
    if (op == "Greater") return at::gt(x, y);
    if (op == "LessOrEqual") return at::le(x, y);
    if (op == "GreaterOrEqual") return at::ge(x, y);
    if (op == "And") return at::logical_and(x, y);
    if (op == "Or") return at::logical_or(x, y);
    if (op == "Xor") return at::logical_xor(x, y);
  }
  if (op == "Where") {
    if (!has(1) || !has(2)) return std::nullopt;
    auto shape = broadcast(x.sizes().vec(), in[1].sizes().vec());
    if (shape) shape = broadcast(*shape, in[2].sizes().vec());
    if (!shape) return std::nullopt;
    int64_t numel = 1;
    for (int64_t d : *shape) numel *= d;
    if (numel * static_cast<int64_t>(in[1].element_size()) > limit) return std::nullopt;
    return at::where(x.to(at::kBool), in[1], in[2]).to(in[1].scalar_type());
  }
  if (op == "Not") return at::logical_not(x);
  if (op == "Neg") return -x;
  if (is_float(x.scalar_type())) {
    if (op == "Sqrt") return at::sqrt(x);
    if (op == "Reciprocal") return at::reciprocal(x);
    if (op == "Exp") return at::exp(x);
    if (op == "Log") return at::log(x);
    if (op == "Erf") return at::erf(x);
    if (op == "Floor") return at::floor(x);
    if (op == "Ceil") return at::ceil(x);
  }
  if (op == "Abs") return at::abs(x);
  if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = ints_of(x);
    int64_t numel = 1;
    for (int64_t d : shape) {
      if (d < 0) return std::nullopt;
      numel *= d;
    }
    at::Tensor value = at::zeros({1}, at::kFloat);
    if (const auto* v = find_attr(n, "value")) {
      if (const auto* t = std::get_if<at::Tensor>(v)) value = *t;
    }
    if (numel * static_cast<int64_t>(value.element_size()) > limit) return std::nullopt;
    return at::full(shape, value.reshape({-1})[0].item(), value.options());
  }
  if (op == "Expand") {
    if (!has(1)) return std::nullopt;
    auto shape = broadcast(x.sizes().vec(), ints_of(in[1]));
    if (!shape) return std::nullopt;
    int64_t numel = 1;
    for (int64_t d : *shape) {
      if (d < 0) return std::nullopt;
      numel *= d;
    }
    if (numel * static_cast<int64_t>(x.element_size()) > limit) return std::nullopt;
    return x.expand(*shape);
  }
  if (op == "Range") {
    if (!has(0) || !has(1) || !has(2)) return std::nullopt;
    const double start = x.item<double>(), stop = in[1].item<double>(), step = in[2].item<double>();
    if (step == 0) return std::nullopt;
    const double count = std::max(0.0, std::ceil((stop - start) / step));
    if (count * static_cast<double>(x.element_size()) > static_cast<double>(limit)) {
      return std::nullopt;
    }
    return at::arange(x.item(), in[1].item(), in[2].item(), x.options());
  }
  return std::nullopt;
}

class GraphOptimizer {
 public:
  GraphOptimizer(Graph& g, const OptimizeOptions& options, int opset, bool main_graph,
                 std::unordered_set<std::string>& names)
      : g_(g), options_(options), opset_(opset), main_(main_graph), names_(names) {}

  void run() {
    for (auto& node : g_.nodes) {
      for (auto& attr : node.attributes) {
        if (auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
          GraphOptimizer(**sub, options_, opset_, false, names_).run();
        }
      }
    }
    index();
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (removed_[i]) continue;
      Node& n = g_.nodes[i];
      for (auto& in : n.inputs) {
        if (auto it = alias_.find(in); it != alias_.end()) in = it->second;
      }
      if (simplify(i)) continue;
      if (options_.fold_constants && fold(i)) continue;
      infer(g_.nodes[i]);
    }
    finish();
  }

 private:
  // ---- bookkeeping ----
  void index() {
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

  std::string fresh(const std::string& base) {
    for (size_t k = names_.size();; ++k) {
      std::string name = base + "_" + std::to_string(k);
      if (names_.insert(name).second) return name;
    }
  }

  const Node* producer(const std::string& v) const {
    auto it = producer_.find(v);
    if (it == producer_.end() || removed_[it->second]) return nullptr;
    return &g_.nodes[it->second];
  }

  // The producer of `v` when `v` is read only once (by the node being simplified) and may go.
  const Node* sole_producer(const std::string& v, const char* op) const {
    const Node* p = producer(v);
    if (p == nullptr || p->op_type != op || !p->domain.empty() || protected_.count(v)) {
      return nullptr;
    }
    auto it = uses_.find(v);
    return it != uses_.end() && it->second == 1 ? p : nullptr;
  }

  const at::Tensor* constant(const std::string& v) const {
    auto it = consts_.find(v);
    return it == consts_.end() ? nullptr : &it->second;
  }

  const TypeInfo* type(const std::string& v) const {
    auto it = types_.find(v);
    return it == types_.end() ? nullptr : &it->second;
  }

  void release(const std::string& v) {
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

  void remove(size_t i) {
    removed_[i] = true;
    for (const auto& in : g_.nodes[i].inputs) release(in);
  }

  // Node i computes the same as `to`: later readers of its output read `to` instead.
  bool replace_by(size_t i, const std::string& to) {
    const std::string out = g_.nodes[i].outputs[0];
    if (protected_.count(out)) return false;
    alias_[out] = to;
    uses_[to] += uses_[out];
    uses_[out] = 0;
    remove(i);
    return true;
  }

  void set_input(Node& n, size_t k, const std::string& v) {
    std::string old = n.inputs[k];
    n.inputs[k] = v;
    if (!v.empty()) ++uses_[v];
    release(old);
  }

  // A new constant (an initializer of the main graph, a Constant node of a subgraph).
  std::string add_constant(const std::string& base, at::Tensor t) {
    std::string name = fresh(base);
    record_constant(name, std::move(t));
    return name;
  }

  // A large folded transpose of a weight stays a view of the weight's storage: the serializer
  // writes it in order one tensor at a time (Note [Streaming serializer]), so folding copies no
  // weight bytes and peak memory does not grow. Other results are made contiguous (a small slice
  // of a big buffer does not keep the buffer's layout).
  void record_constant(const std::string& name, at::Tensor t) {
    t = t.detach();
    if (!t.is_contiguous() &&
        !(t.is_non_overlapping_and_dense() && bytes_of(t) > kSmallFoldBytes)) {
      t = t.contiguous();
    }
    types_[name] = TypeInfo(t.scalar_type(), t.sizes().vec());
    consts_[name] = t;
    folded_.push_back(name);
  }

  // ---- peepholes: true when node i was removed ----
  bool simplify(size_t i) {
    Node& n = g_.nodes[i];
    if (!n.domain.empty() || n.outputs.empty()) return false;
    const std::string& op = n.op_type;
    if (op == "Identity" && n.inputs.size() == 1) return replace_by(i, n.inputs[0]);
    if (op == "BatchNormalization") return fold_batch_norm(i);
    if (op == "Dropout") return drop_dropout(i);
    if (op == "Cast") return simplify_cast(i);
    if (op == "Transpose") return simplify_transpose(i);
    if (op == "Reshape") return simplify_reshape(i);
    if (op == "Squeeze" || op == "Unsqueeze") return simplify_squeeze(i);
    if (op == "Expand") return simplify_expand(i);
    if (op == "Add") return fuse_gemm(i);
    return false;
  }

  bool drop_dropout(size_t i) {
    Node& n = g_.nodes[i];
    if (!options_.eval_mode || n.inputs.empty()) return false;
    if (n.inputs.size() >= 3 && !n.inputs[2].empty()) {
      const at::Tensor* mode = constant(n.inputs[2]);
      if (mode == nullptr || mode->numel() != 1 || mode->to(at::kBool).item<bool>()) return false;
    }
    for (size_t k = 1; k < n.outputs.size(); ++k) {
      if (!n.outputs[k].empty() && (uses_[n.outputs[k]] > 0 || protected_.count(n.outputs[k]))) {
        return false;
      }
    }
    return replace_by(i, n.inputs[0]);
  }

  // Conv → BatchNormalization (inference) ⇒ Conv with W·s and (b − mean)·s + β, s = γ/√(var+ε).
  bool fold_batch_norm(size_t i) {
    Node& bn = g_.nodes[i];
    if (!options_.eval_mode || bn.inputs.size() != 5) return false;
    if (attr_int(bn, "training_mode").value_or(0) != 0) return false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) {
      if (!bn.outputs[k].empty() && (uses_[bn.outputs[k]] > 0 || protected_.count(bn.outputs[k]))) {
        return false;
      }
    }
    const Node* conv = sole_producer(bn.inputs[0], "Conv");
    if (conv == nullptr || conv->inputs.size() < 2) return false;
    const at::Tensor* w = constant(conv->inputs[1]);
    const at::Tensor* b =
        conv->inputs.size() > 2 && !conv->inputs[2].empty() ? constant(conv->inputs[2]) : nullptr;
    if (w == nullptr || w->dim() < 3 || !is_float(w->scalar_type())) return false;
    if (conv->inputs.size() > 2 && !conv->inputs[2].empty() && b == nullptr) return false;
    std::vector<const at::Tensor*> p;
    for (size_t k = 1; k < 5; ++k) {
      p.push_back(constant(bn.inputs[k]));
      if (p.back() == nullptr || p.back()->numel() != w->size(0)) return false;
    }
    float eps = 1e-5f;
    if (const auto* e = find_attr(bn, "epsilon")) {
      if (const auto* f = std::get_if<float>(e)) eps = *f;
    }
    at::NoGradGuard no_grad;
    const auto d = at::kDouble;
    at::Tensor s = p[0]->to(d).reshape({-1}) / at::sqrt(p[3]->to(d).reshape({-1}) + eps);
    std::vector<int64_t> bshape(w->dim(), 1);
    bshape[0] = -1;
    // The scale is computed in double; a float32 weight is multiplied in float32 (the product of
    // two floats rounded once, as torch.onnx folds it), without double copies of the weight.
    at::Tensor new_w = w->scalar_type() == at::kFloat
                           ? *w * s.to(at::kFloat).reshape(bshape)
                           : (w->to(d) * s.reshape(bshape)).to(w->scalar_type());
    at::Tensor bias = b != nullptr ? b->to(d).reshape({-1}) : at::zeros({w->size(0)}, d);
    at::Tensor new_b =
        ((bias - p[2]->to(d).reshape({-1})) * s + p[1]->to(d).reshape({-1})).to(w->scalar_type());
    const size_t ci = producer_.at(bn.inputs[0]);
    Node& c = g_.nodes[ci];
    std::string w_name = add_constant(c.inputs[1], new_w);
    std::string b_name = add_constant(
        c.inputs.size() > 2 && !c.inputs[2].empty() ? c.inputs[2] : c.inputs[1] + "_bias", new_b);
    set_input(c, 1, w_name);
    if (c.inputs.size() > 2) {
      set_input(c, 2, b_name);
    } else {
      c.inputs.push_back(b_name);
      ++uses_[b_name];
    }
    // The conv now produces the batch norm's output; its own output had no other reader.
    const std::string old_out = c.outputs[0];
    c.outputs[0] = bn.outputs[0];
    producer_[c.outputs[0]] = ci;
    uses_[old_out] = 0;
    if (auto t = types_.find(old_out); t != types_.end()) types_[c.outputs[0]] = t->second;
    removed_[i] = true;
    for (size_t k = 1; k < 5; ++k) release(bn.inputs[k]);
    return true;
  }

  bool simplify_cast(size_t i) {
    Node& n = g_.nodes[i];
    auto to_code = attr_int(n, "to");
    if (n.inputs.size() != 1 || !to_code) return false;
    at::ScalarType to;
    try {
      to = from_onnx_dtype(static_cast<int32_t>(*to_code));
    } catch (const std::exception&) {
      return false;
    }
    // Cast(Cast(x, a), b) ⇒ Cast(x, b) when the first cast loses nothing.
    if (const Node* inner = sole_producer(n.inputs[0], "Cast")) {
      const TypeInfo* src = type(inner->inputs[0]);
      auto mid = attr_int(*inner, "to");
      if (src != nullptr && src->dtype != at::ScalarType::Undefined && mid && !src->sequence) {
        try {
          if (lossless(src->dtype, from_onnx_dtype(static_cast<int32_t>(*mid)))) {
            set_input(n, 0, std::string(inner->inputs[0]));
          }
        } catch (const std::exception&) {
        }
      }
    }
    const TypeInfo* src = type(n.inputs[0]);
    if (src != nullptr && !src->sequence && src->dtype == to) return replace_by(i, n.inputs[0]);
    return false;
  }

  std::optional<std::vector<int64_t>> perm_of(const Node& n) const {
    if (auto perm = attr_ints(n, "perm")) return perm;
    const TypeInfo* t = type(n.inputs[0]);
    if (t == nullptr || !t->shape) return std::nullopt;
    std::vector<int64_t> perm;
    for (int64_t d = static_cast<int64_t>(t->shape->size()) - 1; d >= 0; --d) perm.push_back(d);
    return perm;
  }

  bool simplify_transpose(size_t i) {
    Node& n = g_.nodes[i];
    if (n.inputs.size() != 1) return false;
    auto perm = perm_of(n);
    if (!perm) return false;
    if (const Node* inner = sole_producer(n.inputs[0], "Transpose")) {
      auto p1 = perm_of(*inner);
      if (p1 && p1->size() == perm->size()) {
        std::vector<int64_t> q(perm->size());
        for (size_t k = 0; k < q.size(); ++k) q[k] = (*p1)[(*perm)[k]];
        perm = q;
        set_attr(n, {"perm", q});
        set_input(n, 0, std::string(inner->inputs[0]));
      }
    }
    for (size_t k = 0; k < perm->size(); ++k) {
      if ((*perm)[k] != static_cast<int64_t>(k)) return false;
    }
    return replace_by(i, n.inputs[0]);
  }

  // The shape a Reshape gives, with 0s resolved and -1 computed when the input shape is known.
  std::optional<Shape> reshape_target(const Node& n) const {
    if (n.inputs.size() != 2) return std::nullopt;
    const at::Tensor* s = constant(n.inputs[1]);
    if (s == nullptr) return std::nullopt;
    Shape shape = ints_of(*s);
    const bool allowzero = attr_int(n, "allowzero").value_or(0) != 0;
    const TypeInfo* t = type(n.inputs[0]);
    const bool known = t != nullptr && is_static(*t);
    int64_t product = 1, unknown = -1;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 0 && !allowzero) {
        if (t == nullptr || !t->shape || k >= t->shape->size()) return std::nullopt;
        shape[k] = (*t->shape)[k];
      }
      if (shape[k] == -1) {
        unknown = static_cast<int64_t>(k);
      } else {
        product *= shape[k];
      }
    }
    if (unknown >= 0 && known) {
      int64_t numel = 1;
      for (int64_t d : *t->shape) numel *= d;
      if (product > 0) shape[unknown] = numel / product;
    }
    return shape;
  }

  bool simplify_reshape(size_t i) {
    Node& n = g_.nodes[i];
    if (n.inputs.size() != 2) return false;
    const at::Tensor* s = constant(n.inputs[1]);
    if (s == nullptr) return false;
    // Reshape(Reshape/Flatten/Squeeze/Unsqueeze(x), s) ⇒ Reshape(x, s) when s copies no dim.
    const bool allowzero = attr_int(n, "allowzero").value_or(0) != 0;
    const auto target = ints_of(*s);
    const bool copies = !allowzero && std::count(target.begin(), target.end(), 0) > 0;
    if (!copies) {
      for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) {
        if (const Node* inner = sole_producer(n.inputs[0], op)) {
          set_input(n, 0, std::string(inner->inputs[0]));
          break;
        }
      }
    }
    const TypeInfo* t = type(n.inputs[0]);
    auto shape = reshape_target(n);
    if (t != nullptr && is_static(*t) && shape && *shape == *t->shape) {
      return replace_by(i, n.inputs[0]);
    }
    return false;
  }

  bool simplify_squeeze(size_t i) {
    Node& n = g_.nodes[i];
    const bool squeeze = n.op_type == "Squeeze";
    auto axes = axes_of(n, opset_, consts_);
    if (!axes || n.inputs.empty()) return false;
    const Node* inner = producer(n.inputs[0]);
    if (inner == nullptr || !inner->domain.empty()) return false;
    auto sorted = [](std::vector<int64_t> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    // Squeeze(Unsqueeze(x, a), a) and Unsqueeze(Squeeze(x, a), a) are x (both axes lists refer
    // to the same rank, that of the unsqueezed tensor).
    if (inner->op_type == (squeeze ? "Unsqueeze" : "Squeeze")) {
      auto inner_axes = axes_of(*inner, opset_, consts_);
      if (inner_axes && !inner_axes->empty() && sorted(*inner_axes) == sorted(*axes)) {
        return replace_by(i, std::string(inner->inputs[0]));
      }
      return false;
    }
    // Unsqueeze(Unsqueeze(x, a), b) ⇒ Unsqueeze(x, a ∪ b mapped to the final rank).
    if (!squeeze && inner->op_type == "Unsqueeze" && sole_producer(n.inputs[0], "Unsqueeze")) {
      auto a = axes_of(*inner, opset_, consts_);
      if (!a) return false;
      const TypeInfo* t = type(inner->inputs[0]);
      const bool negative =
          std::any_of(a->begin(), a->end(), [](int64_t v) { return v < 0; }) ||
          std::any_of(axes->begin(), axes->end(), [](int64_t v) { return v < 0; });
      if (negative && (t == nullptr || !t->shape)) return false;
      const int64_t rank_mid = negative ? static_cast<int64_t>(t->shape->size() + a->size()) : 0;
      const int64_t rank_out = rank_mid + static_cast<int64_t>(axes->size());
      std::vector<int64_t> b;
      for (int64_t v : *axes) b.push_back(negative ? normalize_axis(v, rank_out) : v);
      std::vector<int64_t> a_mid;
      for (int64_t v : *a) a_mid.push_back(negative ? normalize_axis(v, rank_mid) : v);
      // Position j of the intermediate tensor goes to the j-th final position not in b.
      std::vector<int64_t> combined = b;
      std::vector<int64_t> bs = sorted(b);
      for (int64_t j : a_mid) {
        int64_t pos = j;
        for (int64_t v : bs) {
          if (v <= pos) ++pos;
        }
        combined.push_back(pos);
      }
      std::vector<int64_t> c = sorted(combined);
      if (std::adjacent_find(c.begin(), c.end()) != c.end()) return false;
      std::string x = inner->inputs[0];
      if (opset_ >= 13) {
        set_input(n, 1, add_constant("axes", at::tensor(c, at::kLong)));
      } else {
        set_attr(n, {"axes", c});
      }
      set_input(n, 0, x);
    }
    return false;
  }

  bool simplify_expand(size_t i) {
    Node& n = g_.nodes[i];
    if (n.inputs.size() != 2) return false;
    const at::Tensor* s = constant(n.inputs[1]);
    const TypeInfo* t = type(n.inputs[0]);
    if (s == nullptr || t == nullptr || !is_static(*t)) return false;
    auto shape = broadcast(*t->shape, ints_of(*s));
    if (shape && *shape == *t->shape) return replace_by(i, n.inputs[0]);
    return false;
  }

  // Add(MatMul(A, B), C) with A and B 2-D ⇒ Gemm(A, B, C) (torch.onnx's Linear on 2-D inputs);
  // MatMul(A, Transpose(W)) becomes Gemm's transB.
  bool fuse_gemm(size_t i) {
    Node& n = g_.nodes[i];
    if (n.inputs.size() != 2) return false;
    for (size_t side = 0; side < 2; ++side) {
      const Node* mm = sole_producer(n.inputs[side], "MatMul");
      if (mm == nullptr || mm->inputs.size() != 2) continue;
      const TypeInfo* a = type(mm->inputs[0]);
      const TypeInfo* b = type(mm->inputs[1]);
      const TypeInfo* c = type(n.inputs[1 - side]);
      if (a == nullptr || b == nullptr || c == nullptr || !a->shape || !b->shape || !c->shape) {
        continue;
      }
      if (a->shape->size() != 2 || b->shape->size() != 2 || !is_float(a->dtype) ||
          a->dtype != b->dtype || c->dtype != a->dtype) {
        continue;
      }
      const int64_t m = (*a->shape)[0], cols = (*b->shape)[1];
      const Shape& cs = *c->shape;
      // C must broadcast to [M, N] one way (Gemm's unidirectional broadcast).
      if (cs.size() > 2) continue;
      bool ok = true;
      for (size_t k = 0; k < cs.size(); ++k) {
        const int64_t want = (cs.size() == 2 && k == 0) ? m : cols;
        ok = ok && (cs[k] == 1 || (cs[k] == want && want >= 0));
      }
      if (!ok) continue;
      const size_t mi = producer_.at(n.inputs[side]);
      Node& matmul = g_.nodes[mi];
      std::string bias = n.inputs[1 - side];
      std::string a_name = matmul.inputs[0], b_name = matmul.inputs[1];
      n.op_type = "Gemm";
      n.name = fresh("Gemm");
      n.inputs = {a_name, b_name, bias};
      // The MatMul's reads move to the Gemm; its output had no other reader.
      uses_[matmul.outputs[0]] = 0;
      removed_[mi] = true;
      if (const Node* tr = sole_producer(b_name, "Transpose")) {
        auto perm = perm_of(*tr);
        if (perm && *perm == std::vector<int64_t>{1, 0}) {
          set_attr(n, {"transB", int64_t{1}});
          set_input(n, 1, std::string(tr->inputs[0]));
        }
      }
      return false;
    }
    return false;
  }

  // ---- constant folding ----
  bool fold(size_t i) {
    Node& n = g_.nodes[i];
    // A value a subgraph reads may become an initializer (its name stays); a graph output not.
    if (!n.domain.empty() || n.outputs.size() != 1 || n.op_type == "Constant" ||
        graph_outputs_.count(n.outputs[0]) || has_subgraph(n)) {
      return false;
    }
    std::vector<at::Tensor> in;
    int64_t freed = 0;
    std::unordered_set<std::string> seen;
    for (const auto& name : n.inputs) {
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      const at::Tensor* c = constant(name);
      if (c == nullptr) {
        // Shape/Size of a value whose shape is static.
        const TypeInfo* t = type(name);
        if ((n.op_type == "Shape" || n.op_type == "Size") && in.empty() && t != nullptr &&
            !t->sequence && is_static(*t)) {
          in.push_back(at::empty(*t->shape, at::TensorOptions().device(at::kMeta)));
          continue;
        }
        return false;
      }
      in.push_back(*c);
      if (seen.insert(name).second && uses_[name] == 1) freed += bytes_of(*c);
    }
    if (in.empty()) return false;
    const int64_t limit = std::max(kSmallFoldBytes, freed);
    std::optional<at::Tensor> out;
    try {
      at::NoGradGuard no_grad;
      out = evaluate(n, in, opset_, limit);
      if (out) to_onnx_dtype(out->scalar_type());
    } catch (const std::exception&) {
      return false;  // left to ONNX Runtime
    }
    if (!out || out->is_meta() || bytes_of(*out) > limit) return false;
    record_constant(n.outputs[0], *out);
    remove(i);
    return true;
  }

  // ---- light type inference ----
  void set_type(const std::string& name, at::ScalarType dtype, std::optional<Shape> shape) {
    if (!name.empty()) types_[name] = TypeInfo(dtype, std::move(shape));
  }

  void infer(const Node& n) {
    if (!n.domain.empty() || n.outputs.empty() || n.inputs.empty()) return;
    const std::string& op = n.op_type;
    const TypeInfo* x = type(n.inputs[0]);
    if (x == nullptr || x->sequence) return;
    const std::string& out = n.outputs[0];
    static const std::unordered_set<std::string> kSame = {"Identity",
                                                          "Relu",
                                                          "Erf",
                                                          "Sqrt",
                                                          "Neg",
                                                          "Exp",
                                                          "Log",
                                                          "Tanh",
                                                          "Sigmoid",
                                                          "Softmax",
                                                          "LogSoftmax",
                                                          "Abs",
                                                          "Gelu",
                                                          "LeakyRelu",
                                                          "Elu",
                                                          "Clip",
                                                          "HardSigmoid",
                                                          "Reciprocal",
                                                          "Floor",
                                                          "Ceil",
                                                          "Round",
                                                          "Sin",
                                                          "Cos",
                                                          "Dropout",
                                                          "LayerNormalization",
                                                          "BatchNormalization",
                                                          "InstanceNormalization",
                                                          "HardSwish",
                                                          "Softplus",
                                                          "Selu",
                                                          "Celu",
                                                          "PRelu",
                                                          "Sign"};
    static const std::unordered_set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div",
                                                               "Pow", "Max", "Min", "Mod"};
    static const std::unordered_set<std::string> kCompare = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
    if (kSame.count(op)) {
      set_type(out, x->dtype, x->shape);
    } else if (op == "Cast") {
      if (auto to = attr_int(n, "to")) {
        try {
          set_type(out, from_onnx_dtype(static_cast<int32_t>(*to)), x->shape);
        } catch (const std::exception&) {
        }
      }
    } else if (kBroadcast.count(op) || kCompare.count(op) || op == "Where") {
      std::optional<Shape> shape = x->shape;
      at::ScalarType dtype = kCompare.count(op) ? at::kBool : x->dtype;
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        const TypeInfo* y = type(n.inputs[k]);
        if (y == nullptr) return;
        if (op == "Where" && k == 1) dtype = y->dtype;
        if (shape && y->shape) {
          shape = broadcast(*shape, *y->shape);
        } else {
          shape.reset();
        }
      }
      if (op == "Where" && n.inputs.size() != 3) return;
      set_type(out, dtype, shape);
    } else if (op == "Not") {
      set_type(out, at::kBool, x->shape);
    } else if (op == "Transpose") {
      if (!x->shape) return;
      auto perm = perm_of(n);
      if (!perm || perm->size() != x->shape->size()) return;
      Shape s;
      for (int64_t p : *perm) s.push_back((*x->shape)[p]);
      set_type(out, x->dtype, s);
    } else if (op == "Reshape") {
      auto s = reshape_target(n);
      if (s && std::count(s->begin(), s->end(), -1) <= 1) set_type(out, x->dtype, s);
    } else if (op == "Unsqueeze" || op == "Squeeze") {
      auto axes = axes_of(n, opset_, consts_);
      if (!x->shape || !axes) return;
      Shape s = *x->shape;
      if (op == "Unsqueeze") {
        const int64_t rank = static_cast<int64_t>(s.size() + axes->size());
        std::vector<int64_t> a;
        for (int64_t v : *axes) a.push_back(normalize_axis(v, rank));
        std::sort(a.begin(), a.end());
        for (int64_t v : a) {
          if (v < 0 || v > static_cast<int64_t>(s.size())) return;
          s.insert(s.begin() + v, 1);
        }
      } else {
        std::vector<int64_t> a;
        for (int64_t v : *axes) a.push_back(normalize_axis(v, static_cast<int64_t>(s.size())));
        std::sort(a.rbegin(), a.rend());
        for (int64_t v : a) {
          if (v < 0 || v >= static_cast<int64_t>(s.size())) return;
          s.erase(s.begin() + v);
        }
      }
      set_type(out, x->dtype, s);
    } else if (op == "MatMul" && n.inputs.size() == 2) {
      const TypeInfo* y = type(n.inputs[1]);
      if (y == nullptr || !x->shape || !y->shape || x->shape->size() < 2 || y->shape->size() < 2) {
        return;
      }
      const Shape &a = *x->shape, &b = *y->shape;
      auto batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
      if (!batch) return;
      batch->push_back(a[a.size() - 2]);
      batch->push_back(b.back());
      set_type(out, x->dtype, batch);
    } else if (op == "Gemm" && n.inputs.size() >= 2) {
      const TypeInfo* y = type(n.inputs[1]);
      if (y == nullptr || !x->shape || !y->shape || x->shape->size() != 2 ||
          y->shape->size() != 2) {
        return;
      }
      const bool ta = attr_int(n, "transA").value_or(0) != 0;
      const bool tb = attr_int(n, "transB").value_or(0) != 0;
      set_type(out, x->dtype, Shape{(*x->shape)[ta ? 1 : 0], (*y->shape)[tb ? 0 : 1]});
    } else if (op == "Shape") {
      if (!x->shape) return;
      const int64_t rank = static_cast<int64_t>(x->shape->size());
      int64_t start =
          std::clamp<int64_t>(normalize_axis(attr_int(n, "start").value_or(0), rank), 0, rank);
      int64_t end =
          std::clamp<int64_t>(normalize_axis(attr_int(n, "end").value_or(rank), rank), 0, rank);
      set_type(out, at::kLong, Shape{std::max<int64_t>(0, end - start)});
    } else if (op == "Gather" && n.inputs.size() == 2) {
      const TypeInfo* idx = type(n.inputs[1]);
      if (idx == nullptr || !x->shape || !idx->shape) return;
      const int64_t rank = static_cast<int64_t>(x->shape->size());
      const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), rank);
      if (axis < 0 || axis >= rank) return;
      Shape s(x->shape->begin(), x->shape->begin() + axis);
      s.insert(s.end(), idx->shape->begin(), idx->shape->end());
      s.insert(s.end(), x->shape->begin() + axis + 1, x->shape->end());
      set_type(out, x->dtype, s);
    } else if (op == "Flatten") {
      if (!x->shape) return;
      const int64_t rank = static_cast<int64_t>(x->shape->size());
      const int64_t axis = normalize_axis(attr_int(n, "axis").value_or(1), rank);
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t& p = d < axis ? outer : inner;
        p = (p < 0 || (*x->shape)[d] < 0) ? -1 : p * (*x->shape)[d];
      }
      set_type(out, x->dtype, Shape{outer, inner});
    } else if (op == "Expand" && n.inputs.size() == 2) {
      const at::Tensor* s = constant(n.inputs[1]);
      if (s == nullptr || !x->shape) return;
      set_type(out, x->dtype, broadcast(*x->shape, ints_of(*s)));
    }
  }

  // ---- rebuilding the graph ----
  void finish() {
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
      nodes.push_back(std::move(n));
    }
    // Dead code (backwards from the outputs; subgraph reads count as reads of their node).
    std::unordered_set<std::string> live;
    for (const auto& out : g_.outputs) live.insert(out.name);
    std::vector<bool> keep(nodes.size(), false);
    for (size_t i = nodes.size(); i-- > 0;) {
      const Node& n = nodes[i];
      bool used = false;
      for (const auto& out : n.outputs) used = used || live.count(out);
      if (!used) continue;
      keep[i] = true;
      live.insert(n.inputs.begin(), n.inputs.end());
      if (has_subgraph(n)) {
        for (const auto& attr : n.attributes) {
          if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
            collect_reads(**sub, live);
          }
        }
      }
    }
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
            {"Constant", "", fresh("Constant"), {}, {name}, {{"value", t}}, "", {}});
      }
    }
    for (auto& c : constants) kept.push_back(std::move(c));
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (keep[i]) kept.push_back(std::move(nodes[i]));
    }
    g_.nodes = std::move(kept);
    g_.initializers = std::move(inits);
    // Known types: folded values get theirs from their tensors; removed values are forgotten.
    if (!g_.value_types.empty() || !folded_.empty()) {
      for (auto it = g_.value_types.begin(); it != g_.value_types.end();) {
        it = live.count(it->first) || graph_inputs_.count(it->first) ? std::next(it)
                                                                     : g_.value_types.erase(it);
      }
      for (const auto& name : folded_) {
        if (live.count(name) && !renames.count(name)) g_.value_types[name] = types_.at(name);
      }
    }
  }

  Graph& g_;
  const OptimizeOptions& options_;
  int opset_;
  bool main_;
  std::unordered_set<std::string>& names_;

  std::vector<bool> removed_;
  std::unordered_map<std::string, int64_t> uses_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::string> alias_;
  std::unordered_set<std::string> protected_;
  std::unordered_set<std::string> graph_inputs_;
  std::unordered_set<std::string> graph_outputs_;
  std::unordered_map<size_t, std::vector<std::string>> subgraph_reads_;
  std::unordered_map<std::string, at::Tensor> consts_;
  std::unordered_map<std::string, TypeInfo> types_;
  std::vector<std::string> folded_;
};

}  // namespace

void optimize_model(ir::Model& model, const OptimizeOptions& options) {
  std::unordered_set<std::string> names;
  collect_names(model.graph, names);
  GraphOptimizer(model.graph, options, model.opset, true, names).run();
}

}  // namespace torchonnx
