// Built by tests/packaging/packaging_test.sh with nothing but
// `g++ pkgconfig_app.cpp $(pkg-config --cflags --libs torchonnx)`: a scripted module defined in
// C++, exported to OUT.onnx through the installed library.
//   pkgconfig_app OUT.onnx    prints "torchonnx VERSION: N bytes"
#include <torch/script.h>
#include <torchonnx/export.h>
#include <torchonnx/version.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: pkgconfig_app OUT.onnx\n";
    return 2;
  }
  const std::string from_parts = std::to_string(TORCHONNX_VERSION_MAJOR) + "." +
                                 std::to_string(TORCHONNX_VERSION_MINOR) + "." +
                                 std::to_string(TORCHONNX_VERSION_PATCH);
  if (std::strcmp(torchonnx::kVersion, TORCHONNX_VERSION) != 0 || from_parts != TORCHONNX_VERSION) {
    std::cerr << "version mismatch: kVersion " << torchonnx::kVersion << ", TORCHONNX_VERSION "
              << TORCHONNX_VERSION << ", MAJOR.MINOR.PATCH " << from_parts << "\n";
    return 1;
  }
  torch::jit::Module m("Tiny");
  m.register_parameter("w", torch::ones({3}), false);
  m.define(R"(
def forward(self, x):
    return torch.relu(x) * self.w + 1.0
)");
  torchonnx::ExportOptions options;
  options.input_names = {"x"};
  options.output_names = {"y"};
  try {
    torchonnx::export_model(m, {torch::randn({2, 3})}, argv[1], options);
  } catch (const torchonnx::ExportError& e) {
    std::cerr << "export failed: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }
  std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
  std::cout << "torchonnx " << TORCHONNX_VERSION << ": " << static_cast<long>(in.tellg())
            << " bytes\n";
  return in.tellg() > 0 ? 0 : 1;
}
