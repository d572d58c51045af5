// Activations.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

Converter simple(const std::string& onnx_op, ir::Attributes attrs = {}) {
  return [=](GraphContext& g, const Args& a) -> Values {
    return {g.op(onnx_op, {a.tensor(0)}, attrs)};
  };
}

// Softmax/LogSoftmax: before opset 13 the op flattens to 2-D at `axis`, which equals PyTorch's
// softmax only over the last dim; other dims are transposed to the end and back. ONNX needs rank
// >= 1: a 0-d input is unsqueezed to [1] and back.
Converter softmax(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    int64_t dim = normalize_dim(a.int_arg(1), rank);
    Value x = a.tensor(0);
    if (a.size() > 2 && !a.is_none(2)) x = g.cast(x, c10::ScalarType(a.int_arg(2)));
    if (rank == 0) {
      Value y = g.op(onnx_op, {unsqueeze(g, x, {0})}, {{"axis", int64_t{0}}});
      return {squeeze(g, y, {0})};
    }
    if (g.opset() >= 13 || dim == rank - 1) return {g.op(onnx_op, {x}, {{"axis", dim}})};
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    std::swap(perm[dim], perm[rank - 1]);
    Value t = g.op("Transpose", {x}, {{"perm", perm}});
    Value y = g.op(onnx_op, {t}, {{"axis", rank - 1}});
    return {g.op("Transpose", {y}, {{"perm", perm}})};
  };
}

}  // namespace

void register_activation(Registry& r) {
  r.add("aten::relu", {}, simple("Relu"));
  r.add("aten::sigmoid", {}, simple("Sigmoid"));
  r.add("aten::tanh", {}, simple("Tanh"));
  // aten::hardsigmoid(Tensor self)  ⇒  HardSigmoid(alpha=1/6, beta=1/2)
  r.add("aten::hardsigmoid", {}, simple("HardSigmoid", {{"alpha", 1.0 / 6}, {"beta", 0.5}}));
  // aten::hardswish(Tensor self)  ⇒  HardSwish (14+), x * HardSigmoid(x) (9–13)
  r.add("aten::hardswish", {9, 13}, [](GraphContext& g, const Args& a) -> Values {
    Value x = a.tensor(0);
    Value hs = g.op("HardSigmoid", {x}, {{"alpha", 1.0 / 6}, {"beta", 0.5}});
    return {g.op("Mul", {x, hs})};
  });
  r.add("aten::hardswish", {14, kMaxOpset}, simple("HardSwish"));
  // aten::silu(Tensor self)  ⇒  x * Sigmoid(x)
  r.add("aten::silu", {}, [](GraphContext& g, const Args& a) -> Values {
    Value x = a.tensor(0);
    return {g.op("Mul", {x, g.op("Sigmoid", {x})})};
  });
  // aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1)  ⇒  Clip
  r.add("aten::hardtanh", {}, [](GraphContext& g, const Args& a) -> Values {
    double lo = a.size() > 1 ? a.float_arg(1) : -1.0;
    double hi = a.size() > 2 ? a.float_arg(2) : 1.0;
    return {clip(g, a.tensor(0), lo, hi, a.dtype(0))};
  });
  // aten::relu6(Tensor self)  ⇒  Clip(0, 6)
  r.add("aten::relu6", {}, [](GraphContext& g, const Args& a) -> Values {
    return {clip(g, a.tensor(0), 0.0, 6.0, a.dtype(0))};
  });
  // aten::leaky_relu(Tensor self, Scalar negative_slope=0.01)  ⇒  LeakyRelu
  r.add("aten::leaky_relu", {}, [](GraphContext& g, const Args& a) -> Values {
    double slope = a.size() > 1 ? a.float_arg(1) : 0.01;
    return {g.op("LeakyRelu", {a.tensor(0)}, {{"alpha", slope}})};
  });
  // aten::gelu(Tensor self, str approximate='none')
  //   ⇒  0.5·x·(1 + erf(x/√2))  ('none'),  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))  ('tanh')
  r.add("aten::gelu", {}, [](GraphContext& g, const Args& a) -> Values {
    std::string approximate = a.size() > 1 ? a.str_arg(1) : "none";
    at::ScalarType type = a.dtype(0);
    Value x = a.tensor(0);
    Value inner;
    if (approximate == "tanh") {
      Value cube = g.op("Mul", {g.op("Mul", {x, x}), x});
      Value poly = g.op("Add", {x, g.op("Mul", {cube, g.constant_scalar(0.044715, type)})});
      inner = g.op("Tanh", {g.op("Mul", {poly, g.constant_scalar(std::sqrt(2.0 / M_PI), type)})});
    } else if (approximate == "none") {
      inner = g.op("Erf", {g.op("Div", {x, g.constant_scalar(std::sqrt(2.0), type)})});
    } else {
      g.fail("unknown approximate='" + approximate + "'");
    }
    Value one_plus = g.op("Add", {inner, g.constant_scalar(1.0, type)});
    return {g.op("Mul", {g.op("Mul", {x, one_plus}), g.constant_scalar(0.5, type)})};
  });
  // aten::softmax(Tensor self, int dim, ScalarType? dtype)  ⇒  Softmax
  r.add("aten::softmax", {}, softmax("Softmax"));
  r.add("aten::log_softmax", {}, softmax("LogSoftmax"));
}

}  // namespace torchonnx::symbolic::ops
