// The torchvision zoo (issue 9): every model of tests/fixtures/make_zoo.py, exported from its .pt,
// run in ONNX Runtime and compared with libtorch's outputs (torchonnx::verify where ONNX Runtime
// runs in-process, else tools/verify/verify.mjs); detection and segmentation models again on an
// image of another size (exported with dynamic image axes).
//
// Models: $TORCHONNX_ZOO_MODELS ("all": every fixture in the folder; or a comma-separated list),
// else the fast subset of tests/CMakeLists.txt (TORCHONNX_ZOO_DEFAULT). Fixtures in
// $TORCHONNX_ZOO_DIR, else TORCHONNX_ZOO_FIXTURE_DIR. With $TORCHONNX_ZOO_TABLE set, the results
// are written there as a Markdown table (scripts/zoo.sh writes docs/zoo.md so).
#include <ATen/ATen.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

#include "frontend/frontend.h"
#include "onnx/tensor_proto.h"
#include "support/harness.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string fixture_dir() {
  const char* dir = std::getenv("TORCHONNX_ZOO_DIR");
  return dir && *dir ? dir : TORCHONNX_ZOO_FIXTURE_DIR;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::string> zoo_models() {
  const char* env = std::getenv("TORCHONNX_ZOO_MODELS");
  const std::string which = env && *env ? env : TORCHONNX_ZOO_DEFAULT;
  if (which != "all") return split(which, ',');
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fixture_dir(), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// One row of the table.
struct Row {
  std::string model, kind;
  int opset = 0;
  bool exported = false;
  std::string matches;  // "yes", or what failed
  double max_error = 0;
  std::string size2;  // the other image size: "yes", "-" or what failed
  int64_t nodes = 0, parameters = 0;
  double export_seconds = 0;
};

std::mutex rows_mutex;
std::vector<Row> rows;

// The largest max_abs_err=... of an ORT report (verify.mjs).
double max_error(const std::string& report) {
  static const std::regex re("max_abs_err=([0-9.eE+-]+|inf|nan)");
  double worst = 0;
  for (std::sregex_iterator it(report.begin(), report.end(), re), end; it != end; ++it) {
    const std::string v = (*it)[1];
    worst = std::max(worst, v == "inf" || v == "nan" ? INFINITY : std::stod(v));
  }
  return worst;
}

int64_t count_nodes(const onnx::GraphProto& graph) {
  int64_t n = 0;
  for (const auto& node : graph.node()) {
    ++n;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) n += count_nodes(attr.g());
      for (const auto& g : attr.graphs()) n += count_nodes(g);
    }
  }
  return n;
}

// The detection models need torchvision's operators (torchvision::nms, ...) registered.
void load_torchvision_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::ifstream in(fs::path(fixture_dir()) / "torchvision_ops.txt");
    std::string path;
    std::getline(in, path);
    ASSERT_FALSE(path.empty()) << "torchvision_ops.txt is missing: run make_zoo.py";
    ASSERT_NE(dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  });
}

// input_0.pb, input_1.pb, ... of a folder.
std::vector<at::Tensor> read_inputs(const fs::path& dir) {
  std::vector<at::Tensor> out;
  for (int i = 0; fs::exists(dir / fmt::format("input_{}.pb", i)); ++i)
    out.push_back(read_tensor_file((dir / fmt::format("input_{}.pb", i)).string()));
  return out;
}

// forward()'s arguments: detection models take one List[Tensor] of images.
std::vector<c10::IValue> arguments(const std::string& kind, const std::vector<at::Tensor>& flat) {
  if (kind == "detection") return {c10::List<at::Tensor>(flat)};
  return {flat.begin(), flat.end()};
}

// The largest |value| of the floating-point outputs of a test-data folder.
double largest_output(const fs::path& dir) {
  double largest = 0;
  for (int k = 0; fs::exists(dir / fmt::format("output_{}.pb", k)); ++k) {
    const at::Tensor t = read_tensor_file((dir / fmt::format("output_{}.pb", k)).string());
    if (t.is_floating_point() && t.numel() > 0)
      largest = std::max(largest, t.abs().max().item<double>());
  }
  return largest;
}

