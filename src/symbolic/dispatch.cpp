// How each TorchScript node is converted (dispatch.h): custom symbolics first, then the built-in
// registry, then the fallbacks of operator_export_type (export_types.h); the domains the converted
// nodes use; the custom symbolics' context.
#include "symbolic/dispatch.h"

#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <set>

#include "symbolic/context.h"
#include "symbolic/convert.h"
#include "symbolic/custom_symbolic.h"
#include "symbolic/export_types.h"
#include "torchonnx/symbolic.h"

namespace torchonnx::symbolic {

using torch::jit::Node;

Converter resolve_converter(const Node* node, int opset, const Registry& registry,
                            OperatorExportType mode) {
  if (mode == OperatorExportType::kRaw) {
    return [](GraphContext& g, const Args& a) { return kept_node(g, a, "RAW"); };
  }
  const std::string kind = node->kind().toQualString();
  const bool is_aten = kind.rfind("aten::", 0) == 0;
  if (mode == OperatorExportType::kOnnxAten && is_aten) return aten_node;
  // Custom symbolics first (Note [Custom symbolics]); `custom` keeps the snapshot alive.
  const std::string overload = overload_name(node);
  const std::shared_ptr<const Registry> custom = custom_symbolics();
  Converter primary;
  if (const Converter* fn = custom->find_for_node(kind, opset, overload)) {
    primary = *fn;
  } else if (const Converter* builtin = registry.find_for_node(kind, opset, overload)) {
    primary = *builtin;
  }
  if (mode == OperatorExportType::kOnnxAtenFallback && is_aten) {
    return primary ? with_fallback(std::move(primary), aten_node) : Converter(aten_node);
  }
  if (mode == OperatorExportType::kOnnxFallthrough && node->kind() != c10::prim::Constant) {
    Converter keep = [](GraphContext& g, const Args& a) {
      return kept_node(g, a, "ONNX_FALLTHROUGH");
    };
    return primary ? with_fallback(std::move(primary), std::move(keep)) : keep;
  }
  return primary;
}

namespace {
void collect_domains(const std::vector<ir::Node>& nodes, std::set<std::string>& domains) {
  for (const auto& node : nodes) {
    if (!node.domain.empty()) domains.insert(node.domain);
    for (const auto& attr : node.attributes) {
      if (auto* sub = std::get_if<std::shared_ptr<ir::Graph>>(&attr.value)) {
        collect_domains((*sub)->nodes, domains);
      }
    }
  }
}
}  // namespace

void add_domain_opsets(ir::Model& model, const std::map<std::string, int>& custom_opsets) {
  std::set<std::string> domains;
  collect_domains(model.graph.nodes, domains);
  for (const auto& f : model.functions) collect_domains(f.nodes, domains);
  for (const auto& domain : domains) {
    if (domain == "ai.onnx") continue;
    if (auto it = custom_opsets.find(domain); it != custom_opsets.end()) {
      model.extra_opsets[domain] = it->second;
    } else {
      model.extra_opsets.emplace(domain, 1);
    }
  }
}

SymbolicContext make_symbolic_context(const GraphContext& g) {
  SymbolicContext ctx;
  ctx.cur_node = g.current_node();
  ctx.opset = g.opset();
  if (const GraphSignature* sig = g.signature()) {
    const size_t first = sig->input_names.size() - sig->parameters.size();
    for (size_t k = 0; k < sig->parameters.size(); ++k) {
      ctx.params_dict[sig->input_names.at(first + k)] = sig->parameters[k].tensor;
    }
  }
  if (const ExportConfig* config = g.config()) {
    ctx.custom_opsets = config->custom_opsets;
    ctx.operator_export_type = config->export_type;
  }
  return ctx;
}

}  // namespace torchonnx::symbolic
