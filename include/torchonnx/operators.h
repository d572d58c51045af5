// The operators torchonnx converts, with the opset ranges each converter serves: the generated
// "list of supported operators" (`torchonnx ops`).
#pragma once

#include <string>
#include <vector>

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

struct OperatorSupport {
  std::string name;  // TorchScript node kind, e.g. "aten::add" (in-place forms like add_ included)
  int since = 0;     // first opset of the converter's range
  int until = 0;     // last opset of the range (inclusive)
};

// One entry per converter, sorted by name then range. With `opset` set, only the converters
// serving that opset; at opsets 7 and 8, those of opset 9, which convert the model before ONNX's
// version converter takes it down (kLowestOpset).
std::vector<OperatorSupport> supported_operators(int opset = 0);

}  // namespace torchonnx

#pragma GCC visibility pop
