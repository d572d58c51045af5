// find_mismatch: the first TorchScript node whose converted ONNX nodes disagree with libtorch.
//
// Note [Taps on intermediate values]: the export runs once more with every tensor that a node of
// the converters' graph (after the TorchScript passes) produces registered as a further graph
// output (pipeline::PreparedGraphHook), so the ONNX model returns the value each TorchScript value
// became. The same graph, with the same extra outputs, runs in libtorch's interpreter on the same
// inputs. Walking the nodes in graph order, the first whose values differ beyond rtol/atol is the
// first whose conversion computes something else: every tensor it reads came out equal (else the
// node making it would have been found first). Values that are no tensors (ints, lists) are not
// compared; a control-flow node (Loop, If) is compared by its outputs, as one node.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "torchonnx/verify.h"

namespace torchonnx::verification {

// The mismatching node, or nullopt with `note` saying why none was found.
std::optional<Mismatch> find_mismatch(const torch::jit::Module& model,
                                      const std::vector<c10::IValue>& args,
                                      const ExportOptions& options, const VerifyOptions& verify,
                                      std::string& note);

// The tensors of `args` as the ONNX graph takes them: lists and tuples flattened, numbers as 0-d
// tensors.
std::vector<at::Tensor> flatten_args(const std::vector<c10::IValue>& args);

}  // namespace torchonnx::verification
