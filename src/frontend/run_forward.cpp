#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <sstream>
#include <unordered_set>

#include "common/jit_util.h"
#include "frontend/forward.h"
#include "frontend/frontend.h"
#include "frontend/reference_guard.h"
#include "torchonnx/errors.h"

namespace torchonnx::frontend {

namespace {

// The TorchScript interpreter's error ("The following operation failed in the TorchScript
// interpreter. Traceback of TorchScript, serialized code ... original code ... RuntimeError: ...")
// as its cause (the last line) followed by the traceback of the model's source (its first and
// last 8 lines when longer than 16).
std::string describe_interpreter_error(const std::string& what) {
  // Without libtorch's C++ stack ("Exception raised from ...", "frame #N: ...").
  std::vector<std::string> lines;
  std::istringstream in(what);
  bool in_stack = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Exception raised from", 0) == 0) in_stack = true;
    if (in_stack && (line.rfind("frame #", 0) == 0 || line.rfind("Exception raised", 0) == 0)) {
      continue;
    }
    in_stack = false;
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return "(no message)";
  // The cause: the last "SomethingError: ..." line, or the last line.
  size_t cause_at = lines.size() - 1;
  for (size_t i = lines.size(); i-- > 0;) {
    const auto colon = lines[i].find("Error: ");
    if (colon != std::string::npos && colon > 0 && lines[i].find_first_of(" \t") > colon) {
      cause_at = i;
      break;
    }
  }
  const std::string cause = lines[cause_at];
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(cause_at));
  lines.push_back(cause);
  size_t from = lines.size() - 1;
  for (const char* header :
       {"Traceback of TorchScript, original code", "Traceback of TorchScript"}) {
    for (size_t i = 0; i + 1 < lines.size() && from == lines.size() - 1; ++i) {
      if (lines[i].rfind(header, 0) == 0) from = i;
    }
  }
  std::string out = cause;
  if (from + 1 < lines.size()) {
    out += "\n" + lines[from];
    const size_t begin = from + 1, end = lines.size() - 1;  // the traceback, without the cause
    for (size_t i = begin; i < end; ++i) {
      if (end - begin > 16 && i == begin + 8) {
        out += "\n  ...";
        i = end - 8;
      }
      out += "\n" + lines[i];
    }
  }
  return out;
}

// Whether `v` may be (a view of) a module attribute's tensor: read by prim::GetAttr, passed on
// by an op whose result aliases its first argument (views, in-place ops), or carried by a Loop or
// If from such a value.
bool may_alias_attribute(const torch::jit::Value* v,
                         std::unordered_set<const torch::jit::Value*>& seen) {
  if (!seen.insert(v).second) return false;
  const torch::jit::Node* node = v->node();
  if (node->kind() == c10::prim::GetAttr) return true;
  if (node->kind() == c10::prim::Param) {
    const torch::jit::Node* loop = node->owningBlock()->owningNode();
    if (loop == nullptr || loop->kind() != c10::prim::Loop || v->offset() == 0) return false;
    // Body input i (i >= 1) is the loop's input i + 1 on entry and body output i afterwards.
    return may_alias_attribute(loop->input(v->offset() + 1), seen) ||
           may_alias_attribute(loop->blocks()[0]->outputs()[v->offset()], seen);
  }
  if (node->kind() == c10::prim::Loop) {
    return may_alias_attribute(node->input(v->offset() + 2), seen) ||
           may_alias_attribute(node->blocks()[0]->outputs()[v->offset() + 1], seen);
  }
  if (node->kind() == c10::prim::If) {
    for (const torch::jit::Block* b : node->blocks()) {
      if (may_alias_attribute(b->outputs()[v->offset()], seen)) return true;
    }
    return false;
  }
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (schema == nullptr || schema->returns().empty() || schema->arguments().empty()) return false;
  if (schema->returns()[0].alias_info() == nullptr ||
      schema->arguments()[0].alias_info() == nullptr) {
    return false;
  }
  return may_alias_attribute(node->input(0), seen);
}

// Whether `node` or a node in its blocks writes module state: an attribute (prim::SetAttr,
// `self.count += 1`) or, in place, an attribute's tensor (`v = self.w; v += 1`).
bool writes_module_state(const torch::jit::Node* node) {
  if (node->kind() == c10::prim::SetAttr) return true;
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    std::unordered_set<const torch::jit::Value*> seen;
    if (writes_input(node, i) && may_alias_attribute(node->input(i), seen)) return true;
  }
  for (const torch::jit::Block* block : node->blocks()) {
    for (const torch::jit::Node* inner : block->nodes()) {
      if (writes_module_state(inner)) return true;
    }
  }
  return false;
}

