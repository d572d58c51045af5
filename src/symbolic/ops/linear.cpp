// Matrix and tensor products: linear, addmm, matmul, mm, bmm, baddbmm, mv, dot, outer, tensordot,
// einsum, bilinear, cross/linalg_cross, addmv/addbmm/addr, vdot/inner/kron/vecdot, block_diag,
// multi_dot, matrix_power, trace; products of sets: cartesian_prod, combinations.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

using Ints = std::vector<int64_t>;

namespace {

// ONNX Runtime has Gemm kernels for float and double only (MatMul also takes the integer types).
bool gemm_type(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble;
}

// The dtype of a product's result: the output's when type propagation knows it, else input i's.
at::ScalarType result_type(const Args& a, size_t i) {
  at::ScalarType out = a.output_dtype();
  return out != at::ScalarType::Undefined ? out : a.dtype(i);
}

// The beta or alpha of addmm and its kin (argument `i`, 1 when absent): its value when it is a
// constant, else the number computed in the graph (`computed`, in the result's dtype, as
// torch.onnx casts it).
struct Coefficient {
  std::optional<double> value;
  Value computed;

  bool is(double v) const { return value && *value == v; }
};

Coefficient coefficient(const Args& a, size_t i, at::ScalarType type) {
  if (a.size() <= i) return {1.0, {}};
  if (a.is_constant(i)) return {a.float_arg(i), {}};
  return {std::nullopt, a.tensor_as(i, type)};
}

// v * c (v itself for a constant 1).
Value scaled(GraphContext& g, const Value& v, const Coefficient& c, at::ScalarType type) {
  if (!c.value) return g.op("Mul", {v, c.computed});
  return *c.value == 1.0 ? v : g.op("Mul", {v, g.constant_scalar(*c.value, type)});
}

// beta * self + alpha * product (PyTorch's addmm/baddbmm): self is ignored when beta is a constant
// 0, so its nan/inf do not propagate (a beta computed in the graph multiplies it, as torch.onnx
// does); multiplications by a constant 1 are skipped.
Value add_scaled(GraphContext& g, const Value& self, const Value& product, const Coefficient& beta,
                 const Coefficient& alpha, at::ScalarType type) {
  Value p = scaled(g, product, alpha, type);
  if (beta.is(0.0)) return p;
  return g.op("Add", {scaled(g, self, beta, type), p});
}

// ----- einsum ---------------------------------------------------------------------------------

// One operand's subscripts, with "..." kept as the marker '.'.
std::vector<char> parse_subscripts(GraphContext& g, const std::string& s) {
  std::vector<char> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (s.compare(i, 3, "...") != 0) g.fail("einsum: malformed ellipsis in '" + s + "'");
      out.push_back('.');
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      out.push_back(s[i]);
    } else {
      g.fail(std::string("einsum: invalid subscript '") + s[i] + "'");
    }
  }
  return out;
}

