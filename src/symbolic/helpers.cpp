#include "symbolic/helpers.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "common/jit_util.h"

namespace torchonnx::symbolic {

Value unsqueeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes) {
  if (g.opset() >= 13) return g.op("Unsqueeze", {v, g.constant_ints(axes)});
  return g.op("Unsqueeze", {v}, {{"axes", axes}});
}

Value squeeze(GraphContext& g, const Value& v, const std::vector<int64_t>& axes) {
  if (g.opset() >= 13) return g.op("Squeeze", {v, g.constant_ints(axes)});
  return g.op("Squeeze", {v}, {{"axes", axes}});
}

Values split(GraphContext& g, const Value& v, const std::vector<int64_t>& sizes, int64_t axis) {
  if (g.opset() >= 13) {
    return g.op("Split", {v, g.constant_ints(sizes)}, {{"axis", axis}}, sizes.size());
  }
  return g.op("Split", {v}, {{"axis", axis}, {"split", sizes}}, sizes.size());
}

Values split_equal(GraphContext& g, const Value& v, int64_t parts, int64_t axis) {
  ir::Attributes attrs{{"axis", axis}};
  if (g.opset() >= 18) attrs.emplace_back("num_outputs", parts);
  return g.op("Split", {v}, attrs, parts);
}

Value reduce(GraphContext& g, const std::string& op, const Value& v,
             const std::vector<int64_t>& axes, bool keepdims) {
  ir::Attributes attrs{{"keepdims", static_cast<int64_t>(keepdims)}};
  // ReduceSum takes its axes as an input from opset 13, the other Reduce* ops from opset 18.
  if (g.opset() >= (op == "ReduceSum" ? 13 : 18)) {
    if (axes.empty()) return g.op(op, {v}, attrs);
    return g.op(op, {v, g.constant_ints(axes)}, attrs);
  }
  if (!axes.empty()) attrs.emplace_back("axes", axes);
  return g.op(op, {v}, attrs);
}

Value clip(GraphContext& g, const Value& v, std::optional<double> min, std::optional<double> max,
           at::ScalarType type) {
  if (g.opset() < 11) {
    ir::Attributes attrs;
    if (min) attrs.emplace_back("min", *min);
    if (max) attrs.emplace_back("max", *max);
    return g.op("Clip", {v}, attrs);
  }
  Value lo = min ? g.constant_scalar(*min, type) : "";
  Value hi = max ? g.constant_scalar(*max, type) : "";
  Values inputs{v, lo};
  if (max) inputs.push_back(hi);
  return g.op("Clip", inputs);
}

namespace {

// The dtype Pad computes an x of `type` in (helpers.h, pad).
at::ScalarType pad_type(const GraphContext& g, at::ScalarType type) {
  const bool is_float = type == at::kFloat || type == at::kDouble || type == at::kHalf;
  if (g.opset() < 11 && !is_float) return type == at::kBool ? at::kFloat : at::kDouble;
  if (g.opset() < 13 && type == at::kBool) return at::kByte;
  return type;
}

}  // namespace

Value pad(GraphContext& g, const Value& x, const std::vector<int64_t>& pads,
          const std::string& mode, double value, at::ScalarType type) {
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return x;
  const at::ScalarType work = pad_type(g, type);
  Value in = cast_if(g, x, type, work);
  Value out;
  if (g.opset() < 11) {
    ir::Attributes attrs{{"pads", pads}, {"mode", mode}};
    if (mode == "constant") attrs.emplace_back("value", value);
    out = g.op("Pad", {in}, attrs);
  } else {
    Values inputs{in, g.constant_ints(pads)};
    if (mode == "constant") inputs.push_back(g.constant_scalar(value, work));
    out = g.op("Pad", inputs, {{"mode", mode}});
  }
  return cast_if(g, out, work, type);
}

Value pad_computed(GraphContext& g, const Value& x, const Value& pads, const std::string& mode,
                   double value, at::ScalarType type) {
  const at::ScalarType work = pad_type(g, type);
  Values inputs{cast_if(g, x, type, work), pads};
  if (mode == "constant") inputs.push_back(g.constant_scalar(value, work));
  return cast_if(g, g.op("Pad", inputs, {{"mode", mode}}), work, type);
}

int64_t normalize_dim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

Value slice(GraphContext& g, const Value& x, const std::vector<int64_t>& axes,
            const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
            const std::vector<int64_t>& steps) {
  if (g.opset() < 10) {
    for (int64_t s : steps) {
      if (s != 1) g.fail("slicing with a step needs opset 10; export with opset >= 10");
    }
    return g.op("Slice", {x}, {{"axes", axes}, {"starts", starts}, {"ends", ends}});
  }
  Values inputs{x, g.constant_ints(starts), g.constant_ints(ends), g.constant_ints(axes)};
  if (!steps.empty()) inputs.push_back(g.constant_ints(steps));
  return g.op("Slice", inputs);
}

