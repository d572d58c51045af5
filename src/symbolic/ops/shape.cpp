// Shape manipulation: view/reshape/flatten, cat/stack, transpose/permute, chunk/split,
// squeeze/unsqueeze, expand, select/slice, to.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

// Reshape to a shape given as argument `i` (constant int[] or a 1-D tensor built in the graph).
Value reshape_to(GraphContext& g, const Args& a, const Value& x, size_t i) {
  if (a.is_constant(i)) {
    std::vector<int64_t> shape = a.int_list(i);
    bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
    ir::Attributes attrs;
    if (has_zero) {
      if (g.opset() < 14) g.fail("a view with a zero-sized dim needs opset 14 (Reshape allowzero)");
      attrs.emplace_back("allowzero", 1);
    }
    return g.op("Reshape", {x, g.constant_ints(shape)}, attrs);
  }
  return g.op("Reshape", {x, a.tensor_as(i, at::kLong)});
}

Values split_sizes(GraphContext& g, const Args& a, const std::vector<int64_t>& sizes, int64_t dim) {
  return split(g, a.tensor(0), sizes, normalize_dim(dim, a.require_rank(0)));
}

int64_t dim_size(GraphContext& g, const Args& a, size_t i, int64_t dim) {
  auto sizes = a.sizes(i);
  if (!sizes) g.fail("the shape of argument " + std::to_string(i) + " is unknown");
  return (*sizes)[normalize_dim(dim, static_cast<int64_t>(sizes->size()))];
}

}  // namespace

