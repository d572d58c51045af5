// The libtorch 2.x build only (the 1.13 build refuses .pt2 files: exported_program.cpp).
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2

#include "frontend/program_graph.h"

#include "frontend/program_args.h"

#include <ATen/core/ivalue.h>
#include <fmt/format.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>

namespace torchonnx::frontend::pt2 {

namespace jit = torch::jit;

void fail(ErrorCode code, const std::string& source, const std::string& message) {
  throw ExportError(code, fmt::format("{}: {}", source, message));
}

// The union's one member: {"as_tensor": {...}} → ("as_tensor", {...}).
std::pair<std::string, const json*> member(const json& u) {
  if (!u.is_object() || u.size() != 1) return {"", nullptr};
  return {u.begin().key(), &u.begin().value()};
}

namespace {

// The TorchScript ops of Python's operators on symbolic values (their arguments positional).
const std::map<std::string, std::string>& python_operators() {
  static const std::map<std::string, std::string> kOps = {
      {"_operator.add", "aten::add"},
      {"_operator.sub", "aten::sub"},
      {"_operator.mul", "aten::mul"},
      {"_operator.truediv", "aten::div"},
      {"_operator.floordiv", "aten::floordiv"},
      {"_operator.mod", "aten::remainder"},
      {"_operator.pow", "aten::pow"},
      {"_operator.neg", "aten::neg"},
      {"_operator.eq", "aten::eq"},
      {"_operator.ne", "aten::ne"},
      {"_operator.lt", "aten::lt"},
      {"_operator.le", "aten::le"},
      {"_operator.gt", "aten::gt"},
      {"_operator.ge", "aten::ge"},
      {"_operator.and_", "aten::__and__"},
      {"_operator.or_", "aten::__or__"},
      {"_operator.not_", "aten::__not__"},
      {"_operator.abs", "prim::abs"},
      {"torch.sym_not", "aten::__not__"},
      {"torch.sym_float", "aten::Float"},
      {"torch.sym_int", "aten::Int"},
      {"torch.sym_max", "prim::max"},
      {"torch.sym_min", "prim::min"},
      {"torch.sym_sqrt", "aten::sqrt"},
      {"math.ceil", "aten::ceil"},
      {"math.floor", "aten::floor"},
      {"math.sqrt", "aten::sqrt"},
      {"math.trunc", "aten::trunc"},
  };
  return kOps;
}

// Targets that ask for what a TorchScript node of another name does.
const std::map<std::string, std::string>& renamed_targets() {
  static const std::map<std::string, std::string> kRenamed = {
      {"torch.ops.aten.sym_size.int", "aten::size"},
      {"torch.ops.aten.sym_numel.default", "aten::numel"},
      {"torch.ops.aten.sym_stride.int", "aten::stride"},
  };
  return kRenamed;
}

// Runtime checks of the program, which ONNX cannot express: dropped.
bool is_runtime_assert(const std::string& target) {
  static const std::set<std::string> kAsserts = {
      "torch.ops.aten._assert_scalar.default",
      "torch.ops.aten._assert_tensor_metadata.default",
      "torch.ops.aten.sym_constrain_range.default",
      "torch.ops.aten.sym_constrain_range_for_size.default",
      "torch.ops.aten._assert_async.default",
      "torch.ops.aten._assert_async.msg",
  };
  return kAsserts.count(target) != 0;
}

constexpr const char* kCond = "torch.ops.higher_order.cond";
constexpr const char* kWhileLoop = "torch.ops.higher_order.while_loop";
constexpr const char* kMap = "torch.ops.higher_order.map_impl";
constexpr const char* kScan = "torch.ops.higher_order.scan";

// The higher-order ops this reader builds as TorchScript control flow.
bool is_control_flow(const std::string& target) {
  return target == kCond || target == kWhileLoop || target == kMap || target == kScan;
}

// The innermost `File "f", line N` of a node's stack trace, with its code line.
struct Location {
  std::string file, code;
  size_t line = 0;
};
std::optional<Location> location_of(const json& node) {
  auto meta = node.find("metadata");
  if (meta == node.end() || !meta->contains("stack_trace")) return std::nullopt;
  const std::string trace = (*meta)["stack_trace"].get<std::string>();
  static const std::regex kFrame(R"re(File "([^"]+)", line (\d+)[^\n]*\n?([^\n]*))re");
  // The innermost frame of a source file: PyTorch 2.14's traces of higher-order ops end in the
  // code torch.fx generated ("<eval_with_key>.3"), which no user can open.
  std::optional<Location> last, last_file;
  for (std::sregex_iterator it(trace.begin(), trace.end(), kFrame), end; it != end; ++it) {
    Location l;
    l.file = (*it)[1];
    l.line = std::stoul((*it)[2]);
    l.code = (*it)[3];
    const size_t first = l.code.find_first_not_of(' ');
    l.code = first == std::string::npos ? "" : l.code.substr(first);
    if (l.file.rfind('<', 0) != 0) last_file = l;
    last = l;
  }
  return last_file ? last_file : last;
}
std::string where(const json& node) {
  auto l = location_of(node);
  return l ? fmt::format(" ({}:{})", l->file, l->line) : "";
}

// Every target of `graph` (and its subgraphs) that resolves to nothing this build knows.
void collect_unresolved(const json& graph, std::map<std::string, std::vector<std::string>>& out) {
  for (const json& node : graph.at("nodes")) {
    const std::string target = node.at("target").get<std::string>();
    for (const json& input : node.at("inputs")) {
      auto [kind, value] = member(input.at("arg"));
      if (kind == "as_graph") collect_unresolved(value->at("graph"), out);
    }
    if (is_runtime_assert(target) || is_control_flow(target) || python_operators().count(target) ||
        renamed_targets().count(target)) {
      continue;
    }
    auto name = operator_name(target);
    if (name && jit::findOperatorFor(*name)) continue;
    out[target].push_back(where(node));
  }
}

}  // namespace

// The builder (GraphBuilder::Impl holds one): not in the anonymous namespace, which a member of
// a class with linkage cannot use.
class Builder {
 public:
  Builder(jit::Graph& graph, const std::string& path, std::vector<std::string>& notes)
      : graph_(graph), path_(path), notes_(notes) {}

  void bind(const std::string& name, jit::Value* v) { env_[name] = v; }
  jit::Value* lookup(const std::string& name) const {
    auto it = env_.find(name);
    if (it == env_.end())
      fail(ErrorCode::kModelLoad, path_, "the program reads '" + name + "', which no node makes");
    return it->second;
  }

  void build_nodes(const json& graph) {
    for (const json& node : graph.at("nodes")) build(node);
  }

 private:
  // The value of a program argument, as the TorchScript type `want` asks for (null: any).
  jit::Value* value(const json& arg, const c10::TypePtr& want) {
    auto [kind, v] = member(arg);
    if (v == nullptr) fail(ErrorCode::kModelLoad, path_, "an argument is no union: " + arg.dump());
    auto constant = [&](c10::IValue iv) { return graph_.insertConstant(std::move(iv)); };
    auto sym = [&](const json& s, const char* literal) -> jit::Value* {
      auto [k, x] = member(s);
      if (k == "as_name") return lookup(x->get<std::string>());
      if (k == literal) {
        if (x->is_boolean()) return constant(x->get<bool>());
        if (x->is_number_integer()) return constant(x->get<int64_t>());
        return constant(number(*x));
      }
      fail(ErrorCode::kModelLoad, path_, "a symbolic value of no known form: " + s.dump());
    };
    const bool wants_float = want && want->kind() == c10::TypeKind::FloatType;
    if (kind == "as_none") return constant(c10::IValue());
    if (kind == "as_tensor") return lookup(v->at("name").get<std::string>());
    if (kind == "as_int") {
      return wants_float ? constant(static_cast<double>(v->get<int64_t>()))
                         : constant(v->get<int64_t>());
    }
    if (kind == "as_float") return constant(number(*v));
    if (kind == "as_bool") return constant(v->get<bool>());
    if (kind == "as_string") return constant(v->get<std::string>());
    if (kind == "as_ints") return constant(v->get<std::vector<int64_t>>());
    if (kind == "as_floats") {
      std::vector<double> floats;
      for (const json& x : *v) floats.push_back(number(x));
      return constant(floats);
    }
    if (kind == "as_bools") {
      c10::List<bool> l;
      for (bool b : v->get<std::vector<bool>>()) l.push_back(b);
      return constant(l);
    }
    if (kind == "as_strings") return constant(v->get<std::vector<std::string>>());
    if (kind == "as_scalar_type")
      return constant(static_cast<int64_t>(scalar_type(v->get<int64_t>())));
    if (kind == "as_layout") return constant(layout(v->get<int64_t>()));
    if (kind == "as_memory_format") return constant(memory_format(v->get<int64_t>()));
    if (kind == "as_device") return constant(c10::Device(c10::kCPU));  // the export runs on CPU
    if (kind == "as_sym_int") return sym(*v, "as_int");
    if (kind == "as_sym_float") return sym(*v, "as_float");
    if (kind == "as_sym_bool") return sym(*v, "as_bool");
    if (kind == "as_tensors" || kind == "as_optional_tensors") {
      std::vector<jit::Value*> items;
      for (const json& t : *v) {
        if (kind == "as_tensors") {
          items.push_back(lookup(t.at("name").get<std::string>()));
        } else {
          auto [k, x] = member(t);
          items.push_back(k == "as_tensor" ? lookup(x->at("name").get<std::string>())
                                           : constant(c10::IValue()));
        }
      }
      c10::TypePtr element = kind == "as_tensors" ? c10::TypePtr(c10::TensorType::get())
                                                  : c10::TypePtr(c10::OptionalType::ofTensor());
      return graph_.insertNode(graph_.createList(element, items))->output();
    }
    if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") {
      const char* literal = kind == "as_sym_ints"     ? "as_int"
                            : kind == "as_sym_floats" ? "as_float"
                                                      : "as_bool";
      std::vector<jit::Value*> items;
      for (const json& s : *v) items.push_back(sym(s, literal));
      c10::TypePtr element = kind == "as_sym_ints"     ? c10::TypePtr(c10::IntType::get())
                             : kind == "as_sym_floats" ? c10::TypePtr(c10::FloatType::get())
                                                       : c10::TypePtr(c10::BoolType::get());
      // All int or float literals: one list constant, as TorchScript makes of `[2, 3]` (bools
      // stay a ListConstruct of constants).
      bool literal_only = kind != "as_sym_bools";
      for (jit::Value* item : items) literal_only &= item->node()->kind() == c10::prim::Constant;
      if (literal_only) {
        for (jit::Value* item : items) {
          if (!item->hasUses()) item->node()->destroy();
        }
        if (kind == "as_sym_ints") {
          std::vector<int64_t> ints;
          for (const json& s : *v) ints.push_back(member(s).second->get<int64_t>());
          return constant(ints);
        }
        if (kind == "as_sym_floats") {
          std::vector<double> floats;
          for (const json& s : *v) floats.push_back(number(*member(s).second));
          return constant(floats);
        }
      }
      return graph_.insertNode(graph_.createList(element, items))->output();
    }
    fail(ErrorCode::kUnsupportedOp, path_,
         fmt::format("an argument of kind '{}' ({}) is not supported by this reader. Remedy: "
                     "export the model without it",
                     kind, arg.dump().substr(0, 200)));
  }

  // Binds the program's output arguments of a node to the TorchScript values `outs`.
  void bind_outputs(const json& node, const std::vector<jit::Value*>& outs) {
    const json& outputs = node.at("outputs");
    if (outputs.size() != outs.size()) {
      fail(ErrorCode::kModelLoad, path_,
           fmt::format("node {}{} has {} outputs in the program and {} in its schema",
                       node.at("target").get<std::string>(), where(node), outputs.size(),
                       outs.size()));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      auto [kind, v] = member(outputs[k]);
      if (kind == "as_tensor") {
        bind(v->at("name").get<std::string>(), outs[k]);
      } else if (kind == "as_tensors") {
        jit::Node* unpack = graph_.insertNode(graph_.createListUnpack(outs[k], v->size()));
        for (size_t i = 0; i < v->size(); ++i) {
          unpack->output(i)->setType(c10::TensorType::get());
          bind((*v)[i].at("name").get<std::string>(), unpack->output(i));
        }
      } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
        auto [k2, x] = member(*v);
        if (k2 != "as_name") continue;
        // A Scalar result (aten::item) read as an int, float or bool: TorchScript's int(x.item()).
        jit::Value* out = outs[k];
        if (out->type()->kind() == c10::TypeKind::NumberType) {
          const c10::Symbol cast = kind == "as_sym_int"     ? c10::aten::Int
                                   : kind == "as_sym_float" ? c10::aten::Float
                                                            : c10::aten::Bool;
          out = graph_.insert(cast, {out});
        }
        bind(x->get<std::string>(), out);
      } else if (kind == "as_optional_tensors") {
        // Tensor?[] results are not read by name in the programs torch.export writes.
      } else if (kind != "as_none") {
        fail(ErrorCode::kUnsupportedOp, path_,
             fmt::format("node {}{}: an output of kind '{}' is not supported",
                         node.at("target").get<std::string>(), where(node), kind));
      }
    }
  }

