// File helpers: whole-file reads and atomic writes (temporary file in the same folder + rename,
// so a failed export never leaves a partial file).
#pragma once

#include <string>

namespace torchonnx {

std::string read_file(const std::string& path);
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace torchonnx
