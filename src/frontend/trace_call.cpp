// call_scripted: scripted code called from a traced function keeps its control flow.
//
// libtorch's tracer records the aten ops that run, so a scripted loop called while tracing would
// be unrolled. Python's tracer avoids that by recording a call node instead (runAndInsertCall in
// torch/csrc/jit/python/pybind_utils.h); C++ has no such hook, so call_scripted does it by hand:
// run the callee with tracing paused (to get the real outputs), insert its inlined graph into the
// trace graph, and map the outputs to the inserted values so that later traced ops use them.
#include <fmt/format.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>

#include "passes/passes.h"
#include "torchonnx/export.h"

namespace torchonnx {

namespace {

namespace tracer = torch::jit::tracer;

// Pauses the current trace for its lifetime (also when the callee throws).
class TracingPaused {
 public:
  TracingPaused() : state_(tracer::getTracingState()) { tracer::setTracingState(nullptr); }
  ~TracingPaused() { tracer::setTracingState(state_); }
  TracingPaused(const TracingPaused&) = delete;
  TracingPaused& operator=(const TracingPaused&) = delete;

 private:
  std::shared_ptr<tracer::TracingState> state_;
};

// Appends the defaults of the trailing arguments left out (`skip` leading schema arguments, such
// as self, are not in `args`).
void add_defaults(const c10::FunctionSchema& schema, size_t skip, std::vector<c10::IValue>& args) {
  const auto& params = schema.arguments();
  if (args.size() + skip > params.size()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("call_scripted: {} takes {} arguments but {} were given",
                                  schema.name(), params.size() - skip, args.size()));
  }
  for (size_t i = args.size() + skip; i < params.size(); ++i) {
    if (!params[i].default_value()) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("call_scripted: argument '{}' of {} has no default and was "
                                    "not given",
                                    params[i].name(), schema.name()));
    }
    args.push_back(*params[i].default_value());
  }
}

// Makes the trace map the tensors of `v` (the callee's result) to `value`, its graph value.
// Scalars and strings need no mapping: later traced code sees them as C++ constants.
void bind_output(tracer::TracingState& state, const c10::IValue& v, torch::jit::Value* value) {
  auto& graph = *state.graph;
  if (v.isTensor()) {
    if (v.toTensor().defined()) state.setValue(v, value);
  } else if (v.isTuple()) {
    const auto& elements = v.toTupleRef().elements();
    auto* unpack = graph.insertNode(graph.createTupleUnpack(value));
    for (size_t i = 0; i < elements.size(); ++i) bind_output(state, elements[i], unpack->output(i));
  } else if (v.isList() && value->type()->kind() == c10::TypeKind::ListType) {
    const auto list = v.toListRef();
    auto* unpack = graph.insertNode(graph.createListUnpack(value, list.size()));
    for (size_t i = 0; i < list.size(); ++i) bind_output(state, list[i], unpack->output(i));
  }
}

// Inserts `callee` (inlined, without self) into the trace with `args` then `lifted` as its
// inputs, and returns `result` (the callee's outputs, computed by the caller) bound to it.
c10::IValue insert_into_trace(torch::jit::Graph& callee, const std::vector<c10::IValue>& args,
                              const std::vector<NamedParameter>& lifted, c10::IValue result) {
  auto& state = *tracer::getTracingState();
  std::vector<torch::jit::Value*> inputs;
  for (const auto& a : args) inputs.push_back(state.getValue(a));
  for (const auto& p : lifted) {
    // A module tensor that the traced function got as a parameter is a graph input already:
    // it keeps its name. Others are constants of the export, as for any tensor the trace reads.
    inputs.push_back(state.hasValue(p.tensor) ? state.getValue(p.tensor)
                                              : state.graph->insertConstant(p.tensor.detach()));
  }
  auto outputs = torch::jit::insertGraph(*state.graph, callee, inputs);
  TORCH_INTERNAL_ASSERT(outputs.size() == 1, "a TorchScript function has one output");
  bind_output(state, result, outputs[0]);
  return result;
}

std::shared_ptr<torch::jit::Graph> inlined_graph(torch::jit::Function& fn) {
  if (!fn.isGraphFunction()) {
    throw ExportError(
        ErrorCode::kInvalidArgument,
        "call_scripted: " + fn.qualname().qualifiedName() + " is not a TorchScript function");
  }
  auto graph = torch::jit::toGraphFunction(fn).graph()->copy();
  torch::jit::Inline(*graph);
  return graph;
}

}  // namespace

c10::IValue call_scripted(const torch::jit::Module& module, std::vector<c10::IValue> args,
                          const std::string& method) {
  auto m = module.find_method(method);
  if (!m) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("call_scripted: the module has no method '{}'", method));
  }
  add_defaults(m->function().getSchema(), 1, args);
  if (!tracer::isTracing()) return (*m)(args);
  c10::IValue result;
  {
    TracingPaused paused;
    result = (*m)(args);
  }
  auto graph = inlined_graph(m->function());
  auto lifted = passes::LiftModuleAttributes(*graph, module);
  return insert_into_trace(*graph, args, lifted, std::move(result));
}

c10::IValue call_scripted(torch::jit::Function& function, std::vector<c10::IValue> args) {
  add_defaults(function.getSchema(), 0, args);
  if (!tracer::isTracing()) return function(args);
  c10::IValue result;
  {
    TracingPaused paused;
    result = function(args);
  }
  auto graph = inlined_graph(function);
  return insert_into_trace(*graph, args, {}, std::move(result));
}

}  // namespace torchonnx