// Libtorch's outputs on `flat` with the inputs, as ONNX test data in a fresh folder.
std::string reference(const std::string& hint, const torch::jit::Module& model,
                      const std::string& kind, const std::vector<at::Tensor>& flat) {
  std::string dir = temp_dir(hint);
  write_test_data(dir, std::vector<c10::IValue>(flat.begin(), flat.end()),
                  frontend::run_module(model, arguments(kind, flat)));
  return dir;
}

void run_model(const std::string& name, int opset_override) {
  const fs::path dir(fixture_dir());
  std::ifstream meta_file(dir / (name + ".json"));
  ASSERT_TRUE(meta_file) << (dir / (name + ".json")) << " is missing: run make_zoo.py";
  const json meta = json::parse(meta_file);
  Row row;
  row.model = name;
  row.kind = meta.at("kind");
  row.opset = opset_override ? opset_override : meta.at("opset").get<int>();
  row.parameters = meta.value("parameters", int64_t{0});
  const bool detection = row.kind == "detection";
  if (detection) load_torchvision_ops();

  torch::jit::Module model = load_model((dir / (name + ".pt")).string());
  const std::vector<at::Tensor> flat = read_inputs(dir / name);
  ASSERT_FALSE(flat.empty()) << "no inputs for " << name;
  const std::string ref = reference(name + "_ref", model, row.kind, flat);
  // A constant output (a head initialized to zero) would match anything.
  std::vector<at::Tensor> expected;
  for (int k = 0; fs::exists(fs::path(ref) / fmt::format("output_{}.pb", k)); ++k) {
    expected.push_back(read_tensor_file((fs::path(ref) / fmt::format("output_{}.pb", k)).string()));
  }
  EXPECT_EQ(outputs_without_signal(expected), "") << name << ": the comparison would be vacuous";

  ExportOptions options;
  options.opset_version = row.opset;
  for (size_t i = 0; i < flat.size(); ++i)
    options.input_names.push_back(fmt::format("input_{}", i));
  for (const auto& [input, axes] : meta.at("dynamic_axes").items()) {
    for (const auto& [axis, label] : axes.items())
      options.dynamic_axes[input][std::stoll(axis)] = label.get<std::string>();
  }
  const std::string out = temp_dir(fmt::format("{}_opset{}", name, row.opset)) + "/model.onnx";
  const auto start = std::chrono::steady_clock::now();
  try {
    export_model(model, arguments(row.kind, flat), out, options);
    row.exported = true;
  } catch (const std::exception& e) {
    row.matches = "export failed";
    ADD_FAILURE() << name << " does not export at opset " << row.opset << ": " << e.what();
  }
  row.export_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (row.exported) {
    row.nodes = count_nodes(read_model_file(out).graph());
    // atol: relative to the largest |output|, except for detection (make_zoo.py, TOLERANCE).
    const double rtol = meta.at("rtol");
    // Boxes and keypoints: 1e-3 of the image's larger side (0.32 px at 320x320). libtorch's own
    // fp32 boxes differ from its fp64 ones by 0.03 px (median) to 0.16 px (95th percentile) on
    // retinanet_resnet50_fpn_v2 at 256x384, where the transform's bilinear resize amplifies
    // rounding; at 320x320 (no resize) by 0.002 px to 0.013 px.
    auto pixel_atol = [&](const std::vector<at::Tensor>& images) {
      return detection ? 1e-3 * std::max(images[0].size(1), images[0].size(2)) : 0.0;
    };
    // Runs the model on one test-data folder (the images `images`); row.max_error takes its
    // error (relative to the largest |output|, except for detection). With ONNX Runtime
    // in-process (Debian 13) through torchonnx::verify (the report is its table), else through
    // tools/verify/verify.mjs; the same tolerances.
    auto compare = [&](const std::string& data, const std::vector<at::Tensor>& images) {
      // The error reported is relative to the largest |output|; the comparison scales atol per
      // output, capped at 10x its median |value| as everywhere (Tolerance), so that a few
      // extreme values do not widen it for the rest.
      const double scale = detection ? 1.0 : std::max(largest_output(data), 1e-30);
      const Tolerance tol = detection ? Tolerance{rtol, meta.at("atol").get<double>(), 0}
                                      : Tolerance{rtol, 0, meta.at("atol").get<double>()};
      if (!in_process_verify()) {
        OrtResult r = run_in_ort(out, data, tol, detection, pixel_atol(images));
        row.max_error = std::max(row.max_error, max_error(r.report) / scale);
        return r;
      }
      VerifyOptions v = verify_options(tol);
      v.detections = detection;
      v.pixel_atol = pixel_atol(images);
      // The export is made; without its dynamic axes verify compares these images only (with
      // them it would also grow the axes of random images: size2 is the other size here).
      ExportOptions run = options;
      run.dynamic_axes.clear();
      const VerifyResult r = verify_export(model, arguments(row.kind, images), out, run, v, data);
      for (const auto& set : r.input_sets) {
        for (const auto& o : set.outputs) {
          row.max_error = std::max(row.max_error, o.max_abs_error / scale);
        }
      }
      return OrtResult{r.pass, format_verify_result(r)};
    };
    OrtResult result = compare(ref, flat);
    row.matches = result.ok ? "yes" : "no";
    EXPECT_TRUE(result.ok) << name << " at opset " << row.opset << ":\n" << result.report;
    row.size2 = "-";
    if (fs::exists(dir / name / "size2")) {
      const std::vector<at::Tensor> flat2 = read_inputs(dir / name / "size2");
      const std::string ref2 = reference(name + "_ref2", model, row.kind, flat2);
      OrtResult result2 = compare(ref2, flat2);
      row.size2 = result2.ok ? "yes" : "no";
      EXPECT_TRUE(result2.ok) << name << " at opset " << row.opset << " on another image size:\n"
                              << result2.report;
    }
    fs::remove_all(fs::path(out).parent_path());
  }
  std::lock_guard<std::mutex> lock(rows_mutex);
  rows.push_back(row);
}

