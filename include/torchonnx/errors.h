// Errors thrown by torchonnx. Every failure of an export is an ExportError whose message names
// what failed (node, op, source location where known) and what to do about it.
#pragma once

#include <stdexcept>
#include <string>

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

// Also the CLI's exit codes (0 is success, 1 an unexpected internal error).
enum class ErrorCode {
  kInvalidArgument = 2,  // bad option value, wrong number or type of example inputs
  kModelLoad = 3,        // missing, corrupt or non-TorchScript model file
  kUnsupportedOp = 4,    // ops without a converter at the requested opset
  kConversion = 5,       // a converter rejected a node (unsupported argument combination)
  kInvalidOnnx = 6,      // the produced model fails onnx's checker or shape inference
  kIo = 7,               // reading inputs or writing the output failed
  kModelRun = 8,         // the model's forward threw on the example inputs
};

class ExportError : public std::runtime_error {
 public:
  ExportError(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace torchonnx

#pragma GCC visibility pop
