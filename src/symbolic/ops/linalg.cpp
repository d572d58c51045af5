// Linear algebra and statistics beyond matrix products: vector and matrix norms, determinants,
// std/var (with their means).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Input 0, cast to the optional `dtype` argument at `i` (the norms compute in that type).
Value input_in_dtype(GraphContext& g, const Args& a, std::optional<size_t> i) {
  Value x = a.tensor(0);
  if (i && *i < a.size()) {
    if (auto dtype = a.optional_int(*i)) {
      auto type = static_cast<at::ScalarType>(*dtype);
      if (type != a.dtype(0)) x = g.cast(x, type);
    }
  }
  return x;
}

// The (floating) type a norm is computed in: its output's.
at::ScalarType norm_type(const Args& a) {
  at::ScalarType out = a.output_dtype();
  return out != at::ScalarType::Undefined ? out : a.dtype(0);
}

// Dims normalized for input 0 (an empty list means all dims, as `reduce` takes it).
std::vector<int64_t> normalized_dims(const Args& a, std::vector<int64_t> dims) {
  if (dims.empty()) return dims;
  const int64_t rank = a.require_rank(0);
  for (auto& d : dims) d = normalize_dim(d, rank);
  return dims;
}

// The vector ord-norm of `x` (in floating `type`) over `axes` (all when empty).
Value vector_norm(GraphContext& g, const Value& x, double ord, const std::vector<int64_t>& axes,
                  bool keepdim, at::ScalarType type) {
  if (ord == 2.0) return reduce(g, "ReduceL2", x, axes, keepdim);
  if (ord == 1.0) return reduce(g, "ReduceL1", x, axes, keepdim);
  if (ord == kInf) return reduce(g, "ReduceMax", g.op("Abs", {x}), axes, keepdim);
  if (ord == -kInf) return reduce(g, "ReduceMin", g.op("Abs", {x}), axes, keepdim);
  if (ord == 0.0) {
    // The number of non-zero elements (Cast to bool: Equal takes no floats before opset 11).
    return reduce(g, "ReduceSum", g.cast(g.cast(x, at::kBool), type), axes, keepdim);
  }
  Value p = g.constant_scalar(ord, type);
  Value sum = reduce(g, "ReduceSum", g.op("Pow", {g.op("Abs", {x}), p}), axes, keepdim);
  return g.op("Pow", {sum, g.constant_scalar(1.0 / ord, type)});
}

// The matrix norm of `x` over the (normalized) dims d0 (rows), d1 (columns): 'fro', or the
// max/min absolute column (ord ±1) or row (ord ±inf) sum.
Value matrix_norm(GraphContext& g, const Value& x, const std::string& ord_str, double ord,
                  int64_t d0, int64_t d1, bool keepdim) {
  if (d0 == d1) g.fail("matrix norm: dims must be different");
  if (ord_str == "fro") return reduce(g, "ReduceL2", x, {d0, d1}, keepdim);
  if (ord_str == "nuc" || ord == 2.0 || ord == -2.0) {
    g.fail("matrix norm with ord=" +
           (ord_str.empty() ? std::to_string(static_cast<int>(ord)) : "'" + ord_str + "'") +
           " needs singular values (an SVD), which ONNX has no operator for. Remedy: use "
           "ord='fro', 1, -1, inf or -inf, or compute this norm outside the exported model");
  }
  if (!ord_str.empty()) g.fail("matrix norm: unknown ord '" + ord_str + "'");
  int64_t summed, extreme;
  if (ord == 1.0 || ord == -1.0) {
    summed = d0, extreme = d1;  // column sums
  } else if (ord == kInf || ord == -kInf) {
    summed = d1, extreme = d0;  // row sums
  } else {
    g.fail("matrix norm: ord " + std::to_string(ord) + " is not one of 'fro', 'nuc', ±1, ±2, ±inf");
  }
  Value sums = reduce(g, "ReduceSum", g.op("Abs", {x}), {summed}, /*keepdims=*/true);
  Value r = reduce(g, ord > 0 ? "ReduceMax" : "ReduceMin", sums, {extreme}, /*keepdims=*/true);
  if (keepdim) return r;
  return squeeze(g, r, {std::min(d0, d1), std::max(d0, d1)});
}

// ord as a number, from a constant Scalar (None → `fallback`).
double ord_value(const Args& a, size_t i, double fallback) {
  return a.is_none(i) ? fallback : a.float_arg(i);
}