// The operands' subscripts of an equation ("ab,bc->ac" → ["ab", "bc"]).
std::vector<std::string> operand_subscripts(const std::string& equation) {
  std::string lhs = equation.substr(0, equation.find("->"));
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    out.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// ONNX's Einsum wants the same number of ellipsis dims in every operand that has one (PyTorch
// broadcasts them from the right): the operands with fewer get leading size-1 ellipsis dims.
void align_ellipsis(GraphContext& g, const std::string& equation, Values& tensors,
                    const std::vector<int64_t>& ranks) {
  auto subs = operand_subscripts(equation);
  if (subs.size() != tensors.size()) return;  // Einsum reports the mismatch
  std::vector<int64_t> n_ellipsis(subs.size(), -1);
  int64_t most = 0;
  for (size_t k = 0; k < subs.size(); ++k) {
    if (subs[k].find("...") == std::string::npos) continue;
    int64_t letters = std::count_if(subs[k].begin(), subs[k].end(), [](char c) {
      return std::isalpha(static_cast<unsigned char>(c));
    });
    n_ellipsis[k] = ranks[k] - letters;
    most = std::max(most, n_ellipsis[k]);
  }
  for (size_t k = 0; k < subs.size(); ++k) {
    if (n_ellipsis[k] < 0 || n_ellipsis[k] == most) continue;
    const std::string before = subs[k].substr(0, subs[k].find("..."));
    int64_t at = std::count_if(before.begin(), before.end(),
                               [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < most - n_ellipsis[k]; ++i) axes.push_back(at + i);
    tensors[k] = unsqueeze(g, tensors[k], axes);
  }
}

// Einsum without the Einsum op (opsets before 12): every operand is transposed and unsqueezed to
// a common list of labels (ellipsis dims expanded from the operands' ranks), multiplied with
// broadcasting, and the labels absent from the output summed out. The product holds every label
// at once (memory grows with all the sizes, not just the output's).
Value einsum_by_mul(GraphContext& g, const std::string& equation, const Values& tensors,
                    const std::vector<int64_t>& ranks) {
  const bool explicit_output = equation.find("->") != std::string::npos;
  const std::string rhs = explicit_output ? equation.substr(equation.find("->") + 2) : "";
  std::vector<std::vector<char>> inputs;
  for (const auto& sub : operand_subscripts(equation)) inputs.push_back(parse_subscripts(g, sub));
  if (inputs.size() != tensors.size()) {
    g.fail("einsum: the equation has " + std::to_string(inputs.size()) + " operands, got " +
           std::to_string(tensors.size()) + " tensors");
  }
  // Labels: letters as themselves, ellipsis dims as -1, -2, ... counted from the last one.
  int64_t ellipsis_rank = 0;
  std::vector<std::vector<int>> labels(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto& sub = inputs[k];
    int64_t letters = std::count_if(sub.begin(), sub.end(), [](char c) { return c != '.'; });
    int64_t n_ellipsis = ranks[k] - letters;
    const bool has_ellipsis = std::find(sub.begin(), sub.end(), '.') != sub.end();
    if (n_ellipsis < 0 || (!has_ellipsis && n_ellipsis != 0)) {
      g.fail("einsum: operand " + std::to_string(k) + " has rank " + std::to_string(ranks[k]) +
             ", which does not match its subscripts");
    }
    if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, n_ellipsis);
    std::set<int> seen;
    for (char c : sub) {
      if (c == '.') {
        for (int64_t e = n_ellipsis; e > 0; --e) labels[k].push_back(-static_cast<int>(e));
        continue;
      }
      if (!seen.insert(c).second) {
        g.fail(std::string("einsum: the repeated subscript '") + c +
               "' within one operand (a diagonal) needs the Einsum op: export with opset >= 12");
      }
      labels[k].push_back(c);
    }
  }
  // Output labels: explicit, or the ellipsis dims then the letters seen once, sorted.
  std::vector<int> out;
  if (explicit_output) {
    for (char c : parse_subscripts(g, rhs)) {
      if (c == '.') {
        for (int64_t e = ellipsis_rank; e > 0; --e) out.push_back(-static_cast<int>(e));
      } else {
        out.push_back(c);
      }
    }
  } else {
    for (int64_t e = ellipsis_rank; e > 0; --e) out.push_back(-static_cast<int>(e));
    std::map<int, int> counts;
    for (const auto& l : labels) {
      for (int c : l) {
        if (c > 0) counts[c]++;
      }
    }
    std::vector<int> once;
    for (auto [c, n] : counts) {
      if (n == 1) once.push_back(c);
    }
    // Upper case sorts before lower case, as in PyTorch.
    out.insert(out.end(), once.begin(), once.end());
  }
  std::vector<int> all = out;
  for (const auto& l : labels) {
    for (int c : l) {
      if (std::find(all.begin(), all.end(), c) == all.end()) all.push_back(c);
    }
  }
  Value product;
  for (size_t k = 0; k < tensors.size(); ++k) {
    // Transpose the operand's labels into the order of `all`, then unsqueeze the missing ones.
    std::vector<std::pair<size_t, int64_t>> order;  // (position in all, operand axis)
    for (size_t i = 0; i < labels[k].size(); ++i) {
      size_t pos = std::find(all.begin(), all.end(), labels[k][i]) - all.begin();
      order.emplace_back(pos, static_cast<int64_t>(i));
    }
    std::sort(order.begin(), order.end());
    std::vector<int64_t> perm, missing;
    for (auto [pos, axis] : order) perm.push_back(axis);
    std::set<size_t> present;
    for (auto [pos, axis] : order) present.insert(pos);
    for (size_t pos = 0; pos < all.size(); ++pos) {
      if (!present.count(pos)) missing.push_back(static_cast<int64_t>(pos));
    }
    Value t = transpose(g, tensors[k], perm);
    if (!missing.empty()) t = unsqueeze(g, t, missing);
    product = k == 0 ? t : g.op("Mul", {product, t});
  }
  std::vector<int64_t> summed;
  for (size_t pos = out.size(); pos < all.size(); ++pos)
    summed.push_back(static_cast<int64_t>(pos));
  if (summed.empty()) return product;
  return reduce(g, "ReduceSum", product, summed, /*keepdims=*/false);
}

// linear: Gemm(transB=1) for a 2-D float input with a bias, or without one where Gemm's C is
// optional (`gemm_without_c`, opset 11+); MatMul(x, Wᵀ) + b otherwise.
Values linear_of(GraphContext& g, const Args& a, bool gemm_without_c) {
  const bool has_bias = !a.is_none(2);
  if (a.rank(0) == 2 && gemm_type(a.dtype(0)) && (has_bias || gemm_without_c)) {
    Values inputs{a.tensor(0), a.tensor(1)};
    if (has_bias) inputs.push_back(a.tensor(2));
    return {g.op("Gemm", inputs, {{"alpha", 1.0}, {"beta", 1.0}, {"transB", 1}})};
  }
  Value wt = g.op("Transpose", {a.tensor(1)}, {{"perm", std::vector<int64_t>{1, 0}}});
  Value y = g.op("MatMul", {a.tensor(0), wt});
  if (has_bias) y = g.op("Add", {y, a.tensor(2)});
  return {y};
}

// addmm: Gemm for float/double when beta ≠ 0, or when Gemm's C is optional (`gemm_without_c`,
// opset 11+); MatMul, Mul, Add otherwise.
Values addmm_of(GraphContext& g, const Args& a, bool gemm_without_c) {
  at::ScalarType type = result_type(a, 1);
  const Coefficient beta = coefficient(a, 3, type), alpha = coefficient(a, 4, type);
  if (gemm_type(type) && beta.value && alpha.value && (!beta.is(0.0) || gemm_without_c)) {
    Values inputs{a.tensor(1), a.tensor(2)};
    if (!beta.is(0.0)) inputs.push_back(a.tensor(0));
    return {g.op("Gemm", inputs, {{"alpha", *alpha.value}, {"beta", *beta.value}})};
  }
  Value product = g.op("MatMul", {a.tensor(1), a.tensor(2)});
  return {add_scaled(g, a.tensor(0), product, beta, alpha, type)};
}

// aten::linear(Tensor input, Tensor weight, Tensor? bias) -> Tensor
//   ⇒  MatMul(x, Wᵀ) + b; Gemm(transB=1) for a 2-D float input with a bias (ONNX Runtime's Gemm
//   takes float/double only; C is optional from opset 11) (9–10)
Values linear_9(GraphContext& g, const Args& a) {
  return linear_of(g, a, /*gemm_without_c=*/false);
}

// aten::linear(Tensor input, Tensor weight, Tensor? bias) -> Tensor
//   ⇒  Gemm(transB=1) for a 2-D float input (11+: bias optional), MatMul(x, Wᵀ) + b otherwise
Values linear_11(GraphContext& g, const Args& a) {
  return linear_of(g, a, /*gemm_without_c=*/true);
}

// aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
//   ⇒  Gemm(mat1, mat2, self, alpha, beta) for float/double with beta ≠ 0; MatMul, Mul, Add for
//   integers and beta = 0 (9–10: Gemm needs C), self dropped then (as PyTorch: its nan/inf do not
//   propagate)
Values addmm_9(GraphContext& g, const Args& a) {
  return addmm_of(g, a, /*gemm_without_c=*/false);
}

// aten::addmm(...) -> Tensor  ⇒  Gemm(mat1, mat2, self, alpha, beta) for float/double, without
//   self when beta is 0 (11+); MatMul, Mul, Add for integers
Values addmm_11(GraphContext& g, const Args& a) {
  return addmm_of(g, a, /*gemm_without_c=*/true);
}

// aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)
//   -> Tensor  ⇒  beta * self + alpha * MatMul(batch1, batch2) (self dropped when beta is 0;
//   beta and alpha may be computed in the graph)
Values baddbmm(GraphContext& g, const Args& a) {
  const at::ScalarType type = result_type(a, 1);
  const Coefficient beta = coefficient(a, 3, type), alpha = coefficient(a, 4, type);
  Value product = g.op("MatMul", {a.tensor(1), a.tensor(2)});
  return {add_scaled(g, a.tensor(0), product, beta, alpha, type)};
}

// aten::matmul / mm / bmm(Tensor self, Tensor other), aten::mv(Tensor self, Tensor vec),
// aten::dot(Tensor self, Tensor tensor) -> Tensor  ⇒  MatMul (numpy semantics: 1-D operands,
//   batch broadcasting; float and integer types)
Values matmul(GraphContext& g, const Args& a) {
  return {g.op("MatMul", {a.tensor(0), a.tensor(1)})};
}

// aten::outer(Tensor self, Tensor vec2) -> Tensor  ⇒  Mul(Unsqueeze(self, 1), vec2) in the
//   promoted type (And for bool)
Values outer(GraphContext& g, const Args& a) {
  at::ScalarType type = result_type(a, 0);
  Value col = unsqueeze(g, a.tensor_as(0, type), {1});
  return {g.op(type == at::kBool ? "And" : "Mul", {col, a.tensor_as(1, type)})};
}

// aten::tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor
//   ⇒  Transpose both to (free, contracted) / (contracted, free), Reshape to [free_a..., K] and
//   [K, Fb], MatMul, Reshape to free_a ++ free_b (sizes computed in the graph)
Values tensordot(GraphContext& g, const Args& a) {
  const int64_t rank_a = a.require_rank(0), rank_b = a.require_rank(1);
  std::vector<int64_t> dims_a = a.int_list(2), dims_b = a.int_list(3);
  if (dims_a.size() != dims_b.size()) {
    g.fail("tensordot: dims_self and dims_other must have the same length");
  }
  for (auto& d : dims_a) d = normalize_dim(d, rank_a);
  for (auto& d : dims_b) d = normalize_dim(d, rank_b);
  std::vector<int64_t> free_a, free_b;
  for (int64_t i = 0; i < rank_a; ++i) {
    if (std::find(dims_a.begin(), dims_a.end(), i) == dims_a.end()) free_a.push_back(i);
  }
  for (int64_t i = 0; i < rank_b; ++i) {
    if (std::find(dims_b.begin(), dims_b.end(), i) == dims_b.end()) free_b.push_back(i);
  }
  std::vector<int64_t> perm_a = free_a, perm_b = dims_b;
  perm_a.insert(perm_a.end(), dims_a.begin(), dims_a.end());
  perm_b.insert(perm_b.end(), free_b.begin(), free_b.end());
  Value x = a.tensor(0), y = a.tensor(1);
  Value minus_one = g.constant_ints({-1});
  Value free_shape_a = free_a.empty() ? "" : dims_of(g, x, free_a);
  Value free_shape_b = free_b.empty() ? "" : dims_of(g, y, free_b);
  Value xa = transpose(g, x, perm_a);
  Value xa_shape =
      free_a.empty() ? minus_one : g.op("Concat", {free_shape_a, minus_one}, {{"axis", 0}});
  xa = g.op("Reshape", {xa, xa_shape});  // [free_a..., K]
  // K: the product of the contracted sizes of `y` (equal to x's, or x's broadcastable 1s).
  Value k = dims_b.empty() ? g.constant_ints({1})
                           : reduce(g, "ReduceProd", dims_of(g, y, dims_b), {}, true);
  Value yb = g.op("Reshape", {transpose(g, y, perm_b),
                              g.op("Concat", {k, minus_one}, {{"axis", 0}})});  // [K, Fb]
  Value product = g.op("MatMul", {xa, yb});
  Values out_shape;
  if (!free_a.empty()) out_shape.push_back(free_shape_a);
  if (!free_b.empty()) out_shape.push_back(free_shape_b);
  if (out_shape.empty()) return {g.op("Reshape", {product, g.constant_ints({})})};
  Value shape = out_shape.size() == 1 ? out_shape[0] : g.op("Concat", out_shape, {{"axis", 0}});
  return {g.op("Reshape", {product, shape})};
}

// einsum's equation (spaces removed) and operands, checked. Bool operands are cast to int64, as
// torch.onnx does (neither Einsum nor Mul/ReduceSum take bool); `result` casts the sum to
// PyTorch's result dtype: bool (nonzero is true) where PyTorch multiplies, but int64 where it
// sums out a label ("ij->j").
struct EinsumArgs {
  std::string equation;
  Values tensors;
  const torch::jit::Node* list;
  at::ScalarType bool_result = at::ScalarType::Undefined;  // set for bool operands

  Value result(GraphContext& g, const Value& sum) const {
    return bool_result == at::ScalarType::Undefined ? sum : g.cast(sum, bool_result);
  }
};

EinsumArgs einsum_args(GraphContext& g, const Args& a) {
  if (a.jit(0)->type()->kind() != c10::TypeKind::StringType) {
    g.fail(
        "einsum's sublist form (operands with subscript lists) is not supported; pass the "
        "equation as a string");
  }
  EinsumArgs e;
  for (char c : a.str_arg(0)) {
    if (c != ' ') e.equation += c;
  }
  e.tensors = a.tensor_list(1);
  e.list = a.jit(1)->node();
  if (e.list->kind() != c10::prim::ListConstruct) {
    g.fail("einsum needs its operands as a list built in the graph (prim::ListConstruct)");
  }
  if (!e.tensors.empty() && Args(g, e.list).dtype(0) == at::kBool) {
    const at::ScalarType out = a.output_dtype(0);
    e.bool_result = out == at::ScalarType::Undefined ? at::kBool : out;
    for (Value& t : e.tensors) t = g.cast(t, at::kLong);
  }
  return e;
}

// The static ranks of einsum's operands.
std::vector<int64_t> operand_ranks(GraphContext& g, const torch::jit::Node* list) {
  std::vector<int64_t> ranks;
  Args operands(g, list);
  for (size_t k = 0; k < list->inputs().size(); ++k) ranks.push_back(operands.require_rank(k));
  return ranks;
}

// aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
//   ⇒  Transpose/Unsqueeze to common labels, Mul, ReduceSum (9–11: no diagonals, a repeated
//   subscript within one operand needs opset 12)
Values einsum_9(GraphContext& g, const Args& a) {
  EinsumArgs e = einsum_args(g, a);
  std::vector<int64_t> ranks = operand_ranks(g, e.list);
  return {e.result(g, einsum_by_mul(g, e.equation, e.tensors, ranks))};
}

// aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
//   ⇒  Einsum (12+), the operands with fewer ellipsis dims unsqueezed
Values einsum_12(GraphContext& g, const Args& a) {
  EinsumArgs e = einsum_args(g, a);
  if (e.equation.find("...") != std::string::npos) {
    align_ellipsis(g, e.equation, e.tensors, operand_ranks(g, e.list));
  }
  return {e.result(g, g.op("Einsum", e.tensors, {{"equation", e.equation}}))};
}

// ----- bilinear --------------------------------------------------------------------------------

// The operands of aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias) in the
// result dtype, checked as PyTorch does: inputs of one rank and equal leading dims (not checked
// here when dynamic), weight [out, in1, in2].
struct BilinearArgs {
  Value x1, x2, weight;
  int64_t rank;
  at::ScalarType type;
};

BilinearArgs bilinear_args(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank < 1 || a.require_rank(1) != rank) {
    g.fail("bilinear: the inputs must have the same rank (>= 1)");
  }
  if (a.require_rank(2) != 3) g.fail("bilinear: the weight must be 3-D (out, in1, in2)");
  const at::ScalarType type = result_type(a, 0);
  return {a.tensor_as(0, type), a.tensor_as(1, type), a.tensor_as(2, type), rank, type};
}

