// Note [References without oneDNN]: libtorch computes some ops through oneDNN (mkldnn) when grad
// mode is off (the reference runs use InferenceMode), and on Debian 13 (libtorch 2.6 with
// libdnnl3.6 3.7.2) on some CPUs those kernels are wrong (seen on an AMD EPYC machine):
// - aten::lstm: nn.LSTM(4, 6) under torch.no_grad() differs from the LSTM equations by ~0.14;
// - ConvTranspose2d(100, 128, 4, 1, 0) of a 1x1 input (DCGAN's first layer) errs by ~0.06 against
//   the exact sum, and torchvision's raft_small differs by up to 5 between oneDNN on and off.
// With torch.backends.mkldnn.enabled = False, and on libtorch 1.13, libtorch agrees with the
// equations and with ONNX Runtime. A reference run (run_module, verify's search for the first
// diverging node) turns oneDNN off for its duration, so that libtorch's results are the
// reference kernels' results.
#pragma once

#include <ATen/Context.h>

namespace torchonnx::frontend {

class ReferenceKernelsGuard {
 public:
  ReferenceKernelsGuard() : previous_(at::globalContext().userEnabledMkldnn()) {
    if (previous_) at::globalContext().setUserEnabledMkldnn(false);
  }
  ~ReferenceKernelsGuard() {
    if (previous_) at::globalContext().setUserEnabledMkldnn(true);
  }
  ReferenceKernelsGuard(const ReferenceKernelsGuard&) = delete;
  ReferenceKernelsGuard& operator=(const ReferenceKernelsGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace torchonnx::frontend
