#!/usr/bin/env bash
# Planted wrong converters against the converter tests (issue 38): for each mutant of
# tests/mutants/mutants.cpp, runs the tests of its op's family (build/tests/ops_<family>_test) with
# the mutant loaded (LD_PRELOAD=libtorchonnx_mutants.so TORCHONNX_MUTANT=<name>) and reports
#   CAUGHT <mutant> by <failed tests>   or   SURVIVED <mutant>
# Each family first runs once with the library loaded and no mutant: it must pass, so that a
# failure under a mutant is the mutant's. Exit 1 when a mutant survives, when a mutant is not
# registered, or when a family fails without one.
#
#   bash scripts/mutants.sh BUILD_DIR [MUTANT...]      (ctest: the `mutants` test)
#   bash scripts/mutants.sh --no-baseline BUILD_DIR    (the families passed already: ctest runs
#                                                      it after every ops_* test passed)
# A mutant's run stops at its first failing test (--gtest_fail_fast), which is the one reported;
# when that test failed only on a case the mutant does not lower, the family runs again in full.
# Under ctest about 3.5 to 6 minutes of one core, by machine and platform.
set -uo pipefail
unset GTEST_OUTPUT  # test.sh has the suite write its results for the skip check; not these runs

baseline=1
if [[ ${1:-} == --no-baseline ]]; then baseline=0; shift; fi
build=${1:?usage: mutants.sh [--no-baseline] BUILD_DIR [MUTANT...]}
shift
lib=$build/tests/libtorchonnx_mutants.so
[[ -f $lib ]] || { echo "mutants.sh: $lib not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name family op, one mutant a line
TORCHONNX_MUTANT=list LD_PRELOAD=$lib "$build/tests/ops_activation_test" --gtest_list_tests \
  >"$work/list" 2>"$work/list.err" || { cat "$work/list.err"; exit 2; }
if (($#)); then
  grep -E "^($(IFS='|'; echo "$*")) " "$work/list" >"$work/selected"
else
  cp "$work/list" "$work/selected"
fi
[[ -s $work/selected ]] || { echo "mutants.sh: no mutant selected" >&2; exit 2; }

# The failed tests of a gtest run (its --gtest_output=json file), one line; a test whose every
# failure is the mutant's refusal of a case it does not lower ("mutant <op>: ...") is listed apart
# as "unhandled", and does not count as catching it.
failed_tests() {
  python3 - "$1" <<'PY'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
caught, unhandled = [], []
for suite in report.get("testsuites", []):
    for test in suite.get("testsuite", []):
        failures = [f.get("failure", "") for f in test.get("failures", [])]
        if not failures:
            continue
        name = suite["name"] + "." + test["name"]
        (unhandled if all("mutant " in f for f in failures) else caught).append(name)
print(" ".join(caught) + (" (unhandled: " + " ".join(unhandled) + ")" if unhandled else ""))
PY
}

status=0
start=$SECONDS
for family in $( ((baseline)) && cut -d' ' -f2 "$work/selected" | sort -u); do
  bin=$build/tests/ops_${family}_test
  out=$work/$family.baseline
  if ! LD_PRELOAD=$lib "$bin" --gtest_brief=1 --gtest_output="json:$out.json" >"$out" 2>&1; then
    echo "BASELINE FAILED ops_$family (no mutant): $(failed_tests "$out.json")"
    status=1
  fi
done

while read -r name family op; do
  out=$work/$name.out
  t0=$SECONDS
  # First until the first failure; again in full when that one was only a case the mutant does
  # not lower (a later test may still catch it).
  for stop in --gtest_fail_fast ""; do
    TORCHONNX_MUTANT=$name LD_PRELOAD=$lib "$build/tests/ops_${family}_test" --gtest_brief=1 \
      $stop --gtest_output="json:$out.json" >"$out" 2>&1
    rc=$?
    tests=$(failed_tests "$out.json")
    ((rc != 0)) && [[ ${tests%%(unhandled*} != *[A-Za-z]* ]] || break
  done
  if ! grep -q "torchonnx mutant: $name registered" "$out"; then
    echo "NOT REGISTERED $name (exit $rc): $(tail -n 3 "$out" | tr '\n' ' ')"
    status=1
  elif ((rc == 0)); then
    echo "SURVIVED $name ($op; ops_$family, $((SECONDS - t0)) s)"
    status=1
  else
    if [[ ${tests%%(unhandled*} != *[A-Za-z]* ]]; then
      echo "SURVIVED $name ($op; ops_$family): only failures it does not lower: $tests"
      status=1
      continue
    fi
    echo "CAUGHT $name ($op; ops_$family, $((SECONDS - t0)) s) by ${tests:-exit $rc}"
  fi
done <"$work/selected"
echo "mutants: $(wc -l <"$work/selected") run in $((SECONDS - start)) s"
exit $status
