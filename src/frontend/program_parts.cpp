#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2

#include "frontend/program_parts.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/CPUAllocator.h>
#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/storage_context.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "common/mapped_file.h"
#include "frontend/program_args.h"
#include "frontend/program_graph.h"
#include "torchonnx/errors.h"

namespace torchonnx::frontend::pt2 {

namespace {

namespace jit = torch::jit;

// A storage of its own holding a copy of the `nbytes` at `data` (CPUAllocator memory is aligned for
// every element type).
c10::Storage aligned_copy(const void* data, size_t nbytes) {
  c10::Storage copy(c10::Storage::use_byte_size_t(), nbytes, c10::GetCPUAllocator(),
                    /*resizable=*/false);
  std::memcpy(copy.mutable_data(), data, nbytes);
  return copy;
}

// The tensors in `v` whose storage the mapping gives at an address their element type cannot be
// read at are given an aligned copy of it, one per storage (so tensors sharing it still do).
// torch.save aligns its records to 64 bytes within its own archive, but torch.export.save stores
// that archive in the .pt2 at whatever offset the records before it leave: the weights stay in
// the mapping (Note [Zero-copy weights]) when that offset is a multiple of their element size.
void realign(const c10::IValue& v, std::unordered_map<const void*, c10::Storage>& copies) {
  if (v.isTensor()) {
    at::Tensor t = v.toTensor();
    if (!t.defined() || !t.has_storage() || t.storage().data() == nullptr) return;
    const void* data = t.storage().data();
    if (reinterpret_cast<uintptr_t>(data) % t.element_size() == 0) return;
    auto [it, fresh] = copies.try_emplace(data);
    if (fresh) it->second = aligned_copy(data, t.storage().nbytes());
    at::NoGradGuard no_grad;
    t.set_(it->second, t.storage_offset(), t.sizes(), t.strides());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) realign(e, copies);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) realign(e, copies);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) realign(e.value(), copies);
  } else if (v.isObject()) {
    for (const auto& e : v.toObjectRef().slots()) realign(e, copies);
  }
}

// A torch.save archive inside the .pt2 (record `record`), read in place; Parameters (torch._utils.
// _rebuild_parameter, which libtorch's unpickler does not know) come back as their tensors.
c10::IValue load_torch_save(const Pt2Archive& archive, const std::string& record,
                            const std::string& source) {
  std::string_view bytes = archive.bytes(record);
  if (bytes.empty()) return c10::IValue();
  const uint64_t base = static_cast<uint64_t>(bytes.data() - archive.file()->data());
  auto reader = std::make_shared<caffe2::serialize::PyTorchStreamReader>(
      std::make_shared<caffe2::serialize::MemoryReadAdapter>(bytes.data(),
                                                             static_cast<off_t>(bytes.size())));
  // Every storage points into the mapping; realign() copies those its tensors cannot be read in.
  auto context = std::make_shared<jit::DeserializationStorageContext>();
  for (const std::string& name : reader->getAllRecords()) {
    if (name.rfind("data/", 0) != 0) continue;
    const uint64_t offset = base + reader->getRecordOffset(name);
    const uint64_t size = reader->getRecordSize(name);
    if (size > 0) context->addStorage(name.substr(5), archive.file()->storage(offset, size));
  }
  auto cu = std::make_shared<jit::CompilationUnit>();
  const std::string what = record;
  auto resolve = [&](const c10::QualifiedName& q) {
    if (q.qualifiedName() != "torch._utils._rebuild_parameter" &&
        q.qualifiedName() != "torch._utils._rebuild_parameter_with_state") {
      fail(ErrorCode::kModelLoad, source,
           fmt::format("{} holds a {}, which this reader does not know. Remedy: save the "
                       "program with plain tensors as its weights",
                       what, q.qualifiedName()));
    }
    auto type = c10::ClassType::create(q, cu);
    type->addAttribute("args", c10::AnyType::get());
    return c10::StrongTypePtr(cu, type);
  };
  auto load = [](const c10::StrongTypePtr& type, c10::IValue args) {
    auto obj = c10::ivalue::Object::create(type, 1);
    obj->setSlot(0, std::move(args));
    return obj;
  };
  c10::IValue value;
  try {
    value = jit::readArchiveAndTensors("data", "", "data/", resolve, load, c10::nullopt, *reader,
                                       jit::Unpickler::defaultTypeParser, context);
    std::unordered_map<const void*, c10::Storage> copies;
    realign(value, copies);
  } catch (const ExportError&) {
    throw;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    fail(ErrorCode::kModelLoad, source,
         fmt::format("{} cannot be read: {}. Remedy: save the program again with "
                     "torch.export.save",
                     record, message.substr(0, message.find('\n'))));
  }
  return value;
}

