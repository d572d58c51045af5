#!/usr/bin/env bash
# Runs a command of this checkout on Debian 13 (trixie: libtorch 2.6, onnx 1.17): scripts/root.sh
# with the release given (see there).
#   bash scripts/debian13.sh bash scripts/test.sh
#   bash scripts/debian13.sh bash scripts/run-example.sh
exec bash "$(dirname "${BASH_SOURCE[0]}")/root.sh" debian13 "$@"
