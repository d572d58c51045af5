// The custom operator of torch.onnx's docs, as a shared library:
//   custom_ops::foo_forward(Tensor input1, Tensor input2, float attr1, int attr2) -> Tensor
//   = (input1 + attr1 * input2) * attr2
// and its ONNX symbolic, registered for opset 9 up when the library is loaded. It has two
// lowerings, chosen by the export's custom_opsets (the SymbolicContext tells):
//   - custom_opsets names "custom_domain" (--custom-opset custom_domain=2): the spec's custom node
//       custom_domain::Foo(input1, input2)[attr1: float, attr2: int]
//     for a runtime that implements Foo;
//   - otherwise standard ONNX ops, Mul(Add(input1, Mul(input2, attr1)), attr2), which any ONNX
//     runtime runs.
#include <ATen/ATen.h>
#include <torch/library.h>
#include <torchonnx/symbolic.h>

namespace {

at::Tensor foo_forward(const at::Tensor& input1, const at::Tensor& input2, double attr1,
                       int64_t attr2) {
  return (input1 + attr1 * input2) * attr2;
}

TORCH_LIBRARY(custom_ops, m) {
  m.def("foo_forward(Tensor input1, Tensor input2, float attr1, int attr2) -> Tensor", foo_forward);
}

torchonnx::Values foo_symbolic(const torchonnx::SymbolicContext& ctx, torchonnx::GraphContext& g,
                               const torchonnx::Args& a) {
  torchonnx::Value input1 = a.tensor(0), input2 = a.tensor(1);
  const double attr1 = a.float_arg(2);
  const int64_t attr2 = a.int_arg(3);
  if (ctx.custom_opsets.count("custom_domain")) {
    return {g.op("custom_domain::Foo", {input1, input2},
                 {{"attr1", static_cast<float>(attr1)}, {"attr2", attr2}})};
  }
  at::ScalarType dtype = a.dtype(0);
  if (dtype == at::ScalarType::Undefined) dtype = at::kFloat;
  auto scaled = g.op("Mul", {input2, g.constant_scalar(attr1, dtype)});
  auto sum = g.op("Add", {input1, scaled});
  return {g.op("Mul", {sum, g.constant_scalar(static_cast<double>(attr2), dtype)})};
}

// Registers the symbolic when the library is loaded (dlopen, torch.ops.load_library).
const bool registered = [] {
  torchonnx::register_custom_op_symbolic("custom_ops::foo_forward",
                                         torchonnx::ContextSymbolicFunction(foo_symbolic), 9);
  return true;
}();

}  // namespace
