#!/usr/bin/python3
"""A README that shows a source file shows it as it is.  Between

    <!-- snippet: PATH -->
    ```LANG
    ...
    ```
    <!-- end of snippet -->

the fenced block must equal the file PATH (relative to the source tree).
Fails naming the README and the file; --update rewrites the blocks.

usage: readme_snippets.py SOURCE_DIR [--update]
"""
import os
import re
import subprocess
import sys

src = sys.argv[1]
update = "--update" in sys.argv[2:]
block = re.compile(r"<!-- snippet: (\S+) -->\n```(\w*)\n(.*?)```\n<!-- end of snippet -->", re.S)
files = subprocess.run(["git", "-C", src, "ls-files", "*.md"], capture_output=True, text=True).stdout.split()
if not files:  # not a git checkout
    files = [os.path.relpath(os.path.join(r, f), src) for r, _, fs in os.walk(src) for f in fs
             if f.endswith(".md") and "/build" not in r]
failures, checked = [], 0
for md in files:
    path = os.path.join(src, md)
    text = open(path).read()
    new = text
    for m in reversed(list(block.finditer(text))):
        target = os.path.join(src, m.group(1))
        if not os.path.exists(target):
            failures.append(f"{md}: shows {m.group(1)}, which does not exist")
            continue
        want = open(target).read()
        checked += 1
        if m.group(3) != want:
            if update:
                new = new[:m.start(3)] + want + new[m.end(3):]
            else:
                failures.append(f"{md}: its copy of {m.group(1)} differs from the file; run "
                                f"tests/integration/readme_snippets.py . --update")
    if update and new != text:
        open(path, "w").write(new)
        print(f"updated {md}")
for f in failures:
    print("FAIL: " + f)
print(f"{checked} snippet(s) checked")
sys.exit(1 if failures or checked == 0 else 0)
