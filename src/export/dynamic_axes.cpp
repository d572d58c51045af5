// dynamic_axes: which input dims are dynamic, and their names on the ONNX graph's inputs and
// outputs. What follows from them inside the graph is type propagation's part
// (Note [Dynamic axes] in passes/propagate_types.cpp).
#include "export/dynamic_axes.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "torchonnx/errors.h"
#include "torchonnx/logging.h"

namespace torchonnx {

// The label of each dynamic axis: the given one, or "<name>_dynamic_axes_<k>" (torch.onnx's names
// for its list form).
std::map<int64_t, std::string> axis_labels(const std::string& name,
                                           const std::map<int64_t, std::string>& axes) {
  std::map<int64_t, std::string> labels;
  int k = 0;
  for (const auto& [axis, label] : axes) {
    ++k;
    labels[axis] = label.empty() ? fmt::format("{}_dynamic_axes_{}", name, k) : label;
  }
  return labels;
}

int64_t checked_axis(const std::string& name, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("dynamic_axes: '{}' has {} dims, so axis {} does not exist. "
                                  "Remedy: give axes from 0 to {}.",
                                  name, rank, axis, r - 1));
  }
  return axis < 0 ? axis + r : axis;
}

// An axis of an output beyond its rank is left out with a warning (torch.onnx names the axes
// that exist and ignores the others: its own tests give "output_1": [0, 1, 2] for a 2-d output);
// one of an input is an error (checked_axis), as in torch.onnx.
namespace {
bool output_axis_exists(const std::string& name, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis >= -r && axis < r) return true;
  warn(
      fmt::format("dynamic_axes: output '{}' has {} dims, so axis {} does not exist: it is "
                  "ignored. Remedy: give axes from 0 to {}",
                  name, rank, axis, r - 1));
  return false;
}
}  // namespace

// Which dims of which graph inputs are dynamic; ExportError for an axis out of range.
passes::DynamicDims dynamic_input_dims(const frontend::CapturedGraph& c,
                                       const std::vector<std::string>& input_names,
                                       const ExportConfig& config) {
  passes::DynamicDims dims;
  if (config.dynamic_axes.empty()) return dims;
  for (size_t i = 0; i < input_names.size(); ++i) {
    const std::string& name = input_names[i];
    auto found = config.dynamic_axes.find(name);
    if (found == config.dynamic_axes.end()) continue;
    if (i >= c.example_inputs.size() || !c.example_inputs[i].isTensor()) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("dynamic_axes names input '{}', which is not a tensor", name));
    }
    const size_t rank = c.example_inputs[i].toTensor().dim();
    for (const auto& [axis, label] : found->second) {
      dims[i].push_back(checked_axis(name, axis, rank));
    }
  }
  // A key that is no input and no output is warned about by name_dynamic_dims.
  return dims;
}

// Names the dynamic dims of the graph's inputs and outputs (dim_param).
void name_dynamic_dims(ir::Graph& graph, const DynamicAxes& dynamic_axes) {
  for (const auto& [name, axes] : dynamic_axes) {
    const auto named = [&name = name](const ir::ValueInfo& v) { return v.name == name; };
    if (std::none_of(graph.inputs.begin(), graph.inputs.end(), named) &&
        std::none_of(graph.outputs.begin(), graph.outputs.end(), named)) {
      // Warned about and left out, as torch.onnx does (its own tests name keys that a variant of
      // the model lacks); the CLI and the C++ API do the same.
      std::vector<std::string> inputs, outputs;
      for (const auto& v : graph.inputs) inputs.push_back(v.name);
      for (const auto& v : graph.outputs) outputs.push_back(v.name);
      warn(
          fmt::format("dynamic_axes names '{}', which is no input or output of the graph "
                      "(inputs: {}; outputs: {}): it is ignored. Remedy: use the names of "
                      "input_names/output_names (CLI --input-names, --output-names)",
                      name, fmt::join(inputs, ", "), fmt::join(outputs, ", ")));
    }
  }
  for (auto* values : {&graph.inputs, &graph.outputs}) {
    const bool outputs = values == &graph.outputs;
    for (auto& value : *values) {
      auto found = dynamic_axes.find(value.name);
      if (found == dynamic_axes.end() || !value.type.shape) continue;
      auto& shape = *value.type.shape;
      value.type.dim_params.assign(shape.size(), "");
      for (const auto& [axis, label] : axis_labels(value.name, found->second)) {
        if (outputs && !output_axis_exists(value.name, axis, shape.size())) continue;
        const int64_t d = checked_axis(value.name, axis, shape.size());
        shape[d] = -1;
        value.type.dim_params[d] = label;
      }
    }
  }
}

void rename_dynamic_outputs(onnx::ModelProto& proto, const DynamicAxes& dynamic_axes) {
  for (auto& output : *proto.mutable_graph()->mutable_output()) {
    auto found = dynamic_axes.find(output.name());
    if (found == dynamic_axes.end()) continue;
    auto* dims = output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    for (const auto& [axis, label] : axis_labels(output.name(), found->second)) {
      if (axis < -dims->size() || axis >= dims->size()) continue;  // warned about before
      const int64_t d = checked_axis(output.name(), axis, dims->size());
      dims->Mutable(static_cast<int>(d))->set_dim_param(label);
    }
  }
}

}  // namespace torchonnx