class Zoo : public ::testing::TestWithParam<std::string> {};

// The model at the opset of its fixture (17; detection 11).
TEST_P(Zoo, MatchesLibtorchInOrt) {
  run_model(GetParam(), 0);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, Zoo, ::testing::ValuesIn(zoo_models()),
                         [](const auto& info) { return info.param; });

// Detection models at the newest opset too.
class ZooDetection : public ::testing::TestWithParam<std::string> {};
TEST_P(ZooDetection, MatchesAtOpset17) {
  run_model(GetParam(), 17);
}

// Every model at opset 21 on a build that exports it (onnx >= 1.16: Debian 13).
class ZooAtOpset21 : public ::testing::TestWithParam<std::string> {};
TEST_P(ZooAtOpset21, MatchesLibtorchInOrt) {
  if (highest_opset() < 21) {
    GTEST_SKIP() << "this build exports opsets up to " << highest_opset()
                 << " (its onnx library's checker knows no later one)";
  }
  run_model(GetParam(), 21);
}
INSTANTIATE_TEST_SUITE_P(Torchvision, ZooAtOpset21, ::testing::ValuesIn(zoo_models()),
                         [](const auto& info) { return info.param; });

std::vector<std::string> detection_models() {
  std::vector<std::string> out;
  for (const auto& name : zoo_models()) {
    std::ifstream in(fs::path(fixture_dir()) / (name + ".json"));
    if (in && json::parse(in).value("kind", "") == "detection") out.push_back(name);
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Torchvision, ZooDetection, ::testing::ValuesIn(detection_models()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ZooDetection);

// Writes $TORCHONNX_ZOO_TABLE at the end.
class TableWriter : public ::testing::Environment {
 public:
  void TearDown() override {
    const char* path = std::getenv("TORCHONNX_ZOO_TABLE");
    if (!path || !*path) return;
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.kind, a.model, a.opset) < std::tie(b.kind, b.model, b.opset);
    });
    std::ofstream out(path);
    out << "| model | kind | opset | exports | matches | other size | max error | nodes | "
           "parameters | export time (s) |\n"
        << "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows) {
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {:.2g} | {} | {:.1f}M | {:.2f} |\n",
                         r.model, r.kind, r.opset, r.exported ? "yes" : "no", r.matches, r.size2,
                         r.max_error, r.nodes, r.parameters / 1e6, r.export_seconds);
    }
  }
};
const auto* const table_writer = ::testing::AddGlobalTestEnvironment(new TableWriter);

}  // namespace
}  // namespace torchonnx::testing
