// Numeric tests of the recurrent converters: torch::nn::LSTM/GRU/RNN (and their cells) traced with
// their parameters as initializers, at::lstm/gru/rnn_* called directly with the weights as graph
// inputs, and packed sequences (at::_pack_padded_sequence → RNN over packed data →
// at::_pad_packed_sequence).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/rnn.h>

#include "ops/op_test_util.h"

namespace torchonnx::testing {
namespace {

using torch::nn::GRU;
using torch::nn::GRUOptions;
using torch::nn::LSTM;
using torch::nn::LSTMOptions;
using torch::nn::RNN;
using torch::nn::RNNOptions;

c10::IValue tuple(std::vector<c10::IValue> parts) {
  return c10::ivalue::Tuple::create(std::move(parts));
}

NamedTensors params_of(const torch::nn::Module& m) {
  NamedTensors out;
  for (const auto& item : m.named_parameters()) out.emplace_back(item.key(), item.value());
  return out;
}

// The references run with oneDNN off: its LSTM is wrong under no-grad on some CPUs with Debian
// 13's libtorch 2.6 (Note [References without oneDNN], frontend/reference_guard.h).
class Rnn : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
    mkldnn_ = at::globalContext().userEnabledMkldnn();
    at::globalContext().setUserEnabledMkldnn(false);
  }
  void TearDown() override { at::globalContext().setUserEnabledMkldnn(mkldnn_); }

 private:
  bool mkldnn_ = true;
};

struct Config {
  int64_t layers;
  bool bidirectional;
  bool batch_first;
  bool with_state;
  bool bias = true;
};

std::string describe(const Config& c) {
  return fmt::format("layers={} bidirectional={} batch_first={} h0={} bias={}", c.layers,
                     c.bidirectional, c.batch_first, c.with_state, c.bias);
}

const Config kConfigs[] = {
    {1, false, false, false},       {1, false, true, true},       {1, true, false, true},
    {2, false, false, true},        {2, true, true, false},       {2, true, false, true},
    {1, false, false, true, false}, {2, true, true, true, false},
};

constexpr int64_t kSeq = 5, kBatch = 3, kIn = 4, kHidden = 6;

at::Tensor input_for(const Config& c) {
  return c.batch_first ? at::randn({kBatch, kSeq, kIn}) : at::randn({kSeq, kBatch, kIn});
}

at::Tensor state_for(const Config& c) {
  return at::randn({c.layers * (c.bidirectional ? 2 : 1), kBatch, kHidden});
}

TEST_F(Rnn, LstmModule) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(describe(c));
    LSTM m(LSTMOptions(kIn, kHidden)
               .num_layers(c.layers)
               .bidirectional(c.bidirectional)
               .batch_first(c.batch_first)
               .bias(c.bias)
               .dropout(c.layers > 1 ? 0.3 : 0.0));  // dropout between layers: off in eval
    m->eval();
    Inputs inputs{input_for(c)};
    if (c.with_state) {
      inputs.emplace_back(state_for(c));
      inputs.emplace_back(state_for(c));
    }
    expect_op_matches(
        "aten::lstm",
        [m, c](const Inputs& in) {
          auto [y, hc] = c.with_state
                             ? m.ptr()->forward(arg(in, 0), std::make_tuple(arg(in, 1), arg(in, 2)))
                             : m.ptr()->forward(arg(in, 0));
          return tuple({y, std::get<0>(hc), std::get<1>(hc)});
        },
        inputs, kMinOpset, highest_opset(), params_of(*m));
  }
}

TEST_F(Rnn, GruModule) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(describe(c));
    GRU m(GRUOptions(kIn, kHidden)
              .num_layers(c.layers)
              .bidirectional(c.bidirectional)
              .batch_first(c.batch_first)
              .bias(c.bias));
    m->eval();
    Inputs inputs{input_for(c)};
    if (c.with_state) inputs.emplace_back(state_for(c));
    expect_op_matches(
        "aten::gru",
        [m, c](const Inputs& in) {
          auto [y, h] = c.with_state ? m.ptr()->forward(arg(in, 0), arg(in, 1))
                                     : m.ptr()->forward(arg(in, 0));
          return tuple({y, h});
        },
        inputs, kMinOpset, highest_opset(), params_of(*m));
  }
}