  // The nodes inserted since `mark` (the node before them) get the program node's location
  // (its stack trace read once, one Source for all of them).
  void locate_since(jit::Node* mark, const json& node) {
    auto l = location_of(node);
    if (!l) return;
    auto source = std::make_shared<jit::Source>(l->code, l->file, l->line);
    const jit::SourceRange range(source, 0, l->code.size());
    for (jit::Node* n = mark->next(); n != graph_.insertPoint(); n = n->next()) {
      n->setSourceRange(range);
    }
  }

  void build(const json& node) {
    const std::string target = node.at("target").get<std::string>();
    if (is_runtime_assert(target)) {
      ++dropped_asserts_;
      if (dropped_asserts_ == 1) {
        notes_.push_back(
            "runtime asserts of the program (" + target +
            ", ...) are left out: ONNX cannot check them; the model is only right for inputs "
            "within the program's dim ranges");
      }
      return;
    }
    jit::Node* mark = graph_.insertPoint()->prev();
    if (target == kCond) {
      build_cond(node);
    } else if (target == kWhileLoop) {
      build_while_loop(node);
    } else if (target == kMap || target == kScan) {
      build_scan(node, target == kScan);
    } else if (python_operators().count(target) || renamed_targets().count(target)) {
      const std::string op = python_operators().count(target) ? python_operators().at(target)
                                                              : renamed_targets().at(target);
      std::vector<jit::NamedValue> args;
      for (const json& input : node.at("inputs"))
        args.emplace_back(value(input.at("arg"), nullptr));
      jit::Value* out = insert_resolved(node, c10::Symbol::fromQualString(op), args, {});
      bind_outputs(node, {out});
    } else {
      build_operator(node, *operator_name(target));
    }
    locate_since(mark, node);
  }

