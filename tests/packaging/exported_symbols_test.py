#!/usr/bin/env python3
"""libtorchonnx.so exports the public API only (issue 37, Note [Exported symbols] in the root
CMakeLists.txt): every exported symbol of torchonnx's own (torchonnx::..., its vtables and type
infos) names only what include/torchonnx/ declares. An internal namespace (torchonnx::symbolic,
::frontend, ...) or a name no public header declares (an internal function of namespace
torchonnx) in `nm -D` fails the test.

    exported_symbols_test.py LIBTORCHONNX_SO INCLUDE_DIR
"""
import re
import subprocess
import sys
from pathlib import Path

# Namespaces of the library's internals; the public API has torchonnx and torchonnx::detail
# (logging.h's ExportScope) only.
INTERNAL = {"symbolic", "frontend", "passes", "optimizer", "ir", "pipeline", "verification",
            "compat", "cli", "ops", "type_propagation"}


def public_identifiers(include_dir):
    words = set()
    for header in Path(include_dir).glob("*.h*"):
        words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", header.read_text()))
    return words


def torchonnx_paths(symbol):
    """Each qualified name torchonnx::a::b... the symbol mentions, as its components [a, b, ...]
    (template arguments and operators cut off)."""
    for m in re.finditer(r"\btorchonnx((?:::~?[A-Za-z_][A-Za-z0-9_]*)+)", symbol):
        yield [c.lstrip("~") for c in m.group(1).split("::")[1:]]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib, include_dir = sys.argv[1], sys.argv[2]
    nm = subprocess.run(["nm", "-DC", "--defined-only", lib], capture_output=True, text=True,
                        check=True).stdout
    words = public_identifiers(include_dir)
    exported, instantiations, bad = 0, 0, []
    for line in nm.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 3 or "torchonnx" not in parts[2]:
            continue
        symbol = parts[2]
        exported += 1
        head = re.sub(r"^(vtable|typeinfo|typeinfo name|VTT|guard variable) for ", "", symbol)
        if not head.startswith("torchonnx::"):
            # An instantiation of another library's template over torchonnx types
            # (std::vector<torchonnx::...>::...): vague linkage, which -fvisibility=hidden leaves
            # to the template's namespace; not an entry point of torchonnx's.
            instantiations += 1
            continue
        for path in torchonnx_paths(symbol):
            internal = [c for c in path if c in INTERNAL]
            unknown = [c for c in path if c not in words]
            if internal or unknown:
                bad.append(f"{symbol}  ({'internal namespace ' + internal[0] if internal else 'not in the public headers: ' + unknown[0]})")
                break
    print(f"exported_symbols: {exported} exported symbols of {lib} name torchonnx "
          f"({instantiations} of them instantiations of other libraries' templates)")
    for b in bad:
        print(f"FAIL: internal symbol exported: {b}", file=sys.stderr)
    if bad:
        print(f"FAIL: {len(bad)} internal symbols exported: declare what users need in "
              "include/torchonnx/ (inside its visibility push) or keep it internal", file=sys.stderr)
        return 1
    if exported == 0:
        print("FAIL: no torchonnx symbol exported at all", file=sys.stderr)
        return 1
    print("exported_symbols: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
