#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/frontend/tracer.h>

#include <iostream>
#include <sstream>

#include "common/jit_util.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "torchonnx/errors.h"
#include "torchonnx/logging.h"

namespace torchonnx::frontend {

namespace {

// What capture_trace saw in the example arguments and the outputs, for its warnings.
struct TraceNotes {
  bool dict_input = false;
  bool str_input = false;
  bool scalar_input = false;
  bool dict_output = false;
  bool str_output = false;
};

std::string key_string(const c10::IValue& key) {
  if (key.isString()) return key.toStringRef();
  if (key.isInt()) return std::to_string(key.toInt());
  std::ostringstream os;
  os << key;
  return os.str();
}

// Appends the tensors of example argument `v` (nested tuples, lists and dict values in order) to
// `leaves`, named `name` or `name.<key>` / `name.<index>`. Strings, scalars and None stay
// constants.
void flatten_argument(const c10::IValue& v, const std::string& name,
                      std::vector<c10::IValue>& leaves, std::vector<std::string>& names,
                      TraceNotes& notes) {
  if (v.isTensor()) {
    leaves.push_back(v);
    names.push_back(name);
  } else if (v.isTuple()) {
    const auto& elements = v.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      flatten_argument(elements[i], fmt::format("{}.{}", name, i), leaves, names, notes);
    }
  } else if (v.isList()) {
    const auto list = v.toListRef();
    for (size_t i = 0; i < list.size(); ++i) {
      flatten_argument(list[i], fmt::format("{}.{}", name, i), leaves, names, notes);
    }
  } else if (v.isGenericDict()) {
    notes.dict_input = true;
    for (const auto& kv : v.toGenericDict()) {
      flatten_argument(kv.value(), name + "." + key_string(kv.key()), leaves, names, notes);
    }
  } else if (v.isString()) {
    notes.str_input = true;
  } else if (!v.isNone()) {
    notes.scalar_input = true;
  }
}

// The example argument `example` with its tensors replaced by the traced ones, taken in order
// from `leaves` (the inverse of flatten_argument).
c10::IValue rebuild_argument(const c10::IValue& example, const torch::jit::Stack& leaves,
                             size_t& next) {
  if (example.isTensor()) return leaves.at(next++);
  if (example.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& e : example.toTupleRef().elements()) {
      elements.push_back(rebuild_argument(e, leaves, next));
    }
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (example.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const auto& e : example.toListRef())
      list.push_back(rebuild_argument(e, leaves, next).toTensor());
    return list;
  }
  if (example.isList()) {
    c10::impl::GenericList list(example.toList().elementType());
    for (const auto& e : example.toListRef()) list.push_back(rebuild_argument(e, leaves, next));
    return list;
  }
  if (example.isGenericDict()) {
    const auto dict = example.toGenericDict();
    c10::impl::GenericDict out(dict.keyType(), dict.valueType());
    for (const auto& kv : dict) out.insert(kv.key(), rebuild_argument(kv.value(), leaves, next));
    return out;
  }
  return example;
}

// The traced function's output as torch.onnx exports it: the tensors of nested tuples, lists and
// dict values (keys removed) in order; strings and None removed.
void flatten_output(const c10::IValue& v, std::vector<c10::IValue>& out, TraceNotes& notes) {
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten_output(e, out, notes);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten_output(e, out, notes);
  } else if (v.isGenericDict()) {
    notes.dict_output = true;
    for (const auto& kv : v.toGenericDict()) flatten_output(kv.value(), out, notes);
  } else if (v.isString()) {
    notes.str_output = true;
  } else if (!v.isNone()) {
    out.push_back(v);  // tensors (the tracer rejects other values with a clear message)
  }
}

void print_warnings(const TraceNotes& notes) {
  if (notes.dict_input) {
    warn(
        "a dict is among the example inputs: its tensors become graph inputs in insertion order, "
        "and everything computed from its keys (membership, iteration order) is fixed to the "
        "values seen at tracing. Check that the exported model does what you expect.");
  }
  if (notes.str_input || notes.scalar_input) {
    warn(fmt::format(
        "the {} example input(s) were fixed at tracing: computations that depend on them use the "
        "constant values seen during the traced run.",
        notes.str_input && notes.scalar_input ? "str and number"
        : notes.str_input                     ? "str"
                                              : "number"));
  }
  if (notes.dict_output) {
    warn(
        "the model returns a dict: it is replaced by the flattened sequence of its values (keys "
        "removed), as torch.onnx does.");
  }
  if (notes.str_output) {
    warn("the model returns a str: str outputs have no ONNX value and are removed.");
  }
}

}  // namespace

CapturedGraph capture_trace(const TracedFunction& fn, const std::vector<c10::IValue>& args,
                            const NamedTensors& parameters) {
  TraceNotes notes;
  std::vector<c10::IValue> leaves;
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) {
    flatten_argument(args[i], fmt::format("input_{}", i), leaves, names, notes);
  }
  torch::jit::Stack inputs(leaves.begin(), leaves.end());
  for (const auto& [name, tensor] : parameters) inputs.emplace_back(tensor);
  const size_t num_leaves = leaves.size();
  std::pair<std::shared_ptr<torch::jit::tracer::TracingState>, torch::jit::Stack> traced;
  try {
    traced = torch::jit::tracer::trace(
        inputs,
        [&](torch::jit::Stack in) -> torch::jit::Stack {
          std::vector<c10::IValue> rebuilt;
          size_t next = 0;
          for (const auto& a : args) rebuilt.push_back(rebuild_argument(a, in, next));
          c10::IValue result = fn(rebuilt);
          if (result.isTensor()) return {result};
          std::vector<c10::IValue> flat;
          flatten_output(result, flat, notes);
          return {c10::ivalue::Tuple::create(std::move(flat))};
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
  print_warnings(notes);
  CapturedGraph out;
  out.graph = traced.first->graph;
  for (size_t i = 0; i < num_leaves; ++i) {
    auto* input = out.graph->inputs().at(i);
    if (!input->hasDebugName()) input->setDebugName(names[i]);
  }
  out.example_inputs = leaves;
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

}  // namespace torchonnx::frontend
