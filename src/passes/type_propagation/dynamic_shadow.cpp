// The dynamic-axes shadow runs of the type propagation.
//
// Note [Dynamic axes]
// A dim named in dynamic_axes has the example's size only in the example. Every value is
// propagated twice over: on the example, and on a shadow where the dynamic dims have other sizes.
// A number, list or known tensor that differs between the two (x.size(0), [b, -1],
// NumToTensor(b)) varies: it stays known in each run (so view(x, [b, -1]) still propagates), but
// is never folded, so the converters compute it in the graph (Shape, Gather, Concat) instead of
// baking the example's value; a tensor dim that differs is unknown in the value's type (written
// as a dim without a value, or with the axis's name on graph inputs and outputs). A model whose
// shadow run fails somewhere (a reshape to a fixed size, a broadcast against a fixed dim) is tried
// with other shadow sizes; where every choice fails, the results of that node vary entirely.
//
// Note [Varying in another shadow run]
// One shadow run can agree with the example by chance: a detection model resizes its image so
// that the shorter side is 800, so a square example and a square shadow (2h+1 x 2w+1) give the
// same resized sizes, and every size after the resize would look static. Two more shadow runs, of
// other aspect ratios (h+1 x 2w+1 ..., stretched; and a square of the largest dynamic size), are
// made on copies of the graph; a value that varies in any run that failed no more often than the
// chosen one varies (is not folded; its varying dims are unknown in its type).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <functional>

#include "passes/type_propagation/propagator.h"

