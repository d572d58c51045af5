// Pooling: max pooling (with indices), average pooling 1-D/2-D/3-D and adaptive average/max pooling
// (with indices).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

struct PoolGeometry {
  std::vector<int64_t> kernel, stride, pads, dilation;
};

// Kernel, stride (defaults to kernel), symmetric pads from schema positions 1, 2, 3.
PoolGeometry geometry(const Args& a, size_t n) {
  PoolGeometry p;
  p.kernel = expand_param(a.int_list(1), n);
  auto stride = a.int_list(2);
  p.stride = stride.empty() ? p.kernel : expand_param(stride, n);
  auto padding = expand_param(a.int_list(3), n);
  p.pads = padding;
  p.pads.insert(p.pads.end(), padding.begin(), padding.end());
  p.dilation.assign(n, 1);
  return p;
}

// Extra end padding that makes floor-mode output sizes equal PyTorch's ceil-mode ones (for
// opsets without the ceil_mode attribute, or where its sizes differ). The last window must start
// inside the input or the left padding, as in PyTorch.
std::vector<int64_t> ceil_extra_padding(const std::vector<int64_t>& input, const PoolGeometry& p) {
  const size_t n = p.kernel.size();
  std::vector<int64_t> extra(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = input[input.size() - n + i];
    int64_t span = in + 2 * p.pads[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
    int64_t out = (span + p.stride[i] - 1) / p.stride[i] + 1;
    if ((out - 1) * p.stride[i] >= in + p.pads[i]) --out;
    int64_t needed = (out - 1) * p.stride[i] + p.dilation[i] * (p.kernel[i] - 1) + 1;
    extra[i] = std::max<int64_t>(0, needed - (in + 2 * p.pads[i]));
  }
  return extra;
}

// Whether ONNX's ceil_mode (opset 10+) gives PyTorch's ceil-mode output sizes: ONNX keeps a last
// window that starts in the right padding, PyTorch drops it.
bool onnx_ceil_mode_matches(const std::vector<int64_t>& input, const PoolGeometry& p) {
  const size_t n = p.kernel.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t in = input[input.size() - n + i];
    int64_t span = in + 2 * p.pads[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
    int64_t out = (span + p.stride[i] - 1) / p.stride[i] + 1;
    if ((out - 1) * p.stride[i] >= in + p.pads[i]) return false;
  }
  return true;
}

bool any_nonzero(const std::vector<int64_t>& v) {
  return std::any_of(v.begin(), v.end(), [](int64_t e) { return e != 0; });
}

// How ceil_mode is lowered: the ceil_mode attribute when ONNX's sizes are PyTorch's (opset 10+),
// otherwise floor mode with `extra` end padding (none when floor sizes are PyTorch's).
struct CeilLowering {
  bool attribute = false;
  std::vector<int64_t> extra;
};

// The input's sizes when its last `n` (spatial) dims are known at export; batch and channels may
// be dynamic (-1). The pooling windows depend on the spatial dims only.
std::optional<std::vector<int64_t>> spatial_sizes(const Args& a, size_t n) {
  auto sizes = value_type(a.jit(0)).shape;
  if (!sizes || sizes->size() < n ||
      std::any_of(sizes->end() - n, sizes->end(), [](int64_t d) { return d < 0; })) {
    return std::nullopt;
  }
  return sizes;
}

CeilLowering lower_ceil_mode(GraphContext& g, const Args& a, const PoolGeometry& p) {
  CeilLowering l;
  auto sizes = spatial_sizes(a, p.kernel.size());
  if (!sizes) {
    g.require_opset(10, "ceil_mode of an input without a static shape",
                    "the pooling ops' ceil_mode attribute");
    l.attribute = true;
    return l;
  }
  l.attribute = g.has(OnnxFeature::kPoolCeilMode) && onnx_ceil_mode_matches(*sizes, p);
  if (!l.attribute) l.extra = ceil_extra_padding(*sizes, p);
  return l;
}

// The pooled input: `x` itself when batched (rank n + 2), with a batch dim of 1 when PyTorch's
// unbatched form (rank n + 1) is given; `unbatched` says which.
Value batched_input(GraphContext& g, const Args& a, size_t n, bool& unbatched) {
  const int64_t rank = a.require_rank(0);
  unbatched = rank == static_cast<int64_t>(n) + 1;
  if (!unbatched && rank != static_cast<int64_t>(n) + 2) {
    g.fail(std::to_string(n) + "-D pooling of a tensor of rank " + std::to_string(rank));
  }
  return unbatched ? unsqueeze(g, a.tensor(0), {0}) : a.tensor(0);
}

Value unbatch(GraphContext& g, const Value& v, bool unbatched) {
  return unbatched ? squeeze(g, v, {0}) : v;
}

// ONNX MaxPool indices count over N·C·spatial; PyTorch's over each channel's spatial dims. The
// offset (n·C + c)·prod(spatial) of each channel is the index of its first element, read from a
// kernel-1 MaxPool's indices at spatial position 0.
Value torch_indices(GraphContext& g, const Value& x, const Value& onnx_indices, size_t n) {
  std::vector<int64_t> ones(n, 1), zeros(n, 0), axes(n);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i) + 2;
  Value all = g.op("MaxPool", {x}, {{"kernel_shape", ones}, {"strides", ones}}, 2)[1];
  Value base = slice(g, all, axes, zeros, ones);
  return g.op("Sub", {onnx_indices, base});
}