  jit::Value* insert_resolved(const json& node, c10::Symbol op,
                              const std::vector<jit::NamedValue>& args,
                              const std::vector<jit::NamedValue>& kwargs) {
    try {
      return graph_.insert(op, args, kwargs);
    } catch (const std::exception& e) {
      std::string what = e.what();
      fail(ErrorCode::kConversion, path_,
           fmt::format("node {}{}: its arguments fit no overload of {}: {}",
                       node.at("target").get<std::string>(), where(node), op.toQualString(),
                       what.substr(0, what.find('\n'))));
    }
  }

  void build_operator(const json& node, const c10::OperatorName& name) {
    std::shared_ptr<jit::Operator> op = jit::findOperatorFor(name);
    const c10::FunctionSchema& schema = op->schema();
    std::map<std::string, const json*> given;
    for (const json& input : node.at("inputs")) {
      given[input.at("name").get<std::string>()] = &input.at("arg");
    }
    std::vector<jit::Value*> inputs;
    bool fits = true;
    for (const c10::Argument& a : schema.arguments()) {
      jit::Value* v = nullptr;
      auto it = given.find(a.name());
      if (it != given.end()) {
        v = value(*it->second, a.type());
      } else if (a.default_value()) {
        v = graph_.insertConstant(*a.default_value());
      } else if (a.type()->kind() == c10::TypeKind::OptionalType) {
        v = graph_.insertConstant(c10::IValue());
      } else {
        fail(ErrorCode::kModelLoad, path_,
             fmt::format("node {}{} gives no argument '{}', which has no default",
                         node.at("target").get<std::string>(), where(node), a.name()));
      }
      fits &= v->type()->isSubtypeOf(*a.type());
      inputs.push_back(v);
    }
    const std::string target = node.at("target").get<std::string>();
    if (fits) {
      jit::Node* n = graph_.insertNode(graph_.create(c10::Symbol::fromQualString(schema.name()),
                                                     inputs, schema.returns().size()));
      for (size_t k = 0; k < schema.returns().size(); ++k) {
        n->output(k)->setType(schema.returns()[k].type());
      }
      bind_outputs(node, std::vector<jit::Value*>(n->outputs().begin(), n->outputs().end()));
      return;
    }
    // TorchScript's overload resolution, on the arguments by name.
    std::vector<jit::NamedValue> kwargs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      kwargs.emplace_back(schema.arguments()[k].name(), inputs[k]);
    }
    jit::Value* out = insert_resolved(node, c10::Symbol::fromQualString(schema.name()), {}, kwargs);
    std::vector<jit::Value*> outs = {out};
    if (out->node()->kind() == c10::prim::TupleConstruct && node.at("outputs").size() > 1) {
      jit::Node* tuple = out->node();
      outs.assign(tuple->inputs().begin(), tuple->inputs().end());
      tuple->destroy();
    }
    // The inputs made for the exact overload that the resolution did not read.
    for (jit::Value* v : inputs) {
      if (!v->hasUses() && v->node()->kind() == c10::prim::Constant) v->node()->destroy();
    }
    bind_outputs(node, outs);
  }

