#!/usr/bin/env bash
# torchonnx vs torch.onnx 1.13, side by side: makes the benchmark models, exports each with
# both (alternating, several runs), measures, and writes bench/RESULTS.md and bench/results.json.
#
#   bash bench/run.sh [--quick] [--models a,b,...] [--runs N] [--module-runs M] [--keep]
#
# Builds what it needs (torchonnx_cli, torchonnx_bench_export, the Python package) in build/ first
# unless --no-build is given; everything else is bench/run.py's (--help lists the options).
# bench/README.md tells what is measured and how long it takes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build="${TORCHONNX_BUILD:-$root/build}"

build_first=1
args=()
for a in "$@"; do
  if [[ "$a" == "--no-build" ]]; then build_first=0; else args+=("$a"); fi
done

if [[ ! -x /usr/bin/python3 ]] || ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  echo "bench: /usr/bin/python3 with torch 1.13 and torchvision is needed (scripts/setup.sh)" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "bench: /usr/bin/time is needed (apt-get install time)" >&2
  exit 2
fi

if [[ "$build_first" == 1 ]]; then
  if [[ ! -f "$build/build.ninja" ]]; then
    echo "bench: no build in $build: configure it first (cmake -S . -B build -G Ninja)" >&2
    exit 2
  fi
  # Builds of several people on one machine take turns on this lock.
  if command -v flock >/dev/null; then
    flock /tmp/torchonnx-build.lock ninja -C "$build" torchonnx_cli torchonnx_bench_export torchonnx_python
  else
    ninja -C "$build" torchonnx_cli torchonnx_bench_export torchonnx_python
  fi
fi

TORCHONNX_BUILD="$build" exec /usr/bin/python3 "$here/run.py" "${args[@]}"
