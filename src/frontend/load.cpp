#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/compat.h"
#include "frontend/archive_check.h"
#include "frontend/frontend.h"
#include "frontend/mapped_load.h"
#include "torchonnx/errors.h"
#include "torchonnx/exported_program.h"

namespace torchonnx {

namespace {

// "ns::name" of libtorch's "Unknown builtin op: ns::name." message, or "".
std::string unknown_builtin_op(const std::string& message) {
  const std::string marker = "Unknown builtin op: ";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  size_t end = start;
  while (end < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_' ||
          message[end] == ':' || message[end] == '.')) {
    ++end;
  }
  std::string op = message.substr(start, end - start);
  while (!op.empty() && op.back() == '.') op.pop_back();
  return op;
}

// Whether `op` ("ns::name") is in a namespace of PyTorch's own operators.
bool is_pytorch_namespace(const std::string& op) {
  for (const char* ns : {"aten::", "prim::", "quantized::", "_quantized::"}) {
    if (op.rfind(ns, 0) == 0) return true;
  }
  return false;
}

// What a zip that is no TorchScript archive holds, for the message that refuses it: "a zip of 3
// records (a.txt, b/c.bin, ...)"; "" for a file that is no zip (or cannot be read).
std::string zip_contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  const auto entries = frontend::zip_directory(size, [&](uint64_t offset, uint64_t n) {
    std::string bytes(static_cast<size_t>(std::min<uint64_t>(n, size - std::min(offset, size))),
                      '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return bytes;
  });
  if (!entries || entries->empty()) return "";
  std::string names;
  for (size_t k = 0; k < entries->size() && k < 4; ++k) {
    names += (k ? ", " : "") + (*entries)[k].name;
  }
  return fmt::format("a zip of {} record{} ({}{})", entries->size(),
                     entries->size() == 1 ? "" : "s", names, entries->size() > 4 ? ", ..." : "");
}

// TorchScript archives hold ROOT/data.pkl and ROOT/constants.pkl (or ROOT/code/ of old ones).
bool looks_like_torchscript(const std::string& contents) {
  return contents.find("data.pkl") != std::string::npos;
}

// torch::jit::load's exceptions as ExportError(kModelLoad) naming `what` (the file) and a remedy.
// `file` is the file's path ("" for bytes in memory).
template <typename Load>
torch::jit::Module load_translating_errors(const std::string& what, Load&& load,
                                           const std::string& file = "") {
  try {
    return load();
  } catch (const std::exception& e) {
    const std::string contents = file.empty() ? "" : zip_contents(file);
    std::string message = e.what();
    // The first line that says something (messages about unknown ops start with a newline).
    const size_t start = std::min(message.find_first_not_of("\n "), message.size());
    std::string first_line = message.substr(start, message.find('\n', start) - start);
    // An operator of PyTorch's own namespaces that this libtorch lacks: the file was written by
    // a newer PyTorch (aten::scaled_dot_product_attention, aten::rms_norm on libtorch 1.13).
    const std::string unknown_op = unknown_builtin_op(message);
    if (!unknown_op.empty() && is_pytorch_namespace(unknown_op)) {
      throw ExportError(
          ErrorCode::kModelLoad,
          fmt::format("cannot load {} as TorchScript: it calls {}, which libtorch {} (the "
                      "libtorch this torchonnx is built against) does not have: the file was "
                      "written by a newer PyTorch.\nRemedy: {}.",
                      what, unknown_op, compat::kLibtorchVersion, compat::kNewerLibtorchRemedy));
    }
    if (message.find("maximum supported version for reading") != std::string::npos) {
      throw ExportError(
          ErrorCode::kModelLoad,
          fmt::format("cannot load {} as TorchScript: {}\nIts file format is newer than libtorch "
                      "{} (this torchonnx's) reads. Remedy: {}.",
                      what, first_line, compat::kLibtorchVersion, compat::kNewerLibtorchRemedy));
    }
    std::string remedy =
        !unknown_op.empty() || message.find("Unknown type name") != std::string::npos
            ? "It uses a custom op or class that is not registered in this process: load the "
              "library that defines it first (CLI: --load-library FILE.so)."
        : !contents.empty() && !looks_like_torchscript(contents)
            ? "It is " + contents +
                  ": neither a TorchScript archive (ROOT/data.pkl, ROOT/constants.pkl) nor a "
                  "program of torch.export.save (.pt2). Remedy: give torchonnx the file "
                  "torch.export.save or torch.jit.save wrote, whole."
            : "Remedy: check the file is complete (copy it again); torchonnx reads TorchScript "
              "archives and programs of torch.export.save (.pt2).";
    throw ExportError(ErrorCode::kModelLoad, fmt::format("cannot load {} as TorchScript: {}\n{}",
                                                         what, first_line, remedy));
  }
}

}  // namespace

torch::jit::Module load_model(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ExportError(ErrorCode::kModelLoad,
                      "model file '" + path +
                          "' does not exist or is not a regular file. Remedy: check the path.");
  }
  if (std::filesystem::file_size(path, ec) == 0) {
    throw ExportError(ErrorCode::kModelLoad,
                      "model file '" + path +
                          "' is empty. Remedy: save the model again (torch.export.save writes a "
                          ".pt2; a TorchScript module is saved as a .pt) and copy the whole file.");
  }
  if (is_exported_program(path)) {
    throw ExportError(ErrorCode::kModelLoad,
                      "'" + path +
                          "' is a torch.export program (.pt2), not a TorchScript file. Remedy: "
                          "load it with torchonnx::load_exported_program "
                          "(<torchonnx/exported_program.h>); the torchonnx command reads .pt2 "
                          "files as they are");
  }
  const std::string what = "'" + path + "'";
  frontend::ArchiveLayout layout;
  frontend::check_archive_file(path, what, &layout);  // what libtorch 1.13's unpickler misses
  return load_translating_errors(
      what,
      [&] {
        // Note [Zero-copy weights]: storages in a mapping of the file, when the archive allows.
        if (std::getenv("TORCHONNX_NO_MMAP") == nullptr) {
          if (auto module = frontend::load_mapped(path, layout)) return *module;
        }
        return torch::jit::load(path);
      },
      path);
}

namespace frontend {

torch::jit::Module load_model_from_bytes(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) {
    throw ExportError(ErrorCode::kModelLoad, "model '" + name + "' is empty");
  }
  const std::string what = "'" + name + "'";
  check_archive_bytes(bytes, what);  // what libtorch 1.13's unpickler does not check
  return load_translating_errors(what, [&] {
    std::istringstream in(bytes);
    return torch::jit::load(in);
  });
}

}  // namespace frontend

}  // namespace torchonnx
