#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>

#include "frontend/forward.h"
#include "torchonnx/errors.h"

namespace torchonnx::frontend {

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

// A module scripted on its own whose forward is overloaded (`torch.jit.script(nn.RNN(...))`:
// forward__0 over a Tensor, forward__1 over a PackedSequence) has no `forward`: the first overload
// whose arguments are tensors, optional tensors or numbers, as the example inputs are.
c10::optional<torch::jit::Method> tensor_overload_of_forward(const torch::jit::Module& module) {
  for (const torch::jit::Method& m : module.get_methods()) {
    if (m.name().rfind("forward__", 0) != 0) continue;
    const auto& arguments = m.function().getSchema().arguments();
    bool plain = arguments.size() > 1;
    for (size_t i = 1; i < arguments.size() && plain; ++i) {
      c10::TypePtr type = arguments[i].type();
      if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
      const auto kind = type->kind();
      plain = kind == c10::TypeKind::TensorType || kind == c10::TypeKind::IntType ||
              kind == c10::TypeKind::FloatType || kind == c10::TypeKind::BoolType;
    }
    if (plain) return m;
  }
  return c10::nullopt;
}

const torch::jit::Method forward_of(const torch::jit::Module& module) {
  auto method = module.find_method("forward");
  if (!method) method = tensor_overload_of_forward(module);
  if (!method) {
    throw ExportError(ErrorCode::kModelLoad,
                      "the module has no forward() method. Remedy: export a module whose "
                      "forward is a TorchScript method (torch.jit.trace / torch.jit.script).");
  }
  return *method;
}

}  // namespace torchonnx::frontend
