// export_modules_as_functions, the conversion's part: the module instances each converted node
// ran in, which onnx/module_functions.h turns into ONNX local functions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnx/ir.h"
#include "torchonnx/export.h"

namespace torch::jit {
struct Node;
}

namespace torchonnx::symbolic {

// The module instances a TorchScript node ran in, outermost first, from the InlinedCallStack that
// torch::jit::Inline leaves on it: "path:Type@site" with the dotted instance path ("block1.fc"; a
// ModuleList element is named by its index only, "0"), the qualified class name with
// TorchScript's "___torch_mangle_N" parts removed ("__torch__.torch.nn.modules.linear.Linear")
// and the offset of the call in its caller's source (which tells enc.0 from dec.0).
// Empty for nodes outside any submodule and for graphs traced from C++ callables.
std::vector<std::string> module_scope(const torch::jit::Node* node);

// Sets ir::Node::scope of graph.nodes[first..] (the nodes the converter of `node` added) to
// module_scope(node).
void tag_module_scope(ir::Graph& graph, size_t first, const torch::jit::Node* node);

}  // namespace torchonnx::symbolic
