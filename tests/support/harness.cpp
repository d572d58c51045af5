#include "support/harness.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
#include <tuple>

#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "verify/compare.h"

namespace torchonnx::testing {

namespace fs = std::filesystem;

namespace {

// One `node verify.mjs --serve` per test process, fed JSON lines.
class OrtServer {
 public:
  OrtServer() {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      std::string script = std::string(TORCHONNX_SOURCE_DIR) + "/tools/verify/verify.mjs";
      execlp("node", "node", script.c_str(), "--serve", nullptr);
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
  }
  ~OrtServer() {
    if (in_) fclose(in_);
    if (out_) fclose(out_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

  OrtResult run(const std::string& model, const std::string& data, const Tolerance& tol,
                bool detections, double pixel_atol, bool quiet = false) {
    std::lock_guard<std::mutex> lock(mutex_);
    nlohmann::json request = {{"model", model},
                              {"data", data},
                              {"rtol", tol.rtol},
                              {"atol", tol.atol},
                              {"atol_scale", tol.atol_scale},
                              {"step", tol.step},
                              {"step_fraction", tol.step_fraction},
                              {"exact_int8", tol.exact_int8}};
    if (detections) request["detections"] = true;
    if (quiet) request["quiet"] = true;
    if (pixel_atol > 0) request["pixel_atol"] = pixel_atol;
    std::string line = request.dump() + "\n";
    fputs(line.c_str(), in_);
    fflush(in_);
    std::string reply;
    int c;
    while ((c = fgetc(out_)) != EOF && c != '\n') reply.push_back(static_cast<char>(c));
    if (reply.empty())
      return {false, "verify.mjs server died (is node and tools/verify/node_modules installed?)"};
    auto json = nlohmann::json::parse(reply);
    return {json.value("ok", false), json.value("report", std::string())};
  }

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
  std::mutex mutex_;
};

OrtServer& server() {
  static OrtServer s;
  return s;
}

}  // namespace

namespace {
// With TORCHONNX_RECORD_MODELS=FILE, one line "<test>\t<hash of the model file>" per model run in
// ORT: two runs' files compare the exported bytes of every tested model (a refactoring that must
// not change any export, issue 19).
// The second hash leaves out tensor payloads (initializers, Constant values), which differ between
// runs of tests that draw their weights at random.
void record_model(const std::string& model) {
  const char* path = std::getenv("TORCHONNX_RECORD_MODELS");
  if (path == nullptr) return;
  std::ifstream in(model, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto proto;
  proto.ParseFromString(bytes);
  auto strip = [](onnx::TensorProto& t) {
    t.clear_raw_data();
    t.clear_float_data();
    t.clear_int64_data();
    t.clear_int32_data();
    t.clear_double_data();
  };
  std::function<void(onnx::GraphProto&)> strip_graph = [&](onnx::GraphProto& g) {
    for (auto& t : *g.mutable_initializer()) strip(t);
    for (auto& n : *g.mutable_node()) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_t()) strip(*a.mutable_t());
        if (a.has_g()) strip_graph(*a.mutable_g());
      }
    }
  };
  strip_graph(*proto.mutable_graph());
  std::string structure;
  proto.SerializeToString(&structure);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::ofstream out(path, std::ios::app);
  out << (info ? fmt::format("{}.{}", info->test_suite_name(), info->name()) : "?") << '\t'
      << fmt::format("{:016x}\t{:016x}", std::hash<std::string>{}(bytes),
                     std::hash<std::string>{}(structure))
      << '\n';
}

// Every test starts from the same random state, so that tests drawing weights or inputs at random
// export the same bytes in every run.
class SeedEachTest : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { at::manual_seed(0); }
};
const bool kSeeded = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SeedEachTest);
  return true;
}();
}  // namespace

OrtResult run_in_ort(const std::string& model, const std::string& data_dir, Tolerance tol,
                     bool detections, double pixel_atol) {
  record_model(model);
  return server().run(model, data_dir, tol, detections, pixel_atol);
}