// How std/var(_mean) reduce: over `axes` (all when empty), dividing by N - correction.
struct VarOptions {
  std::vector<int64_t> axes;
  double correction = 1;
  bool keepdim = false;
};

// aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False)
VarOptions var_options_dim(GraphContext&, const Args& a) {
  VarOptions o;
  if (auto dims = a.optional_int_list(1)) o.axes = normalized_dims(a, *dims);
  o.correction = a.bool_arg(2) ? 1 : 0;
  o.keepdim = a.bool_arg(3);
  return o;
}

// aten::var.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False)
// (Scalar? correction in PyTorch 2.x)
VarOptions var_options_correction(GraphContext&, const Args& a) {
  VarOptions o;
  if (auto dims = a.optional_int_list(1)) o.axes = normalized_dims(a, *dims);
  if (auto c = a.optional_int(2)) o.correction = static_cast<double>(*c);
  o.keepdim = a.bool_arg(3);
  return o;
}

// aten::var(Tensor self, bool unbiased=True): every element
VarOptions var_options_unbiased(GraphContext&, const Args& a) {
  VarOptions o;
  o.correction = a.bool_arg(1) ? 1 : 0;
  return o;
}

// ReduceSum((x - ReduceMean(x))²) / max(N - correction, 0), N computed in the graph; ReduceMean
// of the squares when correction is 0. Returns {var, mean}.
std::pair<Value, Value> var_mean(GraphContext& g, const Args& a, const VarOptions& o) {
  const std::vector<int64_t>& axes = o.axes;
  const double correction = o.correction;
  const bool keepdim = o.keepdim;
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) g.fail("std/var need a floating-point input");
  Value x = a.tensor(0);
  Value mean = reduce(g, "ReduceMean", x, axes, keepdim);
  Value centered = g.op("Sub", {x, reduce(g, "ReduceMean", x, axes, /*keepdims=*/true)});
  Value squares = g.op("Mul", {centered, centered});
  if (correction == 0) return {reduce(g, "ReduceMean", squares, axes, keepdim), mean};
  Value sum = reduce(g, "ReduceSum", squares, axes, keepdim);
  Value n = axes.empty()
                ? g.op("Size", {x})
                : reduce(g, "ReduceProd",
                         g.op("Gather", {g.op("Shape", {x}), g.constant_ints(axes)}, {{"axis", 0}}),
                         {}, /*keepdims=*/false);
  Value divisor = g.op("Sub", {g.cast(n, type), g.constant_scalar(correction, type)});
  divisor = g.op("Max", {divisor, g.constant_scalar(0, type)});
  return {g.op("Div", {sum, divisor}), mean};
}

// Det of input 0 in its type. ONNX Runtime implements Det for float only: other types go through
// float (a double determinant loses precision to float's).
Value det(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  if (type == at::kFloat) return g.op("Det", {a.tensor(0)});
  return g.cast(g.op("Det", {a.tensor_as(0, at::kFloat)}), type);
}

// aten::norm.Scalar(Tensor self, Scalar p=2)
// aten::norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype)
// aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False)
// aten::norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, dtype)
//   ⇒  ReduceL2 / ReduceL1 (p = 2 / 1), ReduceMax / ReduceMin of Abs (±inf), ReduceSum of
//   non-zeros (0), Pow(ReduceSum(Pow(Abs(x), p)), 1/p) otherwise; in dtype when given
// (`with_dim`: dim and keepdim at 2, 3; `dtype_index`: where dtype is)
Values norm_of(GraphContext& g, const Args& a, bool with_dim, std::optional<size_t> dtype_index) {
  Value x = input_in_dtype(g, a, dtype_index);
  at::ScalarType type = norm_type(a);
  std::vector<int64_t> axes = with_dim ? normalized_dims(a, a.int_list(2)) : std::vector<int64_t>{};
  bool keepdim = with_dim && a.bool_arg(3);
  return {vector_norm(g, x, ord_value(a, 1, 2.0), axes, keepdim, type)};
}

Values norm_scalar(GraphContext& g, const Args& a) {
  return norm_of(g, a, false, std::nullopt);
}
Values norm_dtype(GraphContext& g, const Args& a) {
  return norm_of(g, a, false, 2);
}
Values norm_dim(GraphContext& g, const Args& a) {
  return norm_of(g, a, true, std::nullopt);
}
Values norm_dim_dtype(GraphContext& g, const Args& a) {
  return norm_of(g, a, true, 4);
}

