#include "frontend/pt2_archive.h"

#include <fmt/format.h>

#include <cstring>

#include "common/mapped_file.h"
#include "frontend/archive_check.h"
#include "torchonnx/errors.h"

namespace torchonnx::frontend {

namespace {

uint64_t le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::optional<Pt2Archive> Pt2Archive::open(const std::string& path) {
  std::shared_ptr<MappedFile> file = MappedFile::open(path);
  if (!file) return std::nullopt;
  const char* data = file->data();
  const uint64_t size = file->size();
  const auto entries = zip_directory(size, [&](uint64_t offset, uint64_t n) {
    if (offset >= size) return std::string();
    return std::string(data + offset, std::min<uint64_t>(n, size - offset));
  });
  // The mark of each layout: serialized_exported_program.json at the root (2.3–2.7), or
  // ROOT/archive_format under the one folder of a PT2 archive (2.8+).
  auto pt2_root = [](const std::string& name) -> std::optional<std::string> {
    const size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0) return std::nullopt;
    const std::string rest = name.substr(slash + 1);
    for (const char* mark :
         {"archive_format", "models/", "data/weights/", "data/constants/", "data/sample_inputs/"}) {
      if (rest.rfind(mark, 0) == 0) return name.substr(0, slash + 1);
    }
    return std::nullopt;
  };
  if (!entries) {
    // No directory: a torch.export archive cut short still starts with its first record.
    if (size >= 30 && le(data, 4) == 0x04034b50) {
      const uint64_t name_len = le(data + 26, 2);
      const std::string first(data + 30, std::min<uint64_t>(name_len, size - 30));
      if (first == "serialized_exported_program.json" || pt2_root(first)) {
        throw ExportError(ErrorCode::kModelLoad,
                          fmt::format("'{}' is a torch.export archive without its zip directory "
                                      "(a truncated file). Remedy: save the program again with "
                                      "torch.export.save, or copy the whole file",
                                      path));
      }
    }
    return std::nullopt;
  }
  // Only a torch.export archive is checked further: another zip is not this reader's.
  Layout layout = Layout::kExportSave;
  std::string root;
  bool is_program = false;
  for (const ZipEntry& e : *entries) {
    if (e.name == "serialized_exported_program.json") is_program = true;
    auto r = pt2_root(e.name);
    if (r && e.name == *r + "archive_format") {
      is_program = true;
      layout = Layout::kPt2Archive;
      root = *r;
    }
  }
  if (!is_program) return std::nullopt;
  Pt2Archive archive;
  for (const ZipEntry& e : *entries) {
    if (e.header_offset > size || size - e.header_offset < 30 ||
        le(data + e.header_offset, 4) != 0x04034b50) {
      throw ExportError(ErrorCode::kModelLoad,
                        fmt::format("'{}': the zip record '{}' is not where the archive's "
                                    "directory says (a truncated or damaged file). Remedy: save "
                                    "the program again with torch.export.save",
                                    path, e.name));
    }
    const uint64_t start = e.header_offset + 30 + le(data + e.header_offset + 26, 2) +
                           le(data + e.header_offset + 28, 2);
    if (start > size || size - start < e.compressed_size) {
      throw ExportError(ErrorCode::kModelLoad,
                        fmt::format("'{}': the zip record '{}' ends after the end of the file "
                                    "(a truncated file). Remedy: save the program again with "
                                    "torch.export.save",
                                    path, e.name));
    }
    archive.records_[e.name] =
        Record{start, e.method == 0 ? e.size : e.compressed_size, e.method == 0};
  }
  archive.path_ = path;
  archive.layout_ = layout;
  archive.root_ = root;
  archive.file_ = std::move(file);
  if (layout == Layout::kPt2Archive) {
    const std::string format(archive.bytes(root + "archive_format"));
    if (format != "pt2") {
      throw ExportError(ErrorCode::kModelLoad,
                        fmt::format("'{}': its {}archive_format is '{}', not the 'pt2' of a PT2 "
                                    "archive (torch.export.save of PyTorch 2.8+). Remedy: save "
                                    "the program again with torch.export.save",
                                    path, root, format.substr(0, 40)));
    }
    if (archive.has(root + "archive_version")) {
      archive.archive_version_ = std::string(archive.bytes(root + "archive_version"));
    }
  }
  return archive;
}

std::string Pt2Archive::layout_name() const {
  if (layout_ == Layout::kExportSave) {
    return "the torch.export.save archive of PyTorch 2.3 to 2.7 "
           "(serialized_exported_program.json)";
  }
  return fmt::format("the PT2 archive of PyTorch 2.8+ (archive_format pt2, version {})",
                     archive_version_.empty() ? "?" : archive_version_);
}

std::vector<std::string> Pt2Archive::program_names() const {
  std::vector<std::string> names;
  const std::string prefix = root_ + "models/";
  for (const auto& [name, record] : records_) {
    if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + 5) continue;
    const std::string rest = name.substr(prefix.size());
    if (rest.find('/') != std::string::npos || rest.substr(rest.size() - 5) != ".json") continue;
    names.push_back(rest.substr(0, rest.size() - 5));
  }
  return names;
}

std::string_view Pt2Archive::bytes(const std::string& name) const {
  auto it = records_.find(name);
  if (it == records_.end()) {
    throw ExportError(ErrorCode::kModelLoad,
                      fmt::format("'{}' has no record '{}', which torch.export.save writes. "
                                  "Remedy: save the program again with torch.export.save",
                                  path_, name));
  }
  if (!it->second.stored) {
    throw ExportError(ErrorCode::kModelLoad,
                      fmt::format("'{}': the record '{}' is compressed; torch.export.save stores "
                                  "its records uncompressed. Remedy: save the program again with "
                                  "torch.export.save, or repack the zip without compression "
                                  "(zip -0)",
                                  path_, name));
  }
  return std::string_view(file_->data() + it->second.offset, it->second.size);
}

}  // namespace torchonnx::frontend