bool in_process_verify() {
  static const bool node = [] {
    const char* env = std::getenv("TORCHONNX_TEST_NODE_RUNNER");
    return env != nullptr && std::string(env) == "1";
  }();
  return verify_available() && !node;
}

VerifyResult verify_export(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                           const std::string& onnx_path, const ExportOptions& options,
                           VerifyOptions v, const std::string& reference_dir) {
  record_model(onnx_path);
  v.onnx_path = onnx_path;
  if (!reference_dir.empty()) {
    for (int k = 0;; ++k) {
      const std::string p = reference_dir + fmt::format("/output_{}.pb", k);
      if (!fs::exists(p)) break;
      v.expected.push_back(read_tensor_file(p));
    }
  }
  return verify(model, args, options, v);
}

VerifyOptions verify_options(const Tolerance& tol) {
  EXPECT_EQ(tol.step, 0) << "verify compares no quantized outputs by steps: use run_in_ort";
  VerifyOptions v;
  v.rtol = tol.rtol;
  v.atol = tol.atol;
  v.atol_scale = tol.atol_scale;
  return v;
}

onnx::ModelProto parse_model(const std::string& bytes) {
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes));
  return proto;
}

// The test process's temp folder (never destroyed: the exit handler reads it after static
// destructors ran). Removed at exit when every test passed; kept for inspection after a failure
// or with TORCHONNX_KEEP_TEST_FILES=1, so that runs do not fill /tmp.
const fs::path& test_temp_base() {
  static const fs::path* base = [] {
    auto* p = new fs::path(fs::temp_directory_path() / fmt::format("torchonnx_tests_{}", getpid()));
    std::atexit([] {
      if (std::getenv("TORCHONNX_KEEP_TEST_FILES") == nullptr &&
          !::testing::UnitTest::GetInstance()->Failed()) {
        std::error_code ec;
        fs::remove_all(test_temp_base(), ec);
      }
    });
    return p;
  }();
  return *base;
}