Value add_bias(GraphContext& g, const Args& a, const Value& y, at::ScalarType type) {
  return a.is_none(3) ? y : g.op("Add", {y, a.tensor_as(3, type)});
}

// aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor
//   ⇒  y[..., o] = Σ x1[..., i] · w[o, i, j] · x2[..., j] (+ bias[o]), before Einsum (9–11):
//      MatMul(x1, w as [in1, out·in2]) reshaped to [..., out, in2], times x2 unsqueezed at -2,
//      ReduceSum over in2 (the weight's out and in2 sizes static)
Values bilinear_9(GraphContext& g, const Args& a) {
  BilinearArgs b = bilinear_args(g, a);
  const auto out = a.dim_size(2, 0), in2 = a.dim_size(2, 2);
  if (!out || !in2 || *out < 0 || *in2 < 0) {
    g.fail("bilinear before opset 12 needs the weight's static shape; export with opset >= 12");
  }
  Value w = g.op("Transpose", {b.weight}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  w = g.op("Reshape", {w, g.constant_ints({-1, *out * *in2})});  // [in1, out·in2]
  // 0 copies the input's leading dims (also when they are 0: these are the inputs' own dims).
  std::vector<int64_t> shape(b.rank - 1, 0);
  shape.push_back(*out);
  shape.push_back(*in2);
  Value t = g.op("Reshape", {g.op("MatMul", {b.x1, w}), g.constant_ints(shape)});
  Value x2 = unsqueeze(g, b.x2, {b.rank - 1});  // [..., 1, in2]
  Value y = reduce(g, "ReduceSum", g.op("Mul", {t, x2}), {b.rank}, false);
  return {add_bias(g, a, y, b.type)};
}

// aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor
//   ⇒  Einsum("...i,oij,...j->...o") (12+), Add bias
Values bilinear_12(GraphContext& g, const Args& a) {
  BilinearArgs b = bilinear_args(g, a);
  Value y = g.op("Einsum", {b.x1, b.weight, b.x2}, {{"equation", "...i,oij,...j->...o"}});
  return {add_bias(g, a, y, b.type)};
}

// aten::cross(Tensor self, Tensor other, int? dim=None) -> Tensor
// aten::linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
//   ⇒  Gather(self, [1,2,0]) * Gather(other, [2,0,1]) - Gather(self, [2,0,1]) * Gather(other,
//   [1,2,0]) along dim (broadcasting; exact for integers)
Values cross(GraphContext& g, const Args& a) {
  const int64_t rank_a = a.require_rank(0), rank_b = a.require_rank(1);
  const int64_t rank = std::max(rank_a, rank_b);
  int64_t dim;
  if (a.size() > 2 && !a.is_none(2)) {
    dim = normalize_dim(a.int_arg(2), rank);
  } else {
    // static shape: cross without dim takes the first dim of size 3.
    auto sa = a.sizes(0), sb = a.sizes(1);
    if (!sa || !sb) g.fail("cross without dim needs the inputs' static shapes; pass dim");
    dim = -1;
    for (int64_t i = 0; i < rank && dim < 0; ++i) {
      int64_t ia = i - (rank - rank_a), ib = i - (rank - rank_b);
      int64_t size_a = ia >= 0 ? (*sa)[ia] : 1, size_b = ib >= 0 ? (*sb)[ib] : 1;
      if (std::max(size_a, size_b) == 3) dim = i;
    }
    if (dim < 0) g.fail("cross: no dimension of size 3 in the inputs");
  }
  at::ScalarType type = result_type(a, 0);
  // The dim counted from the back holds in both inputs under broadcasting.
  const int64_t from_back = dim - rank;
  auto rolled = [&](size_t i, int64_t input_rank, std::vector<int64_t> order) {
    if (input_rank + from_back < 0) g.fail("cross: an input lacks the cross dimension");
    return g.op("Gather", {a.tensor_as(i, type), g.constant_ints(order)},
                {{"axis", input_rank + from_back}});
  };
  Value lhs = g.op("Mul", {rolled(0, rank_a, {1, 2, 0}), rolled(1, rank_b, {2, 0, 1})});
  Value rhs = g.op("Mul", {rolled(0, rank_a, {2, 0, 1}), rolled(1, rank_b, {1, 2, 0})});
  return {g.op("Sub", {lhs, rhs})};
}

// aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
//   ⇒  beta * self + alpha * MatMul(mat, vec) (self dropped when beta is 0)
// aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)
//   ⇒  beta * self + alpha * ReduceSum(MatMul(batch1, batch2), axis 0)
Values addmv(GraphContext& g, const Args& a) {
  at::ScalarType type = result_type(a, 1);
  const Coefficient beta = coefficient(a, 3, type), alpha = coefficient(a, 4, type);
  Value product = g.op("MatMul", {a.tensor_as(1, type), a.tensor_as(2, type)});
  return {add_scaled(g, a.tensor_as(0, type), product, beta, alpha, type)};
}
Values addbmm(GraphContext& g, const Args& a) {
  at::ScalarType type = result_type(a, 1);
  const Coefficient beta = coefficient(a, 3, type), alpha = coefficient(a, 4, type);
  Value product = g.op("MatMul", {a.tensor_as(1, type), a.tensor_as(2, type)});
  product = reduce(g, "ReduceSum", product, {0}, /*keepdims=*/false);
  return {add_scaled(g, a.tensor_as(0, type), product, beta, alpha, type)};
}

// aten::addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
//   ⇒  beta * self + alpha * outer(vec1, vec2); for bool, (beta and self) or (alpha and outer)
Values addr(GraphContext& g, const Args& a) {
  at::ScalarType type = result_type(a, 0);
  const Coefficient beta = coefficient(a, 3, type), alpha = coefficient(a, 4, type);
  Value col = unsqueeze(g, a.tensor_as(1, type), {1});
  if (type == at::kBool) {
    if (!beta.value || !alpha.value) {
      g.fail(
          "addr of bools needs beta and alpha known at export (they choose which terms are kept). "
          "Remedy: pass them as Python numbers");
    }
    Value product = g.op("And", {col, a.tensor_as(2, type)});
    Value self = a.tensor_as(0, type);
    if (alpha.is(0.0)) product = g.op("And", {product, g.constant_scalar(0, type)});
    if (beta.is(0.0))
      return {g.op("Or", {product, g.op("And", {self, g.constant_scalar(0, type)})})};
    return {g.op("Or", {self, product})};
  }
  Value product = g.op("Mul", {col, a.tensor_as(2, type)});
  return {add_scaled(g, a.tensor_as(0, type), product, beta, alpha, type)};
}

// aten::inner(Tensor self, Tensor other) -> Tensor  ⇒  Mul when either is 0-d; else the product
//   over the last dims: MatMul(Reshape(self, [-1, K]), Transpose(Reshape(other, [-1, K]))),
//   reshaped to self.shape[:-1] ++ other.shape[:-1]
Values inner(GraphContext& g, const Args& a) {
  const int64_t rank_a = a.require_rank(0), rank_b = a.require_rank(1);
  at::ScalarType type = result_type(a, 0);
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  if (rank_a == 0 || rank_b == 0) return {g.op(type == at::kBool ? "And" : "Mul", {x, y})};
  Value k = slice(g, shape_of(g, x), {0}, {rank_a - 1}, {rank_a});
  auto rows = [&](const Value& t) {
    return g.op("Reshape", {t, g.op("Concat", {g.constant_ints({-1}), k}, {{"axis", 0}})});
  };
  Value product = g.op("MatMul", {rows(x), transpose(g, rows(y), {1, 0})});
  Values shape;
  if (rank_a > 1) shape.push_back(slice(g, shape_of(g, x), {0}, {0}, {rank_a - 1}));
  if (rank_b > 1) shape.push_back(slice(g, shape_of(g, y), {0}, {0}, {rank_b - 1}));
  if (shape.empty()) return {g.op("Reshape", {product, g.constant_ints({})})};
  return {reshape_exact(g, product, concat_1d(g, shape))};
}

// aten::kron(Tensor self, Tensor other) -> Tensor  ⇒  both brought to the same rank r (leading
//   ones), self unsqueezed at the odd axes and other at the even ones of 2r, Mul (And for bool)
//   gives [a0, b0, a1, b1, ...], Reshape to [a0 * b0, a1 * b1, ...]
Values kron(GraphContext& g, const Args& a) {
  const int64_t rank_a = a.require_rank(0), rank_b = a.require_rank(1);
  const int64_t r = std::max(rank_a, rank_b);
  at::ScalarType type = result_type(a, 0);
  Value x = a.tensor_as(0, type), y = a.tensor_as(1, type);
  if (r == 0) return {g.op(type == at::kBool ? "And" : "Mul", {x, y})};
  auto lead = [&](const Value& t, int64_t rank) {
    if (rank == r) return t;
    Ints axes(r - rank);
    std::iota(axes.begin(), axes.end(), 0);
    return unsqueeze(g, t, axes);
  };
  x = lead(x, rank_a);
  y = lead(y, rank_b);
  Value shape = g.op("Mul", {shape_of(g, x), shape_of(g, y)});
  Ints odd, even;
  for (int64_t d = 0; d < r; ++d) {
    odd.push_back(2 * d + 1);
    even.push_back(2 * d);
  }
  Value product =
      g.op(type == at::kBool ? "And" : "Mul", {unsqueeze(g, x, odd), unsqueeze(g, y, even)});
  return {reshape_exact(g, product, shape)};
}

// aten::block_diag(Tensor[] tensors) -> Tensor  ⇒  each block (0-d as [1, 1], 1-D as [1, n])
//   between zero blocks of the columns before and after it, Concat along the columns, the rows
//   Concat; static sizes
Values block_diag(GraphContext& g, const Args& a) {
  const torch::jit::Node* list = a.jit(0)->node();
  if (list->kind() != c10::prim::ListConstruct) g.fail("block_diag of a list built at run time");
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) g.fail("the result dtype is unknown");
  Values blocks = a.tensor_list_as(0, type);
  std::vector<std::pair<int64_t, int64_t>> sizes;
  int64_t columns = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto shape = value_type(list->input(i)).shape;
    if (!shape || std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d < 0; })) {
      g.fail(fmt::format("the sizes of block {} are not known at export", i));
    }
    if (shape->size() > 2) g.fail("block_diag of a tensor of more than 2 dims");
    int64_t rows = shape->size() == 2 ? (*shape)[0] : 1;
    int64_t cols = shape->empty() ? 1 : shape->back();
    if (shape->size() < 2) blocks[i] = g.op("Reshape", {blocks[i], g.constant_ints({rows, cols})});
    sizes.emplace_back(rows, cols);
    columns += cols;
  }
  auto zeros = [&](int64_t rows, int64_t cols) {
    return g.constant(at::zeros({rows, cols}, at::TensorOptions().dtype(type)));
  };
  Values row_blocks;
  int64_t before = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto [rows, cols] = sizes[i];
    if (rows == 0) {
      before += cols;
      continue;
    }
    Values parts;
    if (before > 0) parts.push_back(zeros(rows, before));
    if (cols > 0) parts.push_back(blocks[i]);
    if (columns - before - cols > 0) parts.push_back(zeros(rows, columns - before - cols));
    if (parts.empty()) parts.push_back(zeros(rows, 0));
    row_blocks.push_back(parts.size() == 1 ? parts[0] : g.op("Concat", parts, {{"axis", 1}}));
    before += cols;
  }
  if (row_blocks.empty()) return {zeros(0, columns)};
  if (row_blocks.size() == 1) return {row_blocks[0]};
  return {g.op("Concat", row_blocks, {{"axis", 0}})};
}

