// Operator coverage, as numbers anyone can read:
//  - `torchonnx ops` equals tests/golden/ops.txt (every addition is visible in review);
//  - every op of the symbolic list of torch.onnx of the build's PyTorch (1.13 on Debian 12, 2.6
//    on Debian 13: tests/reference/torch-<version>-symbolics.tsv) but the few listed below with
//    their reasons has a converter at every opset from the first one torch.onnx supports to 17;
//  - every converter was numerically tested (exported, run in ORT, compared with libtorch) by the
//    converter tests at the first and last opset of its range and at 11, 13, 17, 18, 20 and 21
//    within it, up to the highest opset the build exports (17 with onnx 1.12). A registration of
//    one overload ("aten::div.Tensor_mode") counts as tested by nodes of that overload only, and
//    a node counts when ONNX Runtime ran it to compute an output (harness.h, ops_run: not a
//    Constant or Identity, not a node no output depends on, not in an If branch not taken).
//    The ops_<family> tests record what they tested in TORCHONNX_OP_COVERAGE_DIR (ctest runs them
//    first: the op_coverage fixture).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/version.h>

#include "common/compat.h"
#include "support/cpu.h"
#include "support/expect_error.h"
#include "support/harness.h"
#include "torchonnx/export.h"
#include "torchonnx/operators.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;

// Ops of the tsv without a converter, with the reason.
const std::map<std::string, std::string>& out_of_scope() {
  static const std::map<std::string, std::string> ops = [] {
    std::map<std::string, std::string> m;
    m["onnx::Placeholder"] =
        "not a TorchScript operator: torch.onnx's own stand-in for ops it converts late inside its "
        "passes (torchonnx converts If/Loop blocks directly, ops/control.cpp)";
    m["prim::type"] =
        "its result is a str (`x.device.type`), which type propagation folds to 'cpu' when "
        "constant folding is on (Prim.DeviceTypeFoldsToCpu); ONNX values carry no TorchScript str";
    const std::string no_sampler =
        "no ONNX operator samples Gamma/Dirichlet; torch.onnx 1.13 exports them only as ATen ops "
        "(operator_export_type ONNX_ATEN_FALLBACK: issue 6)";
    for (const char* op : {"aten::_standard_gamma", "aten::_sample_dirichlet"}) m[op] = no_sampler;
    const std::string no_op =
        "no TorchScript operator of this name in libtorch 1.13 or 2.6 (torch.onnx registered a "
        "helper or a Python-level decomposition under this name)";
    for (const char* op :
         {"aten::_cast_BFloat16", "aten::_cast_Bool", "aten::_cast_ComplexDouble",
          "aten::_cast_ComplexFloat", "aten::_floor_divide", "aten::get_pool_ceil_padding",
          "aten::scan", "aten::tanhshrink", "prim::ConstantSplit", "prim::convert_element_type"}) {
      m[op] = no_op;
    }
    return m;
  }();
  return ops;
}

// torch.onnx names `aten::__and__`'s symbolic `aten::__and_`; in-place forms (`dropout_`) are
// converted by the out-of-place converter. An overload stays: "aten::add_.Tensor" →
// "aten::add.Tensor".
std::string node_kind(std::string op) {
  const auto dot = op.find('.', op.find("::"));
  if (dot != std::string::npos) return node_kind(op.substr(0, dot)) + op.substr(dot);
  auto colon = op.find("::");
  std::string name = op.substr(colon + 2);
  if (name.rfind("__", 0) == 0 && name.size() > 3 && name.back() == '_' &&
      name[name.size() - 2] != '_') {
    return op + "_";
  }
  if (name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_') op.pop_back();
  return op;
}

struct TsvOp {
  std::string name;
  int first_opset;
};

std::vector<TsvOp> read_tsv() {
  std::ifstream in(TORCHONNX_SYMBOLICS_TSV);
  EXPECT_TRUE(in) << "cannot read " << TORCHONNX_SYMBOLICS_TSV;
  std::vector<TsvOp> ops;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, opsets;
    std::getline(fields, name, '\t');
    std::getline(fields, opsets, '\t');
    ops.push_back({name, std::stoi(opsets.substr(0, opsets.find(',')))});
  }
  return ops;
}