std::string temp_dir(const std::string& hint) {
  static std::atomic<int> counter{0};
  const fs::path base = test_temp_base();
  fs::path dir = base / fmt::format("{}_{}", hint, counter++);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void write_test_data(const std::string& dir, const std::vector<c10::IValue>& inputs,
                     const std::vector<at::Tensor>& outputs) {
  std::vector<at::Tensor> tensors;
  for (const auto& v : inputs) {
    if (v.isIntList()) {
      // A List[int] argument is one 1-D int64 input (its length may vary).
      tensors.push_back(at::tensor(v.toIntVector(), at::kLong));
    } else if (v.isList() || v.isTuple()) {
      // A container argument is one graph input per tensor, in order (capture_module).
      for (const at::Tensor& t : frontend::flatten_tensors(v)) tensors.push_back(t);
    } else {
      tensors.push_back(v.isTensor() ? v.toTensor() : at::scalar_to_tensor(v.toScalar()));
    }
  }
  torchonnx::write_test_data(dir, tensors, outputs);
}

namespace {

const char* coverage_path() {
  static const char* path = std::getenv("TORCHONNX_OP_COVERAGE");
  return path;
}

// Each test process starts its coverage file afresh, also when it records nothing (a file of an
// earlier run never counts).
const bool coverage_file_reset = [] {
  if (coverage_path() != nullptr) std::ofstream(coverage_path(), std::ios::trunc);
  return true;
}();

// The op a node was converted from: its doc_string up to the source location
// ("aten::div.Tensor_mode, model.py:12" → "aten::div.Tensor_mode").
std::string origin_of(const onnx::NodeProto& node) {
  const std::string& doc = node.doc_string();
  return doc.substr(0, doc.find(','));
}

// The values a subgraph reads from the scopes around it.
void outer_reads(const onnx::GraphProto& g, std::set<std::string>& reads) {
  std::set<std::string> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& n : g.node()) local.insert(n.output().begin(), n.output().end());
  std::set<std::string> all;
  for (const auto& n : g.node()) {
    all.insert(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_reads(a.g(), all);
      for (const auto& sub : a.graphs()) outer_reads(sub, all);
    }
  }
  for (const auto& o : g.output()) all.insert(o.name());
  for (const auto& v : all) {
    if (!local.count(v)) reads.insert(v);
  }
}

// Collects into `ran` the origins of the nodes of `g` that compute its outputs: not Constant or
// Identity (they compute nothing), not a node no output depends on, and inside an If only the
// branches `taken` says ran.
void collect_ran(const onnx::GraphProto& g, const IfBranchesRun& taken,
                 std::set<std::string>& ran) {
  std::set<std::string> needed;
  for (const auto& o : g.output()) needed.insert(o.name());
  std::vector<const onnx::NodeProto*> live;
  for (int i = g.node_size(); i-- > 0;) {
    const onnx::NodeProto& n = g.node(i);
    const bool used = std::any_of(n.output().begin(), n.output().end(),
                                  [&](const std::string& o) { return needed.count(o) > 0; });
    if (!used) continue;
    live.push_back(&n);
    needed.insert(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_reads(a.g(), needed);
      for (const auto& sub : a.graphs()) outer_reads(sub, needed);
    }
  }
  for (const onnx::NodeProto* n : live) {
    if (n->op_type() != "Constant" && n->op_type() != "Identity" && !n->doc_string().empty()) {
      ran.insert(origin_of(*n));
    }
    const auto branch =
        n->op_type() == "If" && !n->output().empty() ? taken.find(n->output(0)) : taken.end();
    for (const auto& a : n->attribute()) {
      if (!a.has_g()) continue;
      if (n->op_type() == "If") {
        // The branches that ran only, neither when that is not known.
        if (branch == taken.end()) continue;
        if (!(a.name() == "then_branch" ? branch->second.then_branch
                                        : branch->second.else_branch)) {
          continue;
        }
      }
      collect_ran(a.g(), taken, ran);
    }
  }
}

}  // namespace

std::set<std::string> ops_run(const onnx::ModelProto& model, const IfBranchesRun& branches_run) {
  std::set<std::string> ran;
  collect_ran(model.graph(), branches_run, ran);
  for (const auto& f : model.functions()) {
    for (const auto& n : f.node()) {
      if (n.op_type() != "Constant" && n.op_type() != "Identity" && !n.doc_string().empty()) {
        ran.insert(origin_of(n));
      }
    }
  }
  return ran;
}

