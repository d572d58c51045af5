// A check of a TorchScript archive before torch::jit::load reads it. libtorch 1.13's unpickler
// trusts the pickles of a .pt (it pops and indexes its stack without bounds checks, casts
// arguments without type checks, and sizes tensor storages from the pickle instead of from the
// record that holds their bytes), so a corrupt or crafted file can make it corrupt memory. This
// check walks every pickle of the archive (data.pkl, constants.pkl, code/**.debug_pkl, ...) as
// the unpickler would, on a model of its stack, and refuses what would go out of bounds. It does
// not cover the TorchScript compiler (code/**.py) nor methods run while loading (__setstate__).
#pragma once

#include <string>

namespace torchonnx::frontend {

// ExportError(kModelLoad) naming `what` when the archive is unsafe to load. Bytes that are no zip
// archive pass (torch::jit::load refuses them with its own error).
void check_archive_bytes(const std::string& bytes, const std::string& what);
void check_archive_file(const std::string& path, const std::string& what);

}  // namespace torchonnx::frontend
