// Note [Writing transposed weights]
// torch.onnx exports nn.Linear on inputs of rank > 2 as MatMul(x, W^T) and constant folding turns
// W^T into an initializer, so most of a transformer's weight bytes (80% of gpt_355m's) are a
// transposed copy of the .pt's: they cannot go file to file (Note [Zero-copy weights]). Copying
// a whole transposed weight into a buffer and writing that (at::Tensor::copy_, 60x60 scalar
// blocks) costs twice: the copy runs at ~1.2 GB/s, and write() then reads a buffer of up to
// tens of MB that has left the cache. Here a block of about 512 KB of output rows is transposed at
// a time, 4x4 tiles in SSE2 registers for 4-byte elements (the common float32 case, ~4 GB/s) and
// 8x8 scalar tiles otherwise, by a worker thread into a ring of three buffers, while the calling
// thread writes the blocks before, still in the cache. Measured on gpt_355m (1.2 GB transposed):
// the transposes 1.0 s -> 0.3 s, the writes of the blocks ~0.2 s against 0.7-1.8 s for
// whole-tensor buffers, and both overlapped: 1.2 GB transposed and written in ~0.6 s.
#include "onnx/transposed_bytes.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace torchonnx {

namespace {

// out (rows x cols, row-major) = rows [r0, r0 + rows) of T, where T[r][c] = w[c * ld + r]: the
// columns r0... of the row-major matrix w with leading dimension ld.
template <typename E>
void transpose_block(const E* w, int64_t ld, int64_t r0, int64_t rows, int64_t cols, E* out) {
  constexpr int64_t kTile = 8;
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const int64_t c1 = std::min(cols, c0 + kTile);
    for (int64_t r = 0; r < rows; r += kTile) {
      const int64_t r1 = std::min(rows, r + kTile);
      for (int64_t rr = r; rr < r1; ++rr) {
        const E* src = w + c0 * ld + r0 + rr;
        E* dst = out + rr * cols + c0;
        for (int64_t c = 0; c < c1 - c0; ++c) dst[c] = src[c * ld];
      }
    }
  }
}

#if defined(__SSE2__)
template <>
void transpose_block<uint32_t>(const uint32_t* w, int64_t ld, int64_t r0, int64_t rows,
                               int64_t cols, uint32_t* out) {
  const int64_t rows4 = rows / 4 * 4, cols4 = cols / 4 * 4;
  const auto* wf = reinterpret_cast<const float*>(w);
  auto* of = reinterpret_cast<float*>(out);
  for (int64_t c = 0; c < cols4; c += 4) {
    for (int64_t r = 0; r < rows4; r += 4) {
      const float* s = wf + c * ld + r0 + r;
      __m128 a = _mm_loadu_ps(s), b = _mm_loadu_ps(s + ld), x = _mm_loadu_ps(s + 2 * ld),
             y = _mm_loadu_ps(s + 3 * ld);
      _MM_TRANSPOSE4_PS(a, b, x, y);
      float* d = of + r * cols + c;
      _mm_storeu_ps(d, a);
      _mm_storeu_ps(d + cols, b);
      _mm_storeu_ps(d + 2 * cols, x);
      _mm_storeu_ps(d + 3 * cols, y);
    }
  }
  // The edges: the last rows % 4 rows, the last cols % 4 columns.
  for (int64_t r = rows4; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = w[c * ld + r0 + r];
  }
  for (int64_t r = 0; r < rows4; ++r) {
    for (int64_t c = cols4; c < cols; ++c) out[r * cols + c] = w[c * ld + r0 + r];
  }
}
#endif

template <typename E>
void for_each_block(const at::Tensor& t, size_t block_bytes,
                    const std::function<void(const char*, size_t)>& sink) {
  const int64_t n = t.size(0), m = t.size(1);  // T is n x m; T[r][c] = base[c * n + r]
  const E* base = static_cast<const E*>(t.data_ptr());
  const int64_t row_bytes = m * static_cast<int64_t>(sizeof(E));
  // Whole rows, a multiple of 4 of them (the SSE tile) unless the matrix has fewer.
  int64_t rows = std::max<int64_t>(4, static_cast<int64_t>(block_bytes) / row_bytes / 4 * 4);
  rows = std::min(rows, n);
  const int64_t blocks = (n + rows - 1) / rows;
  auto rows_of = [&](int64_t b) { return std::min(rows, n - b * rows); };
  if (blocks == 1) {
    std::vector<E> buffer(static_cast<size_t>(n * m));
    transpose_block(base, n, 0, n, m, buffer.data());
    sink(reinterpret_cast<const char*>(buffer.data()), static_cast<size_t>(n * row_bytes));
    return;
  }
  // A worker transposes the blocks into a ring of kSlots buffers while this thread hands the
  // ones before to `sink` (the write): the two overlap on two cores.
  constexpr int64_t kSlots = 3;
  std::vector<E> slots[kSlots];
  for (auto& slot : slots) slot.resize(static_cast<size_t>(rows * m));
  std::mutex mu;
  std::condition_variable cv;
  int64_t produced = 0, consumed = 0;
  bool stop = false;
  std::thread worker([&] {
    for (int64_t b = 0; b < blocks; ++b) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || b - consumed < kSlots; });
        if (stop) return;
      }
      transpose_block(base, n, b * rows, rows_of(b), m, slots[b % kSlots].data());
      {
        std::lock_guard<std::mutex> lock(mu);
        produced = b + 1;
      }
      cv.notify_all();
    }
  });
  // Stops and joins the worker also when `sink` throws (a failed write).
  struct Joiner {
    std::thread& worker;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& stop;
    ~Joiner() {
      {
        std::lock_guard<std::mutex> lock(mu);
        stop = true;
      }
      cv.notify_all();
      worker.join();
    }
  } joiner{worker, mu, cv, stop};
  for (int64_t b = 0; b < blocks; ++b) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return produced > b; });
    }
    sink(reinterpret_cast<const char*>(slots[b % kSlots].data()),
         static_cast<size_t>(rows_of(b) * row_bytes));
    {
      std::lock_guard<std::mutex> lock(mu);
      consumed = b + 1;
    }
    cv.notify_all();
  }
}

}  // namespace

bool is_transposed_matrix(const at::Tensor& t) {
  return t.defined() && t.dim() == 2 && t.numel() > 0 && !t.is_contiguous() && t.stride(0) == 1 &&
         t.stride(1) == t.size(0) && t.device().is_cpu() && !t.is_quantized() && !t.is_complex() &&
         !t.is_conj() && !t.is_neg();
}

void for_each_transposed_block(const at::Tensor& t, size_t block_bytes,
                               const std::function<void(const char*, size_t)>& sink) {
  switch (t.element_size()) {
    case 1:
      return for_each_block<uint8_t>(t, block_bytes, sink);
    case 2:
      return for_each_block<uint16_t>(t, block_bytes, sink);
    case 4:
      return for_each_block<uint32_t>(t, block_bytes, sink);
    case 8:
      return for_each_block<uint64_t>(t, block_bytes, sink);
    default: {  // no such dtype among ONNX's; the general copy
      const at::Tensor c = t.contiguous();
      sink(static_cast<const char*>(c.data_ptr()), c.nbytes());
    }
  }
}

}  // namespace torchonnx