namespace {

// The Ifs inside the subgraphs of `g` (at any depth below its own nodes), by their first output.
void nested_ifs(const onnx::GraphProto& g, bool nested, std::vector<std::string>& ifs) {
  for (const auto& n : g.node()) {
    if (nested && n.op_type() == "If" && n.output_size() > 0) ifs.push_back(n.output(0));
    for (const auto& a : n.attribute()) {
      if (a.has_g()) nested_ifs(a.g(), true, ifs);
    }
  }
}

onnx::NodeProto* find_if(onnx::GraphProto& g, const std::string& first_output) {
  for (auto& n : *g.mutable_node()) {
    if (n.op_type() == "If" && n.output_size() > 0 && n.output(0) == first_output) return &n;
    for (auto& a : *n.mutable_attribute()) {
      if (!a.has_g()) continue;
      if (onnx::NodeProto* found = find_if(*a.mutable_g(), first_output)) return found;
    }
  }
  return nullptr;
}

// A test-data folder for a probe of the model: the inputs and expected outputs of `data_dir`.
std::string probe_dir(const std::string& data_dir, int outputs) {
  const std::string dir = temp_dir("if_probe");
  for (int i = 0; fs::exists(fmt::format("{}/input_{}.pb", data_dir, i)); ++i) {
    fs::copy_file(fmt::format("{}/input_{}.pb", data_dir, i),
                  fmt::format("{}/input_{}.pb", dir, i));
  }
  for (int k = 0; k < outputs; ++k) {
    fs::copy_file(fmt::format("{}/output_{}.pb", data_dir, k),
                  fmt::format("{}/output_{}.pb", dir, k));
  }
  return dir;
}

void write_probe(const onnx::ModelProto& probe, const std::string& dir) {
  std::ofstream file(dir + "/probe.onnx", std::ios::binary);
  probe.SerializeToOstream(&file);
}

// Whether ORT runs the branch `then_branch` (or else) of the If (by its first output) of `model`
// on the data of `dir`: the branch gets an extra output, a Reshape of the If's condition (one
// element, read at run time) to 15 elements, which fails when the branch runs; the other branch
// returns a constant in its place. Opset 8's Constant holds no int64: the constants are
// initializers of the main graph, which subgraphs read from the outer scope.
bool branch_runs(const onnx::ModelProto& model, const std::string& if_output, bool then_branch,
                 const std::string& dir) {
  onnx::ModelProto probe = model;
  onnx::NodeProto* node = find_if(*probe.mutable_graph(), if_output);
  if (node == nullptr || node->input_size() < 1) return false;
  const std::string tag = "__torchonnx_probe";
  onnx::TensorProto* shape = probe.mutable_graph()->add_initializer();
  to_tensor_proto(at::tensor({int64_t{3}, int64_t{5}}, at::kLong), tag + "_shape", shape);
  onnx::TensorProto* filler = probe.mutable_graph()->add_initializer();
  to_tensor_proto(at::zeros({3, 5}), tag + "_filler", filler);
  node->add_output(tag + "_if");
  for (auto& a : *node->mutable_attribute()) {
    if (!a.has_g() || (a.name() != "then_branch" && a.name() != "else_branch")) continue;
    onnx::GraphProto& branch = *a.mutable_g();
    const std::string out = tag + (a.name() == "then_branch" ? "_then" : "_else");
    auto add_node = [&](const std::string& type, const std::vector<std::string>& inputs,
                        const std::string& output) {
      onnx::NodeProto* n = branch.add_node();
      n->set_op_type(type);
      n->set_name(output);
      for (const auto& i : inputs) n->add_input(i);
      n->add_output(output);
      return n;
    };
    if ((a.name() == "then_branch") == then_branch) {
      auto* to = add_node("Cast", {node->input(0)}, out + "_cast")->add_attribute();
      to->set_name("to");
      to->set_type(onnx::AttributeProto::INT);
      to->set_i(onnx::TensorProto::FLOAT);
      add_node("Reshape", {out + "_cast", tag + "_shape"}, out);
    } else {
      add_node("Identity", {tag + "_filler"}, out);
    }
    auto* o = branch.add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  write_probe(probe, dir);
  const OrtResult r = server().run(dir + "/probe.onnx", dir, {}, false, 0, /*quiet=*/true);
  // It ran when running the model failed at the probe's Reshape (not when ORT could not load the
  // probe: then it is not known, and does not count).
  const std::string failing = tag + (then_branch ? "_then" : "_else");
  return !r.ok && r.report.find("failed to run") != std::string::npos &&
         r.report.find(failing) != std::string::npos;
}

}  // namespace

IfBranchesRun if_branches_taken(const std::string& model_path, const std::string& data_dir) {
  IfBranchesRun taken;
  onnx::ModelProto probe = read_model_file(model_path);
  const int outputs = probe.graph().output_size();
  // The Ifs inside subgraphs first, each probed on its own copy of the model as it was read.
  std::vector<std::string> nested;
  nested_ifs(probe.graph(), false, nested);
  for (const auto& first_output : nested) {
    const std::string dir = probe_dir(data_dir, outputs);
    taken[first_output] = {branch_runs(probe, first_output, true, dir),
                           branch_runs(probe, first_output, false, dir)};
    fs::remove_all(dir);
  }
  std::vector<std::pair<std::string, std::string>> ifs;  // (first output, condition)
  for (const auto& n : probe.graph().node()) {
    if (n.op_type() == "If" && n.output_size() > 0) ifs.emplace_back(n.output(0), n.input(0));
  }
  if (ifs.empty()) return taken;
  // The main graph's: the conditions as extra outputs, each expected `true`; ORT's report says
  // which are.
  const std::string dir = probe_dir(data_dir, outputs);
  for (size_t j = 0; j < ifs.size(); ++j) {
    auto* out = probe.mutable_graph()->add_output();
    out->set_name(ifs[j].second);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    onnx::TensorProto yes;
    to_tensor_proto(at::ones({}, at::kBool), ifs[j].second, &yes);
    std::ofstream(fmt::format("{}/output_{}.pb", dir, outputs + j), std::ios::binary)
        << yes.SerializeAsString();
  }
  write_probe(probe, dir);
  const OrtResult r = server().run(dir + "/probe.onnx", dir, {}, false, 0);
  for (size_t j = 0; j < ifs.size(); ++j) {
    const std::string line = fmt::format("output {} '{}': ", outputs + j, ifs[j].second);
    const auto at = r.report.find(line);
    if (at == std::string::npos) continue;  // not run: neither branch counts
    const bool then_taken = r.report.compare(at + line.size(), 2, "OK") == 0;
    taken[ifs[j].first] = {then_taken, !then_taken};
  }
  fs::remove_all(dir);
  return taken;
}

namespace {
// The names of `ran` that are `op` or one of its overloads ("aten::div.Tensor_mode", not
// "aten::divide").
std::vector<std::string> op_and_overloads(const std::set<std::string>& ran, const std::string& op) {
  std::vector<std::string> names;
  for (auto it = ran.lower_bound(op); it != ran.end() && it->compare(0, op.size(), op) == 0; ++it) {
    if (it->size() == op.size() || (*it)[op.size()] == '.') names.push_back(*it);
  }
  return names;
}
}  // namespace

bool ran_node_from(const std::set<std::string>& ran, const std::string& op) {
  return !op_and_overloads(ran, op).empty();
}

bool model_has_node_from(const onnx::ModelProto& model, const std::string& op) {
  return ran_node_from(ops_run(model), op);
}

std::string outputs_without_signal(const std::vector<at::Tensor>& outputs) {
  std::string why;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const at::Tensor& t = outputs[k];
    if (!t.is_floating_point() || t.numel() < 2) continue;
    const at::Tensor finite = t.masked_select(t.isfinite()).to(at::kDouble);
    const double scale = verification::output_scale(t);
    const double spread = finite.numel() ? (finite.max() - finite.min()).item<double>() : 0.0;
    if (spread == 0) {
      why += fmt::format("output {} is constant; ", k);
    } else if (scale < 1e-6) {
      why += fmt::format("output {} is vanishing (scale {:.3g}); ", k, scale);
    } else if (spread < 1e-3 * scale) {
      why += fmt::format("output {} varies by {:.3g} at a scale of {:.3g}; ", k, spread, scale);
    }
  }
  return why;
}

