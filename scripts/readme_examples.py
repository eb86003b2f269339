#!/usr/bin/python3
"""The README's example outputs, made again from real runs on this machine.

Runs, as printed and in a working directory of their own, the README's
examples whose output the README shows (the self-test, the four tracers on
getpid, the planted regression and its `compare`, `tracebench ab`), keeps of
each output the lines the README shows (its table), and writes:

  OUT/<example>.txt    the whole output of each example's commands
  OUT/<example>.excerpt the lines the README shows
  OUT/README.md        the machine, the date, each command and its exit status

With --update README.md, each example's output block in that README (the
fenced block after the example's anchor) is replaced by its excerpt; the
prose that names the machine is the author's to change.  An example that
does not exit as the README says it does is an error, and nothing is
updated.

usage: readme_examples.py TRACEBENCH --out DIR [--update README.md] [--ab-pairs N]
  --ab-pairs N  give `tracebench ab` a budget of N pairs (the README's
                session spends its default, 30, about two minutes)
"""
import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

# A benchmark row of the suite's tables: tracer/workload/action/payload:N/threads:N.
ROW = re.compile(r"^\S+/\S+/\S+/payload:\d+/threads:\d+\s")


def last_table(text, lead=None):
    """The last table of `text`: its header (the line starting `benchmark`
    before its rows) and its rows, preceded by the last line before the
    header that `lead` (a regex) matches, when one is given."""
    lines = text.splitlines()
    rows_end = max((i for i, ln in enumerate(lines) if ROW.match(ln)), default=-1)
    if rows_end < 0:
        return []
    start = rows_end
    while start > 0 and (ROW.match(lines[start - 1]) or lines[start - 1].startswith("  ")):
        start -= 1
    header = start - 1
    if header < 0 or not lines[header].startswith("benchmark "):
        return []
    table = [lines[header]] + [ln for ln in lines[start:rows_end + 1] if ROW.match(ln)]
    if lead is not None:
        before = [ln for ln in lines[:header] if lead.match(ln)]
        table = before[-1:] + table
    return table


def selftest_lines(text):
    """The self-test's 2 us user-site and 200 ns syscall cases and its verdict."""
    keep = re.compile(r"^(user site N = 2000 ns|syscall   N =  200 ns|selftest: )")
    return [ln for ln in text.splitlines() if keep.match(ln)]


# An example: its name, the README text its output block follows, its
# commands as printed, the exit status the README shows, what it shows of
# the output.
Example = collections.namedtuple("Example", "name anchor script status excerpt")


EXAMPLES = [
    Example("selftest", "(kernel: `tracebench vm -- selftest`):", "tracebench selftest", 0, selftest_lines),
    Example("compare-tracers", "tracebench run --quick -t none -t ftrace -t ebpf -t perf -w getpid\n",
            "tracebench run --quick -t none -t ftrace -t ebpf -t perf -w getpid", 0, last_table),
    Example("regression", "tracebench compare runs/A runs/B --fail-on-regression",
            "for i in 1 2 3; do\n"
            "  tracebench run --quick -t none -t ebpf -w getpid --out runs/A\n"
            "  tracebench run --quick -t none -t ebpf -w getpid -o none.inject_percent=20 --out runs/B\n"
            "done\n"
            "tracebench compare runs/A runs/B --fail-on-regression", 1, last_table),
    Example("ab", "tracebench ab . \":-o none.inject_percent=20\" -- --quick -t none -t ebpf -w getpid",
            "tracebench ab . \":-o none.inject_percent=20\" -- --quick -t none -t ebpf -w getpid", 0,
            lambda text: last_table(text, lead=re.compile(r"^\d+ pairs in "))),
]


def fenced_blocks(readme):
    """(language, body start, body end) of every fenced block, in order."""
    blocks, opened, pos = [], None, 0
    for line in readme.splitlines(keepends=True):
        fence = line.rstrip("\n")
        if opened is None and fence.startswith("```"):
            opened = (fence[3:], pos + len(line))
        elif opened is not None and fence == "```":
            blocks.append((opened[0], opened[1], pos))
            opened = None
        pos += len(line)
    return blocks


