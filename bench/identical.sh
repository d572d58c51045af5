#!/bin/bash
# Exports every .pt fixture (build/*fixtures/NAME.pt, inputs in NAME/) with two torchonnx builds
# and compares the files byte for byte (model and external data): a change that must not change
# any output (issue 22's zero-copy weights) is checked with it.
#
# Usage: bash bench/identical.sh OLD_DIR [NEW_BUILD_DIR] [FIXTURE_ROOT]
#   OLD_DIR        a copy of the old build's torchonnx and libtorchonnx.so* (cp -a them first), or
#                  "nommap": the new build with TORCHONNX_NO_MMAP=1 (torch::jit::load's copying
#                  load instead of the mapped one, Note [Zero-copy weights])
#   NEW_BUILD_DIR  default build
#   FIXTURE_ROOT   where the *fixtures folders are (default: NEW_BUILD_DIR)
# Exit status 1 when any output differs or one build fails where the other does not.
set -u
new=$(cd "${2:-build}" && pwd)
if [ "$1" = nommap ]; then old=$new; old_env=TORCHONNX_NO_MMAP=1; else old=$(cd "$1" && pwd); old_env=; fi
root=$(cd "${3:-$new}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
same=0 differ=0 failed=0 exported=0
here=$(cd "$(dirname "$0")/.." && pwd)
for pt in "$root"/*fixtures/*.pt "$here"/tests/fixtures/torch26/*.pt; do
  name=$(basename "$(dirname "$pt")")/$(basename "$pt" .pt)
  inputs=()
  for d in "${pt%.pt}" "${pt%.pt}/case0"; do  # scripted fixtures: case0/ holds the first inputs
    if [ ${#inputs[@]} = 0 ] && ls "$d"/input_*.pb >/dev/null 2>&1; then inputs=(--inputs "$d"); fi
  done
  for side in old new; do
    rm -rf "$work/$side" && mkdir -p "$work/$side"
    if [ $side = old ]; then bin=$old; env=$old_env; else bin=$new; env=; fi
    env $env LD_LIBRARY_PATH=$bin "$bin/torchonnx" export "$pt" -o "$work/$side/model.onnx" \
      "${inputs[@]}" >/dev/null 2>"$work/$side.err"
    echo $? >"$work/$side.rc"
  done
  if [ "$(cat "$work/old.rc")" != "$(cat "$work/new.rc")" ]; then
    echo "FAILED $name: exit $(cat "$work/old.rc") (old) vs $(cat "$work/new.rc") (new)"
    tail -2 "$work/new.err"
    failed=$((failed + 1))
  elif diff -r "$work/old" "$work/new" >/dev/null; then
    same=$((same + 1))
    [ "$(cat "$work/new.rc")" = 0 ] && exported=$((exported + 1))
  else
    echo "DIFFERS $name"
    differ=$((differ + 1))
  fi
done
echo "identical: $same ($exported exported, the others failed alike on both sides), different: $differ, failed on one side: $failed"
[ $differ -eq 0 ] && [ $failed -eq 0 ]
