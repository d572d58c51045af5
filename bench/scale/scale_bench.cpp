// torchonnx_bench_scale: export time over synthetic TorchScript graphs of growing size, and the
// pipeline's growth exponent (issue 7: every pass linear or n·log n in the graph's size).
//
//   build/bench/torchonnx_bench_scale [--sizes 1000,10000,100000] [--runs 3] [--stage-times]
//   build/bench/torchonnx_bench_scale --model resnet50.pt --inputs 1x3x224x224 [--runs 3]
//   build/bench/torchonnx_bench_scale --model bert.pt --inputs 1x128:long,1x128:long --stage-times
//
// Each model is a scripted module built in C++ (torch::jit::Module + define(), no Python): a chain
// of `layer{i}` submodules sharing one class type, each running kBlocks blocks of
//   h = linear(x, w, b); h = layer_norm(h, [16], g, e); h = relu(h); x = x + h;
//   x = x.view(x.size(0) * 1, -1)      (shape arithmetic: folded by PropagateTypes)
// with its own parameters (4 per block, so initializers scale with the graph too). The number of
// layers is chosen so that forward(), inlined, has about the requested number of TorchScript nodes
// (the table shows the exact count). Only the export is timed (export_model_to_bytes, default
// options, opset 17), not building the model; each size is exported --runs times and the median is
// reported with µs per TorchScript node. The growth exponent between two sizes is the log-log
// slope log(t2/t1) / log(n2/n1): 1.0 is linear, 2.0 quadratic. The 10k graph (TorchScript IR and
// pass state, ~1 KB a node) fits in a 32 MB L3 cache and the 100k one does not, so pointer-chasing
// passes show some growth there that is not algorithmic: compare --sizes 100000,300000 too (both
// out of cache; the passes measured 1.04 there, the whole export 1.13, on a 2-core machine).
//
// --stage-times also runs the export's stages one by one (as src/export.cpp chains them for these
// options) and prints the seconds of each: capture (inline + lift attributes), passes (with
// TORCHONNX_STAGE_TIMES=1 in the environment, passes/pipeline.cpp prints each pass to stderr),
// convert, optimize, to_model_proto, validate (checker + shape inference) and serialize.
//
// --model exports a saved TorchScript module instead (loaded once, not timed), on inputs given as
// shapes with an optional dtype (float, long, int, bool; random floats, zero integers): the
// in-process export time of a real model, with the same stage split.
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "onnx/model_proto.h"
#include "onnx/optimize.h"
#include "passes/pipeline.h"
#include "symbolic/convert.h"
#include "symbolic/registry.h"
#include "torchonnx/export.h"

