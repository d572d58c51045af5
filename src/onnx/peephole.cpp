// The peepholes of the optimizer (Note [Graph optimization] in optimize.cpp): each looks at one
// node and the nodes that produce its inputs, and either rewrites it in place or removes it (an
// alias to an input, see GraphOptimizer::replace_by).
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "common/mapped_file.h"
#include "onnx/dtype.h"
#include "onnx/graph_optimizer.h"

namespace torchonnx::optimizer {

using ir::Graph;
using ir::Node;
using ir::TypeInfo;

namespace {

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

}  // namespace

// Dispatches node i to its peephole; true when it was removed.
bool GraphOptimizer::simplify(size_t i) {
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

bool GraphOptimizer::drop_dropout(size_t i) {
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
bool GraphOptimizer::fold_batch_norm(size_t i) {
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
  // The weight read here stays in the page cache, not in this process: Note [Zero-copy weights].
  release_mapped_pages(*w);
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

bool GraphOptimizer::simplify_cast(size_t i) {
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

bool GraphOptimizer::simplify_transpose(size_t i) {
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

// Gemm(Transpose(A), B) / Gemm(A, Transpose(B)) ⇒ Gemm(A, B) with transA / transB flipped, when
// the Transpose (a 2-D one) is read by that Gemm only. Before the sweep, so that a Transpose of a
// weight is not folded into a transposed copy: a C++ torch::nn::Linear traces as addmm(bias, x,
// t(weight)), and the exported Gemm reads the weight itself, under its own name, with transB=1
// (as torch.onnx's graph of the spec's AlexNet shows).
void GraphOptimizer::fold_gemm_transposes() {
  std::unordered_map<std::string, int64_t> uses;
  std::unordered_map<std::string, size_t> producer;
  std::function<void(const Graph&)> count_subgraph_reads = [&](const Graph& sub) {
    for (const auto& node : sub.nodes) {
      for (const auto& in : node.inputs) ++uses[in];
      for (const auto& attr : node.attributes) {
        if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
          count_subgraph_reads(**g);
        }
      }
    }
  };
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const Node& node = g_.nodes[i];
    for (const auto& in : node.inputs) ++uses[in];
    for (const auto& out : node.outputs) producer[out] = i;
    for (const auto& attr : node.attributes) {
      if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        count_subgraph_reads(**g);
      }
    }
  }
  for (const auto& out : g_.outputs) ++uses[out.name];
  std::vector<bool> dropped(g_.nodes.size(), false);
  for (Node& gemm : g_.nodes) {
    if (gemm.op_type != "Gemm" || !gemm.domain.empty() || gemm.inputs.size() < 2) continue;
    for (size_t side = 0; side < 2; ++side) {
      auto it = producer.find(gemm.inputs[side]);
      if (it == producer.end() || uses[gemm.inputs[side]] != 1) continue;
      const Node& tr = g_.nodes[it->second];
      if (tr.op_type != "Transpose" || !tr.domain.empty() || tr.inputs.size() != 1) continue;
      auto perm = attr_ints(tr, "perm");
      if (perm && *perm != std::vector<int64_t>{1, 0}) continue;  // none: reversed (2-D: [1, 0])
      const char* attr = side == 0 ? "transA" : "transB";
      set_attr(gemm, {attr, int64_t{1 - attr_int(gemm, attr).value_or(0)}});
      gemm.inputs[side] = tr.inputs[0];
      touched_.insert(gemm.name);
      dropped[it->second] = true;
    }
  }
  std::vector<Node> kept;
  kept.reserve(g_.nodes.size());
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (!dropped[i]) kept.push_back(std::move(g_.nodes[i]));
  }
  g_.nodes = std::move(kept);
}

bool GraphOptimizer::simplify_reshape(size_t i) {
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

bool GraphOptimizer::simplify_squeeze(size_t i) {
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
    const bool negative = std::any_of(a->begin(), a->end(), [](int64_t v) { return v < 0; }) ||
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

bool GraphOptimizer::simplify_expand(size_t i) {
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
bool GraphOptimizer::fuse_gemm(size_t i) {
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

}  // namespace torchonnx::optimizer