def output_block(readme, anchor):
    """(start, end) of the body of the first bare ``` block that opens after `anchor`."""
    at = readme.find(anchor)
    if at < 0:
        raise ValueError(f"the README has no {anchor!r}")
    for lang, start, end in fenced_blocks(readme):
        if lang == "" and start > at:
            return start, end
    raise ValueError(f"no output block after {anchor!r}")


def replace_output(readme, anchor, lines):
    start, end = output_block(readme, anchor)
    return readme[:start] + "".join(ln + "\n" for ln in lines) + readme[end:]


def ab_budget(script, pairs):
    return script.replace("tracebench ab ", f"tracebench ab --max-pairs {pairs} ", 1) if pairs else script


def session_env(tb, work):
    """The environment of a user's session in `work`: `tracebench` on PATH
    is `tb` (a link in work/bin)."""
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    os.symlink(os.path.abspath(tb), os.path.join(work, "bin", "tracebench"))
    return dict(os.environ, PATH=os.path.join(work, "bin") + ":" + os.environ["PATH"])


def run_examples(tb, out, ab_pairs):
    """Runs every example in a fresh directory; returns {name: (script, status, stdout)}."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="tracebench-readme-examples-") as work:
        env = session_env(tb, work)
        for ex in EXAMPLES:
            script = ab_budget(ex.script, ab_pairs) if ex.name == "ab" else ex.script
            print(f"readme-examples: {ex.name}: {script.splitlines()[-1]}", file=sys.stderr)
            p = subprocess.run(["bash", "-o", "pipefail", "-c", script], cwd=work, env=env, capture_output=True,
                               text=True)
            results[ex.name] = (script, p.returncode, p.stdout)
            with open(os.path.join(out, ex.name + ".txt"), "w") as f:
                f.write(p.stdout)
    return results


def write_provenance(tb, out, results):
    """OUT/README.md: the machine as `tracebench env` names it, the date, each example's commands and exit."""
    m = json.loads(subprocess.run([tb, "env", "--json"], capture_output=True, text=True, check=True).stdout)
    lines = [f"# The README's example outputs, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             "", f"Machine: {m['host']}, {m['cpu_model']}, {m['cpus']} CPUs, kernel {m['kernel_release']}.",
             "Made by `scripts/readme_examples.py`; each example's whole output is in `<example>.txt`, "
             "the lines the README shows in `<example>.excerpt`.", ""]
    for name, (script, status, _) in results.items():
        lines += [f"## {name} (exit {status})", "", "```sh", script, "```", ""]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tracebench")
    ap.add_argument("--out", required=True)
    ap.add_argument("--update", metavar="README")
    ap.add_argument("--ab-pairs", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    results = run_examples(a.tracebench, a.out, a.ab_pairs)
    write_provenance(a.tracebench, a.out, results)
    bad = []
    for ex in EXAMPLES:
        _, status, stdout = results[ex.name]
        lines = ex.excerpt(stdout)
        with open(os.path.join(a.out, ex.name + ".excerpt"), "w") as f:
            f.write("".join(ln + "\n" for ln in lines))
        if status != ex.status or not lines:
            bad.append(f"{ex.name}: exit {status} (the README says {ex.status}), {len(lines)} line(s) to show")
    if bad:
        sys.exit("readme-examples: " + "; ".join(bad) + f"; nothing updated (outputs in {a.out})")
    if a.update:
        readme = open(a.update).read()
        for ex in EXAMPLES:
            readme = replace_output(readme, ex.anchor, ex.excerpt(results[ex.name][2]))
        with open(a.update + ".tmp", "w") as f:
            f.write(readme)
        os.replace(a.update + ".tmp", a.update)
        print(f"readme-examples: {a.update} updated; its sentences naming the machine are yours to check",
              file=sys.stderr)
    print(f"readme-examples: outputs in {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
