#include "symbolic/registry.h"

#include <stdexcept>

#include "symbolic/ops/families.h"

namespace torchonnx::symbolic {

void Registry::add(const std::string& op, OpsetRange range, Converter fn) {
  add_registration(op, {range, std::move(fn)});
}

void Registry::add_unnamed(const std::string& kind, OpsetRange range, Converter fn) {
  add_registration(kind, {range, std::move(fn), true});
}

void Registry::add_registration(const std::string& op, Registration r) {
  if (r.range.since > r.range.until) {
    throw std::logic_error("empty opset range for " + op);
  }
  auto& regs = entries_[op];
  for (const auto& other : regs) {
    if (other.range.since <= r.range.until && r.range.since <= other.range.until) {
      throw std::logic_error("overlapping opset ranges registered for " + op);
    }
  }
  regs.push_back(std::move(r));
}

void Registry::alias(const std::string& op, const std::string& target) {
  std::vector<std::pair<std::string, Registration>> copies;
  for (auto it = entries_.lower_bound(target); it != entries_.end(); ++it) {
    const std::string& name = it->first;
    if (name != target && name.rfind(target + ".", 0) != 0) break;
    for (const auto& r : it->second) copies.emplace_back(op + name.substr(target.size()), r);
  }
  if (copies.empty()) throw std::logic_error("alias " + op + " of " + target + ", which has none");
  for (auto& [name, r] : copies) add_registration(name, r);
}

const Converter* Registry::find(const std::string& op, int opset) const {
  return find_entry(op, opset, false);
}

const Converter* Registry::find_entry(const std::string& op, int opset, bool named_overload) const {
  auto it = entries_.find(op);
  if (it == entries_.end()) return nullptr;
  for (const auto& r : it->second) {
    if (r.range.contains(opset) && !(named_overload && r.unnamed_only)) return &r.fn;
  }
  return nullptr;
}

namespace {
// relu_ → relu; "" when `kind` is not an in-place form.
std::string out_of_place(const std::string& kind) {
  if (kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_') {
    return kind.substr(0, kind.size() - 1);
  }
  return "";
}
}  // namespace

const Converter* Registry::find_for_node(const std::string& kind, int opset,
                                         const std::string& overload) const {
  auto find_kind = [&](const std::string& k) -> const Converter* {
    if (!overload.empty()) {
      if (const Converter* fn = find(k + "." + overload, opset)) return fn;
    }
    return find_entry(k, opset, !overload.empty());
  };
  if (const Converter* fn = find_kind(kind)) return fn;
  // RemoveInplaceOps rewrites in-place ops whose out-of-place form libtorch has and rewires the
  // later uses of what they write, so the out-of-place converter is exact for the ones left.
  if (std::string base = out_of_place(kind); !base.empty()) return find_kind(base);
  return nullptr;
}

std::optional<int> Registry::lowest_opset(const std::string& kind) const {
  std::optional<int> lowest;
  auto visit = [&](const std::string& k) {
    // "k" itself and every "k.overload" (map order puts them right after "k").
    for (auto it = entries_.lower_bound(k); it != entries_.end(); ++it) {
      const std::string& name = it->first;
      if (name != k && name.rfind(k + ".", 0) != 0) break;
      for (const auto& r : it->second) {
        if (!lowest || r.range.since < *lowest) lowest = r.range.since;
      }
    }
  };
  visit(kind);
  if (std::string base = out_of_place(kind); !base.empty()) visit(base);
  return lowest;
}

const Registry& Registry::builtin() {
  static const Registry registry = [] {
    Registry r;
    for (auto* register_family : ops::kFamilies) register_family(r);
    // PyTorch 2.x's functional copies of the view ops (view_copy, ...), which its decompositions
    // emit, take the view's arguments and give its values.
    for (const char* view :
         {"alias",     "view",   "expand",   "permute", "squeeze",    "unsqueeze",
          "transpose", "t",      "diagonal", "unfold",  "as_strided", "split_with_sizes",
          "split",     "unbind", "select",   "slice",   "detach",     "narrow",
          "indices",   "values"}) {
      const std::string target = std::string("aten::") + view;
      if (r.lowest_opset(target) && !r.find(target + "_copy", kMaxOpset)) {
        r.alias(target + "_copy", target);
      }
    }
    // aten::linalg_diagonal(Tensor A, *, int offset=0, int dim1=-2, int dim2=-1): diagonal's
    // arguments in diagonal's order.
    r.alias("aten::linalg_diagonal", "aten::diagonal");
    return r;
  }();
  return registry;
}

}  // namespace torchonnx::symbolic