void check_rnn_module(const std::string& op, torch::nn::RNNOptions::nonlinearity_t act) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(describe(c));
    RNN m(RNNOptions(kIn, kHidden)
              .num_layers(c.layers)
              .bidirectional(c.bidirectional)
              .batch_first(c.batch_first)
              .bias(c.bias)
              .nonlinearity(act));
    m->eval();
    Inputs inputs{input_for(c)};
    if (c.with_state) inputs.emplace_back(state_for(c));
    expect_op_matches(
        op,
        [m, c](const Inputs& in) {
          auto [y, h] = c.with_state ? m.ptr()->forward(arg(in, 0), arg(in, 1))
                                     : m.ptr()->forward(arg(in, 0));
          return tuple({y, h});
        },
        inputs, kMinOpset, highest_opset(), params_of(*m));
  }
}

TEST_F(Rnn, RnnTanhModule) {
  check_rnn_module("aten::rnn_tanh", torch::kTanh);
}

TEST_F(Rnn, RnnReluModule) {
  check_rnn_module("aten::rnn_relu", torch::kReLU);
}

// Weights as graph inputs (not initializers): the gate reordering stays in the graph.
TEST_F(Rnn, WeightsAsInputs) {
  const int64_t H = kHidden;
  Inputs lstm_in{at::randn({kSeq, kBatch, kIn}), at::randn({2, kBatch, H}),
                 at::randn({2, kBatch, H})};
  for (int d = 0; d < 2; ++d) {
    lstm_in.emplace_back(at::randn({4 * H, kIn}));
    lstm_in.emplace_back(at::randn({4 * H, H}));
    lstm_in.emplace_back(at::randn({4 * H}));
    lstm_in.emplace_back(at::randn({4 * H}));
  }
  expect_op_matches(
      "aten::lstm",
      [](const Inputs& in) {
        std::vector<at::Tensor> params;
        for (size_t i = 3; i < in.size(); ++i) params.push_back(arg(in, i));
        auto [y, h, c] = at::lstm(arg(in, 0), {arg(in, 1), arg(in, 2)}, params, true, 1, 0.0, false,
                                  /*bidirectional=*/true, false);
        return tuple({y, h, c});
      },
      lstm_in);

  Inputs gru_in{at::randn({kBatch, kSeq, kIn}), at::randn({1, kBatch, H}), at::randn({3 * H, kIn}),
                at::randn({3 * H, H})};
  expect_op_matches(
      "aten::gru",
      [](const Inputs& in) {
        auto [y, h] = at::gru(arg(in, 0), arg(in, 1), {arg(in, 2), arg(in, 3)}, false, 1, 0.0,
                              false, false, /*batch_first=*/true);
        return tuple({y, h});
      },
      gru_in);

  Inputs rnn_in{at::randn({kSeq, kBatch, kIn}),
                at::randn({2, kBatch, H}),
                at::randn({H, kIn}),
                at::randn({H, H}),
                at::randn({H}),
                at::randn({H}),
                at::randn({H, H}),
                at::randn({H, H}),
                at::randn({H}),
                at::randn({H})};
  expect_op_matches(
      "aten::rnn_relu",
      [](const Inputs& in) {
        std::vector<at::Tensor> params;
        for (size_t i = 2; i < in.size(); ++i) params.push_back(arg(in, i));
        auto [y, h] = at::rnn_relu(arg(in, 0), arg(in, 1), params, true, /*num_layers=*/2, 0.0,
                                   false, false, false);
        return tuple({y, h});
      },
      rnn_in);
}

