#!/usr/bin/env bash
# The main job: set up, build, export the AlexNet example (printing its graph) and verify the
# exported model in ONNX Runtime against libtorch's output.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TORCHONNX_TARGETS="--target alexnet_example torchonnx_cli" bash scripts/setup.sh
mkdir -p out
"./${TORCHONNX_BUILD_DIR:-build}/alexnet_example" out
node tools/verify/verify.mjs out/alexnet.onnx out/alexnet_test_data
echo "AlexNet: exported to out/alexnet.onnx and verified in ONNX Runtime"
