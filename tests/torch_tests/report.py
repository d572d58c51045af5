#!/usr/bin/python3
"""Writes docs/torch-tests.md from the JUnit files of scripts/torch-tests.sh.

Usage: report.py JUNIT_DIR OUT.md FILE.py ...
       report.py --check JUNIT_DIR PASSING.txt [--record]

--check: every test named in PASSING.txt (one pytest id per line, "file::class::test") must have
passed in the *.torchonnx.xml files of JUNIT_DIR; exit 1 naming those that did not. --record
rewrites PASSING.txt with the tests that passed.
For each FILE, JUNIT_DIR holds FILE.base.xml (torch.onnx 2.6) and FILE.torchonnx.xml (routed to
torchonnx), or a file FILE.K.base.xml / FILE.K.torchonnx.xml per part K of a file run in parts. The report has per file the passed / failed / skipped counts of each exporter, the
tests torch.onnx passes and torchonnx fails grouped by the first line of their error (numbers
and paths made general), and the tests torchonnx passes that torch.onnx fails.
"""

import collections
import datetime
import os
import re
import sys
import xml.etree.ElementTree as ET


def load(path):
    out = {}
    if not os.path.exists(path):
        return out
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = "%s::%s" % (tc.get("classname"), tc.get("name"))
        status, message = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                status, message = "failed", child.get("message") or ""
            elif child.tag == "skipped":
                status = "skipped"
        out[name] = (status, message)
    return out


def load_file(junit, name, exporter):
    """The results of FILE for one exporter: FILE.<exporter>.xml and its parts' FILE.K.<...>.xml."""
    out = {}
    for entry in sorted(os.listdir(junit)):
        parts = entry.split(".")
        if parts[0] == name and entry.endswith("." + exporter + ".xml") and (
                len(parts) == 3 or (len(parts) == 4 and parts[1].isdigit())):
            out.update(load(os.path.join(junit, entry)))
    return out


# Reason classes of the tests torch.onnx passes and torchonnx fails: the first rule whose pattern
# is found in the test's id or its error's first line. What no rule names is a torchonnx gap.
RULES = [
    (r"test_pytorch_onnx_shape_inference", "internals: runs torch.onnx's passes on its graphs"),
    (r"test_onnx_node_naming|test_duplicated_output_node",
     "internals: torch.onnx's node names and node order"),
    # test_onnx_opset's check_onnx_opset_operator compares the node list and each node's
    # attributes with torch.onnx's lowering; a failure there (assert N == M, not an export error)
    # is a graph of other nodes or attribute forms (a constant folded into an initializer, a
    # default attribute left out, training-mode dropout computed instead of ONNX Dropout).
    (r"test_onnx_opset\.", r"^(AssertionError: )?assert ",
     "internals: torch.onnx's exact node list and attributes (test_onnx_opset)"),
    # The test replaces torch.onnx._internal.registration.registry.get_function_group (a private
    # function of torch.onnx) to make aten::clamp look unconvertible; torchonnx's converters are
    # its own, so aten::clamp stays converted.
    (r"test_clip_aten_fallback_explicit_request",
     "internals: mocks torch.onnx's private symbolic registry"),
    # The test asserts that torch.onnx refuses a model (a scripted model returning a dict;
    # adaptive "area" interpolation to a size that is no multiple of the input's); torchonnx
    # exports it, and the test's own comparison of the export with PyTorch in ONNX Runtime, which
    # runs before the assertion of the refusal, passes.
    (r"test_export_dict|test_interpolate_adaptive_pooling_error", r"RuntimeError not raised",
     "torchonnx exports what torch.onnx refuses (the test asserts the refusal)"),
    # The test's second export (no dynamic axes) feeds the input that torch.onnx's constant
    # folding leaves in the graph at opsets 9 and 10 (remained_onnx_input_idx=None there, [] from
    # opset 11): torchonnx folds the shape at every opset, and the graph has no input left.
    # Not an internals test: a gap, named. torchonnx converts at opsets 9+ and reaches 7 and 8
    # through ONNX's version converter; IsNaN, Sign, Where, NonZero, an arange and integer
    # comparisons are rewritten into opset 7 forms first where they have one (onnx/opset_down.cpp).
    (r"opset_version_[78]_", r"cannot export at opset [78]",
     "torchonnx gap: opsets 7 and 8 (an op new in opset 9 without an opset 7 form there)"),
    (r"test__dim_arange", r"got too many positional inputs",
     "internals: the inputs torch.onnx's constant folding leaves in the graph (opsets 9 and 10)"),
]