  // The subgraph argument `arg` of higher-order op `what`.
  const json& subgraph(const json& node, const json& arg, const char* what) {
    auto [kind, g] = member(arg.at("arg"));
    if (kind != "as_graph") {
      fail(ErrorCode::kModelLoad, path_, what + where(node) + " without its subgraphs");
    }
    return g->at("graph");
  }

  // The values of a list-of-tensors argument of higher-order op `what`.
  std::vector<jit::Value*> tensor_list(const json& node, const json& arg, const char* what) {
    auto [kind, v] = member(arg.at("arg"));
    std::vector<jit::Value*> out;
    if (kind == "as_tensors") {
      for (const json& t : *v) out.push_back(lookup(t.at("name").get<std::string>()));
    } else if (kind == "as_ints" && v->empty()) {
      // an empty list torch.export could not type
    } else {
      fail(ErrorCode::kUnsupportedOp, path_,
           fmt::format("{}{}: operands of kind '{}' are not supported. Remedy: pass the "
                       "subgraph tensors only",
                       what, where(node), kind));
    }
    return out;
  }

  // The nodes of subgraph `sub` built at the insertion point, its inputs bound to `args`: the
  // values of its outputs.
  std::vector<jit::Value*> inline_graph(const json& node, const json& sub,
                                        const std::vector<jit::Value*>& args, const char* what) {
    Builder inner(graph_, path_, notes_);
    inner.env_ = env_;
    const json& sub_inputs = sub.at("inputs");
    if (sub_inputs.size() != args.size()) {
      fail(ErrorCode::kModelLoad, path_,
           fmt::format("{}{}: a subgraph takes {} inputs, given {}", what, where(node),
                       sub_inputs.size(), args.size()));
    }
    for (size_t k = 0; k < args.size(); ++k) {
      inner.bind(member(sub_inputs[k]).second->at("name").get<std::string>(), args[k]);
    }
    inner.build_nodes(sub);
    std::vector<jit::Value*> outs;
    for (const json& o : sub.at("outputs")) outs.push_back(inner.value(o, nullptr));
    dropped_asserts_ += inner.dropped_asserts_;
    return outs;
  }