// The tracer records the cells' decomposition (linear, chunk, sigmoid, ...), not aten::*_cell:
// they are tested from TorchScript, with the weights as inputs or as module buffers
// (initializers).
TEST_F(Rnn, DoubleModules) {
  LSTM lstm(LSTMOptions(kIn, kHidden).bidirectional(true));
  lstm->to(at::kDouble);
  lstm->eval();
  expect_op_matches(
      "aten::lstm",
      [lstm](const Inputs& in) {
        auto [y, hc] = lstm.ptr()->forward(arg(in, 0));
        return tuple({y, std::get<0>(hc), std::get<1>(hc)});
      },
      {at::randn({kSeq, kBatch, kIn}, at::kDouble)}, kMinOpset, highest_opset(), params_of(*lstm));
  GRU gru(GRUOptions(kIn, kHidden));
  gru->to(at::kDouble);
  gru->eval();
  expect_op_matches(
      "aten::gru",
      [gru](const Inputs& in) {
        auto [y, h] = gru.ptr()->forward(arg(in, 0));
        return tuple({y, h});
      },
      {at::randn({kSeq, kBatch, kIn}, at::kDouble)}, kMinOpset, highest_opset(), params_of(*gru));
  RNN rnn(RNNOptions(kIn, kHidden));
  rnn->to(at::kDouble);
  rnn->eval();
  expect_op_matches(
      "aten::rnn_tanh",
      [rnn](const Inputs& in) {
        auto [y, h] = rnn.ptr()->forward(arg(in, 0));
        return tuple({y, h});
      },
      {at::randn({kSeq, kBatch, kIn}, at::kDouble)}, kMinOpset, highest_opset(), params_of(*rnn));
}

TEST_F(Rnn, LstmCell) {
  const int64_t H = kHidden;
  expect_script_matches(
      "aten::lstm_cell",
      "def forward(self, x, h, c, w_ih, w_hh, b_ih, b_hh):\n"
      "  hy, cy = torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)\n"
      "  return hy, cy\n",
      {at::randn({kBatch, kIn}), at::randn({kBatch, H}), at::randn({kBatch, H}),
       at::randn({4 * H, kIn}), at::randn({4 * H, H}), at::randn({4 * H}), at::randn({4 * H})});
  auto m = script_module(
      "def forward(self, x, h, c):\n"
      "  hy, cy = torch.lstm_cell(x, [h, c], self.w_ih, self.w_hh)\n"
      "  return hy, cy\n",
      {{"w_ih", at::randn({4 * H, kIn})}, {"w_hh", at::randn({4 * H, H})}});
  expect_script_matches("aten::lstm_cell", m,
                        {at::randn({kBatch, kIn}), at::randn({kBatch, H}), at::randn({kBatch, H})});
}

TEST_F(Rnn, GruCellAndRnnCells) {
  const int64_t H = kHidden;
  const std::pair<std::string, int64_t> cells[] = {
      {"gru_cell", 3}, {"rnn_tanh_cell", 1}, {"rnn_relu_cell", 1}};
  for (const auto& [cell, gates] : cells) {
    SCOPED_TRACE(cell);
    expect_script_matches(
        "aten::" + cell,
        "def forward(self, x, h, w_ih, w_hh, b_ih, b_hh):\n"
        "  return torch." +
            cell + "(x, h, w_ih, w_hh, b_ih, b_hh)\n",
        {at::randn({kBatch, kIn}), at::randn({kBatch, H}), at::randn({gates * H, kIn}),
         at::randn({gates * H, H}), at::randn({gates * H}), at::randn({gates * H})});
    auto m = script_module(
        "def forward(self, x, h):\n"
        "  return torch." +
            cell + "(x, h, self.w_ih, self.w_hh)\n",
        {{"w_ih", at::randn({gates * H, kIn})}, {"w_hh", at::randn({gates * H, H})}});
    expect_script_matches("aten::" + cell, m, {at::randn({kBatch, kIn}), at::randn({kBatch, H})});
  }
}