// The converters of each op: by its bare name and of each of its overloads ("aten::lstm" holds
// aten::lstm.input's and aten::lstm.data's), for torch.onnx's symbolics, which are by op.
std::map<std::string, std::vector<OperatorSupport>> registry() {
  std::map<std::string, std::vector<OperatorSupport>> by_op;
  for (const auto& op : supported_operators()) {
    by_op[op.name.substr(0, op.name.find('.', op.name.find("::")))].push_back(op);
  }
  return by_op;
}

bool serves(const std::vector<OperatorSupport>& ranges, int opset) {
  for (const auto& r : ranges) {
    if (r.since <= opset && opset <= r.until) return true;
  }
  return false;
}

TEST(OperatorCoverage, OpsCommandFiltersByOpset) {
  std::set<std::string> at17;
  for (int opset : {9, 13, 17, 18, 20, 21}) {
    if (opset > highest_opset()) continue;
    CliResult r = run_cli("ops --opset " + std::to_string(opset), false);
    ASSERT_EQ(r.exit_code, 0);
    std::istringstream lines(r.output);
    std::string line;
    size_t count = 0;
    std::set<std::string> names;
    while (std::getline(lines, line)) {
      ++count;
      auto tab = line.find('\t'), dash = line.find('-', tab);
      ASSERT_NE(dash, std::string::npos) << line;
      int since = std::stoi(line.substr(tab + 1, dash - tab - 1));
      int until = std::stoi(line.substr(dash + 1));
      EXPECT_TRUE(since <= opset && opset <= until) << line << " listed at opset " << opset;
      names.insert(line.substr(0, tab));
    }
    EXPECT_EQ(count, supported_operators(opset).size());
    // No op is lost at a later opset: every op listed at 17 is listed at 18 to 21.
    if (opset == 17) at17 = names;
    for (const auto& name : at17) {
      EXPECT_TRUE(names.count(name)) << name << " is listed at opset 17 but not at " << opset;
    }
  }
  const std::string above = std::to_string(highest_opset() + 1);
  for (const std::string& opset : {above, std::string("6")}) {
    EXPECT_TRUE(CliFails(run_cli("ops --opset " + opset), ErrorCode::kInvalidArgument,
                         {"opset " + opset + " is out of range",
                          "torchonnx exports opsets 7 to " + std::to_string(highest_opset())}));
  }
  // Opsets 7 and 8 are converted at 9 (then taken down by ONNX's version converter).
  EXPECT_EQ(run_cli("ops --opset 8").output, run_cli("ops --opset 9").output);
}

// On a build whose onnx library knows opsets only up to 17 (onnx 1.12, Debian 12), opsets 18 to 21
// are an invalid argument whose message names the build that exports them.
TEST(OperatorCoverage, OpsetsAboveTheOnnxLibrarysNameTheRemedy) {
  if (highest_opset() == kMaxOpset) {
    GTEST_SKIP() << "this build exports every opset up to " << kMaxOpset;
  }
  EXPECT_TRUE(CliFails(run_cli("ops --opset " + std::to_string(kMaxOpset)),
                       ErrorCode::kInvalidArgument,
                       {"need a build of torchonnx with a newer onnx library", "Debian 13",
                        "or export at opset " + std::to_string(highest_opset())}));
  // Every export function checks its options first (the CLI's export too).
  ExportOptions options;
  options.opset_version = highest_opset() + 1;
  EXPECT_TRUE(ThrowsExportError([&] { check_export_options(options); }, ErrorCode::kInvalidArgument,
                                {fmt::format("opset {} is out of range", highest_opset() + 1),
                                 "need a build of torchonnx with a newer onnx library"}));
}

TEST(OperatorCoverage, OpsCommandMatchesGoldenList) {
  CliResult r = run_cli("ops", false);
  ASSERT_EQ(r.exit_code, 0);
  const std::string& listed = r.output;
  const char* cli = std::getenv("TORCHONNX_CLI");

  const std::string golden_path = std::string(TORCHONNX_SOURCE_DIR) + "/tests/golden/ops.txt";
  std::ifstream golden_file(golden_path);
  std::stringstream golden;
  golden << golden_file.rdbuf();
  EXPECT_EQ(listed, golden.str())
      << "`torchonnx ops` changed; review the difference and update the golden list with\n  " << cli
      << " ops > " << golden_path;
}

