// Writing an exported model without copying its weights: Note [Streaming serializer].
#pragma once

#include <ATen/core/Tensor.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/export_config.h"
#include "onnx/ir.h"
#include "torchonnx/export.h"

namespace torchonnx {

// An exported model before it is written. `proto` is the whole model except for the bytes of the
// initializers listed in `deferred`: those hold their name, dims and type, and their bytes stay in
// libtorch's storage until written.
struct ExportedModel {
  struct Deferred {
    int index;          // in proto.graph().initializer()
    at::Tensor tensor;  // on the CPU; a view is made contiguous only while it is written
  };
  onnx::ModelProto proto;
  std::vector<Deferred> deferred;
};

// Initializers of at least this many bytes are deferred (smaller ones, such as shape constants,
// stay in the proto: ONNX shape inference reads their values).
inline constexpr int64_t kDeferredTensorBytes = 1024;

ExportedModel to_exported_model(const ir::Model& model);

// Runs onnx's checker and shape inference (validate_model) on the model without its deferred
// bytes: deferred initializers are shown to them as graph inputs of the same type.
void validate_model(ExportedModel& model);

// Reports progress ("write" stage: bytes written of the total) to options.progress. With
// TORCHONNX_STAGE_TIMES=1, also prints when each stage starts and when the write ends (seconds
// since the export started) on stderr, as the pass pipeline prints each pass's seconds.
struct ProgressSink {
  ProgressSink() = default;
  explicit ProgressSink(const ProgressCallback* to) : callback(to) {}
  const ProgressCallback* callback = nullptr;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void report(const std::string& stage, int64_t done, int64_t total) const;

 private:
  mutable std::string last_stage_;
};

// ExportError(kInvalidArgument) when external_data.location is no plain file name (Note
// [Contained external data]); export_model checks it before any work.
void check_external_data_options(const ExternalDataOptions& options);

// Writes the model to `path` atomically, its deferred bytes straight from storage. With
// config.use_external_data_format, or when the model would pass protobuf's 2 GB limit, the
// initializers of config.external_data.size_threshold bytes or more go to external data files
// beside `path` (ONNX's location/offset/length; the options were checked when the configuration
// was resolved). Returns whether external data was used.
bool write_model(ExportedModel& model, const std::string& path, const ExportConfig& config,
                 const ProgressSink& progress = {});

// The serialized model; throws ExportError past protobuf's 2 GB limit (export to a file instead).
std::string model_to_bytes(ExportedModel& model);

}  // namespace torchonnx
