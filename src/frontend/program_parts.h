// The parts of a torch.export program as each layout of a .pt2 stores them (Note [Exported
// programs] in exported_program.cpp): the serialized ExportedProgram, its weights and constants as
// tensors in the mapping of the file, its example inputs. The libtorch 2.x build only.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/pt2_archive.h"

namespace torchonnx::frontend::pt2 {

// The schema versions this reader was written against (torch/_export/serde/schema.py): 8.2 is
// PyTorch 2.6's, 8.20 PyTorch 2.14's.
constexpr int kSchemaMajor = 8;
constexpr int kSchemaMinor = 20;

struct ProgramParts {
  nlohmann::json doc;          // schema.ExportedProgram
  std::string schema_version;  // "8.20"
  // For every error: "'model.pt2' (the PT2 archive of PyTorch 2.8+ (...), program 'model',
  // schema 8.20)".
  std::string source;
  std::map<std::string, at::Tensor> state;      // parameters and persistent buffers, by name
  std::map<std::string, at::Tensor> constants;  // tensor constants, non-persistent buffers
  std::optional<c10::IValue> example_inputs;    // (args, kwargs)
};

// The parts of program `name` of `archive` ("": the only one). ExportError(kModelLoad) naming the
// file, its layout and schema version for a program that is not there (listing those that are),
// a schema major version newer than this reader's, a record or weight that is missing, damaged
// or compressed; ExportError(kUnsupportedOp) for custom objects. `notes` gets what is not read.
ProgramParts read_program_parts(const Pt2Archive& archive, const std::string& name,
                                std::vector<std::string>& notes);

}  // namespace torchonnx::frontend::pt2
