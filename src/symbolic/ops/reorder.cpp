// Reordering along dims: roll, fftshift/ifftshift, flip, fliplr/flipud, rot90 — slices of a
// tensor put back together in another order.
//
// A shift taken modulo a size or gather indices may depend on a dim's size: such lowerings read it
// from type propagation (marked "static shape").
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cstdlib>
#include <limits>
#include <numeric>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/ops/shape_util.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kIntMin = std::numeric_limits<int64_t>::min();

// roll of `x` by `shift` along `dim` (size n): the last shift elements, then the others.
// static shape: the shift is reduced modulo the dim's size.
Value roll_dim(GraphContext& g, const Value& x, int64_t shift, int64_t dim, int64_t n) {
  if (n == 0) return x;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return g.op("Concat", {slice(g, x, {dim}, {n - s}, {n}), slice(g, x, {dim}, {0}, {n - s})},
              {{"axis", dim}});
}

// aten::roll(Tensor self, int[1] shifts, int[1] dims=[])  ⇒  Concat of two Slices per dim
// (without dims: of the flattened tensor, reshaped back); static shape
Values roll(GraphContext& g, const Args& a) {
  Ints shifts = a.int_list(1), dims = a.int_list(2);
  const int64_t rank = a.require_rank(0);
  auto sizes = a.sizes(0);
  if (!sizes) g.fail("roll needs the input's static shape (the shift is taken modulo a size)");
  Value x = a.tensor(0);
  if (dims.empty()) {
    if (shifts.size() != 1) g.fail("roll without dims takes one shift");
    int64_t n =
        std::accumulate(sizes->begin(), sizes->end(), int64_t{1}, std::multiplies<int64_t>());
    Value flat = roll_dim(g, reshape_const(g, x, {-1}), shifts[0], 0, n);
    return {g.op("Reshape", {flat, shape_of(g, x)})};
  }
  if (shifts.size() != dims.size()) g.fail("roll takes as many shifts as dims");
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = normalize_dim(dims[i], rank);
    x = roll_dim(g, x, shifts[i], d, (*sizes)[d]);
  }
  return {x};
}

// aten::fft_fftshift / fft_ifftshift(Tensor input, int[1]? dim=None) -> Tensor  ⇒  roll of
//   each dim (every dim without `dim`) by half its size, n // 2 (fftshift) or -(n // 2)
//   (ifftshift); static sizes
Values fftshift_of(GraphContext& g, const Args& a, bool inverse) {
  const int64_t rank = a.require_rank(0);
  auto sizes = a.sizes(0);
  if (!sizes) g.fail("fftshift needs the input's static shape (it rolls by half of each size)");
  Ints dims;
  if (a.is_none(1)) {
    dims.resize(rank);
    std::iota(dims.begin(), dims.end(), 0);
  } else {
    dims = a.int_list(1);
  }
  Value x = a.tensor(0);
  for (int64_t dim : dims) {
    const int64_t d = normalize_dim(dim, rank);
    const int64_t n = (*sizes)[d];
    if (n < 0) g.fail(fmt::format("fftshift needs the size of dim {}, which is dynamic", d));
    x = roll_dim(g, x, inverse ? -(n / 2) : n / 2, d, n);
  }
  return {x};
}
Values fftshift(GraphContext& g, const Args& a) {
  return fftshift_of(g, a, false);
}
Values ifftshift(GraphContext& g, const Args& a) {
  return fftshift_of(g, a, true);
}

// `x` (rank >= 1, `sizes` from type propagation) reversed along each of `dims` (non-negative).
using FlipDims = Value (*)(GraphContext& g, const Value& x, const std::optional<Ints>& sizes,
                           const Ints& dims);

// At opset 9: a Gather of reversed constant indices per dim (static shape).
Value flip_by_gather_dims(GraphContext& g, const Value& x, const std::optional<Ints>& sizes,
                          const Ints& dims) {
  Value y = x;
  for (int64_t d : dims) {
    if (!sizes || (*sizes)[d] < 0) {
      g.fail("flipping at opset 9 needs the input's static shape; export with opset >= 10");
    }
    at::Tensor idx = at::arange((*sizes)[d] - 1, -1, -1, at::kLong);
    y = g.op("Gather", {y, g.constant(idx)}, {{"axis", d}});
  }
  return y;
}

