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
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/version.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
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
inline std::set<std::string> converted_ops(frontend::CapturedGraph captured, bool fold) {
  std::vector<c10::IValue> inputs = captured.example_inputs;
  for (const auto& p : captured.parameters) inputs.emplace_back(p.tensor);
  ExportConfig config;
  config.do_constant_folding = fold;
  passes::PrepareGraph(captured.graph, inputs, config);
  std::set<std::string> kinds;
  std::function<void(const torch::jit::Block*)> walk = [&](const torch::jit::Block* block) {
    for (const torch::jit::Node* node : block->nodes()) {
      kinds.insert(node->kind().toQualString());
      for (const auto* sub : node->blocks()) walk(sub);  // loop bodies and branches
    }
  };
  walk(captured.graph->block());
  return kinds;
}

inline std::string join(const std::set<std::string>& kinds) {
  std::string out;
  for (const auto& k : kinds) {
    if (k != "prim::Constant") out += (out.empty() ? "" : ", ") + k;
  }
  return out;
}

// Expects `op` among `kinds` (so the test cannot pass because its op was folded away or recorded
// as another op) and returns `kinds`.
inline std::set<std::string> expect_has_op(const std::string& op, std::set<std::string> kinds) {
  EXPECT_TRUE(kinds.count(op)) << op
                               << " is not in the graph given to the converters: " << join(kinds);
  return kinds;
}

// Expects `op` among the nodes the converters see when exporting `fn` (traced).
inline std::set<std::string> expect_converts_op(const std::string& op, const TracedFunction& fn,
                                                const Inputs& inputs,
                                                const NamedTensors& params = {}, bool fold = true) {
  return expect_has_op(op, converted_ops(frontend::capture_trace(fn, inputs, params), fold));
}

// Copies of the tensors of `inputs`: the reference run may write its inputs (x.add_(1)), and the
// originals go to ONNX Runtime.
inline Inputs cloned(const Inputs& inputs) {
  Inputs out;
  for (const auto& v : inputs)
    out.emplace_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  return out;
}

inline std::vector<at::Tensor> traced_outputs(const TracedFunction& fn, const Inputs& inputs) {
  c10::NoGradGuard no_grad;
  return frontend::flatten_tensors(fn(cloned(inputs)));
}

// expect_converts_op, then export at every opset of [first, last], run in ORT and compare with
// libtorch; `op` is recorded as tested at each opset that matched (see expect_exports_match: when
// folding removes every node converted from `op`, the opset runs again without folding).
inline void expect_op_matches(const std::string& op, const TracedFunction& fn, const Inputs& inputs,
                              int first = kMinOpset, int last = highest_opset(),
                              const NamedTensors& params = {}, Tolerance tol = {}) {
  expect_converts_op(op, fn, inputs, params);
  expect_exports_match(
      [&](const std::string& path, const ExportOptions& o) {
        export_function(fn, inputs, params, path, o);
      },
      inputs, traced_outputs(fn, inputs), first, last, /*fold=*/true, tol, {op});
}

// The same without constant folding (shape/scalar ops stay in the graph).
inline void expect_unfolded_matches(const std::string& op, const TracedFunction& fn,
                                    const Inputs& inputs, int first = kMinOpset,
                                    int last = highest_opset(), Tolerance tol = {}) {
  expect_converts_op(op, fn, inputs, {}, /*fold=*/false);
  expect_exports_match([&](const std::string& path,
                           const ExportOptions& o) { export_function(fn, inputs, {}, path, o); },
                       inputs, traced_outputs(fn, inputs), first, last, /*fold=*/false, tol, {op});
}

struct ScriptOptions {
  int first = kMinOpset;
  int last = highest_opset();
  bool fold = true;
  Tolerance tol = {};
};

// Whether this process's libtorch registers the operator `name` ("aten::rms_norm", or one overload
// of it: "aten::squeeze.dims"). Tests of operators newer than libtorch 1.13 skip where it lacks
// them; the Debian 13 build runs them.
inline bool has_operator(const std::string& name) {
  const size_t dot = name.find('.', name.find("::"));
  const std::string symbol = name.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : name.substr(dot + 1);
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(symbol))) {
    if (dot == std::string::npos || op->schema().overload_name() == overload) return true;
  }
  return false;
}
#define TORCHONNX_SKIP_WITHOUT_OPERATOR(name)                    \
  if (!::torchonnx::testing::has_operator(name))                 \
  GTEST_SKIP() << "libtorch " TORCH_VERSION " has no " << (name) \
               << " (a newer PyTorch's operator; the Debian 13 build tests it)"