// aten::frobenius_norm(Tensor self) -> Tensor (PyTorch 1.13)  ⇒  ReduceL2 over all dims
Values frobenius_norm(GraphContext& g, const Args& a) {
  std::vector<int64_t> axes =
      a.size() > 1 ? normalized_dims(a, a.int_list(1)) : std::vector<int64_t>{};
  bool keepdim = a.size() > 2 && a.bool_arg(2);
  return {reduce(g, "ReduceL2", a.tensor(0), axes, keepdim)};
}

// aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor  ⇒  ReduceL2
Values frobenius_norm_dim(GraphContext& g, const Args& a) {
  std::vector<int64_t> axes = normalized_dims(a, a.int_list(1));
  return {reduce(g, "ReduceL2", a.tensor(0), axes, a.bool_arg(2))};
}

// aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *,
//   ScalarType? dtype=None) -> Tensor  ⇒  as aten::norm (all dims when dim is None)
Values linalg_vector_norm(GraphContext& g, const Args& a) {
  Value x = input_in_dtype(g, a, 4);
  std::vector<int64_t> axes;
  if (auto dims = a.optional_int_list(2)) axes = normalized_dims(a, *dims);
  return {vector_norm(g, x, ord_value(a, 1, 2.0), axes, a.bool_arg(3), norm_type(a))};
}

// aten::linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *,
//   ScalarType? dtype=None) / .str_ord(Tensor self, str ord="fro", ...) -> Tensor
//   ⇒  ReduceL2 ('fro'); ReduceMax/Min(ReduceSum(Abs)) for ±1, ±inf; 'nuc' and ±2 need an SVD
//   (no ONNX op): a clear error
Values linalg_matrix_norm_of(GraphContext& g, const Args& a, bool str_ord) {
  Value x = input_in_dtype(g, a, 4);
  std::vector<int64_t> dims = normalized_dims(a, a.int_list(2));
  if (dims.size() != 2) g.fail("linalg_matrix_norm: dim must have 2 elements");
  std::string ord_str = str_ord ? a.str_arg(1) : "";
  double ord = ord_str.empty() ? a.float_arg(1) : 0;
  return {matrix_norm(g, x, ord_str, ord, dims[0], dims[1], a.bool_arg(3))};
}

Values linalg_matrix_norm_str_ord(GraphContext& g, const Args& a) {
  return linalg_matrix_norm_of(g, a, true);
}

Values linalg_matrix_norm(GraphContext& g, const Args& a) {
  return linalg_matrix_norm_of(g, a, false);
}

// aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *,
//   ScalarType? dtype=None) / .ord_str(Tensor self, str ord, ...) -> Tensor
//   ⇒  a vector norm for 1 dim (or a 1-D input, or ord and dim both None: all elements), a
//   matrix norm for 2 dims (or a 2-D input)
Values linalg_norm_of(GraphContext& g, const Args& a, bool str_ord) {
  Value x = input_in_dtype(g, a, 4);
  const bool keepdim = a.bool_arg(3);
  const bool ord_none = a.is_none(1);
  std::string ord_str = str_ord ? a.str_arg(1) : "";
  std::optional<std::vector<int64_t>> dims = a.optional_int_list(2);
  if (!dims) {
    if (ord_none) return {reduce(g, "ReduceL2", x, {}, keepdim)};
    const int64_t rank = a.require_rank(0);
    if (rank != 1 && rank != 2) {
      g.fail("linalg_norm with ord and without dim needs a 1-D or 2-D input");
    }
    dims = rank == 1 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1};
  }
  std::vector<int64_t> axes = normalized_dims(a, *dims);
  if (axes.size() == 1) {
    if (!ord_str.empty()) g.fail("linalg_norm: ord '" + ord_str + "' needs 2 dims");
    return {vector_norm(g, x, ord_value(a, 1, 2.0), axes, keepdim, norm_type(a))};
  }
  if (axes.size() != 2) g.fail("linalg_norm: dim must have 1 or 2 elements");
  if (ord_none) ord_str = "fro";
  double ord = ord_str.empty() ? a.float_arg(1) : 0;
  return {matrix_norm(g, x, ord_str, ord, axes[0], axes[1], keepdim)};
}

Values linalg_norm_ord_str(GraphContext& g, const Args& a) {
  return linalg_norm_of(g, a, true);
}

Values linalg_norm(GraphContext& g, const Args& a) {
  return linalg_norm_of(g, a, false);
}

