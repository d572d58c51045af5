// Matrix products: linear, addmm, matmul, mm, bmm.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

void register_linear(Registry& r) {
  // aten::linear(Tensor input, Tensor weight, Tensor? bias)
  //   ⇒  Gemm(transB=1) for 2-D input (bias optional from opset 11), MatMul(x, Wᵀ) + b otherwise
  r.add("aten::linear", {}, [](GraphContext& g, const Args& a) -> Values {
    const bool has_bias = !a.is_none(2);
    if (a.rank(0) == 2 && (has_bias || g.opset() >= 11)) {
      Values inputs{a.tensor(0), a.tensor(1)};
      if (has_bias) inputs.push_back(a.tensor(2));
      return {g.op("Gemm", inputs, {{"alpha", 1.0}, {"beta", 1.0}, {"transB", 1}})};
    }
    Value wt = g.op("Transpose", {a.tensor(1)}, {{"perm", std::vector<int64_t>{1, 0}}});
    Value y = g.op("MatMul", {a.tensor(0), wt});
    if (has_bias) y = g.op("Add", {y, a.tensor(2)});
    return {y};
  });
  // aten::addmm(Tensor self, Tensor mat1, Tensor mat2, Scalar beta=1, Scalar alpha=1)
  //   ⇒  Gemm(mat1, mat2, self, alpha, beta)
  r.add("aten::addmm", {}, [](GraphContext& g, const Args& a) -> Values {
    double beta = a.size() > 3 ? a.float_arg(3) : 1.0;
    double alpha = a.size() > 4 ? a.float_arg(4) : 1.0;
    return {
        g.op("Gemm", {a.tensor(1), a.tensor(2), a.tensor(0)}, {{"alpha", alpha}, {"beta", beta}})};
  });
  // aten::matmul / mm / bmm(Tensor self, Tensor other)  ⇒  MatMul
  for (const char* op : {"aten::matmul", "aten::mm", "aten::bmm"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      return {g.op("MatMul", {a.tensor(0), a.tensor(1)})};
    });
  }
}

}  // namespace torchonnx::symbolic::ops
