#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/serialization/import.h>

#include <filesystem>

#include "frontend/frontend.h"
#include "torchonnx/errors.h"

namespace torchonnx {

torch::jit::Module load_model(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ExportError(ErrorCode::kModelLoad,
                      "model file '" + path + "' does not exist or is not a regular file");
  }
  if (std::filesystem::file_size(path, ec) == 0) {
    throw ExportError(ErrorCode::kModelLoad, "model file '" + path + "' is empty");
  }
  try {
    return torch::jit::load(path);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::string first_line = what.substr(0, what.find('\n'));
    std::string remedy =
        what.find("Unknown builtin op") != std::string::npos ||
                what.find("Unknown type name") != std::string::npos
            ? "It uses a custom op or class that is not registered in this process: load the "
              "library that defines it first."
            : "Save it with torch.jit.save() (of a traced or scripted module) and check the file "
              "is complete.";
    throw ExportError(ErrorCode::kModelLoad, fmt::format("cannot load '{}' as TorchScript: {}\n{}",
                                                         path, first_line, remedy));
  }
}

namespace frontend {

namespace {

void check_arguments(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  const auto& params = schema.arguments();  // params[0] is self
  size_t required = 0;
  for (size_t i = 1; i < params.size(); ++i) {
    if (!params[i].default_value()) required = i;
  }
  const size_t max = params.size() - 1;
  if (args.size() < required || args.size() > max) {
    std::vector<std::string> sig;
    for (size_t i = 1; i < params.size(); ++i) {
      sig.push_back(params[i].name() + ": " + params[i].type()->annotation_str());
    }
    throw ExportError(
        ErrorCode::kInvalidArgument,
        fmt::format("forward({}) takes {}{} argument{} but {} example input{} "
                    "{} given. Remedy: pass one example input per argument, in order.",
                    fmt::join(sig, ", "), required == max ? "" : "at least ", required,
                    required == 1 ? "" : "s", args.size(), args.size() == 1 ? "" : "s",
                    args.size() == 1 ? "was" : "were"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& expected = params[i + 1].type();
    auto actual = c10::unshapedType(args[i].type());
    // A 0-d tensor stands for an int/float/bool argument (test-data files hold only tensors).
    bool scalar_ok = args[i].isTensor() && args[i].toTensor().dim() == 0 &&
                     (expected->kind() == c10::TypeKind::IntType ||
                      expected->kind() == c10::TypeKind::FloatType ||
                      expected->kind() == c10::TypeKind::BoolType);
    if (!scalar_ok && !actual->isSubtypeOf(*expected)) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("example input {} is a {} but forward()'s argument '{}' is a "
                                    "{}. Remedy: pass a value of that type.",
                                    i, actual->annotation_str(), params[i + 1].name(),
                                    expected->annotation_str()));
    }
  }
}

// Converts 0-d tensors given for scalar arguments into the scalars forward() takes.
std::vector<c10::IValue> coerce_arguments(const c10::FunctionSchema& schema,
                                          const std::vector<c10::IValue>& args) {
  std::vector<c10::IValue> out = args;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto kind = schema.arguments()[i + 1].type()->kind();
    if (!out[i].isTensor()) continue;
    const at::Tensor& t = out[i].toTensor();
    if (kind == c10::TypeKind::IntType) out[i] = t.item<int64_t>();
    if (kind == c10::TypeKind::FloatType) out[i] = t.item<double>();
    if (kind == c10::TypeKind::BoolType) out[i] = t.item<bool>();
  }
  return out;
}

const torch::jit::Method forward_of(const torch::jit::Module& module) {
  auto method = module.find_method("forward");
  if (!method) {
    throw ExportError(ErrorCode::kModelLoad,
                      "the module has no forward() method. Remedy: export a module whose "
                      "forward is a TorchScript method (torch.jit.trace / torch.jit.script).");
  }
  return *method;
}

}  // namespace

CapturedGraph capture_module(const torch::jit::Module& module,
                             const std::vector<c10::IValue>& args) {
  auto method = forward_of(module);
  const auto& schema = method.function().getSchema();
  check_arguments(schema, args);
  CapturedGraph out;
  out.graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
  torch::jit::Inline(*out.graph);
  out.parameters = passes::LiftModuleAttributes(*out.graph, module);
  out.example_inputs = coerce_arguments(schema, args);
  // Arguments left to their defaults are constants of the graph.
  const auto& params = schema.arguments();
  for (size_t i = out.example_inputs.size() + 1; i < params.size(); ++i) {
    auto* input = out.graph->inputs().at(out.example_inputs.size());
    torch::jit::WithInsertPoint guard(out.graph->block()->nodes().front());
    input->replaceAllUsesWith(out.graph->insertConstant(*params[i].default_value()));
    out.graph->eraseInput(out.example_inputs.size());
  }
  return out;
}

CapturedGraph capture_trace(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                            const NamedTensors& parameters) {
  torch::jit::Stack inputs(args.begin(), args.end());
  for (const auto& [name, tensor] : parameters) inputs.emplace_back(tensor);
  const size_t num_args = args.size();
  std::pair<std::shared_ptr<torch::jit::tracer::TracingState>, torch::jit::Stack> traced;
  try {
    traced = torch::jit::tracer::trace(
        inputs,
        [&](torch::jit::Stack in) -> torch::jit::Stack {
          in.resize(num_args);
          return {fn(in)};
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false);
  } catch (const ExportError&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw ExportError(
        ErrorCode::kModelRun,
        "tracing the model failed: " + what.substr(0, what.find("\nException raised")) +
            "\nRemedy: check that the example inputs are valid for the model.");
  }
  CapturedGraph out;
  out.graph = traced.first->graph;
  out.example_inputs = args;
  for (const auto& [name, tensor] : parameters) out.parameters.push_back({name, tensor});
  return out;
}

std::vector<at::Tensor> flatten_tensors(const c10::IValue& value) {
  std::vector<at::Tensor> out;
  std::function<void(const c10::IValue&)> walk = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) walk(e);
    } else if (v.isList()) {
      for (const auto& e : v.toListRef()) walk(e);
    } else if (v.isGenericDict()) {
      for (const auto& kv : v.toGenericDict()) walk(kv.value());
    } else if (v.isInt() || v.isDouble() || v.isBool()) {
      out.push_back(at::scalar_to_tensor(v.toScalar()));
    }
  };
  walk(value);
  return out;
}

std::vector<at::Tensor> run_module(const torch::jit::Module& module,
                                   const std::vector<c10::IValue>& args) {
  auto method = forward_of(module);
  check_arguments(method.function().getSchema(), args);
  auto inputs = coerce_arguments(method.function().getSchema(), args);
  try {
    c10::InferenceMode guard;
    return flatten_tensors(method(inputs));
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw ExportError(
        ErrorCode::kModelRun,
        "the model's forward() failed on the example inputs: " + what.substr(0, what.find('\n')) +
            "\nRemedy: check the example inputs' shapes and dtypes.");
  }
}

}  // namespace frontend
}  // namespace torchonnx
