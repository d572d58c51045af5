#include "verify/ort_session.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnxruntime_cxx_api.h>

#include <iostream>
#include <streambuf>

#include "onnx/dtype.h"
#include "torchonnx/errors.h"

namespace torchonnx::verification {

namespace {

// One ONNX Runtime environment per process (it owns the thread pools and the logger).
//
// Debian's ONNX Runtime shares libonnx.so with torchonnx and registers onnx's operator schemas
// into its registry when the environment is made, but libonnx registered them already (on first
// use): onnx refuses each again with a "Schema error: ... already registered" line on std::cerr,
// ~570 lines of noise about identical schemas. They are silenced while the environment is made,
// after libonnx's own registration (which `verify --onnx FILE` would otherwise meet only later,
// unsilenced, as it exports nothing).
Ort::Env& env() {
  static Ort::Env* e = [] {
    (void)onnx::OpSchemaRegistry::Schema("Relu");  // libonnx registers its schemas on first use
    struct : std::streambuf {
      int overflow(int c) override { return c; }
    } null;
    std::streambuf* saved = std::cerr.rdbuf(&null);
    try {
      auto* made = new Ort::Env(ORT_LOGGING_LEVEL_ERROR, "torchonnx-verify");
      std::cerr.rdbuf(saved);
      return made;
    } catch (...) {
      std::cerr.rdbuf(saved);
      throw;
    }
  }();
  return *e;
}

// ONNX Runtime's element types are ONNX's TensorProto data types (same codes): the exporter's
// dtype table (onnx/dtype.h) maps them.
ONNXTensorElementDataType ort_type(at::ScalarType t) {
  try {
    return static_cast<ONNXTensorElementDataType>(to_onnx_dtype(t));
  } catch (const ExportError&) {
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  }
}

std::optional<at::ScalarType> torch_type(ONNXTensorElementDataType t) {
  try {
    return from_onnx_dtype(static_cast<int32_t>(t));
  } catch (const ExportError&) {
    return std::nullopt;
  }
}

}  // namespace

struct OrtModel::Impl {
  std::unique_ptr<Ort::Session> session;
  std::vector<std::string> inputs, outputs;

  void read_names() {
    Ort::AllocatorWithDefaultOptions alloc;
    for (size_t i = 0; i < session->GetInputCount(); ++i)
      inputs.emplace_back(session->GetInputNameAllocated(i, alloc).get());
    for (size_t i = 0; i < session->GetOutputCount(); ++i)
      outputs.emplace_back(session->GetOutputNameAllocated(i, alloc).get());
  }
};

namespace {

Ort::SessionOptions session_options() {
  Ort::SessionOptions opts;
  opts.SetLogSeverityLevel(3);
  return opts;
}

[[noreturn]] void rejected(const std::string& what, const Ort::Exception& e) {
  throw ExportError(ErrorCode::kInvalidOnnx,
                    fmt::format("ONNX Runtime {} rejects {}: {}. Remedy: this is a torchonnx bug "
                                "when the model is torchonnx's export (please report it with the "
                                "command line and model); check the file otherwise",
                                Ort::GetVersionString(), what, e.what()));
}

}  // namespace

OrtModel OrtModel::from_bytes(const std::string& bytes) {
  OrtModel m;
  m.impl_ = std::make_shared<Impl>();
  try {
    m.impl_->session =
        std::make_unique<Ort::Session>(env(), bytes.data(), bytes.size(), session_options());
    m.impl_->read_names();
  } catch (const Ort::Exception& e) {
    rejected("the exported model", e);
  }
  return m;
}

OrtModel OrtModel::from_file(const std::string& path) {
  OrtModel m;
  m.impl_ = std::make_shared<Impl>();
  try {
    m.impl_->session = std::make_unique<Ort::Session>(env(), path.c_str(), session_options());
    m.impl_->read_names();
  } catch (const Ort::Exception& e) {
    rejected("'" + path + "'", e);
  }
  return m;
}

const std::vector<std::string>& OrtModel::input_names() const {
  return impl_->inputs;
}
const std::vector<std::string>& OrtModel::output_names() const {
  return impl_->outputs;
}

namespace {

at::Tensor to_tensor(const Ort::Value& v, const std::string& name) {
  auto info = v.GetTensorTypeAndShapeInfo();
  const auto type = torch_type(info.GetElementType());
  if (!type) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("output '{}' has an element type (ONNX {}) that verify "
                                  "cannot compare",
                                  name, static_cast<int>(info.GetElementType())));
  }
  const auto shape = info.GetShape();
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(*type));
  if (t.nbytes() > 0) std::memcpy(t.data_ptr(), v.GetTensorRawData(), t.nbytes());
  return t;
}

}  // namespace

std::vector<at::Tensor> OrtModel::run(const std::vector<at::Tensor>& inputs,
                                      std::vector<std::string>* names) const {
  if (inputs.size() != impl_->inputs.size()) {
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("the ONNX model takes {} inputs ({}) but {} were given. Remedy: "
                    "pass one example input per graph input",
                    impl_->inputs.size(), fmt::join(impl_->inputs, ", "), inputs.size()));
  }
  auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  std::vector<at::Tensor> keep;
  std::vector<Ort::Value> values;
  std::vector<const char*> in_names, out_names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor t = inputs[i].contiguous();
    const auto type = ort_type(t.scalar_type());
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("input '{}' is of dtype {}, which ONNX Runtime does not take",
                                    impl_->inputs[i], c10::toString(t.scalar_type())));
    }
    keep.push_back(t);
    const auto sizes = t.sizes().vec();
    values.push_back(Ort::Value::CreateTensor(memory, t.data_ptr(), t.nbytes(), sizes.data(),
                                              sizes.size(), type));
    in_names.push_back(impl_->inputs[i].c_str());
  }
  for (const auto& name : impl_->outputs) out_names.push_back(name.c_str());
  std::vector<Ort::Value> results;
  try {
    results = impl_->session->Run(Ort::RunOptions{nullptr}, in_names.data(), values.data(),
                                  values.size(), out_names.data(), out_names.size());
  } catch (const Ort::Exception& e) {
    throw ExportError(ErrorCode::kInvalidOnnx,
                      fmt::format("ONNX Runtime {} failed to run the model: {}",
                                  Ort::GetVersionString(), e.what()));
  }
  std::vector<at::Tensor> out;
  if (names) names->clear();
  Ort::AllocatorWithDefaultOptions alloc;
  for (size_t k = 0; k < results.size(); ++k) {
    Ort::Value& v = results[k];
    const std::string& name = impl_->outputs[k];
    if (v.IsTensor()) {
      out.push_back(to_tensor(v, name));
      if (names) names->push_back(name);
      continue;
    }
    if (v.GetTypeInfo().GetONNXType() != ONNX_TYPE_SEQUENCE) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("output '{}' is no tensor and no sequence of tensors (an "
                                    "optional or a map): verify compares tensors only",
                                    name));
    }
    const size_t count = v.GetCount();
    for (size_t i = 0; i < count; ++i) {
      Ort::Value element = v.GetValue(static_cast<int>(i), alloc);
      const std::string element_name = fmt::format("{}[{}]", name, i);
      if (!element.IsTensor()) {
        throw ExportError(
            ErrorCode::kInvalidArgument,
            fmt::format("output '{}' is no tensor: verify compares tensors only", element_name));
      }
      out.push_back(to_tensor(element, element_name));
      if (names) names->push_back(element_name);
    }
  }
  return out;
}

}  // namespace torchonnx::verification
