// ONNX building blocks whose form changed across opsets, shared by the converter families.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/context.h"

namespace torchonnx::symbolic {

// Unsqueeze/Squeeze: axes attribute before opset 13, input from 13.
Value unsqueeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes);
Value squeeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes);
// Split into pieces of `sizes` along `axis`: split attribute before 13, input from 13.
Values split(GraphContext& g, const Value& v, const std::vector<int64_t>& sizes, int64_t axis);
// Split into `parts` equal pieces along `axis` (the dim divides evenly): from opset 18 Split
// names their count (num_outputs).
Values split_equal(GraphContext& g, const Value& v, int64_t parts, int64_t axis);
// ReduceX over `axes` (all axes when empty): ReduceSum takes axes as an input from 13, the others
// from 18.
Value reduce(GraphContext& g, const std::string& op, const Value& v,
             const std::vector<int64_t>& axes, bool keepdims);
// Clip to [min, max]: attributes before 11, inputs from 11 (either bound may be absent).
Value clip(GraphContext& g, const Value& v, std::optional<double> min, std::optional<double> max,
           at::ScalarType type);
// Pad by constant, non-negative `pads` (ONNX's order: the begins of every dim, then the ends) in
// `mode` ("constant" with `value`, "reflect", "edge", "wrap"), for x of dtype `type`; x itself
// when nothing is padded. The pads (and value) are attributes before opset 11, inputs from 11. Pad
// takes only floats before 11 (other dtypes pass through double, exact to 2^53; bool through
// float) and no bool before 13 (bool passes through uint8).
Value pad(GraphContext& g, const Value& x, const std::vector<int64_t>& pads,
          const std::string& mode, double value, at::ScalarType type);
// Pad by `pads` computed in the graph (1-D int64, ONNX's order; negative ones crop): an input,
// from opset 11 (the caller refuses lower opsets); bool passes through uint8 before 13.
Value pad_computed(GraphContext& g, const Value& x, const Value& pads, const std::string& mode,
                   double value, at::ScalarType type);
// A dim index made non-negative for a tensor of `rank`.
int64_t normalize_dim(int64_t dim, int64_t rank);
// Slice with constant bounds: attributes before opset 10 (no steps there: fails with a remedy),
// inputs from 10. Ends may be INT64_MAX.
Value slice(GraphContext& g, const Value& x, const std::vector<int64_t>& axes,
            const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
            const std::vector<int64_t>& steps = {});
// Slice with bounds computed in the graph (1-D int64 `starts`, `ends`, `axes`, and `steps` when
// given): inputs, from opset 10. Below it fails: "`what` needs opset 10 (Slice inputs); export
// with opset >= 10".
Value slice_computed(GraphContext& g, const Value& x, const Value& starts, const Value& ends,
                     const Value& axes, const Value& steps, const std::string& what);
// Transpose by `perm`, or `x` itself when perm is the identity.
Value transpose(GraphContext& g, const Value& x, const std::vector<int64_t>& perm);
// `v` cast from `from` to `to`, or `v` itself when they are the same (or `to` is undefined).
Value cast_if(GraphContext& g, const Value& v, at::ScalarType from, at::ScalarType to);
// Shape(x), its dim `d` as a 0-d int64, and its dims `dims` as a 1-D int64, computed in the graph.
Value shape_of(GraphContext& g, const Value& x);
Value dim_size(GraphContext& g, const Value& x, int64_t d);
Value dims_of(GraphContext& g, const Value& x, const std::vector<int64_t>& dims);
// 0, 1, ..., n-1 (1-D int64) for a 0-d int64 `n` computed in the graph: Range from opset 11,
// below it the indices of NonZero(ConstantOfShape([n], 1)).
Value arange(GraphContext& g, const Value& n);
// start, start + step, ... below end, for 0-d `start`, `end`, `step` of dtype `work` (int64 or
// double): Range from opset 11; below it start + step·arange(ceil((end - start) / step)).
Value range(GraphContext& g, const Value& start, const Value& end, const Value& step,
            at::ScalarType work);
// The elementwise max (or min) of x and y of `type`: Max/Min, which take integers from opset 12
// (Where of Greater/Less before); Or/And for bools.
Value extreme(GraphContext& g, bool max, const Value& x, const Value& y, at::ScalarType type);
// Concat of 1-D parts along axis 0 (the part itself when there is one).
Value concat_1d(GraphContext& g, const Values& parts);
// Reshape to a shape of sizes computed in the graph: with allowzero from opset 14, so a 0 is a
// size and not "copy the input's dim"; before 14 a 0 copies, which only differs for empty tensors.
Value reshape_exact(GraphContext& g, const Value& x, const Value& shape);
// Where(cond, x, y) of elements of `type`: ONNX Runtime has no bool Where kernel, so bool
// branches are selected with And/Or/Not.
Value where(GraphContext& g, const Value& cond, const Value& x, const Value& y,
            at::ScalarType type);
