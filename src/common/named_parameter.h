// A tensor the ONNX graph takes as a named input or initializer: a module's parameter or buffer
// by its state_dict path ("features.0.weight"). Made by the frontend (capture), read by the passes
// and the converters.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace torchonnx {

struct NamedParameter {
  std::string name;
  at::Tensor tensor;
};

}  // namespace torchonnx