void register_shape(Registry& r) {
  // aten::view(Tensor self, int[] size) / aten::reshape(Tensor self, int[] shape)  ⇒  Reshape
  for (const char* op : {"aten::view", "aten::reshape"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      return {reshape_to(g, a, a.tensor(0), 1)};
    });
  }
  // aten::view_as / reshape_as(Tensor self, Tensor other)  ⇒  Reshape(self, Shape(other))
  for (const char* op : {"aten::view_as", "aten::reshape_as"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      return {g.op("Reshape", {a.tensor(0), g.op("Shape", {a.tensor(1)})})};
    });
  }
  // aten::flatten(Tensor self, int start_dim=0, int end_dim=-1)
  //   ⇒  Flatten(axis=1) for (1, -1); Reshape otherwise
  r.add("aten::flatten", {}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    Value x = a.tensor(0);
    if (rank == 0) return {g.op("Reshape", {x, g.constant_ints({1})})};
    int64_t start = normalize_dim(a.int_arg(1), rank);
    int64_t end = normalize_dim(a.int_arg(2), rank);
    if (start == end) return {x};
    if (start == 1 && end == rank - 1) return {g.op("Flatten", {x}, {{"axis", 1}})};
    if (start == 0 && end == rank - 1) return {g.op("Reshape", {x, g.constant_ints({-1})})};
    // Leading dims are copied (0), the flattened run is inferred (-1), trailing dims are static.
    auto sizes = a.sizes(0);
    if (!sizes) g.fail("flatten of a middle run of dims needs the input's static shape");
    std::vector<int64_t> shape(start, 0);
    shape.push_back(-1);
    for (int64_t i = end + 1; i < rank; ++i) shape.push_back((*sizes)[i]);
    return {g.op("Reshape", {x, g.constant_ints(shape)})};
  });
  // aten::cat(Tensor[] tensors, int dim=0)  ⇒  Concat
  r.add("aten::cat", {}, [](GraphContext& g, const Args& a) -> Values {
    Values parts = a.tensor_list(0);
    int64_t dim = a.int_arg(1);
    if (dim < 0) {
      auto first = a.jit(0)->node()->kind() == c10::prim::ListConstruct
                       ? Args(g, a.jit(0)->node()).rank(0)
                       : std::nullopt;
      if (!first) g.fail("cat with a negative dim needs the inputs' rank");
      dim += *first;
    }
    if (parts.size() == 1) return {parts[0]};
    return {g.op("Concat", parts, {{"axis", dim}})};
  });
  // aten::stack(Tensor[] tensors, int dim=0)  ⇒  Unsqueeze each, Concat
  r.add("aten::stack", {}, [](GraphContext& g, const Args& a) -> Values {
    Values parts = a.tensor_list(0);
    int64_t dim = a.int_arg(1);
    if (dim < 0) {
      auto rank = Args(g, a.jit(0)->node()).rank(0);
      if (!rank) g.fail("stack with a negative dim needs the inputs' rank");
      dim += *rank + 1;
    }
    Values unsqueezed;
    for (const auto& p : parts) unsqueezed.push_back(unsqueeze(g, p, {dim}));
    return {g.op("Concat", unsqueezed, {{"axis", dim}})};
  });
  // aten::transpose(Tensor self, int dim0, int dim1)  ⇒  Transpose(perm)
  r.add("aten::transpose", {}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    int64_t d0 = normalize_dim(a.int_arg(1), rank), d1 = normalize_dim(a.int_arg(2), rank);
    if (d0 == d1) return {a.tensor(0)};
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[d0], perm[d1]);
    return {g.op("Transpose", {a.tensor(0)}, {{"perm", perm}})};
  });
  // aten::permute(Tensor self, int[] dims)  ⇒  Transpose(perm)
  r.add("aten::permute", {}, [](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    std::vector<int64_t> perm = a.int_list(1);
    for (auto& d : perm) d = normalize_dim(d, rank);
    return {g.op("Transpose", {a.tensor(0)}, {{"perm", perm}})};
  });
  // aten::t(Tensor self)  ⇒  Transpose for 2-D, identity below
  r.add("aten::t", {}, [](GraphContext& g, const Args& a) -> Values {
    if (a.require_rank(0) < 2) return {a.tensor(0)};
    return {g.op("Transpose", {a.tensor(0)}, {{"perm", std::vector<int64_t>{1, 0}}})};
  });
  // aten::chunk(Tensor self, int chunks, int dim=0) -> Tensor[]  ⇒  Split
  r.add("aten::chunk", {}, [](GraphContext& g, const Args& a) -> Values {
    int64_t chunks = a.int_arg(1), dim = a.int_arg(2);
    int64_t n = dim_size(g, a, 0, dim);
    int64_t size = (n + chunks - 1) / chunks;
    std::vector<int64_t> sizes;
    for (int64_t left = n; left > 0; left -= size) sizes.push_back(std::min(size, left));
    return split_sizes(g, a, sizes, dim);
  });
  // aten::split(Tensor self, int split_size | int[] sizes, int dim=0) -> Tensor[]  ⇒  Split
  // aten::split_with_sizes(Tensor self, int[] split_sizes, int dim=0)
  for (const char* op : {"aten::split", "aten::split_with_sizes"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      int64_t dim = a.int_arg(2);
      c10::IValue arg = a.constant(1);
      std::vector<int64_t> sizes;
      if (arg.isInt()) {
        int64_t n = dim_size(g, a, 0, dim), size = arg.toInt();
        for (int64_t left = n; left > 0; left -= size) sizes.push_back(std::min(size, left));
      } else {
        sizes = arg.toIntVector();
      }
      return split_sizes(g, a, sizes, dim);
    });
  }
  // aten::unsqueeze(Tensor self, int dim)  ⇒  Unsqueeze
  r.add("aten::unsqueeze", {}, [](GraphContext& g, const Args& a) -> Values {
    int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0) + 1);
    return {unsqueeze(g, a.tensor(0), {dim})};
  });
  // aten::squeeze(Tensor self, int? dim)  ⇒  Squeeze of the size-1 dims (identity if none)
  r.add("aten::squeeze", {}, [](GraphContext& g, const Args& a) -> Values {
    auto sizes = a.sizes(0);
    if (!sizes) g.fail("squeeze needs the input's static shape");
    std::vector<int64_t> axes;
    if (a.size() > 1) {
      int64_t dim = normalize_dim(a.int_arg(1), static_cast<int64_t>(sizes->size()));
      if (!sizes->empty() && (*sizes)[dim] == 1) axes.push_back(dim);
    } else {
      for (size_t i = 0; i < sizes->size(); ++i) {
        if ((*sizes)[i] == 1) axes.push_back(static_cast<int64_t>(i));
      }
    }
    if (axes.empty()) return {a.tensor(0)};
    return {squeeze(g, a.tensor(0), axes)};
  });
  // aten::expand(Tensor self, int[] size, bool implicit)  ⇒  Expand to the output shape
  r.add("aten::expand", {}, [](GraphContext& g, const Args& a) -> Values {
    auto out = a.output_sizes();
    if (!out) g.fail("expand needs the output's static shape");
    return {g.op("Expand", {a.tensor(0), g.constant_ints(*out)})};
  });
  // aten::expand_as(Tensor self, Tensor other)  ⇒  Expand(self, Shape(other))
  r.add("aten::expand_as", {}, [](GraphContext& g, const Args& a) -> Values {
    return {g.op("Expand", {a.tensor(0), g.op("Shape", {a.tensor(1)})})};
  });
  // aten::select(Tensor self, int dim, int index)  ⇒  Gather with a 0-d index (a negative
  // constant index made positive: Gather takes negative indices from opset 11)
  r.add("aten::select", {}, [](GraphContext& g, const Args& a) -> Values {
    int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
    if (a.is_constant(2) && a.int_arg(2) < 0 && a.sizes(0)) {
      int64_t index = a.int_arg(2) + (*a.sizes(0))[dim];
      Value i = g.constant(at::scalar_tensor(index, at::kLong));
      return {g.op("Gather", {a.tensor(0), i}, {{"axis", dim}})};
    }
    Value index = a.tensor_as(2, at::kLong);
    return {g.op("Gather", {a.tensor(0), index}, {{"axis", dim}})};
  });
  // aten::slice(Tensor self, int dim=0, int? start, int? end, int step=1)  ⇒  Slice
  r.add("aten::slice", {}, [](GraphContext& g, const Args& a) -> Values {
    int64_t dim = normalize_dim(a.int_arg(1), a.require_rank(0));
    int64_t start = a.optional_int(2).value_or(0);
    int64_t end = a.optional_int(3).value_or(INT64_MAX);
    int64_t step = a.int_arg(4);
    if (start == 0 && end == INT64_MAX && step == 1) return {a.tensor(0)};
    if (g.opset() < 10) {
      if (step != 1) g.fail("slicing with a step needs opset 10");
      return {g.op("Slice", {a.tensor(0)},
                   {{"axes", std::vector<int64_t>{dim}},
                    {"starts", std::vector<int64_t>{start}},
                    {"ends", std::vector<int64_t>{end}}})};
    }
    return {g.op("Slice", {a.tensor(0), g.constant_ints({start}), g.constant_ints({end}),
                           g.constant_ints({dim}), g.constant_ints({step})})};
  });
  // aten::to(Tensor self, ...) / aten::type_as(Tensor self, Tensor other)  ⇒  Cast (or nothing)
  for (const char* op : {"aten::to", "aten::type_as"}) {
    r.add(op, {}, [](GraphContext& g, const Args& a) -> Values {
      at::ScalarType out = a.output_dtype();
      if (out == at::ScalarType::Undefined) g.fail("the target dtype is unknown");
      return {a.tensor_as(0, out)};
    });
  }
}

}  // namespace torchonnx::symbolic::ops