namespace torchonnx::passes::type_propagation {

// Marks `v` as varying with the dynamic axes; the dims of a tensor that differ from its shadow
// become unknown in its type.
void Propagator::set_shadow(Value* v, c10::IValue value) {
  auto found = env.find(v);
  if (found != env.end() && found->second.isTensor() && !approximate.count(v)) {
    const at::Tensor& t = found->second.toTensor();
    if (t.defined()) {
      const bool comparable =
          value.isTensor() && value.toTensor().defined() && value.toTensor().dim() == t.dim();
      std::vector<c10::optional<int64_t>> sizes;
      for (int64_t d = 0; d < t.dim(); ++d) {
        if (comparable && value.toTensor().size(d) == t.size(d)) {
          sizes.emplace_back(t.size(d));
        } else {
          sizes.emplace_back(c10::nullopt);
        }
      }
      v->setType(c10::TensorType::create(t.scalar_type(), at::Device(at::kCPU),
                                         c10::VaryingShape<int64_t>(sizes),
                                         c10::VaryingShape<int64_t>(sizes.size()), false));
    }
  }
  if (value.isNone()) concrete.erase(v);  // not known in the shadow run: not known
  shadow[v] = std::move(value);
  apply_forced(v);
}

// An element of a list whose length or elements vary (x.split(2) over a dynamic axis): the
// element taken may be any of them, and its dims that differ between them vary.
bool Propagator::picks_from_varying_list(Node* node) const {
  static const SymbolSet kPicks = symbols({"aten::__getitem__", "aten::pop"});
  if (!kPicks.count(node->kind()) || node->inputs().empty()) return false;
  auto found = shadow.find(node->input(0));
  return found != shadow.end() && found->second.isList() && env.count(node->input(0));
}

// A stand-in shadow for `element` whose dims differ where any tensor of `lists` differs.
std::optional<c10::IValue> Propagator::union_of_elements(const at::Tensor& element,
                                                         const std::vector<c10::IValue>& lists) {
  if (!element.defined()) return std::nullopt;
  std::vector<int64_t> sizes = element.sizes().vec();
  bool any = false;
  for (const auto& list : lists) {
    for (const auto& e : list.toListRef()) {
      if (!e.isTensor() || !e.toTensor().defined() || e.toTensor().dim() != element.dim()) {
        continue;
      }
      for (int64_t d = 0; d < element.dim(); ++d) {
        if (e.toTensor().size(d) != element.size(d) && sizes[d] == element.size(d)) {
          sizes[d] = element.size(d) + 1;
          any = true;
        }
      }
    }
  }
  if (!any) return std::nullopt;
  return c10::IValue(at::empty(sizes, element.options().device(at::kMeta)));
}

bool Propagator::forced_varies(const Value* v) const {
  auto found = forced.find(v);
  return found != forced.end() && found->second.varies;
}

// Makes the dims that vary in another shadow run unknown in `v`'s type.
void Propagator::apply_forced(Value* v) {
  if (forced.empty()) return;
  auto found = forced.find(v);
  if (found == forced.end() || found->second.unknown_dims.empty()) return;
  auto type = v->type()->cast<c10::TensorType>();
  if (!type) return;
  auto sizes = type->sizes().sizes();
  if (!sizes || sizes->size() != found->second.unknown_dims.size()) return;
  bool changed = false;
  for (size_t d = 0; d < sizes->size(); ++d) {
    if (found->second.unknown_dims[d] && (*sizes)[d].has_value()) {
      (*sizes)[d] = c10::nullopt;
      changed = true;
    }
  }
  if (!changed) return;
  v->setType(c10::TensorType::create(type->scalarType(), at::Device(at::kCPU),
                                     c10::VaryingShape<int64_t>(*sizes),
                                     c10::VaryingShape<int64_t>(sizes->size()), false));
}

// Gives `to` the shadow of `from`, if it has one.
void Propagator::copy_shadow(Value* to, Value* from) {
  auto found = shadow.find(from);
  if (found != shadow.end())
    set_shadow(to, found->second.isList() ? copy_list(found->second) : found->second);
}

void propagate_with_shadows(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs,
                            bool fold, const DynamicDims& dynamic) {
  auto each = [](std::function<int64_t(int64_t)> f) -> ShadowSizes {
    return [f](std::vector<int64_t> sizes, const std::vector<int64_t>& dims) {
      for (int64_t d : dims) sizes[d] = f(sizes[d]);
      return sizes;
    };
  };
  const std::vector<ShadowSizes> choices = {each([](int64_t s) { return 2 * s + 1; }),
                                            each([](int64_t s) { return s + 1; }),
                                            each([](int64_t s) { return s > 1 ? s - 1 : s + 2; })};
  const std::vector<ShadowSizes> others = {
      [](std::vector<int64_t> sizes, const std::vector<int64_t>& dims) {
        for (size_t k = 0; k < dims.size(); ++k) {
          sizes[dims[k]] = sizes[dims[k]] * static_cast<int64_t>(k + 1) + 1;
        }
        return sizes;
      },
      [](std::vector<int64_t> sizes, const std::vector<int64_t>& dims) {
        int64_t largest = 0;
        for (int64_t d : dims) largest = std::max(largest, sizes[d]);
        for (int64_t d : dims) sizes[d] = 2 * largest + 1;
        return sizes;
      }};
  size_t best = 0;
  int fewest = -1;
  for (size_t c = 0; c < choices.size(); ++c) {
    auto trial = graph.copy();
    int failures = propagate(*trial, inputs, false, dynamic, choices[c]);
    if (fewest < 0 || failures < fewest) {
      fewest = failures;
      best = c;
    }
    if (failures == 0) break;
  }
  std::vector<VaryInfo> forced;
  for (const ShadowSizes& other : others) {
    auto trial = graph.copy();
    std::vector<VaryInfo> found;
    if (propagate(*trial, inputs, false, dynamic, other, nullptr, &found) > fewest) continue;
    if (forced.empty()) {
      forced = std::move(found);
      continue;
    }
    for (size_t i = 0; i < forced.size() && i < found.size(); ++i) {
      forced[i].varies = forced[i].varies || found[i].varies;
      if (forced[i].unknown_dims.empty()) {
        forced[i].unknown_dims = found[i].unknown_dims;
      } else if (found[i].unknown_dims.size() == forced[i].unknown_dims.size()) {
        for (size_t d = 0; d < found[i].unknown_dims.size(); ++d) {
          forced[i].unknown_dims[d] = forced[i].unknown_dims[d] || found[i].unknown_dims[d];
        }
      }
    }
  }
  propagate(graph, inputs, fold, dynamic, choices[best], forced.empty() ? nullptr : &forced);
}

}  // namespace torchonnx::passes::type_propagation
