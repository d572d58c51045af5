#!/usr/bin/python3
"""Writes docs/torch-tests.md from the JUnit files of scripts/torch-tests.sh.

Usage: report.py JUNIT_DIR OUT.md FILE.py ...
For each FILE, JUNIT_DIR holds FILE.base.xml (torch.onnx 2.6) and FILE.torchonnx.xml (routed to
torchonnx). The report has per file the passed / failed / skipped counts of each exporter, the
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


def reason(message):
    line = message.strip().split("\n")[0]
    line = re.sub(r"/[\w./+-]+\.py:\d+", "FILE:LINE", line)
    line = re.sub(r"\d+", "N", line)
    return line[:140].replace("|", "\\|")


def main(argv):
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
        base = load(os.path.join(junit, name + ".base.xml"))
        ours = load(os.path.join(junit, name + ".torchonnx.xml"))
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
    groups = collections.defaultdict(list)
    for f, n, m in regressions:
        groups[reason(m)].append("%s %s" % (f, n.split("::")[-1]))
    lines += ["| tests | error (first line) | examples |", "| --- | --- | --- |"]
    for r, tests in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append("| %d | %s | %s |" % (len(tests), r or "(no message)",
                                          ", ".join(tests[:3]).replace("|", "\\|")))
    lines += ["", "## Tests torchonnx passes and torch.onnx fails", ""]
    lines += ["- %s %s" % (f, n) for f, n in gains] or ["(none)"]
    with open(out_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
