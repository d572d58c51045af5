// Recurrent layers: RNN/LSTM/GRU (and cells, packed sequences) as single ONNX RNN/LSTM/GRU ops.
//
// Each layer of aten::lstm/gru/rnn_tanh/rnn_relu becomes one ONNX LSTM/GRU/RNN node (both
// directions in one node), a multi-layer RNN a chain of them. The weights stay graph values
// (initializers or inputs): their gate blocks are reordered to ONNX's order with Split/Concat,
// which constant folding turns into initializers. Only the hidden size (an attribute ONNX
// requires) is read from static shapes, from the weights; sequence length and batch are computed
// in the graph.
//
// Packed sequences are lowered exactly at every opset. One that only RNNs and pad_packed_sequence
// read stays padded, the RNNs run with sequence_lens (Note [Packed sequences kept padded]);
// otherwise (Gather, NonZero, MatMul) packing gathers the valid (time, batch) rows of the padded
// input, an RNN over packed data gathers them back to a padded tensor, runs with sequence_lens and
// gathers the valid rows of its output again.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <optional>
#include <set>

#include "common/jit_util.h"
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"

namespace torchonnx::symbolic::ops {

namespace {

using Ints = std::vector<int64_t>;

enum class Kind { kLstm, kGru, kRnnTanh, kRnnRelu };

const char* onnx_op(Kind k) {
  switch (k) {
    case Kind::kLstm:
      return "LSTM";
    case Kind::kGru:
      return "GRU";
    default:
      return "RNN";
  }
}

int64_t gates(Kind k) {
  switch (k) {
    case Kind::kLstm:
      return 4;
    case Kind::kGru:
      return 3;
    default:
      return 1;
  }
}

// Static sizes of element k of the Tensor[] argument i.
std::optional<Ints> list_item_sizes(GraphContext& g, const Args& a, size_t i, size_t k) {
  const torch::jit::Node* producer = a.jit(i)->node();
  if (producer->kind() == c10::prim::ListConstruct && k < producer->inputs().size()) {
    return Args(g, producer).sizes(k);
  }
  if (auto c = torch::jit::toIValue(a.jit(i)); c && c->isTensorList()) {
    auto list = c->toTensorVector();
    if (k < list.size()) return list[k].sizes().vec();
  }
  return std::nullopt;
}

// The gate blocks of a PyTorch weight or bias (stacked along dim 0) in ONNX's order:
// LSTM (i, f, g, o) → (i, o, f, c), GRU (r, z, n) → (z, r, h); RNN has a single block.
Value onnx_gate_order(GraphContext& g, const Value& w, Kind kind, int64_t hidden) {
  if (kind != Kind::kLstm && kind != Kind::kGru) return w;
  Values parts = split(g, w, Ints(gates(kind), hidden), 0);
  Values ordered = kind == Kind::kLstm ? Values{parts[0], parts[3], parts[1], parts[2]}
                                       : Values{parts[1], parts[0], parts[2]};
  return g.op("Concat", ordered, {{"axis", 0}});
}

Value concat0(GraphContext& g, const Values& parts) {
  if (parts.size() == 1) return parts[0];
  return g.op("Concat", parts, {{"axis", 0}});
}

struct RnnConfig {
  Kind kind;
  bool has_biases;
  int64_t num_layers;
  bool bidirectional;
  int64_t hidden;
  at::ScalarType type = at::kFloat;  // of the input, weights and states
};

struct RnnResult {
  Value output;  // [seq, batch, dirs * hidden]
  Value h_n;     // [layers * dirs, batch, hidden]
  Value c_n;     // LSTM only
};

// Runs the layers on a time-major input `x` ([seq, batch, features]). `h0`/`c0` are
// [layers * dirs, batch, hidden] or "" (zeros); `seq_lens` an int32 [batch] or "".
// `weights` are PyTorch's flat parameter list (w_ih, w_hh[, b_ih, b_hh]) per layer and direction.
RnnResult run_layers(GraphContext& g, const RnnConfig& c, Value x, Values weights, Value h0,
                     Value c0, const Value& seq_lens) {
  // ONNX Runtime's LSTM/GRU/RNN kernels take float only (double and half are in the ONNX spec
  // but not implemented): compute in float and cast the results back.
  const bool recast = c.type != at::kFloat && c.type != at::ScalarType::Undefined;
  if (recast) {
    x = g.cast(x, at::kFloat);
    for (Value& w : weights) w = g.cast(w, at::kFloat);
    if (!h0.empty()) h0 = g.cast(h0, at::kFloat);
    if (!c0.empty()) c0 = g.cast(c0, at::kFloat);
  }
  const int64_t dirs = c.bidirectional ? 2 : 1;
  const int64_t per = c.has_biases ? 4 : 2;
  const int64_t H = c.hidden;
  Values h_outs, c_outs;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    Values W, R, B;
    for (int64_t d = 0; d < dirs; ++d) {
      const size_t base = static_cast<size_t>((layer * dirs + d) * per);
      W.push_back(unsqueeze(g, onnx_gate_order(g, weights[base], c.kind, H), {0}));
      R.push_back(unsqueeze(g, onnx_gate_order(g, weights[base + 1], c.kind, H), {0}));
      if (c.has_biases) {
        Value b = g.op("Concat",
                       {onnx_gate_order(g, weights[base + 2], c.kind, H),
                        onnx_gate_order(g, weights[base + 3], c.kind, H)},
                       {{"axis", 0}});
        B.push_back(unsqueeze(g, b, {0}));
      }
    }
    auto state = [&](const Value& s) -> Value {
      if (s.empty() || c.num_layers == 1) return s;
      return slice(g, s, {0}, {layer * dirs}, {(layer + 1) * dirs});
    };
    Values inputs{x,        concat0(g, W), concat0(g, R), c.has_biases ? concat0(g, B) : Value(),
                  seq_lens, state(h0)};
    if (c.kind == Kind::kLstm) inputs.push_back(state(c0));
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();

    ir::Attributes attrs{{"hidden_size", H}};
    if (c.bidirectional) attrs.emplace_back("direction", "bidirectional");
    if (c.kind == Kind::kGru) attrs.emplace_back("linear_before_reset", 1);
    if (c.kind == Kind::kRnnTanh || c.kind == Kind::kRnnRelu) {
      std::string act = c.kind == Kind::kRnnTanh ? "Tanh" : "Relu";
      attrs.emplace_back("activations", ir::Strings(dirs, act));
    }
    const size_t n_out = c.kind == Kind::kLstm ? 3 : 2;
    Values outs = g.op(onnx_op(c.kind), inputs, attrs, n_out);
    // Y is [seq, dirs, batch, hidden]; PyTorch's output is [seq, batch, dirs * hidden].
    if (c.bidirectional) {
      Value y = g.op("Transpose", {outs[0]}, {{"perm", Ints{0, 2, 1, 3}}});
      x = g.op("Reshape", {y, g.constant_ints({0, 0, -1})});
    } else {
      x = squeeze(g, outs[0], {1});
    }
    h_outs.push_back(outs[1]);
    if (c.kind == Kind::kLstm) c_outs.push_back(outs[2]);
  }
  RnnResult r{x, concat0(g, h_outs), ""};
  if (c.kind == Kind::kLstm) r.c_n = concat0(g, c_outs);
  if (recast) {
    r.output = g.cast(r.output, c.type);
    r.h_n = g.cast(r.h_n, c.type);
    if (!r.c_n.empty()) r.c_n = g.cast(r.c_n, c.type);
  }
  return r;
}

// The configuration of aten::lstm/gru/rnn_* from the arguments following `params` (index p):
// has_biases, num_layers, dropout, train, bidirectional.
RnnConfig read_config(GraphContext& g, const Args& a, Kind kind, size_t p) {
  RnnConfig c{kind, a.bool_arg(p + 1), a.int_arg(p + 2), a.bool_arg(p + 5), 0};
  const double dropout = a.float_arg(p + 3);
  const bool train = a.bool_arg(p + 4);
  if (train && dropout > 0 && c.num_layers > 1) {
    g.fail(
        "dropout between RNN layers in training mode cannot be exported; export the model "
        "in eval mode (module.eval())");
  }
  const int64_t dirs = c.bidirectional ? 2 : 1;
  const size_t per = c.has_biases ? 4 : 2;
  const size_t n = a.tensor_list(p).size();
  const auto expected = static_cast<size_t>(c.num_layers * dirs) * per;
  if (n != expected) {
    if (kind == Kind::kLstm && n == static_cast<size_t>(c.num_layers * dirs) * (per + 1)) {
      g.fail(
          "LSTM with projections (proj_size > 0) has no ONNX equivalent; export an LSTM "
          "without proj_size followed by a Linear layer instead");
    }
    g.fail(fmt::format("expected {} RNN parameters ({} layers, {} directions, biases: {}), got {}",
                       expected, c.num_layers, dirs, c.has_biases, n));
  }
  // static shape: ONNX needs hidden_size as an attribute; weight_hh is [gates * hidden, hidden].
  auto w_hh = list_item_sizes(g, a, p, 1);
  if (!w_hh || w_hh->size() != 2) {
    g.fail("the hidden size of the RNN is unknown (the shape of weight_hh_l0 is not known)");
  }
  c.hidden = (*w_hh)[1];
  return c;
}

void check_float(GraphContext& g, at::ScalarType t) {
  if (t != at::kFloat && t != at::kDouble && t != at::kHalf && t != at::ScalarType::Undefined) {
    g.fail(
        fmt::format("RNN input of type {} is not supported (ONNX RNN/GRU/LSTM take float, "
                    "double or half)",
                    c10::toString(t)));
  }
}

// ---- packed sequences ----
// A PackedSequence holds the valid (time, batch) rows of a time-major padded tensor [T, B, ...]
// in row-major order: its data row k is the k-th valid entry of the flattened [T * B] grid. So
// packing is a Gather of the flattened tensor at NonZero(valid mask), and unpacking a Gather at
// offset[t] + b, offset[t] being the rows of the steps before t (an exclusive prefix sum of
// batch_sizes, a MatMul with a triangular mask: CumSum only exists from opset 11).

// `x` [T, B, rest...] as [T * B, rest...] (`rank` its rank).
Value flatten_steps(GraphContext& g, const Value& x, int64_t rank) {
  Values shape{g.constant_ints({-1})};
  if (rank > 2) shape.push_back(slice(g, shape_of(g, x), {0}, {2}, {INT64_MAX}));
  return g.op("Reshape", {x, concat0(g, shape)});
}

// The rows of `x` [T, B, rest...] where `mask` [T, B] holds, in packed order.
Value gather_valid(GraphContext& g, const Value& x, int64_t rank, const Value& mask) {
  Value flat_mask = g.op("Reshape", {mask, g.constant_ints({-1})});
  Value positions = squeeze(g, g.op("NonZero", {flat_mask}), {0});
  return g.op("Gather", {flatten_steps(g, x, rank), positions}, {{"axis", 0}});
}

struct Unpacked {
  Value padded;   // [T, B, rest...]
  Value lengths;  // int64 [B]
  Value mask;     // bool [T, B]: the valid entries
};

// A PackedSequence (data [N, rest...] of rank `data_rank`, batch_sizes int64 [T]) as a
// time-major tensor padded with `pad` (0-d of data's type), with at least `min_steps` (int64 [1],
// or "") steps.
Unpacked unpack(GraphContext& g, const Value& data, const Value& bs, const Value& pad,
                int64_t data_rank, const Value& min_steps = "") {
  Value steps = shape_of(g, bs);  // [1]
  Value sizes = bs;
  if (!min_steps.empty()) {
    // max(T, min_steps) (Max takes int64 from opset 12 only); later steps have batch size 0.
    Value out_steps = g.op("Where", {g.op("Less", {steps, min_steps}), min_steps, steps});
    Value extra = g.op("ConstantOfShape", {g.op("Sub", {out_steps, steps})},
                       {{"value", at::zeros({1}, at::kLong)}});
    sizes = g.op("Concat", {bs, extra}, {{"axis", 0}});
    steps = out_steps;
  }
  Value batch = g.op("Gather", {bs, g.constant_scalar(0, at::kLong)}, {{"axis", 0}});  // 0-d
  Value b_range = arange(g, batch);
  Value t_range = arange(g, squeeze(g, steps, {0}));
  Value mask = g.op("Less", {unsqueeze(g, b_range, {0}), unsqueeze(g, sizes, {1})});  // [T, B]
  Value before = g.op("Less", {unsqueeze(g, t_range, {0}), unsqueeze(g, t_range, {1})});
  Value offsets =
      g.cast(g.op("MatMul", {g.cast(before, at::kDouble), g.cast(sizes, at::kDouble)}), at::kLong);
  Value rows = g.op("Add", {unsqueeze(g, offsets, {1}), unsqueeze(g, b_range, {0})});
  rows = g.op("Where", {mask, rows, g.constant_scalar(0, at::kLong)});
  Value gathered = g.op("Gather", {data, rows}, {{"axis", 0}});  // [T, B, rest...]
  Ints trailing;
  for (int64_t i = 2; i <= data_rank; ++i) trailing.push_back(i);
  Value valid = trailing.empty() ? mask : unsqueeze(g, mask, trailing);
  Value padded = g.op("Where", {valid, gathered, pad});
  Value lengths = reduce(g, "ReduceSum", g.cast(mask, at::kLong), {0}, false);
  return {padded, lengths, mask};
}

// ---- packed sequences kept padded ----
// Note [Packed sequences kept padded]: a PackedSequence whose data only RNNs and
// pad_packed_sequence read (a model's pack → RNN(s) → pad over a padded batch; the usual use) never
// needs its packed rows. Its data stays the time-major padded tensor [T, B, rest...]; an RNN over
// it runs with sequence_lens = the lengths given to pack (the steps past each length do not enter
// the result, and ONNX's RNNs stop there as PyTorch's packed ones do) and its output is again
// padded; pad_packed_sequence writes padding_value past each length and keeps max(lengths) steps
// (Gather at arange), T, or total_length. batch_sizes are the exact ones (what nn.LSTM reads its
// batch from). No NonZero: at a static T such models export at opsets 7 and 8 too, as
// torch.onnx's (which fuses pack → RNN → pad and keeps T steps, exact only when T ==
// max(lengths)). A sequence whose data is read any other way, or padded to a total_length longer
// than the input, takes the exact packed lowering above.

bool is_rnn_over_packed(const torch::jit::Node* n) {
  static const std::set<c10::Symbol> kinds{
      c10::Symbol::fromQualString("aten::lstm"), c10::Symbol::fromQualString("aten::gru"),
      c10::Symbol::fromQualString("aten::rnn_tanh"), c10::Symbol::fromQualString("aten::rnn_relu")};
  if (!kinds.count(n->kind())) return false;
  const c10::FunctionSchema* schema = node_schema(n);
  return schema && schema->overload_name() == "data";
}

const c10::Symbol kPackPadded = c10::Symbol::fromQualString("aten::_pack_padded_sequence");
const c10::Symbol kPadPacked = c10::Symbol::fromQualString("aten::_pad_packed_sequence");

// `v` without the int/tensor conversions around it (aten::Int, prim::NumToTensor): the value a
// scripted total_length was computed from.
const torch::jit::Value* without_int_casts(const torch::jit::Value* v) {
  while (v->node()->kind() == c10::aten::Int || v->node()->kind() == c10::prim::NumToTensor) {
    v = v->node()->input(0);
  }
  return v;
}

// Whether `v` (pad_packed_sequence's total_length) is batch_sizes.size(0) of `batch_sizes`: the
// steps of the sequence, what pad_packed_sequence passes when no total_length is given.
bool is_step_count(const torch::jit::Value* v, const torch::jit::Value* batch_sizes) {
  v = without_int_casts(v);
  const torch::jit::Node* n = v->node();
  if (n->kind() != c10::aten::size || n->inputs().size() != 2 || n->input(0) != batch_sizes) {
    return false;
  }
  auto dim = torch::jit::toIValue(n->input(1));
  return dim && dim->isInt() && dim->toInt() == 0;
}

Ints index_vector(int64_t n) {
  Ints range(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) range[static_cast<size_t>(i)] = i;
  return range;
}

// The static step count T of the padded input of `pack`, if known.
std::optional<int64_t> padded_steps(GraphContext& g, const torch::jit::Node* pack) {
  auto sizes = Args(g, pack).sizes(0);
  auto batch_first = torch::jit::toIValue(pack->input(2));
  if (!sizes || sizes->size() < 2 || !batch_first || !batch_first->isBool()) return std::nullopt;
  return (*sizes)[batch_first->toBool() ? 1 : 0];
}

// The steps a pad_packed_sequence of a kept-padded sequence keeps.
struct KeptRows {
  enum Kind { kLongest, kAll, kFirst } kind;  // max(lengths), all T, the first `count`
  int64_t count = 0;
};

// The steps `pad` (a pad_packed_sequence of the sequence `pack` makes) keeps: max(lengths) for
// batch_sizes.size(0) or a total_length <= 0, all for the padded input's own step count
// (total_length=x.size(1) for a batch-first x) or a constant equal to it, the first L for a
// constant L below it; nullopt otherwise (a total_length computed another way, or longer than
// the input).
std::optional<KeptRows> kept_rows(GraphContext& g, const torch::jit::Node* pad,
                                  const torch::jit::Node* pack) {
  if (is_step_count(pad->input(4), pack->output(1))) return KeptRows{KeptRows::kLongest};
  auto batch_first = torch::jit::toIValue(pack->input(2));
  if (!batch_first || !batch_first->isBool()) return std::nullopt;
  const torch::jit::Value* v = without_int_casts(pad->input(4));
  // The input before pack_padded_sequence(enforce_sorted=False) sorted its batch.
  const torch::jit::Value* input = pack->input(0);
  const int64_t batch_dim = batch_first->toBool() ? 0 : 1;
  while (input->node()->kind() == c10::aten::index_select &&
         torch::jit::toIValue(input->node()->input(1)) == c10::IValue(batch_dim)) {
    input = input->node()->input(0);
  }
  if (const torch::jit::Node* n = v->node();
      n->kind() == c10::aten::size && n->inputs().size() == 2 && n->input(0) == input) {
    auto dim = torch::jit::toIValue(n->input(1));
    auto rank = Args(g, pack).rank(0);
    if (!dim || !dim->isInt() || !rank) return std::nullopt;
    const int64_t d = dim->toInt() < 0 ? dim->toInt() + *rank : dim->toInt();
    if (d == (batch_first->toBool() ? 1 : 0)) return KeptRows{KeptRows::kAll};
    return std::nullopt;
  }
  auto total = torch::jit::toIValue(pad->input(4));
  if (!total || !total->isInt()) return std::nullopt;
  if (total->toInt() <= 0) return KeptRows{KeptRows::kLongest};
  auto steps = padded_steps(g, pack);
  if (!steps || total->toInt() > *steps) return std::nullopt;
  if (total->toInt() == *steps) return KeptRows{KeptRows::kAll};
  return KeptRows{KeptRows::kFirst, total->toInt()};
}

// The valid steps [T, B] of the time-major padded `x` of `pack`: t < lengths[b].
Value step_mask(GraphContext& g, const torch::jit::Node* pack, const Value& x,
                const Value& lengths) {
  const std::optional<int64_t> steps = padded_steps(g, pack);
  Value t_range = steps ? g.constant_ints(index_vector(*steps)) : arange(g, dim_size(g, x, 0));
  return g.op("Less", {unsqueeze(g, t_range, {1}), unsqueeze(g, lengths, {0})});
}

// The lengths (int64 [B]) `pack` was given.
Value pack_lengths(GraphContext& g, const torch::jit::Node* pack) {
  const Values* lengths = g.lookup(pack->input(1));
  if (!lengths || lengths->size() != 1) g.fail("the lengths of the packed sequence are unknown");
  return g.cast(lengths->front(), at::kLong);
}

// The _pack_padded_sequence whose sequence `batch_sizes` belongs to, when that sequence is kept
// padded (Note [Packed sequences kept padded]); else null.
const torch::jit::Node* kept_padded_pack(GraphContext& g, const torch::jit::Value* batch_sizes) {
  const torch::jit::Node* pack = batch_sizes->node();
  if (pack->kind() != kPackPadded || batch_sizes != pack->output(1)) return nullptr;
  std::set<const torch::jit::Value*> data{pack->output(0)};
  std::vector<const torch::jit::Value*> pending{pack->output(0)};
  while (!pending.empty()) {
    const torch::jit::Value* d = pending.back();
    pending.pop_back();
    for (const torch::jit::Use& u : d->uses()) {
      if (u.offset != 0 || u.user->inputs().size() < 2 || u.user->input(1) != batch_sizes) {
        return nullptr;
      }
      if (is_rnn_over_packed(u.user)) {
        if (data.insert(u.user->output(0)).second) pending.push_back(u.user->output(0));
      } else if (u.user->kind() != kPadPacked || !kept_rows(g, u.user, pack)) {
        return nullptr;
      }
    }
  }
  // batch_sizes are exact: any node may read them; an RNN or pad reads them with its data.
  for (const torch::jit::Use& u : batch_sizes->uses()) {
    if (is_rnn_over_packed(u.user) || u.user->kind() == kPadPacked) {
      if (u.offset != 1 || !data.count(u.user->input(0))) return nullptr;
    }
  }
  return pack;
}

// aten::lstm/gru/rnn_tanh/rnn_relu of the .input overload (`packed` false) or the .data overload
// (packed data with batch_sizes).
Values rnn_converter(GraphContext& g, const Args& a, Kind kind, bool packed) {
  const bool lstm = kind == Kind::kLstm;
  const size_t h = packed ? 2 : 1, p = packed ? 3 : 2;
  RnnConfig c = read_config(g, a, kind, p);
  check_float(g, a.dtype(0));
  c.type = a.dtype(0);
  Values weights = a.tensor_list(p);
  Value h0, c0;
  if (lstm) {
    Values hx = a.tensor_list(h);
    if (hx.size() != 2) g.fail("aten::lstm expects hx = [h0, c0]");
    h0 = hx[0];
    c0 = hx[1];
  } else {
    h0 = a.tensor(h);
  }
  if (!packed) {
    const bool batch_first = a.bool_arg(p + 6);
    if (a.require_rank(0) != 3) {
      g.fail("only batched (3-D) RNN inputs are supported; unbatched inputs reach aten as 3-D");
    }
    Value x = a.tensor(0);
    if (batch_first) x = g.op("Transpose", {x}, {{"perm", Ints{1, 0, 2}}});
    RnnResult r = run_layers(g, c, x, weights, h0, c0, "");
    if (batch_first) r.output = g.op("Transpose", {r.output}, {{"perm", Ints{1, 0, 2}}});
    return lstm ? Values{r.output, r.h_n, r.c_n} : Values{r.output, r.h_n};
  }
  if (const torch::jit::Node* pack = kept_padded_pack(g, a.jit(1))) {
    // Note [Packed sequences kept padded]: data is [T, B, features].
    Value lengths = g.cast(pack_lengths(g, pack), at::kInt);
    RnnResult r = run_layers(g, c, a.tensor(0), weights, h0, c0, lengths);
    return lstm ? Values{r.output, r.h_n, r.c_n} : Values{r.output, r.h_n};
  }
  if (a.require_rank(0) != 2) g.fail("packed RNN data must be 2-D [rows, features]");
  Unpacked u =
      unpack(g, a.tensor(0), a.tensor_as(1, at::kLong), g.constant_scalar(0, a.dtype(0)), 2);
  RnnResult r = run_layers(g, c, u.padded, weights, h0, c0, g.cast(u.lengths, at::kInt));
  Value out = gather_valid(g, r.output, 3, u.mask);
  return lstm ? Values{out, r.h_n, r.c_n} : Values{out, r.h_n};
}

// aten::*_cell: one step of a single-layer unidirectional RNN, [batch, features] in.
Values cell_converter(GraphContext& g, const Args& a, Kind kind) {
  const bool lstm = kind == Kind::kLstm;
  check_float(g, a.dtype(0));
  if (a.require_rank(0) != 2) g.fail("RNN cells take a 2-D [batch, features] input");
  const bool has_biases = !a.is_none(4) || !a.is_none(5);
  auto w_hh = a.sizes(3);
  if (!w_hh || w_hh->size() != 2) g.fail("the hidden size of the RNN cell is unknown");
  // static shape: ONNX needs hidden_size as an attribute; w_hh is [gates * hidden, hidden].
  const int64_t H = (*w_hh)[1];
  Values weights{a.tensor(2), a.tensor(3)};
  if (has_biases) {
    auto zeros_like_bias = [&](size_t other) {
      return g.op("Sub", {a.tensor(other), a.tensor(other)});
    };
    weights.push_back(a.is_none(4) ? zeros_like_bias(5) : a.tensor(4));
    weights.push_back(a.is_none(5) ? zeros_like_bias(4) : a.tensor(5));
  }
  RnnConfig c{kind, has_biases, 1, false, H, a.dtype(0)};
  Value h0, c0;
  if (lstm) {
    Values hx = a.tensor_list(1);
    if (hx.size() != 2) g.fail("aten::lstm_cell expects hx = [h, c]");
    h0 = unsqueeze(g, hx[0], {0});
    c0 = unsqueeze(g, hx[1], {0});
  } else {
    h0 = unsqueeze(g, a.tensor(1), {0});
  }
  RnnResult r = run_layers(g, c, unsqueeze(g, a.tensor(0), {0}), weights, h0, c0, "");
  if (lstm) return {squeeze(g, r.h_n, {0}), squeeze(g, r.c_n, {0})};
  return {squeeze(g, r.h_n, {0})};
}

// aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers,
//   float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
// aten::gru.input / rnn_tanh.input / rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, ...)
//   -> (Tensor, Tensor)
//   ⇒  one ONNX LSTM / GRU (linear_before_reset=1) / RNN (Tanh/Relu) per layer (weights reordered
//      with Split/Concat)
Converter rnn_input(Kind kind) {
  return [kind](GraphContext& g, const Args& a) { return rnn_converter(g, a, kind, false); };
}

// aten::lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases,
//   int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)
// aten::gru.data / rnn_tanh.data / rnn_relu.data(data, batch_sizes, Tensor hx, ...)
//   -> (Tensor, Tensor)
//   ⇒  packed data gathered to padded, run as .input with sequence_lens and its valid rows
//      gathered back (Gather/NonZero, every opset)
Converter rnn_data(Kind kind) {
  return [kind](GraphContext& g, const Args& a) { return rnn_converter(g, a, kind, true); };
}

// aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih, Tensor?
//   b_hh) -> (Tensor, Tensor); aten::gru_cell / rnn_tanh_cell / rnn_relu_cell(Tensor input,
//   Tensor hx, ...) -> Tensor  ⇒  a one-step ONNX LSTM/GRU/RNN, its Y_h (and Y_c) squeezed
Converter cell(Kind kind) {
  return [kind](GraphContext& g, const Args& a) { return cell_converter(g, a, kind); };
}

// aten::_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first)
//   -> (Tensor data, Tensor batch_sizes)  ⇒  Gather of the flattened time-major input at
//   NonZero(arange(T) < lengths); batch_sizes = the non-zero ReduceSums of that mask
Values pack_padded_sequence(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  if (rank < 2) g.fail("_pack_padded_sequence takes an input of rank >= 2");
  Value x = a.tensor(0);
  if (a.bool_arg(2)) {
    Ints perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    std::swap(perm[0], perm[1]);
    x = transpose(g, x, perm);
  }
  Value lengths = a.tensor_as(1, at::kLong);
  const torch::jit::Node* pack = g.current_node();
  if (kept_padded_pack(g, pack->output(1))) {
    // Note [Packed sequences kept padded]: the padded input, and the exact batch sizes (those of
    // the first max(lengths) steps).
    Value counts =
        reduce(g, "ReduceSum", g.cast(step_mask(g, pack, x, lengths), at::kLong), {1}, false);
    Value longest = reduce(g, "ReduceMax", lengths, {0}, false);
    return Values{x, g.op("Gather", {counts, arange(g, longest)}, {{"axis", 0}})};
  }
  Value t_range = arange(g, dim_size(g, x, 0));
  Value mask = g.op("Less", {unsqueeze(g, t_range, {1}), unsqueeze(g, lengths, {0})});
  Value data = gather_valid(g, x, rank, mask);
  // One batch size per step up to the longest sequence (the input may have more steps; every
  // length is >= 1, so those are the non-zero counts).
  Value counts = reduce(g, "ReduceSum", g.cast(mask, at::kLong), {1}, false);
  Value steps = squeeze(g, g.op("NonZero", {counts}), {0});
  Value batch_sizes = g.op("Gather", {counts, steps}, {{"axis", 0}});
  return Values{data, batch_sizes};
}

// _pad_packed_sequence of a kept-padded sequence (Note [Packed sequences kept padded]): data
// [T, B, rest...] (`rank` is the packed data's rank, one less), batch_sizes the lengths.
Values pad_kept_padded(GraphContext& g, const Args& a, const torch::jit::Node* pack,
                       const Value& pad, int64_t rank) {
  Value data = a.tensor(0);
  Value lengths = pack_lengths(g, pack);
  Value mask = step_mask(g, pack, data, lengths);
  Ints trailing;
  for (int64_t i = 2; i <= rank; ++i) trailing.push_back(i);
  Value out = g.op("Where", {trailing.empty() ? mask : unsqueeze(g, mask, trailing), data, pad});
  const KeptRows rows = *kept_rows(g, g.current_node(), pack);
  if (rows.kind == KeptRows::kLongest) {
    Value longest = reduce(g, "ReduceMax", lengths, {0}, false);
    out = g.op("Gather", {out, arange(g, longest)}, {{"axis", 0}});
  } else if (rows.kind == KeptRows::kFirst) {
    out = slice(g, out, {0}, {0}, {rows.count});
  }
  if (a.bool_arg(2)) {
    Ints perm(rank + 1);
    for (int64_t i = 0; i <= rank; ++i) perm[i] = i;
    std::swap(perm[0], perm[1]);
    out = transpose(g, out, perm);
  }
  return Values{out, lengths};
}

// aten::_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first,
//   Scalar padding_value, int total_length) -> (Tensor, Tensor)  ⇒  Gather of the packed rows
//   at offset[t] + b (offset: MatMul of a triangular mask with batch_sizes), Where(valid, rows,
//   padding_value), max(T, total_length) steps; lengths = ReduceSum of the valid mask
Values pad_packed_sequence(GraphContext& g, const Args& a) {
  const int64_t rank = a.require_rank(0);
  const at::ScalarType type = a.dtype(0);
  Value pad = g.constant_scalar(a.float_arg(3), type);
  if (const torch::jit::Node* pack = kept_padded_pack(g, a.jit(1))) {
    return pad_kept_padded(g, a, pack, pad, rank);
  }
  // total_length: a constant, or computed in the graph (a traced pad_packed_sequence passes
  // batch_sizes.size(0)).
  Value min_steps = a.is_constant(4)
                        ? g.constant_ints({a.int_arg(4)})
                        : g.op("Reshape", {a.tensor_as(4, at::kLong), g.constant_ints({1})});
  Unpacked u = unpack(g, a.tensor(0), a.tensor_as(1, at::kLong), pad, rank, min_steps);
  Value out = u.padded;
  if (a.bool_arg(2)) {
    Ints perm(rank + 1);
    for (int64_t i = 0; i <= rank; ++i) perm[i] = i;
    std::swap(perm[0], perm[1]);
    out = transpose(g, out, perm);
  }
  return Values{out, u.lengths};
}

}  // namespace

void register_rnn(Registry& r) {
  for (auto [op, kind] : {std::pair{"aten::lstm", Kind::kLstm},
                          {"aten::gru", Kind::kGru},
                          {"aten::rnn_tanh", Kind::kRnnTanh},
                          {"aten::rnn_relu", Kind::kRnnRelu}}) {
    const std::string name = op;
    r.add(name + ".input", from(9), rnn_input(kind));
    r.add(name + ".data", from(9), rnn_data(kind));
  }
  r.add("aten::lstm_cell", from(9), cell(Kind::kLstm));
  r.add("aten::gru_cell", from(9), cell(Kind::kGru));
  r.add("aten::rnn_tanh_cell", from(9), cell(Kind::kRnnTanh));
  r.add("aten::rnn_relu_cell", from(9), cell(Kind::kRnnRelu));
  r.add("aten::_pack_padded_sequence", from(9), pack_padded_sequence);
  r.add("aten::_pad_packed_sequence", from(9), pad_packed_sequence);
}

}  // namespace torchonnx::symbolic::ops
