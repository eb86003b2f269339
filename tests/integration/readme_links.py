#!/usr/bin/python3
"""The READMEs point at what exists, inside the repository, and the top-level
README stays a manual.  In every tracked Markdown file:

  - a link or image `[text](PATH)` (not a URL or an #anchor) names a file or
    folder that exists, relative to the Markdown file, inside the source tree;
  - a path in backquotes that climbs (`../x/y`) does too: such a path is a
    reference to another part of the tree, and one that leaves it is not
    something a reader of the repository has.

And README.md itself: at most MAX_LINES lines, the two set-up commands
verbatim (the quick run's, and the tests' that .ci/run calls), and no date (dated measurements of one host belong under
results/, with the host and date).

usage: readme_links.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

MAX_LINES = 250
QUICK_START = "bash scripts/setup.sh && build/bench/tracebench run --quick"
src = os.path.realpath(sys.argv[1])
link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
climbing = re.compile(r"`((?:\.\./)+[^`\s]*)`")
fence = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
date = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")

files = subprocess.run(["git", "-C", src, "ls-files", "*.md"], capture_output=True, text=True).stdout.split()
if not files:  # not a git checkout
    files = [os.path.relpath(os.path.join(r, f), src) for r, _, fs in os.walk(src) for f in fs
             if f.endswith(".md") and "/build" not in r]
failures, checked = [], 0

def check_target(md, target, how):
    global checked
    path = target.split("#", 1)[0]
    if not path:
        return
    resolved = os.path.realpath(os.path.join(src, os.path.dirname(md), path))
    checked += 1
    if resolved != src and not resolved.startswith(src + os.sep):
        failures.append(f"{md}: {how} {target} leaves the repository")
    elif not os.path.exists(resolved):
        failures.append(f"{md}: {how} {target}, which does not exist")

for md in files:
    text = open(os.path.join(src, md)).read()
    prose = fence.sub("", text)  # code blocks show commands, not links
    for m in link.finditer(prose):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same file
        check_target(md, target, "links to")
    for m in climbing.finditer(prose):
        check_target(md, m.group(1), "names")

readme = open(os.path.join(src, "README.md")).read()
lines = readme.count("\n")
if lines > MAX_LINES:
    failures.append(f"README.md: {lines} lines, more than {MAX_LINES}: move the depth beside the code it "
                    f"describes (a folder's README) and link it")
ci = open(os.path.join(src, ".ci", "run")).read().strip().splitlines()[-1]
for command, who in ((QUICK_START, "the first command a user runs"), (ci, "the command .ci/run calls")):
    if command not in readme.splitlines():
        failures.append(f"README.md: no line reads exactly `{command}`, {who}")
for m in date.finditer(readme):
    failures.append(f"README.md: the date {m.group(0)}: a figure of one host on one day goes under results/ "
                    f"with its host and date")

for f in failures:
    print("FAIL: " + f)
print(f"{checked} link(s) checked in {len(files)} file(s); README.md has {lines} lines")
sys.exit(1 if failures or checked == 0 else 0)
