// Loading a .pt with its tensors in a mapping of the file: Note [Zero-copy weights]
// (common/mapped_file.cpp).
#pragma once

#include <optional>
#include <string>

#include "frontend/archive_check.h"

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace torchonnx::frontend {

// The module of the archive at `path` (checked, `layout` from check_archive_file) with every
// tensor storage pointing into a read-only mapping of the file; nullopt when the archive does not
// allow it (a compressed record, a legacy or flatbuffer file, pickles whose storage keys cannot be
// told apart; then torch::jit::load copies as usual). libtorch's own errors propagate.
std::optional<torch::jit::Module> load_mapped(const std::string& path, const ArchiveLayout& layout);

}  // namespace torchonnx::frontend