def reason_class(test, message):
    line = message.strip().split("\n")[0] if message else ""
    for rule in RULES:
        if len(rule) == 3:
            test_pattern, line_pattern, name = rule
            if re.search(test_pattern, test) and re.search(line_pattern, line):
                return name
            continue
        pattern, name = rule
        if re.search(pattern, test) or re.search(pattern, line):
            return name
    return "torchonnx gap"


def reason(message):
    line = message.strip().split("\n")[0]
    line = re.sub(r"/[\w./+-]+\.py:\d+", "FILE:LINE", line)
    line = re.sub(r"0x[0-9a-fA-F]+", "0xADDR", line)
    line = re.sub(r"\d+", "N", line)
    return line[:140].replace("|", "\\|")


def check(argv):
    junit, listed = argv[2], argv[3]
    passed = set()
    ran = 0
    for name in sorted(os.listdir(junit)):
        if not name.endswith(".torchonnx.xml"):
            continue
        file = name.split(".")[0] + ".py"  # FILE.torchonnx.xml or part K's FILE.K.torchonnx.xml
        for test, (status, _) in load(os.path.join(junit, name)).items():
            ran += 1
            if status == "passed":
                # junit's classname is "module.Class": the id is "file.py::Class::test".
                passed.add("%s::%s" % (file, test.split(".", 1)[-1]))
    if "--record" in argv:
        with open(listed, "w") as fh:
            fh.write("".join(t + "\n" for t in sorted(passed)))
        print("torch-tests: recorded %d passing tests of %d in %s" % (len(passed), ran, listed))
        return 0
    with open(listed) as fh:
        expected = [t.strip() for t in fh if t.strip()]
    lost = [t for t in expected if t not in passed]
    print("torch-tests: %d of the %d tests that passed when recorded pass (%d ran)" %
          (len(expected) - len(lost), len(expected), ran))
    for t in lost:
        print("torch-tests: no longer passes: %s" % t)
    return 1 if lost else 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--check":
        sys.exit(check(argv))
    junit, out_path, files = argv[1], argv[2], argv[3:]
    lines = ["# PyTorch 2.6's ONNX tests through torchonnx", "",
             "Written by `scripts/torch-tests.sh` (do not edit by hand), %s UTC. Each file of "
             "PyTorch 2.6's `test/onnx` (Debian 13's source package), unmodified, runs with "
             "torch.onnx 2.6 and then with torch.onnx's export entry points routed to torchonnx "
             "(`tests/torch_tests/torchonnx_route.py`)." %
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), "",
             "| file | tests | torch.onnx passed | failed | skipped | torchonnx passed | failed "
             "| skipped | torch.onnx passes, torchonnx fails | torchonnx passes, torch.onnx fails |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    regressions, gains = [], []
    for f in files:
        name = f[:-3] if f.endswith(".py") else f
        base = load_file(junit, name, "base")
        ours = load_file(junit, name, "torchonnx")
        count = lambda d, s: sum(1 for v in d.values() if v[0] == s)
        reg = [(n, ours[n][1]) for n in base
               if base[n][0] == "passed" and ours.get(n, ("missing",))[0] == "failed"]
        gain = [n for n in ours if ours[n][0] == "passed" and base.get(n, ("",))[0] == "failed"]
        regressions += [(name, n, m) for n, m in reg]
        gains += [(name, n) for n in gain]
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            f, max(len(base), len(ours)), count(base, "passed"), count(base, "failed"),
            count(base, "skipped"), count(ours, "passed"), count(ours, "failed"),
            count(ours, "skipped"), len(reg), len(gain)))
    lines += ["", "## Tests torch.onnx passes and torchonnx fails, by error", ""]
    classes = collections.Counter(reason_class(n, m) for f, n, m in regressions)
    lines += ["| reason class | tests |", "| --- | --- |"]
    lines += ["| %s | %d |" % (c, k) for c, k in classes.most_common()]
    lines += [""]
    groups = collections.defaultdict(list)
    for f, n, m in regressions:
        groups[(reason_class(n, m), reason(m))].append("%s %s" % (f, n.split("::")[-1]))
    lines += ["| tests | class | error (first line) | examples |", "| --- | --- | --- | --- |"]
    for (c, r), tests in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        examples = sorted(set(t.split("::")[-1] for t in tests))
        lines.append("| %d | %s | %s | %s |" % (len(tests), c, r or "(no message)",
                                               ", ".join(examples[:4]).replace("|", "\\|")))
    lines += ["", "## Tests torchonnx passes and torch.onnx fails", ""]
    lines += ["- %s %s" % (f, n) for f, n in gains] or ["(none)"]
    with open(out_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
