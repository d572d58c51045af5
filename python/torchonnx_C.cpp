// torchonnx._C: the Python package's binding to torchonnx's public C++ API (include/torchonnx/).
// Thin on purpose: it converts Python values to the API's types and back, and nothing else — the
// torch.onnx semantics the Python side needs (tracing an nn.Module, argument forms, option
// defaults, exception classes) live in the pure-Python modules of python/torchonnx/, and everything
// the exporter does lives behind the public API, as for the CLI.
//
// Models pass by handle: a ScriptModule's `._c` is a torch::jit::Module (a reference to the same
// object, weights not copied), tensors at::Tensor — pybind11's casters from libtorch_python,
// which this module links. (nn.Modules are traced and ScriptFunctions wrapped into modules in
// Python: torchonnx/utils.py.)
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/jit/python/pybind.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/script.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "torchonnx/errors.h"
#include "torchonnx/export.h"
#include "torchonnx/exported_program.h"
#include "torchonnx/logging.h"
#include "torchonnx/symbolic.h"
#include "torchonnx/verify.h"
#include "torchonnx/version.h"

namespace py = pybind11;

namespace {

using torchonnx::ErrorCode;
using torchonnx::ExportError;
using torchonnx::ExportOptions;
using torchonnx::ModuleAttribute;

bool is_number_type(const c10::TypePtr& type) {
  const c10::TypeKind kind = type->kind();
  return kind == c10::TypeKind::IntType || kind == c10::TypeKind::FloatType ||
         kind == c10::TypeKind::BoolType || kind == c10::TypeKind::NumberType;
}

// The example arguments as IValues of the types the schema declares (`skip` leading arguments:
// self). Arguments beyond the schema's keep the type Python values infer, so that the exporter's
// own check reports the count.
std::vector<c10::IValue> to_ivalues(const c10::FunctionSchema& schema, const py::sequence& args,
                                    size_t skip) {
  const auto& declared = schema.arguments();
  std::vector<c10::IValue> out;
  out.reserve(py::len(args));
  for (size_t i = 0; i < py::len(args); ++i) {
    py::handle arg = args[i];
    const size_t k = i + skip;
    try {
      if (k >= declared.size()) {
        // Only counted (the exporter names the count): a tensor as itself, anything else as None.
        // (No type inference here: libtorch_python 2.14 does not export what it calls.)
        out.push_back(THPVariable_Check(arg.ptr()) ? c10::IValue(THPVariable_Unpack(arg.ptr()))
                                                   : c10::IValue());
      } else if (is_number_type(declared[k].type()) && THPVariable_Check(arg.ptr())) {
        // A one-element tensor stands for an int/float/bool argument (as for the CLI's --inputs).
        const at::Tensor t = THPVariable_Unpack(arg.ptr());
        if (t.numel() != 1) throw std::invalid_argument("not one element");
        out.push_back(torch::jit::toIValue(py::reinterpret_borrow<py::object>(arg).attr("item")(),
                                           declared[k].type()));
      } else {
        out.push_back(torch::jit::toIValue(arg, declared[k].type()));
      }
    } catch (const std::exception&) {
      const std::string name = k < declared.size() ? declared[k].name() : std::to_string(i);
      const std::string type = k < declared.size() ? declared[k].type()->repr_str() : "?";
      throw ExportError(ErrorCode::kInvalidArgument,
                        "example input " + std::to_string(i) + " (" +
                            std::string(py::str(arg.get_type().attr("__name__"))) +
                            ") cannot be passed as " + schema.name() + "()'s argument '" + name +
                            "' of type " + type + ": pass a value of that type");
    }
  }
  return out;
}

std::vector<c10::IValue> module_args(const torch::jit::Module& module, const py::sequence& args) {
  return to_ivalues(module.get_method("forward").function().getSchema(), args, 1);
}

py::object bytes_or_none(const std::optional<std::string>& bytes) {
  if (!bytes) return py::none();
  return py::bytes(*bytes);
}

// Exports to `path`, or returns the serialized model when `path` is None.
py::object export_module(const torch::jit::Module& module, const py::sequence& args,
                         const ExportOptions& options, const std::optional<std::string>& path) {
  std::vector<c10::IValue> inputs = module_args(module, args);
  std::optional<std::string> bytes;
  {
    py::gil_scoped_release no_gil;
    if (path) {
      torchonnx::export_model(module, inputs, *path, options);
    } else {
      bytes = torchonnx::export_model_to_bytes(module, inputs, options);
    }
  }
  return bytes_or_none(bytes);
}

// torchonnx::verify of a module: (the result as JSON, the table `torchonnx verify` prints), for
// torchonnx.verification. `more_args`: more argument sets (additional_test_inputs).
std::pair<std::string, std::string> verify_module(const torch::jit::Module& module,
                                                  const py::sequence& args,
                                                  const ExportOptions& options, double rtol,
                                                  double atol, bool find_mismatch,
                                                  const std::vector<py::sequence>& more_args) {
  std::vector<c10::IValue> inputs = module_args(module, args);
  torchonnx::VerifyOptions verify_options;
  verify_options.rtol = rtol;
  verify_options.atol = atol;
  verify_options.find_mismatch = find_mismatch;
  for (size_t i = 0; i < more_args.size(); ++i) {
    verify_options.more_inputs.emplace_back("additional_test_inputs[" + std::to_string(i) + "]",
                                            module_args(module, more_args[i]));
  }
  py::gil_scoped_release no_gil;
  const torchonnx::VerifyResult result = torchonnx::verify(module, inputs, options, verify_options);
  return {torchonnx::verify_result_json(result), torchonnx::format_verify_result(result)};
}

torchonnx::PrettyFormat pretty_format(const std::string& format) {
  if (format == "text") return torchonnx::PrettyFormat::kText;
  if (format == "dot") return torchonnx::PrettyFormat::kDot;
  throw ExportError(ErrorCode::kInvalidArgument,
                    "format '" + format + "' is not a pretty-string format: use 'text' or 'dot'");
}

std::string module_pretty_string(const torch::jit::Module& module, const py::sequence& args,
                                 const ExportOptions& options, const std::string& format) {
  std::vector<c10::IValue> inputs = module_args(module, args);
  const torchonnx::PrettyFormat f = pretty_format(format);
  py::gil_scoped_release no_gil;
  return torchonnx::export_to_pretty_string(module, inputs, options, f);
}

std::vector<torchonnx::UnconvertibleOp> unconvertible_ops(const torch::jit::Module& module,
                                                          const py::sequence& args,
                                                          const ExportOptions& options) {
  std::vector<c10::IValue> inputs = module_args(module, args);
  py::gil_scoped_release no_gil;
  return torchonnx::unconvertible_ops(module, inputs, options);
}

void set_log_stream(const std::string& name) {
  if (name == "stdout") {
    torchonnx::set_log_stream(&std::cout);
  } else if (name == "stderr") {
    torchonnx::set_log_stream(&std::cerr);
  } else {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "set_log_stream: '" + name +
                          "' is no log stream: only 'stdout' and 'stderr' are supported");
  }
}

