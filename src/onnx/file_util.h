// File helpers: whole-file reads and atomic writes (a temporary file in the same folder, renamed
// over the target once complete, so a failed export never leaves a partial file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "torchonnx/io.h"  // write_file_atomically, check_output_path

namespace torchonnx {

std::string read_file(const std::string& path);

// A file written through a buffer into a temporary beside `path`; commit() renames it over
// `path`. Destroyed without commit() (an exception on the way), the temporary is removed.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Large writes bypass the buffer (the bytes go from the caller's memory to the kernel).
  void write(const void* data, size_t size);
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  // Appends `size` bytes of the file `in_fd` at `offset`, copied inside the kernel
  // (copy_file_range) when it can, else read through the write buffer: never via a mapping.
  void copy_from(int in_fd, uint64_t offset, uint64_t size);
  uint64_t size() const { return written_; }
  void commit();
  const std::string& path() const { return path_; }

 private:
  void flush();
  void write_fd(const char* data, size_t size);
  [[noreturn]] void fail(int err);

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  std::vector<char> buffer_;
  size_t used_ = 0;
  uint64_t written_ = 0;
  bool copy_in_kernel_ = true;
};

}  // namespace torchonnx