// pack → LSTM/GRU over packed data → pad, with lengths as a graph input.
TEST_F(Rnn, PackedSequences) {
  LSTM lstm(LSTMOptions(kIn, kHidden).num_layers(2).bidirectional(true));
  lstm->eval();
  auto lstm_fn = [lstm](const Inputs& in) {
    auto [data, batch_sizes] = at::_pack_padded_sequence(arg(in, 0), arg(in, 1), true);
    std::vector<at::Tensor> params;
    for (const auto& p : lstm->parameters()) params.push_back(p);
    at::Tensor h0 = at::zeros({4, kBatch, kHidden});
    auto [out, h, c] = at::lstm(data, batch_sizes, {h0, h0}, params, true, 2, 0.0, false, true);
    auto [padded, lengths] = at::_pad_packed_sequence(out, batch_sizes, true, 0.0, kSeq + 1);
    return tuple({padded, lengths, h, c});
  };
  Inputs inputs{at::randn({kBatch, kSeq, kIn}), at::tensor({5, 3, 2}, at::kLong)};
  expect_converts_op("aten::_pack_padded_sequence", lstm_fn, inputs, params_of(*lstm));
  expect_converts_op("aten::_pad_packed_sequence", lstm_fn, inputs, params_of(*lstm));
  expect_op_matches("aten::lstm", lstm_fn, inputs, kMinOpset, highest_opset(), params_of(*lstm));

  // The longest sequence shorter than the input, padding value -1, time-major.
  GRU gru(GRUOptions(kIn, kHidden));
  gru->eval();
  expect_op_matches(
      "aten::gru",
      [gru](const Inputs& in) {
        auto [data, batch_sizes] = at::_pack_padded_sequence(arg(in, 0), arg(in, 1), false);
        std::vector<at::Tensor> params;
        for (const auto& p : gru->parameters()) params.push_back(p);
        auto [out, h] = at::gru(data, batch_sizes, arg(in, 2), params, true, 1, 0.0, false, false);
        auto [padded, lengths] = at::_pad_packed_sequence(out, batch_sizes, false, -1.0, 4);
        return tuple({data, batch_sizes, padded, lengths, h});
      },
      {at::randn({kSeq, kBatch, kIn}), at::tensor({4, 4, 1}, at::kLong),
       at::randn({1, kBatch, kHidden})},
      kMinOpset, highest_opset(), params_of(*gru));

  // Elman RNNs over packed data (rnn_tanh.data, rnn_relu.data), two layers, batch first.
  for (const bool tanh : {true, false}) {
    SCOPED_TRACE(tanh ? "tanh" : "relu");
    auto options = torch::nn::RNNOptions(kIn, kHidden).num_layers(2);
    if (tanh) {
      options.nonlinearity(torch::kTanh);
    } else {
      options.nonlinearity(torch::kReLU);
    }
    torch::nn::RNN rnn(options);
    rnn->eval();
    expect_op_matches(
        tanh ? "aten::rnn_tanh" : "aten::rnn_relu",
        [rnn, tanh](const Inputs& in) {
          auto [data, batch_sizes] = at::_pack_padded_sequence(arg(in, 0), arg(in, 1), true);
          std::vector<at::Tensor> params;
          for (const auto& p : rnn->parameters()) params.push_back(p);
          const at::Tensor h0 = at::zeros({2, kBatch, kHidden});
          auto [out, h] =
              tanh ? at::rnn_tanh(data, batch_sizes, h0, params, true, 2, 0.0, false, false)
                   : at::rnn_relu(data, batch_sizes, h0, params, true, 2, 0.0, false, false);
          auto [padded, lengths] = at::_pad_packed_sequence(out, batch_sizes, true, 0.0, kSeq);
          return tuple({padded, lengths, h});
        },
        {at::randn({kBatch, kSeq, kIn}), at::tensor({5, 2, 1}, at::kLong)}, kMinOpset,
        highest_opset(), params_of(*rnn));
  }
}