// aten::max_pool{1,2,3}d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0,
//                        int[] dilation=1, bool ceil_mode=False)
// aten::max_pool{1,2,3}d_with_indices(same) -> (Tensor, Tensor)
//   ⇒  MaxPool (ceil_mode via lower_ceil_mode: the extra padding is -inf, so always exact);
//      indices: MaxPool's second output made per-channel (torch_indices)
Values max_pool(GraphContext& g, const Args& a, size_t n, bool with_indices) {
  PoolGeometry p = geometry(a, n);
  p.dilation = expand_param(a.int_list(4), n);
  const bool dilated =
      std::any_of(p.dilation.begin(), p.dilation.end(), [](int64_t d) { return d != 1; });
  if (dilated) g.require_opset(10, "dilated max pooling");
  CeilLowering ceil;
  if (a.bool_arg(5)) ceil = lower_ceil_mode(g, a, p);
  for (size_t i = 0; i < ceil.extra.size(); ++i) p.pads[n + i] += ceil.extra[i];
  ir::Attributes attrs{{"kernel_shape", p.kernel}, {"strides", p.stride}, {"pads", p.pads}};
  if (g.has(OnnxFeature::kPoolCeilMode)) {
    attrs.emplace_back("ceil_mode", static_cast<int64_t>(ceil.attribute));
    if (dilated) attrs.emplace_back("dilations", p.dilation);
  }
  bool unbatched = false;
  Value x = batched_input(g, a, n, unbatched);
  if (!with_indices) return {unbatch(g, g.op("MaxPool", {x}, attrs), unbatched)};
  Values out = g.op("MaxPool", {x}, attrs, 2);
  return {unbatch(g, out[0], unbatched), unbatch(g, torch_indices(g, x, out[1], n), unbatched)};
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t e : v) p *= e;
  return p;
}

// PyTorch's divisor of each average-pooling window as a [1, 1, out...] tensor of `type`: the
// window [o·s − pad, o·s − pad + k) clipped to the padded input (count_include_pad) or to the
// input.
at::Tensor window_counts(const std::vector<int64_t>& sizes, const PoolGeometry& p,
                         const std::vector<int64_t>& pads, bool count_include_pad,
                         at::ScalarType type) {
  const size_t n = p.kernel.size();
  std::vector<int64_t> shape{1, 1};
  at::Tensor counts = at::ones({1}, at::kLong);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = sizes[sizes.size() - n + i];
    int64_t out = (in + pads[i] + pads[n + i] - p.kernel[i]) / p.stride[i] + 1;
    std::vector<int64_t> c(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t start = o * p.stride[i] - p.pads[i];
      int64_t end = std::min(start + p.kernel[i], in + p.pads[i]);
      c[o] = count_include_pad ? end - start : std::min(end, in) - std::max<int64_t>(start, 0);
    }
    counts = at::outer(counts, at::tensor(c, at::kLong)).reshape(-1);
    shape.push_back(out);
  }
  return counts.reshape(shape).to(type);
}

