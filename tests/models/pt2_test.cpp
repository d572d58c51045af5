// torch.export programs (.pt2) in (issues 39 and 59): the programs of tests/fixtures/make_pt2.py
// (made by the build's own PyTorch at test time: 2.6 on Debian 13 writes the layout of 2.3 to 2.7,
// 2.14 on forky the PT2 archive of 2.8+), each loaded, exported with the program's own example
// inputs and dynamic dims, and run in ONNX Runtime at the example's sizes and at others within
// the dims' ranges against the outputs of the program itself (ExportedProgram.module() in
// Python). Damaged archives are refused by name. The libtorch 1.13 build refuses a .pt2 and names
// the build that reads it.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <torch/script.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>

#include "common/mapped_file.h"
#include "frontend/frontend.h"
#include "frontend/pt2_archive.h"
#include "support/harness.h"
#include "torchonnx/exported_program.h"
#include "torchonnx/io.h"

namespace torchonnx::testing {
namespace {

namespace fs = std::filesystem;

// A .pt2 committed for the libtorch 1.13 build, which cannot make one.
const fs::path kCommitted = fs::path(TORCHONNX_SOURCE_DIR) / "tests/fixtures/pt2/linear_bn.pt2";

#if TORCH_VERSION_MAJOR >= 2

const fs::path kDir = fs::path(TORCHONNX_PT2_FIXTURE_DIR);

// Whether the build's PyTorch wrote the PT2 archive layout (2.8+: forky) or 2.6's.
bool pt2_layout() {
  static const bool pt2 = [] {
    auto archive = frontend::Pt2Archive::open((kDir / "linear_bn.pt2").string());
    return archive && archive->layout() == frontend::Pt2Archive::Layout::kPt2Archive;
  }();
  return pt2;
}

struct Pt2Model {
  const char* name;
  size_t dims;  // how many dynamic dims its first input has
};

// The symbols of the first input's dynamic dims as PyTorch names them (make_pt2.py's
// NAME/symbols.txt): "s0" and "2*s1" in PyTorch 2.6, hashed names such as "s77" in 2.14. The ONNX
// model's dim_params must be these.
std::vector<std::string> symbols(const std::string& name) {
  std::ifstream in(kDir / name / "symbols.txt");
  std::vector<std::string> out;
  for (std::string s; in >> s;) out.push_back(s);
  return out;
}

const Pt2Model kModels[] = {
    {"linear_bn", 1},
    {"resnet18", 1},
    {"mobilenet_v3_small", 1},
    {"mobilenet_v2", 1},
    {"squeezenet1_0", 1},
    {"shufflenet_v2_x1_0", 1},
    {"efficientnet_b0", 1},
    {"alexnet", 1},
    {"vgg11", 1},
    {"resnet50", 1},
    {"densenet121", 1},
    {"googlenet", 1},
    {"regnet_y_400mf", 1},
    {"mnasnet0_5", 1},
    {"transformer_encoder", 2},
    {"shared_weights", 1},  // tied weights, a buffer that views another's storage
    {"lstm_lm", 1},
    {"tiny_gpt", 2},
    {"llama_block", 2},
    {"cond", 1},
    {"resnet18_core", 1},
    {"tiny_gpt_core", 2},
    {"llama_block_core", 2},
    {"while_loop", 1},  // a data-dependent trip count
    {"map", 1},
    {"scan", 2},   // forward and in reverse
    {"pairs", 1},  // a derived dim: 2 * half
    {"take", 1},   // and a data-dependent size
};

std::vector<c10::IValue> read_inputs(const fs::path& dir) {
  std::vector<c10::IValue> inputs;
  for (int i = 0; fs::exists(dir / fmt::format("input_{}.pb", i)); ++i) {
    inputs.emplace_back(read_tensor_file((dir / fmt::format("input_{}.pb", i)).string()));
  }
  return inputs;
}

class Pt2ModelTest : public ::testing::TestWithParam<Pt2Model> {};

TEST_P(Pt2ModelTest, ExportsAndMatchesTheProgramInOrtAtSeveralSizes) {
  const Pt2Model& m = GetParam();
  const fs::path file = kDir / (std::string(m.name) + ".pt2");
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: run the make_pt2_fixtures test";
  ASSERT_TRUE(is_exported_program(file.string()));
  const ExportedProgram program = load_exported_program(file.string());

  // The loaded module is the program: in libtorch, on the example inputs, it gives the outputs
  // Python's ExportedProgram gave.
  const fs::path example = kDir / m.name / "size_0";
  const std::vector<c10::IValue> saved = read_inputs(example);
  ASSERT_EQ(program.example_inputs.size(), saved.size());
  for (size_t k = 0; k < saved.size(); ++k) {
    EXPECT_TRUE(program.example_inputs[k].toTensor().equal(saved[k].toTensor())) << k;
  }
  const std::vector<at::Tensor> ours = frontend::run_module(program.module, saved);
  for (size_t k = 0; k < ours.size(); ++k) {
    const at::Tensor want = read_tensor_file((example / fmt::format("output_{}.pb", k)).string());
    EXPECT_TRUE(at::allclose(ours[k], want, 1e-4, 1e-5)) << m.name << " output " << k;
  }

  ExportOptions options;
  options.opset_version = 17;
  const std::string out = temp_dir(std::string(m.name) + "_pt2") + "/model.onnx";
  export_program(program, out, options);
  const onnx::ModelProto model = read_model_file(out);
  std::vector<std::string> dims;
  for (const auto& d : model.graph().input(0).type().tensor_type().shape().dim()) {
    if (d.has_dim_param()) dims.push_back(d.dim_param());
  }
  EXPECT_EQ(dims, symbols(m.name)) << m.name;
  EXPECT_EQ(dims.size(), m.dims) << m.name;

  const Tolerance tol{.rtol = 1e-3, .atol = 1e-7, .atol_scale = 1e-4};
  for (int k = 0; fs::exists(kDir / m.name / fmt::format("size_{}", k)); ++k) {
    const fs::path data = kDir / m.name / fmt::format("size_{}", k);
    const OrtResult r = run_in_ort(out, data.string(), tol);
    EXPECT_TRUE(r.ok) << m.name << " at " << data.filename() << ": " << r.report;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, Pt2ModelTest, ::testing::ValuesIn(kModels),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Pt2, ParametersKeepTheProgramsNames) {
  const ExportedProgram program = load_exported_program((kDir / "linear_bn.pt2").string());
  std::set<std::string> names;
  for (const auto& p : program.module.named_attributes(/*recurse=*/true)) names.insert(p.name);
  for (const char* name : {"fc.weight", "fc.bias", "bn.running_mean", "scale"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  EXPECT_EQ(program.input_names, std::vector<std::string>{"x"});
  const std::string batch = symbols("linear_bn").at(0);
  EXPECT_EQ(program.dynamic_axes.at("x").at(0), batch);
  EXPECT_EQ(program.dim_ranges.at(batch), (std::pair<int64_t, int64_t>{1, 64}));
  // Without folding, the initializers are the parameters by those names.
  ExportOptions options;
  options.do_constant_folding = false;
  const onnx::ModelProto model =
      parse_model(export_model_to_bytes(program.module, program.example_inputs, options));
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  EXPECT_TRUE(initializers.count("fc.weight")) << model.graph().DebugString().substr(0, 2000);
}

// The program's runtime asserts, which ONNX cannot check, are left out with a note.
// while_loop is an ONNX Loop from opset 11; map and scan, whose per-step results are lists of
// dynamic shape here, from opset 13 (Loop carries sequences), and before it a clear error.
TEST(Pt2, LoopsExportAtTheOpsetsOnnxAllows) {
  const Tolerance tol{.rtol = 1e-3, .atol = 1e-7, .atol_scale = 1e-4};
  for (const auto& [name, opset] : std::vector<std::pair<std::string, int>>{
           {"while_loop", 11}, {"while_loop", 13}, {"map", 13}, {"scan", 13}, {"scan", 20}}) {
    const ExportedProgram program = load_exported_program((kDir / (name + ".pt2")).string());
    ExportOptions options;
    options.opset_version = opset;
    const std::string out = temp_dir(fmt::format("{}_pt2_{}", name, opset)) + "/model.onnx";
    export_program(program, out, options);
    for (int k = 0; fs::exists(kDir / name / fmt::format("size_{}", k)); ++k) {
      const fs::path data = kDir / name / fmt::format("size_{}", k);
      const OrtResult r = run_in_ort(out, data.string(), tol);
      EXPECT_TRUE(r.ok) << name << " at opset " << opset << ", " << data.filename() << ": "
                        << r.report;
    }
  }
  const ExportedProgram map = load_exported_program((kDir / "map.pt2").string());
  ExportOptions options;
  options.opset_version = 11;
  try {
    export_program(map, temp_dir("map_pt2_11") + "/model.onnx", options);
    ADD_FAILURE() << "map exported at opset 11";
  } catch (const ExportError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConversion) << e.what();
    EXPECT_NE(std::string(e.what()).find("opset_version >= 13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("make_pt2.py:"), std::string::npos) << e.what();
  }
}

// torch.export.save puts torch.save's archive of the weights wherever the .pt2's records before
// it end: the weights stay in the mapping of the file when they lie at a multiple of their element
// size (aligned.pt2: at a multiple of 64), and are copied to aligned memory when they do not
// (misaligned.pt2: 2 bytes past), tied tensors still sharing their copy. Both give the values.
TEST(Pt2, WeightsStayInTheFileWhereTheyAreAlignedAndAreCopiedWhereNot) {
  const ExportedProgram reference = load_exported_program((kDir / "linear_bn.pt2").string());
  std::map<std::string, at::Tensor> weights;
  for (const auto& p : reference.module.named_attributes(/*recurse=*/true)) {
    if (p.value.isTensor()) weights[p.name] = p.value.toTensor();
  }
  for (const char* name : {"aligned.pt2", "misaligned.pt2"}) {
    const bool aligned = std::string(name) == "aligned.pt2";
    const ExportedProgram program = load_exported_program((kDir / name).string());
    size_t tensors = 0;
    for (const auto& p : program.module.named_attributes(/*recurse=*/true)) {
      if (!p.value.isTensor()) continue;
      const at::Tensor t = p.value.toTensor();
      ++tensors;
      EXPECT_EQ(unchanged_file_bytes(t).has_value(), aligned) << name << " " << p.name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % t.element_size(), 0u) << p.name;
      ASSERT_TRUE(weights.count(p.name)) << p.name;
      EXPECT_TRUE(t.equal(weights.at(p.name))) << name << " " << p.name;
    }
    EXPECT_GE(tensors, 6u) << name;
    const std::vector<at::Tensor> got =
        frontend::run_module(program.module, program.example_inputs);
    const std::vector<at::Tensor> want =
        frontend::run_module(reference.module, reference.example_inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(got[k].equal(want[k])) << name << " " << k;
  }
}

// The ATen targets of program `name`, as make_pt2.py's manifest.tsv lists them.
std::string manifest_targets(const std::string& name) {
  std::ifstream in(kDir / "manifest.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "\t", 0) == 0) return line;
  }
  return "";
}

// PyTorch 2.6 asserts the derived dim of pairs at run time, 2.14 does not: the note is there
// exactly when the program has asserts (take has them in both).
TEST(Pt2, RuntimeAssertsAreDroppedWithANote) {
  for (const char* name : {"pairs", "take"}) {
    const ExportedProgram program =
        load_exported_program((kDir / (std::string(name) + ".pt2")).string());
    const std::string targets = manifest_targets(name);
    ASSERT_FALSE(targets.empty()) << name << " is not in manifest.tsv";
    const bool asserts = targets.find("_assert_scalar") != std::string::npos ||
                         targets.find("sym_constrain_range") != std::string::npos;
    EXPECT_TRUE(asserts || std::string(name) == "pairs") << name << ": " << targets;
    ASSERT_EQ(program.notes.size(), asserts ? 1u : 0u) << name;
    if (asserts) {
      EXPECT_NE(program.notes[0].find("runtime asserts"), std::string::npos) << program.notes[0];
    }
    const std::string ir = program.module.get_method("forward").graph()->toString();
    EXPECT_EQ(ir.find("_assert_scalar"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("sym_constrain_range"), std::string::npos) << ir;
  }
}

TEST(Pt2, UnconvertibleTargetsAreNamedWithTheirSourceLocation) {
  try {
    load_exported_program((kDir / "bad_target.pt2").string());
    FAIL() << "no error";
  } catch (const ExportError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupportedOp);
    EXPECT_NE(std::string(e.what()).find("torch.ops.aten.no_such_op.default"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("make_pt2.py:"), std::string::npos) << e.what();
  }
}

TEST(Pt2, TheCliExportsPrintsAndVerifiesAPt2WithoutInputs) {
  const std::string dir = temp_dir("pt2_cli");
  const std::string file = (kDir / "linear_bn.pt2").string();
  CliResult r = run_cli(fmt::format("export {} -o {}/m.onnx", file, dir));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const onnx::ModelProto model = read_model_file(dir + "/m.onnx");
  const std::string batch = symbols("linear_bn").at(0);
  EXPECT_EQ(model.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), batch);
  r = run_cli(fmt::format("print {}", file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Gemm"), std::string::npos) << r.output;
  r = run_cli(fmt::format("unconvertible {}", file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_cli(fmt::format("verify {}", file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // --input-names renames the program's dynamic dims with its inputs.
  r = run_cli(fmt::format("export {} -o {}/n.onnx --input-names features", file, dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const onnx::ModelProto named = read_model_file(dir + "/n.onnx");
  EXPECT_EQ(named.graph().input(0).name(), "features");
  EXPECT_EQ(named.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), batch);
}

TEST(Pt2, DamagedArchivesGiveClearErrors) {
  struct Case {
    const char* file;
    int exit_code;
    const char* says;
  };
  std::vector<Case> cases = {
      {"bad_truncated.pt2", 3, "save the program again"},
      {"bad_version.pt2", 3, "schema version 99."},
      {"bad_target.pt2", 4, "torch.ops.aten.no_such_op.default"},
      {"bad_weight.pt2", 3, "fc.missing_weight"},
      {"bad_control.pt2", 4, "a higher-order op this reader does not build"},
  };
  if (pt2_layout()) {  // the PT2 archive's own damage
    cases.push_back({"bad_payload.pt2", 3, "data/weights/weight_0"});
    cases.push_back({"bad_format.pt2", 3, "archive_format is 'pt3'"});
  }
  const std::string dir = temp_dir("pt2_bad");
  for (const Case& c : cases) {
    const CliResult r =
        run_cli(fmt::format("export {} -o {}/m.onnx", (kDir / c.file).string(), dir));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.file << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.file << ": " << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("torch.jit.save"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir + "/m.onnx")) << c.file;
    // Past the zip itself, every error names the layout and the schema version found.
    if (std::string(c.file) != "bad_truncated.pt2" && std::string(c.file) != "bad_format.pt2") {
      EXPECT_NE(r.output.find(pt2_layout() ? "PT2 archive of PyTorch 2.8+" : "PyTorch 2.3 to 2.7"),
                std::string::npos)
          << c.file << ": " << r.output;
      EXPECT_NE(r.output.find("schema "), std::string::npos) << c.file << ": " << r.output;
    }
  }
}

// PyTorch 2.8+ stores each storage once in a PT2 archive, however many weights view it: tied
// weights and a buffer that views another's storage come back sharing it, each with its sizes,
// strides and offset, in the mapping of the file.
TEST(Pt2, TiedAndViewWeightsShareTheirStorage) {
  const ExportedProgram program = load_exported_program((kDir / "shared_weights.pt2").string());
  std::map<std::string, at::Tensor> w;
  for (const auto& p : program.module.named_attributes(/*recurse=*/true)) {
    if (p.value.isTensor()) w[p.name] = p.value.toTensor();
  }
  // PyTorch 2.6's signature names the tied weight b.weight for both reads, 2.14's by each name.
  ASSERT_TRUE(w.count("base") && w.count("view") && (w.count("a.weight") || w.count("b.weight")))
      << w.size();
  EXPECT_EQ(w.at("view").sizes(), (std::vector<int64_t>{5, 5}));
  EXPECT_TRUE(w.at("view").equal(w.at("base").slice(0, 1).slice(1, 0, 20, 4)));
  if (pt2_layout()) {
    EXPECT_EQ(w.at("view").storage().data(), w.at("base").storage().data());
    EXPECT_EQ(w.at("view").storage_offset(), 20);
    EXPECT_EQ(w.at("view").strides(), (std::vector<int64_t>{20, 4}));
    EXPECT_TRUE(unchanged_file_bytes(w.at("base")).has_value());
    ASSERT_TRUE(w.count("a.weight") && w.count("b.weight"));
    EXPECT_EQ(w.at("b.weight").storage().data(), w.at("a.weight").storage().data());
  }
}

// A PT2 archive with two programs: each exports by its name (C++ and --program); without one, or
// with one it does not hold, the error lists the names.
TEST(Pt2, AnArchiveOfSeveralProgramsExportsTheOneNamed) {
  if (!pt2_layout()) GTEST_SKIP() << "PyTorch 2.6 writes one program per archive";
  const std::string file = (kDir / "two_programs.pt2").string();
  for (const std::string name : {"", "nope"}) {
    try {
      load_exported_program(file, name);
      ADD_FAILURE() << "no error for '" << name << "'";
    } catch (const ExportError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("'decoder', 'encoder'"), std::string::npos) << e.what();
    }
  }
  const Tolerance tol{.rtol = 1e-3, .atol = 1e-7, .atol_scale = 1e-4};
  const std::string dir = temp_dir("pt2_two");
  for (const auto& [name, data] : std::vector<std::pair<std::string, std::string>>{
           {"encoder", "linear_bn"}, {"decoder", "shared_weights"}}) {
    const CliResult r =
        run_cli(fmt::format("export {} --program {} -o {}/{}.onnx", file, name, dir, name));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (int k = 0; fs::exists(kDir / data / fmt::format("size_{}", k)); ++k) {
      const OrtResult o = run_in_ort(dir + "/" + name + ".onnx",
                                     (kDir / data / fmt::format("size_{}", k)).string(), tol);
      EXPECT_TRUE(o.ok) << name << ": " << o.report;
    }
  }
  const CliResult r = run_cli(fmt::format("export {} -o {}/m.onnx", file, dir));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--program"), std::string::npos) << r.output;
}

TEST(Pt2, LoadModelPointsAPt2ToItsLoader) {
  try {
    load_model(kCommitted.string());
    FAIL() << "no error";
  } catch (const ExportError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kModelLoad);
    EXPECT_NE(std::string(e.what()).find("load_exported_program"), std::string::npos) << e.what();
  }
}

#else

TEST(Pt2, TheLibtorch1BuildRefusesAPt2NamingTheBuildThatReadsIt) {
  ASSERT_TRUE(is_exported_program(kCommitted.string()));
  const std::string dir = temp_dir("pt2_old");
  const CliResult r = run_cli(fmt::format("export {} -o {}/m.onnx", kCommitted.string(), dir));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("Debian 13"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/m.onnx"));
}

#endif

}  // namespace
}  // namespace torchonnx::testing