// aten::dist(Tensor self, Tensor other, Scalar p=2) -> Tensor  ⇒  the p-norm of self - other
//   over every element
Values dist(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (type == at::ScalarType::Undefined) g.fail("the result dtype is unknown");
  Value diff = g.op("Sub", {a.tensor_as(0, type), a.tensor_as(1, type)});
  return {vector_norm(g, diff, ord_value(a, 2, 2.0), {}, false, type)};
}

// aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor  ⇒  each slice along
//   dim scaled by maxnorm / (norm + 1e-7) where its p-norm exceeds maxnorm (ATen's factor)
Values renorm(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  at::ScalarType type = a.dtype(0);
  if (!at::isFloatingType(type)) g.fail("renorm of a non-floating tensor");
  const int64_t dim = normalize_dim(a.int_arg(2), rank);
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) axes.push_back(d);
  }
  Value x = a.tensor(0);
  Value norm = axes.empty() ? g.op("Abs", {x})
                            : vector_norm(g, x, a.float_arg(1), axes, /*keepdim=*/true, type);
  Value maxnorm = g.constant_scalar(a.float_arg(3), type);
  Value factor = g.op("Div", {maxnorm, g.op("Add", {norm, g.constant_scalar(1e-7, type)})});
  Value over = g.op("Greater", {norm, maxnorm});
  return {g.op("Mul", {x, g.op("Where", {over, factor, g.constant_scalar(1, type)})})};
}

// aten::cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None)
//   ⇒  (X - mean) (X - mean)ᵀ / (N - correction) over the observations (columns; a 1-D input is
//   one variable; ATen squeezes the result, so one variable gives a 0-d tensor); ATen's divisor is
//   clamped at 0 (a negative one gives inf/nan as it does). Weights are not exported.
Value covariance(GraphContext& g, const Args& a, at::ScalarType type) {
  if (!a.is_none(2) || !a.is_none(3)) g.fail("cov with fweights or aweights is not supported");
  const int64_t rank = a.require_rank(0);
  if (rank > 2) g.fail("cov takes a 1-D or 2-D input");
  Value x = a.tensor_as(0, type);
  if (rank < 2) x = g.op("Reshape", {x, g.constant_ints({1, -1})});
  Value n = g.cast(dims_of(g, x, {1}), type);
  Value centered = g.op("Sub", {x, reduce(g, "ReduceMean", x, {1}, true)});
  Value product = g.op("MatMul", {centered, transpose(g, centered, {1, 0})});
  Value divisor = g.op("Sub", {n, g.constant_scalar(static_cast<double>(a.int_arg(1)), type)});
  divisor = g.op("Max", {divisor, g.constant_scalar(0, type)});
  Value c = g.op("Div", {product, divisor});
  // ATen squeezes the result: one variable gives a 0-d tensor
  if (rank < 2 || a.dim_size(0, 0) == std::optional<int64_t>(1)) {
    c = g.op("Reshape", {c, g.constant_ints({})});
  }
  return c;
}
Values cov(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (!at::isFloatingType(type)) g.fail("the result dtype is unknown");
  return {covariance(g, a, type)};
}

// aten::corrcoef(Tensor self) -> Tensor  ⇒  cov / sqrt(diag ⊗ diag), clipped to [-1, 1] as ATen
//   clips it (1-D: c / c, 1 or nan)
Values corrcoef(GraphContext& g, const Args& a) {
  at::ScalarType type = a.output_dtype();
  if (!at::isFloatingType(type)) g.fail("the result dtype is unknown");
  const int64_t rank = a.require_rank(0);
  if (rank > 2) g.fail("corrcoef takes a 1-D or 2-D input");
  Value x = a.tensor_as(0, type);
  if (rank < 2) x = g.op("Reshape", {x, g.constant_ints({1, -1})});
  Value centered = g.op("Sub", {x, reduce(g, "ReduceMean", x, {1}, true)});
  Value c = g.op("MatMul", {centered, transpose(g, centered, {1, 0})});
  // the diagonal: the variables' sums of squares (the divisor cancels)
  Value d = g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {centered, centered}), {1}, true)});
  c = g.op("Div", {g.op("Div", {c, d}), transpose(g, d, {1, 0})});
  c = clip(g, c, -1.0, 1.0, type);
  // ATen squeezes the result: one variable gives a 0-d tensor
  if (rank < 2 || a.dim_size(0, 0) == std::optional<int64_t>(1)) {
    c = g.op("Reshape", {c, g.constant_ints({})});
  }
  return {c};
}

