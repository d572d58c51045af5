// Fuzz target: loading a .pt (frontend::load_model_from_bytes, the in-memory twin of load_model).
// A corrupt archive, a zip that is not TorchScript, bad pickles and bad TorchScript code must all
// give ExportError(kModelLoad). The custom mutator (load_model_mutator.cpp) keeps mutated archives
// valid zips so that mutations reach the unpickler and the TorchScript compiler.
#include <torch/csrc/jit/api/module.h>

#include <cstdint>
#include <string>

#include "frontend/frontend.h"
#include "fuzz_util.h"

using namespace torchonnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    torch::jit::Module module = frontend::load_model_from_bytes(bytes, "fuzz.pt");
    // What export reads first: the forward method and its graph.
    if (auto forward = module.find_method("forward")) (void)forward->graph()->inputs().size();
  } catch (const ExportError& e) {
    fuzz::expect_code(e, ErrorCode::kModelLoad);
  }
  return 0;
}
