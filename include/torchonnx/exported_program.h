// torch.export programs (.pt2, torch.export.save of PyTorch 2.x) in, with no Python:
//
//   torchonnx::ExportedProgram program = torchonnx::load_exported_program("model.pt2");
//   torchonnx::export_program(program, "model.onnx");  // its example inputs and dynamic dims
//
// The program becomes a TorchScript module whose forward() runs the program's graph (each node's
// target resolved to its ATen operator), so every entry point of torchonnx/export.h and
// torchonnx/verify.h takes it as it takes a loaded .pt. Needs a libtorch 2.x build (Debian 13,
// forky); the libtorch 1.13 build refuses a .pt2 with ExportError(kModelLoad) naming that build.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "torchonnx/export.h"

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

struct ExportedProgram {
  // forward(user inputs) runs the program's graph; its parameters, buffers and constants keep the
  // program's names ("fc.weight", "bn.running_mean").
  torch::jit::Module module;
  // forward()'s arguments, as saved with the program (serialized_example_inputs.pt).
  std::vector<c10::IValue> example_inputs;
  // The program's symbolic dims, by input name and axis, named by their symbol ("s0"): the
  // dynamic axes of an export of the program.
  DynamicAxes dynamic_axes;
  // symbol → its range [min, max] (range_constraints); max is -1 when it has none.
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
  // What the loader left out and why (runtime asserts, which ONNX cannot check), one per line.
  std::vector<std::string> notes;
  std::string schema_version;            // of the program ("8.2" of PyTorch 2.6, "8.20" of 2.14)
  std::vector<std::string> input_names;  // forward()'s arguments, the program's user inputs
};

// Whether `path` is a torch.export archive (a zip holding serialized_exported_program.json, or a
// PT2 archive's ROOT/archive_format); by its records, not its name.
bool is_exported_program(const std::string& path);

// Loads a .pt2 of either layout: torch.export.save's of PyTorch 2.3 to 2.7, or the PT2 archive of
// PyTorch 2.8+ (torch/export/pt2_archive/), whose weights are read in place from the mapping of
// the file. `program` names the program of a PT2 archive that holds several
// (ROOT/models/NAME.json; "" takes the only one). ExportError(kModelLoad) naming the file, its
// layout and schema version for a missing, truncated or damaged archive, a schema major version
// newer than this build reads, or a weight the program reads and the archive lacks;
// ExportError(kInvalidArgument) for a program name that is not there or missing where several
// are (listing them); ExportError(kUnsupportedOp) naming every target that resolves to no
// operator of this libtorch (with its source location).
ExportedProgram load_exported_program(const std::string& path, const std::string& program = "");

// `options` for an export of the program: when they give no dynamic axes, the program's (under
// `options.input_names` where those rename its inputs).
ExportOptions program_options(const ExportedProgram& program, ExportOptions options);

// export_model of the program on its example inputs, with program_options(program, options).
void export_program(const ExportedProgram& program, const std::string& path,
                    ExportOptions options = {});

}  // namespace torchonnx

#pragma GCC visibility pop