// A Parameter's tensor (see load_torch_save), else the value.
c10::IValue unwrap(const c10::IValue& v) {
  if (v.isObject() && v.toObject()->slots().size() == 1) {
    const c10::IValue args = v.toObject()->getSlot(0);
    if (args.isTuple() && !args.toTupleRef().elements().empty()) {
      return args.toTupleRef().elements()[0];
    }
  }
  return v;
}

std::map<std::string, at::Tensor> tensor_dict(const c10::IValue& v) {
  std::map<std::string, at::Tensor> out;
  if (!v.isGenericDict()) return out;
  for (const auto& e : v.toGenericDict()) {
    const c10::IValue t = unwrap(e.value());
    if (e.key().isString() && t.isTensor()) out[e.key().toStringRef()] = t.toTensor();
  }
  return out;
}

// A list of the schema's SymInts that must be plain ints (a stored tensor's sizes and strides).
std::vector<int64_t> plain_ints(const json& list, const std::string& what,
                                const std::string& source) {
  std::vector<int64_t> out;
  for (const json& s : list) {
    auto [kind, v] = member(s);
    if (kind != "as_int") {
      fail(ErrorCode::kModelLoad, source,
           fmt::format("{} has a symbolic size or stride ({}), which a stored tensor cannot have. "
                       "Remedy: save the program again with torch.export.save",
                       what, s.dump().substr(0, 80)));
    }
    out.push_back(v->get<int64_t>());
  }
  return out;
}

// The tensors of a PT2 archive's payload config (ROOT/data/weights/NAME_weights_config.json or
// ROOT/data/constants/NAME_constants_config.json), by name. A raw payload (use_pickle false) is
// one storage's bytes, shared by every tensor whose path_name names it (a view, tied weights),
// each read by its tensor_meta: it stays in the mapping of the file (Note [Zero-copy weights])
// where its offset in the file is a multiple of its element size (PyTorchStreamWriter aligns
// records to 64 bytes), else it is copied once. A pickled one (a tensor subclass) is a
// torch.save archive. Custom and opaque objects are left out: the program's inputs that read
// them are refused by kind.
std::map<std::string, at::Tensor> read_payloads(const Pt2Archive& archive, const std::string& dir,
                                                const std::string& config_record,
                                                const std::string& source) {
  std::map<std::string, at::Tensor> out;
  json config;
  try {
    config = parse_program(archive.bytes(config_record)).at("config");
  } catch (const json::exception& e) {
    fail(ErrorCode::kModelLoad, source,
         fmt::format("{} is not what torch.export.save writes: {}. Remedy: save the program "
                     "again with torch.export.save",
                     config_record, e.what()));
  }
  std::map<std::string, c10::Storage> storages;  // per path_name
  for (const auto& [fqn, meta] : config.items()) {
    const std::string path_name = meta.at("path_name").get<std::string>();
    const std::string record = dir + path_name;
    if (path_name.rfind("custom_obj_", 0) == 0 || path_name.rfind("opaque_obj_", 0) == 0) continue;
    if (meta.value("use_pickle", false)) {
      const c10::IValue v = unwrap(load_torch_save(archive, record, source));
      if (!v.isTensor()) {
        fail(ErrorCode::kModelLoad, source,
             fmt::format("{} (the payload of '{}') holds no tensor", record, fqn));
      }
      out[fqn] = v.toTensor();
      continue;
    }
    const json& tm = meta.at("tensor_meta");
    const std::string what = fmt::format("the tensor '{}' ({})", fqn, record);
    const c10::ScalarType dtype = scalar_type(tm.at("dtype").get<int64_t>());
    const std::vector<int64_t> sizes = plain_ints(tm.at("sizes"), what, source);
    const std::vector<int64_t> strides = plain_ints(tm.at("strides"), what, source);
    const int64_t offset = plain_ints(json::array({tm.at("storage_offset")}), what, source)[0];
    if (!archive.has(record)) {
      fail(ErrorCode::kModelLoad, source,
           fmt::format("{} is not in the archive, which torch.export.save writes. Remedy: save "
                       "the program again with torch.export.save",
                       what));
    }
    const std::string_view bytes = archive.bytes(record);
    const size_t element = c10::elementSize(dtype);
    if (bytes.size() % element != 0) {
      fail(ErrorCode::kModelLoad, source,
           fmt::format("{} has {} bytes, no whole number of {}-byte elements. Remedy: save the "
                       "program again with torch.export.save",
                       what, bytes.size(), element));
    }
    // The elements the tensor reaches must lie in its payload.
    int64_t extent = sizes.size() == strides.size() ? offset + 1 : -1;
    bool empty = false;
    for (size_t d = 0; d < sizes.size() && extent >= 0; ++d) {
      empty |= sizes[d] == 0;
      if (sizes[d] < 0 || strides[d] < 0)
        extent = -1;
      else if (sizes[d] > 0)
        extent += (sizes[d] - 1) * strides[d];
    }
    const int64_t numel = static_cast<int64_t>(bytes.size() / element);
    at::NoGradGuard no_grad;
    if (bytes.empty() && (empty || extent < 0)) {
      out[fqn] = at::zeros(sizes, at::TensorOptions().dtype(dtype));
      continue;
    }
    if (extent < 0 || offset < 0 || (!empty && extent > numel)) {
      fail(ErrorCode::kModelLoad, source,
           fmt::format("{} reaches past its payload of {} elements (sizes, strides and offset "
                       "of its tensor_meta). Remedy: save the program again with "
                       "torch.export.save",
                       what, numel));
    }
    auto [it, fresh] = storages.try_emplace(path_name);
    if (fresh) {
      const uint64_t at_file = static_cast<uint64_t>(bytes.data() - archive.file()->data());
      it->second = at_file % element == 0 ? archive.file()->storage(at_file, bytes.size())
                                          : aligned_copy(bytes.data(), bytes.size());
    }
    at::Tensor t = at::empty({0}, at::TensorOptions().dtype(dtype));
    t.set_(it->second, offset, sizes, strides);
    out[fqn] = t;
  }
  return out;
}

