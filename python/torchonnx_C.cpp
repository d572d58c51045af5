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
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/script.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "torchonnx/errors.h"
#include "torchonnx/export.h"
#include "torchonnx/logging.h"
#include "torchonnx/version.h"

namespace py = pybind11;

namespace {

using torchonnx::ErrorCode;
using torchonnx::ExportError;
using torchonnx::ExportOptions;

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
        out.push_back(torch::jit::toTypeInferredIValue(arg));
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

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torchonnx's C++ exporter (the binding under the torchonnx package)";
  py::register_exception_translator(&translate_export_error);

  m.attr("__version__") = torchonnx::kVersion;
  m.attr("MIN_OPSET") = torchonnx::kMinOpset;
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
      .def_readwrite("dynamic_axes", &ExportOptions::dynamic_axes)
      .def_readwrite("operator_export_type", &ExportOptions::operator_export_type)
      .def_readwrite("training", &ExportOptions::training)
      .def_readwrite("custom_opsets", &ExportOptions::custom_opsets)
      .def_readwrite("export_modules_as_functions", &ExportOptions::export_modules_as_functions)
      .def_readwrite("use_external_data_format", &ExportOptions::use_external_data_format);
  m.def("check_export_options", &torchonnx::check_export_options);

  m.def("export_module", &export_module, py::arg("module"), py::arg("args"), py::arg("options"),
        py::arg("path") = py::none(),
        "Exports a torch._C.ScriptModule's forward() to `path`, or returns the model's bytes "
        "when `path` is None.");
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

  m.def("write_test_data", &torchonnx::write_test_data, py::arg("dir"), py::arg("inputs"),
        py::arg("outputs"),
        "Writes DIR/input_<i>.pb and DIR/output_<i>.pb (the ONNX test-data layout).");

  m.def("is_onnx_log_enabled", &torchonnx::is_onnx_log_enabled);
  m.def("enable_log", &torchonnx::enable_log);
  m.def("disable_log", &torchonnx::disable_log);
  m.def("set_log_stream", &set_log_stream, py::arg("stream_name"));
  m.def(
      "log", [](const std::string& message) { torchonnx::log(message); }, py::arg("message"));
  m.def("is_in_onnx_export", &torchonnx::is_in_onnx_export,
        "True while torchonnx's C++ core exports on the calling thread.");
}
