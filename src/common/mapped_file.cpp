// Note [Zero-copy weights]
// torch::jit::load copies every storage of a .pt into memory: a peak of the weights' size before
// a byte is written. The records of a .pt are stored uncompressed at 64-byte aligned offsets, so
// the frontend (frontend/mapped_load.cpp) maps the file and gives the importer storages that point
// into the mapping. Pages are then read only when something reads them, and they are file pages
// (page cache), not this process's own memory. Writing an initializer whose bytes are still the
// file's (unchanged_file_bytes) copies them file to file in the kernel (copy_file_range, in
// onnx/serialize.cpp), so the weights never pass through this process at all. The mapping is
// MAP_PRIVATE: a pass that writes into a weight (it should copy first) gets its own copy of the
// page, the file never changes, and the pagemap check sees the page is no longer the file's.
#include "common/mapped_file.h"

#include <ATen/core/Tensor.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace torchonnx {

namespace {

// The DataPtr context of a storage in a mapping: a reference to the mapping.
void release_reference(void* ctx) {
  delete static_cast<std::shared_ptr<MappedFile>*>(ctx);
}

std::shared_ptr<MappedFile> mapping_of(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage() || !t.device().is_cpu()) return nullptr;
  const c10::DataPtr& p = t.storage().data_ptr();
  if (p.get_deleter() != &release_reference) return nullptr;
  return *static_cast<std::shared_ptr<MappedFile>*>(p.get_context());
}

uint64_t page_size() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// Whether every page of [p, p + n) is unwritten since the mapping: not present, or present as a
// file page. /proc/self/pagemap: one 64-bit entry per page; bit 63 present, 62 swapped, 61 file
// page or shared anonymous (a copy-on-write copy is a private anonymous page).
bool pages_unwritten(const char* p, uint64_t n) {
  static const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || n == 0) return fd >= 0;
  const uint64_t ps = page_size();
  const uint64_t first = reinterpret_cast<uintptr_t>(p) / ps;
  const uint64_t last = (reinterpret_cast<uintptr_t>(p) + n - 1) / ps;
  std::vector<uint64_t> entries(4096);
  for (uint64_t page = first; page <= last;) {
    const uint64_t count = std::min<uint64_t>(entries.size(), last - page + 1);
    const ssize_t got = ::pread(fd, entries.data(), count * 8, static_cast<off_t>(page * 8));
    if (got != static_cast<ssize_t>(count * 8)) return false;
    for (uint64_t k = 0; k < count; ++k) {
      const uint64_t e = entries[k];
      const bool present = e >> 63 & 1, swapped = e >> 62 & 1, file = e >> 61 & 1;
      if (swapped || (present && !file)) return false;
    }
    page += count;
  }
  return true;
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return nullptr;
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    ::close(fd);
    return nullptr;
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->fd_ = fd;
  file->data_ = static_cast<char*>(data);
  file->size_ = size;
  return file;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
}

c10::Storage MappedFile::storage(uint64_t offset, uint64_t nbytes) {
  TORCH_CHECK(offset <= size_ && nbytes <= size_ - offset, "storage outside the mapped file");
  c10::DataPtr ptr(data_ + offset, new std::shared_ptr<MappedFile>(shared_from_this()),
                   &release_reference, c10::Device(c10::DeviceType::CPU));
  return c10::Storage(c10::Storage::use_byte_size_t(), static_cast<int64_t>(nbytes), std::move(ptr),
                      /*allocator=*/nullptr, /*resizable=*/false);
}

std::optional<FileBytes> unchanged_file_bytes(const at::Tensor& tensor) {
  std::shared_ptr<MappedFile> file = mapping_of(tensor);
  if (!file || !tensor.is_contiguous()) return std::nullopt;
  const char* p = static_cast<const char*>(tensor.data_ptr());
  const uint64_t n = static_cast<uint64_t>(tensor.numel()) * tensor.element_size();
  if (p < file->data() || n > file->size() ||
      p - file->data() > static_cast<ptrdiff_t>(file->size() - n)) {
    return std::nullopt;
  }
  if (!pages_unwritten(p, n)) return std::nullopt;
  return FileBytes{file, static_cast<uint64_t>(p - file->data()), n};
}

void release_mapped_pages(const at::Tensor& tensor) {
  std::shared_ptr<MappedFile> file = mapping_of(tensor);
  if (!file) return;
  const uint64_t ps = page_size();
  const auto start = reinterpret_cast<uintptr_t>(tensor.storage().data());
  const uint64_t n = tensor.storage().nbytes();
  // A written (copy-on-write) page would lose its contents: only unwritten ones are dropped.
  auto drop = [](uintptr_t first, uintptr_t end) {
    if (end <= first || !pages_unwritten(reinterpret_cast<const char*>(first), end - first)) {
      return false;
    }
    return ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED) == 0;
  };
  // A fault maps a whole large folio of the page cache (readahead makes them up to 2 MB), so
  // reading this tensor also mapped the edges of its neighbours in the file, which may be written
  // much later: drop the 2 MB-aligned span around it (within the mapping). Dropping a neighbour's
  // unwritten pages costs it a minor fault at most.
  constexpr uintptr_t kFolioReach = uintptr_t{2} << 20;
  const auto map_begin = reinterpret_cast<uintptr_t>(file->data());
  const uintptr_t map_end = map_begin + (file->size() + ps - 1) / ps * ps;
  const uintptr_t wide_first = std::max(map_begin, start / kFolioReach * kFolioReach);
  const uintptr_t wide_end =
      std::min(map_end, (start + n + kFolioReach - 1) / kFolioReach * kFolioReach);
  if (drop(wide_first, wide_end)) return;
  drop((start + ps - 1) / ps * ps, (start + n) / ps * ps);  // a neighbour has written pages
}

}  // namespace torchonnx
