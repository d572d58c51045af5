// Helpers shared by the converter tests (tests/ops/*_test.cpp).
//
// Every converter test first checks that the op it targets reaches the converters (it is in the
// graph after torchonnx's passes, so it was not folded away or recorded as another op), then
// exports at each opset, runs the model in ONNX Runtime and compares with libtorch.
//
// Some ops never appear in a C++ trace: the tracer records conv1d/conv2d/convolution as
// aten::_convolution, and x.size(0) is a plain int64_t in C++ (not aten::size as in Python). Those
// are tested on TorchScript modules compiled from source (expect_script_matches), and the scalar
// and shape ops with constant folding off (folding replaces them by constants).
#pragma once

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "passes/pipeline.h"
#include "support/harness.h"

namespace torchonnx::testing {

using Inputs = std::vector<c10::IValue>;

inline at::Tensor arg(const Inputs& in, size_t i) {
  return in.at(i).toTensor();
}

// Kinds of the nodes that the converters see: the captured graph after PrepareGraph.
inline std::multiset<std::string> converted_ops(frontend::CapturedGraph captured, bool fold) {
  std::vector<c10::IValue> inputs = captured.example_inputs;
  for (const auto& p : captured.parameters) inputs.emplace_back(p.tensor);
  ExportOptions options;
  options.do_constant_folding = fold;
  passes::PrepareGraph(captured.graph, inputs, options);
  std::multiset<std::string> kinds;
  for (const torch::jit::Node* node : captured.graph->nodes()) {
    kinds.insert(node->kind().toQualString());
  }
  return kinds;
}

inline std::string join(const std::multiset<std::string>& kinds) {
  std::string out;
  for (const auto& k : kinds) {
    if (k != "prim::Constant") out += (out.empty() ? "" : ", ") + k;
  }
  return out;
}

// Expects `op` among the nodes the converters see when exporting `fn` (traced).
inline void expect_converts_op(const std::string& op, const TracedFunction& fn,
                               const Inputs& inputs, const NamedTensors& params = {},
                               bool fold = true) {
  auto kinds = converted_ops(frontend::capture_trace(fn, inputs, params), fold);
  EXPECT_TRUE(kinds.count(op)) << op
                               << " is not in the graph given to the converters: " << join(kinds);
}

// expect_converts_op, then expect_matches_at_opsets.
inline void expect_op_matches(const std::string& op, const TracedFunction& fn, const Inputs& inputs,
                              int first = kMinOpset, int last = kMaxOpset,
                              const NamedTensors& params = {}, Tolerance tol = {}) {
  expect_converts_op(op, fn, inputs, params);
  expect_matches_at_opsets(fn, inputs, first, last, params, tol);
}

// Exports with `export_to` at `opset`, runs in ORT on `inputs` and expects `expected`.
inline void expect_exported_matches(
    const std::function<void(const std::string&, const ExportOptions&)>& export_to,
    const Inputs& inputs, const std::vector<at::Tensor>& expected, int opset, bool fold,
    Tolerance tol) {
  std::string dir = temp_dir(fmt::format("opset{}", opset));
  ExportOptions options;
  options.opset_version = opset;
  options.do_constant_folding = fold;
  std::string model = dir + "/model.onnx";
  try {
    export_to(model, options);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "export at opset " << opset << " failed: " << e.what();
    return;
  }
  write_test_data(dir, inputs, expected);
  OrtResult result = run_in_ort(model, dir, tol.rtol, tol.atol);
  EXPECT_TRUE(result.ok) << "opset " << opset << ": " << result.report;
  if (result.ok) std::filesystem::remove_all(dir);
}

// A traced function exported without constant folding (shape/scalar ops stay in the graph).
inline void expect_unfolded_matches(const std::string& op, const TracedFunction& fn,
                                    const Inputs& inputs, int first = kMinOpset,
                                    int last = kMaxOpset, Tolerance tol = {}) {
  expect_converts_op(op, fn, inputs, {}, /*fold=*/false);
  std::vector<at::Tensor> expected;
  {
    c10::NoGradGuard no_grad;
    expected = frontend::flatten_tensors(fn(inputs));
  }
  for (int opset = first; opset <= last; ++opset) {
    expect_exported_matches(
        [&](const std::string& path, const ExportOptions& o) {
          export_function(fn, inputs, {}, path, o);
        },
        inputs, expected, opset, false, tol);
  }
}

struct ScriptOptions {
  int first = kMinOpset;
  int last = kMaxOpset;
  bool fold = true;
  Tolerance tol = {};
};

// A module whose forward is TorchScript `source` ("def forward(self, x): ...").
inline torch::jit::Module script_module(const std::string& source,
                                        const NamedTensors& buffers = {}) {
  torch::jit::Module m("Scripted");
  for (const auto& [name, t] : buffers) m.register_buffer(name, t);
  m.define(source);
  return m;
}

// Expects `op` among the nodes converted when exporting `m`, then the export to match `m` at every
// opset of the options' range.
inline void expect_script_matches(const std::string& op, const torch::jit::Module& m,
                                  const Inputs& inputs, ScriptOptions so = {}) {
  auto kinds = converted_ops(frontend::capture_module(m, inputs), so.fold);
  EXPECT_TRUE(kinds.count(op)) << op
                               << " is not in the graph given to the converters: " << join(kinds);
  std::vector<at::Tensor> expected = frontend::run_module(m, inputs);
  for (int opset = so.first; opset <= so.last; ++opset) {
    expect_exported_matches(
        [&](const std::string& path, const ExportOptions& o) { export_model(m, inputs, path, o); },
        inputs, expected, opset, so.fold, so.tol);
  }
}

// A module whose forward is the TorchScript IR `ir` ("graph(%x : Tensor): ..."), for ops that
// neither the tracer nor the script compiler emit (prim::NumToTensor, aten::true_divide, ...).
inline torch::jit::Module ir_module(const std::string& ir) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, graph.get());
  torch::jit::Module m("IrModule");
  graph->insertInput(0, "self")->setType(m.type());
  auto* fn = m._ivalue()->compilation_unit()->create_function(
      c10::QualifiedName(*m.type()->name(), "forward"), graph);
  m.type()->addMethod(fn);
  return m;
}

inline void expect_script_matches(const std::string& op, const std::string& source,
                                  const Inputs& inputs, ScriptOptions so = {}) {
  expect_script_matches(op, script_module(source), inputs, so);
}

// Expects the export of `fn` at `opset` to fail with an ExportError whose message has `what`.
inline void expect_export_fails(const TracedFunction& fn, const Inputs& inputs, int opset,
                                const std::string& what, const NamedTensors& params = {}) {
  ExportOptions options;
  options.opset_version = opset;
  try {
    export_function_to_bytes(fn, inputs, params, options);
    ADD_FAILURE() << "export at opset " << opset << " succeeded; expected an error with '" << what
                  << "'";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

}  // namespace torchonnx::testing
