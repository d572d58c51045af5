// The exporter's log (process-wide switch and stream) and the thread-local export state.
#include "torchonnx/logging.h"

#include <atomic>
#include <iostream>
#include <mutex>

namespace torchonnx {

namespace {

std::atomic<bool> g_log_enabled{false};
std::mutex g_log_mutex;                // guards g_log_stream and the writes to it
std::ostream* g_log_stream = nullptr;  // nullptr: std::cerr
thread_local int t_export_depth = 0;   // nested exports (an export from a traced function)

}  // namespace

bool is_onnx_log_enabled() {
  return g_log_enabled.load(std::memory_order_relaxed);
}

void enable_log() {
  g_log_enabled.store(true);
}

void disable_log() {
  g_log_enabled.store(false);
}

void set_log_stream(std::ostream* stream) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log_stream = stream;
}

void log(const std::string& message) {
  if (!is_onnx_log_enabled()) return;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::ostream& os = g_log_stream ? *g_log_stream : std::cerr;
  os << message << '\n' << std::flush;
}

void warn(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::cerr << "torchonnx: warning: " << message << std::endl;
}

bool is_in_onnx_export() {
  return t_export_depth > 0;
}

namespace detail {
ExportScope::ExportScope() {
  ++t_export_depth;
}
ExportScope::~ExportScope() {
  --t_export_depth;
}
}  // namespace detail

}  // namespace torchonnx
