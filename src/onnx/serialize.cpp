// Note [Streaming serializer]
// torch.onnx copies every weight into a protobuf string, serializes the ModelProto into another
// buffer and writes that: three copies of the weights in memory at once, and a hard failure at
// protobuf's 2 GB limit. We never put large tensors into the proto. to_exported_model gives their
// initializers only a name, dims and type, and keeps the libtorch tensors beside the proto. The
// checker and ONNX shape inference see those initializers as graph inputs of the same type (they
// read the values of small initializers only, which stay in the proto). Writing then emits the
// protobuf wire format by hand around the proto's own serialization: protobuf parsers accept the
// fields of a message in any order, so the model is written as
//   ModelProto fields except graph | graph tag, length | GraphProto fields except initializers |
//   per initializer: tag, length, TensorProto header (name, dims, type[, external refs])
//                    [, raw_data tag, length, the tensor's bytes straight from its storage]
// whose lengths are all known before the first byte is written. With external data the bytes go
// to a data file instead (one for all tensors at aligned offsets, or one per tensor) and the header
// carries ONNX's location/offset/length. Peak memory stays at the model's own tensors plus a 1 MB
// write buffer, and the time is that of writing the bytes.
#include "onnx/serialize.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/mapped_file.h"
#include "onnx/file_util.h"
#include "onnx/model_proto.h"
#include "onnx/transposed_bytes.h"
#include "torchonnx/logging.h"

namespace torchonnx {

void ProgressSink::report(const std::string& stage, int64_t done, int64_t total) const {
  static const bool timed = std::getenv("TORCHONNX_STAGE_TIMES") != nullptr;
  if (timed) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (stage != last_stage_) {
      std::cerr << fmt::format("torchonnx: stage {} from {:.4f} s\n", stage, seconds);
      last_stage_ = stage;
    }
    if (stage == "write" && done == total && total > 0) {
      std::cerr << fmt::format("torchonnx: stage write done at {:.4f} s\n", seconds);
    }
  }
  if (callback == nullptr || !*callback) return;
  ExportProgress p;
  p.stage = stage;
  p.done = done;
  p.total = total;
  p.elapsed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (*callback)(p);
}

void validate_model(ExportedModel& model) {
  onnx::GraphProto* g = model.proto.mutable_graph();
  std::unordered_set<std::string> inputs;
  for (const auto& in : g->input()) inputs.insert(in.name());
  std::vector<bool> is_deferred(g->initializer_size(), false);
  int added = 0;
  for (const auto& d : model.deferred) {
    is_deferred[d.index] = true;
    const onnx::TensorProto& init = g->initializer(d.index);
    if (inputs.count(init.name())) continue;  // keep_initializers_as_inputs lists it already
    auto* type = g->add_input();
    type->set_name(init.name());
    auto* tensor = type->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(init.data_type());
    auto* shape = tensor->mutable_shape();
    for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
    ++added;
  }
  // The initializers without bytes leave the graph while it is checked (swaps, no copies).
  google::protobuf::RepeatedPtrField<onnx::TensorProto> all;
  all.Swap(g->mutable_initializer());
  for (int i = 0; i < all.size(); ++i) {
    if (!is_deferred[i]) g->add_initializer()->Swap(all.Mutable(i));
  }
  validate_model(model.proto);
  g->mutable_input()->DeleteSubrange(g->input_size() - added, added);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  kept.Swap(g->mutable_initializer());
  g->mutable_initializer()->Reserve(all.size());
  for (int i = 0, k = 0; i < all.size(); ++i) {
    g->add_initializer()->Swap(is_deferred[i] ? all.Mutable(i) : kept.Mutable(k++));
  }
}