// ScatterElements of `updates` into `data` at `index` along `axis` (Scatter before opset 11, the
// same semantics), reducing with `reduction` ("add", "mul", ...: opset 16) when it is given.
Value scatter_elements(GraphContext& g, const Value& data, const Value& index, const Value& updates,
                       int64_t axis, const std::string& reduction = "");
// A Loop carrying `initial` (dtypes `types`; named `names` in its body, called `body_name`): at
// most `trips` iterations ("" for no limit) while `cond` holds ("" for none); `step` maps the
// iteration number (0-d int64), the condition (0-d bool) and the carried values to the next
// condition and carried values. Returns the carried values after the last iteration. (A loop of
// the model's own, with scan outputs and lists, is ops/control.cpp's.)
struct LoopStep {
  Value cond;
  Values carried;
};
using LoopBody =
    std::function<LoopStep(const Value& iteration, const Value& cond, const Values& carried)>;
Values carried_loop(GraphContext& g, const std::string& body_name, const Value& trips,
                    const Value& cond, const Values& initial, const std::vector<std::string>& names,
                    const std::vector<at::ScalarType>& types, const LoopBody& step);
// If(cond()) of two branches, named `then_name` and `else_name`, each built by its function, which
// returns the branch's outputs (of dtypes `types`; values made in the branch: an outer value is
// wrapped in Identity). `cond` is built after the branches, before the If.
Values if_else(GraphContext& g, const std::string& then_name,
               const std::function<Values()>& then_branch, const std::string& else_name,
               const std::function<Values()>& else_branch, const std::vector<at::ScalarType>& types,
               const std::function<Value()>& cond);
// TopK's forms: `k` an attribute at 9 (`k_static`), an input from 10; `largest` (and NaN ranked
// as PyTorch ranks it) from 11.
// The dtype TopK runs in for input dtype t: floats at every opset (half precision widened to
// float); from 11 also int32/int64 (narrower integers and bool widened to int64). Before 11
// integers are sorted as double, exact for |values| < 2^53.
at::ScalarType topk_type(int opset, at::ScalarType t);
// The k largest (or smallest) elements of x along `axis`, sorted, and their int64 indices; x and
// the values are of dtype topk_type(opset, ·). `k` is a 1-D int64 tensor of one element from
// opset 10; at 9, `k_static` (fails with a remedy when it is not known). Before 11 TopK has no
// `largest`: the smallest are the largest of -x. Equal elements come in index order (ONNX TopK's
// rule, PyTorch's stable order).
Values topk_in(GraphContext& g, const Value& x, const Value& k, std::optional<int64_t> k_static,
               int64_t axis, bool largest);
// A k known at export as topk_in's `k`: the 1-D constant [k] from opset 10, none at 9 (where it is
// the attribute, from `k_static`).
Value topk_k(GraphContext& g, int64_t k);
// The size of x's `axis` as topk_in's k and k_static: Gather(Shape(x)) from opset 10; at 9 the
// static size (`static_size`; refused with require_opset when it is not known).
std::pair<Value, std::optional<int64_t>> topk_k_of_dim(GraphContext& g, const Value& x,
                                                       int64_t axis,
                                                       std::optional<int64_t> static_size,
                                                       const std::string& what);
// topk_in for x of any dtype t: computed in topk_type(opset, t), the values cast back to t.
// PyTorch orders NaN above every number (+inf included), ONNX Runtime leaves it unordered: from
// opset 11 floats are ranked with NaN as +inf (NaN and +inf in one slice then keep index order)
// and the values gathered from x. Before 11 (no GatherElements) NaN is not handled.
Values topk(GraphContext& g, const Value& x, at::ScalarType t, const Value& k,
            std::optional<int64_t> k_static, int64_t axis, bool largest);
// The length of int[] argument `i` when it is static (a constant or a prim::ListConstruct).
std::optional<int64_t> list_length(const Args& a, size_t i);
// A per-spatial-dim parameter given once for all dims (kernel_size=3) repeated `n` times.
std::vector<int64_t> expand_param(std::vector<int64_t> v, size_t n);
// The largest finite value of a floating dtype (float's for any other dtype).
double max_finite(at::ScalarType type);
// A reduction's result dtype: `dtype` when given, else type propagation's (fails when unknown).
at::ScalarType result_dtype(GraphContext& g, const Args& a, std::optional<int64_t> dtype);

}  // namespace torchonnx::symbolic
