// The exporter's log and state, as torch.onnx's enable_log / disable_log / is_onnx_log_enabled /
// set_log_stream / log and is_in_onnx_export.
//
//   torchonnx::enable_log();                      // off by default
//   torchonnx::set_log_stream(&my_file_stream);   // std::cerr by default
//   torchonnx::export_model(m, args, "m.onnx");   // writes "torchonnx: ..." lines to the stream
//
// The log describes what the exporter does: the capture, the passes, the ops given to the
// converters (with counts), the ONNX graph it made. Warnings are written to std::cerr whether or
// not the log is enabled.
#pragma once

#include <ostream>
#include <sstream>
#include <string>

#pragma GCC visibility push(default)  // Note [Exported symbols] (the root CMakeLists.txt)

namespace torchonnx {

// Whether the exporter writes its log (process-wide; off by default).
bool is_onnx_log_enabled();
void enable_log();
void disable_log();

// Where log lines go: `stream` (not owned; it must outlive its use), or std::cerr for nullptr.
// torch.onnx takes "stdout"/"stderr": pass &std::cout or &std::cerr.
void set_log_stream(std::ostream* stream);

// Writes `message` and a newline to the log stream and flushes it, when the log is enabled (as
// torch.onnx.log, which the exporter uses too). Lines from several threads do not interleave.
void log(const std::string& message);

// The same for several arguments, each written with operator<< and concatenated.
template <typename A, typename B, typename... Rest>
void log(const A& a, const B& b, const Rest&... rest) {
  if (!is_onnx_log_enabled()) return;
  std::ostringstream os;
  os << a << b;
  (os << ... << rest);
  log(os.str());
}

// Writes "torchonnx: warning: <message>" to std::cerr, whether or not the log is enabled (as
// torch.onnx's warnings.warn). Lines from several threads do not interleave.
void warn(const std::string& message);

// True while torchonnx exports on the calling thread: during the capture (so a traced function
// or a scripted call can branch on it, as torch.onnx documents for torch.onnx.is_in_onnx_export)
// and the conversion. Thread-local: an export on another thread does not make it true here, and
// threads the traced function starts see false.
bool is_in_onnx_export();

namespace detail {
// Marks the calling thread as exporting while it lives (nests).
class ExportScope {
 public:
  ExportScope();
  ~ExportScope();
  ExportScope(const ExportScope&) = delete;
  ExportScope& operator=(const ExportScope&) = delete;
};
}  // namespace detail

}  // namespace torchonnx

#pragma GCC visibility pop
