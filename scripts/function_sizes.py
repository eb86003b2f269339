#!/usr/bin/env python3
"""The functions and files of C and C++ sources, longest first, by brace matching.

usage: function_sizes.py [--limit N] [--file-limit N] PATH...   (folders: their .cc, .h and .c files)

Prints `lines path:line name` for every function body longer than --limit
lines (default 80, the size guide tests/harness/function_sizes_test.py holds), then
`lines path file` for every file longer than --file-limit (default 600).
Comments, string and character literals (raw strings too) are blanked
before braces are matched, so a brace in a message or a comment does not
count.  A function is a brace block at namespace or class level whose head
(the text since the previous `;`, `{` or `}`) holds a parameter list and
is not an initializer (`= {`) or a type (`struct X {`); lambdas and blocks
inside a function count as its lines.  Its lines run from its head's first
line to its closing brace.
"""
import argparse
import os
import re
import sys

RAW = re.compile(r'R"([^()\\ ]{0,16})\(')


def blank(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and RAW.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW.match(text, i)
            end = ")" + m.group(1) + '"'
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(c)  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def classify(head):
    # Preprocessor lines between the previous block and this one are not its head.
    h = " ".join(" ".join(l for l in head.splitlines() if not l.lstrip().startswith("#")).split())
    # `extern "C" {` (the literal blanked) opens a scope; `extern "C" T* f(...) {` is a function.
    if re.search(r"\bnamespace\b", h) or (re.match(r"^extern\b", h) and "(" not in h):
        return "scope", ""
    if "(" not in h or re.search(r"=\s*$", h) or re.match(r"^(return|else|do|try)\b", h):
        if re.search(r"\b(class|struct|union|enum)\b", h):
            return "scope", ""
        return "other", ""
    if re.search(r"\b(class|struct|union|enum)\b[^(]*$", h.split("(")[0]) and ")" not in h.split("(")[0]:
        if re.search(r"\b(class|struct|union)\s+\w+\s*(final)?\s*(:|$)", h):
            return "scope", ""
    before = h.split("(")[0]
    if "=" in before:
        return "other", ""  # an initializer: `auto x = f(...) {`, `T kTable[] = {`
    m = re.search(r"([~\w:]+(?:operator\s*\S+)?)\s*$", before)
    name = m.group(1) if m else before.strip()
    if name in ("if", "for", "while", "switch", "catch", "return"):
        return "other", ""
    return "func", name


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = blank(text)
    stack = []  # (kind, name, start line)
    head_start = 0
    line = 1
    found = []
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{" or c == "}" or c == ";":
            in_func = any(k == "func" for k, _, _ in stack)
            if c == "{":
                if in_func:
                    stack.append(("other", "", line))
                else:
                    head = code[head_start:i]
                    kind, name = classify(head)
                    # the head's first line with code on it
                    lead = len(head) - len(head.lstrip())
                    start = line - head[lead:].count("\n")
                    stack.append((kind, name, start))
                    # a constructor's member initializers braced: `a_{x}`
                    # inside a head are not bodies; rare enough to ignore.
            elif c == "}":
                if stack:
                    kind, name, start = stack.pop()
                    if kind == "func" and not any(k == "func" for k, _, _ in stack):
                        found.append((line - start + 1, start, name))
            head_start = i + 1
    return found, text.count("\n")


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith((".cc", ".h", ".c")):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--file-limit", type=int, default=600)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    long_funcs, long_files = [], []
    for path in sources(a.paths):
        found, nlines = functions(path)
        long_funcs += [(n, path, start, name) for n, start, name in found if n > a.limit]
        if nlines > a.file_limit:
            long_files.append((nlines, path))
    for n, path, start, name in sorted(long_funcs, reverse=True):
        print(f"{n} {path}:{start} {name}")
    for n, path in sorted(long_files, reverse=True):
        print(f"{n} {path} file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
