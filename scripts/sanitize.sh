#!/usr/bin/env bash
# The sanitizer run (issue 8): an AddressSanitizer + UndefinedBehaviorSanitizer build with clang in
# build-asan/ of the library, the CLI, the fuzz targets (fuzz/) and a subset of the tests; runs
# those tests, replays every fuzz corpus, then fuzzes each target for FUZZ_SECONDS (default 20)
# on a temporary copy of its corpus (the repository's corpus does not grow). Exit status non-zero
# on any finding; crash inputs are kept in build-asan/fuzz-findings/.
# Run after scripts/setup.sh (which installs libtorch and the other build dependencies).
#   FUZZ_SECONDS=600 scripts/sanitize.sh         # longer fuzzing
#   SANITIZE_TESTS="api optimize" scripts/sanitize.sh
#   FUZZ_TARGETS="cli load_model" scripts/sanitize.sh   # some targets only
#   SANITIZE_BUILD_DIR=/tmp/asan scripts/sanitize.sh   # another build folder
#   FUZZ_SEED=7 scripts/sanitize.sh                    # another libFuzzer seed (default 1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# clang and libFuzzer's runtime (libclang_rt.fuzzer-x86_64.a is in libclang-rt-14-dev).
source scripts/install-packages.sh
install_missing sanitize clang libclang-rt-14-dev

# The tests to run under the sanitizers (ctest names; each builds one binary): the API, error,
# export and tracing tests, the ONNX graph passes and the external-data writer, and converter
# families that go through most of the symbolic helpers, and the stage tests (whose graphs are
# linted after every pass in this build: TORCHONNX_LINT_GRAPHS).
tests=(${SANITIZE_TESTS:-api bad_input optimize external_data ops_shape ops_index passes_stage onnx_stage frontend_stage})
fuzz_targets=(${FUZZ_TARGETS:-tensor_proto input_spec dynamic_axes cli load_model})
replay_targets=(tensor_proto input_spec dynamic_axes cli load_model)  # every corpus, always
seconds=${FUZZ_SECONDS:-20}
# A fixed seed: a finding of a CI run is found again here by the same inputs in the same order
# (given at least as many runs: FUZZ_SECONDS=60 on a faster machine).
seed=${FUZZ_SEED:-1}
build=$(realpath -m "${SANITIZE_BUILD_DIR:-build-asan}")
jobs=$(nproc)

export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
# C++17: clang 14 with libstdc++ 12 cannot compile libtorch 1.13's headers as C++20 (the root
# CMakeLists.txt).
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=17 \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTORCHONNX_SANITIZE=ON \
  -DTORCHONNX_BUILD_FUZZERS=ON -DTORCHONNX_BUILD_EXAMPLES=OFF -DTORCHONNX_BUILD_BENCH=OFF >/dev/null
build_targets=(torchonnx_cli)
for t in "${tests[@]}"; do build_targets+=("${t}_test"); done
for t in "${replay_targets[@]}"; do build_targets+=("fuzz_$t"); done
cmake --build "$build" -j "$jobs" --target "${build_targets[@]}"

# Errors are fatal and come with a stack. Leaks: libtorch, libonnx and protobuf keep static
# registrations alive until exit; fuzz/lsan.supp suppresses leaks allocated inside them only.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$root/fuzz/lsan.supp:print_suppressions=0

status=0
ctest_regex="^($(IFS='|'; echo "${tests[*]}"))\$"
replay_regex="^fuzz_replay_($(IFS='|'; echo "${replay_targets[*]}"))\$"
(cd "$build" && ctest --output-on-failure -j "$jobs" -R "$ctest_regex|$replay_regex") || status=1

# libFuzzer: -max_len per target (arguments and specs are short; .pt seeds are a few KB).
declare -A max_len=([tensor_proto]=4096 [input_spec]=128 [dynamic_axes]=256 [cli]=1024
                    [load_model]=32768)
findings=$build/fuzz-findings
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$findings"
for t in "${fuzz_targets[@]}"; do
  cp -r "fuzz/corpus/$t" "$work/$t"
  dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  echo "sanitize: fuzzing $t for ${seconds}s (-seed=$seed)"
  if ! "$build/fuzz/fuzz_$t" -seed="$seed" -max_total_time="$seconds" \
      -max_len="${max_len[$t]:-4096}" -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="$findings/$t-" "$work/$t" >"$work/$t.log" 2>&1; then
    tail -n 80 "$work/$t.log"
    echo "sanitize: fuzz_$t found a bug; reproduce with $build/fuzz/fuzz_$t FILE (inputs in $findings)"
    status=1
  else
    grep -E "^stat::number_of_executed_units|^Done" "$work/$t.log" | tr '\n' ' ' && echo
  fi
done
exit $status
