// forward() of a module as capture_module and run_module read it: the method, its arguments
// checked and coerced against its schema, and its graph with every call inlined.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <vector>

namespace torchonnx::frontend {

// The module's forward(), or the first overload of it over tensors and numbers (a module scripted
// on its own with an overloaded forward); kModelLoad when there is none.
const torch::jit::Method forward_of(const torch::jit::Module& module);

// kInvalidArgument naming the argument when `args` (without self) do not fit `schema`.
void check_arguments(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args);

// `args` with the 0-d tensors given for int/float/bool arguments as those scalars.
std::vector<c10::IValue> coerce_arguments(const c10::FunctionSchema& schema,
                                          const std::vector<c10::IValue>& args);

// Every call of `graph` inlined, in linear time (Note [Linear-time inlining]), and its scalar
// constants wrapped (Note [Scalars recorded as tensors]).
void inline_graph(torch::jit::Graph& graph);

}  // namespace torchonnx::frontend