// torchonnx::ExportError → the exception class torchonnx.errors chooses for its code, with the
// code as `.code`.
void translate_export_error(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const ExportError& e) {
    const int code = static_cast<int>(e.code());
    py::object cls = py::module_::import("torchonnx.errors").attr("_error_class")(code);
    py::object exc = cls(e.what());
    exc.attr("code") = code;
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
  }
}

// --- Python symbolic functions (torch.onnx.register_custom_op_symbolic) ---
//
// A SymbolicCall is the public API's GraphContext and Args of one call of a symbolic, handed to
// Python (torchonnx/symbolic_helper.py builds torch.onnx's `g` and values over it). It is valid
// only during the call: afterwards every method raises.
class SymbolicCall {
 public:
  SymbolicCall(torchonnx::GraphContext& g, const torchonnx::Args& args) : g_(&g), args_(&args) {}
  void invalidate() { g_ = nullptr, args_ = nullptr; }

  torchonnx::GraphContext& g() const {
    if (!g_) throw std::runtime_error("a symbolic's graph context was used after its call ended");
    return *g_;
  }
  const torchonnx::Args& args() const {
    if (!args_) throw std::runtime_error("a symbolic's arguments were used after its call ended");
    return *args_;
  }

 private:
  torchonnx::GraphContext* g_;
  const torchonnx::Args* args_;
};

