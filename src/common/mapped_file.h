// A model file mapped into memory, whose tensors point into the mapping: Note [Zero-copy weights].
#pragma once

#include <c10/core/Storage.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace at {
class Tensor;
}

namespace torchonnx {

// A read-only file mapped MAP_PRIVATE (a write to a page would copy it, never reach the file).
class MappedFile : public std::enable_shared_from_this<MappedFile> {
 public:
  // The mapping of `path`, or null when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // A CPU storage of the `nbytes` at `offset` that keeps the mapping alive.
  c10::Storage storage(uint64_t offset, uint64_t nbytes);

 private:
  MappedFile() = default;
  std::string path_;
  int fd_ = -1;
  char* data_ = nullptr;
  uint64_t size_ = 0;
};

// Where a tensor's bytes are in a mapped file.
struct FileBytes {
  std::shared_ptr<MappedFile> file;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The file bytes that `tensor` holds: when it is contiguous, its storage points into a
// MappedFile, and no page of it was written since it was mapped (a copy-on-write page, which
// /proc/self/pagemap tells; without pagemap, never). Otherwise nullopt.
std::optional<FileBytes> unchanged_file_bytes(const at::Tensor& tensor);

// Gives the pages of `tensor` that lie in a mapping back to the page cache (MADV_DONTNEED of the
// whole pages inside it), so that reading a weight does not keep it in this process's memory.
// Nothing for other tensors.
void release_mapped_pages(const at::Tensor& tensor);

}  // namespace torchonnx