// aten::avg_pool1d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0,
//                  bool ceil_mode=False, bool count_include_pad=True)
// aten::avg_pool{2,3}d(same..., int? divisor_override=None)
//   ⇒  AveragePool (ceil_mode via lower_ceil_mode). Where PyTorch's divisor is not ONNX's
//      (divisor_override, or count_include_pad with ceil-mode windows overhanging the padding) or
//      the input is an integer (AveragePool is float only; PyTorch truncates the quotient): the
//      window sums, AveragePool(count_include_pad=1)·k over the padding and explicit extra end
//      padding (all windows inside it), divided by the override or PyTorch's counts.
Value avg_pool(GraphContext& g, const Args& a, size_t n) {
  PoolGeometry p = geometry(a, n);
  const bool count_include_pad = a.size() > 5 ? a.bool_arg(5) : true;
  std::optional<int64_t> divisor = a.size() > 6 ? a.optional_int(6) : std::nullopt;
  if (divisor && *divisor == 0) g.fail("divisor_override must not be 0");
  const at::ScalarType type = a.dtype(0);
  const bool integral = at::isIntegralType(type, /*includeBool=*/true);
  if (type == at::kBool) g.fail("average pooling of bool tensors");
  const bool ceil_mode = a.bool_arg(4);
  CeilLowering ceil;
  if (ceil_mode) ceil = lower_ceil_mode(g, a, p);
  bool unbatched = false;
  Value x = batched_input(g, a, n, unbatched);
  auto sizes = spatial_sizes(a, n);
  if (!divisor && !integral && !(count_include_pad && any_nonzero(ceil.extra))) {
    // ONNX's divisor is PyTorch's (ONNX's ceil_mode windows clip their counts as PyTorch's do).
    for (size_t i = 0; i < ceil.extra.size(); ++i) p.pads[n + i] += ceil.extra[i];
    ir::Attributes attrs{{"kernel_shape", p.kernel},
                         {"strides", p.stride},
                         {"pads", p.pads},
                         {"count_include_pad", static_cast<int64_t>(count_include_pad)}};
    if (g.has(OnnxFeature::kPoolCeilMode)) {
      attrs.emplace_back("ceil_mode", static_cast<int64_t>(ceil.attribute));
    }
    return unbatch(g, g.op("AveragePool", {x}, attrs), unbatched);
  }
  std::vector<int64_t> extra(n, 0);
  if (ceil_mode) {
    // static shape: the extra end padding of ceil mode
    if (!sizes) g.fail("average pooling with ceil_mode here needs the input's static shape");
    extra = ceil_extra_padding(*sizes, p);
  }
  std::vector<int64_t> pads = p.pads;
  for (size_t i = 0; i < n; ++i) pads[n + i] += extra[i];
  // Integers are summed in float: exact while the window sums stay below 2^24.
  const at::ScalarType sum_type = integral ? at::kFloat : type;
  Value avg = g.op("AveragePool", {integral ? g.cast(x, at::kFloat) : x},
                   {{"kernel_shape", p.kernel},
                    {"strides", p.stride},
                    {"pads", pads},
                    {"count_include_pad", int64_t{1}}});
  Value sum =
      g.op("Mul", {avg, g.constant_scalar(static_cast<double>(product(p.kernel)), sum_type)});
  if (integral) {
    // The sums are integers up to rounding: Floor(s + 0.5) (Round needs opset 11).
    sum = g.op("Floor", {g.op("Add", {sum, g.constant_scalar(0.5, sum_type)})});
    sum = g.cast(sum, type);
  }
  Value divide_by;
  if (divisor) {
    divide_by = g.constant_scalar(static_cast<double>(*divisor), type);
  } else if (!any_nonzero(extra) && (count_include_pad || !any_nonzero(p.pads))) {
    divide_by = g.constant_scalar(static_cast<double>(product(p.kernel)), type);
  } else {
    // static shape: PyTorch's per-window counts
    if (!sizes) g.fail("integer average pooling with padding needs the input's static shape");
    divide_by = g.constant(window_counts(*sizes, p, pads, count_include_pad, type));
  }
  // Integer Div truncates toward zero, as PyTorch's integer average.
  return unbatch(g, g.op("Div", {sum, divide_by}), unbatched);
}

