// Opsets below the converters' range through ONNX's version converter (opset_down.h).
#include "onnx/opset_down.h"

#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <ATen/ATen.h>

#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/dtype.h"
#include "onnx/tensor_proto.h"
#include "torchonnx/errors.h"
#include "torchonnx/export.h"

namespace torchonnx {

namespace {

const onnx::NodeProto* find_node_of_type(const onnx::GraphProto& graph,
                                         const std::string& op_type) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == op_type && (node.domain().empty() || node.domain() == "ai.onnx")) {
      return &node;
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) {
        if (const auto* found = find_node_of_type(attr.g(), op_type)) return found;
      }
      for (const auto& g : attr.graphs()) {
        if (const auto* found = find_node_of_type(g, op_type)) return found;
      }
    }
  }
  return nullptr;
}

// The node an error of the version converter is about: its messages name the ONNX op
// ("No Previous Version of Where exists", "No Adapter For Where ...").
const onnx::NodeProto* node_named_in(const onnx::GraphProto& graph, const std::string& message) {
  static const std::regex op_word("[A-Z][A-Za-z0-9]*");
  for (auto it = std::sregex_iterator(message.begin(), message.end(), op_word);
       it != std::sregex_iterator(); ++it) {
    if (const auto* node = find_node_of_type(graph, it->str())) return node;
  }
  return nullptr;
}

// Writes to std::cerr during a scope go nowhere: the version converter prints a warning per node
// of a custom domain (which it leaves as it is, as torchonnx wants).
class SilenceStderr {
 public:
  SilenceStderr() : saved_(std::cerr.rdbuf(sink_.rdbuf())) {}
  ~SilenceStderr() { std::cerr.rdbuf(saved_); }
  SilenceStderr(const SilenceStderr&) = delete;
  SilenceStderr& operator=(const SilenceStderr&) = delete;

 private:
  std::ostringstream sink_;
  std::streambuf* saved_;
};

// Opset 8's Constant holds float types only, and the version converter's adapter retypes the
// node without its value: a Constant of another type becomes an initializer of the main graph
// (as torch.onnx writes its constants), also one inside an If branch or a Loop body, which reads
// it from the outer scope (value names are unique in the whole model).
void non_float_constants_to_initializers(onnx::GraphProto& graph, onnx::GraphProto& main) {
  auto* nodes = graph.mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    onnx::NodeProto& node = *nodes->Mutable(i);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) non_float_constants_to_initializers(*attr.mutable_g(), main);
      for (auto& g : *attr.mutable_graphs()) non_float_constants_to_initializers(g, main);
    }
    const bool moved = [&] {
      if (node.op_type() != "Constant" || !node.domain().empty() || node.output_size() != 1 ||
          node.attribute_size() != 1 || node.attribute(0).name() != "value") {
        return false;
      }
      const int type = node.attribute(0).t().data_type();
      if (type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
          type == onnx::TensorProto::FLOAT16) {
        return false;
      }
      onnx::TensorProto* init = main.add_initializer();
      *init = node.attribute(0).t();
      init->set_name(node.output(0));
      return true;
    }();
    if (!moved) {
      if (kept != i) nodes->SwapElements(kept, i);
      ++kept;
    }
  }
  nodes->DeleteSubrange(kept, nodes->size() - kept);
}

// Note [Opset 9 ops below opset 9]: the lowerings write a few ops new in opset 9 for which ONNX's
// version converter has no earlier form. Those with an exact one in opset 7's ops are rewritten
// into it before the converter runs (value types from the shape inference before):
//   IsNaN(x)          ⇒ Not(Or(Less(x, +inf), Greater(x, -inf)))  (false for every number)
//   Sign(x)           ⇒ Cast(Greater(x', 0)) - Cast(Less(x', 0)), x' = x as double (0 for NaN,
//                       which the lowerings that use Sign multiply by a NaN of the same element)
//   Where(c, a, b)    ⇒ a'·Cast(c) + b'·Cast(Not(c)) for integer and bool a, b (as int64: a·1 and
//                       b·0 are exact; the sum is cast back). Not for floating types, where an
//                       infinite or NaN element of the branch not taken would leak: there, at
//                       static shapes, Gather(Concat(a flat, b flat), B + Cast(c)·D), where B
//                       holds each output element's position in b's part and D the distance to
//                       its position in a's part (broadcasting done by the positions); it copies
//                       every value as it is.
//   Less / Greater    ⇒ on integer operands (opset 9 added them), the operands cast to double
//   NonZero(ConstantOfShape(s, value ≠ 0)), s of one element (an index vector, arange(n) below
//                     opset 11)  ⇒ Unsqueeze(Loop(n) scanning its iteration number, 0); the
//                       ConstantOfShape read by nothing else goes
//   NonZero(x)        ⇒ at a static shape of at most 4096 elements: for each element i, the row
//                       of its index ([1, rank], a constant) repeated Cast(Cast(x_i, bool), int64)
//                       times by Tile (0 or 1 rows), the rows concatenated in order and
//                       transposed to NonZero's [rank, count]. Cast to bool is x_i != 0 for every
//                       type (NaN is non-zero, as for NonZero; -0 is zero).
// A Where of floating type or a NonZero at dynamic shapes and the other ops new in opset 9 stay
// for the converter to refuse by name.
class BelowOpsetNine {
 public:
  explicit BelowOpsetNine(onnx::GraphProto& main) : main_(main) { collect(main); }