namespace {

namespace wire {

constexpr uint32_t kLengthDelimited = 2;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// The tag and length that open a length-delimited field of `length` bytes.
std::string field_head(int field, uint64_t length) {
  std::string out;
  put_varint(out, (static_cast<uint64_t>(field) << 3) | kLengthDelimited);
  put_varint(out, length);
  return out;
}

}  // namespace wire

// Where the bytes of one initializer go.
struct Entry {
  std::string header;          // serialized TensorProto without its bytes
  const char* data = nullptr;  // the bytes: an inline raw_data, or
  at::Tensor tensor;           // a deferred tensor's (contiguous while it is written)
  uint64_t size = 0;
  bool external = false;
  std::string location;   // external: the data file, relative to the model's folder
  uint64_t offset = 0;    // external: where in it
  std::string raw_field;  // inline with bytes: raw_data's tag and length
  uint64_t length() const { return header.size() + raw_field.size() + (external ? 0 : size); }
};

struct Plan {
  std::string model_fields;  // ModelProto without its graph
  std::string graph_fields;  // GraphProto without its initializers
  std::vector<Entry> entries;
  uint64_t graph_length = 0;
  uint64_t total = 0;                          // bytes of the model file
  std::map<std::string, uint64_t> data_files;  // location → size (external data)
};

// Note [Contained external data]: every data file is a plain file name inside the model's
// folder, whatever the tensor names or options say: a user-given location must be one (no
// folder part, no "..", no absolute path); per-tensor files are named after the tensor with only
// [A-Za-z0-9._-] kept, never "." or "..", at most kMaxFileName bytes (longer names end in a hash
// of the whole name), and unique also on case-insensitive file systems and against the model's
// own file name.
constexpr size_t kMaxFileName = 200;

void check_location(const std::string& location) {
  const bool plain = !location.empty() && location != "." && location != ".." &&
                     location.find('/') == std::string::npos &&
                     location.find('\\') == std::string::npos &&
                     location.find('\0') == std::string::npos && location.size() <= 255;
  if (!plain) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("external_data.location '{}' is not a plain file name: data "
                                  "files always go into the model's folder. Remedy: give a file "
                                  "name without a folder part, e.g. 'model.onnx.data'.",
                                  location));
  }
}

