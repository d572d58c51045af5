// torchonnx_bench_export: the C++ side of bench/run.sh. Three modes, each printing one JSON line:
//
//   torchonnx_bench_export MODEL.pt --inputs DIR -o OUT.onnx [--opset N] [--external-data]
//       Loads the model (torchonnx::load_model, as the CLI does: its weights stay in a mapping of
//       the file, Note [Zero-copy weights]) and DIR/input_<i>.pb, then times only
//       torchonnx::export_model (the in-process export time, as torch_onnx_export.py times only
//       torch.onnx.export). {"export_seconds", "load_seconds", "rss_before_export_kb",
//       "peak_rss_kb"}
//   torchonnx_bench_export --stats FILE.onnx
//       Counts the nodes (main graph and its subgraphs, plus local functions) and initializers
//       of an exported model without loading its external data: {"nodes", "graph_nodes",
//       "function_nodes", "initializers", "initializer_bytes", "external_initializers",
//       "external_bytes", "onnx_bytes", "ops": {op_type: count}}
//   torchonnx_bench_export --write-floor BYTES --dir DIR
//       Writes BYTES bytes to a new file in DIR in 64 MB chunks, fsyncs it and removes it: the
//       time is the disk's floor for writing that many weight bytes. {"seconds", "bytes"}
//
// Exit status: 0 on success, 1 on an export or I/O error (message on stderr), 2 on bad usage.
#include <fcntl.h>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <torch/script.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "torchonnx/export.h"
#include "torchonnx/io.h"

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KB on Linux
}

int64_t current_rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int usage() {
  std::cerr << "usage: torchonnx_bench_export MODEL.pt --inputs DIR -o OUT.onnx [--opset N] "
               "[--external-data]\n"
               "       torchonnx_bench_export --stats FILE.onnx\n"
               "       torchonnx_bench_export --write-floor BYTES --dir DIR\n";
  return 2;
}

// ---------------------------------------------------------------------------
// export
// ---------------------------------------------------------------------------

int run_export(const std::string& model_path, const std::string& inputs_dir,
               const std::string& out_path, int opset, bool external_data) {
  auto start = Clock::now();
  torch::jit::Module model = torchonnx::load_model(model_path);
  std::vector<c10::IValue> inputs;
  for (int i = 0;; ++i) {
    fs::path p = fs::path(inputs_dir) / fmt::format("input_{}.pb", i);
    if (!fs::exists(p)) break;
    inputs.emplace_back(torchonnx::read_tensor_file(p.string()));
  }
  if (inputs.empty()) {
    std::cerr << "torchonnx_bench_export: " << inputs_dir << " holds no input_0.pb\n";
    return 2;
  }
  double load_seconds = seconds_since(start);
  int64_t rss_before = current_rss_kb();

  torchonnx::ExportOptions options;
  options.opset_version = opset;
  options.use_external_data_format = external_data;
  auto export_start = Clock::now();
  torchonnx::export_model(model, inputs, out_path, options);
  double export_seconds = seconds_since(export_start);

  std::cout << fmt::format(
      "{{\"export_seconds\": {:.6f}, \"load_seconds\": {:.6f}, \"rss_before_export_kb\": {}, "
      "\"peak_rss_kb\": {}}}\n",
      export_seconds, load_seconds, rss_before, peak_rss_kb());
  return 0;
}

// ---------------------------------------------------------------------------
// --stats
// ---------------------------------------------------------------------------

struct Stats {
  int64_t graph_nodes = 0;
  int64_t function_nodes = 0;
  int64_t initializers = 0;
  int64_t initializer_bytes = 0;
  int64_t external_initializers = 0;
  int64_t external_bytes = 0;
  std::map<std::string, int64_t> ops;
};

int64_t tensor_bytes(const onnx::TensorProto& t, bool* external) {
  *external = t.data_location() == onnx::TensorProto::EXTERNAL;
  if (*external) {
    for (const auto& entry : t.external_data()) {
      if (entry.key() == "length") return std::stoll(entry.value());
    }
    return 0;  // no length: the rest of the file (not counted)
  }
  if (t.has_raw_data()) return static_cast<int64_t>(t.raw_data().size());
  return static_cast<int64_t>(t.float_data_size()) * 4 + t.int32_data_size() * 4 +
         t.int64_data_size() * 8 + t.double_data_size() * 8 + t.uint64_data_size() * 8;
}

void count_graph(const onnx::GraphProto& g, Stats& s, int64_t* nodes) {
  for (const auto& t : g.initializer()) {
    bool external = false;
    int64_t bytes = tensor_bytes(t, &external);
    ++s.initializers;
    s.initializer_bytes += bytes;
    if (external) {
      ++s.external_initializers;
      s.external_bytes += bytes;
    }
  }
  for (const auto& n : g.node()) {
    ++*nodes;
    ++s.ops[n.domain().empty() ? n.op_type() : n.domain() + "::" + n.op_type()];
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count_graph(a.g(), s, nodes);
      for (const auto& sub : a.graphs()) count_graph(sub, s, nodes);
    }
  }
}