// aten::linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor  ⇒  ReduceSum(Mul(x, y), dim)
//   (real tensors: the conjugate of x is x)
Values linalg_vecdot(GraphContext& g, const Args& a) {
  at::ScalarType type = result_type(a, 0);
  Value product = g.op("Mul", {a.tensor_as(0, type), a.tensor_as(1, type)});
  const int64_t rank = std::max(a.require_rank(0), a.require_rank(1));
  return {reduce(g, "ReduceSum", product, {normalize_dim(a.int_arg(2), rank)}, false)};
}

// aten::linalg_multi_dot(Tensor[] tensors) / chain_matmul(Tensor[] matrices) -> Tensor
//   ⇒  MatMul left to right (a 1-D first or last operand is a row or column vector, as MatMul
//   takes it; PyTorch picks the cheapest order, which changes only the rounding)
Values multi_dot(GraphContext& g, const Args& a) {
  Values ts = a.tensor_list(0);
  if (ts.empty()) g.fail("multi_dot of no tensors");
  Value y = ts[0];
  for (size_t i = 1; i < ts.size(); ++i) y = g.op("MatMul", {y, ts[i]});
  return {y};
}

// aten::linalg_matrix_power(Tensor self, int n) (matrix_power normalized to it) -> Tensor  ⇒  n >=
// 1: MatMuls by
//   repeated squaring; n = 0: the identity expanded to self's shape (static last dim); n < 0
//   needs the inverse, which ONNX has no operator for
Values matrix_power(GraphContext& g, const Args& a) {
  const int64_t n = a.int_arg(1);
  Value x = a.tensor(0);
  if (n < 0) {
    g.fail(
        "matrix_power with a negative exponent needs a matrix inverse, which ONNX has no "
        "operator for");
  }
  if (n == 0) {
    std::optional<int64_t> k = a.dim_size(0, -1);
    if (!k) g.fail("matrix_power(0) needs the matrix size at export");
    Value eye = g.constant(at::eye(*k, at::TensorOptions().dtype(result_type(a, 0))));
    return {g.op("Expand", {eye, shape_of(g, x)})};
  }
  std::optional<Value> result;
  Value power = x;
  for (int64_t e = n; e > 0; e >>= 1) {
    if (e & 1) result = result ? g.op("MatMul", {*result, power}) : power;
    if (e > 1) power = g.op("MatMul", {power, power});
  }
  return {*result};
}

