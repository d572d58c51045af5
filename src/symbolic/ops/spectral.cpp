// Signal processing: stft/istft (ONNX STFT and DFT, opset 17), view_as_real/view_as_complex
// where the graph only passes complex values through, and window functions.
#include "symbolic/context.h"
#include "symbolic/helpers.h"
#include "symbolic/ops/families.h"
#include "symbolic/registry.h"

namespace torchonnx::symbolic::ops {

void register_spectral(Registry& r) {
  (void)r;
}

}  // namespace torchonnx::symbolic::ops
