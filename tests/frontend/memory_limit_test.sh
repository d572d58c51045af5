#!/bin/bash
# Issue 22: `torchonnx export` of a model whose weights (403 MB) are more than the memory it is
# allowed (a cgroup v1 memory limit of LIMIT_MB, default 256 MB: libtorch's start-up alone is
# ~170 MB) succeeds, and its output is that of an export without the limit
# (TORCHONNX_NO_MMAP=1: the copying load, which needs the weights in memory). Note [Zero-copy
# weights]. The cgroup is removed after. Skipped (exit 77) when not root or without cgroup v1's
# memory controller.
#
# Usage: memory_limit_test.sh TORCHONNX_CLI FIXTURE_DIR [LIMIT_MB]
set -u
cli=$1 dir=$2 limit_mb=${3:-256}
root=/sys/fs/cgroup/memory
if [ "$(id -u)" != 0 ] || [ ! -w "$root/cgroup.procs" ]; then
  echo "SKIPPED: needs root and cgroup v1's memory controller at $root"
  exit 77
fi
cg=$root/torchonnx_memory_test_$$
work=$(mktemp -d)
cleanup() {
  [ -d "$cg" ] && rmdir "$cg" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$cg" || { echo "SKIPPED: cannot create $cg"; exit 77; }
echo $((limit_mb << 20)) >"$cg/memory.limit_in_bytes"
echo $((limit_mb << 20)) >"$cg/memory.memsw.limit_in_bytes" 2>/dev/null  # no swapping out either

pt=$dir/mlp_400m.pt
weights=$(stat -c %s "$pt")
# In the cgroup: the shell writes its own pid into cgroup.procs, then becomes torchonnx.
bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg" \
  "$cli" export "$pt" -o "$work/limited.onnx" --inputs "$dir/mlp_400m" 2>"$work/err"
rc=$?
peak=$(($(cat "$cg/memory.max_usage_in_bytes") >> 20))
echo "limit ${limit_mb} MB, weights $((weights >> 20)) MB: exit $rc, peak usage of the cgroup" \
  "(page cache included) ${peak} MB, limit hit $(cat "$cg/memory.failcnt") times"
if [ $rc != 0 ]; then
  echo "FAILED: torchonnx export under the limit exited $rc (137: killed for memory):"
  tail -3 "$work/err"
  exit 1
fi
TORCHONNX_NO_MMAP=1 "$cli" export "$pt" -o "$work/free.onnx" --inputs "$dir/mlp_400m" 2>/dev/null ||
  { echo "FAILED: the export without a limit failed"; exit 1; }
cmp "$work/limited.onnx" "$work/free.onnx" || { echo "FAILED: outputs differ"; exit 1; }
echo "PASSED: exported under the limit, byte-identical to the copying load's export"
