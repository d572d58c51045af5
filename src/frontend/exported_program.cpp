// Note [Exported programs]
// A .pt2 (torch.export.save, PyTorch 2.x) is a plain zip: serialized_exported_program.json (the
// graph: nodes whose targets are operator overloads, "torch.ops.aten.conv2d.default", with typed
// arguments; a signature telling parameters, buffers, constants and user inputs apart; the
// ranges of its symbolic dims), serialized_state_dict.pt / serialized_constants.pt /
// serialized_example_inputs.pt (each a torch.save archive) and `version` (the schema's).
//
// It is loaded as a TorchScript module, so that the rest of the pipeline (passes, converters,
// optimizer, writer, verifier) takes it as it takes a .pt:
//   - every parameter, buffer and constant the signature names is an attribute of a submodule
//     chain after its name ("fc.weight": submodule fc, parameter weight), so initializers keep
//     the program's names;
//   - forward(self, user inputs...) is the program's graph: a prim::GetAttr chain for each
//     parameter input, then one TorchScript node per program node. A node's target is resolved
//     to its operator (c10::OperatorName, overload "default" = ""); its arguments are taken by
//     schema name, missing ones from the schema's defaults. When the values do not fit the
//     overload's types (a number for a Tensor argument: `aten.mul.Tensor(x, 2.0)`), TorchScript's
//     own overload resolution picks the overload, as it would for `x * 2.0` in a scripted module;
//   - Python's operators on symbolic ints (`_operator.mul(s0, 4)`) and aten.sym_size become
//     TorchScript's int ops and aten::size; torch.cond becomes prim::If with the two subgraphs as
//     its blocks, while_loop a prim::Loop (a scripted `while`), map and scan a prim::Loop over
//     the slices that appends each step's results to lists stacked after it (a scripted `for`
//     loop over a list); the runtime asserts (aten._assert_scalar, sym_constrain_range) are dropped
//     with a note: ONNX cannot check them;
//   - symbolic dims of user inputs become dynamic axes named by their symbol.
// Tensors are read with libtorch's unpickler from the records, in place in a mapping of the file
// (the records are stored uncompressed): a storage stays in the mapping (Note [Zero-copy
// weights]) when its bytes lie at a multiple of its element size in the file, else it is copied
// (realign()).
#include "torchonnx/exported_program.h"

#include <torch/version.h>

#include <fmt/format.h>

#include <filesystem>

#include "frontend/pt2_archive.h"
#include "torchonnx/errors.h"

#if TORCH_VERSION_MAJOR >= 2

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cctype>
#include <cstdio>

#include "frontend/program_args.h"
#include "frontend/program_graph.h"
#include "frontend/program_parts.h"

#endif

namespace torchonnx {

bool is_exported_program(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  try {
    return frontend::Pt2Archive::open(path).has_value();
  } catch (const ExportError&) {
    return true;  // a torch.export archive, damaged: load_exported_program says how
  }
}

ExportOptions program_options(const ExportedProgram& program, ExportOptions options) {
  if (!options.dynamic_axes.empty()) return options;
  for (size_t k = 0; k < program.input_names.size(); ++k) {
    auto it = program.dynamic_axes.find(program.input_names[k]);
    if (it == program.dynamic_axes.end()) continue;
    const std::string& name =
        k < options.input_names.size() ? options.input_names[k] : program.input_names[k];
    options.dynamic_axes[name] = it->second;
  }
  return options;
}

void export_program(const ExportedProgram& program, const std::string& path,
                    ExportOptions options) {
  export_model(program.module, program.example_inputs, path, program_options(program, options));
}

#if TORCH_VERSION_MAJOR < 2

ExportedProgram load_exported_program(const std::string& path, const std::string&) {
  throw ExportError(
      ErrorCode::kModelLoad,
      fmt::format("'{}' is a torch.export program (.pt2), which PyTorch 2.x writes over its ATen "
                  "2.x operators; this torchonnx is built with libtorch {}.{}, which has no such "
                  "reader nor all of those operators. Remedy: use torchonnx's libtorch 2.x build "
                  "(Debian 13: libtorch 2.6; Debian forky: libtorch 2.14)",
                  path, TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR));
}

#else

namespace {

namespace jit = torch::jit;

using frontend::pt2::fail;
using frontend::pt2::GraphBuilder;
using frontend::pt2::json;
using frontend::pt2::member;

void flatten(const c10::IValue& v, std::vector<c10::IValue>& out) {
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten(e, out);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) flatten(e.value(), out);
  } else if (!v.isNone()) {
    out.push_back(v);
  }
}