int run_stats(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    std::cerr << "torchonnx_bench_export: cannot open " << path << ": " << std::strerror(errno)
              << "\n";
    return 1;
  }
  onnx::ModelProto model;
  bool ok = false;
  {
    google::protobuf::io::FileInputStream file(fd);
    google::protobuf::io::CodedInputStream coded(&file);
    coded.SetTotalBytesLimit(INT_MAX);
    ok = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  close(fd);
  if (!ok) {
    std::cerr << "torchonnx_bench_export: " << path << " is not a valid ONNX ModelProto\n";
    return 1;
  }
  Stats s;
  count_graph(model.graph(), s, &s.graph_nodes);
  for (const auto& f : model.functions()) {
    for (const auto& n : f.node()) {
      ++s.function_nodes;
      ++s.ops[n.domain().empty() ? n.op_type() : n.domain() + "::" + n.op_type()];
    }
  }
  std::string ops;
  for (const auto& [op, count] : s.ops) {
    ops += fmt::format("{}{}: {}", ops.empty() ? "" : ", ", json_string(op), count);
  }
  std::cout << fmt::format(
      "{{\"nodes\": {}, \"graph_nodes\": {}, \"function_nodes\": {}, \"initializers\": {}, "
      "\"initializer_bytes\": {}, \"external_initializers\": {}, \"external_bytes\": {}, "
      "\"onnx_bytes\": {}, \"ops\": {{{}}}}}\n",
      s.graph_nodes + s.function_nodes, s.graph_nodes, s.function_nodes, s.initializers,
      s.initializer_bytes, s.external_initializers, s.external_bytes, fs::file_size(path), ops);
  return 0;
}

// ---------------------------------------------------------------------------
// --write-floor
// ---------------------------------------------------------------------------

int run_write_floor(int64_t bytes, const std::string& dir) {
  constexpr size_t kChunk = size_t{64} << 20;
  // Random bytes, so that no layer below can shortcut zeros.
  std::vector<char> chunk(kChunk);
  std::mt19937_64 rng(42);
  for (size_t i = 0; i + 8 <= kChunk; i += 8) {
    uint64_t v = rng();
    std::memcpy(chunk.data() + i, &v, 8);
  }
  fs::path path = fs::path(dir) / fmt::format("write_floor.{}.tmp", getpid());
  auto start = Clock::now();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::cerr << "torchonnx_bench_export: cannot create " << path << ": " << std::strerror(errno)
              << "\n";
    return 1;
  }
  int64_t left = bytes;
  while (left > 0) {
    size_t n = static_cast<size_t>(std::min<int64_t>(left, kChunk));
    ssize_t w = write(fd, chunk.data(), n);
    if (w < 0) {
      if (errno == EINTR) continue;
      std::cerr << "torchonnx_bench_export: write " << path << ": " << std::strerror(errno) << "\n";
      close(fd);
      fs::remove(path);
      return 1;
    }
    left -= w;
  }
  int rc = fsync(fd);
  close(fd);
  double seconds = seconds_since(start);
  fs::remove(path);
  if (rc != 0) {
    std::cerr << "torchonnx_bench_export: fsync " << path << " failed\n";
    return 1;
  }
  std::cout << fmt::format("{{\"seconds\": {:.6f}, \"bytes\": {}}}\n", seconds, bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string model, inputs, out, stats, dir;
  int64_t floor_bytes = -1;
  int opset = torchonnx::kDefaultOpset;
  bool external_data = false;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
        return args[++i];
      };
      if (a == "--inputs") {
        inputs = value();
      } else if (a == "-o" || a == "--output") {
        out = value();
      } else if (a == "--opset") {
        opset = std::stoi(value());
      } else if (a == "--external-data") {
        external_data = true;
      } else if (a == "--stats") {
        stats = value();
      } else if (a == "--write-floor") {
        floor_bytes = std::stoll(value());
      } else if (a == "--dir") {
        dir = value();
      } else if (!a.empty() && a[0] != '-' && model.empty()) {
        model = a;
      } else {
        throw std::invalid_argument("unknown argument '" + a + "'");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "torchonnx_bench_export: " << e.what() << "\n";
    return usage();
  }
  try {
    if (!stats.empty()) return run_stats(stats);
    if (floor_bytes >= 0) return dir.empty() ? usage() : run_write_floor(floor_bytes, dir);
    if (model.empty() || inputs.empty() || out.empty()) return usage();
    return run_export(model, inputs, out, opset, external_data);
  } catch (const std::exception& e) {
    std::cerr << "torchonnx_bench_export: " << e.what() << "\n";
    return 1;
  }
}