namespace {

constexpr int kBlocks = 8;  // blocks per layer
constexpr int64_t kDim = 16;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string layer_source() {
  std::ostringstream s;
  s << "def forward(self, x):\n";
  for (int k = 0; k < kBlocks; ++k) {
    s << fmt::format("    h = torch.linear(x, self.w{0}, self.b{0})\n", k);
    s << fmt::format("    h = torch.layer_norm(h, [{1}], self.g{0}, self.e{0}, 1e-05, False)\n", k,
                     kDim);
    s << "    h = torch.relu(h)\n";
    s << "    x = x + h\n";
    s << "    x = x.view(x.size(0) * 1, -1)\n";
  }
  s << "    return x\n";
  return s.str();
}

torch::jit::Module make_model(int layers) {
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  auto layer_type = c10::ClassType::create("__torch__.ScaleLayer", cu, /*is_module=*/true);
  cu->register_type(layer_type);
  torch::jit::Module top("__torch__.ScaleModel");
  for (int i = 0; i < layers; ++i) {
    torch::jit::Module layer(cu, layer_type);
    for (int k = 0; k < kBlocks; ++k) {
      layer.register_parameter(fmt::format("w{}", k), torch::randn({kDim, kDim}) * 0.1, false);
      layer.register_parameter(fmt::format("b{}", k), torch::randn({kDim}) * 0.1, false);
      layer.register_parameter(fmt::format("g{}", k), torch::ones({kDim}), false);
      layer.register_parameter(fmt::format("e{}", k), torch::zeros({kDim}), false);
    }
    if (i == 0) layer.define(layer_source());
    top.register_module(fmt::format("layer{}", i), layer);
  }
  std::ostringstream s;
  s << "def forward(self, x):\n";
  for (int i = 0; i < layers; ++i) s << fmt::format("    x = self.layer{}.forward(x)\n", i);
  s << "    return x\n";
  top.define(s.str());
  top.eval();
  return top;
}

size_t count_nodes(torch::jit::Block* block) {
  size_t n = 0;
  for (torch::jit::Node* node : block->nodes()) {
    ++n;
    for (torch::jit::Block* b : node->blocks()) n += count_nodes(b);
  }
  return n;
}

// Nodes of forward() as the export captures it (inlined, attributes lifted).
size_t inlined_nodes(const torch::jit::Module& m, const std::vector<c10::IValue>& args) {
  return count_nodes(torchonnx::frontend::capture_module(m, args).graph->block());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The export's stages one by one, as export_captured chains them for default options.
void print_stage_times(const torch::jit::Module& model, const std::vector<c10::IValue>& args) {
  using namespace torchonnx;
  const ExportConfig config;
  std::vector<std::pair<std::string, double>> stages;
  auto t = Clock::now();
  frontend::CapturedGraph captured = frontend::capture_module(model, args);
  stages.emplace_back("capture", seconds_since(t));
  std::vector<c10::IValue> inputs = captured.example_inputs;
  for (const auto& p : captured.parameters) inputs.emplace_back(p.tensor);
  t = Clock::now();
  passes::PrepareGraph(captured.graph, inputs, config, {});
  stages.emplace_back("passes", seconds_since(t));
  symbolic::GraphSignature sig;
  sig.parameters = captured.parameters;
  const auto graph_inputs = captured.graph->inputs();
  const size_t num_user = graph_inputs.size() - captured.parameters.size();
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    sig.input_names.push_back(i < num_user ? fmt::format("input_{}", i)
                                           : captured.parameters[i - num_user].name);
  }
  for (size_t k = 0; k < captured.graph->outputs().size(); ++k) {
    sig.output_names.push_back(fmt::format("output_{}", k));
  }
  t = Clock::now();
  ir::Model m =
      symbolic::convert_graph(*captured.graph, sig, config, symbolic::Registry::builtin());
  stages.emplace_back("convert", seconds_since(t));
  t = Clock::now();
  optimize_model(m, {true, true});
  stages.emplace_back("optimize", seconds_since(t));
  const size_t onnx_nodes = m.graph.nodes.size();
  t = Clock::now();
  onnx::ModelProto proto = to_model_proto(m);
  stages.emplace_back("to_model_proto", seconds_since(t));
  t = Clock::now();
  validate_model(proto);
  stages.emplace_back("validate", seconds_since(t));
  t = Clock::now();
  std::string bytes = proto.SerializeAsString();
  stages.emplace_back("serialize", seconds_since(t));
  double total = 0;
  for (const auto& [name, s] : stages) total += s;
  std::cout << fmt::format("  stages ({} ONNX nodes, {:.1f} MB):", onnx_nodes,
                           static_cast<double>(bytes.size()) / 1e6);
  for (const auto& [name, s] : stages) {
    std::cout << fmt::format(" {} {:.3f}s ({:.0f}%)", name, s, 100 * s / total);
  }
  std::cout << fmt::format(" | total {:.3f}s\n", total);
}

// "1x3x224x224,1x128:long" → a random float tensor and a zero int64 tensor.
std::vector<c10::IValue> parse_inputs(const std::string& text) {
  std::vector<c10::IValue> args;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::string dims = item.substr(0, item.find(':'));
    std::string dtype =
        item.find(':') == std::string::npos ? "float" : item.substr(item.find(':') + 1);
    std::vector<int64_t> shape;
    std::stringstream ds(dims);
    std::string d;
    while (std::getline(ds, d, 'x')) shape.push_back(std::stoll(d));
    if (dtype == "float") {
      args.emplace_back(torch::randn(shape));
    } else if (dtype == "long") {
      args.emplace_back(torch::zeros(shape, torch::kLong));
    } else if (dtype == "int") {
      args.emplace_back(torch::zeros(shape, torch::kInt));
    } else if (dtype == "bool") {
      args.emplace_back(torch::ones(shape, torch::kBool));
    } else {
      throw std::runtime_error("unknown dtype '" + dtype + "' (float, long, int, bool)");
    }
  }
  return args;
}

