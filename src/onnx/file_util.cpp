#include "onnx/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "torchonnx/errors.h"

namespace torchonnx {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ExportError(ErrorCode::kIo, "'" + path + "' does not exist or is not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ExportError(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "the output path is empty. Remedy: name the "
                      ".onnx file to write.");
  }
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(target, ec)) {
    throw ExportError(ErrorCode::kIo, "cannot write '" + path +
                                          "': it is a folder. Remedy: name a file in it, e.g. '" +
                                          (target / "model.onnx").string() + "'.");
  }
  if (!fs::is_directory(dir, ec)) {
    throw ExportError(ErrorCode::kIo, "cannot write '" + path + "': folder '" + dir.string() +
                                          "' does not exist. Remedy: create it first.");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw ExportError(ErrorCode::kIo,
                      "cannot write '" + path + "': folder '" + dir.string() +
                          "' is not writable (" + std::strerror(errno) +
                          "). Remedy: choose another output folder, or make it writable.");
  }
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

namespace {
constexpr size_t kBufferBytes = size_t{1} << 20;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  fs::path target(path_);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ExportError(ErrorCode::kIo,
                      "cannot write '" + path_ + "': folder '" + dir.string() + "' does not exist");
  }
  tmp_ = (dir / ("." + target.filename().string() + ".tmpXXXXXX")).string();
  fd_ = mkstemp(tmp_.data());
  if (fd_ < 0) {
    throw ExportError(ErrorCode::kIo, "cannot write '" + path_ + "': " + std::strerror(errno) +
                                          ". Remedy: choose another output folder, or make it "
                                          "writable.");
  }
  buffer_.resize(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::fail(int err) {
  ::close(fd_);
  ::unlink(tmp_.c_str());
  fd_ = -1;
  throw ExportError(ErrorCode::kIo, "cannot write '" + path_ + "': " + std::strerror(err) +
                                        (err == ENOSPC || err == EDQUOT || err == EFBIG
                                             ? ". Remedy: free disk space or write to another "
                                               "folder (no partial file was left)."
                                             : ". No partial file was left."));
}

void AtomicFile::write_fd(const char* p, size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void AtomicFile::flush() {
  write_fd(buffer_.data(), used_);
  used_ = 0;
}

void AtomicFile::write(const void* data, size_t size) {
  if (fd_ < 0) throw ExportError(ErrorCode::kIo, "'" + path_ + "' is already closed");
  const char* p = static_cast<const char*>(data);
  written_ += size;
  if (used_ + size <= buffer_.size()) {
    std::memcpy(buffer_.data() + used_, p, size);
    used_ += size;
    return;
  }
  flush();
  if (size >= buffer_.size()) {
    write_fd(p, size);
  } else {
    std::memcpy(buffer_.data(), p, size);
    used_ = size;
  }
}

void AtomicFile::copy_from(int in_fd, uint64_t offset, uint64_t size) {
  if (fd_ < 0) throw ExportError(ErrorCode::kIo, "'" + path_ + "' is already closed");
  flush();
  written_ += size;
  auto in_offset = static_cast<off64_t>(offset);
  while (size > 0 && copy_in_kernel_) {
    const ssize_t n = ::copy_file_range(in_fd, &in_offset, fd_, nullptr, size, 0);
    if (n > 0) {
      size -= static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP &&
        errno != EBADF) {
      fail(errno);
    }
    copy_in_kernel_ = false;  // not between these files (or n == 0): read and write instead
  }
  while (size > 0) {  // through the buffer, not through a mapping of the input
    const ssize_t n = ::pread(in_fd, buffer_.data(), std::min<uint64_t>(size, buffer_.size()),
                              static_cast<off_t>(in_offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : EIO);
    write_fd(buffer_.data(), static_cast<size_t>(n));
    in_offset += n;
    size -= static_cast<uint64_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw ExportError(ErrorCode::kIo, "'" + path_ + "' is already closed");
  flush();
  // No fsync: like torch.onnx, cp or tar we leave the bytes to the page cache (a sync of a
  // 1.4 GB model costs a second). The rename still guarantees that no other process ever sees a
  // partial file, also when the export fails.
  fchmod(fd_, 0644);
  if (::close(fd_) != 0) {
    int err = errno;
    fd_ = -1;
    ::unlink(tmp_.c_str());
    throw ExportError(ErrorCode::kIo, "cannot write '" + path_ + "': " + std::strerror(err));
  }
  fd_ = -1;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    throw ExportError(ErrorCode::kIo, "cannot write '" + path_ + "': " + std::strerror(err));
  }
}

}  // namespace torchonnx
