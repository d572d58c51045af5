#!/usr/bin/env bash
# Installs what torchonnx needs on Debian 12 (as root), then configures and builds into build/.
# Sourced by scripts/run-example.sh and scripts/test.sh; safe to run again (installs only what is
# missing, builds incrementally).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(build-essential cmake ninja-build ccache pkg-config git
          libtorch-dev libonnx-dev libprotobuf-dev libfmt-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev
          python3-torch python3-torchvision libopenblas0-pthread graphviz time)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
source scripts/install-packages.sh
install_missing setup "${packages[@]}"

# ONNX Runtime for the verification tool. The package bundles libonnxruntime.so; its postinstall
# download is skipped (it would fail offline).
if [ ! -d tools/verify/node_modules/onnxruntime-node ]; then
  (cd tools/verify && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi

export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
jobs=$(nproc)
cmake --build build -j "$jobs" ${TORCHONNX_TARGETS:-}