// PyTorch's adaptive pooling window of output cell o of `out` over `in`:
// [floor(o·in/out), ceil((o+1)·in/out)).
std::pair<int64_t, int64_t> adaptive_window(int64_t o, int64_t in, int64_t out) {
  return {o * in / out, ((o + 1) * in + out - 1) / out};
}

// aten::adaptive_{avg,max}_pool{1,2,3}d(Tensor self, int[] output_size)
//   ⇒  GlobalXPool for output 1; XPool with kernel = stride = in/out over the dims out divides;
//      the other dims one by one (the windows are boxes, so mean and max are separable): per
//      output cell a Slice and ReduceX, Concat.
Value adaptive_pool(GraphContext& g, const Args& a, size_t n, const std::string& kind) {
  auto out = expand_param(a.int_list(1), n);
  bool unbatched = false;
  Value x = batched_input(g, a, n, unbatched);
  if (std::all_of(out.begin(), out.end(), [](int64_t o) { return o == 1; })) {
    return unbatch(g, g.op("Global" + kind + "Pool", {x}), unbatched);
  }
  // static shape: the windows depend on the input's spatial size (batch and channels may vary).
  auto sizes = spatial_sizes(a, n);
  if (!sizes) {
    g.fail(
        "adaptive pooling to a size other than 1 needs the input's spatial size at export "
        "(it is a dynamic axis or unknown). Remedy: keep height/width static, or pool to 1");
  }
  std::vector<int64_t> kernel(n, 1);
  std::vector<size_t> uneven;
  for (size_t i = 0; i < n; ++i) {
    int64_t in = (*sizes)[sizes->size() - n + i];
    if (out[i] <= 0 || in <= 0) g.fail("adaptive pooling to or from an empty size");
    if (in % out[i] == 0) {
      kernel[i] = in / out[i];
    } else {
      uneven.push_back(i);
    }
  }
  if (product(kernel) > 1) {
    x = g.op(kind + "Pool", {x}, {{"kernel_shape", kernel}, {"strides", kernel}});
  }
  const std::string reduce_op = kind == "Max" ? "ReduceMax" : "ReduceMean";
  for (size_t i : uneven) {
    int64_t in = (*sizes)[sizes->size() - n + i], axis = static_cast<int64_t>(i) + 2;
    Values cells;
    for (int64_t o = 0; o < out[i]; ++o) {
      auto [start, end] = adaptive_window(o, in, out[i]);
      cells.push_back(reduce(g, reduce_op, slice(g, x, {axis}, {start}, {end}), {axis}, true));
    }
    x = g.op("Concat", cells, {{"axis", axis}});
  }
  return unbatch(g, x, unbatched);
}