// The schema version "MAJOR.MINOR" checked against this reader's.
void check_schema(int major, int minor, const std::string& source,
                  std::vector<std::string>& notes) {
  if (major > kSchemaMajor) {
    fail(ErrorCode::kModelLoad, source,
         fmt::format("it was saved with torch.export schema version {}.{}, whose major version "
                     "is newer than this reader's ({}.{}, PyTorch 2.14): the format changed. "
                     "Remedy: save the program with PyTorch 2.14 or older, or use a torchonnx "
                     "built for the newer PyTorch",
                     major, minor, kSchemaMajor, kSchemaMinor));
  }
  if (major == kSchemaMajor && minor > kSchemaMinor) {
    notes.push_back(fmt::format(
        "the program's schema version {}.{} is newer than this reader's {}.{}: fields it adds "
        "are not read",
        major, minor, kSchemaMajor, kSchemaMinor));
  }
}

json parse_record(const Pt2Archive& archive, const std::string& record, const std::string& source) {
  try {
    return parse_program(archive.bytes(record));
  } catch (const json::exception& e) {
    fail(ErrorCode::kModelLoad, source,
         fmt::format("{} is no valid JSON: {}. Remedy: save the program again with "
                     "torch.export.save",
                     record, e.what()));
  }
}

// PyTorch 2.3–2.7: serialized_exported_program.json, the state dict and constants as torch.save
// archives, the schema version in `version`.
ProgramParts read_export_save(const Pt2Archive& archive, std::vector<std::string>& notes) {
  ProgramParts parts;
  std::string version(archive.bytes("version"));
  while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back()))) {
    version.pop_back();
  }
  parts.schema_version = version;
  parts.source = fmt::format("'{}' ({}, schema {})", archive.path(), archive.layout_name(),
                             version.substr(0, 20));
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) < 1) {
    fail(ErrorCode::kModelLoad, parts.source, "its schema version '" + version + "' is no version");
  }
  check_schema(major, minor, parts.source, notes);
  parts.doc = parse_record(archive, "serialized_exported_program.json", parts.source);
  parts.state = tensor_dict(load_torch_save(archive, "serialized_state_dict.pt", parts.source));
  if (archive.has("serialized_constants.pt")) {
    parts.constants =
        tensor_dict(load_torch_save(archive, "serialized_constants.pt", parts.source));
  }
  if (archive.has("serialized_example_inputs.pt")) {
    parts.example_inputs = load_torch_save(archive, "serialized_example_inputs.pt", parts.source);
  }
  return parts;
}

