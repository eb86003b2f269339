#!/usr/bin/python3
"""Summarizes profile.sh's timings: summarize.py DIR

DIR/total.txt: "user sys wall" of the whole build; DIR/times.txt: "user sys
wall OUTPUT" per compile and link; DIR/load.txt: "epoch 1min 5min 15min".
Prints the whole build's CPU seconds (user+sys) and wall time, the share of
compiling and linking, the CPU per target (a compile's target is its
CMakeFiles/<target>.dir, a link's its output), the slowest files, and the
load average seen while it built.
"""
import os
import re
import sys
from collections import defaultdict


def target_of(output):
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
    return m.group(1) if m else os.path.basename(output)


def main():
    d = sys.argv[1]
    user, sys_, wall = (float(x) for x in open(os.path.join(d, "total.txt")).read().split()[:3])
    steps = []
    for line in open(os.path.join(d, "times.txt")):
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and re.match(r"^[0-9.]+$", parts[0]):
            steps.append((float(parts[0]) + float(parts[1]), float(parts[2]), parts[3].strip()))
    compiles = [s for s in steps if s[2].endswith(".o")]
    links = [s for s in steps if not s[2].endswith(".o")]
    cpu = user + sys_
    print(f"whole build: {cpu:.0f} CPU s (user {user:.0f}, sys {sys_:.0f}), {wall:.0f} s wall")
    for name, group in (("compiling", compiles), ("linking", links)):
        print(f"  {name}: {sum(s[0] for s in group):.0f} CPU s in {len(group)} steps")
    print(f"  the rest (generators, cmake, make): {cpu - sum(s[0] for s in steps):.0f} CPU s")
    per = defaultdict(float)
    for s in steps:
        per[target_of(s[2])] += s[0]
    print("CPU s per target (compile and link):")
    for t, c in sorted(per.items(), key=lambda x: -x[1]):
        print(f"  {c:7.1f}  {t}")
    print("slowest steps:")
    for c, w, out in sorted(steps, reverse=True)[:15]:
        print(f"  {c:7.1f} CPU s {w:7.1f} s wall  {out}")
    loads = [float(line.split()[1]) for line in open(os.path.join(d, "load.txt")) if len(line.split()) >= 2]
    if loads:
        print(f"load average (1 min) while building: {min(loads):.1f}..{max(loads):.1f}, "
              f"mean {sum(loads) / len(loads):.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
