// dynamic_axes (ExportOptions): the dynamic dims of the graph inputs, and their names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/export_config.h"
#include "frontend/frontend.h"
#include "onnx/ir.h"
#include "passes/passes.h"

namespace onnx {
class ModelProto;
}

namespace torchonnx {

// The label of each axis: the given one, or "<name>_dynamic_axes_<k>" (torch.onnx's names for its
// list form; k counts the name's axes from 1).
std::map<int64_t, std::string> axis_labels(const std::string& name,
                                           const std::map<int64_t, std::string>& axes);

// `axis` (negative counts from the end) as an index below `rank`; ExportError naming `name`
// otherwise.
int64_t checked_axis(const std::string& name, int64_t axis, size_t rank);

// Which dims of which user inputs (named `input_names`) are dynamic; warns about names that are
// no input or output, as torch.onnx does.
passes::DynamicDims dynamic_input_dims(const frontend::CapturedGraph& c,
                                       const std::vector<std::string>& input_names,
                                       const ExportConfig& config);

// Names the dynamic dims of the graph's inputs and outputs (dim_param).
void name_dynamic_dims(ir::Graph& graph, const DynamicAxes& dynamic_axes);

// After ONNX shape inference, which may give a declared dynamic output axis the example's size
// (when the model's output does not vary on it): the user's names stand, as in torch.onnx.
void rename_dynamic_outputs(onnx::ModelProto& proto, const DynamicAxes& dynamic_axes);

}  // namespace torchonnx
