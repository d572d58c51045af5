#include "export/signature.h"

#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>

namespace torchonnx {

namespace {

// The byte offset of the first byte of `name` that makes it no printable UTF-8 (a control
// character, a malformed sequence), or npos.
size_t first_unprintable(const std::string& name) {
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    const size_t extra = c < 0x80           ? 0
                         : (c >> 5) == 0x6  ? 1
                         : (c >> 4) == 0xE  ? 2
                         : (c >> 3) == 0x1E ? 3
                                            : 4;
    if (extra == 4 || (extra == 0 && (c < 0x20 || c == 0x7F)) ||
        i + extra >= name.size() + (extra == 0)) {
      return i;
    }
    for (size_t k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(name[i + k]) & 0xC0) != 0x80) return i;
    }
    i += extra + 1;
  }
  return std::string::npos;
}

// A name for the ONNX graph must be printable UTF-8 (protobuf strings are UTF-8; control
// characters would break every printed form of the model).
void check_value_name(const std::string& name) {
  const size_t bad = first_unprintable(name);
  if (bad == std::string::npos) return;
  std::string shown;
  for (unsigned char c : name) {
    shown +=
        c >= 0x20 && c < 0x7F ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  throw ExportError(ErrorCode::kInvalidArgument,
                    fmt::format("the input/output name '{}' is not printable UTF-8 (byte {}). "
                                "Remedy: use printable names.",
                                shown, bad));
}

std::string default_input_name(const torch::jit::Value* v, size_t i) {
  if (v->hasDebugName()) return v->debugName();
  return fmt::format("input_{}", i);
}

// The graph inputs' names: the given ones, then made-up ones for the other user inputs, then the
// parameters' own. A name made up here (a debug name, output_K) steps aside for the names given
// and the ones made before it (output_names=["output_1"] on a model of 4 outputs names them
// output_1, output_1_1, output_2, output_3); only names given twice are an error.
struct GraphInputNames {
  std::vector<std::string> inputs;
  std::unordered_set<std::string> taken;
  std::string made_up(std::string name) {
    const std::string base = name;
    for (int k = 1; !taken.insert(name).second; ++k) name = fmt::format("{}_{}", base, k);
    return name;
  }
};

GraphInputNames input_names(const frontend::CapturedGraph& c, const ExportConfig& config) {
  const auto inputs = c.graph->inputs();
  const size_t num_user = inputs.size() - c.parameters.size();
  GraphInputNames names;
  names.taken.insert(config.input_names.begin(), config.input_names.end());
  names.taken.insert(config.output_names.begin(), config.output_names.end());
  for (const auto& p : c.parameters) names.taken.insert(p.name);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < config.input_names.size()) {
      names.inputs.push_back(config.input_names[i]);
    } else if (i < num_user) {
      names.inputs.push_back(names.made_up(default_input_name(inputs[i], i)));
    } else {
      names.inputs.push_back(c.parameters[i - num_user].name);
    }
  }
  return names;
}

}  // namespace

symbolic::GraphSignature make_signature(const frontend::CapturedGraph& c,
                                        const ExportConfig& config) {
  const auto inputs = c.graph->inputs();
  const size_t num_user = inputs.size() - c.parameters.size();
  if (config.input_names.size() > inputs.size()) {
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} input names were given but the graph has {} inputs ({} "
                    "example inputs and {} parameters)",
                    config.input_names.size(), inputs.size(), num_user, c.parameters.size()));
  }
  if (config.output_names.size() > c.graph->outputs().size()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("{} output names were given but the model has {} outputs",
                                  config.output_names.size(), c.graph->outputs().size()));
  }
  symbolic::GraphSignature sig;
  sig.parameters = c.parameters;
  GraphInputNames made = input_names(c, config);
  sig.input_names = made.inputs;
  for (size_t k = 0; k < c.graph->outputs().size(); ++k) {
    sig.output_names.push_back(k < config.output_names.size()
                                   ? config.output_names[k]
                                   : made.made_up(fmt::format("output_{}", k)));
  }
  for (const auto* names : {&config.input_names, &config.output_names}) {
    for (const auto& name : *names) check_value_name(name);
  }
  std::unordered_set<std::string> seen;
  for (const auto* names : {&sig.input_names, &sig.output_names}) {
    for (const auto& name : *names) {
      if (name.empty() || !seen.insert(name).second) {
        throw ExportError(ErrorCode::kInvalidArgument,
                          fmt::format("the graph's input and output names must be unique and "
                                      "non-empty, but '{}' is used twice or is empty. Remedy: "
                                      "choose other --input-names/--output-names.",
                                      name));
      }
    }
  }
  return sig;
}

std::vector<std::string> user_input_names(const frontend::CapturedGraph& c,
                                          const ExportConfig& config) {
  std::vector<std::string> names = input_names(c, config).inputs;
  names.resize(names.size() - c.parameters.size());
  return names;
}

}  // namespace torchonnx