// aten::trace(Tensor self) -> Tensor  ⇒  ReduceSum of the diagonal, gathered from the flattened
//   matrix at 0, m + 1, 2 (m + 1), ... (static sizes); integers sum as int64 (ATen)
Values trace(GraphContext& g, const Args& a) {
  const auto sizes = a.sizes(0);
  if (!sizes || sizes->size() != 2 || (*sizes)[0] < 0 || (*sizes)[1] < 0) {
    g.fail("trace needs a matrix of sizes known at export");
  }
  const int64_t n = (*sizes)[0], m = (*sizes)[1];
  at::ScalarType type = result_type(a, 0);
  Value flat = g.op("Reshape", {a.tensor_as(0, type), g.constant_ints({-1})});
  Ints positions;
  for (int64_t i = 0; i < std::min(n, m); ++i) positions.push_back(i * (m + 1));
  if (positions.empty()) return {g.constant_scalar(0, type)};
  Value diag = g.op("Gather", {flat, g.constant_ints(positions)}, {{"axis", int64_t{0}}});
  return {reduce(g, "ReduceSum", diag, {0}, false)};
}

// ----- products of sets ---------------------------------------------------------------------

// aten::cartesian_prod(Tensor[] tensors) -> Tensor  ⇒  each 1-D tensor reshaped to its own axis
//   of the k-dim grid, Expand to the grid, flattened to a column; Concat of the columns (a single
//   tensor is itself)
Values cartesian_prod(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  Values ts = type == at::ScalarType::Undefined ? a.tensor_list(0) : a.tensor_list_as(0, type);
  const int64_t k = static_cast<int64_t>(ts.size());
  if (k == 1) return {ts[0]};
  Values sizes;
  for (const Value& t : ts) sizes.push_back(shape_of(g, t));
  Value grid = g.op("Concat", sizes, {{"axis", 0}});
  Values columns;
  for (int64_t i = 0; i < k; ++i) {
    Ints shape(k, 1);
    shape[i] = -1;
    Value t = g.op("Expand", {g.op("Reshape", {ts[i], g.constant_ints(shape)}), grid});
    columns.push_back(g.op("Reshape", {t, g.constant_ints({-1, 1})}));
  }
  return {g.op("Concat", columns, {{"axis", 1}})};
}