// An attribute from Python: (name, kind, value), kind one of torch.onnx's suffixes.
torchonnx::Attribute to_attribute(const std::string& name, const std::string& kind,
                                  const py::handle& value) {
  if (kind == "i") return {name, value.cast<int64_t>()};
  if (kind == "f") return {name, value.cast<double>()};
  if (kind == "s") return {name, value.cast<std::string>()};
  if (kind == "t") return {name, value.cast<at::Tensor>()};
  if (kind == "is") return {name, value.cast<std::vector<int64_t>>()};
  if (kind == "fs") return {name, value.cast<std::vector<float>>()};
  if (kind == "ss") return {name, value.cast<std::vector<std::string>>()};
  throw ExportError(ErrorCode::kInvalidArgument, "attribute '" + name + "': '" + kind +
                                                     "' is no attribute type (i, f, s, t, " +
                                                     "is, fs, ss)");
}

py::object optional_list(const std::optional<std::vector<int64_t>>& v) {
  if (!v) return py::none();
  return py::cast(*v);
}

void bind_symbolic_call(py::module_& m) {
  py::class_<SymbolicCall, std::shared_ptr<SymbolicCall>>(m, "SymbolicCall")
      .def("opset", [](const SymbolicCall& c) { return c.g().opset(); })
      .def(
          "op",
          [](SymbolicCall& c, const std::string& type, const std::vector<std::string>& inputs,
             const std::vector<std::tuple<std::string, std::string, py::object>>& attributes,
             size_t outputs) {
            torchonnx::Attributes attrs;
            for (const auto& [name, kind, value] : attributes) {
              attrs.push_back(to_attribute(name, kind, value));
            }
            return c.g().op(type, inputs, attrs, outputs);
          },
          py::arg("type"), py::arg("inputs"), py::arg("attributes"), py::arg("outputs") = 1)
      .def("constant", [](SymbolicCall& c, const at::Tensor& t) { return c.g().constant(t); })
      .def("fail", [](const SymbolicCall& c, const std::string& message) { c.g().fail(message); })
      // (dtype name or None, sizes with -1 for a dynamic dim or None) of a value by its name
      .def("value_type",
           [](const SymbolicCall& c, const std::string& name) {
             const at::ScalarType t = c.g().dtype(name);
             py::object dtype = t == at::ScalarType::Undefined
                                    ? py::object(py::none())
                                    : py::object(py::str(c10::toString(t)));
             return py::make_tuple(dtype, optional_list(c.g().sizes(name)));
           })
      .def("size", [](const SymbolicCall& c) { return c.args().size(); })
      .def(
          "node",
          [](const SymbolicCall& c) { return const_cast<torch::jit::Node*>(c.args().node()); },
          py::return_value_policy::reference)
      .def(
          "input_node",
          [](const SymbolicCall& c, size_t i) { return c.args().node()->input(i)->node(); },
          py::return_value_policy::reference)
      .def("debug_name",
           [](const SymbolicCall& c, size_t i) { return c.args().node()->input(i)->debugName(); })
      .def("tensor", [](const SymbolicCall& c, size_t i) { return c.args().tensor(i); })
      .def("is_none", [](const SymbolicCall& c, size_t i) { return c.args().is_none(i); })
      .def("is_constant", [](const SymbolicCall& c, size_t i) { return c.args().is_constant(i); })
      .def("int_arg", [](const SymbolicCall& c, size_t i) { return c.args().int_arg(i); })
      .def("float_arg", [](const SymbolicCall& c, size_t i) { return c.args().float_arg(i); })
      .def("bool_arg", [](const SymbolicCall& c, size_t i) { return c.args().bool_arg(i); })
      .def("str_arg", [](const SymbolicCall& c, size_t i) { return c.args().str_arg(i); })
      .def("int_list", [](const SymbolicCall& c, size_t i) { return c.args().int_list(i); })
      .def("tensor_list", [](const SymbolicCall& c, size_t i) { return c.args().tensor_list(i); })
      // The traced forward of a torch.autograd.Function (prim::PythonOp's Subgraph) converted in
      // place of the node (torch.onnx's autograd inlining); None when the node has none.
      .def("inline_subgraph",
           [](SymbolicCall& c) -> py::object {
             const torch::jit::Node* node = c.args().node();
             static const auto kSubgraph = c10::Symbol::attr("Subgraph");
             if (!node->hasAttribute(kSubgraph)) return py::none();
             torchonnx::Values inputs;
             for (size_t i = 0; i < c.args().size(); ++i) inputs.push_back(c.args().tensor(i));
             return py::cast(c.g().inline_graph(*node->g(kSubgraph), inputs));
           })
      .def("dtype",
           [](const SymbolicCall& c, size_t i) -> py::object {
             const at::ScalarType t = c.args().dtype(i);
             if (t == at::ScalarType::Undefined) return py::none();
             return py::str(c10::toString(t));
           })
      .def("sizes",
           [](const SymbolicCall& c, size_t i) { return optional_list(c.args().sizes(i)); })
      .def("rank", [](const SymbolicCall& c, size_t i) { return c.args().rank(i); })
      .def("output_dtype",
           [](const SymbolicCall& c, size_t k) -> py::object {
             const at::ScalarType t = c.args().output_dtype(k);
             if (t == at::ScalarType::Undefined) return py::none();
             return py::str(c10::toString(t));
           })
      .def("output_sizes",
           [](const SymbolicCall& c, size_t k) { return optional_list(c.args().output_sizes(k)); });
}