  void rewrite(onnx::GraphProto& graph) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
    for (auto& node : *graph.mutable_node()) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.has_g()) rewrite(*attr.mutable_g());
        for (auto& g : *attr.mutable_graphs()) rewrite(g);
      }
      if (node.domain().empty() || node.domain() == "ai.onnx") {
        if (rewrite_node(node, out)) continue;
      }
      *out.Add() = std::move(node);
    }
    graph.mutable_node()->Swap(&out);
  }

 private:
  using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

  void note_type(const onnx::ValueInfoProto& v) {
    names_.insert(v.name());
    if (!v.type().has_tensor_type()) return;
    const auto& tt = v.type().tensor_type();
    if (tt.elem_type() != 0) types_[v.name()] = tt.elem_type();
    if (!tt.has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) return;
      dims.push_back(d.dim_value());
    }
    shapes_[v.name()] = dims;
  }
  void note_tensor(const std::string& name, const onnx::TensorProto& t) {
    types_[name] = t.data_type();
    shapes_[name] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  }
  void collect(const onnx::GraphProto& graph) {
    for (const auto& v : graph.input()) note_type(v);
    for (const auto& v : graph.output()) note_type(v);
    for (const auto& v : graph.value_info()) note_type(v);
    for (const auto& t : graph.initializer()) {
      names_.insert(t.name());
      note_tensor(t.name(), t);
    }
    for (const auto& node : graph.node()) {
      for (const auto& o : node.output()) {
        names_.insert(o);
        producers_[o] = &node;
      }
      for (const auto& i : node.input()) readers_[i].push_back(&node);
      for (const auto& attr : node.attribute()) {
        // A subgraph's reads of this graph's values count as reads by the node holding it.
        if (attr.has_g()) note_outer_reads(attr.g(), node);
        for (const auto& g : attr.graphs()) note_outer_reads(g, node);
      }
      if (node.op_type() == "Constant" && node.attribute_size() == 1 && node.attribute(0).has_t() &&
          node.output_size() == 1) {
        note_tensor(node.output(0), node.attribute(0).t());
      }
      for (const auto& attr : node.attribute()) {
        if (attr.has_g()) collect(attr.g());
        for (const auto& g : attr.graphs()) collect(g);
      }
    }
  }
  void note_outer_reads(const onnx::GraphProto& graph, const onnx::NodeProto& holder) {
    for (const auto& node : graph.node()) {
      for (const auto& i : node.input()) readers_[i].push_back(&holder);
      for (const auto& attr : node.attribute()) {
        if (attr.has_g()) note_outer_reads(attr.g(), holder);
        for (const auto& g : attr.graphs()) note_outer_reads(g, holder);
      }
    }
  }
  int type_of(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? 0 : it->second;
  }
  // The libtorch dtype of value `name`; nullopt when unknown or not one libtorch has.
  std::optional<at::ScalarType> dtype_of(const std::string& name) const {
    const int t = type_of(name);
    if (t == 0) return std::nullopt;
    try {
      return from_onnx_dtype(t);
    } catch (const ExportError&) {
      return std::nullopt;
    }
  }
  bool is_float(const std::string& name) const {
    const auto t = dtype_of(name);
    return t && at::isFloatingType(*t);
  }
  bool is_integer_or_bool(const std::string& name) const {
    const auto t = dtype_of(name);
    return t && at::isIntegralType(*t, /*includeBool=*/true);
  }
  static void set_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
    auto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(value);
  }
  static void set_ints_attribute(onnx::NodeProto* node, const std::string& name,
                                 const std::vector<int64_t>& values) {
    auto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) attr->add_ints(v);
  }
  const std::vector<int64_t>* shape_of(const std::string& name) const {
    auto it = shapes_.find(name);
    return it == shapes_.end() ? nullptr : &it->second;
  }
  // An int64 initializer of the main graph (a subgraph reads it from the outer scope; opset 8's
  // Constant holds no int64).
  std::string int64_initializer(const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& values) {
    onnx::TensorProto* t = main_.add_initializer();
    to_tensor_proto(at::tensor(values, at::kLong).view(dims), fresh("positions"), t);
    note_tensor(t->name(), *t);
    return t->name();
  }
  // For each element of a tensor of shape `out` (row-major), the flat position of the element of
  // a tensor of shape `in` that broadcasting reads there.
  static std::vector<int64_t> broadcast_positions(const std::vector<int64_t>& out,
                                                  const std::vector<int64_t>& in) {
    const size_t rank = out.size(), offset = rank - in.size();
    std::vector<int64_t> in_stride(rank, 0);
    int64_t stride = 1;
    for (size_t k = rank; k-- > offset;) {
      const int64_t d = in[k - offset];
      in_stride[k] = d == 1 ? 0 : stride;
      stride *= d;
    }
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    std::vector<int64_t> positions(static_cast<size_t>(total));
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t p = 0;
      for (size_t k = 0; k < rank; ++k) p += index[k] * in_stride[k];
      positions[static_cast<size_t>(i)] = p;
      for (size_t k = rank; k-- > 0;) {
        if (++index[k] < out[k]) break;
        index[k] = 0;
      }
    }
    return positions;
  }
  std::string fresh(const std::string& hint) {
    std::string name;
    do {
      name = fmt::format("{}_below9_{}", hint, counter_++);
    } while (names_.count(name) > 0);
    names_.insert(name);
    return name;
  }
  // Appends a node like `like` (its name, doc_string) of `type`; returns its output (`output`
  // when given).
  std::string add(Nodes& out, const onnx::NodeProto& like, const std::string& type,
                  const std::vector<std::string>& inputs, const std::string& output = "") {
    onnx::NodeProto* n = out.Add();
    n->set_op_type(type);
    n->set_name(like.name().empty() ? "" : fresh(like.name()));
    n->set_doc_string(like.doc_string());
    for (const auto& i : inputs) n->add_input(i);
    const std::string o = output.empty() ? fresh(type) : output;
    n->add_output(o);
    return o;
  }
  std::string cast(Nodes& out, const onnx::NodeProto& like, const std::string& v, int to,
                   const std::string& output = "") {
    std::string o = add(out, like, "Cast", {v}, output);
    set_int_attribute(out.Mutable(out.size() - 1), "to", to);
    return o;
  }
  std::string scalar(Nodes& out, const onnx::NodeProto& like, double value, int type) {
    std::string o = add(out, like, "Constant", {});
    auto* attr = out.Mutable(out.size() - 1)->add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    to_tensor_proto(at::scalar_tensor(value, from_onnx_dtype(type)), "", attr->mutable_t());
    note_tensor(o, attr->t());
    return o;
  }

  bool rewrite_node(onnx::NodeProto& node, Nodes& out) {
    const std::string& op = node.op_type();
    if (op == "IsNaN" && node.input_size() == 1 && is_float(node.input(0))) {
      const std::string& x = node.input(0);
      const int t = type_of(x);
      const double inf = std::numeric_limits<double>::infinity();
      std::string below = add(out, node, "Less", {x, scalar(out, node, inf, t)});
      std::string above = add(out, node, "Greater", {x, scalar(out, node, -inf, t)});
      add(out, node, "Not", {add(out, node, "Or", {below, above})}, node.output(0));
      return true;
    }
    if (op == "Sign" && node.input_size() == 1 && type_of(node.input(0)) != 0) {
      const int t = type_of(node.input(0));
      const int d = onnx::TensorProto::DOUBLE;
      std::string x = t == d ? node.input(0) : cast(out, node, node.input(0), d);
      std::string zero = scalar(out, node, 0, d);
      std::string pos = cast(out, node, add(out, node, "Greater", {x, zero}), d);
      std::string neg = cast(out, node, add(out, node, "Less", {x, zero}), d);
      if (t == d) {
        add(out, node, "Sub", {pos, neg}, node.output(0));
      } else {
        cast(out, node, add(out, node, "Sub", {pos, neg}), t, node.output(0));
      }
      return true;
    }
    if (op == "Where" && node.input_size() == 3) {
      const int t = type_of(node.input(1));
      if (t == 0 || type_of(node.input(2)) != t) return false;
      if (!is_integer_or_bool(node.input(1))) return gathered_where(node, out);
      const int i64 = onnx::TensorProto::INT64;
      auto as_i64 = [&](const std::string& v, int from) {
        return from == i64 ? v : cast(out, node, v, i64);
      };
      std::string taken = cast(out, node, node.input(0), i64);
      std::string not_taken = cast(out, node, add(out, node, "Not", {node.input(0)}), i64);
      std::string a = add(out, node, "Mul", {as_i64(node.input(1), t), taken});
      std::string b = add(out, node, "Mul", {as_i64(node.input(2), t), not_taken});
      if (t == i64) {
        add(out, node, "Add", {a, b}, node.output(0));
      } else {
        cast(out, node, add(out, node, "Add", {a, b}), t, node.output(0));
      }
      return true;
    }
    if (op == "ConstantOfShape" && node.output_size() == 1) {
      // Goes when every reader is a NonZero that becomes a Loop (a graph output is no reader).
      const auto it = readers_.find(node.output(0));
      if (it == readers_.end() || it->second.empty()) return false;
      for (const onnx::NodeProto* reader : it->second) {
        if (!is_index_vector_nonzero(*reader)) return false;
      }
      for (const auto& o : main_.output()) {
        if (o.name() == node.output(0)) return false;
      }
      return true;
    }
    if (op == "NonZero" && node.input_size() == 1) {
      if (is_index_vector_nonzero(node)) return looped_index_vector(node, out);
      return tiled_nonzero(node, out);
    }
    if ((op == "Less" || op == "Greater") && node.input_size() == 2 &&
        is_integer_or_bool(node.input(0))) {
      const int d = onnx::TensorProto::DOUBLE;
      add(out, node, op, {cast(out, node, node.input(0), d), cast(out, node, node.input(1), d)},
          node.output(0));
      return true;
    }
    return false;
  }

  // Where(c, a, b) of a floating type at static shapes of a and b (the note above; c broadcasts
  // in the Mul); false when a shape is not known or the positions would be too many to store.
  bool gathered_where(const onnx::NodeProto& node, Nodes& out) {
    const auto* sa = shape_of(node.input(1));
    const auto* sb = shape_of(node.input(2));
    const auto* so = shape_of(node.output(0));
    if (!sa || !sb || !so) return false;
    int64_t total = 1, na = 1;
    for (int64_t d : *so) total *= d;
    for (int64_t d : *sa) na *= d;
    constexpr int64_t kMaxPositions = int64_t{1} << 22;
    if (total > kMaxPositions || sa->size() > so->size() || sb->size() > so->size()) return false;
    std::vector<int64_t> in_a = broadcast_positions(*so, *sa), in_b = broadcast_positions(*so, *sb);
    std::vector<int64_t> distance(in_a.size());
    for (size_t i = 0; i < in_a.size(); ++i) {
      in_b[i] += na;
      distance[i] = in_a[i] - in_b[i];
    }
    std::string flat_shape = int64_initializer({1}, {-1});
    std::string flat = add(out, node, "Concat",
                           {add(out, node, "Reshape", {node.input(1), flat_shape}),
                            add(out, node, "Reshape", {node.input(2), flat_shape})});
    set_int_attribute(out.Mutable(out.size() - 1), "axis", 0);
    std::string taken = cast(out, node, node.input(0), onnx::TensorProto::INT64);
    std::string positions = add(out, node, "Add",
                                {int64_initializer(*so, in_b),
                                 add(out, node, "Mul", {taken, int64_initializer(*so, distance)})});
    add(out, node, "Gather", {flat, positions}, node.output(0));
    return true;
  }

  // Whether `node` is NonZero(ConstantOfShape(s, value ≠ 0)) with s of one element: the indices
  // [[0, 1, ..., n - 1]] of an arange.
  bool is_index_vector_nonzero(const onnx::NodeProto& node) const {
    if (node.op_type() != "NonZero" || node.input_size() != 1) return false;
    if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
    const auto it = producers_.find(node.input(0));
    if (it == producers_.end()) return false;
    const onnx::NodeProto& fill = *it->second;
    if (fill.op_type() != "ConstantOfShape" || fill.input_size() != 1) return false;
    const auto* shape = shape_of(fill.input(0));
    if (!shape || shape->size() != 1 || (*shape)[0] != 1) return false;
    for (const auto& attr : fill.attribute()) {
      if (attr.name() == "value" && attr.has_t()) {
        const at::Tensor value = from_tensor_proto(attr.t());
        return value.numel() == 1 && value.ne(0).all().item<bool>();
      }
    }
    return false;  // the default value is 0: no index
  }

  // NonZero(ConstantOfShape(s, value ≠ 0)) (the note above): a Loop of s[0] iterations whose scan
  // output is the iteration number, unsqueezed to NonZero's [1, n].
  bool looped_index_vector(const onnx::NodeProto& node, Nodes& out) {
    const std::string& shape = producers_.at(node.input(0))->input(0);
    std::string trips = add(out, node, "Squeeze", {shape});
    set_ints_attribute(out.Mutable(out.size() - 1), "axes", {0});
    onnx::GraphProto body;
    body.set_name(fresh("arange_body"));
    const std::string i = fresh("iteration"), cond = fresh("cond");
    // Loop before opset 11 carries at least one value: the trip count, unchanged.
    const std::string carried = fresh("carried"), carried_out = fresh("carried_out");
    const std::string cond_out = fresh("cond_out"), index = fresh("index");
    auto declare = [](onnx::ValueInfoProto* v, const std::string& name, int type) {
      v->set_name(name);
      auto* tt = v->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(type);
      tt->mutable_shape();
    };
    declare(body.add_input(), i, onnx::TensorProto::INT64);
    declare(body.add_input(), cond, onnx::TensorProto::BOOL);
    declare(body.add_input(), carried, onnx::TensorProto::INT64);
    declare(body.add_output(), cond_out, onnx::TensorProto::BOOL);
    declare(body.add_output(), carried_out, onnx::TensorProto::INT64);
    declare(body.add_output(), index, onnx::TensorProto::INT64);
    add(*body.mutable_node(), node, "Identity", {cond}, cond_out);
    add(*body.mutable_node(), node, "Identity", {carried}, carried_out);
    add(*body.mutable_node(), node, "Identity", {i}, index);
    add(out, node, "Loop", {trips, "", trips});
    onnx::NodeProto* looped = out.Mutable(out.size() - 1);
    const std::string indices = fresh("indices");
    looped->add_output(indices);  // outputs: the carried trip count, then the scanned indices
    std::string loop = indices;
    auto* attr = looped->add_attribute();
    attr->set_name("body");
    attr->set_type(onnx::AttributeProto::GRAPH);
    *attr->mutable_g() = std::move(body);
    add(out, node, "Unsqueeze", {loop}, node.output(0));
    set_ints_attribute(out.Mutable(out.size() - 1), "axes", {0});
    return true;
  }

  // NonZero(x) at a static shape (the note above); false when the shape is not known, x is 0-d
  // or empty, or has more elements than the rows this form writes nodes for.
  bool tiled_nonzero(const onnx::NodeProto& node, Nodes& out) {
    const auto* shape = shape_of(node.input(0));
    if (!shape || shape->empty() || type_of(node.input(0)) == 0) return false;
    int64_t n = 1;
    for (int64_t d : *shape) n *= d;
    constexpr int64_t kMaxElements = 4096;
    if (n <= 0 || n > kMaxElements) return false;
    const auto rank = static_cast<int64_t>(shape->size());
    // Each element's index (row-major) and its repeats [count_i, 1] side by side: [n, 2].
    std::vector<int64_t> index_rows, index(shape->size(), 0), ones(static_cast<size_t>(n), 1);
    for (int64_t i = 0; i < n; ++i) {
      index_rows.insert(index_rows.end(), index.begin(), index.end());
      for (size_t k = shape->size(); k-- > 0;) {
        if (++index[k] < (*shape)[k]) break;
        index[k] = 0;
      }
    }
    const std::string rows = int64_initializer({n, rank}, index_rows);
    std::string flat = add(out, node, "Reshape", {node.input(0), int64_initializer({1}, {-1})});
    if (type_of(node.input(0)) != onnx::TensorProto::BOOL) {
      flat = cast(out, node, flat, onnx::TensorProto::BOOL);
    }
    std::string counts =
        add(out, node, "Unsqueeze", {cast(out, node, flat, onnx::TensorProto::INT64)});
    set_ints_attribute(out.Mutable(out.size() - 1), "axes", {1});
    std::string repeats = add(out, node, "Concat", {counts, int64_initializer({n, 1}, ones)});
    set_int_attribute(out.Mutable(out.size() - 1), "axis", 1);
    repeats = add(out, node, "Reshape", {repeats, int64_initializer({1}, {-1})});
    std::vector<std::string> kept;
    for (int64_t i = 0; i < n; ++i) {
      std::string row = add(out, node, "Slice", {rows});
      set_ints_attribute(out.Mutable(out.size() - 1), "starts", {i});
      set_ints_attribute(out.Mutable(out.size() - 1), "ends", {i + 1});
      set_ints_attribute(out.Mutable(out.size() - 1), "axes", {0});
      std::string times = add(out, node, "Slice", {repeats});
      set_ints_attribute(out.Mutable(out.size() - 1), "starts", {2 * i});
      set_ints_attribute(out.Mutable(out.size() - 1), "ends", {2 * i + 2});
      set_ints_attribute(out.Mutable(out.size() - 1), "axes", {0});
      kept.push_back(add(out, node, "Tile", {row, times}));
    }
    std::string all = add(out, node, "Concat", kept);
    set_int_attribute(out.Mutable(out.size() - 1), "axis", 0);
    add(out, node, "Transpose", {all}, node.output(0));
    set_ints_attribute(out.Mutable(out.size() - 1), "perm", {1, 0});
    return true;
  }

  onnx::GraphProto& main_;
  std::unordered_map<std::string, int> types_;
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;
  std::unordered_set<std::string> names_;
  // The node writing each value and the nodes reading it (a node holding a subgraph reads what
  // the subgraph reads), of every graph.
  std::unordered_map<std::string, const onnx::NodeProto*> producers_;
  std::unordered_map<std::string, std::vector<const onnx::NodeProto*>> readers_;
  int counter_ = 0;
};

}  // namespace