Value slice_computed(GraphContext& g, const Value& x, const Value& starts, const Value& ends,
                     const Value& axes, const Value& steps, const std::string& what) {
  if (g.opset() < 10) {
    g.fail(what + " needs opset 10 (Slice inputs); export with opset >= 10");
  }
  Values inputs{x, starts, ends, axes};
  if (!steps.empty()) inputs.push_back(steps);
  return g.op("Slice", inputs);
}

Value transpose(GraphContext& g, const Value& x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  if (identity) return x;
  return g.op("Transpose", {x}, {{"perm", perm}});
}

Value cast_if(GraphContext& g, const Value& v, at::ScalarType from, at::ScalarType to) {
  if (to == at::ScalarType::Undefined || from == to) return v;
  return g.cast(v, to);
}

Value shape_of(GraphContext& g, const Value& x) {
  return g.op("Shape", {x});
}

Value dim_size(GraphContext& g, const Value& x, int64_t d) {
  return g.op("Gather", {shape_of(g, x), g.constant(at::scalar_tensor(d, at::kLong))},
              {{"axis", int64_t{0}}});
}

Value dims_of(GraphContext& g, const Value& x, const std::vector<int64_t>& dims) {
  return g.op("Gather", {shape_of(g, x), g.constant_ints(dims)}, {{"axis", int64_t{0}}});
}

std::vector<int64_t> expand_param(std::vector<int64_t> v, size_t n) {
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  return v;
}

Value arange(GraphContext& g, const Value& n) {
  if (g.opset() >= 11) {
    return g.op("Range", {g.constant(at::scalar_tensor(0, at::kLong)), n,
                          g.constant(at::scalar_tensor(1, at::kLong))});
  }
  Value ones =
      g.op("ConstantOfShape", {unsqueeze(g, n, {0})}, {{"value", at::ones({1}, at::kLong)}});
  return squeeze(g, g.op("NonZero", {ones}), {0});
}

Value range(GraphContext& g, const Value& start, const Value& end, const Value& step,
            at::ScalarType work) {
  if (g.opset() >= 11) return g.op("Range", {start, end, step});
  auto as_double = [&](const Value& v) { return work == at::kDouble ? v : g.cast(v, at::kDouble); };
  Value span = g.op("Sub", {as_double(end), as_double(start)});
  Value n = g.cast(g.op("Ceil", {g.op("Div", {span, as_double(step)})}), at::kLong);
  Value idx = arange(g, n);
  if (work != at::kLong) idx = g.cast(idx, work);
  return g.op("Add", {start, g.op("Mul", {idx, step})});
}

Value extreme(GraphContext& g, bool max, const Value& x, const Value& y, at::ScalarType type) {
  if (type == at::kBool) return g.op(max ? "Or" : "And", {x, y});
  if (at::isFloatingType(type) || g.opset() >= 12) return g.op(max ? "Max" : "Min", {x, y});
  return g.op("Where", {g.op(max ? "Greater" : "Less", {x, y}), x, y});
}

Value topk_k(GraphContext& g, int64_t k) {
  return g.opset() >= 10 ? g.constant_ints({k}) : Value();
}

std::pair<Value, std::optional<int64_t>> topk_k_of_dim(GraphContext& g, const Value& x,
                                                       int64_t axis,
                                                       std::optional<int64_t> static_size,
                                                       const std::string& what) {
  if (g.opset() >= 10) {
    return {g.op("Gather", {g.op("Shape", {x}), g.constant_ints({axis})}, {{"axis", int64_t{0}}}),
            std::nullopt};
  }
  // static shape: TopK's k is an attribute before opset 10.
  if (!static_size || *static_size < 0) {
    g.require_opset(10, what + " along a dim without a static size", "TopK's k as an input");
  }
  return {Value(), static_size.value_or(0)};
}

Value concat_1d(GraphContext& g, const Values& parts) {
  if (parts.size() == 1) return parts[0];
  return g.op("Concat", parts, {{"axis", int64_t{0}}});
}

Value reshape_exact(GraphContext& g, const Value& x, const Value& shape) {
  if (g.opset() >= 14) return g.op("Reshape", {x, shape}, {{"allowzero", int64_t{1}}});
  return g.op("Reshape", {x, shape});
}

Value where(GraphContext& g, const Value& cond, const Value& x, const Value& y,
            at::ScalarType type) {
  if (type != at::kBool) return g.op("Where", {cond, x, y});
  return g.op("Or", {g.op("And", {cond, x}), g.op("And", {g.op("Not", {cond}), y})});
}

Value scatter_elements(GraphContext& g, const Value& data, const Value& index, const Value& updates,
                       int64_t axis, const std::string& reduction) {
  ir::Attributes attrs{{"axis", axis}};
  if (!reduction.empty()) attrs.emplace_back("reduction", reduction);
  return g.op(g.opset() >= 11 ? "ScatterElements" : "Scatter", {data, index, updates}, attrs);
}

at::ScalarType topk_type(int opset, at::ScalarType t) {
  if (t == at::ScalarType::Float || t == at::ScalarType::Double) return t;
  if (t == at::ScalarType::Half || t == at::ScalarType::BFloat16) return at::ScalarType::Float;
  if (opset >= 11)
    return t == at::ScalarType::Int || t == at::ScalarType::Long ? t : at::ScalarType::Long;
  return at::ScalarType::Double;
}

