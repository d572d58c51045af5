#include "onnx/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

void write_file_atomically(const std::string& path, const std::string& bytes) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ExportError(ErrorCode::kIo,
                      "cannot write '" + path + "': folder '" + dir.string() + "' does not exist");
  }
  std::string tmp = (dir / ("." + target.filename().string() + ".tmpXXXXXX")).string();
  int fd = mkstemp(tmp.data());
  if (fd < 0) {
    throw ExportError(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(errno));
  }
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw ExportError(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  fchmod(fd, 0644);
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw ExportError(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(err));
  }
}

}  // namespace torchonnx
