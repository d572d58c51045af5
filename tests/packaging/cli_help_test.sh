#!/usr/bin/env bash
# `torchonnx --version`, `torchonnx --help` and `torchonnx SUB --help` for every subcommand the
# top-level help lists: each exits 0 and prints sensible text (the version; a usage line naming the
# subcommand, a description, its options).
#   cli_help_test.sh CLI VERSION
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 CLI VERSION" >&2
  exit 2
fi
cli=$1
version=$2
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Runs the CLI with the given arguments; sets $out to its stdout+stderr, fails unless it exits 0.
run_ok() {
  local rc=0
  out=$("$cli" "$@" 2>&1) || rc=$?
  if [ $rc -ne 0 ]; then
    fail "torchonnx $* exited $rc:"$'\n'"$out"
    return 1
  fi
}

if run_ok --version; then
  [ "$out" = "torchonnx $version" ] || fail "torchonnx --version printed '$out', not 'torchonnx $version'"
fi

subcommands=()
if run_ok --help; then
  # CLI11 up to 2.4 (Debian 12, 13) writes "Usage: torchonnx [OPTIONS] ...", 2.5 (forky)
  # "torchonnx [OPTIONS] ..." and upper-case headings.
  grep -qE "^(Usage: )?torchonnx \[OPTIONS\]" <<<"$out" || fail "torchonnx --help has no usage line:"$'\n'"$out"
  grep -q -- "--version" <<<"$out" || fail "torchonnx --help does not mention --version"
  grep -q "^Exit codes:" <<<"$out" || fail "torchonnx --help does not list the exit codes"
  # The names listed under "Subcommands:" (two-space indent, name, then its description).
  mapfile -t subcommands < <(sed -n '/^\(Subcommands\|SUBCOMMANDS\):/,$p' <<<"$out" | sed -n 's/^  \([a-z][a-z_-]*\) .*/\1/p')
fi
for expected in export print unconvertible ops; do
  [[ " ${subcommands[*]} " == *" $expected "* ]] ||
    fail "torchonnx --help does not list the subcommand '$expected' (lists: ${subcommands[*]})"
done

for sub in "${subcommands[@]}"; do
  run_ok "$sub" --help || continue
  grep -qE "^(Usage: )?torchonnx $sub \[OPTIONS\]" <<<"$out" || fail "torchonnx $sub --help has no 'Usage: torchonnx $sub' line:"$'\n'"$out"
  # A description before the usage line.
  first=$(head -n 1 <<<"$out")
  [[ "$first" =~ [A-Za-z]{3,}.*[a-z] && "$first" != Usage:* && "$first" != "torchonnx $sub ["* ]] ||
    fail "torchonnx $sub --help does not start with a description: '$first'"
  grep -qE -- "-h, *--help" <<<"$out" || fail "torchonnx $sub --help does not list its options"
  echo "ok: torchonnx $sub --help ($(wc -l <<<"$out") lines)"
done

# An unknown subcommand is an invalid argument (exit code 2).
rc=0
"$cli" no-such-subcommand >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "torchonnx no-such-subcommand exited $rc, not 2 (invalid argument)"

if [ $failures -ne 0 ]; then
  echo "cli_help: $failures failure(s)" >&2
  exit 1
fi
echo "cli_help: --version, --help and --help of ${#subcommands[@]} subcommands (${subcommands[*]}) ok"