  // Binds the results of a higher-order op: one as_tensors, or one argument per result.
  void bind_results(const json& node, const std::vector<jit::Value*>& outs) {
    const json& outputs = node.at("outputs");
    if (outputs.size() == 1 && member(outputs[0]).first == "as_tensors") {
      const json& names = *member(outputs[0]).second;
      if (names.size() != outs.size()) {
        fail(ErrorCode::kModelLoad, path_,
             fmt::format("node {}{} names {} results of {}", node.at("target").get<std::string>(),
                         where(node), names.size(), outs.size()));
      }
      for (size_t k = 0; k < outs.size(); ++k)
        bind(names[k].at("name").get<std::string>(), outs[k]);
    } else {
      bind_outputs(node, outs);
    }
  }

  // The number of results a higher-order op names.
  static size_t result_count(const json& node) {
    const json& outputs = node.at("outputs");
    if (outputs.size() == 1 && member(outputs[0]).first == "as_tensors") {
      return member(outputs[0]).second->size();
    }
    return outputs.size();
  }

  jit::Value* as_bool(const json& node, jit::Value* v) {
    if (v->type()->kind() == c10::TypeKind::BoolType) return v;
    return insert_resolved(node, c10::aten::Bool, {v}, {});
  }

  // torch.cond(pred, true_graph, false_graph, operands) → prim::If(aten::Bool(pred)) whose blocks
  // are the subgraphs, their inputs bound to the operands.
  void build_cond(const json& node) {
    const json& inputs = node.at("inputs");
    if (inputs.size() != 4) {
      fail(ErrorCode::kModelLoad, path_, "torch.cond" + where(node) + " has no 4 arguments");
    }
    jit::Value* pred = as_bool(node, value(inputs[0].at("arg"), nullptr));
    const std::vector<jit::Value*> operands = tensor_list(node, inputs[3], "torch.cond");
    const size_t n_out = result_count(node);
    jit::Node* if_node = graph_.insertNode(graph_.create(c10::prim::If, {pred}, n_out));
    for (int branch = 1; branch <= 2; ++branch) {
      const json& sub = subgraph(node, inputs[branch], "torch.cond");
      jit::Block* block = if_node->addBlock();
      jit::WithInsertPoint guard(block);
      const std::vector<jit::Value*> outs = inline_graph(node, sub, operands, "torch.cond");
      if (outs.size() != n_out) {
        fail(ErrorCode::kModelLoad, path_,
             "torch.cond" + where(node) + ": a branch's outputs are not the node's");
      }
      for (jit::Value* o : outs) block->registerOutput(o);
    }
    std::vector<jit::Value*> outs;
    for (size_t k = 0; k < n_out; ++k) {
      if_node->output(k)->setType(if_node->blocks()[0]->outputs()[k]->type());
      outs.push_back(if_node->output(k));
    }
    bind_results(node, outs);
  }

