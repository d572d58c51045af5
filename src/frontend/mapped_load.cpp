// Note [Mapped import]
// libtorch's importer takes a pre-filled storage context only on the path of torch.package
// (import_ir_module(cu, reader, storage_context, device, ts_id)), in both 1.13 and 2.6. That path
// reads code from .data/ts_code/code/, pickles from .data/ts_code/<ts_id>/ and takes a storage
// from the context by its pickle key. So the importer gets a small archive in memory, written
// here: the .pt's code, pickles and other small records under those names, and no tensor records;
// the context holds every storage, each a view of the mapped .pt. A .pt keeps data.pkl's tensors
// in data/<key> and constants.pkl's in constants/<key> with keys "0", "1", ... in both, whereas
// the context has one name space: constants.pkl's keys are renamed in its copy to letters of the
// same length ("0" → "a", "12" → "bc"; same length, so the pickle stays valid), which only works
// when the pickle's memo hands no key string back for another use (then the file is loaded as
// usual). A record that is not 64-byte aligned (archives of old PyTorch) is copied.
#include "frontend/mapped_load.h"

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/storage_context.h>

#include <cstring>
#include <memory>

#include "common/mapped_file.h"

namespace torchonnx::frontend {

namespace {

constexpr const char* kTsId = "m";

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// constants.pkl's key in the context: its digits as letters.
std::optional<std::string> constant_key(const std::string& key) {
  if (key.empty()) return std::nullopt;
  std::string out;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    out.push_back(static_cast<char>('a' + (c - '0')));
  }
  return out;
}

}  // namespace

std::optional<torch::jit::Module> load_mapped(const std::string& path,
                                              const ArchiveLayout& layout) {
  if (!layout.sizes.count("data.pkl") || !layout.sizes.count("constants.pkl") ||
      layout.sizes.count("model.json")) {
    return std::nullopt;
  }
  // Every storage record stored uncompressed; constants' keys renamable.
  for (const auto* storages : {&layout.data, &layout.constants}) {
    const std::string dir = storages == &layout.data ? "data/" : "constants/";
    for (const PickledStorage& s : *storages) {
      if (s.numel > 0 && !layout.stored.count(dir + s.key)) return std::nullopt;
      if (storages == &layout.constants && (s.key_shared || !constant_key(s.key))) {
        return std::nullopt;
      }
    }
  }
  std::shared_ptr<MappedFile> file = MappedFile::open(path);
  if (!file) return std::nullopt;
  caffe2::serialize::PyTorchStreamReader reader(path);
  if (reader.version() < caffe2::serialize::kMinProducedFileFormatVersion) return std::nullopt;

  auto context = std::make_shared<torch::jit::DeserializationStorageContext>();
  auto add = [&](const std::string& record, const std::string& key, const PickledStorage& s) {
    if (s.numel <= 0 || context->hasStorage(key)) return;
    const uint64_t nbytes = static_cast<uint64_t>(s.numel) * static_cast<uint64_t>(s.element_size);
    const uint64_t offset = reader.getRecordOffset(record);
    if (offset % 64 == 0 && offset <= file->size() && nbytes <= file->size() - offset) {
      context->addStorage(key, file->storage(offset, nbytes));
      return;
    }
    auto [data, size] = reader.getRecord(record);  // not aligned: a copy, as the loader makes
    context->addStorage(key, c10::Storage(c10::Storage::use_byte_size_t(),
                                          static_cast<int64_t>(nbytes), std::move(data),
                                          /*allocator=*/nullptr, /*resizable=*/false));
  };
  for (const PickledStorage& s : layout.data) add("data/" + s.key, s.key, s);
  for (const PickledStorage& s : layout.constants) {
    add("constants/" + s.key, *constant_key(s.key), s);
  }

  // The small archive the importer reads (its records copied; no tensor records).
  std::string archive;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* p, size_t n) {
      archive.append(static_cast<const char*>(p), n);
      return n;
    });
    writer.setMinVersion(reader.version());
    for (const auto& [name, size] : layout.sizes) {
      if (starts_with(name, "data/") || starts_with(name, "constants/") || name == "version" ||
          name == ".data/version" || name == "byteorder" || name == ".data/serialization_id") {
        continue;
      }
      auto [data, n] = reader.getRecord(name);
      std::string target = name;
      if (starts_with(name, "code/")) {
        target = ".data/ts_code/" + name;
      } else if (name == "data.pkl" || name == "constants.pkl") {
        target = std::string(".data/ts_code/") + kTsId + "/" + name;
      }
      if (name == "constants.pkl") {
        std::string pickle(static_cast<const char*>(data.get()), n);
        for (const PickledStorage& s : layout.constants) {
          const std::string key = *constant_key(s.key);
          if (s.key_at + key.size() > pickle.size()) return std::nullopt;
          pickle.replace(s.key_at, key.size(), key);
        }
        writer.writeRecord(target, pickle.data(), pickle.size());
        continue;
      }
      writer.writeRecord(target, data.get(), n);
    }
    writer.writeEndOfFile();
  }
  auto memory_reader = std::make_shared<caffe2::serialize::PyTorchStreamReader>(
      std::make_shared<caffe2::serialize::MemoryReadAdapter>(archive.data(),
                                                             static_cast<off_t>(archive.size())));
  return torch::jit::import_ir_module(std::make_shared<torch::jit::CompilationUnit>(),
                                      memory_reader, context, c10::nullopt, kTsId);
}

}  // namespace torchonnx::frontend
