// A check of a TorchScript archive before torch::jit::load reads it. libtorch 1.13's unpickler
// trusts the pickles of a .pt (it pops and indexes its stack without bounds checks, casts
// arguments without type checks, and sizes tensor storages from the pickle instead of from the
// record that holds their bytes), so a corrupt or crafted file can make it corrupt memory. This
// check walks every pickle of the archive (data.pkl, constants.pkl, code/**.debug_pkl, ...) as
// the unpickler would, on a model of its stack, and refuses what would go out of bounds. It does
// not cover the TorchScript compiler (code/**.py) nor methods run while loading (__setstate__).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace torchonnx::frontend {

// A record of a zip's central directory (zip64 sizes and offsets resolved).
struct ZipEntry {
  std::string name;
  int method = 0;  // 0: stored
  uint64_t size = 0, compressed_size = 0;
  uint64_t header_offset = 0;  // of its local header
};
// Reads `size` bytes at `offset` of the zip (fewer at its end).
using ReadAt = std::function<std::string(uint64_t offset, uint64_t size)>;
// The central directory of a zip of `file_size` bytes; nullopt when it is none or points outside.
std::optional<std::vector<ZipEntry>> zip_directory(uint64_t file_size, const ReadAt& read_at);

// ExportError(kModelLoad) naming `what` when the archive is unsafe to load. Bytes that are no zip
// archive pass (torch::jit::load refuses them with its own error).
void check_archive_bytes(const std::string& bytes, const std::string& what);
// A tensor storage a pickle references: BINPERSID ("storage", type, key, device, numel).
struct PickledStorage {
  std::string key;          // the record's name in the pickle's tensor folder ("0" for data/0)
  size_t key_at = 0;        // where the key's bytes are in the pickle
  bool key_shared = false;  // the pickle's memo gives the key's string back elsewhere too
  int64_t element_size = 0;
  int64_t numel = 0;
};
// What the zero-copy loader (mapped_load.h) needs of an archive that passed the check.
struct ArchiveLayout {
  std::map<std::string, uint64_t> sizes;        // record (without the archive folder) → bytes
  std::set<std::string> stored;                 // records stored uncompressed
  std::vector<PickledStorage> data, constants;  // of data.pkl and constants.pkl
};
// `layout`, when given, is filled while the file is checked.
void check_archive_file(const std::string& path, const std::string& what,
                        ArchiveLayout* layout = nullptr);

}  // namespace torchonnx::frontend
