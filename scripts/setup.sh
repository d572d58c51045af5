#!/usr/bin/env bash
# Installs what torchonnx needs on Debian 12 (libtorch 1.13, onnx 1.12), Debian 13 (libtorch 2.6,
# onnx 1.17) or Debian forky (libtorch 2.14, onnx 1.20), as root, then configures and builds into
# build/ ($TORCHONNX_BUILD_DIR: scripts/root.sh builds a root's into build-RELEASE/). Run by scripts/run-example.sh and
# scripts/test.sh; safe to run again (installs only what is missing, builds incrementally).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(build-essential cmake ninja-build ccache pkg-config git
          libtorch-dev libonnx-dev libprotobuf-dev libfmt-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev
          python3-torch python3-torchvision libopenblas0-pthread graphviz time
          pybind11-dev python3-dev python3-pytest)
# Debian 13 and forky also have ONNX Runtime's C/C++ API, onnx's Python package and ONNX Runtime's
# (which the Python package's tests use there instead of the Node runner).
source scripts/platform.sh
if [ "$platform_id" != debian12 ]; then
  packages+=(libonnxruntime-dev python3-onnx python3-onnxruntime ca-certificates)
  # What these recommend is not needed, and doubles the download into a fresh root.
  export TORCHONNX_APT_FLAGS=--no-install-recommends
fi
# Node.js runs the ONNX Runtime verifier; npm only installs it (a Debian 13 root shares the
# checkout's tools/verify/node_modules with the Debian 12 leg, and so needs no npm).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
[ -d tools/verify/node_modules/onnxruntime-node ] || command -v npm >/dev/null 2>&1 || packages+=(npm)
source scripts/install-packages.sh
install_missing setup "${packages[@]}"

# ONNX Runtime for the verification tool. The package bundles libonnxruntime.so; its postinstall
# download is skipped (it would fail offline).
if [ ! -d tools/verify/node_modules/onnxruntime-node ]; then
  (cd tools/verify && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi

export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
# Paths below the checkout hashed relative to it, so that another clone of the same tree (CI's)
# reuses this machine's (and this root's) compiled objects.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
build=${TORCHONNX_BUILD_DIR:-build}
# -g1: line tables only (backtraces and gdb's file:line, no variables): a quarter less compile
# time than -g, on builds whose time CI counts twice (Note [Unity builds] in CMakeLists.txt).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
jobs=$(nproc)
cmake --build "$build" -j "$jobs" ${TORCHONNX_TARGETS:-}
