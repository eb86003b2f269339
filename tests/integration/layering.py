#!/usr/bin/python3
"""The include graph goes one way: the harness (interfaces in
harness/include/tracebench/) includes neither tracers/ nor bench/; nothing
outside bench/ includes a bench/ header.  Workloads in bench/ may include a
tracer's probe-site header (an LTTng-UST provider, a D-VM site): the
instrumentation is part of the workload.  The companion module (kmod/), the
lowest floor, includes nothing of tracers/ or bench/: the D-VM's freestanding
DIF core, which both the module and user space build, lives beside the
module's ABI headers (kmod/dvm/core/).  The cross-check (bench/crosscheck/)
sits above the harness and names tracers (its cases are about them) but reaches
them only through `run`'s machinery: of tracers/ its reference loops include
the LTTng-UST provider header alone (the same events), and nothing of bench/.

Knowledge runs the same way: the harness never names a tracer.  What it
needs of one (its cost-model scenarios, its wakeup options, ...) comes
through the Tracer interface.  Outside comments, no string literal in
harness/ is a tracer's name ("ebpf") or begins with one as an option key
("ebpf.wakeup=..."); the names are those TRACEBENCH_REGISTER_TRACER registers
in tracers/.  The baseline "none" is the one exception: it is the results
schema's name for the untraced rows (kBaselineTracer in tracer.h) and a word
of other fields ("payload_source": "none").  Help text that names a tracer as
an example for the user (like the README's) does not begin with the name and
is not held.

usage: layering.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]
SOURCES = (".h", ".cc", ".c", ".hpp", ".cpp")


def sources(top):
    for root, _, files in os.walk(os.path.join(src, top)):
        for f in sorted(files):
            if f.endswith(SOURCES):
                yield os.path.join(root, f)


inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
rules = [("harness", ("tracers/", "bench/")), ("tracers", ("bench/",)), ("tests", ("bench/",)),
         ("kmod", ("bench/", "tracers/")), ("bench/crosscheck", ("bench/", "tracers/"))]
allowed = {"bench/crosscheck": ("tracers/lttng/tracebench_tp.h",)}
bad = []
for top, forbidden in rules:
    for path in sources(top):
        for m in inc.finditer(open(path, errors="replace").read()):
            if m.group(1).startswith(forbidden) and m.group(1) not in allowed.get(top, ()):
                bad.append(f"{os.path.relpath(path, src)} includes {m.group(1)}")

register = re.compile(r"TRACEBENCH_REGISTER_TRACER\(\s*(\w+)")
tracers = set()
for path in sources("tracers"):
    tracers.update(register.findall(open(path, errors="replace").read()))
tracers.discard("none")
# Comments, string and character literals, in the order they appear (a //
# inside a string is no comment, a quote inside a comment no string).
token = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\((.*?)\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
named = re.compile(r'^"(' + "|".join(sorted(map(re.escape, tracers), key=len, reverse=True)) + r')(?:"|\.\w)')
for path in sources("harness"):
    text = open(path, errors="replace").read()
    for m in token.finditer(text):
        t = m.group(0)
        if t.startswith(("//", "/*")):
            continue
        n = named.match(t)
        if n:
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{os.path.relpath(path, src)}:{line} names the tracer '{n.group(1)}': {t[:60]}")

for b in bad:
    print("FAIL: " + b)
print(f"{len(bad)} include(s) against the layering or tracer name(s) in harness/ "
      f"(tracers: {', '.join(sorted(tracers))})")
sys.exit(1 if bad else 0)
