#!/usr/bin/python3
"""The slowest tests of a ctest run, from its JUnit file (--output-junit).

    slowest_tests.py JUNIT_XML [N]

Prints the N (10) slowest tests with their time and outcome, the run's
total time, and last its counts as one line ("ctest: N passed, N failed, N
skipped"): where CI's time goes, and its outcome as the run's closing line.  A missing or unreadable
file is said as such (the run stopped before ctest wrote it), exit 0.
"""
import sys
import xml.etree.ElementTree as ET


def outcome(case):
    if case.find("failure") is not None or case.get("status") == "fail":
        return "failed"
    if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "passed"


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"slowest tests: no test times ({path}: {e})")
        return 0
    cases = [(float(c.get("time") or 0), c.get("name"), outcome(c)) for c in root.iter("testcase")]
    total = sum(t for t, _, _ in cases)
    print(f"slowest {min(n, len(cases))} of {len(cases)} tests ({total:.0f} s of test time in all; "
          f"ctest's wall time {float(root.get('time') or 0):.0f} s):")
    for t, name, what in sorted(cases, reverse=True)[:n]:
        print(f"  {t:8.1f} s  {100 * t / total if total else 0:5.1f}%  {what:7}  {name}")
    count = {w: sum(1 for _, _, o in cases if o == w) for w in ("passed", "failed", "skipped")}
    print(f"ctest: {count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
