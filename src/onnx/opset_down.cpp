// Opsets below the converters' range through ONNX's version converter (opset_down.h).
#include "onnx/opset_down.h"

#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "torchonnx/errors.h"
#include "torchonnx/export.h"

namespace torchonnx {

namespace {

const onnx::NodeProto* find_node_of_type(const onnx::GraphProto& graph,
                                         const std::string& op_type) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == op_type && (node.domain().empty() || node.domain() == "ai.onnx")) {
      return &node;
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) {
        if (const auto* found = find_node_of_type(attr.g(), op_type)) return found;
      }
      for (const auto& g : attr.graphs()) {
        if (const auto* found = find_node_of_type(g, op_type)) return found;
      }
    }
  }
  return nullptr;
}

// The node an error of the version converter is about: its messages name the ONNX op
// ("No Previous Version of Where exists", "No Adapter For Where ...").
const onnx::NodeProto* node_named_in(const onnx::GraphProto& graph, const std::string& message) {
  static const std::regex op_word("[A-Z][A-Za-z0-9]*");
  for (auto it = std::sregex_iterator(message.begin(), message.end(), op_word);
       it != std::sregex_iterator(); ++it) {
    if (const auto* node = find_node_of_type(graph, it->str())) return node;
  }
  return nullptr;
}

// Writes to std::cerr during a scope go nowhere: the version converter prints a warning per node
// of a custom domain (which it leaves as it is, as torchonnx wants).
class SilenceStderr {
 public:
  SilenceStderr() : saved_(std::cerr.rdbuf(sink_.rdbuf())) {}
  ~SilenceStderr() { std::cerr.rdbuf(saved_); }
  SilenceStderr(const SilenceStderr&) = delete;
  SilenceStderr& operator=(const SilenceStderr&) = delete;

 private:
  std::ostringstream sink_;
  std::streambuf* saved_;
};

// Opset 8's Constant holds float types only, and the version converter's adapter retypes the
// node without its value: a Constant of another type becomes an initializer of the main graph
// (as torch.onnx writes its constants), also one inside an If branch or a Loop body, which reads
// it from the outer scope (value names are unique in the whole model).
void non_float_constants_to_initializers(onnx::GraphProto& graph, onnx::GraphProto& main) {
  auto* nodes = graph.mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    onnx::NodeProto& node = *nodes->Mutable(i);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) non_float_constants_to_initializers(*attr.mutable_g(), main);
      for (auto& g : *attr.mutable_graphs()) non_float_constants_to_initializers(g, main);
    }
    const bool moved = [&] {
      if (node.op_type() != "Constant" || !node.domain().empty() || node.output_size() != 1 ||
          node.attribute_size() != 1 || node.attribute(0).name() != "value") {
        return false;
      }
      const int type = node.attribute(0).t().data_type();
      if (type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
          type == onnx::TensorProto::FLOAT16) {
        return false;
      }
      onnx::TensorProto* init = main.add_initializer();
      *init = node.attribute(0).t();
      init->set_name(node.output(0));
      return true;
    }();
    if (!moved) {
      if (kept != i) nodes->SwapElements(kept, i);
      ++kept;
    }
  }
  nodes->DeleteSubrange(kept, nodes->size() - kept);
}

}  // namespace

void convert_opset_down(ExportedModel& model, int target_opset) {
  // The converter rebuilds the initializer list: deferred ones are found again by name.
  std::map<std::string, at::Tensor> deferred;
  for (const auto& d : model.deferred) {
    deferred.emplace(model.proto.graph().initializer(d.index).name(), d.tensor);
  }
  onnx::ModelProto converted;
  try {
    SilenceStderr quiet;
    // The adapters read the element types of values (which casts opset 8's Gemm or MatMul
    // needs): the model gets its value_info first.
    non_float_constants_to_initializers(*model.proto.mutable_graph(), *model.proto.mutable_graph());
    onnx::shape_inference::InferShapes(model.proto);
    converted = onnx::version_conversion::ConvertVersion(model.proto, target_opset);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const onnx::NodeProto* node = node_named_in(model.proto.graph(), what);
    std::string subject = "a node";
    if (node) {
      subject = fmt::format("the node {} ({}{})", node->name().empty() ? "?" : node->name(),
                            node->op_type(),
                            node->doc_string().empty() ? "" : ", from " + node->doc_string());
    }
    throw ExportError(
        ErrorCode::kUnsupportedOp,
        fmt::format("cannot export at opset {}: torchonnx converts at opsets {} and later and "
                    "reaches opset {} through ONNX's version converter, which has no form of {} "
                    "there ({}). Remedy: export with opset_version >= {}",
                    target_opset, kMinOpset, target_opset, subject, what, kMinOpset));
  }
  model.proto = std::move(converted);
  model.deferred.clear();
  const auto& inits = model.proto.graph().initializer();
  for (int i = 0; i < inits.size(); ++i) {
    auto it = deferred.find(inits[i].name());
    if (it != deferred.end()) model.deferred.push_back({i, it->second});
  }
}

}  // namespace torchonnx