// aten::combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor  ⇒  Gather of
//   the index tuples (lexicographic, as itertools.combinations[_with_replacement]) of the static
//   length n: [count, r]; r = 0 gives an empty 1-D tensor (ATen)
Values combinations(GraphContext& g, const Args& a) {
  std::optional<int64_t> n = a.dim_size(0, 0);
  if (!n || a.require_rank(0) != 1) g.fail("combinations needs a 1-D tensor of static length");
  const int64_t r = a.int_arg(1);
  const bool replace = a.bool_arg(2);
  at::ScalarType type = a.dtype(0);
  if (r == 0) return {g.constant(at::empty({0}, at::TensorOptions().dtype(type)))};
  std::vector<int64_t> flat, tuple(r, 0);
  // Every non-decreasing (with replacement) or increasing tuple of r indices below n.
  std::function<void(int64_t, int64_t)> visit = [&](int64_t pos, int64_t first) {
    if (pos == r) {
      flat.insert(flat.end(), tuple.begin(), tuple.end());
      return;
    }
    for (int64_t i = first; i < *n; ++i) {
      tuple[pos] = i;
      visit(pos + 1, replace ? i : i + 1);
    }
  };
  visit(0, 0);
  const int64_t count = static_cast<int64_t>(flat.size()) / r;
  if (count == 0) return {g.constant(at::empty({0, r}, at::TensorOptions().dtype(type)))};
  Value index = g.constant(at::tensor(flat, at::kLong).reshape({count, r}));
  return {g.op("Gather", {a.tensor(0), index}, {{"axis", int64_t{0}}})};
}

}  // namespace