// FNV-1a: a hash that is the same on every platform and run (file names must be deterministic).
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A file name for a tensor's own data file (torch.onnx's per-tensor layout). `used` holds the
// lower-cased names taken so far.
std::string tensor_file_name(const std::string& name, std::unordered_set<std::string>& used) {
  std::string base;
  for (char c : name) {
    base.push_back(
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_');
  }
  if (base.empty() || base == "." || base == "..") base = "tensor";
  if (base.size() > kMaxFileName) {
    base = fmt::format("{}_{:016x}", base.substr(0, kMaxFileName - 17), fnv1a(name));
  }
  std::string file = base;
  for (int k = 1; !used.insert(lower(file)).second; ++k) file = fmt::format("{}_{}", base, k);
  return file;
}

uint64_t align_up(uint64_t offset, uint64_t size) {
  // Page-aligned large tensors can be memory-mapped in place by runtimes.
  const uint64_t alignment = size >= (uint64_t{1} << 20) ? 4096 : 64;
  return (offset + alignment - 1) / alignment * alignment;
}

// Lays the model out: what goes where, and every length. `external`: tensors of `threshold` bytes
// or more go to external data, in `model_name`'s folder.
Plan make_plan(ExportedModel& model, bool external, const ExternalDataOptions& options,
               const std::string& model_name) {
  Plan plan;
  onnx::ModelProto& proto = model.proto;
  onnx::GraphProto* g = proto.mutable_graph();

  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  inits.Swap(g->mutable_initializer());
  plan.graph_fields = g->SerializeAsString();
  inits.Swap(g->mutable_initializer());
  onnx::GraphProto* graph = proto.release_graph();
  plan.model_fields = proto.SerializeAsString();
  proto.set_allocated_graph(graph);

  std::vector<const ExportedModel::Deferred*> deferred_at(g->initializer_size(), nullptr);
  for (const auto& d : model.deferred) deferred_at[d.index] = &d;

  const std::string single = options.location.empty() ? model_name + ".data" : options.location;
  std::unordered_set<std::string> used_files = {lower(model_name)};
  plan.entries.reserve(g->initializer_size());
  for (int i = 0; i < g->initializer_size(); ++i) {
    const onnx::TensorProto& init = g->initializer(i);
    Entry e;
    if (const auto* d = deferred_at[i]) {
      e.tensor = d->tensor;
      e.size = static_cast<uint64_t>(d->tensor.numel()) * d->tensor.element_size();
    } else if (init.has_raw_data()) {
      e.data = init.raw_data().data();
      e.size = init.raw_data().size();
    }
    const bool has_bytes = e.data != nullptr || e.tensor.defined();
    e.external = external && has_bytes && e.size > 0 &&
                 e.size >= static_cast<uint64_t>(std::max<int64_t>(options.size_threshold, 0));
    if (!has_bytes) {
      e.header = init.SerializeAsString();  // typed fields or an empty tensor: as it is
      plan.entries.push_back(std::move(e));
      continue;
    }
    onnx::TensorProto header;
    header.set_name(init.name());
    header.set_data_type(init.data_type());
    *header.mutable_dims() = init.dims();
    if (e.external) {
      if (options.layout == ExternalDataOptions::Layout::kFilePerTensor) {
        e.location = tensor_file_name(init.name(), used_files);
        e.offset = 0;
        plan.data_files[e.location] = e.size;
      } else {
        e.location = single;
        uint64_t& end = plan.data_files[single];
        e.offset = align_up(end, e.size);
        end = e.offset + e.size;
      }
      header.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
      auto add = [&](const char* key, const std::string& value) {
        auto* entry = header.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      };
      add("location", e.location);
      if (options.layout == ExternalDataOptions::Layout::kSingleFile) {
        add("offset", std::to_string(e.offset));
      }
      add("length", std::to_string(e.size));
    } else {
      e.raw_field = wire::field_head(onnx::TensorProto::kRawDataFieldNumber, e.size);
    }
    e.header = header.SerializeAsString();
    plan.entries.push_back(std::move(e));
  }
  plan.graph_length = plan.graph_fields.size();
  for (const Entry& e : plan.entries) {
    const uint64_t len = e.length();
    plan.graph_length += 1 + wire::varint_size(len) + len;
  }
  plan.total =
      plan.model_fields.size() + 1 + wire::varint_size(plan.graph_length) + plan.graph_length;
  return plan;
}

// The bytes of entries in the order they are written. A view other than a transposed matrix is
// copied to contiguous memory on a second thread one entry ahead, while the previous entry is
// written, into two buffers used in turn: no fresh pages per tensor, and the copy overlaps the
// write. A transposed matrix has no bytes here (nullptr): write_entry_bytes transposes it a block
// at a time (Note [Writing transposed weights]).
class ByteStream {
 public:
  explicit ByteStream(std::vector<const Entry*> order) : order_(std::move(order)) {
    futures_.resize(order_.size());
    if (!order_.empty()) start(0);
  }
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;
  ~ByteStream() {
    for (auto& f : futures_) {
      if (f.valid()) f.wait();  // no copy may outlive the buffers
    }
  }

  // The next entry's bytes, valid until the following call.
  const char* next() {
    const size_t k = pos_++;
    if (futures_[k].valid()) futures_[k].get();  // rethrows a failed copy
    if (k + 1 < order_.size()) start(k + 1);
    const Entry& e = *order_[k];
    if (!e.tensor.defined()) return e.data;
    if (is_transposed_matrix(e.tensor)) return nullptr;
    if (!needs_copy(e)) return static_cast<const char*>(e.tensor.data_ptr());
    return slots_[k % 2].data();
  }

 private:
  static bool needs_copy(const Entry& e) {
    return e.tensor.defined() && !e.tensor.is_contiguous() && !is_transposed_matrix(e.tensor);
  }

  void start(size_t k) {
    const Entry& e = *order_[k];
    if (!needs_copy(e)) return;
    std::vector<char>& slot = slots_[k % 2];
    futures_[k] = std::async(std::launch::async, [&e, &slot] {
      at::NoGradGuard no_grad;  // a new thread: grad mode is on by default
      if (slot.size() < e.size) slot.resize(e.size);
      at::from_blob(slot.data(), e.tensor.sizes(), e.tensor.options()).copy_(e.tensor);
      release_mapped_pages(e.tensor);  // a view of a .pt's weight: Note [Zero-copy weights]
    });
  }

  std::vector<const Entry*> order_;
  std::vector<char> slots_[2];
  std::vector<std::future<void>> futures_;
  size_t pos_ = 0;
};

// The entries whose bytes go inline into the model file, in order.
std::vector<const Entry*> inline_entries(const Plan& plan) {
  std::vector<const Entry*> out;
  for (const Entry& e : plan.entries) {
    if (!e.external && !e.raw_field.empty()) out.push_back(&e);
  }
  return out;
}

// Counts bytes and reports them at most every 32 MB.
struct ByteCounter {
  const ProgressSink& progress;
  int64_t total;
  int64_t done = 0;
  int64_t reported = 0;
  void add(uint64_t n) {
    done += static_cast<int64_t>(n);
    if (done - reported >= (int64_t{32} << 20) || done == total) {
      reported = done;
      progress.report("write", done, total);
    }
  }
};

// The bytes of a transposed matrix are made and written this much at a time (the blocks stay
// in a core's L2 cache): Note [Writing transposed weights].
constexpr size_t kTransposeBlockBytes = size_t{512} << 10;

// Writes the bytes of `e` (`p`, from its ByteStream) with `write`, or with `copy` (file, offset,
// size) when they are a .pt's bytes that nothing changed: Note [Zero-copy weights].
template <typename Write, typename Copy>
void write_entry_bytes(const Entry& e, const char* p, Write& write, Copy& copy) {
  if (e.tensor.defined()) {
    if (auto bytes = unchanged_file_bytes(e.tensor)) {
      copy(e, *bytes);
      // Its pages were not read here, but a fault on a neighbour may have mapped them: the page
      // cache maps a large folio (from readahead: up to 2 MB) whole.
      release_mapped_pages(e.tensor);
      return;
    }
  }
  if (p == nullptr) {  // a transposed matrix
    for_each_transposed_block(e.tensor, kTransposeBlockBytes,
                              [&](const char* block, size_t n) { write(block, n); });
  } else {
    write(p, e.size);
  }
  if (e.tensor.defined()) release_mapped_pages(e.tensor);
}

template <typename Write, typename Copy>
void write_model_file(const Plan& plan, Write&& write, Copy&& copy, ByteCounter& counter) {
  ByteStream bytes(inline_entries(plan));
  write(plan.model_fields.data(), plan.model_fields.size());
  const std::string graph_head =
      wire::field_head(onnx::ModelProto::kGraphFieldNumber, plan.graph_length);
  write(graph_head.data(), graph_head.size());
  write(plan.graph_fields.data(), plan.graph_fields.size());
  for (const Entry& e : plan.entries) {
    const std::string head =
        wire::field_head(onnx::GraphProto::kInitializerFieldNumber, e.length());
    write(head.data(), head.size());
    write(e.header.data(), e.header.size());
    if (e.external || e.raw_field.empty()) continue;
    write(e.raw_field.data(), e.raw_field.size());
    write_entry_bytes(e, bytes.next(), write, copy);
    counter.add(e.size);
  }
}

uint64_t external_bytes(const Plan& plan) {
  uint64_t n = 0;
  for (const auto& [file, size] : plan.data_files) n += size;
  return n;
}

}  // namespace

