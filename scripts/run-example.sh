#!/usr/bin/env bash
# The main job: set up, build, export the AlexNet example (printing its graph) and verify the
# exported model in ONNX Runtime against libtorch's output; then the same from Python (the
# torch.onnx documentation's example through `import torchonnx`), against eager PyTorch's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TORCHONNX_TARGETS="--target alexnet_example torchonnx_cli torchonnx_python" bash scripts/setup.sh
mkdir -p out
"./${TORCHONNX_BUILD_DIR:-build}/alexnet_example" out
node tools/verify/verify.mjs out/alexnet.onnx out/alexnet_test_data
echo "AlexNet: exported to out/alexnet.onnx and verified in ONNX Runtime"
PYTHONPATH="$PWD/${TORCHONNX_BUILD_DIR:-build}/python" /usr/bin/python3 examples/alexnet.py out
node tools/verify/verify.mjs out/alexnet_python.onnx out/alexnet_python_test_data
echo "AlexNet (Python): exported to out/alexnet_python.onnx and verified in ONNX Runtime"
