#!/usr/bin/env bash
# Runs a command of this checkout on Debian forky (testing: libtorch and python3-torch 2.14,
# onnx 1.20, GCC 16, Python 3.14): scripts/root.sh with the release given (see there).
#   bash scripts/forky.sh bash scripts/test.sh
#   bash scripts/forky.sh bash scripts/run-example.sh
exec bash "$(dirname "${BASH_SOURCE[0]}")/root.sh" forky "$@"