void record_tested_op(const std::string& op, int opset, bool ran_in_ort) {
  static std::mutex mutex;
  static std::set<std::tuple<std::string, int, bool>> recorded;
  (void)coverage_file_reset;
  if (coverage_path() == nullptr || op.empty()) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (!recorded.insert({op, opset, ran_in_ort}).second) return;
  std::ofstream(coverage_path(), std::ios::app)
      << op << '\t' << opset << '\t' << (ran_in_ort ? "node" : "no-node") << '\n';
}

void record_tested_op(const std::string& op, int opset, const std::set<std::string>& ran) {
  const std::vector<std::string> names = op_and_overloads(ran, op);
  for (const auto& name : names) record_tested_op(name, opset, true);
  if (names.empty()) record_tested_op(op, opset, false);
}

namespace {

// Exports at `options`, runs in ORT and expects `expected`. Whether it matched, and which of
// `ops_under_test` have a node converted from them in the model.
struct RunOutcome {
  bool ok = false;
  std::set<std::string> with_node;
  std::set<std::string> ran;  // ops_run
};

RunOutcome export_and_compare(const ExportTo& export_to, const std::vector<c10::IValue>& inputs,
                              const std::vector<at::Tensor>& expected, const ExportOptions& options,
                              Tolerance tol, const std::vector<std::string>& ops_under_test) {
  const std::string how = fmt::format("opset {}{}", options.opset_version,
                                      options.do_constant_folding ? "" : " (no constant folding)");
  std::string dir = temp_dir(fmt::format("opset{}{}", options.opset_version,
                                         options.do_constant_folding ? "" : "_unfolded"));
  std::string model = dir + "/model.onnx";
  try {
    export_to(model, options);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "export at " << how << " failed: " << e.what();
    return {};
  }
  write_test_data(dir, inputs, expected);
  OrtResult result = run_in_ort(model, dir, tol);
  EXPECT_TRUE(result.ok) << how << ": " << result.report;
  RunOutcome outcome{result.ok, {}, {}};
  if (!ops_under_test.empty() && result.ok) {
    outcome.ran = ops_run(read_model_file(model), if_branches_taken(model, dir));
    for (const auto& op : ops_under_test) {
      if (ran_node_from(outcome.ran, op)) outcome.with_node.insert(op);
    }
  }
  if (result.ok) fs::remove_all(dir);
  return outcome;
}

}  // namespace

