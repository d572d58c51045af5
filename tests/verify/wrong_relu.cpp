// A deliberately wrong converter, for find-mismatch's tests and the README's session: aten::relu
// as Sigmoid, registered (over the built-in one) when the library is loaded:
//   torchonnx verify model.pt ... --load-library libtorchonnx_wrong_relu.so --find-mismatch
#include <torchonnx/symbolic.h>

namespace {

torchonnx::Values relu_as_sigmoid(torchonnx::GraphContext& g, const torchonnx::Args& a) {
  return {g.op("Sigmoid", {a.tensor(0)})};
}

const bool registered = [] {
  torchonnx::register_custom_op_symbolic("aten::relu", relu_as_sigmoid, 9);
  return true;
}();

}  // namespace