  // while_loop(cond_graph, body_graph, carried, additional) → prim::Loop of no trip limit (a
  // scripted `while`), its first condition cond_graph(carried, additional), its body
  // body_graph(state, additional) followed by cond_graph on what the body made.
  void build_while_loop(const json& node) {
    const char* what = "torch.while_loop";
    const json& inputs = node.at("inputs");
    if (inputs.size() != 4) {
      fail(ErrorCode::kModelLoad, path_, what + where(node) + " has no 4 arguments");
    }
    const json& cond = subgraph(node, inputs[0], what);
    const json& body = subgraph(node, inputs[1], what);
    const std::vector<jit::Value*> carried = tensor_list(node, inputs[2], what);
    const std::vector<jit::Value*> extra = tensor_list(node, inputs[3], what);
    auto with_extra = [&](std::vector<jit::Value*> v) {
      v.insert(v.end(), extra.begin(), extra.end());
      return v;
    };
    auto one = [&](const std::vector<jit::Value*>& outs) {
      if (outs.size() != 1) {
        fail(ErrorCode::kModelLoad, path_,
             what + where(node) + ": the condition subgraph gives no one value");
      }
      return as_bool(node, outs[0]);
    };
    jit::Value* first = one(inline_graph(node, cond, with_extra(carried), what));
    std::vector<jit::Value*> loop_inputs = {
        graph_.insertConstant(std::numeric_limits<int64_t>::max()), first};
    loop_inputs.insert(loop_inputs.end(), carried.begin(), carried.end());
    jit::Node* loop =
        graph_.insertNode(graph_.create(c10::prim::Loop, loop_inputs, carried.size()));
    jit::Block* block = loop->addBlock();
    block->addInput()->setType(c10::IntType::get());
    std::vector<jit::Value*> state;
    for (jit::Value* c : carried) state.push_back(block->addInput()->setType(c->type()));
    {
      jit::WithInsertPoint guard(block);
      const std::vector<jit::Value*> next = inline_graph(node, body, with_extra(state), what);
      if (next.size() != carried.size()) {
        fail(ErrorCode::kModelLoad, path_,
             fmt::format("{}{}: the body gives {} values for {} carried", what, where(node),
                         next.size(), carried.size()));
      }
      block->registerOutput(one(inline_graph(node, cond, with_extra(next), what)));
      for (jit::Value* v : next) block->registerOutput(v);
    }
    std::vector<jit::Value*> outs;
    for (size_t k = 0; k < carried.size(); ++k) {
      outs.push_back(loop->output(k)->setType(carried[k]->type()));
    }
    bind_results(node, outs);
  }