// The module that holds attribute `path` ("a.b.weight" → a.b, "weight"), made as needed.
std::pair<jit::Module, std::string> owner(jit::Module root, const std::string& path,
                                          const std::shared_ptr<jit::CompilationUnit>& cu) {
  jit::Module m = root;
  std::string rest = path;
  std::string prefix = "__torch__.torchonnx_pt2.Program";
  for (size_t dot; (dot = rest.find('.')) != std::string::npos;) {
    const std::string part = rest.substr(0, dot);
    rest = rest.substr(dot + 1);
    prefix += "." + part;
    if (m.hasattr(part)) {
      if (!m.attr(part).isModule()) {
        throw ExportError(ErrorCode::kModelLoad,
                          fmt::format("the program's weight '{}' lies under '{}', which is no "
                                      "submodule (a module's own attribute '{}'). Remedy: rename "
                                      "the submodule",
                                      path, part, part));
      }
      m = m.attr(part).toModule();
    } else {
      jit::Module sub(c10::QualifiedName(prefix), cu, /*shouldMangle=*/true);
      sub.register_attribute("training", c10::BoolType::get(), false);
      m.register_module(part, sub);
      m = sub;
    }
  }
  return {m, rest};
}

// A dim's sympy expression (srepr: "Symbol('s0', positive=True, integer=True)",
// "Mul(Integer(2), Symbol('s1', ...))") as the name of its ONNX dim: "s0", "2*s1"; products and
// sums of symbols and integers only, else "" (a generated name).
struct SympyReader {
  const std::string& e;
  size_t at = 0;
  bool eat(const std::string& word) {
    if (e.compare(at, word.size(), word) != 0) return false;
    at += word.size();
    return true;
  }
  std::optional<std::string> term() {
    if (eat("Symbol('")) {
      const size_t end = e.find('\'', at);
      if (end == std::string::npos) return std::nullopt;
      std::string name = e.substr(at, end - at);
      at = end;
      int depth = 0;  // skip the assumptions up to the closing parenthesis
      for (; at < e.size(); ++at) {
        if (e[at] == '(') ++depth;
        if (e[at] == ')' && depth-- == 0) break;
      }
      if (!eat(")")) return std::nullopt;
      return name;
    }
    if (eat("Integer(")) {
      const size_t end = e.find(')', at);
      if (end == std::string::npos) return std::nullopt;
      std::string n = e.substr(at, end - at);
      at = end + 1;
      return n;
    }
    for (const char* op : {"Mul", "Add"}) {
      if (!eat(std::string(op) + "(")) continue;
      std::string out;
      for (bool first = true;; first = false) {
        if (!first && !eat(", ")) break;
        auto t = term();
        if (!t) return std::nullopt;
        out += (first ? "" : std::string(op) == "Mul" ? "*" : " + ") + *t;
      }
      if (!eat(")")) return std::nullopt;
      return out;
    }
    return std::nullopt;
  }
};
std::string dim_name(const std::string& expr) {
  SympyReader r{expr};
  auto name = r.term();
  return name && r.at == expr.size() ? *name : "";
}

}  // namespace

