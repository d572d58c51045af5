#!/usr/bin/env bash
# All tests: set up, build, run ctest (converter tests, API and error tests, torchvision models),
# then the sanitizer run (scripts/sanitize.sh: clang ASan/UBSan build of a subset of the tests and
# 20 s of fuzzing per fuzz target; TORCHONNX_SKIP_SANITIZE=1 skips it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
(cd build && ctest --output-on-failure -j "$(nproc)" "$@")
if [ "${TORCHONNX_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/sanitize.sh
fi