// A copy of `v` with fresh tensors: forward() may write its arguments in place (`x *= 2`), and
// the caller's examples (the inputs saved beside the reference outputs) must stay as they were.
c10::IValue fresh_copy(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().clone();
  if (v.isList()) {
    c10::impl::GenericList out(v.toList().elementType());
    for (const c10::IValue& e : v.toListRef()) out.push_back(fresh_copy(e));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const c10::IValue& e : v.toTupleRef().elements()) elements.push_back(fresh_copy(e));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  return v;
}

}  // namespace

std::vector<at::Tensor> run_module(const torch::jit::Module& module,
                                   const std::vector<c10::IValue>& args) {
  auto method = forward_of(module);
  const auto& schema = method.function().getSchema();
  check_arguments(schema, args);
  auto inputs = coerce_arguments(schema, args);
  for (c10::IValue& input : inputs) input = fresh_copy(input);
  // Arguments left out take their defaults (the graph is run as is, not through the method).
  for (size_t i = inputs.size() + 1; i < schema.arguments().size(); ++i) {
    inputs.push_back(*schema.arguments()[i].default_value());
  }
  try {
    c10::InferenceMode guard;
    // Note [Forward runs interpreted]: forward() is run as the interpreter runs its inlined graph,
    // not through the function's graph executor. libtorch's profiling executor optimizes a graph
    // from its second run on, and on libtorch 2.6 that takes minutes for a detection model's graph
    // (ssdlite320: first run 1 s, the second not done after 3 min) and miscompiles hand-written
    // graphs (aten::add of a NumToTensor(bool) run as add(Scalar, Scalar)). Switching the
    // optimizer off around method() is no remedy: the function then caches an un-inlined
    // "optimized" graph, which capture_module's inlining would meet.
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    inline_graph(*graph);
    ReferenceKernelsGuard reference_kernels;  // Note [References without oneDNN]
    torch::jit::Code code(graph, "forward");
    torch::jit::InterpreterState state(code);
    torch::jit::Stack stack;
    stack.reserve(inputs.size() + 1);
    // A forward that writes module state (prim::SetAttr, `self.count += 1`, or in place through
    // an attribute's tensor, `v = self.w; v += 1`) runs on a copy: the export reads the state as
    // it was (Note [Module state written in forward]).
    bool writes_state = false;
    for (const torch::jit::Node* node : graph->nodes()) {
      writes_state = writes_state || writes_module_state(node);
    }
    stack.emplace_back(writes_state ? module.deepcopy()._ivalue() : module._ivalue());
    for (const auto& input : inputs) stack.push_back(fresh_copy(input));
    try {
      state.run(stack);
    } catch (const std::exception&) {
      // libtorch 1.13's interpreter fails some graphs that its graph executor, which prepares
      // them first, runs (an "undefined" tensor in a loop; the fuzzer found it): the forward
      // fails only when that run fails too.
      torch::jit::Module target = writes_state ? module.deepcopy() : module;
      std::vector<c10::IValue> again;
      for (const auto& input : inputs) again.push_back(fresh_copy(input));
      return flatten_tensors(forward_of(target)(std::move(again)));
    }
    if (stack.size() == 1) return flatten_tensors(stack.front());
    return flatten_tensors(c10::ivalue::Tuple::create(std::move(stack)));
  } catch (const std::exception& e) {
    throw ExportError(ErrorCode::kModelRun,
                      "the model's forward() failed on the example inputs: " +
                          describe_interpreter_error(e.what()) +
                          "\nRemedy: check the example inputs' shapes and dtypes (one per "
                          "forward() argument, in order).");
  }
}

void throw_if_forward_fails(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                            const std::string& export_error) {
  try {
    run_module(module, args);
  } catch (const ExportError& e) {
    if (e.code() != ErrorCode::kModelRun) throw;
    const std::string first = export_error.substr(0, export_error.find('\n'));
    throw ExportError(ErrorCode::kModelRun,
                      fmt::format("{}\n(The export stopped first with: {})", e.what(), first));
  }
}

}  // namespace torchonnx::frontend
