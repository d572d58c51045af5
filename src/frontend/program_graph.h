// The graph of a torch.export program (serialized_exported_program.json) as TorchScript nodes:
// Note [Exported programs] in exported_program.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchonnx/errors.h"

namespace torch::jit {
struct Graph;
struct Value;
}  // namespace torch::jit

namespace torchonnx::frontend::pt2 {

using json = nlohmann::json;

// ExportError(code) "SOURCE: message"; `source` names the archive, its layout and schema version
// ("'m.pt2' (the PT2 archive of PyTorch 2.8+ (...), program 'model', schema 8.20)").
[[noreturn]] void fail(ErrorCode code, const std::string& source, const std::string& message);

// The one member of a serialized union: {"as_tensor": {...}} → ("as_tensor", {...}); ("", null)
// for what is no union.
std::pair<std::string, const json*> member(const json& u);

// serialized_exported_program.json parsed; Python's bare Infinity, -Infinity and NaN (which JSON
// has not) read as the strings "Infinity", "-Infinity" and "NaN". json::exception when invalid.
json parse_program(std::string_view text);

// Every target of `graph` (and its subgraphs) that resolves to nothing this libtorch has, with
// the source location (" (file.py:12)", or "") of each of its nodes.
std::map<std::string, std::vector<std::string>> unresolved_targets(const json& graph);

// Builds the nodes of a program graph at `graph`'s insertion point, reading the values bound to
// the names of the graph's inputs. ExportError naming the node (and its source location) for
// what it cannot build.
class GraphBuilder {
 public:
  // `path` names the archive in errors (ProgramParts::source); `notes` gets what the build leaves
  // out.
  GraphBuilder(torch::jit::Graph& graph, const std::string& path, std::vector<std::string>& notes);
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  void bind(const std::string& name, torch::jit::Value* v);
  torch::jit::Value* lookup(const std::string& name) const;
  void build_nodes(const json& graph);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchonnx::frontend::pt2
