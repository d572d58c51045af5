// Note [RNN references without oneDNN]: libtorch computes aten::lstm through oneDNN when grad mode
// is off (the reference runs use InferenceMode). On Debian 13 (libtorch 2.6 with libdnnl3.6
// 3.7.2) on some CPUs that kernel is wrong: nn.LSTM(4, 6) under torch.no_grad() differs from the
// same module with grad mode on, and from the LSTM equations, by ~0.14 (seen on an AMD EPYC
// machine; the same build with torch.backends.mkldnn.enabled = False, and libtorch 1.13, agree
// with the equations and with ONNX Runtime). A reference run of a graph holding an RNN op turns
// oneDNN off for its duration, so that libtorch's results are the equations' results.
#pragma once

#include <ATen/Context.h>
#include <torch/csrc/jit/ir/ir.h>

namespace torchonnx::frontend {

class RnnReferenceGuard {
 public:
  explicit RnnReferenceGuard(const torch::jit::Block* block)
      : previous_(at::globalContext().userEnabledMkldnn()) {
    if (previous_ && has_rnn(block)) {
      at::globalContext().setUserEnabledMkldnn(false);
      restore_ = true;
    }
  }
  ~RnnReferenceGuard() {
    if (restore_) at::globalContext().setUserEnabledMkldnn(previous_);
  }
  RnnReferenceGuard(const RnnReferenceGuard&) = delete;
  RnnReferenceGuard& operator=(const RnnReferenceGuard&) = delete;

 private:
  static bool has_rnn(const torch::jit::Block* block) {
    for (const torch::jit::Node* node : block->nodes()) {
      const auto kind = node->kind();
      if (kind == c10::aten::lstm || kind == c10::aten::gru || kind == c10::aten::rnn_tanh ||
          kind == c10::aten::rnn_relu) {
        return true;
      }
      for (const torch::jit::Block* sub : node->blocks()) {
        if (has_rnn(sub)) return true;
      }
    }
    return false;
  }

  bool previous_;
  bool restore_ = false;
};

}  // namespace torchonnx::frontend