void convert_opset_down(ExportedModel& model, int target_opset) {
  // The converter rebuilds the initializer list: deferred ones are found again by name.
  std::map<std::string, at::Tensor> deferred;
  for (const auto& d : model.deferred) {
    deferred.emplace(model.proto.graph().initializer(d.index).name(), d.tensor);
  }
  onnx::ModelProto converted;
  try {
    SilenceStderr quiet;
    // The adapters read the element types of values (which casts opset 8's Gemm or MatMul
    // needs): the model gets its value_info first.
    non_float_constants_to_initializers(*model.proto.mutable_graph(), *model.proto.mutable_graph());
    onnx::shape_inference::InferShapes(model.proto);
    // Note [Opset 9 ops below opset 9]
    BelowOpsetNine(*model.proto.mutable_graph()).rewrite(*model.proto.mutable_graph());
    onnx::shape_inference::InferShapes(model.proto);
    converted = onnx::version_conversion::ConvertVersion(model.proto, target_opset);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const onnx::NodeProto* node = node_named_in(model.proto.graph(), what);
    std::string subject = "a node";
    if (node) {
      subject = fmt::format("the node {} ({}{})", node->name().empty() ? "?" : node->name(),
                            node->op_type(),
                            node->doc_string().empty() ? "" : ", from " + node->doc_string());
    }
    throw ExportError(
        ErrorCode::kUnsupportedOp,
        fmt::format("cannot export at opset {}: torchonnx converts at opsets {} and later and "
                    "reaches opset {} through ONNX's version converter, which has no form of {} "
                    "there ({}). Remedy: export with opset_version >= {}",
                    target_opset, kMinOpset, target_opset, subject, what, kMinOpset));
  }
  model.proto = std::move(converted);
  model.deferred.clear();
  const auto& inits = model.proto.graph().initializer();
  for (int i = 0; i < inits.size(); ++i) {
    auto it = deferred.find(inits[i].name());
    if (it != deferred.end()) model.deferred.push_back({i, it->second});
  }
}

}  // namespace torchonnx
