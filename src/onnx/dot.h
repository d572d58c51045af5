// A ModelProto as a Graphviz DOT graph (`torchonnx print --format dot`).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace torchonnx {

// Renders `model`'s graph as DOT: one box per node (op type, and the node's name when it has
// one), graph inputs and outputs as ellipses, one edge per (tensor, consumer) labelled with the
// tensor's type and shape (from the graph's inputs, outputs and value_info: run ONNX shape
// inference first, as validate_model does). Initializers get no node of their own: the
// consuming node's box lists them (name and type, the first few, then a count). The bodies of
// If/Loop/Scan nodes are clusters next to their node, with dashed edges from the values they
// read in the enclosing graph and to the node from their outputs.
std::string to_dot(const onnx::ModelProto& model);

// `text` as a DOT double-quoted string, quotes included (", \ and newlines escaped).
std::string dot_quote(const std::string& text);

}  // namespace torchonnx
