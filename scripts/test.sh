#!/usr/bin/env bash
# All tests: set up, build, run ctest (converter tests, API and error tests, torchvision models).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
