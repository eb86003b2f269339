#!/usr/bin/env python3
"""Every ctest test is in a tier and has a time limit (cmake/TracebenchTests.cmake).

Reads the test list as ctest sees it (`ctest --show-only=json-v1`, which
includes the tests gtest_discover_tests found and the properties set on them
after discovery) and fails, naming the tests, when one has no tier label
(unit, adapters, integration, vmlab, fuzz), no TIMEOUT of its own, or a
gtest test that would report a GTEST_SKIP as a pass (no SKIP_REGULAR_EXPRESSION);
also when the build's default timeout (DartConfiguration.tcl) is missing, or
when .ci/run does not run the README's test command verbatim; and when the
schedule breaks its rule: every test alone (RUN_SERIAL), in one of two guest
slots dealt evenly (a VM-lab guest, an untimed test that keeps a CPU busy),
or an untimed test in the third place, with the README's `ctest -jN` one
more than the guest slots.
Usage: tiers_check.py <build dir>
"""
import json
import os
import re
import subprocess
import sys

TIERS = {"unit", "adapters", "integration", "vmlab", "fuzz"}


def props(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def schedule_problems(tests, jobs):
    """What breaks the schedule (cmake/TracebenchTests.cmake) under `ctest -j<jobs>`."""
    problems, slots = [], {}
    for t in tests:
        p = props(t)
        locks = p.get("RESOURCE_LOCK", [])
        guest = [x for x in locks if x.startswith("tb_guest_slot_")]
        if p.get("RUN_SERIAL") and locks:
            problems.append(f"{t['name']}: RUN_SERIAL and a resource lock {locks}")
        if len(guest) > 1:
            problems.append(f"{t['name']}: in two guest slots {guest}")
        if guest:
            # A guest's COST is 1000 + its seconds (started first); a busy
            # untimed test's, its seconds.
            cost = int(p.get("COST", 0))
            slots.setdefault(guest[0], []).append(cost - 1000 if "vmlab" in p.get("LABELS", []) else cost)
    if slots and len(slots) != 2:
        problems.append(f"guest slots {sorted(slots)}: two are dealt (one guest per host CPU)")
    if len(slots) == 2:
        loads = sorted(sum(c) for c in slots.values())
        longest = max(max(c) for c in slots.values())
        if loads[1] - loads[0] > longest:
            problems.append(f"guest slots dealt unevenly: {loads} s of COST (the longest guest {longest} s)")
    if slots and jobs != len(slots) + 1:
        problems.append(f"the README's ctest -j{jobs}: two guests and one untimed test need -j{len(slots) + 1}")
    return problems


def main():
    build = sys.argv[1]
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    problems = []
    for t in tests:
        p = props(t)
        labels = set(p.get("LABELS", []))
        if not labels & TIERS:
            problems.append(f"{t['name']}: no tier label (has {sorted(labels)})")
        if not p.get("TIMEOUT"):
            problems.append(f"{t['name']}: no TIMEOUT")
        cmd = t.get("command", [])
        # A gtest binary run directly (run-in-vm.sh passes filters into the guest).
        if len(cmd) > 1 and cmd[1].startswith("--gtest_filter=") and "SKIP_REGULAR_EXPRESSION" not in p:
            problems.append(f"{t['name']}: a gtest test without SKIP_REGULAR_EXPRESSION (a skip would pass)")
    dart = os.path.join(build, "DartConfiguration.tcl")
    timeout = None
    if os.path.exists(dart):
        m = re.search(r"^TimeOut:\s*(\d+)", open(dart).read(), re.M)
        timeout = int(m.group(1)) if m else None
    if not timeout or timeout > 3600:
        problems.append(f"{dart}: no default test timeout of at most an hour (TimeOut: {timeout})")
    # CI runs the README's test command verbatim (.ci/run may export variables before it).
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    readme = open(os.path.join(src, "README.md")).read()
    m = re.search(r"^(bash scripts/setup\.sh[^&\n]* && ctest [^\n]*)$", readme, re.M)
    ci = open(os.path.join(src, ".ci", "run")).read().splitlines()
    if not m:
        problems.append("README.md: no test command (bash scripts/setup.sh --tests && ctest ...)")
    elif m.group(1) not in ci:
        problems.append(f".ci/run does not run the README's test command verbatim: {m.group(1)}")
    if m:
        jobs = re.search(r" -j ?(\d+)", m.group(1))
        problems += schedule_problems(tests, int(jobs.group(1)) if jobs else 1)
    for line in problems:
        print("FAIL:", line)
    counts = {tier: sum(1 for t in tests if tier in props(t).get("LABELS", [])) for tier in sorted(TIERS | {"slow"})}
    print(f"{len(tests)} tests; per label: {counts}; default timeout {timeout} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