// Note [Packed sequences kept padded]: a sequence whose data only RNNs and pad_packed_sequence
// read stays padded (no NonZero), at every opset and at 7 and 8 through the version converter,
// with exact batch_sizes; its data read otherwise (returned) it takes the exact packed form. Two
// stacked RNNs over one sequence, a total_length shorter than the input (the longest length below
// it), batch first.
TEST_F(Rnn, PackedSequenceKeptPadded) {
  RNN first(RNNOptions(kIn, kHidden).num_layers(2).bidirectional(true));
  GRU second(GRUOptions(2 * kHidden, kHidden));
  first->eval();
  second->eval();
  auto fn = [first, second](bool expose_data) {
    return [=](const Inputs& in) {
      auto [data, batch_sizes] = at::_pack_padded_sequence(arg(in, 0), arg(in, 1), true);
      std::vector<at::Tensor> p1, p2;
      for (const auto& p : first->parameters()) p1.push_back(p);
      for (const auto& p : second->parameters()) p2.push_back(p);
      auto [out1, h1] = at::rnn_tanh(data, batch_sizes, arg(in, 2), p1, true, 2, 0.0, false, true);
      const at::Tensor h0 = at::zeros({1, kBatch, kHidden});
      auto [out2, h2] = at::gru(out1, batch_sizes, h0, p2, true, 1, 0.0, false, false);
      auto [padded, lengths] = at::_pad_packed_sequence(out2, batch_sizes, true, -2.0, kSeq - 1);
      if (expose_data) return tuple({padded, lengths, h1, h2, out1});
      return tuple({padded, lengths, h1, h2, batch_sizes});
    };
  };
  NamedTensors params = params_of(*first);
  for (auto& p : params_of(*second)) params.emplace_back("second." + p.first, p.second);
  const Inputs inputs{at::randn({kBatch, kSeq, kIn}), at::tensor({4, 4, 2}, at::kLong),
                      at::randn({4, kBatch, kHidden})};
  expect_op_matches("aten::_pad_packed_sequence", fn(false), inputs, 7, highest_opset(), params);
  // (At opsets 9 and 10 arange is a NonZero of ones, and 7 and 8 have it as a Loop.)
  for (int opset : {7, 11}) {
    SCOPED_TRACE(opset);
    EXPECT_EQ(onnx_op_counts(fn(false), inputs, opset, params).count("NonZero"), 0u);
  }
  // Without a total_length (pad_packed_sequence passes batch_sizes.size(0)): max(lengths) steps,
  // the longest length below the input's; an arange of a computed length, a Loop below opset 9.
  auto scripted =
      script_module(R"(
def forward(self, x, lengths, h0):
    data, batch_sizes = torch._pack_padded_sequence(x, lengths, False)
    out, h = torch.rnn_tanh(data, batch_sizes, h0, [self.w_ih, self.w_hh], False, 1, 0.0, False,
                            False)
    padded, n = torch._pad_packed_sequence(out, batch_sizes, False, 0.5, batch_sizes.size(0))
    return padded, n, h
)",
                    {{"w_ih", at::randn({kHidden, kIn})}, {"w_hh", at::randn({kHidden, kHidden})}});
  expect_script_matches("aten::_pad_packed_sequence", scripted,
                        {at::randn({kSeq, kBatch, kIn}), at::tensor({3, 2, 2}, at::kLong),
                         at::randn({1, kBatch, kHidden})},
                        {7});
  // total_length=x.size(1) of a batch-first x: all of its steps.
  auto all_steps = script_module(
      R"(
def forward(self, x, lengths, h0):
    data, batch_sizes = torch._pack_padded_sequence(x, lengths, True)
    out, h, c = torch.lstm(data, batch_sizes, [h0, h0], [self.w_ih, self.w_hh], False, 1, 0.0,
                           False, False)
    padded, n = torch._pad_packed_sequence(out, batch_sizes, True, 0.0, x.size(1))
    return padded, h, c
)",
      {{"w_ih", at::randn({4 * kHidden, kIn})}, {"w_hh", at::randn({4 * kHidden, kHidden})}});
  const Inputs all_steps_inputs{at::randn({kBatch, kSeq, kIn}), at::tensor({3, 2, 2}, at::kLong),
                                at::randn({1, kBatch, kHidden})};
  expect_script_matches("aten::_pad_packed_sequence", all_steps, all_steps_inputs, {7});
  // The exact packed form where the packed data is read.
  expect_op_matches("aten::_pad_packed_sequence", fn(true), inputs, kMinOpset, highest_opset(),
                    params);
  EXPECT_GT(onnx_op_counts(fn(true), inputs, 11, params).count("NonZero"), 0u);
}