void check_external_data_options(const ExternalDataOptions& options) {
  if (!options.location.empty()) check_location(options.location);
  if (options.size_threshold < 0) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      fmt::format("external_data.size_threshold {} is negative. Remedy: give a "
                                  "number of bytes >= 0.",
                                  options.size_threshold));
  }
}

bool write_model(ExportedModel& model, const std::string& path, const ExportConfig& config,
                 const ProgressSink& progress) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string model_name = target.filename().string();
  bool external = config.use_external_data_format;
  Plan plan = make_plan(model, external, config.external_data, model_name);
  if (!external && plan.total > static_cast<uint64_t>(kProtobufLimitBytes)) {
    log(
        fmt::format("torchonnx: the model is {:.2f} GB, past protobuf's 2 GB limit: its tensors "
                    "go to external data beside {}",
                    plan.total / 1e9, path));
    external = true;
    plan = make_plan(model, external, config.external_data, model_name);
  }
  if (plan.total > static_cast<uint64_t>(kProtobufLimitBytes)) {
    throw ExportError(ErrorCode::kIo,
                      fmt::format("the model file would be {:.2f} GB even with its tensors of {} "
                                  "bytes or more in external data, past protobuf's 2 GB limit. "
                                  "Remedy: lower external_data.size_threshold "
                                  "(--external-data-threshold).",
                                  plan.total / 1e9, config.external_data.size_threshold));
  }
  ByteCounter counter{progress, static_cast<int64_t>(external_bytes(plan))};
  for (const Entry* e : inline_entries(plan)) counter.total += static_cast<int64_t>(e->size);
  progress.report("write", 0, counter.total);

  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::vector<std::unique_ptr<AtomicFile>> data_files;
  std::map<std::string, AtomicFile*> by_location;
  for (const auto& [location, size] : plan.data_files) {
    if (location == model_name) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("the external data file '{}' would overwrite the model. "
                                    "Remedy: choose another external_data.location.",
                                    location));
    }
    data_files.push_back(std::make_unique<AtomicFile>((dir / location).string()));
    by_location[location] = data_files.back().get();
  }
  static const char kZeros[4096] = {};
  std::vector<const Entry*> external_entries;
  for (const Entry& e : plan.entries) {
    if (e.external) external_entries.push_back(&e);
  }
  ByteStream bytes(external_entries);
  for (const Entry* entry : external_entries) {
    const Entry& e = *entry;
    AtomicFile& file = *by_location.at(e.location);
    for (uint64_t pad = e.offset - file.size(); pad > 0;) {
      const uint64_t n = std::min<uint64_t>(pad, sizeof(kZeros));
      file.write(kZeros, n);
      pad -= n;
    }
    auto write = [&](const char* p, size_t n) { file.write(p, n); };
    auto copy = [&](const Entry&, const FileBytes& b) {
      file.copy_from(b.file->fd(), b.offset, b.size);
    };
    write_entry_bytes(e, bytes.next(), write, copy);
    counter.add(e.size);
  }
  AtomicFile model_file(path);
  write_model_file(
      plan, [&](const char* p, size_t n) { model_file.write(p, n); },
      [&](const Entry&, const FileBytes& b) {
        model_file.copy_from(b.file->fd(), b.offset, b.size);
      },
      counter);
  std::vector<std::string> committed;
  try {
    for (auto& file : data_files) {
      file->commit();
      committed.push_back(file->path());
    }
    model_file.commit();
  } catch (...) {
    for (const auto& p : committed) std::remove(p.c_str());
    throw;
  }
  return external;
}

std::string model_to_bytes(ExportedModel& model) {
  Plan plan = make_plan(model, false, {}, "");
  if (plan.total > static_cast<uint64_t>(kProtobufLimitBytes)) {
    throw ExportError(ErrorCode::kIo,
                      fmt::format("the model is {:.2f} GB, past protobuf's 2 GB limit for one "
                                  "serialized message. Remedy: export to a file (export_model), "
                                  "which stores the tensors as external data.",
                                  plan.total / 1e9));
  }
  std::string out;
  out.reserve(plan.total);
  ProgressSink none;
  ByteCounter counter{none, 0};
  write_model_file(
      plan, [&](const char* p, size_t n) { out.append(p, n); },
      [&](const Entry& e, const FileBytes& b) {
        out.append(b.file->data() + b.offset, b.size);
        release_mapped_pages(e.tensor);
      },
      counter);
  return out;
}

}  // namespace torchonnx