  // map_impl(f, xs, args) and scan(combine, init, xs, dim, reverse, additional) → a prim::Loop
  // over xs' dim (0 for map) whose body selects each slice, runs the subgraph on (carry, slices,
  // extra) and appends its per-step results to lists, stacked along a new first dim after the
  // loop (as a scripted `for` loop appending to a list is: a Loop with scan outputs in ONNX). scan
  // carries the first len(init) results and, with reverse, walks xs from its end and returns ys
  // in xs' order. PyTorch 2.14's scan has four arguments, scan(combine, init, xs, additional):
  // its program moves the scanned dim first and flips xs itself, so dim is 0 and reverse false.
  void build_scan(const json& node, bool is_scan) {
    const char* what = is_scan ? "torch scan" : "torch map";
    const json& inputs = node.at("inputs");
    const bool scan4 = is_scan && inputs.size() == 4;
    if (!scan4 && inputs.size() != (is_scan ? 6u : 3u)) {
      fail(ErrorCode::kModelLoad, path_,
           fmt::format("{}{} has no {} arguments", what, where(node), is_scan ? "4 or 6" : "3"));
    }
    const json& body = subgraph(node, inputs[0], what);
    const std::vector<jit::Value*> init =
        is_scan ? tensor_list(node, inputs[1], what) : std::vector<jit::Value*>{};
    const std::vector<jit::Value*> xs = tensor_list(node, inputs[is_scan ? 2 : 1], what);
    const std::vector<jit::Value*> extra = tensor_list(node, inputs.back(), what);
    int64_t dim = 0;
    bool reverse = false;
    if (is_scan && !scan4) {
      auto [dkind, d] = member(inputs[3].at("arg"));
      auto [rkind, r] = member(inputs[4].at("arg"));
      if (dkind != "as_int" || rkind != "as_bool") {
        fail(ErrorCode::kModelLoad, path_, what + where(node) + ": dim or reverse is no literal");
      }
      dim = d->get<int64_t>();
      reverse = r->get<bool>();
    }
    if (xs.empty()) {
      fail(ErrorCode::kUnsupportedOp, path_,
           what + where(node) + " over no tensors is not supported. Remedy: pass xs");
    }
    const size_t n_results = result_count(node);
    if (n_results < init.size()) {
      fail(ErrorCode::kModelLoad, path_, what + where(node) + " returns less than it carries");
    }
    const size_t n_ys = n_results - init.size();
    jit::Value* dim_value = graph_.insertConstant(dim);
    jit::Value* steps = graph_.insert(c10::aten::size, {xs[0], dim_value});
    std::vector<jit::Value*> lists;
    for (size_t k = 0; k < n_ys; ++k) {
      lists.push_back(graph_.insertNode(graph_.createList(c10::TensorType::get(), {}))->output());
    }
    jit::Value* last =
        reverse ? graph_.insert(c10::aten::sub, {steps, graph_.insertConstant(1)}) : nullptr;
    std::vector<jit::Value*> loop_inputs = {steps, graph_.insertConstant(true)};
    loop_inputs.insert(loop_inputs.end(), init.begin(), init.end());
    jit::Node* loop = graph_.insertNode(graph_.create(c10::prim::Loop, loop_inputs, init.size()));
    jit::Block* block = loop->addBlock();
    jit::Value* step = block->addInput()->setType(c10::IntType::get());
    std::vector<jit::Value*> args;
    for (jit::Value* c : init) args.push_back(block->addInput()->setType(c->type()));
    {
      jit::WithInsertPoint guard(block);
      jit::Value* index = reverse ? graph_.insert(c10::aten::sub, {last, step}) : step;
      for (jit::Value* x : xs)
        args.push_back(graph_.insert(c10::aten::select, {x, dim_value, index}));
      args.insert(args.end(), extra.begin(), extra.end());
      const std::vector<jit::Value*> outs = inline_graph(node, body, args, what);
      if (outs.size() != n_results) {
        fail(ErrorCode::kModelLoad, path_,
             fmt::format("{}{}: the subgraph gives {} values for {} results", what, where(node),
                         outs.size(), n_results));
      }
      block->registerOutput(graph_.insertConstant(true));
      for (size_t k = 0; k < init.size(); ++k) block->registerOutput(outs[k]);
      for (size_t k = 0; k < n_ys; ++k) {
        graph_.insert(c10::aten::append, {lists[k], outs[init.size() + k]});
      }
    }
    std::vector<jit::Value*> results;
    for (size_t k = 0; k < init.size(); ++k) {
      results.push_back(loop->output(k)->setType(init[k]->type()));
    }
    for (size_t k = 0; k < n_ys; ++k) {
      // Stacked along a new first dim, whatever dim was scanned (generic_scan of PyTorch 2.6).
      jit::Value* zero = graph_.insertConstant(int64_t{0});
      jit::Value* ys = graph_.insert(c10::aten::stack, {lists[k], zero});
      if (reverse) {
        ys = graph_.insert(c10::aten::flip, {ys, graph_.insertConstant(std::vector<int64_t>{0})});
      }
      results.push_back(ys);
    }
    bind_results(node, results);
  }