void expect_exports_match(const ExportTo& export_to, const std::vector<c10::IValue>& inputs,
                          const std::vector<at::Tensor>& expected, int first, int last, bool fold,
                          Tolerance tol, const std::vector<std::string>& ops_under_test) {
  for (int opset = first; opset <= last; ++opset) {
    ExportOptions options;
    options.opset_version = opset;
    options.do_constant_folding = fold;
    RunOutcome outcome =
        export_and_compare(export_to, inputs, expected, options, tol, ops_under_test);
    if (fold && outcome.ok && outcome.with_node.size() < ops_under_test.size()) {
      // Folding computed an op with torchonnx's evaluator: let ORT run its converter's nodes.
      options.do_constant_folding = false;
      outcome = export_and_compare(export_to, inputs, expected, options, tol, ops_under_test);
    }
    if (!outcome.ok) continue;
    for (const auto& op : ops_under_test) record_tested_op(op, opset, outcome.ran);
  }
}

void expect_matches_at_opsets(const TracedFunction& fn, const std::vector<c10::IValue>& inputs,
                              int first, int last, const NamedTensors& params, Tolerance tol) {
  std::vector<at::Tensor> expected;
  {
    c10::NoGradGuard no_grad;
    std::vector<c10::IValue> copies;  // the reference run may write its inputs
    for (const auto& v : inputs) {
      copies.emplace_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
    }
    expected = frontend::flatten_tensors(fn(copies));
  }
  expect_exports_match(
      [&](const std::string& path, const ExportOptions& o) {
        export_function(fn, inputs, params, path, o);
      },
      inputs, expected, first, last, /*fold=*/true, tol);
}

void expect_export_matches(const TracedFunction& fn, const std::vector<c10::IValue>& inputs,
                           int opset, const NamedTensors& params, Tolerance tol) {
  expect_matches_at_opsets(fn, inputs, opset, opset, params, tol);
}

CliResult run_cli(const std::string& args, bool with_stderr) {
  const char* cli = std::getenv("TORCHONNX_CLI");
  if (cli == nullptr) {
    ADD_FAILURE() << "TORCHONNX_CLI is not set: run the test through ctest";
    return {};
  }
  const std::string command =
      std::string(cli) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return {};
  }
  CliResult result;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

onnx::ModelProto read_model_file(const std::string& path) {
  return parse_model(read_file(path));
}

}  // namespace torchonnx::testing
