// The bytes of a transposed matrix (a folded Transpose of a weight), in row-major order, a block
// of rows at a time: Note [Writing transposed weights].
#pragma once

#include <cstddef>
#include <functional>

namespace at {
class Tensor;
}

namespace torchonnx {

// Whether `t` is the transpose of a contiguous matrix: 2-D, strides (1, size(0)), not contiguous
// itself (nn.Linear's weight.t() folded into an initializer).
bool is_transposed_matrix(const at::Tensor& t);

// Calls `sink(bytes, size)` with the bytes of the transposed matrix `t` in row-major order, about
// `block_bytes` at a time (whole rows), from one buffer reused for every block.
void for_each_transposed_block(const at::Tensor& t, size_t block_bytes,
                               const std::function<void(const char*, size_t)>& sink);

}  // namespace torchonnx