// Issue 24: a loaded model packs with sizes from the data (no trace types): the packed data's
// rank, the RNN's outputs over it and pad's total_length (batch_sizes.size(0), computed in the
// graph) come from type propagation's rules. Other lengths take other step counts.
TEST_F(Rnn, PackedSequenceWithComputedTotalLength) {
  const std::string src = R"(
def forward(self, x, lengths):
    data, batch_sizes = torch._pack_padded_sequence(x, lengths, True)
    h0 = torch.zeros(1, x.size(0), 5)
    out, h, c = torch.lstm(data, batch_sizes, [h0, h0], [self.w_ih, self.w_hh, self.b_ih,
                           self.b_hh], True, 1, 0.0, False, False)
    padded, n = torch._pad_packed_sequence(out, batch_sizes, True, 0.0, batch_sizes.size(0))
    return padded, h
)";
  auto m = script_module(src, {{"w_ih", at::randn({20, kIn})},
                               {"w_hh", at::randn({20, 5})},
                               {"b_ih", at::randn({20})},
                               {"b_hh", at::randn({20})}});
  const at::Tensor x = at::randn({3, 5, kIn});
  expect_script_generalizes(
      "aten::_pad_packed_sequence", m, {x, at::tensor({5, 3, 2}, at::kLong)},
      {{x, at::tensor({4, 4, 1}, at::kLong)}, {x, at::tensor({2, 1, 1}, at::kLong)}}, {11, 17});
}

// Packing and unpacking alone: int64 [T, B] data (packed rows are scalars), float
// [B, T, 2, 3] batch-first data.
TEST_F(Rnn, PackPadRoundTrip) {
  expect_op_matches(
      "aten::_pack_padded_sequence",
      [](const Inputs& in) {
        auto [data, batch_sizes] = at::_pack_padded_sequence(arg(in, 0), arg(in, 1), false);
        auto [padded, lengths] = at::_pad_packed_sequence(data, batch_sizes, false, 7, 6);
        return tuple({data, batch_sizes, padded, lengths});
      },
      {at::randint(-9, 9, {6, 4}, at::kLong), at::tensor({6, 5, 5, 2}, at::kLong)});
  expect_op_matches(
      "aten::_pad_packed_sequence",
      [](const Inputs& in) {
        auto [data, batch_sizes] = at::_pack_padded_sequence(arg(in, 0), arg(in, 1), true);
        auto [padded, lengths] = at::_pad_packed_sequence(data * 2, batch_sizes, true, -0.5, 3);
        return tuple({data, batch_sizes, padded, lengths});
      },
      {at::randn({3, 4, 2, 3}), at::tensor({3, 2, 1}, at::kLong)});
}

TEST_F(Rnn, Errors) {
  LSTM proj(LSTMOptions(kIn, kHidden).proj_size(2));
  proj->eval();
  expect_export_fails(
      [proj](const Inputs& in) { return std::get<0>(proj.ptr()->forward(arg(in, 0))); },
      {at::randn({kSeq, kBatch, kIn})}, 13, "proj_size", ErrorCode::kConversion, params_of(*proj));
  // Dropout between layers in training mode.
  expect_export_fails(
      [](const Inputs& in) {
        std::vector<at::Tensor> params;
        for (size_t i = 2; i < in.size(); ++i) params.push_back(arg(in, i));
        return std::get<0>(
            at::rnn_tanh(arg(in, 0), arg(in, 1), params, false, 2, 0.5, true, false, false));
      },
      {at::randn({kSeq, kBatch, kIn}), at::randn({2, kBatch, kHidden}), at::randn({kHidden, kIn}),
       at::randn({kHidden, kHidden}), at::randn({kHidden, kHidden}), at::randn({kHidden, kHidden})},
      13, "eval mode");
}

}  // namespace
}  // namespace torchonnx::testing
