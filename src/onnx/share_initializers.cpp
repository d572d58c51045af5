#include "onnx/share_initializers.h"

#include <ATen/ATen.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "common/mapped_file.h"

namespace torchonnx {

namespace {

// Renames what nodes read, in `graph` and in the subgraphs that read its values.
void rename_reads(ir::Graph& graph, const std::unordered_map<std::string, std::string>& renames) {
  for (auto& node : graph.nodes) {
    for (auto& in : node.inputs) {
      if (auto it = renames.find(in); it != renames.end()) in = it->second;
    }
    for (auto& attr : node.attributes) {
      if (auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        rename_reads(**sub, renames);
      }
    }
  }
}

// A cheap fingerprint of a tensor's contents: its size and 16 samples of 16 bytes spread over it.
size_t fingerprint(const at::Tensor& t) {
  const auto* p = static_cast<const char*>(t.data_ptr());
  const size_t n = static_cast<size_t>(t.numel()) * t.element_size();
  std::string samples;
  constexpr size_t kSamples = 16, kWidth = 16;
  for (size_t k = 0; k < kSamples; ++k) {
    const size_t at = n <= kWidth ? 0 : (n - kWidth) * k / (kSamples - 1);
    samples.append(p + at, std::min(kWidth, n - at));
    if (n <= kWidth) break;
  }
  return std::hash<std::string_view>{}(samples) ^ (n * 0x9e3779b97f4a7c15ULL);
}

bool same_contents(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const size_t n = static_cast<size_t>(a.numel()) * a.element_size();
  return std::memcmp(a.data_ptr(), b.data_ptr(), n) == 0;
}

}  // namespace

int share_duplicate_initializers(ir::Graph& graph, bool by_value) {
  // Same storage, same view: one tensor under two names (tied weights).
  using ViewKey = std::tuple<const void*, int64_t, std::vector<int64_t>, std::vector<int64_t>, int>;
  std::map<ViewKey, size_t> views;
  std::unordered_map<size_t, std::vector<size_t>> by_print;  // fingerprint → kept initializers
  std::unordered_map<std::string, std::string> renames;
  std::unordered_set<std::string> outputs;  // keep their names: never dropped
  for (const auto& out : graph.outputs) outputs.insert(out.name);
  std::vector<ir::Initializer> kept;
  kept.reserve(graph.initializers.size());
  for (auto& init : graph.initializers) {
    const at::Tensor& t = init.tensor;
    std::optional<size_t> same;
    if (t.defined() && t.has_storage() && t.numel() > 0 && !outputs.count(init.name)) {
      ViewKey key{t.storage().data(), t.storage_offset(), t.sizes().vec(), t.strides().vec(),
                  static_cast<int>(t.scalar_type())};
      auto [it, inserted] = views.emplace(key, kept.size());
      if (!inserted) same = it->second;
      if (!same && by_value && t.is_contiguous() && t.device().is_cpu()) {
        auto& candidates = by_print[fingerprint(t)];
        for (size_t k : candidates) {
          const bool equal = same_contents(kept[k].tensor, t);
          release_mapped_pages(kept[k].tensor);  // Note [Zero-copy weights]: not our memory
          if (equal) {
            same = k;
            break;
          }
        }
        release_mapped_pages(t);
        if (!same) candidates.push_back(kept.size());
      }
    }
    if (same) {
      renames[init.name] = kept[*same].name;
    } else {
      kept.push_back(std::move(init));
    }
  }
  graph.initializers = std::move(kept);
  if (renames.empty()) return 0;
  rename_reads(graph, renames);
  std::vector<ir::ValueInfo> inputs;
  for (auto& in : graph.inputs) {
    if (!renames.count(in.name)) inputs.push_back(std::move(in));
  }
  graph.inputs = std::move(inputs);
  return static_cast<int>(renames.size());
}

}  // namespace torchonnx
