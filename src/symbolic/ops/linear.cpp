// Matrix and tensor products: linear, addmm, matmul, mm, bmm, baddbmm, mv, dot, outer, tensordot,
// einsum, bilinear, cross/linalg_cross.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

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

// beta * self + alpha * product (PyTorch's addmm/baddbmm): self is ignored when beta is 0, so its
// nan/inf do not propagate; multiplications by 1 are skipped.
Value add_scaled(GraphContext& g, const Value& self, const Value& product, double beta,
                 double alpha, at::ScalarType type) {
  Value p = alpha == 1.0 ? product : g.op("Mul", {product, g.constant_scalar(alpha, type)});
  if (beta == 0.0) return p;
  Value s = beta == 1.0 ? self : g.op("Mul", {self, g.constant_scalar(beta, type)});
  return g.op("Add", {s, p});
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
  double beta = a.size() > 3 ? a.float_arg(3) : 1.0;
  double alpha = a.size() > 4 ? a.float_arg(4) : 1.0;
  at::ScalarType type = result_type(a, 1);
  if (gemm_type(type) && (beta != 0.0 || gemm_without_c)) {
    Values inputs{a.tensor(1), a.tensor(2)};
    if (beta != 0.0) inputs.push_back(a.tensor(0));
    return {g.op("Gemm", inputs, {{"alpha", alpha}, {"beta", beta}})};
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
//   -> Tensor  ⇒  beta * self + alpha * MatMul(batch1, batch2) (self dropped when beta is 0)
Values baddbmm(GraphContext& g, const Args& a) {
  double beta = a.size() > 3 ? a.float_arg(3) : 1.0;
  double alpha = a.size() > 4 ? a.float_arg(4) : 1.0;
  Value product = g.op("MatMul", {a.tensor(1), a.tensor(2)});
  return {add_scaled(g, a.tensor(0), product, beta, alpha, result_type(a, 1))};
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

// einsum's equation (spaces removed) and operands, checked.
struct EinsumArgs {
  std::string equation;
  Values tensors;
  const torch::jit::Node* list;
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
  return {einsum_by_mul(g, e.equation, e.tensors, ranks)};
}

// aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
//   ⇒  Einsum (12+), the operands with fewer ellipsis dims unsqueezed
Values einsum_12(GraphContext& g, const Args& a) {
  EinsumArgs e = einsum_args(g, a);
  if (e.equation.find("...") != std::string::npos) {
    align_ellipsis(g, e.equation, e.tensors, operand_ranks(g, e.list));
  }
  return {g.op("Einsum", e.tensors, {{"equation", e.equation}})};
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
  r.add("aten::cross", from(9), cross);
  r.add("aten::linalg_cross", from(9), cross);
}

}  // namespace torchonnx::symbolic::ops
