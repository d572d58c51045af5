#!/usr/bin/env bash
# All tests: set up, build, run ctest (converter tests, API and error tests, torchvision models),
# check its skips against tests/expected-skips.txt (scripts/check-skips.py), run the scripted-graph
# fuzzer with a fixed seed (scripts/fuzz_scripted.py, 60 programs; TORCHONNX_FUZZ_PROGRAMS=N
# changes the count, 0 skips it), then the sanitizer
# run (scripts/sanitize.sh: clang ASan/UBSan build of a subset of the tests and 20 s of fuzzing
# per fuzz target; TORCHONNX_SKIP_SANITIZE=1 skips it).
# On Debian 12 a second leg follows: the same ctest suite on Debian 13 (libtorch 2.6, onnx 1.17) in
# the root of scripts/debian13.sh (TORCHONNX_DEBIAN13=0 skips it; the sanitizer run is the first
# leg's only: it checks our code, which is the same on both). On Debian 13 the one leg is its own,
# without the sanitizer run, and with the sample of PyTorch's own ONNX tests (scripts/torch-tests.sh
# --sample; TORCHONNX_TORCH_TESTS=0 or ctest arguments skip it).
# Arguments go to ctest (e.g. -R ops_ to run the converter tests only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${TORCHONNX_BUILD_DIR:-build}
platform="Debian $(. /etc/os-release && echo "${VERSION_ID:-?}")"

leg_start=$SECONDS
status=0
bash scripts/setup.sh
# Every skip printed, one not in tests/expected-skips.txt a failure (scripts/check-skips.py): each
# gtest binary writes its results (GTEST_OUTPUT), ctest its own (a SKIP_RETURN_CODE skip).
results="$(cd "$build" && pwd)/test-results"
rm -rf "$results" && mkdir -p "$results/gtest"
# What failed, repeated at the very end of the output (CI may keep only its tail): the failing
# ctest tests, the sample's and the sanitizer's verdict lines.
failures="$results/failures.txt"
: >"$failures"
failed() {  # failed PART LOG: PART failed; its lines that say what, from LOG
  echo "test: $platform: $1 FAILED" >>"$failures"
  grep -E "$2" "$3" | tail -n 40 | sed 's/^/    /' >>"$failures" || true
}
(cd "$build" && GTEST_OUTPUT="xml:$results/gtest/" \
  ctest --output-on-failure --output-junit "$results/ctest.xml" -j "$(nproc)" "$@") \
  2>&1 | tee "$results/ctest.log" ||
  { status=1; failed ctest '^[[:space:]]*[0-9]+ - ' "$results/ctest.log"; }
python3 scripts/check-skips.py "$results" 2>&1 | tee "$results/skips.log" ||
  { status=1; failed "the skip check" 'UNEXPECTED|FAILED|unreadable|no results' "$results/skips.log"; }
if [ "${TORCHONNX_FUZZ_PROGRAMS:-60}" != 0 ] && [ $# = 0 ]; then
  # The scripted-graph fuzzer (issue 38), seed 1: random TorchScript programs exported by the
  # CLI, each compared in ONNX Runtime with libtorch on the CLI's example and on three input sets
  # of Python's (other branches and trip counts), at the converter tests' tolerance. Fails on any
  # mismatch, crash, internal error or exit that is not a documented refusal (4, 5).
  /usr/bin/python3 scripts/fuzz_scripted.py --seed 1 --max-programs "${TORCHONNX_FUZZ_PROGRAMS:-60}" \
    --minutes 30 --cli "$build/torchonnx" --out "$results/fuzz-scripted" 2>&1 |
    tee "$results/fuzz.log" ||
    { status=1; failed "the scripted-graph fuzzer" \
        '^== fuzz_scripted|^  [a-z_]+ +[0-9]+  ' \
        "$results/fuzz.log"; }
fi
if [ "$platform" = "Debian 13" ] && [ "${TORCHONNX_TORCH_TESTS:-1}" != 0 ] && [ $# = 0 ]; then
  # A fixed sample of PyTorch 2.6's own ONNX tests through torchonnx (issue 36): it fails when a
  # test that passed when the sample was recorded stops passing.
  bash scripts/torch-tests.sh --sample 2>&1 | tee "$results/sample.log" ||
    { status=1; failed "the torch-tests sample" 'torch-tests: (no longer|sample)' \
        "$results/sample.log"; }
fi
if [ "$platform" != "Debian 12" ]; then
  # sanitize.sh is made for Debian 12's clang 14 runtime and libtorch 1.13's leak suppressions;
  # it checks our code, which is the same on both platforms.
  echo "test: the sanitizer run is Debian 12's (scripts/sanitize.sh); skipped on $platform"
elif [ "${TORCHONNX_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/sanitize.sh 2>&1 | tee "$results/sanitize.log" ||
    { status=1; failed "the sanitizer run" \
        'sanitize: |^[[:space:]]*[0-9]+ - |ERROR: |SUMMARY: |^Base64: ' "$results/sanitize.log"; }
fi
echo "test: $platform leg $([ $status = 0 ] && echo passed || echo FAILED) in $((SECONDS - leg_start)) s"
cat "$failures"

if [ "$platform" = "Debian 12" ] && [ "${TORCHONNX_DEBIAN13:-1}" != 0 ]; then
  leg_start=$SECONDS
  leg_status=0
  TORCHONNX_SKIP_SANITIZE=1 bash scripts/debian13.sh bash scripts/test.sh "$@" || leg_status=1
  echo "test: Debian 13 leg (with making its root) $([ $leg_status = 0 ] && echo passed || echo FAILED) in $((SECONDS - leg_start)) s"
  [ $leg_status = 0 ] || status=1
  cat "$failures"  # the first leg's, again at the end
fi
exit $status
