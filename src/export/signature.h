// The graph signature of an export: the names of the ONNX graph's inputs (example inputs, then
// parameters) and outputs, from the configuration's input_names/output_names and the graph's own
// names. Every entry point builds it here (src/export/pipeline.cpp), so all of them name values
// alike.
#pragma once

#include <string>
#include <vector>

#include "common/export_config.h"
#include "frontend/frontend.h"
#include "symbolic/convert.h"

namespace torchonnx {

// The names the user inputs will have in the ONNX graph (make_signature's), known before the
// passes run (dynamic_axes name inputs by them).
std::vector<std::string> user_input_names(const frontend::CapturedGraph& c,
                                          const ExportConfig& config);

// The graph's input and output names; ExportError (kInvalidArgument) for more names than values,
// a name that is not printable UTF-8, or a name used twice.
symbolic::GraphSignature make_signature(const frontend::CapturedGraph& c,
                                        const ExportConfig& config);

}  // namespace torchonnx