// Exports `model` `runs` times with default options; the seconds of each run, the last bytes.
std::vector<double> time_exports(const torch::jit::Module& model,
                                 const std::vector<c10::IValue>& args, int runs, std::string& bytes,
                                 bool print) {
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto t = Clock::now();
    bytes = torchonnx::export_model_to_bytes(model, args);
    times.push_back(seconds_since(t));
    if (print) std::cout << fmt::format("run {}: {:.3f} s\n", r + 1, times.back()) << std::flush;
  }
  return times;
}

int run_model(const std::string& path, const std::string& inputs, int runs, bool stage_times) {
  torch::jit::Module model = torch::jit::load(path);
  model.eval();
  std::vector<c10::IValue> args = parse_inputs(inputs);
  std::string bytes;
  std::vector<double> times = time_exports(model, args, runs, bytes, /*print=*/true);
  onnx::ModelProto proto;
  proto.ParseFromString(bytes);
  std::cout << fmt::format(
      "{}: {} TS nodes, {} ONNX nodes, {:.1f} MB, median {:.3f} s of {} runs\n", path,
      inlined_nodes(model, args), proto.graph().node_size(),
      static_cast<double>(bytes.size()) / 1e6, median(times), runs);
  if (stage_times) print_stage_times(model, args);
  return 0;
}

std::vector<int64_t> parse_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) sizes.push_back(std::stoll(item));
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  int runs = 3;
  bool stage_times = false;
  std::string model_path, model_inputs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) {
      sizes = parse_sizes(argv[++i]);
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--model" && i + 1 < argc) {
      model_path = argv[++i];
    } else if (arg == "--inputs" && i + 1 < argc) {
      model_inputs = argv[++i];
    } else if (arg == "--stage-times") {
      stage_times = true;
    } else {
      std::cerr << "usage: " << argv[0]
                << " [--sizes 1000,10000,100000] [--runs N] [--stage-times]\n"
                << "       " << argv[0]
                << " --model M.pt --inputs 1x3x224x224[,1x128:long] [--runs N] "
                << "[--stage-times]\n";
      return 2;
    }
  }
  torch::NoGradGuard no_grad;
  if (!model_path.empty()) return run_model(model_path, model_inputs, runs, stage_times);
  // One layer's node count, to choose the number of layers for each size.
  const size_t per_layer = inlined_nodes(make_model(2), {torch::randn({2, kDim})}) -
                           inlined_nodes(make_model(1), {torch::randn({2, kDim})});

  struct Row {
    size_t nodes;
    size_t onnx_nodes;
    double seconds;
  };
  std::vector<Row> rows;
  std::cout << fmt::format("{:>10} {:>10} {:>8} {:>10} {:>10} {:>9}\n", "TS nodes", "ONNX nodes",
                           "layers", "seconds", "µs/node", "exponent");
  for (int64_t target : sizes) {
    const int layers =
        std::max<int>(1, static_cast<int>(std::lround(static_cast<double>(target) / per_layer)));
    torch::jit::Module model = make_model(layers);
    std::vector<c10::IValue> args = {torch::randn({2, kDim})};
    const size_t nodes = inlined_nodes(model, args);
    std::string bytes;
    std::vector<double> times = time_exports(model, args, runs, bytes, /*print=*/false);
    onnx::ModelProto proto;
    proto.ParseFromString(bytes);
    Row row{nodes, static_cast<size_t>(proto.graph().node_size()), median(times)};
    std::string exponent = "";
    if (!rows.empty()) {
      const Row& prev = rows.back();
      exponent = fmt::format("{:.2f}", std::log(row.seconds / prev.seconds) /
                                           std::log(static_cast<double>(row.nodes) / prev.nodes));
    }
    rows.push_back(row);
    std::cout << fmt::format("{:>10} {:>10} {:>8} {:>10.3f} {:>10.1f} {:>9}\n", row.nodes,
                             row.onnx_nodes, layers, row.seconds, 1e6 * row.seconds / row.nodes,
                             exponent)
              << std::flush;
    if (stage_times) print_stage_times(model, args);
  }
  if (rows.size() >= 2) {
    const Row &a = rows.front(), &b = rows.back();
    std::cout << fmt::format(
        "growth exponent {}→{} nodes: {:.2f} (median of {} runs)\n", a.nodes, b.nodes,
        std::log(b.seconds / a.seconds) / std::log(static_cast<double>(b.nodes) / a.nodes), runs);
  }
  return 0;
}
