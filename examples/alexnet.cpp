// The torch.onnx documentation's headline example, in C++: AlexNet written with the torch::nn C++
// API, exported with named inputs, parameters and outputs, the graph printed (verbose).
//
//   alexnet_example OUT_DIR    writes OUT_DIR/alexnet.onnx and OUT_DIR/alexnet_test_data/
//   node tools/verify/verify.mjs OUT_DIR/alexnet.onnx OUT_DIR/alexnet_test_data
#include <torch/torch.h>
#include <torchonnx/export.h>

#include <iostream>

#include "alexnet_model.h"

int main(int argc, char** argv) {
  const std::string out_dir = argc > 1 ? argv[1] : ".";
  torch::manual_seed(0);
  AlexNet model;
  torch::Tensor dummy_input = torch::randn({10, 3, 224, 224});

  // As in the Python example: the inputs are the flat list of forward() arguments followed by the
  // parameters; a shorter list names only the first ones.
  torchonnx::ExportOptions options;
  options.input_names = {"actual_input_1"};
  for (int i = 0; i < 16; ++i) options.input_names.push_back("learned_" + std::to_string(i));
  options.output_names = {"output1"};
  options.verbose = true;

  try {
    torchonnx::export_module(
        *model,
        [&](const std::vector<c10::IValue>& args) { return model->forward(args[0].toTensor()); },
        {dummy_input}, out_dir + "/alexnet.onnx", options);
    // libtorch's result, for checking the export in ONNX Runtime (or any runtime).
    model->eval();
    torch::NoGradGuard no_grad;
    torchonnx::write_test_data(out_dir + "/alexnet_test_data", {dummy_input},
                               {model->forward(dummy_input)});
  } catch (const torchonnx::ExportError& e) {
    std::cerr << "export failed: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }
  std::cout << "wrote " << out_dir << "/alexnet.onnx\n";
  return 0;
}
