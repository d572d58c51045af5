#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>

#include <algorithm>
#include <unordered_map>

#include "common/jit_util.h"
#include "frontend/forward.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "torchonnx/errors.h"

namespace torchonnx::frontend {

namespace {

// Tuple and list arguments of forward() (`xs: Tuple[Tensor, Tensor]`, `xs: List[Tensor]`)
// become one graph input per element, as torch.onnx flattens them, rebuilt in the graph by a
// TupleConstruct/ListConstruct that LowerSimpleTuples and the list converters then see through.
// A list's length is the example's. Nested containers are flattened recursively.
void flatten_container_inputs(torch::jit::Graph& graph, std::vector<c10::IValue>& examples) {
  std::vector<c10::IValue> flat;
  size_t position = 0;  // graph input of examples[i]
  for (size_t i = 0; i < examples.size(); ++i) {
    const c10::IValue& example = examples[i];
    torch::jit::Value* input = graph.inputs().at(position);
    if (!(example.isTuple() || example.isList()) || example.isIntList() || example.isDoubleList() ||
        example.isBoolList()) {
      // An argument of a Union or Optional type takes the type of its example (a tensor).
      if (example.isTensor() && input->type()->kind() != c10::TypeKind::TensorType) {
        input->setType(c10::TensorType::get());
      }
      flat.push_back(example);
      ++position;
      continue;
    }
    std::vector<c10::IValue> elements =
        example.isTuple() ? example.toTupleRef().elements().vec() : example.toListRef().vec();
    std::vector<torch::jit::Value*> values;
    for (size_t k = 0; k < elements.size(); ++k) {
      torch::jit::Value* element = graph.insertInput(
          position + k,
          fmt::format("{}.{}", input->hasDebugName() ? input->debugName() : "input", k));
      element->setType(c10::unshapedType(elements[k].type()));
      values.push_back(element);
    }
    torch::jit::Node* pack =
        example.isTuple()
            ? graph.createTuple(values)
            // The list's own element type: the argument's type may be a Union holding it.
            : graph.createList(
                  c10::unshapedType(example.type())->expectRef<c10::ListType>().getElementType(),
                  values);
    graph.prependNode(pack);
    input->replaceAllUsesWith(pack->output());
    graph.eraseInput(position + elements.size());
    // The elements may be containers themselves: look at them again.
    std::vector<c10::IValue> rest(examples.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                  examples.end());
    std::vector<c10::IValue> again(flat);
    again.insert(again.end(), elements.begin(), elements.end());
    again.insert(again.end(), rest.begin(), rest.end());
    bool nested = std::any_of(elements.begin(), elements.end(),
                              [](const c10::IValue& e) { return e.isTuple() || e.isList(); });
    if (nested) {
      // Again from the start: graph inputs and `again` correspond one to one.
      examples = std::move(again);
      flatten_container_inputs(graph, examples);
      return;
    }
    flat.insert(flat.end(), elements.begin(), elements.end());
    position += elements.size();
  }
  examples = std::move(flat);
}

// Note [Parameter order]: the parameters are graph inputs in the order of the module's
// state_dict (each module's parameters, then its buffers, then its submodules'), as torch.onnx
// orders them, so that input_names after the example inputs name the same tensors ("learned_0"
// of the documentation's AlexNet is features.0.weight). LiftModuleAttributes lifts them in the
// order forward() reads them, which differs for traced modules (the tracer records a Linear's
// bias before its weight). A module's attributes are in state_dict order: TorchScript adds an
// nn.Module's parameters, buffers and submodules to its type in that order. Tensors that are no
// attribute path of the module (elements of list attributes) keep their order, after the others.
void order_parameters_as_state_dict(torch::jit::Graph& graph, std::vector<NamedParameter>& params,
                                    const torch::jit::Module& module) {
  std::unordered_map<std::string, size_t> rank;
  for (const auto& attribute : module.named_attributes(/*recurse=*/true)) {
    rank.emplace(attribute.name, rank.size());
  }
  auto rank_of = [&](const NamedParameter& p) {
    auto it = rank.find(p.name);
    return it == rank.end() ? rank.size() : it->second;
  };
  std::vector<size_t> order(params.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank_of(params[a]) < rank_of(params[b]); });
  if (std::is_sorted(order.begin(), order.end())) return;
  const size_t first = graph.inputs().size() - params.size();
  std::vector<size_t> permutation(graph.inputs().size());
  for (size_t i = 0; i < permutation.size(); ++i) permutation[i] = i;
  std::vector<NamedParameter> ordered;
  for (size_t i = 0; i < order.size(); ++i) {
    permutation[first + i] = first + order[i];
    ordered.push_back(params[order[i]]);
  }
  graph.block()->permuteInputs(permutation);
  params = std::move(ordered);
}

}  // namespace

CapturedGraph capture_module(const torch::jit::Module& module,
                             const std::vector<c10::IValue>& args) {
  auto method = forward_of(module);
  const auto& schema = method.function().getSchema();
  check_arguments(schema, args);
  CapturedGraph out;
  out.graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
  inline_graph(*out.graph);
  out.parameters = passes::LiftModuleAttributes(*out.graph, module);
  order_parameters_as_state_dict(*out.graph, out.parameters, module);
  out.example_inputs = coerce_arguments(schema, args);
  // Arguments left to their defaults are constants of the graph.
  const auto& params = schema.arguments();
  for (size_t i = out.example_inputs.size() + 1; i < params.size(); ++i) {
    auto* input = out.graph->inputs().at(out.example_inputs.size());
    torch::jit::WithInsertPoint guard(out.graph->block()->nodes().front());
    input->replaceAllUsesWith(out.graph->insertConstant(*params[i].default_value()));
    out.graph->eraseInput(out.example_inputs.size());
  }
  // Arguments given as None (an Optional left out by passing None, as torch.onnx's callers and
  // _decide_input_format do) are constants too: torch.onnx drops None inputs from the graph.
  for (size_t i = out.example_inputs.size(); i-- > 0;) {
    if (!out.example_inputs[i].isNone()) continue;
    auto* input = out.graph->inputs().at(i);
    torch::jit::WithInsertPoint guard(out.graph->block()->nodes().front());
    input->replaceAllUsesWith(out.graph->insertConstant(c10::IValue()));
    out.graph->eraseInput(i);
    out.example_inputs.erase(out.example_inputs.begin() + static_cast<std::ptrdiff_t>(i));
  }
  flatten_container_inputs(*out.graph, out.example_inputs);
  return out;
}

}  // namespace torchonnx::frontend
