// Note [One resolved configuration]
// ExportOptions are what a caller asks for; an ExportConfig is what the export runs with. The
// pipeline driver (export/pipeline.cpp, resolve_config) checks the options once, at the top of
// every entry point, and resolves them into this one value, which every stage reads — the passes,
// the signature, the converters' GraphContext, the ONNX rewrites and the writer — and none of
// them reads ExportOptions:
// - `opset` is the opset the converters write; `target_opset` the model's. They differ for opsets
//   7 and 8, converted at kMinOpset and taken down by ONNX's version converter (onnx/opset_down.h).
// - `training` is decided: TRAINING and EVAL as asked, PRESERVE by the model's own flag (a model
//   without one, a plain traced function, is in eval mode), after the modules' flags were set
//   (export/training_mode.h, the one place that sets them). `asked_training` stays for the
//   warnings that name the mode asked for.
// What depends on the captured graph as well (the graph's input and output names, which dims are
// dynamic) is made from this value once per export, by export/signature.h and dynamic_axes.h.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "torchonnx/export.h"

namespace torchonnx {

struct ExportConfig {
  int opset = kDefaultOpset;         // the converters' opset: kMinOpset or more
  int target_opset = kDefaultOpset;  // the exported model's opset: `opset`, or 7 or 8
  OperatorExportType export_type = OperatorExportType::kOnnx;
  TrainingMode asked_training = TrainingMode::kEval;
  bool training = false;  // whether the model is exported in training mode

  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  DynamicAxes dynamic_axes;
  std::map<std::string, int> custom_opsets;
  std::set<std::string> modules_as_functions;
  std::map<std::string, ModuleAttributes> module_attributes;

  bool export_params = true;
  bool keep_initializers_as_inputs = false;
  bool do_constant_folding = true;
  bool drop_unused_inputs = false;
  bool strip_doc_string = false;
  bool verbose = false;
  bool use_external_data_format = false;
  ExternalDataOptions external_data;
};

}  // namespace torchonnx
