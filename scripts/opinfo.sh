#!/usr/bin/env bash
# The OpInfo sweep (issue 21): every OpInfo of PyTorch's op_db × its sample inputs, traced and
# scripted (scripts/opinfo.py fixtures), exported by torchonnx and by torch.onnx, run in ONNX
# Runtime and compared with libtorch; writes docs/opinfo.md.
#   bash scripts/opinfo.sh                  # everything: Debian 12 and Debian 13 (~2 h on 1 core)
#   bash scripts/opinfo.sh --no-d13         # Debian 12 only: torchonnx and torch.onnx 1.13 at 17
#   bash scripts/opinfo.sh --ops sinh,cosh  # some ops (results merged into the last full run's;
#                                           # the table goes to build/opinfo/opinfo.md)
#   bash scripts/opinfo.sh --quick          # one sample per dtype, traced only (~1/3 of the time)
#   bash scripts/opinfo.sh --jobs 2         # exports in parallel (default 1: the sweep is niced
#                                           # and uses one core, leaving the other to builds)
#   --no-build: use the CLIs as they are (build/torchonnx, build-debian13/torchonnx).
# Fixtures and results: build/opinfo/d12 (torch 1.13's op_db) and build-debian13/opinfo/d13
# (torch 2.6's, made in the Debian 13 root by scripts/debian13.sh). Columns: torchonnx at opset 17
# on both builds and at the Debian 13 build's highest opset; torch.onnx 1.13 and 2.6 at 17.
# The failing ops of the first torchonnx column, by class: build/opinfo/failures.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

ops=""
jobs=1
d13=1
build=1
fixture_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ops) ops=$2; shift 2 ;;
    --ops=*) ops=${1#--ops=}; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    --quick) fixture_args=(--cap 1 --cap-other 1 --script-cap 0); shift ;;
    --no-d13) d13=0; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "opinfo.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
ops_args=()
[ -z "$ops" ] || ops_args=(--ops "$ops")

# One platform's sweep: PYTHON FIXTURE_DIR BUILD_DIR NAME... (NAME: torch.onnx-17, torchonnx-17,
# torchonnx-max). Runs in the current root (the Debian 13 one through scripts/debian13.sh).
sweep() {
  local dir=$1 build_dir=$2
  shift 2
  if [ "$build" = 1 ]; then
    flock /tmp/torchonnx-build.lock cmake --build "$build_dir" -j 2 --target torchonnx_cli
  fi
  /usr/bin/python3 scripts/opinfo.py fixtures "$dir" "${fixture_args[@]}" "${ops_args[@]}"
  local max
  max=$("$build_dir/torchonnx" export --help | sed -n 's/.*ONNX opset version ([0-9]*-\([0-9]*\)).*/\1/p')
  for col in "$@"; do
    case "$col" in
      torch.onnx-17) /usr/bin/python3 scripts/opinfo.py run "$dir" --exporter torch.onnx --column "$col" \
                       --opset 17 --jobs "$jobs" "${ops_args[@]}" ;;
      torchonnx-17) /usr/bin/python3 scripts/opinfo.py run "$dir" --exporter torchonnx --column "$col" \
                      --opset 17 --cli "$build_dir/torchonnx" --jobs "$jobs" "${ops_args[@]}" ;;
      torchonnx-max) /usr/bin/python3 scripts/opinfo.py run "$dir" --exporter torchonnx --column "$col" \
                       --opset "$max" --cli "$build_dir/torchonnx" --jobs "$jobs" "${ops_args[@]}" ;;
    esac
  done
}

start=$(date +%s)
# Debian 12: /usr/bin/python3 is torch 1.13.
sweep build/opinfo/d12 build torch.onnx-17 torchonnx-17
if [ "$d13" = 1 ]; then
  fx="" oa=""
  [ ${#fixture_args[@]} = 0 ] || fx=$(printf '%q ' "${fixture_args[@]}")
  [ ${#ops_args[@]} = 0 ] || oa=$(printf '%q ' "${ops_args[@]}")
  bash scripts/debian13.sh bash -c "$(declare -f sweep); build=$build jobs=$jobs; \
    fixture_args=($fx); ops_args=($oa); \
    sweep build-debian13/opinfo/d13 build-debian13 torchonnx-17 torchonnx-max torch.onnx-17"
fi

columns=(--column "torchonnx D12 @17=build/opinfo/d12:torchonnx-17")
if [ -f build-debian13/opinfo/d13/manifest.jsonl ]; then
  columns+=(--column "torchonnx D13 @17=build-debian13/opinfo/d13:torchonnx-17"
            --column "torchonnx D13 @{opset}=build-debian13/opinfo/d13:torchonnx-max")
fi
columns+=(--column "torch.onnx 1.13 @17=build/opinfo/d12:torch.onnx-17")
[ ! -f build-debian13/opinfo/d13/manifest.jsonl ] ||
  columns+=(--column "torch.onnx 2.6 @17=build-debian13/opinfo/d13:torch.onnx-17")
# A partial run (--ops) writes its table to build/opinfo/opinfo.md, leaving docs/opinfo.md alone.
out=docs/opinfo.md
[ -z "$ops" ] || out=build/opinfo/opinfo.md
/usr/bin/python3 scripts/opinfo.py report "${columns[@]}" --out "$out" \
  --failures build/opinfo/failures.txt
echo "opinfo.sh: done in $(( $(date +%s) - start )) s"