// aten::adaptive_max_pool{1,2,3}d with its indices used.
//   ⇒  divisible sizes: MaxPool with indices (torch_indices); otherwise per output cell: Slice
//      the window box, flatten it (Reshape [0, 0, -1]), ReduceMax and ArgMax (the first maximum,
//      as PyTorch), the box index mapped to PyTorch's by Gather from a constant table; Concat the
//      cells and Reshape to the output size.
Values adaptive_max_pool_with_indices(GraphContext& g, const Args& a, size_t n) {
  auto out = expand_param(a.int_list(1), n);
  bool unbatched = false;
  Value x = batched_input(g, a, n, unbatched);
  // static shape: the windows depend on the input's spatial size.
  auto sizes = spatial_sizes(a, n);
  if (!sizes) {
    g.fail(
        "adaptive max pooling with indices needs the input's spatial size at export (it is a "
        "dynamic axis or unknown)");
  }
  std::vector<int64_t> in(sizes->end() - n, sizes->end());
  bool even = true;
  for (size_t i = 0; i < n; ++i) {
    if (out[i] <= 0 || in[i] <= 0) g.fail("adaptive pooling to or from an empty size");
    even = even && in[i] % out[i] == 0;
  }
  if (even) {
    std::vector<int64_t> kernel(n);
    for (size_t i = 0; i < n; ++i) kernel[i] = in[i] / out[i];
    Values r = g.op("MaxPool", {x}, {{"kernel_shape", kernel}, {"strides", kernel}}, 2);
    return {unbatch(g, r[0], unbatched), unbatch(g, torch_indices(g, x, r[1], n), unbatched)};
  }
  std::vector<int64_t> axes(n), strides(n, 1);  // strides of the flattened spatial dims
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i) + 2;
  for (size_t i = n - 1; i > 0; --i) strides[i - 1] = strides[i] * in[i];
  Value flat_shape = g.constant_ints({0, 0, -1});
  Values values, indices;
  std::vector<int64_t> cell(n, 0);
  for (int64_t c = 0; c < product(out); ++c) {
    std::vector<int64_t> starts(n), ends(n);
    for (size_t i = 0; i < n; ++i)
      std::tie(starts[i], ends[i]) = adaptive_window(cell[i], in[i], out[i]);
    // PyTorch's index of each element of the box, in the box's row-major order.
    std::vector<int64_t> table{0};
    for (size_t i = 0; i < n; ++i) {
      std::vector<int64_t> next;
      for (int64_t t : table) {
        for (int64_t j = starts[i]; j < ends[i]; ++j) next.push_back(t + j * strides[i]);
      }
      table = std::move(next);
    }
    Value box = g.op("Reshape", {slice(g, x, axes, starts, ends), flat_shape});
    values.push_back(reduce(g, "ReduceMax", box, {2}, true));
    Value local = g.op("ArgMax", {box}, {{"axis", int64_t{2}}, {"keepdims", int64_t{1}}});
    indices.push_back(
        g.op("Gather", {g.constant(at::tensor(table, at::kLong)), local}, {{"axis", int64_t{0}}}));
    for (size_t i = n; i-- > 0;) {  // next cell, row-major
      if (++cell[i] < out[i]) break;
      cell[i] = 0;
    }
  }
  std::vector<int64_t> shape{0, 0};
  shape.insert(shape.end(), out.begin(), out.end());
  Value out_shape = g.constant_ints(shape);
  auto assemble = [&](const Values& cells) {
    Value joined = cells.size() == 1 ? cells[0] : g.op("Concat", cells, {{"axis", int64_t{2}}});
    return unbatch(g, g.op("Reshape", {joined, out_shape}), unbatched);
  };
  return {assemble(values), assemble(indices)};
}

// aten::max_pool{1,2,3}d / max_pool{1,2,3}d_with_indices (see max_pool) for `n` spatial dims.
Converter max_pool_nd(size_t n, bool with_indices) {
  return [n, with_indices](GraphContext& g, const Args& a) -> Values {
    return max_pool(g, a, n, with_indices);
  };
}

// aten::avg_pool{1,2,3}d (see avg_pool) for `n` spatial dims.
Converter avg_pool_nd(size_t n) {
  return [n](GraphContext& g, const Args& a) -> Values { return {avg_pool(g, a, n)}; };
}