// Tests of lowerings that exist only from an opset above the highest the build exports (opset 18 on
// the onnx 1.12 build of Debian 12, whose checker knows opsets up to 17) skip there; the Debian 13
// build runs them.
#define TORCHONNX_SKIP_BELOW_OPSET(opset)                                                     \
  if (::torchonnx::highest_opset() < (opset))                                                 \
  GTEST_SKIP() << "this build exports opsets up to " << ::torchonnx::highest_opset()          \
               << " (its onnx library's checker knows no later one); the lowering starts at " \
               << (opset) << " and the Debian 13 build tests it"

// The ONNX op types of `fn`'s export at `opset` (traced), with their counts: a lowering that uses a
// newer opset's operator is checked to write it ({"Gelu": 1}).
inline std::map<std::string, int> onnx_op_counts(const TracedFunction& fn, const Inputs& inputs,
                                                 int opset, const NamedTensors& params = {}) {
  ExportOptions options;
  options.opset_version = opset;
  const onnx::ModelProto model = parse_model(export_function_to_bytes(fn, inputs, params, options));
  std::map<std::string, int> counts;
  for (const auto& node : model.graph().node()) ++counts[node.op_type()];
  return counts;
}

// A module whose forward is TorchScript `source` ("def forward(self, x): ...").
inline torch::jit::Module script_module(const std::string& source,
                                        const NamedTensors& buffers = {}) {
  torch::jit::Module m("Scripted");
  for (const auto& [name, t] : buffers) m.register_buffer(name, t);
  m.define(source);
  return m;
}

// Expects each of `ops` among the nodes converted when exporting `m`, then the export to match `m`
// at every opset of the options' range.
inline void expect_script_matches(const std::vector<std::string>& ops, const torch::jit::Module& m,
                                  const Inputs& inputs, ScriptOptions so = {}) {
  const auto kinds = converted_ops(frontend::capture_module(m, inputs), so.fold);
  for (const auto& op : ops) expect_has_op(op, kinds);
  expect_exports_match(
      [&](const std::string& path, const ExportOptions& o) { export_model(m, inputs, path, o); },
      inputs, frontend::run_module(m, cloned(inputs)), so.first, so.last, so.fold, so.tol, ops);
}

