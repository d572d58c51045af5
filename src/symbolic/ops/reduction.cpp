// Reductions.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// aten::mean/sum(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)
// aten::mean/sum(Tensor self, *, ScalarType? dtype=None)
Converter reduction(const std::string& onnx_op) {
  return [=](GraphContext& g, const Args& a) -> Values {
    Value x = a.tensor(0);
    const bool all_dims = a.size() <= 2;  // the overload without dim
    std::vector<int64_t> axes;
    bool keepdim = false;
    std::optional<int64_t> dtype;
    if (all_dims) {
      if (a.size() == 2) dtype = a.optional_int(1);
    } else {
      if (auto dims = a.optional_int_list(1)) axes = *dims;
      keepdim = a.bool_arg(2);
      if (a.size() > 3) dtype = a.optional_int(3);
    }
    if (dtype) {
      x = g.cast(x, static_cast<at::ScalarType>(*dtype));
    } else if (at::ScalarType out = a.output_dtype();
               out != at::ScalarType::Undefined && out != a.dtype(0)) {
      x = g.cast(x, out);  // sum of bool / int8..int32 is int64
    }
    const int64_t rank = a.require_rank(0);
    for (auto& d : axes) d = normalize_dim(d, rank);
    return {reduce(g, onnx_op, x, axes, keepdim)};
  };
}

}  // namespace

void register_reduction(Registry& r) {
  r.add("aten::mean", {}, reduction("ReduceMean"));
  r.add("aten::sum", {}, reduction("ReduceSum"));
}

}  // namespace torchonnx::symbolic::ops
