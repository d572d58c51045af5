#!/usr/bin/env python3
"""No silent skips (issue 38, item 5): every test that skipped in a ctest run, against the list of
expected skips of this platform (tests/expected-skips.txt).

    python3 scripts/check-skips.py RESULTS_DIR [--list tests/expected-skips.txt] [--platform debian12]

RESULTS_DIR holds what scripts/test.sh has ctest write: gtest/*.xml (GTEST_OUTPUT=xml:DIR/, one
file per gtest binary: a GTEST_SKIP is one test of a binary that ctest counts as passed) and
ctest.xml (`ctest --output-junit`: a whole ctest test skipped by its SKIP_RETURN_CODE, as
memory_limit without cgroup v1's memory controller). Prints every skip with its reason; exits 1
when one is not in the list for this platform. A listed skip that did not happen although its
binary ran is reported as stale (a warning: the list should lose it).

The list: one skip a line, `PLATFORM WHERE TEST REASON...`; PLATFORM is debian12, debian13, forky,
all, torch2 (Debian 13 and forky) or not-forky;
WHERE the gtest binary (ops_shape_test) or the ctest test (memory_limit); TEST the gtest test
(Suite.Name, shell wildcards allowed) or - for a ctest test skipped as a whole.
Plain python3, no third-party modules.
"""
import argparse
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET


def this_platform():
    """debian12, debian13 or forky (scripts/platform.sh's names), from os-release's codename."""
    codename = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("VERSION_CODENAME="):
                    codename = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {"bookworm": "debian12", "trixie": "debian13"}.get(codename, codename or "unknown")


# "all", each platform, and the groups: "torch2" is every libtorch 2.x platform (Debian 13, forky),
# "not-forky" the platforms before forky.
PLATFORMS = {"all": {"debian12", "debian13", "forky"}, "debian12": {"debian12"},
             "debian13": {"debian13"}, "forky": {"forky"}, "torch2": {"debian13", "forky"},
             "not-forky": {"debian12", "debian13"}}


def read_list(path, platform):
    """The expected skips of `platform`: [(where, test glob, reason, line number)]."""
    entries = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(None, 3)
            if len(fields) < 4:
                sys.exit(f"{path}:{number}: expected PLATFORM WHERE TEST REASON: {line}")
            plat, where, test, reason = fields
            if plat not in PLATFORMS:
                sys.exit(f"{path}:{number}: unknown platform {plat}")
            if platform in PLATFORMS[plat]:
                entries.append((where, test, reason, number))
    return entries


def gtest_results(directory):
    """{binary: [(Suite.Name, skipped, message)]} from GTEST_OUTPUT's files."""
    results = {}
    if not os.path.isdir(directory):
        return results
    names = sorted(n for n in os.listdir(directory) if n.endswith(".xml"))
    for name in names:
        stem = name[: -len(".xml")]
        # gtest names a second file of the same binary foo_test_1.xml.
        m = re.fullmatch(r"(.*)_\d+", stem)
        binary = m.group(1) if m and f"{m.group(1)}.xml" in names else stem
        try:
            root = ET.parse(os.path.join(directory, name)).getroot()
        except ET.ParseError as e:
            print(f"check-skips: {name}: unreadable ({e}); a binary that crashed writes none")
            continue
        tests = results.setdefault(binary, {})
        for case in root.iter("testcase"):
            full = f"{case.get('classname')}.{case.get('name')}"
            skipped = case.find("skipped")
            is_skip = case.get("result") == "skipped" or skipped is not None
            message = ""
            if skipped is not None:
                message = skipped.get("message") or skipped.text or ""
                # "file:line\nreason": the reason is what says why.
                message = message.split("\n", 1)[-1].strip()
            tests[full] = (is_skip, message)  # a later run of the binary wins
    return results


def ctest_results(path):
    """{ctest test: (skipped, message)} from `ctest --output-junit`."""
    results = {}
    if not os.path.isfile(path):
        return results
    for case in ET.parse(path).getroot().iter("testcase"):
        # A test that skipped itself has <skipped message="SKIP_RETURN_CODE=77"/> (or
        # SKIP_REGULAR_EXPRESSION_MATCHED); "Fixture dependency failed" and "Required Files Missing"
        # are failures that ctest reports itself.
        skipped = case.find("skipped")
        message = (skipped.get("message") or "").strip() if skipped is not None else ""
        is_skip = message.startswith("SKIP_")
        out = case.find("system-out")
        if is_skip and out is not None and out.text:
            last = [line for line in out.text.strip().splitlines() if line.strip()]
            if last:
                message = f"{message}: {last[-1].strip()}" if message else last[-1].strip()
        results[case.get("name")] = (is_skip, message)
    return results


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="the folder with gtest/*.xml and ctest.xml")
    parser.add_argument("--list", default=os.path.join(here, "..", "tests", "expected-skips.txt"))
    parser.add_argument("--platform", default=this_platform())
    args = parser.parse_args()

    expected = read_list(args.list, args.platform)
    gtests = gtest_results(os.path.join(args.results, "gtest"))
    ctests = ctest_results(os.path.join(args.results, "ctest.xml"))
    if not gtests and not ctests:
        print(f"check-skips: no results in {args.results} (gtest/*.xml, ctest.xml)")
        return 1

    used = set()

    def listed(where, test):
        for where_, glob, reason, number in expected:
            if where_ == where and (glob == test or fnmatch.fnmatchcase(test, glob)):
                used.add(number)
                return reason
        return None

    skips = []  # (where, test, message, reason or None)
    for binary, tests in sorted(gtests.items()):
        for full, (is_skip, message) in sorted(tests.items()):
            if is_skip:
                skips.append((binary, full, message, listed(binary, full)))
    for name, (is_skip, message) in sorted(ctests.items()):
        if is_skip:
            skips.append((name, "-", message, listed(name, "-")))

    unexpected = [s for s in skips if s[3] is None]
    for where, test, message, reason in skips:
        label = "skip" if reason is not None else "UNEXPECTED skip"
        what = f"{where} {test}" if test != "-" else f"{where} (the whole ctest test)"
        print(f"check-skips: {label}: {what}: {message or '(no message)'}")
    ran = set(gtests) | set(ctests)
    stale = [(w, t, r, n) for w, t, r, n in expected if n not in used and w in ran]
    for where, test, reason, number in stale:
        print(f"check-skips: warning: stale (listed at line {number}, did not skip): "
              f"{where} {test}: {reason}")
    total = sum(len(t) for t in gtests.values())
    print(f"check-skips: {args.platform}: {len(skips)} skipped of {total} gtest tests in "
          f"{len(gtests)} binaries and {len(ctests)} ctest tests; {len(unexpected)} not in "
          f"{os.path.relpath(args.list)}, {len(stale)} listed that did not skip")
    if unexpected:
        print("check-skips: FAILED: a skip not in the list hides a test that stopped testing; "
              "fix it, or list it for this platform with its reason")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
