#!/usr/bin/env bash
# All tests: set up, build, run ctest (converter tests, API and error tests, torchvision models),
# check its skips against tests/expected-skips.txt (scripts/check-skips.py), run the scripted-graph
# fuzzer with a fixed seed (scripts/fuzz_scripted.py, 60 programs; TORCHONNX_FUZZ_PROGRAMS=N
# changes the count, 0 skips it), then the sanitizer run (scripts/sanitize.sh: clang ASan/UBSan
# build of a subset of the tests and 20 s of fuzzing per fuzz target; TORCHONNX_SKIP_SANITIZE=1
# skips it; Debian 12's only: it is made for its clang 14 and libtorch 1.13, and checks our code,
# which is the same on every platform).
#
# The three platforms (README, "Quick start"): on Debian 12 three legs run, each a run of this
# script: Debian 12's natively, then Debian forky's (libtorch 2.14, the whole suite) and Debian
# 13's (libtorch 2.6) in the roots of scripts/root.sh (TORCHONNX_FORKY=0 and TORCHONNX_DEBIAN13=0
# skip them). CI's 90 minutes on 2 cores hold three builds but not three whole suites, so the Debian 13
# leg is TORCHONNX_LEG=older: what is its own (its .pt2 layout, PyTorch 2.6's files and ONNX tests,
# the ONNX Runtime 1.21 C++ API, Python on 3.13) and the model and API tests, not the converter
# tests that Debian 12 and forky both run. On a Debian 13 or forky machine the one leg is its own
# and whole. Debian 13's leg adds the sample of PyTorch 2.6's own ONNX tests
# (scripts/torch-tests.sh --sample; TORCHONNX_TORCH_TESTS=0 or ctest arguments skip it).
# Arguments go to ctest (e.g. -R ops_ to run the converter tests only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${TORCHONNX_BUILD_DIR:-build}
source scripts/platform.sh
platform=$platform_name
# The Debian 13 leg of a three-leg run (above) builds and runs what is its own: its .pt2 layout
# (PyTorch 2.6's, made at test time), PyTorch 2.6's TorchScript files, ONNX Runtime 1.21's C++ API
# (verify), the Python package on Python 3.13 and torch 2.6, the API and bad-input tests, and the
# sample of PyTorch 2.6's own ONNX tests. The converter tests, the models and everything else run
# on Debian 12 and forky; scripts/test.sh on a Debian 13 machine runs them all.
older_leg_tests='^(make_pt2_fixtures|pt2|torch26_files|api|bad_input|verify|verify_unavailable|python_.*)$'
older_leg_targets="torchonnx_cli torchonnx_python alexnet_example pt2_test torch26_files_test api_test bad_input_test verify_test"
if [ "${TORCHONNX_LEG:-}" = older ] && [ $# = 0 ]; then
  set -- -R "$older_leg_tests"
  export TORCHONNX_TARGETS="--target $older_leg_targets"
  echo "test: $platform: the older platform's leg: ctest -R '$older_leg_tests'"
fi

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
if [ "${TORCHONNX_FUZZ_PROGRAMS:-60}" != 0 ] && [ $# = 0 ] && [ "${TORCHONNX_LEG:-}" != older ]; then
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
if [ "$platform" = "Debian 13" ] && [ "${TORCHONNX_TORCH_TESTS:-1}" != 0 ] && { [ $# = 0 ] || [ "${TORCHONNX_LEG:-}" = older ]; }; then
  # A fixed sample of PyTorch 2.6's own ONNX tests through torchonnx (issue 36): it fails when a
  # test that passed when the sample was recorded stops passing.
  bash scripts/torch-tests.sh --sample 2>&1 | tee "$results/sample.log" ||
    { status=1; failed "the torch-tests sample" 'torch-tests: (no longer|sample)' \
        "$results/sample.log"; }
fi
if [ "$platform" != "Debian 12" ]; then
  # sanitize.sh is made for Debian 12's clang 14 runtime and libtorch 1.13's leak suppressions;
  # it checks our code, which is the same on every platform.
  echo "test: the sanitizer run is Debian 12's (scripts/sanitize.sh); skipped on $platform"
elif [ "${TORCHONNX_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/sanitize.sh 2>&1 | tee "$results/sanitize.log" ||
    { status=1; failed "the sanitizer run" \
        'sanitize: |^[[:space:]]*[0-9]+ - |ERROR: |SUMMARY: |^Base64: ' "$results/sanitize.log"; }
fi
echo "test: $platform leg $([ $status = 0 ] && echo passed || echo FAILED) in $((SECONDS - leg_start)) s"
cat "$failures"

# The other platforms' legs, in roots (scripts/root.sh): forky first, the newest and whole.
other_leg() {  # other_leg RELEASE NAME [ENV...]: this script in the root of RELEASE
  local release=$1 name=$2 leg_start=$SECONDS leg_status=0
  shift 2
  env TORCHONNX_SKIP_SANITIZE=1 "$@" bash scripts/root.sh "$release" bash scripts/test.sh "${ctest_args[@]}" ||
    leg_status=1
  echo "test: $name leg (with making its root) $([ $leg_status = 0 ] && echo passed || echo FAILED) in $((SECONDS - leg_start)) s"
  [ $leg_status = 0 ] || status=1
}
ctest_args=("$@")
if [ "$platform_id" = debian12 ] && [ -z "${TORCHONNX_LEG:-}" ]; then
  # forky whole; Debian 13 its own tests only, so that three builds fit CI's 90 minutes
  # (TORCHONNX_DEBIAN13_WHOLE=1 runs its whole suite instead).
  [ "${TORCHONNX_FORKY:-1}" = 0 ] || other_leg forky "Debian forky"
  if [ "${TORCHONNX_DEBIAN13:-1}" != 0 ]; then
    if [ "${TORCHONNX_DEBIAN13_WHOLE:-0}" = 1 ]; then
      other_leg debian13 "Debian 13"
    else
      other_leg debian13 "Debian 13" TORCHONNX_LEG=older
    fi
  fi
  cat "$failures"  # the first leg's, again at the end
fi
exit $status
