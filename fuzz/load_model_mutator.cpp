// libFuzzer's custom mutator for fuzz_load_model. Raw byte flips in a .pt mostly break the zip's
// CRCs, so that torch::jit::load stops at the zip reader. For an input that is a readable
// archive, this mutates one record (data.pkl, constants.pkl, code/__torch__/*.py, ...) or the
// record list, and writes the archive back with libtorch's own writer: the CRCs are right and the
// mutation reaches the unpickler and the TorchScript compiler. One input in eight (and every input
// that is no readable archive) gets libFuzzer's raw mutations instead.
#include <caffe2/serialize/inline_container.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

struct Record {
  std::string name;
  std::string bytes;
};

// The archive's records in order, without the version the writer adds itself; false when the
// bytes are no archive PyTorchStreamReader reads.
bool read_archive(const uint8_t* data, size_t size, std::vector<Record>* records,
                  uint64_t* version) {
  try {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    caffe2::serialize::PyTorchStreamReader reader(&in);
    *version = reader.version();
    for (const auto& name : reader.getAllRecords()) {
      if (name == "version" || name == ".data/version") continue;
      auto [ptr, n] = reader.getRecord(name);
      records->push_back({name, std::string(static_cast<const char*>(ptr.get()), n)});
    }
    return !records->empty();
  } catch (const std::exception&) {
    return false;
  }
}

std::string write_archive(const std::vector<Record>& records, uint64_t version) {
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&out](const void* buf, size_t n) {
    out.append(static_cast<const char*>(buf), n);
    return n;
  });
  writer.setMinVersion(version);
  for (const auto& r : records) writer.writeRecord(r.name, r.bytes.data(), r.bytes.size());
  writer.writeEndOfFile();
  return out;
}

// Mutates `bytes` with libFuzzer's mutators, growing it by up to `grow` bytes.
void mutate_bytes(std::string* bytes, size_t grow) {
  const size_t size = bytes->size();
  bytes->resize(size + grow);
  const size_t n = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(bytes->data()), size, size + grow);
  bytes->resize(n);
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<Record> records;
  uint64_t version = 0;
  if (rng() % 8 == 0 || !read_archive(data, size, &records, &version)) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const size_t pick = rng() % records.size();
  switch (rng() % 16) {
    case 0: {  // drop a record
      records.erase(records.begin() + static_cast<std::ptrdiff_t>(pick));
      break;
    }
    case 1: {  // rename a record (a record the loader looks for goes missing, or moves)
      mutate_bytes(&records[pick].name, 8);
      if (records[pick].name.empty()) records[pick].name = "x";
      break;
    }
    case 2: {  // the record of another one's name (say, code where data.pkl was)
      records[pick].bytes = records[rng() % records.size()].bytes;
      break;
    }
    case 3: {  // another format version
      version = rng() % 12;
      break;
    }
    default: {  // mutate one record's bytes (most often)
      mutate_bytes(&records[pick].bytes, 64);
      break;
    }
  }
  std::string out;
  try {
    out = write_archive(records, version);
  } catch (const std::exception&) {  // e.g. a renamed record clashing with another
    return LLVMFuzzerMutate(data, size, max_size);
  }
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