// aten::pdist(Tensor self, float p=2) -> Tensor  ⇒  the p-norms of the
//   differences of the row pairs i < j (Gathers of constant row lists; static row count)
Values pdist(GraphContext& g, const Args& a) {
  if (a.require_rank(0) != 2) g.fail("pdist takes a 2-D input");
  std::optional<int64_t> n = a.dim_size(0, 0);
  if (!n) g.fail("pdist needs the number of rows at export");
  at::ScalarType type = a.dtype(0);
  std::vector<int64_t> left, right;
  for (int64_t i = 0; i < *n; ++i) {
    for (int64_t j = i + 1; j < *n; ++j) {
      left.push_back(i);
      right.push_back(j);
    }
  }
  if (left.empty()) return {g.constant(at::empty({0}, at::TensorOptions().dtype(type)))};
  Value x = a.tensor(0);
  Value diff = g.op("Sub", {g.op("Gather", {x, g.constant_ints(left)}, {{"axis", int64_t{0}}}),
                            g.op("Gather", {x, g.constant_ints(right)}, {{"axis", int64_t{0}}})});
  return {vector_norm(g, diff, a.size() > 1 ? a.float_arg(1) : 2.0, {1}, false, type)};
}

// aten::linalg_det(Tensor A) -> Tensor  ⇒  Det (opset 11+; float only in ONNX Runtime, so
// double is computed in float; aten::det is normalized to linalg_det before conversion)
Values linalg_det(GraphContext& g, const Args& a) {
  return {det(g, a)};
}

// aten::logdet(Tensor self) -> Tensor  ⇒  Where(Det < 0, nan, Log(Det)) (opset 11+; -inf for
// det 0)
Values logdet(GraphContext& g, const Args& a) {
  at::ScalarType type = a.dtype(0);
  Value d = det(g, a);
  Value negative = g.op("Less", {d, g.constant_scalar(0, type)});
  Value nan = g.constant_scalar(std::numeric_limits<double>::quiet_NaN(), type);
  return {g.op("Where", {negative, nan, g.op("Log", {d})})};
}

// aten::var / std / var_mean / std_mean (Tensor self, bool unbiased=True), .dim, .correction
//   ⇒  var (see var_mean), Sqrt(var) for std; (var or std, mean) for the _mean forms
Converter var_converter(VarOptions (*options)(GraphContext&, const Args&), bool sqrt,
                        bool with_mean) {
  return [=](GraphContext& g, const Args& a) -> Values {
    auto [var, mean] = var_mean(g, a, options(g, a));
    Value out = sqrt ? g.op("Sqrt", {var}) : var;
    if (with_mean) return {out, mean};
    return {out};
  };
}

}  // namespace

void register_linalg(Registry& r) {
  r.add("aten::norm.Scalar", from(9), norm_scalar);
  r.add("aten::norm.ScalarOpt_dtype", from(9), norm_dtype);
  r.add("aten::norm.ScalarOpt_dim", from(9), norm_dim);
  r.add("aten::norm.ScalarOpt_dim_dtype", from(9), norm_dim_dtype);
  r.add_unnamed("aten::frobenius_norm", from(9), frobenius_norm);
  r.add("aten::frobenius_norm.dim", from(9), frobenius_norm_dim);
  r.add("aten::linalg_vector_norm", from(9), linalg_vector_norm);
  r.add_unnamed("aten::linalg_matrix_norm", from(9), linalg_matrix_norm);
  r.add("aten::linalg_matrix_norm.str_ord", from(9), linalg_matrix_norm_str_ord);
  r.add_unnamed("aten::linalg_norm", from(9), linalg_norm);
  r.add("aten::linalg_norm.ord_str", from(9), linalg_norm_ord_str);
  r.add("aten::linalg_det", from(11), linalg_det);
  r.add("aten::dist", from(9), dist);
  r.add("aten::renorm", from(9), renorm);
  r.add("aten::cov", from(9), cov);
  r.add("aten::corrcoef", from(9), corrcoef);
  r.add("aten::pdist", from(9), pdist);
  r.add("aten::logdet", from(11), logdet);
  for (auto [op, sqrt, with_mean] : {std::tuple{"aten::var", false, false},
                                     {"aten::std", true, false},
                                     {"aten::var_mean", false, true},
                                     {"aten::std_mean", true, true}}) {
    const std::string name = op;
    r.add_unnamed(name, from(9), var_converter(var_options_unbiased, sqrt, with_mean));
    r.add(name + ".dim", from(9), var_converter(var_options_dim, sqrt, with_mean));
    r.add(name + ".correction", from(9), var_converter(var_options_correction, sqrt, with_mean));
  }
}

}  // namespace torchonnx::symbolic::ops