// PyTorch 2.8+: ROOT/models/NAME.json (schema_version inside), the weights and constants as raw
// payloads described by their configs (or, as early 2.8 archives wrote them, one torch.save
// archive ROOT/data/weights/NAME.pt), the example inputs in ROOT/data/sample_inputs/NAME.pt.
ProgramParts read_pt2_archive(const Pt2Archive& archive, std::string name,
                              std::vector<std::string>& notes) {
  ProgramParts parts;
  const std::string& root = archive.root();
  const std::vector<std::string> names = archive.program_names();
  std::string listed;
  for (const std::string& n : names) listed += (listed.empty() ? "'" : ", '") + n + "'";
  const std::string where = fmt::format("'{}' ({})", archive.path(), archive.layout_name());
  if (names.empty()) {
    fail(ErrorCode::kModelLoad, where,
         fmt::format("it holds no program ({}models/*.json): an archive of AOTInductor or "
                     "ExecuTorch artifacts only? Remedy: save the ExportedProgram itself with "
                     "torch.export.save",
                     root));
  }
  if (name.empty()) {
    if (names.size() > 1) {
      fail(ErrorCode::kInvalidArgument, where,
           fmt::format("it holds {} programs ({}): name the one to export (CLI: --program "
                       "NAME; C++: load_exported_program(path, NAME))",
                       names.size(), listed));
    }
    name = names.front();
  } else if (std::find(names.begin(), names.end(), name) == names.end()) {
    fail(ErrorCode::kInvalidArgument, where,
         fmt::format("it holds no program '{}'; its programs: {}", name, listed));
  }
  parts.doc = parse_record(archive, root + "models/" + name + ".json", where);
  int major = 0, minor = 0;
  if (parts.doc.contains("schema_version") && parts.doc.at("schema_version").is_object()) {
    major = parts.doc.at("schema_version").value("major", 0);
    minor = parts.doc.at("schema_version").value("minor", 0);
  }
  parts.schema_version = fmt::format("{}.{}", major, minor);
  parts.source = fmt::format("'{}' ({}, program '{}', schema {})", archive.path(),
                             archive.layout_name(), name, parts.schema_version);
  check_schema(major, minor, parts.source, notes);

  const std::string weights = root + "data/weights/";
  const std::string constants = root + "data/constants/";
  if (archive.has(weights + name + "_weights_config.json")) {
    parts.state =
        read_payloads(archive, weights, weights + name + "_weights_config.json", parts.source);
  } else if (archive.has(weights + name + ".pt")) {
    parts.state = tensor_dict(load_torch_save(archive, weights + name + ".pt", parts.source));
  } else {
    fail(ErrorCode::kModelLoad, parts.source,
         fmt::format("it has no {}{}_weights_config.json, which torch.export.save writes. "
                     "Remedy: save the program again with torch.export.save",
                     weights, name));
  }
  if (archive.has(constants + name + "_constants_config.json")) {
    parts.constants = read_payloads(archive, constants, constants + name + "_constants_config.json",
                                    parts.source);
  } else if (archive.has(constants + name + ".pt")) {
    parts.constants = tensor_dict(load_torch_save(archive, constants + name + ".pt", parts.source));
  }
  const std::string sample = root + "data/sample_inputs/" + name + ".pt";
  if (archive.has(sample)) parts.example_inputs = load_torch_save(archive, sample, parts.source);
  return parts;
}

}  // namespace

ProgramParts read_program_parts(const Pt2Archive& archive, const std::string& name,
                                std::vector<std::string>& notes) {
  if (archive.layout() == Pt2Archive::Layout::kPt2Archive) {
    return read_pt2_archive(archive, name, notes);
  }
  if (!name.empty() && name != "model") {
    fail(ErrorCode::kInvalidArgument,
         fmt::format("'{}' ({})", archive.path(), archive.layout_name()),
         fmt::format("it holds one program, unnamed; there is no program '{}'", name));
  }
  return read_export_save(archive, notes);
}

}  // namespace torchonnx::frontend::pt2

#endif