// From opset 10: one Slice with step -1 over all dims.
Value flip_by_slice_dims(GraphContext& g, const Value& x, const std::optional<Ints>& sizes,
                         const Ints& dims) {
  Ints sliced;
  for (int64_t d : dims) {
    // A dim of size 0 or 1 is its own flip (and ONNX's Slice shape inference miscounts an
    // empty dim sliced backwards).
    if (!sizes || (*sizes)[d] > 1) sliced.push_back(d);
  }
  if (sliced.empty()) return x;
  const auto k = sliced.size();
  return slice(g, x, sliced, Ints(k, -1), Ints(k, kIntMin), Ints(k, -1));
}

// aten::flip(Tensor self, int[] dims)  ⇒  Gather of reversed constant indices (9, static shape),
// Slice with step -1 (10+)
template <FlipDims flip_dims>
Values flip(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank == 0) return {a.tensor(0)};
  Ints dims = a.int_list(1);
  for (auto& d : dims) d = normalize_dim(d, rank);
  return {flip_dims(g, a.tensor(0), a.sizes(0), dims)};
}

// aten::fliplr(Tensor self)  ⇒  flip of dim 1 (PyTorch requires rank >= 2)
template <FlipDims flip_dims>
Values fliplr(GraphContext& g, const Args& a) {
  if (a.require_rank(0) < 2) g.fail("fliplr of a tensor of rank < 2 (PyTorch requires >= 2)");
  return {flip_dims(g, a.tensor(0), a.sizes(0), {1})};
}

// aten::flipud(Tensor self)  ⇒  flip of dim 0 (PyTorch requires rank >= 1)
template <FlipDims flip_dims>
Values flipud(GraphContext& g, const Args& a) {
  if (a.require_rank(0) < 1) g.fail("flipud of a 0-d tensor (PyTorch requires rank >= 1)");
  return {flip_dims(g, a.tensor(0), a.sizes(0), {0})};
}

// aten::rot90(Tensor self, int k=1, int[] dims=[0,1])  ⇒  as PyTorch, by k mod 4: the input
// (0), flip of dims[1] then Transpose of dims (1), flip of both dims (2), flip of dims[0] then
// Transpose (3)
template <FlipDims flip_dims>
Values rot90(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const Ints dims = a.int_list(2);
  if (dims.size() != 2) g.fail("rot90 takes exactly two dims");
  if (rank < 2) g.fail("rot90 of a tensor of rank < 2 (PyTorch requires >= 2)");
  const int64_t d0 = normalize_dim(dims[0], rank), d1 = normalize_dim(dims[1], rank);
  if (d0 == d1) g.fail("rot90 of two equal dims (PyTorch requires different ones)");
  const int64_t k = ((a.int_arg(1) % 4) + 4) % 4;
  Value x = a.tensor(0);
  auto sizes = a.sizes(0);
  if (k == 0) return {x};
  if (k == 2) return {flip_dims(g, x, sizes, {d0, d1})};
  Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[d0], perm[d1]);
  return {transpose(g, flip_dims(g, x, sizes, {k == 1 ? d1 : d0}), perm)};
}

}  // namespace

void register_reorder(Registry& r) {
  r.add("aten::roll", from(9), roll);
  r.add("aten::fft_fftshift", from(9), fftshift);
  r.add("aten::fft_ifftshift", from(9), ifftshift);
  r.add("aten::flip", {9, 9}, flip<flip_by_gather_dims>);
  r.add("aten::flip", from(10), flip<flip_by_slice_dims>);
  r.add("aten::fliplr", {9, 9}, fliplr<flip_by_gather_dims>);
  r.add("aten::fliplr", from(10), fliplr<flip_by_slice_dims>);
  r.add("aten::flipud", {9, 9}, flipud<flip_by_gather_dims>);
  r.add("aten::flipud", from(10), flipud<flip_by_slice_dims>);
  r.add("aten::rot90", {9, 9}, rot90<flip_by_gather_dims>);
  r.add("aten::rot90", from(10), rot90<flip_by_slice_dims>);
}

}  // namespace torchonnx::symbolic::ops
