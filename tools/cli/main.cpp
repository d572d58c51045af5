// The torchonnx command line.
//   torchonnx export MODEL.pt -o OUT.onnx (--inputs DIR | --input SHAPE[:DTYPE] ...) [--opset N]
//             [--input-names a,b] [--output-names y,z] [--verbose] [--save-test-data DIR]
//   torchonnx ops [--opset N]
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/script.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "frontend/frontend.h"
#include "onnx/dtype.h"
#include "onnx/tensor_proto.h"
#include "torchonnx/export.h"
#include "torchonnx/operators.h"
#include "version.h"

namespace fs = std::filesystem;
using torchonnx::ErrorCode;
using torchonnx::ExportError;

namespace {

// "1x3x224x224" or "2x7:int64" → a random tensor (normal for floats, 0..9 for ints, bools 0/1).
at::Tensor make_input(const std::string& spec) {
  auto colon = spec.find(':');
  std::string dims_text = spec.substr(0, colon);
  at::ScalarType type =
      colon == std::string::npos ? at::kFloat : torchonnx::parse_dtype(spec.substr(colon + 1));
  std::vector<int64_t> dims;
  if (dims_text != "scalar") {
    size_t start = 0;
    while (start <= dims_text.size()) {
      size_t x = dims_text.find('x', start);
      std::string part = dims_text.substr(start, x == std::string::npos ? x : x - start);
      size_t used = 0;
      long long d = -1;
      try {
        d = std::stoll(part, &used);
      } catch (const std::exception&) {
      }
      if (part.empty() || used != part.size() || d < 0 || d > (1LL << 31)) {
        throw ExportError(ErrorCode::kInvalidArgument,
                          fmt::format("--input '{}': '{}' is not a valid dim; write dims as "
                                      "1x3x224x224[:dtype], or 'scalar'",
                                      spec, part));
      }
      dims.push_back(d);
      if (x == std::string::npos) break;
      start = x + 1;
    }
  }
  int64_t numel = 1;
  for (auto d : dims) {
    if (d > 0 && numel > (int64_t{1} << 31) / d) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("--input '{}' has more than 2^31 elements", spec));
    }
    numel *= d;
  }
  auto opts = at::TensorOptions().dtype(type);
  if (at::isFloatingType(type)) return at::randn(dims, opts);
  if (type == at::kBool) return at::randint(0, 2, dims, opts);
  return at::randint(0, 10, dims, opts);
}

std::vector<c10::IValue> read_inputs(const std::string& dir) {
  if (!fs::is_directory(dir)) {
    throw ExportError(ErrorCode::kIo, "--inputs: '" + dir + "' is not a folder");
  }
  std::vector<c10::IValue> inputs;
  for (int i = 0;; ++i) {
    fs::path p = fs::path(dir) / fmt::format("input_{}.pb", i);
    if (!fs::exists(p)) break;
    inputs.emplace_back(torchonnx::read_tensor_file(p.string()));
  }
  if (inputs.empty()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "--inputs: '" + dir + "' holds no input_0.pb (ONNX test-data layout)");
  }
  return inputs;
}

void save_test_data(const torch::jit::Module& model, const std::vector<c10::IValue>& inputs,
                    const std::string& dir) {
  auto outputs = torchonnx::frontend::run_module(model, inputs);
  std::vector<at::Tensor> tensors;
  for (const auto& v : inputs) {
    tensors.push_back(v.isTensor() ? v.toTensor() : at::scalar_to_tensor(v.toScalar()));
  }
  torchonnx::write_test_data(dir, tensors, outputs);
}

// `torchonnx ops`: one "op<TAB>since-until" line per converter, sorted (tests/golden/ops.txt).
int print_operators(int opset) {
  if (opset != 0 && (opset < torchonnx::kMinOpset || opset > torchonnx::kMaxOpset)) {
    std::cerr << fmt::format(
        "torchonnx: error: --opset {} is out of range: torchonnx exports opsets "
        "{} to {}\n",
        opset, torchonnx::kMinOpset, torchonnx::kMaxOpset);
    return static_cast<int>(ErrorCode::kInvalidArgument);
  }
  for (const auto& op : torchonnx::supported_operators(opset)) {
    std::cout << fmt::format("{}\t{}-{}\n", op.name, op.since, op.until);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"torchonnx: export TorchScript models to ONNX, without Python"};
  app.set_version_flag("--version", std::string("torchonnx ") + torchonnx::kVersion);
  app.require_subcommand(1);

  auto* exp = app.add_subcommand("export", "Export a TorchScript .pt file to ONNX");
  std::string model_path, out_path, inputs_dir, save_dir;
  std::vector<std::string> input_specs, input_names, output_names;
  torchonnx::ExportOptions options;
  exp->add_option("model", model_path,
                  "TorchScript file (torch.jit.save of a traced or scripted module)")
      ->required();
  exp->add_option("-o,--output", out_path, "The .onnx file to write")->required();
  auto* inputs_opt = exp->add_option("--inputs", inputs_dir,
                                     "Folder with input_0.pb, input_1.pb, ... (serialized "
                                     "TensorProto, one per forward() argument)");
  auto* input_opt = exp->add_option("--input", input_specs,
                                    "A random example argument: SHAPE[:DTYPE], e.g. 1x3x224x224 "
                                    "or 2x7:int64 (repeat per argument)");
  inputs_opt->excludes(input_opt);
  exp->add_option("--opset", options.opset_version, "ONNX opset version (9-17)")
      ->default_val(torchonnx::kDefaultOpset);
  exp->add_option("--input-names", input_names, "Names of the graph inputs, in order")
      ->delimiter(',');
  exp->add_option("--output-names", output_names, "Names of the graph outputs, in order")
      ->delimiter(',');
  exp->add_flag("--verbose", options.verbose, "Print the exported graph");
  exp->add_option("--save-test-data", save_dir,
                  "Write the example inputs and libtorch's outputs as DIR/input_*.pb and "
                  "DIR/output_*.pb");

  auto* ops = app.add_subcommand(
      "ops", "List the operators torchonnx converts, one line per converter: OP<TAB>SINCE-UNTIL");
  int ops_opset = 0;
  ops->add_option("--opset", ops_opset, "Only the operators converted at this opset");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : static_cast<int>(ErrorCode::kInvalidArgument);
  }

  if (ops->parsed()) return print_operators(ops_opset);

  try {
    if (inputs_dir.empty() && input_specs.empty()) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        "no example inputs: pass --inputs DIR or one --input SHAPE[:DTYPE] per "
                        "forward() argument");
    }
    options.input_names = input_names;
    options.output_names = output_names;
    at::manual_seed(0);
    std::vector<c10::IValue> inputs;
    if (!inputs_dir.empty()) {
      inputs = read_inputs(inputs_dir);
    } else {
      for (const auto& spec : input_specs) inputs.emplace_back(make_input(spec));
    }
    torch::jit::Module model = torchonnx::load_model(model_path);
    model.eval();
    torchonnx::export_model(model, inputs, out_path, options);
    if (!save_dir.empty()) save_test_data(model, inputs, save_dir);
    std::cerr << "torchonnx: wrote " << out_path << "\n";
    return 0;
  } catch (const ExportError& e) {
    std::cerr << "torchonnx: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "torchonnx: internal error: " << e.what() << "\n";
    return 1;
  }
}