void register_linear(Registry& r) {
  r.add("aten::linear", {9, 10}, linear_9);
  r.add("aten::linear", from(11), linear_11);
  r.add("aten::addmm", {9, 10}, addmm_9);
  r.add("aten::addmm", from(11), addmm_11);
  r.add("aten::baddbmm", from(9), baddbmm);
  for (const char* op : {"aten::matmul", "aten::mm", "aten::bmm", "aten::mv", "aten::dot"}) {
    r.add(op, from(9), matmul);
  }
  r.add("aten::outer", from(9), outer);
  r.add("aten::tensordot", from(9), tensordot);
  r.add("aten::einsum", {9, 11}, einsum_9);
  r.add("aten::einsum", from(12), einsum_12);
  r.add("aten::bilinear", {9, 11}, bilinear_9);
  r.add("aten::bilinear", from(12), bilinear_12);
  r.add("aten::addmv", from(9), addmv);
  r.add("aten::addbmm", from(9), addbmm);
  r.add("aten::addr", from(9), addr);
  // aten::vdot(Tensor self, Tensor other) -> Tensor  ⇒  MatMul of the 1-D operands (real: no
  // conjugate)
  r.add("aten::vdot", from(9), matmul);
  r.add("aten::inner", from(9), inner);
  r.add("aten::kron", from(9), kron);
  r.add("aten::block_diag", from(9), block_diag);
  r.add("aten::linalg_vecdot", from(9), linalg_vecdot);
  r.add("aten::linalg_multi_dot", from(9), multi_dot);
  r.add("aten::chain_matmul", from(9), multi_dot);
  r.add("aten::linalg_matrix_power", from(9), matrix_power);
  r.add("aten::trace", from(9), trace);
  r.add("aten::cartesian_prod", from(9), cartesian_prod);
  r.add("aten::combinations", from(9), combinations);
  r.add("aten::cross", from(9), cross);
  r.add("aten::linalg_cross", from(9), cross);
}

}  // namespace torchonnx::symbolic::ops
