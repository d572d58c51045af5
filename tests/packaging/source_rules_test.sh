#!/usr/bin/env bash
# Rules of the source tree that only go one way (issue 37):
# - one job per room: no C++ source or header of the library, the CLI or the Python module over
#   800 lines;
# - opset decisions through registration ranges, shared builders (symbolic/helpers) and the named
#   ONNX features of Note [ONNX features by opset] (symbolic/onnx_features.h): no converter body
#   under src/symbolic/ops/ compares opset() with a number (the ceiling below is 0);
# - arguments by position of the converter's own overload: no converter under src/symbolic/
#   finds an argument by its schema name (Note [Factory overloads] in symbolic/factory.h);
# - the CLI and the Python module are users of the public API: their sources include no header of
#   src/ (only <...>, "torchonnx/..." and the CLI's own "cli.h");
# - one resolved configuration (Note [One resolved configuration] in common/export_config.h): the
#   stages under src/passes, src/symbolic and src/onnx read ExportConfig, never ExportOptions.
#   source_rules_test.sh SOURCE_DIR
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 SOURCE_DIR" >&2
  exit 2
fi
cd "$1"
max_lines=800
opset_ceiling=0
failures=0

while IFS= read -r file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt "$max_lines" ]; then
    echo "FAIL: $file has $lines lines (more than $max_lines): split it by job" >&2
    failures=$((failures + 1))
  fi
done < <(find src include tools/cli python -name '*.cpp' -o -name '*.h' | sort)

count=$({ grep -o 'opset() *[<>=!]=\?' src/symbolic/ops/*.cpp || true; } | wc -l)
echo "source_rules: $count opset() comparisons under src/symbolic/ops (ceiling $opset_ceiling)"
if [ "$count" -gt "$opset_ceiling" ]; then
  echo "FAIL: $count opset() comparisons under src/symbolic/ops, more than $opset_ceiling:" >&2
  echo "  decide opsets through the registration range, a builder in symbolic/helpers or a" >&2
  echo "  feature of symbolic/onnx_features.h (g.has(OnnxFeature::k...))" >&2
  grep -n 'opset() *[<>=!]=\?' src/symbolic/ops/*.cpp | sed 's/^/  /' >&2
  failures=$((failures + 1))
fi
by_name=$(grep -n 'arguments()\|\.name() *== *"\|arg_index' src/symbolic/ops/*.cpp \
  src/symbolic/helpers.cpp src/symbolic/context.cpp || true)
if [ -n "$by_name" ]; then
  echo "FAIL: a converter finds an argument by its schema name (register its overloads with" >&2
  echo "  their positions: add_factory, or a registration per overload):" >&2
  echo "$by_name" | sed 's/^/  /' >&2
  failures=$((failures + 1))
fi
internal=$(grep -Hn '^#include "' tools/cli/*.cpp tools/cli/*.h python/*.cpp |
  grep -Ev '#include "(torchonnx/[a-z_]+\.h|cli\.h)"' || true)
if [ -n "$internal" ]; then
  echo "FAIL: the CLI or the Python module includes internal headers (use the public API):" >&2
  echo "$internal" | sed 's/^/  /' >&2
  failures=$((failures + 1))
fi
raw_options=$(grep -rn 'ExportOptions' src/passes src/symbolic src/onnx src/common |
  sed 's|//.*||' | grep 'ExportOptions' || true)
if [ -n "$raw_options" ]; then
  echo "FAIL: a stage reads ExportOptions (read the resolved ExportConfig; only export/ resolves" >&2
  echo "  the options):" >&2
  echo "$raw_options" | sed 's/^/  /' >&2
  failures=$((failures + 1))
fi
[ $failures = 0 ] && echo "source_rules: ok"
exit $((failures > 0))
