#!/usr/bin/python3
"""The include graph goes one way: the harness (interfaces in
harness/include/tracebench/) includes neither tracers/ nor bench/; nothing
outside bench/ includes a bench/ header.  Workloads in bench/ may include a
tracer's probe-site header (an LTTng-UST provider, a D-VM site): the
instrumentation is part of the workload.  The companion module (kmod/)
includes nothing of tracers/ but the D-VM's freestanding DIF core
(tracers/dvm/core/), compiled into it from its one source.

usage: layering.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
rules = [("harness", ("tracers/", "bench/")), ("tracers", ("bench/",)), ("tests", ("bench/",)),
         ("kmod", ("bench/", "tracers/"))]
allowed = {"kmod": ("tracers/dvm/core/",)}
bad = []
for top, forbidden in rules:
    for root, _, files in os.walk(os.path.join(src, top)):
        for f in files:
            if not f.endswith((".h", ".cc", ".c", ".hpp", ".cpp")):
                continue
            path = os.path.join(root, f)
            for m in inc.finditer(open(path, errors="replace").read()):
                if m.group(1).startswith(forbidden) and not m.group(1).startswith(allowed.get(top, ())):
                    bad.append(f"{os.path.relpath(path, src)} includes {m.group(1)}")
for b in bad:
    print("FAIL: " + b)
print(f"{len(bad)} include(s) against the layering")
sys.exit(1 if bad else 0)