// The registered Python function, released with the GIL (or leaked when the interpreter is
// gone: the registry outlives it at exit).
std::shared_ptr<py::object> hold(py::object fn) {
  return std::shared_ptr<py::object>(new py::object(std::move(fn)), [](py::object* p) {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      delete p;
    }
  });
}

// torchonnx.symbolic_helper._call_symbolic(fn, call) runs the Python function and returns
// (values, None) or (None, message with the Python traceback).
void register_python_symbolic(const std::string& name, py::object fn, int opset_version) {
  auto held = hold(std::move(fn));
  torchonnx::register_custom_op_symbolic(
      name,
      [held, name](torchonnx::GraphContext& g, const torchonnx::Args& args) -> torchonnx::Values {
        std::string error;
        {
          py::gil_scoped_acquire gil;
          auto call = std::make_shared<SymbolicCall>(g, args);
          py::object result = py::module_::import("torchonnx.symbolic_helper")
                                  .attr("_call_symbolic")(*held, name, call);
          call->invalidate();
          auto pair = result.cast<py::tuple>();
          if (pair[1].is_none()) return pair[0].cast<torchonnx::Values>();
          error = pair[1].cast<std::string>();
        }
        g.fail(error);
      },
      opset_version);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torchonnx's C++ exporter (the binding under the torchonnx package)";
  py::register_exception_translator(&translate_export_error);

  m.attr("__version__") = torchonnx::kVersion;
  m.attr("MIN_OPSET") = torchonnx::kLowestOpset;
  m.attr("MAX_OPSET") = torchonnx::kMaxOpset;
  m.attr("DEFAULT_OPSET") = torchonnx::kDefaultOpset;
  m.def("highest_opset", &torchonnx::highest_opset,
        "The highest opset this build exports (17 with onnx 1.12).");

  py::enum_<torchonnx::OperatorExportType>(m, "OperatorExportType")
      .value("ONNX", torchonnx::OperatorExportType::kOnnx)
      .value("ONNX_ATEN", torchonnx::OperatorExportType::kOnnxAten)
      .value("ONNX_ATEN_FALLBACK", torchonnx::OperatorExportType::kOnnxAtenFallback)
      .value("ONNX_FALLTHROUGH", torchonnx::OperatorExportType::kOnnxFallthrough)
      .value("RAW", torchonnx::OperatorExportType::kRaw);
  py::enum_<torchonnx::TrainingMode>(m, "TrainingMode")
      .value("EVAL", torchonnx::TrainingMode::kEval)
      .value("PRESERVE", torchonnx::TrainingMode::kPreserve)
      .value("TRAINING", torchonnx::TrainingMode::kTraining);

  py::class_<ExportOptions>(m, "ExportOptions")
      .def(py::init<>())
      .def_readwrite("input_names", &ExportOptions::input_names)
      .def_readwrite("output_names", &ExportOptions::output_names)
      .def_readwrite("opset_version", &ExportOptions::opset_version)
      .def_readwrite("export_params", &ExportOptions::export_params)
      .def_readwrite("verbose", &ExportOptions::verbose)
      .def_readwrite("do_constant_folding", &ExportOptions::do_constant_folding)
      .def_readwrite("keep_initializers_as_inputs", &ExportOptions::keep_initializers_as_inputs)
      .def_readwrite("drop_unused_inputs", &ExportOptions::drop_unused_inputs)
      .def_readwrite("strip_doc_string", &ExportOptions::strip_doc_string)
      .def_readwrite("dynamic_axes", &ExportOptions::dynamic_axes)
      .def_readwrite("operator_export_type", &ExportOptions::operator_export_type)
      .def_readwrite("training", &ExportOptions::training)
      .def_readwrite("custom_opsets", &ExportOptions::custom_opsets)
      .def_readwrite("export_modules_as_functions", &ExportOptions::export_modules_as_functions)
      .def_readwrite("use_external_data_format", &ExportOptions::use_external_data_format)
      // {path: (type, [(name, value), ...])}, values int, float, str or lists of ints or floats.
      .def("set_module_attributes",
           [](ExportOptions& o,
              const std::map<
                  std::string,
                  std::pair<std::string,
                            std::vector<std::pair<std::string, decltype(ModuleAttribute::value)>>>>&
                  modules) {
             o.module_attributes.clear();
             for (const auto& [path, module] : modules) {
               auto& out = o.module_attributes[path];
               out.type = module.first;
               for (const auto& [name, value] : module.second) {
                 out.attributes.push_back({name, value});
               }
             }
           });
  m.def("check_export_options", &torchonnx::check_export_options);

  m.def("export_module", &export_module, py::arg("module"), py::arg("args"), py::arg("options"),
        py::arg("path") = py::none(),
        "Exports a torch._C.ScriptModule's forward() to `path`, or returns the model's bytes "
        "when `path` is None.");
  m.def(
      "load_exported_program",
      [](const std::string& path, const std::string& program) {
        torchonnx::ExportedProgram p;
        {
          py::gil_scoped_release no_gil;
          p = torchonnx::load_exported_program(path, program);
        }
        py::list inputs;
        for (const auto& v : p.example_inputs) inputs.append(torch::jit::toPyObject(v));
        return py::make_tuple(p.module, inputs, p.dynamic_axes, p.input_names, p.notes);
      },
      py::arg("path"), py::arg("program") = "",
      "A .pt2 (torch.export.save) as (torch._C.ScriptModule, example inputs, dynamic axes, "
      "input names, notes): torchonnx::load_exported_program.");
  m.def("module_pretty_string", &module_pretty_string, py::arg("module"), py::arg("args"),
        py::arg("options"), py::arg("format") = "text");
  py::class_<torchonnx::UnconvertibleOp>(m, "UnconvertibleOp")
      .def_readonly("name", &torchonnx::UnconvertibleOp::name)
      .def_readonly("count", &torchonnx::UnconvertibleOp::count)
      .def_readonly("locations", &torchonnx::UnconvertibleOp::locations)
      .def_readonly("errors", &torchonnx::UnconvertibleOp::errors)
      .def("__repr__", [](const torchonnx::UnconvertibleOp& op) {
        return "UnconvertibleOp(" + op.name + ", count=" + std::to_string(op.count) + ")";
      });
  m.def("unconvertible_ops", &unconvertible_ops, py::arg("module"), py::arg("args"),
        py::arg("options"));

  m.def("verify_available", &torchonnx::verify_available,
        "Whether this build runs ONNX Runtime in-process (Debian 13's libonnxruntime-dev).");
  m.def("verify_module", &verify_module, py::arg("module"), py::arg("args"), py::arg("options"),
        py::arg("rtol"), py::arg("atol"), py::arg("find_mismatch"), py::arg("more_args"));
  m.def("write_test_data", &torchonnx::write_test_data, py::arg("dir"), py::arg("inputs"),
        py::arg("outputs"),
        "Writes DIR/input_<i>.pb and DIR/output_<i>.pb (the ONNX test-data layout).");

  m.def("is_onnx_log_enabled", &torchonnx::is_onnx_log_enabled);
  m.def("enable_log", &torchonnx::enable_log);
  m.def("disable_log", &torchonnx::disable_log);
  m.def("set_log_stream", &set_log_stream, py::arg("stream_name"));
  m.def(
      "log", [](const std::string& message) { torchonnx::log(message); }, py::arg("message"));
  bind_symbolic_call(m);
  m.def("register_custom_op_symbolic", &register_python_symbolic, py::arg("symbolic_name"),
        py::arg("symbolic_fn"), py::arg("opset_version"));
  m.def("unregister_custom_op_symbolic", &torchonnx::unregister_custom_op_symbolic,
        py::arg("symbolic_name"), py::arg("opset_version"));
  m.def("is_in_onnx_export", &torchonnx::is_in_onnx_export,
        "True while torchonnx's C++ core exports on the calling thread.");
}