TEST(OperatorCoverage, EveryTorchSymbolicInScopeHasAConverter) {
  auto registered = registry();
  std::vector<std::string> missing;
  size_t in_scope = 0;
  std::map<std::string, std::string> excluded;
  for (const auto& op : read_tsv()) {
    std::string kind = node_kind(op.name);
    if (auto why = out_of_scope().find(kind); why != out_of_scope().end()) {
      excluded[kind] = why->second;
      continue;
    }
    if (op.first_opset > kMaxOpset) {
      excluded[kind] = "torch.onnx " TORCHONNX_SYMBOLICS_TORCH " converts it from opset " +
                       std::to_string(op.first_opset) + " only, above the highest opset " +
                       std::to_string(kMaxOpset) + " torchonnx exports";
      continue;
    }
    ++in_scope;
    auto it = registered.find(kind);
    std::string gaps;
    for (int opset = std::max(op.first_opset, kMinOpset); opset <= kMaxOpset; ++opset) {
      if (it == registered.end() || !serves(it->second, opset)) {
        gaps += (gaps.empty() ? "" : ",") + std::to_string(opset);
      }
    }
    if (!gaps.empty()) missing.push_back(kind + " (opsets " + gaps + ")");
  }
  std::string list;
  for (const auto& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << missing.size() << " of the " << in_scope
                               << " torch " TORCHONNX_SYMBOLICS_TORCH
                                  " symbolics in scope lack a converter:"
                               << list;
  std::printf("torch " TORCHONNX_SYMBOLICS_TORCH " symbolics in scope: %zu, converted: %zu\n",
              in_scope, in_scope - missing.size());
  std::printf("excluded: %zu\n", excluded.size());
  for (const auto& [op, why] : excluded) std::printf("  %s: %s\n", op.c_str(), why.c_str());
}

// What the family tests recorded (harness.h, record_tested_op): for each op, the opsets at which
// a test of it matched in ONNX Runtime with a node converted from it in the model (`with_node`),
// and those at which it matched without one (`without_node`: its converter wrote no node, or
// only nodes that folding removed even with folding off).
struct Recorded {
  std::map<std::string, std::set<int>> with_node, without_node;
};

Recorded recorded_coverage() {
  Recorded r;
  std::istringstream families(TORCHONNX_OP_FAMILIES);
  std::string family;
  while (std::getline(families, family, ',')) {
    const fs::path file = fs::path(TORCHONNX_OP_COVERAGE_DIR) / (family + ".tsv");
    std::ifstream in(file);
    EXPECT_TRUE(in) << "no " << file << ": ops_" << family << " did not run before this test";
    std::string op, kind;
    int opset;
    while (in >> op >> opset >> kind) {
      (kind == "node" ? r.with_node : r.without_node)[node_kind(op)].insert(opset);
    }
  }
  return r;
}

// What counts as run (harness.h, ops_run): of an If, the branches the inputs take, at any depth
// (an If inside a branch, an If in a Loop body); not a node no output depends on; not a Constant.
TEST(OperatorCoverage, CountsOnlyTheNodesOrtRunsForTheOutputs) {
  torch::jit::Module m("branches");
  m.define(R"(
def forward(self, x):
    unused = torch.sin(x)
    if bool(x.sum() > 0):
        y = torch.abs(x)
        if bool(x.max() > 100.0):
            y = torch.exp(y)
        else:
            y = torch.cos(y)
    else:
        y = torch.neg(x)
    for i in range(x.size(0)):
        if bool(x[i] > 0.5):
            y = y * 2.0
        else:
            y = y - 1.0
    return y + torch.ones(3)
)");
  ExportOptions options;
  options.opset_version = 13;
  options.do_constant_folding = false;
  options.input_names = {"x"};
  options.dynamic_axes = {{"x", {{0, "n"}}}};
  for (const bool positive : {true, false}) {
    SCOPED_TRACE(positive ? "then" : "else");
    const std::vector<c10::IValue> inputs = {positive ? at::rand({3}) + 1 : -at::rand({3}) - 1};
    const std::string dir = temp_dir("counts_run");
    export_model(m, inputs, dir + "/model.onnx", options);
    write_test_data(dir, inputs, {m.forward(inputs).toTensor()});
    const onnx::ModelProto proto = read_model_file(dir + "/model.onnx");
    const std::set<std::string> ran = ops_run(proto, if_branches_taken(dir + "/model.onnx", dir));
    EXPECT_EQ(ran_node_from(ran, "aten::abs"), positive);
    EXPECT_EQ(ran_node_from(ran, "aten::neg"), !positive);
    // The If inside the then branch: its else branch where the then branch runs, never its then.
    EXPECT_FALSE(ran_node_from(ran, "aten::exp"));
    EXPECT_EQ(ran_node_from(ran, "aten::cos"), positive);
    // The If in the Loop body: every iteration takes the then branch, or every one the else.
    EXPECT_EQ(ran_node_from(ran, "aten::mul"), positive);
    EXPECT_EQ(ran_node_from(ran, "aten::sub"), !positive);
    EXPECT_TRUE(ran_node_from(ran, "aten::add"));
    EXPECT_TRUE(ran_node_from(ran, "prim::If"));
    EXPECT_TRUE(ran_node_from(ran, "prim::Loop"));
    EXPECT_FALSE(ran_node_from(ran, "aten::sin")) << "no output depends on it";
    // Without the branches known, no branch counts.
    for (const char* op : {"aten::abs", "aten::neg", "aten::cos", "aten::mul", "aten::sub"}) {
      EXPECT_FALSE(ran_node_from(ops_run(proto), op)) << op;
    }
  }
}

TEST(OperatorCoverage, EveryConverterIsNumericallyTestedAcrossItsRange) {
  // Converters that no exported graph reaches, with the reason. They stay registered so that
  // graphs built by other means (custom passes, future export types) still convert.
  const std::map<std::string, std::string> unreachable = {
      {"prim::TupleConstruct", "LowerSimpleTuples and FlattenOutputs remove tuples first"},
      {"aten::alias", "RemoveEvalNoOps removes it"},
      {"aten::clone", "RemoveEvalNoOps removes it"},
      {"aten::contiguous", "RemoveEvalNoOps removes it"},
      {"aten::detach", "RemoveEvalNoOps removes it"},
      {"aten::lift", "RemoveEvalNoOps removes it"},
      {"aten::lift_fresh_copy", "RemoveEvalNoOps removes it"},
      {"aten::_conj", "applies to complex tensors only, which ONNX export does not take"},
      {"prim::shape", "no operator in libtorch 1.13: a graph holding it cannot be run or cleaned"},
      {"prim::TupleUnpack",
       "LowerSimpleTuples removes unpacks of constructed tuples, and tuple arguments of forward() "
       "are flattened into one input per element (capture_module)"},
  };
  // Converters whose op this libtorch computes wrongly, so no test can compare with it (tested on
  // the other build).
  std::map<std::string, std::string> libtorch_defects;
  if (int8_kernels_may_saturate()) {
    for (const char* op :
         {"quantized::conv3d", "quantized::conv3d_relu", "quantized::conv_transpose3d"}) {
      libtorch_defects[op] =
          "libtorch runs it with oneDNN, whose u8s8 kernels saturate on this CPU (x86-64 without "
          "VNNI): Quantized.Conv3d* and ConvTranspose3d skip; tested on CPUs with VNNI";
    }
  }
  if (compat::kLibtorchMajor >= 2) {
    libtorch_defects["aten::view.dtype"] =
        "no graph of libtorch 2.6 holds it: its tracer records Tensor.view(dtype) with an int "
        "argument its own alias analysis rejects, its script compiler reads view([n]) "
        "(Shape.ViewDtypeToItsOwnDtype); tested on libtorch 1.13";
    libtorch_defects["quantized::conv_transpose3d"] =
        "libtorch 2.6's oneDNN kernel disagrees with its own float computation "
        "(Quantized.ConvTranspose3d); tested on libtorch 1.13";
  }
  // Converters that write no node of their own for the inputs that reach them, with the reason:
  // a test of them matches in ORT without a node converted from them in the model.
  std::map<std::string, std::string> writes_no_node;
  const std::string same_value =
      "the value itself (a real tensor, an int64 0-d tensor, a refined type): nothing to compute";
  for (const char* op :
       {"aten::ScalarImplicit", "aten::conj_physical", "aten::resolve_conj", "aten::resolve_neg",
        "prim::NumToTensor", "prim::data", "prim::unchecked_cast", "aten::list", "aten::alias_copy",
        "aten::detach_copy"}) {
    writes_no_node[op] = same_value;
  }
  for (const char* op : {"prim::device", "prim::dtype", "prim::layout"}) {
    writes_no_node[op] = "a constant known at export (cpu, the static dtype, strided)";
  }
  for (const char* op :
       {"aten::dim", "aten::is_floating_point", "aten::__is__", "aten::__isnot__",
        "aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled", "aten::is_grad_enabled",
        "aten::is_pinned", "prim::is_nested", "prim::requires_grad",
        "aten::_nested_tensor_from_mask_left_aligned", "prim::Constant", "prim::Uninitialized"}) {
    writes_no_node[op] =
        "a value known at export (the static rank or dtype, None or not, false for the "
        "export's modes, a TorchScript constant, an Uninitialized placeholder): a Constant, "
        "which computes nothing";
  }
  writes_no_node["aten::positive"] = same_value;
  writes_no_node["aten::to.prim_other"] = same_value + " (a copy in its own dtype)";
  for (const char* op : {"aten::view.dtype", "aten::view_copy.dtype"}) {
    writes_no_node[op] = same_value + " (a view as its own dtype; another dtype is refused)";
  }
  const std::string static_list =
      "on a list whose length is known at export the converter rearranges the element values "
      "(no node); on a sequence (a list grown in a loop) it writes SequenceInsert/SequenceErase, "
      "tested at opsets 13 and 17 (Prim.SequenceEdits)";
  writes_no_node["aten::slice.t"] =
      "on a list of known length with bounds known at export the converter rearranges the "
      "element values (no node; the only form at opset 9); bounds known at run time slice the "
      "list's 1-D tensor from opset 10 (Prim.SliceOfAnIntListWithComputedBounds)";
  for (const char* op : {"aten::Delete", "aten::insert", "aten::pop", "aten::_set_item"}) {
    writes_no_node[op] = static_list;
  }
  for (const char* op : {"aten::view_as_complex", "aten::view_as_real"}) {
    writes_no_node[op] =
        "a complex value is carried as its [..., 2] pair (Note [Complex values]): these rebind "
        "it (Spectral.ViewAsComplex, Spectral.ComplexStftPassesThrough)";
  }
  // Converters whose lowest opsets take only what constant folding computes before them, so that
  // no test reaches them there: the first opset a test can, with the reason.
  const std::map<std::string, std::pair<int, std::string>> tested_from = {
      {"aten::repeat_interleave.Tensor",
       {11,
        "below opset 11 (no CumSum) only counts known at export convert, and constant folding "
        "computes those (Shape.RepeatInterleaveOfCountsAlone tests from 11)"}},
  };
  const Recorded recorded = recorded_coverage();
  std::set<std::string> registered_names;
  for (const auto& op : supported_operators()) registered_names.insert(op.name);
  // The opsets at which a registration was tested: one for an overload ("aten::max.dim") by the
  // nodes of that overload; one for a whole op ("aten::max") by its nodes of an overload without
  // a registration of its own, or of none.
  auto tested_at = [&](const std::map<std::string, std::set<int>>& m, const std::string& name) {
    std::set<int> opsets;
    const bool overload = name.find('.', name.find("::")) != std::string::npos;
    for (auto it = m.lower_bound(name); it != m.end(); ++it) {
      const std::string& r = it->first;
      if (r.compare(0, name.size(), name) != 0) break;
      const bool same = r.size() == name.size();
      const bool of_op = !overload && r[name.size()] == '.' && !registered_names.count(r);
      if (same || of_op) opsets.insert(it->second.begin(), it->second.end());
    }
    return opsets;
  };
  // Whether this libtorch has the operator of registration `name` ("aten::max.dim": that
  // overload; converters alias overloads, aten::slice_copy.t of aten::slice.t, that no libtorch
  // has).
  auto libtorch_has = [](const std::string& name) {
    const auto dot = name.find('.', name.find("::"));
    const auto ops =
        torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name.substr(0, dot)));
    if (dot == std::string::npos) return !ops.empty();
    return std::any_of(ops.begin(), ops.end(), [&](const auto& op) {
      return op->schema().overload_name() == name.substr(dot + 1);
    });
  };
  // Every overload a TorchScript graph of a model holds (not an out= form, none of named
  // dims) has a converter of its own.
  auto every_overload_registered = [&](const std::string& kind) {
    const auto ops = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(kind));
    return !ops.empty() && std::all_of(ops.begin(), ops.end(), [&](const auto& op) {
      const c10::FunctionSchema& schema = op->schema();
      const std::string& o = schema.overload_name();
      // (a Dimname argument is a str in the JIT's schema: the overloads are named so)
      const bool named_dims = o.rfind("names", 0) == 0 || o.rfind("dimname", 0) == 0;
      if (schema.is_mutable() || named_dims) return true;
      return !o.empty() && registered_names.count(kind + "." + o) > 0;
    });
  };
  std::vector<std::string> untested;
  std::set<std::string> not_in_this_libtorch, above_this_build;
  size_t converters = 0;
  for (const auto& op : supported_operators()) {
    if (unreachable.count(op.name) || libtorch_defects.count(op.name)) continue;
    // A registration for one schema overload ("aten::max.dim") is tested by nodes of that
    // overload: the exported nodes name their TorchScript op with its overload.
    const std::string kind = op.name.substr(0, op.name.find('.', op.name.find("::")));
    // Converters of a newer PyTorch's operators (aten::scaled_dot_product_attention on libtorch
    // 1.13): no graph of this libtorch holds them; the build with a libtorch that has them tests
    // them.
    if (kind.rfind("aten::", 0) == 0 && !libtorch_has(op.name)) {
      not_in_this_libtorch.insert(op.name);
      continue;
    }
    // The ends of the range (the highest this build exports, when the range goes beyond it) and
    // 11, 13, 17, 18, 20, 21 within it.
    const int until = std::min(op.until, highest_opset());
    if (op.since > until) {  // a lowering for opsets only a build with a newer onnx exports
      above_this_build.insert(op.name + " from opset " + std::to_string(op.since));
      continue;
    }
    ++converters;
    const auto from = tested_from.find(op.name);
    const int since = from == tested_from.end() ? op.since : from->second.first;
    std::set<int> required = {since, until};
    for (int opset : {11, 13, 17, 18, 20, 21}) {
      if (since <= opset && opset <= until) required.insert(opset);
    }
    const std::set<int> with_node = tested_at(recorded.with_node, op.name);
    const std::set<int> without_node = tested_at(recorded.without_node, kind);
    const bool no_node_ok = writes_no_node.count(kind) > 0 || writes_no_node.count(op.name) > 0;
    // A converter by bare name beside one for every overload this libtorch has: it serves
    // nothing here, since a node without a schema is resolved to an overload first (Note
    // [Overloads resolved once]). Only the converters of an unnamed overload that an other
    // libtorch has may be so (aten::frobenius_norm(Tensor) of 1.13, gone in 2.x); any other is a
    // converter that tells overloads apart again.
    if (op.name == kind && with_node.empty() && every_overload_registered(kind)) {
      static const std::set<std::string> unnamed_of_other_libtorch = {"aten::frobenius_norm"};
      EXPECT_TRUE(unnamed_of_other_libtorch.count(op.name))
          << op.name << " is registered by bare name beside a converter for each of its "
          << "overloads: register the unnamed overload with add_unnamed, and no converter for "
          << "nodes without a schema";
      not_in_this_libtorch.insert(op.name + " (its unnamed overload)");
      continue;
    }
    std::string gaps, folded;
    for (int opset : required) {
      if (with_node.count(opset) || (no_node_ok && without_node.count(opset))) continue;
      std::string& list = without_node.count(opset) ? folded : gaps;
      list += (list.empty() ? "" : ",") + std::to_string(opset);
    }
    if (!gaps.empty() || !folded.empty()) {
      std::string why;
      if (!gaps.empty()) why = "untested at " + gaps;
      if (!folded.empty()) {
        why += (why.empty() ? "" : "; ") + std::string("matched at ") + folded +
               " with no node converted from it in the model ORT ran";
      }
      untested.push_back(op.name + " " + std::to_string(op.since) + "-" + std::to_string(op.until) +
                         " (" + why + ")");
    }
  }
  std::string list;
  for (const auto& u : untested) list += "\n  " + u;
  EXPECT_TRUE(untested.empty()) << untested.size() << " of " << converters
                                << " converters lack a passing numeric test:" << list;
  std::printf("converters: %zu, numerically tested across their ranges: %zu\n", converters,
              converters - untested.size());
  for (const auto& [op, from] : tested_from) {
    std::printf("  %s tested from opset %d: %s\n", op.c_str(), from.first, from.second.c_str());
  }
  std::printf("converters of operators libtorch %s lacks (tested on a newer build): %zu\n",
              TORCH_VERSION, not_in_this_libtorch.size());
  for (const auto& op : not_in_this_libtorch) std::printf("  %s\n", op.c_str());
  for (const auto& [op, why] : libtorch_defects) std::printf("  %s: %s\n", op.c_str(), why.c_str());
  std::printf(
      "converters above the highest opset this build exports (%d; tested on a build with a "
      "newer onnx): %zu\n",
      highest_opset(), above_this_build.size());
  for (const auto& op : above_this_build) std::printf("  %s\n", op.c_str());
}

}  // namespace
}  // namespace torchonnx::testing