  jit::Graph& graph_;
  const std::string& path_;
  std::vector<std::string>& notes_;
  std::unordered_map<std::string, jit::Value*> env_;
  int dropped_asserts_ = 0;
};

json parse_program(std::string_view text) {
  return json::parse(quote_nonfinite(text));
}

std::map<std::string, std::vector<std::string>> unresolved_targets(const json& graph) {
  std::map<std::string, std::vector<std::string>> out;
  collect_unresolved(graph, out);
  return out;
}

// The builder itself lives in the anonymous namespace; the public class holds one.
class GraphBuilder::Impl {
 public:
  Impl(jit::Graph& graph, const std::string& path, std::vector<std::string>& notes)
      : builder(graph, path, notes) {}
  Builder builder;
};

GraphBuilder::GraphBuilder(jit::Graph& graph, const std::string& path,
                           std::vector<std::string>& notes)
    : impl_(std::make_unique<Impl>(graph, path, notes)) {}
GraphBuilder::~GraphBuilder() = default;
void GraphBuilder::bind(const std::string& name, jit::Value* v) {
  impl_->builder.bind(name, v);
}
jit::Value* GraphBuilder::lookup(const std::string& name) const {
  return impl_->builder.lookup(name);
}
void GraphBuilder::build_nodes(const json& graph) {
  impl_->builder.build_nodes(graph);
}

}  // namespace torchonnx::frontend::pt2

#endif
