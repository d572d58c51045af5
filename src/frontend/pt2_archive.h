// The records of a .pt2 archive (torch.export.save): a plain zip, its records at its root, each
// read in place from a mapping of the file (Note [Exported programs] in exported_program.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace torchonnx {
class MappedFile;
}

namespace torchonnx::frontend {

class Pt2Archive {
 public:
  struct Record {
    uint64_t offset = 0;  // of its bytes in the file
    uint64_t size = 0;
    bool stored = true;  // zip method 0 (torch.export.save writes no other)
  };

  // The archive at `path`; nullopt when it is no zip or holds no serialized_exported_program.json
  // (the mark of a torch.export archive). ExportError(kModelLoad) naming `path` for a zip whose
  // directory points outside the file (truncated).
  static std::optional<Pt2Archive> open(const std::string& path);

  bool has(const std::string& name) const { return records_.count(name) != 0; }
  const std::map<std::string, Record>& records() const { return records_; }
  // The bytes of record `name`, in the mapping (valid while this archive lives); ExportError
  // (kModelLoad) when it is missing or compressed.
  std::string_view bytes(const std::string& name) const;
  const std::shared_ptr<MappedFile>& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::shared_ptr<MappedFile> file_;
  std::map<std::string, Record> records_;
};

}  // namespace torchonnx::frontend