// aten::adaptive_avg_pool{1,2,3}d(Tensor self, int[] output_size) -> Tensor  ⇒  see adaptive_pool
Converter adaptive_avg_pool_nd(size_t n) {
  return
      [n](GraphContext& g, const Args& a) -> Values { return {adaptive_pool(g, a, n, "Average")}; };
}

// aten::adaptive_max_pool{1,2,3}d(Tensor self, int[] output_size) -> (Tensor, Tensor)
//   ⇒  see adaptive_pool; with its indices used, adaptive_max_pool_with_indices
Converter adaptive_max_pool_nd(size_t n) {
  return [n](GraphContext& g, const Args& a) -> Values {
    if (a.node()->outputs().size() > 1 && a.node()->output(1)->hasUses()) {
      return adaptive_max_pool_with_indices(g, a, n);
    }
    return {adaptive_pool(g, a, n, "Max"), ""};
  };
}

// aten::max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) / max_unpool3d(...,
//   SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor  ⇒  the values scattered
//   (ScatterElements; Scatter before 11) into zeros of the flattened spatial size at their
//   indices (flat positions in each plane, as max_pool's), reshaped to the output size.
//   F.max_unpool1d calls max_unpool2d on an unsqueezed input.
Converter max_unpool_nd(int64_t n) {
  return [n](GraphContext& g, const Args& a) -> Values {
    const int64_t rank = a.require_rank(0);
    if (rank != n + 1 && rank != n + 2) {
      g.fail(fmt::format("max_unpool{}d takes a {}-D or {}-D input", n, n + 1, n + 2));
    }
    const int64_t lead = rank - n;  // [N,] C
    at::ScalarType type = a.dtype(0);
    const bool known = a.is_constant(2);
    Value size = known ? g.constant_ints(a.int_list(2)) : a.tensor_as(2, at::kLong);
    std::vector<int64_t> lead_dims(lead);
    for (int64_t d = 0; d < lead; ++d) lead_dims[d] = d;
    Value planes = dims_of(g, a.tensor(0), lead_dims);
    Value flat_shape = concat_1d(g, {planes, g.constant_ints({-1})});
    Value values = g.op("Reshape", {a.tensor(0), flat_shape});
    Value index = g.op("Reshape", {a.tensor_as(1, at::kLong), flat_shape});
    int64_t product = 1;
    if (known) {
      for (int64_t k : a.int_list(2)) product *= k;
    }
    Value area = known ? g.constant_ints({product}) : reduce(g, "ReduceProd", size, {}, true);
    Value zeros = g.op("ConstantOfShape", {concat_1d(g, {planes, area})},
                       {{"value", at::zeros({1}, at::TensorOptions().dtype(type))}});
    Value out = scatter_elements(g, zeros, index, values, lead);
    return {g.op("Reshape", {out, concat_1d(g, {planes, size})})};
  };
}

}  // namespace

void register_pool(Registry& r) {
  for (size_t n : {1, 2, 3}) {
    const std::string d = std::to_string(n) + "d";
    r.add("aten::max_pool" + d, from(9), max_pool_nd(n, false));
    r.add("aten::max_pool" + d + "_with_indices", from(9), max_pool_nd(n, true));
    r.add("aten::avg_pool" + d, from(9), avg_pool_nd(n));
    r.add("aten::adaptive_avg_pool" + d, from(9), adaptive_avg_pool_nd(n));
    // aten::_adaptive_avg_pool2d/3d(Tensor self, SymInt[] output_size): the core ATen form
    if (n >= 2) r.add("aten::_adaptive_avg_pool" + d, from(9), adaptive_avg_pool_nd(n));
    r.add("aten::adaptive_max_pool" + d, from(9), adaptive_max_pool_nd(n));
  }
  r.add("aten::max_unpool2d", from(9), max_unpool_nd(2));
  r.add("aten::max_unpool3d", from(9), max_unpool_nd(3));
}

}  // namespace torchonnx::symbolic::ops