Values carried_loop(GraphContext& g, const std::string& body_name, const Value& trips,
                    const Value& cond, const Values& initial, const std::vector<std::string>& names,
                    const std::vector<at::ScalarType>& types, const LoopBody& step) {
  const ir::TypeInfo scalar_long{at::kLong, std::vector<int64_t>{}};
  const ir::TypeInfo scalar_bool{at::kBool, std::vector<int64_t>{}};
  auto body = std::make_shared<ir::Graph>();
  body->name = g.fresh_name(body_name);
  {
    SubgraphScope scope(g, *body);
    Value iteration = g.fresh_name("iteration"), cond_in = g.fresh_name("cond");
    body->inputs.push_back({iteration, scalar_long});
    body->inputs.push_back({cond_in, scalar_bool});
    Values carried;
    for (size_t k = 0; k < initial.size(); ++k) {
      carried.push_back(g.fresh_name(names[k]));
      body->inputs.push_back({carried.back(), {types[k]}});
    }
    LoopStep next = step(iteration, cond_in, carried);
    body->outputs.push_back({next.cond, scalar_bool});
    for (size_t k = 0; k < next.carried.size(); ++k) {
      body->outputs.push_back({next.carried[k], {types[k]}});
    }
  }
  Values inputs{trips, cond};
  inputs.insert(inputs.end(), initial.begin(), initial.end());
  return g.op("Loop", inputs, {{"body", body}}, initial.size());
}

Values if_else(GraphContext& g, const std::string& then_name,
               const std::function<Values()>& then_branch, const std::string& else_name,
               const std::function<Values()>& else_branch, const std::vector<at::ScalarType>& types,
               const std::function<Value()>& cond) {
  std::shared_ptr<ir::Graph> branches[2];
  for (int b = 0; b < 2; ++b) {
    branches[b] = std::make_shared<ir::Graph>();
    branches[b]->name = g.fresh_name(b == 0 ? then_name : else_name);
    SubgraphScope scope(g, *branches[b]);
    Values outs = b == 0 ? then_branch() : else_branch();
    for (size_t k = 0; k < types.size(); ++k) branches[b]->outputs.push_back({outs[k], {types[k]}});
  }
  return g.op("If", {cond()}, {{"then_branch", branches[0]}, {"else_branch", branches[1]}},
              types.size());
}

Values topk_in(GraphContext& g, const Value& x, const Value& k, std::optional<int64_t> k_static,
               int64_t axis, bool largest) {
  const bool negate = !largest && g.opset() < 11;
  Value in = negate ? g.op("Neg", {x}) : x;
  Values out;
  if (g.opset() < 10) {
    if (!k_static) g.fail("topk with a k computed at run time needs opset >= 10");
    out = g.op("TopK", {in}, {{"axis", axis}, {"k", *k_static}}, 2);
  } else if (g.opset() < 11) {
    out = g.op("TopK", {in, k}, {{"axis", axis}}, 2);
  } else {
    out = g.op("TopK", {in, k},
               {{"axis", axis}, {"largest", static_cast<int64_t>(largest)}, {"sorted", int64_t{1}}},
               2);
  }
  return {negate ? g.op("Neg", {out[0]}) : out[0], out[1]};
}

Values topk(GraphContext& g, const Value& x, at::ScalarType t, const Value& k,
            std::optional<int64_t> k_static, int64_t axis, bool largest) {
  at::ScalarType ct = topk_type(g.opset(), t);
  Value in = cast_if(g, x, t, ct);
  if (g.opset() >= 11 && at::isFloatingType(ct)) {
    Value key = g.op("Where", {g.op("IsNaN", {in}),
                               g.constant_scalar(std::numeric_limits<double>::infinity(), ct), in});
    Value indices = topk_in(g, key, k, k_static, axis, largest)[1];
    return {g.op("GatherElements", {x, indices}, {{"axis", axis}}), indices};
  }
  Values out = topk_in(g, in, k, k_static, axis, largest);
  return {cast_if(g, out[0], ct, t), out[1]};
}

std::optional<int64_t> list_length(const Args& a, size_t i) {
  if (a.is_constant(i)) return static_cast<int64_t>(a.int_list(i).size());
  const torch::jit::Node* n = a.jit(i)->node();
  if (n->kind() == c10::prim::ListConstruct) return static_cast<int64_t>(n->inputs().size());
  return std::nullopt;
}

double max_finite(at::ScalarType type) {
  switch (type) {
    case at::kDouble:
      return std::numeric_limits<double>::max();
    case at::kHalf:
      return 65504.0;
    case at::kBFloat16:
      return static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    default:
      return std::numeric_limits<float>::max();
  }
}

at::ScalarType result_dtype(GraphContext& g, const Args& a, std::optional<int64_t> dtype) {
  if (dtype) return static_cast<at::ScalarType>(*dtype);
  at::ScalarType out = a.output_dtype();
  if (out == at::ScalarType::Undefined) {
    g.fail("the result dtype is unknown (type propagation failed)");
  }
  return out;
}

}  // namespace torchonnx::symbolic