inline void expect_script_matches(const std::string& op, const torch::jit::Module& m,
                                  const Inputs& inputs, ScriptOptions so = {}) {
  expect_script_matches(std::vector<std::string>{op}, m, inputs, so);
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

// `opsets` and, when they reach 17, 17, 18, 20 and 21 up to the highest opset the build exports:
// a test written for the opsets up to 17 also runs at the newer ones.
inline std::vector<int> with_newest_opsets(std::vector<int> opsets) {
  if (!opsets.empty() && *std::max_element(opsets.begin(), opsets.end()) >= 17) {
    for (int opset : {17, 18, 20, 21}) {
      if (opset <= highest_opset() &&
          std::find(opsets.begin(), opsets.end(), opset) == opsets.end()) {
        opsets.push_back(opset);
      }
    }
  }
  return opsets;
}

// Exports `m` on `example` at each of `opsets` (with_newest_opsets), then runs the ONNX model in
// ORT on the example and on each of `cases` — other inputs, that take other loop counts and other
// branches — and expects libtorch's outputs for each. Checks first that `op` reaches the
// converters.
inline void expect_script_generalizes(const std::string& op, const torch::jit::Module& m,
                                      const Inputs& example, const std::vector<Inputs>& cases,
                                      std::vector<int> opsets = {11, 17}, ScriptOptions so = {}) {
  expect_has_op(op, converted_ops(frontend::capture_module(m, example), so.fold));
  std::vector<Inputs> all{example};
  all.insert(all.end(), cases.begin(), cases.end());
  std::vector<std::vector<at::Tensor>> expected;
  for (const auto& inputs : all) expected.push_back(frontend::run_module(m, cloned(inputs)));
  for (int opset : with_newest_opsets(std::move(opsets))) {
    // With folding first; again without it when folding left no node converted from `op`.
    for (bool fold : {so.fold, false}) {
      std::string dir = temp_dir(fmt::format("script_opset{}{}", opset, fold ? "" : "_unfolded"));
      std::string model = dir + "/model.onnx";
      ExportOptions options;
      options.opset_version = opset;
      options.do_constant_folding = fold;
      try {
        export_model(m, example, model, options);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "export at opset " << opset << " failed: " << e.what();
        break;
      }
      bool all_ok = true;
      std::set<std::string> ran;  // over the input sets: an If's branch counts where one runs it
      const onnx::ModelProto proto = read_model_file(model);
      for (size_t c = 0; c < all.size(); ++c) {
        std::string data = fmt::format("{}/case{}", dir, c);
        std::filesystem::create_directories(data);
        write_test_data(data, all[c], expected[c]);
        OrtResult result = run_in_ort(model, data, so.tol);
        EXPECT_TRUE(result.ok) << "opset " << opset << (fold ? "" : " (no constant folding)")
                               << ", inputs " << c << ": " << result.report;
        all_ok = all_ok && result.ok;
        if (result.ok) {
          const std::set<std::string> r = ops_run(proto, if_branches_taken(model, data));
          ran.insert(r.begin(), r.end());
        }
      }
      if (!all_ok) break;
      const bool has_op = ran_node_from(ran, op);
      std::filesystem::remove_all(dir);
      if (has_op || !fold) {
        record_tested_op(op, opset, ran);
        break;
      }
    }
  }
}

inline void expect_script_generalizes(const std::string& op, const std::string& source,
                                      const Inputs& example, const std::vector<Inputs>& cases,
                                      std::vector<int> opsets = {11, 17}, ScriptOptions so = {}) {
  expect_script_generalizes(op, script_module(source), example, cases, std::move(opsets), so);
}

// ----- test data ------------------------------------------------------------------------------

inline at::Tensor longs(std::vector<int64_t> v) {
  return at::tensor(v, at::kLong);
}
inline at::Tensor floats(std::vector<float> v) {
  return at::tensor(v, at::kFloat);
}
inline at::Tensor doubles(std::vector<double> v) {
  return at::tensor(v, at::kDouble);
}
// at::tensor has no bool overload in libtorch 1.13.
inline at::Tensor bools(std::vector<int64_t> v) {
  return at::tensor(v, at::kLong).to(at::kBool);
}
// A float tensor without ties (sort orders and indices of extremes are unambiguous).
inline at::Tensor distinct(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (at::randperm(n, at::kFloat) * 0.37 - 2.0).reshape(shape);
}
// An int64 tensor without ties.
inline at::Tensor distinct_longs(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (at::randperm(n) * 3 - 10).reshape(shape);
}
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Expects `e`, thrown by the export at `opset`, to have `code` and `what` in its message.
inline void expect_error_at_opset(const ExportError& e, int opset, const std::string& what,
                                  ErrorCode code) {
  // ErrorCode values are the CLI's exit codes (torchonnx/errors.h).
  EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code))
      << "the ErrorCode of the error at opset " << opset << ": " << e.what();
  EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
      << "expected '" << what << "' in the message at opset " << opset << ": " << e.what();
}

// Expects exporting module `m` at `opset` to fail with an ExportError of `code` whose message has
// `what`. kConversion (the default): a converter rejected a node (an argument it cannot export,
// an opset too low for it); kUnsupportedOp: the op has no converter at that opset.
inline void expect_module_export_fails(const torch::jit::Module& m, const Inputs& inputs, int opset,
                                       const std::string& what,
                                       ErrorCode code = ErrorCode::kConversion, bool fold = true) {
  ExportOptions options;
  options.opset_version = opset;
  options.do_constant_folding = fold;
  try {
    export_model_to_bytes(m, inputs, options);
    ADD_FAILURE() << "export at opset " << opset << " succeeded; expected an error with '" << what
                  << "'";
  } catch (const ExportError& e) {
    expect_error_at_opset(e, opset, what, code);
  }
}

// The same for a module whose forward is TorchScript `source`.
inline void expect_script_fails(const std::string& source, const Inputs& inputs, int opset,
                                const std::string& what, ErrorCode code = ErrorCode::kConversion,
                                bool fold = true) {
  expect_module_export_fails(script_module(source), inputs, opset, what, code, fold);
}

// Expects the export of `fn` at `opset` to fail with an ExportError of `code` whose message has
// `what` (codes as for expect_module_export_fails).
inline void expect_export_fails(const TracedFunction& fn, const Inputs& inputs, int opset,
                                const std::string& what, ErrorCode code = ErrorCode::kConversion,
                                const NamedTensors& params = {}) {
  ExportOptions options;
  options.opset_version = opset;
  try {
    export_function_to_bytes(fn, inputs, params, options);
    ADD_FAILURE() << "export at opset " << opset << " succeeded; expected an error with '" << what
                  << "'";
  } catch (const ExportError& e) {
    expect_error_at_opset(e, opset, what, code);
  }
}

}  // namespace torchonnx::testing