ExportedProgram load_exported_program(const std::string& path, const std::string& program_name) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ExportError(ErrorCode::kModelLoad,
                      "model file '" + path +
                          "' does not exist or is not a regular file. Remedy: check the path.");
  }
  std::optional<frontend::Pt2Archive> archive = frontend::Pt2Archive::open(path);
  if (!archive) {
    fail(ErrorCode::kModelLoad, "'" + path + "'",
         "is no torch.export archive (a zip holding serialized_exported_program.json, PyTorch "
         "2.3 to 2.7, or a PT2 archive's ROOT/archive_format, PyTorch 2.8+). Remedy: save the "
         "program with torch.export.save, or give a TorchScript .pt as a model");
  }
  ExportedProgram program;
  frontend::pt2::ProgramParts parts =
      frontend::pt2::read_program_parts(*archive, program_name, program.notes);
  program.schema_version = parts.schema_version;
  const std::string& source = parts.source;
  const json& doc = parts.doc;
  try {
    const json& gm = doc.at("graph_module");
    const json& graph_json = gm.at("graph");
    const json& signature = gm.at("signature");

    const auto unresolved = frontend::pt2::unresolved_targets(graph_json);
    if (!unresolved.empty()) {
      std::string list;
      for (const auto& [target, places] : unresolved) {
        // Higher-order ops other than cond, while_loop, map and scan (associative_scan,
        // invoke_subgraph, flex_attention, ...) are what this reader does not build, not
        // missing operators.
        const bool control = target.rfind("torch.ops.higher_order.", 0) == 0;
        list += fmt::format("\n  {} ({} node{}){}{}", target, places.size(),
                            places.size() == 1 ? "" : "s", places.front(),
                            control ? ": a higher-order op this reader does not build (it "
                                      "reads cond, while_loop, map and scan); remedy: express "
                                      "it with those, or with a loop of a fixed trip count, "
                                      "which torch.export unrolls"
                                    : "");
      }
      fail(ErrorCode::kUnsupportedOp, source,
           "the program calls what this torchonnx cannot resolve:" + list +
               "\nRemedy: for an operator this libtorch does not have, load the library that "
               "registers it (--load-library), or export the model without it");
    }

    const auto& state = parts.state;
    const auto& constants = parts.constants;

    auto cu = std::make_shared<jit::CompilationUnit>();
    jit::Module module(c10::QualifiedName("__torch__.torchonnx_pt2.Program"), cu,
                       /*shouldMangle=*/true);
    module.register_attribute("training", c10::BoolType::get(), false);
    auto graph = std::make_shared<jit::Graph>();
    jit::Value* self = graph->addInput("self");
    self->setType(module.type());
    GraphBuilder builder(*graph, source, program.notes);

    // The attribute reads of forward(), per name, made once.
    std::map<std::string, jit::Value*> reads;
    auto read_attribute = [&](const std::string& name) {
      auto it = reads.find(name);
      if (it != reads.end()) return it->second;
      jit::Value* v = self;
      std::string rest = name;
      for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) {
        v = graph->insertGetAttr(v, rest.substr(0, dot));
      }
      v = graph->insertGetAttr(v, rest);
      return reads[name] = v;
    };
    auto tensor_named = [&](const std::map<std::string, at::Tensor>& from, const std::string& name,
                            const char* what) {
      auto it = from.find(name);
      if (it == from.end()) {
        fail(ErrorCode::kModelLoad, source,
             fmt::format("the program reads the {} '{}', which the archive does not hold. "
                         "Remedy: save the program again with torch.export.save",
                         what, name));
      }
      return it->second;
    };

    std::vector<std::string> user_inputs;   // graph inputs, by name
    std::vector<bool> user_input_is_input;  // per flattened example input
    for (const json& spec : signature.at("input_specs")) {
      auto [kind, s] = member(spec);
      if (kind == "user_input") {
        auto [akind, a] = member(s->at("arg"));
        if (akind == "as_tensor" || akind == "as_sym_int") {
          const std::string name = akind == "as_tensor" ? a->at("name").get<std::string>()
                                                        : member(*a).second->get<std::string>();
          jit::Value* in = graph->addInput(name);
          in->setType(akind == "as_tensor" ? c10::TypePtr(c10::TensorType::get())
                                           : c10::TypePtr(c10::IntType::get()));
          builder.bind(name, in);
          user_inputs.push_back(name);
          user_input_is_input.push_back(true);
        } else {
          user_input_is_input.push_back(false);  // a constant the program was specialized to
        }
        continue;
      }
      if (kind == "constant_input") {
        // Schema 8.20: an input the program was specialized to a constant (a number, None).
        auto [vkind, value] = member(s->at("value"));
        c10::IValue constant;
        if (vkind == "as_int")
          constant = value->get<int64_t>();
        else if (vkind == "as_float")
          constant = frontend::pt2::number(*value);
        else if (vkind == "as_bool")
          constant = value->get<bool>();
        else if (vkind == "as_string")
          constant = value->get<std::string>();
        builder.bind(s->at("name").get<std::string>(), graph->insertConstant(constant));
        user_input_is_input.push_back(false);
        continue;
      }
      std::string arg_name, target;
      at::Tensor tensor;
      bool is_parameter = false;
      if (kind == "parameter") {
        arg_name = s->at("arg").at("name").get<std::string>();
        target = s->at("parameter_name").get<std::string>();
        tensor = tensor_named(state, target, "parameter");
        is_parameter = true;
      } else if (kind == "buffer") {
        arg_name = s->at("arg").at("name").get<std::string>();
        target = s->at("buffer_name").get<std::string>();
        const bool persistent = s->value("persistent", true);
        tensor = persistent || !constants.count(target) ? tensor_named(state, target, "buffer")
                                                        : constants.at(target);
      } else if (kind == "tensor_constant") {
        arg_name = s->at("arg").at("name").get<std::string>();
        target = s->at("tensor_constant_name").get<std::string>();
        tensor = tensor_named(constants, target, "constant");
      } else {
        fail(ErrorCode::kUnsupportedOp, source,
             fmt::format("the program has an input of kind '{}', which this reader does not "
                         "support (custom objects, effect tokens). Remedy: export the model "
                         "without it",
                         kind));
      }
      auto [m, leaf] = owner(module, target, cu);
      if (!m.hasattr(leaf)) {
        m.register_parameter(leaf, tensor, /*is_buffer=*/!is_parameter);
      } else if (!m.attr(leaf).isTensor()) {
        fail(ErrorCode::kModelLoad, source,
             fmt::format("the program's weight '{}' has the name of a module's own attribute "
                         "('{}'). Remedy: rename the weight",
                         target, leaf));
      }
      builder.bind(arg_name, read_attribute(target));
    }

    builder.build_nodes(graph_json);

    std::vector<jit::Value*> outputs;
    for (const json& spec : signature.at("output_specs")) {
      auto [kind, s] = member(spec);
      if (kind == "user_output" || kind == "loss_output") {
        auto [akind, a] = member(s->at("arg"));
        if (akind == "as_tensor") {
          outputs.push_back(builder.lookup(a->at("name").get<std::string>()));
        } else if (akind == "as_sym_int") {
          outputs.push_back(builder.lookup(member(*a).second->get<std::string>()));
        } else if (akind == "as_none") {
          outputs.push_back(graph->insertConstant(c10::IValue()));
        } else {
          fail(ErrorCode::kUnsupportedOp, source,
               "the program returns a value of kind '" + akind + "', which is not supported");
        }
      } else if (kind == "buffer_mutation") {
        const std::string target = s->at("buffer_name").get<std::string>();
        auto [m, leaf] = owner(module, target, cu);
        jit::Value* obj = self;
        std::string rest = target;
        for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) {
          obj = graph->insertGetAttr(obj, rest.substr(0, dot));
        }
        graph->insertNode(graph->createSetAttr(
            obj, leaf, builder.lookup(s->at("arg").at("name").get<std::string>())));
      } else if (kind == "user_input_mutation") {
        program.notes.push_back("the program writes its input '" +
                                s->at("user_input_name").get<std::string>() +
                                "' in place; the ONNX model returns its outputs only");
      } else {
        fail(ErrorCode::kUnsupportedOp, source,
             "the program has an output of kind '" + kind + "', which is not supported");
      }
    }
    if (outputs.size() == 1) {
      graph->registerOutput(outputs[0]);
    } else {
      graph->registerOutput(graph->insertNode(graph->createTuple(outputs))->output());
    }
    jit::Function* forward =
        cu->create_function(c10::QualifiedName(*module.type()->name(), "forward"), graph);
    module.type()->addMethod(forward);
    program.module = module;
    program.input_names = user_inputs;

    // Example inputs: the flattened (args, kwargs) saved with the program.
    if (parts.example_inputs) {
      std::vector<c10::IValue> flat;
      flatten(*parts.example_inputs, flat);
      if (flat.size() == user_input_is_input.size()) {
        for (size_t k = 0; k < flat.size(); ++k) {
          if (user_input_is_input[k]) program.example_inputs.push_back(flat[k]);
        }
      } else {
        program.notes.push_back(fmt::format(
            "the archive's example inputs ({} values) are not the program's {} inputs: give "
            "inputs",
            flat.size(), user_input_is_input.size()));
      }
    }

    // Dynamic axes: the symbolic dims of the user inputs.
    const json& tensor_values = graph_json.at("tensor_values");
    for (const std::string& name : user_inputs) {
      auto it = tensor_values.find(name);
      if (it == tensor_values.end()) continue;
      const json& sizes = it->at("sizes");
      for (size_t d = 0; d < sizes.size(); ++d) {
        auto [k, x] = member(sizes[d]);
        if (k == "as_expr") {
          program.dynamic_axes[name][static_cast<int64_t>(d)] =
              dim_name(x->at("expr_str").get<std::string>());
        }
      }
    }
    if (doc.contains("range_constraints")) {
      for (const auto& [symbol, range] : doc.at("range_constraints").items()) {
        const json& max = range.at("max_val");
        const json& min = range.at("min_val");
        program.dim_ranges[symbol] = {min.is_number_integer() ? min.get<int64_t>() : 0,
                                      max.is_number_integer() ? max.get<int64_t>() : -1};
      }
    }
  } catch (const json::exception& e) {
    fail(ErrorCode::kModelLoad, source,
         std::string("the program is not what torch.export.save writes: ") + e.what() +
             ". Remedy: save the program again with torch.export.save");
  }
  return program;
}

#endif

}  // namespace torchonnx
