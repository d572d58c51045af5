// The records of a .pt2 archive (torch.export.save), each read in place from a mapping of the
// file (Note [Exported programs] in exported_program.cpp). Two layouts:
//   - PyTorch 2.3 to 2.7: a plain zip, its records at its root (serialized_exported_program.json,
//     serialized_state_dict.pt, ..., version);
//   - PyTorch 2.8 and later, the PT2 archive (torch/export/pt2_archive/): a PyTorchStreamWriter
//     zip whose records lie under one folder named after the file (ROOT/archive_format = "pt2",
//     ROOT/models/NAME.json, ROOT/data/weights/..., ROOT/data/sample_inputs/NAME.pt).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

  enum class Layout { kExportSave, kPt2Archive };

  // The archive at `path`; nullopt when it is no zip or has the mark of neither layout
  // (serialized_exported_program.json; ROOT/archive_format). ExportError(kModelLoad) naming
  // `path` for a torch.export archive cut short or whose directory points outside the file.
  static std::optional<Pt2Archive> open(const std::string& path);

  Layout layout() const { return layout_; }
  // "the PT2 archive of PyTorch 2.8+ (archive_format pt2, version 0)", for messages.
  std::string layout_name() const;
  // The folder of a PT2 archive's records with its slash ("model/"); "" for the older layout.
  const std::string& root() const { return root_; }
  // The programs of a PT2 archive (the NAME of each ROOT/models/NAME.json), sorted.
  std::vector<std::string> program_names() const;

  bool has(const std::string& name) const { return records_.count(name) != 0; }
  const std::map<std::string, Record>& records() const { return records_; }
  // The bytes of record `name`, in the mapping (valid while this archive lives); ExportError
  // (kModelLoad) when it is missing or compressed.
  std::string_view bytes(const std::string& name) const;
  const std::shared_ptr<MappedFile>& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Layout layout_ = Layout::kExportSave;
  std::string root_;
  std::string archive_version_;
  std::shared_ptr<MappedFile> file_;
  std::map<std::string, Record> records_;
};

}  // namespace torchonnx::frontend
