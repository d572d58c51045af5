// ONNX Runtime through its C++ API, in-process (Debian 13's libonnxruntime-dev), behind a small
// class without ONNX Runtime's types: only ort_session.cpp includes its headers, and only builds
// that found it (TORCHONNX_HAVE_ONNXRUNTIME) compile it.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

namespace torchonnx::verification {

class OrtModel {
 public:
  // ExportError(kInvalidOnnx) with ONNX Runtime's message when it rejects the model.
  static OrtModel from_bytes(const std::string& bytes);
  static OrtModel from_file(const std::string& path);

  // The graph inputs to feed (not those with an initializer) and the outputs, in graph order.
  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;

  // Runs on one tensor per input (in order) and returns every output, in order, as CPU tensors;
  // a sequence output is its tensors in order, as libtorch's returned list flattens (`names`,
  // when given, receives one name per tensor: the output's, "name[i]" for a sequence's).
  // ExportError(kInvalidArgument) for a wrong number of inputs or a dtype ONNX Runtime lacks;
  // kInvalidOnnx with ONNX Runtime's message when the run fails.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              std::vector<std::string>* names = nullptr) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace torchonnx::verification
