#!/usr/bin/python3
"""The README's commands, as printed, in one session, as a user copies them.

Every ```sh block of README.md is named in BLOCKS below by its first line and
handled one of three ways; a block the table does not name, or an entry no
block matches, fails the test (a new example is tested from the day it is
written):
  run        as printed, in one working directory (`tracebench` and
             `build/bench/tracebench` are this build's binary), with the
             exit status and the verdict the README shows;
  plan       a measuring command whose run takes minutes: its arguments
             checked with --plan (refused input fails, as it would for a user);
  elsewhere  what another test runs (the set-up, the VM lab's kernels).
After the session `history add results/*/` has added every run under results/
(ab's pairs too), and the injected runs make series of their own.

usage: readme_commands.py TRACEBENCH SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, failures

tb, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(src, "scripts"))
import readme_examples  # noqa: E402  (the script that makes the README's outputs again)
work = tempfile.mkdtemp(prefix="tracebench-readme-")
session = {}  # the user's environment in `work` (main)


def sh_blocks(readme):
    """Each ```sh block's commands, continuation lines joined."""
    blocks = re.findall(r"^```sh\n(.*?)^```", open(readme).read(), re.S | re.M)
    return [re.sub(r"\\\n\s*", "", b).strip() for b in blocks]


def with_plan(line):
    """The command with --plan before Google Benchmark's `--` or its comment."""
    cmd, _, _ = line.partition("#")
    cmd = cmd.rstrip()
    if " -- " in cmd:
        head, _, tail = cmd.partition(" -- ")
        return f"{head} --plan -- {tail}"
    return cmd + " --plan"


def shell(script, timeout=600):
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=session["env"],
                          capture_output=True, text=True, timeout=timeout)


def run_ids():
    return sorted(d for d in os.listdir(os.path.join(work, "results")) if not d.startswith("."))


def expect(name, script, status=0):
    r = shell(script)
    check(f"{name}: exit {status}", r.returncode == status, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def shown_as_printed(name, stdout):
    """The README's output block of example `name` (scripts/readme_examples.py)
    shows the table this command prints here: the same header, the same
    benchmarks in the same order (its figures are another machine's)."""
    ex = next(e for e in readme_examples.EXAMPLES if e.name == name)
    readme = open(os.path.join(src, "README.md")).read()
    start, end = readme_examples.output_block(readme, ex.anchor)
    shown, got = readme[start:end].splitlines(), ex.excerpt(stdout)
    header = lambda lines: [ln.split() for ln in lines if ln.startswith("benchmark ")]
    rows = lambda lines: [ln.split()[0] for ln in lines if readme_examples.ROW.match(ln)]
    check(f"{name}: the README shows the header printed here", header(shown) == header(got), f"{shown}\n{got}")
    check(f"{name}: the README shows the benchmarks printed here", rows(shown) == rows(got), f"{shown}\n{got}")


# --- how each block is handled: functions of the block's text ----------------

def main_job(block):
    # The set-up is CI's first step; the quick suite of every tracer, planned.
    expect("the main job's run --quick", with_plan(block.split("&&")[1].strip()))


def compare_tracers(block):
    r = expect("compare tracers", block)
    shown_as_printed("compare-tracers", r.stdout)
    runs = run_ids()
    check("compare tracers: one run in results/", len(runs) == 1, runs)
    res = json.load(open(os.path.join(work, "results", runs[0], "result.json")))
    traced = [b for b in res["benchmarks"] if not b["name"].startswith("none/")]
    check("compare tracers: every traced benchmark verified",
          traced and all(b["events"]["verification"] == "passed" for b in traced),
          [(b["name"], b["events"]["verification"]) for b in traced])


def report(block):
    expect("report", block.replace("<run id>", run_ids()[0]))
    check("report: index.html and report.md written",
          all(os.path.exists(os.path.join(work, "report", f)) for f in ("index.html", "report.md")))


def other_questions(block):
    for line in block.splitlines():
        quick = "--quick" in line or line.startswith("tracebench list")
        expect(f"other questions: {line.split('#')[0].strip()}", line if quick else with_plan(line))


def regression(block):
    r = shell(block)
    # compare's table comes after the runs' summaries: its row is the last.
    row = ([ln for ln in r.stdout.splitlines() if ln.startswith("none/getpid/")] or [""])[-1]
    # Or inconclusive (exit 0) where compare says three runs a side could not
    # show 20% here: its MDE at 80% power above it, on a host whose speed
    # jumps between runs.  Never "same" or "improvement".
    mde = row.split()[-2] if len(row.split()) > 2 else ""
    blind = row.endswith("inconclusive") and mde.endswith("%") and float(mde[:-1]) > 20
    status = 0 if blind else 1
    check(f"regression: compare --fail-on-regression: exit {status}", r.returncode == status,
          f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    check("regression: the planted 20% is called a regression" + (f" (or inconclusive, MDE80 {mde})" if blind else ""),
          row.endswith("regression") or blind, r.stdout)
    shown_as_printed("regression", r.stdout)


def ab(block):
    # As printed, with a budget of 3 pairs for the test's time (the README's
    # session spends 30); its verdicts are integration.ab's.
    before = set(run_ids())
    r = expect("ab", readme_examples.ab_budget(block, 3))
    shown_as_printed("ab", r.stdout)
    check("ab: its session under results/", any(d.startswith("ab-") for d in set(run_ids()) - before))


def history(block):
    lines = block.splitlines()
    add = expect("history add results/*/", lines[0])
    found = sum("result.json" in f for _, _, f in os.walk(os.path.join(work, "results")))
    check(f"history add: every run under results/ ({found})", f"history: {found} run(s) added" in add.stdout,
          add.stdout)
    series = json.loads(shell("tracebench history list --json").stdout or "[]")
    configs = {s["configuration"] for s in series if s["benchmark"].startswith("none/getpid/")}
    injected = {c for c in configs if "inject_percent=20" in c}
    check("history: injected and plain none/getpid runs in series of their own",
          injected and configs - injected, configs)
    r = shell(lines[1])
    check(f"history changes --fail-on-change: exit 0 or 1 (here {r.returncode})", r.returncode in (0, 1),
          r.stdout + r.stderr)
    expect("report --history", lines[2])


def model_suite(block):
    expect("model suite (planned)", with_plan(block))


def model_steps(block):
    shutil.copy(os.path.join(src, "results", "examples", "scenario.json"), work)
    expect("model step by step", block)
    check("model: model.json written", os.path.exists(os.path.join(work, "model.json")))


def elsewhere(reason):
    return lambda block: print(f"ok: not run here: {block.splitlines()[0]} ({reason})")


BLOCKS = [
    (r"bash scripts/setup\.sh && build/bench/tracebench run --quick$", main_job),
    (r"bash scripts/setup\.sh --tests && ctest ", elsewhere(".ci/run runs it verbatim; tests.tiers checks that")),
    (r"tracebench run --quick -t none -t ftrace -t ebpf -t perf -w getpid$", compare_tracers),
    (r"tracebench report results/<run id>", report),
    (r"tracebench run --quick -t ebpf -a ringbuf -w write_null", other_questions),
    (r"for i in 1 2 3; do", regression),
    (r"tracebench ab \. ", ab),
    (r"tracebench history add results/\*/$", history),
    (r"tracebench vm -- ", elsewhere("a guest under qemu: the vmlab tier's tests")),
    (r"scripts/vm/compare-kernels\.sh --install", elsewhere("Debian's kernels downloaded: vm.compare_kernels, "
                                                            "vm.bisect_kernels run these scripts on the lab's kernel")),
    (r"tracebench model suite --quick", model_suite),
    (r"tracebench run -t ftrace -w marker -a payload", model_steps),
]


def main():
    session["env"] = readme_examples.session_env(tb, work)  # `tracebench`; the README's build/bench/tracebench too
    os.makedirs(os.path.join(work, "build", "bench"))
    os.symlink(tb, os.path.join(work, "build", "bench", "tracebench"))
    os.makedirs(os.path.join(work, "results"))
    blocks = sh_blocks(os.path.join(src, "README.md"))
    used = set()
    for block in blocks:
        hits = [i for i, (pattern, _) in enumerate(BLOCKS) if re.match(pattern, block.splitlines()[0])]
        if len(hits) != 1:
            check(f"README block handled once: {block.splitlines()[0]}", False, f"{len(hits)} entries match")
            continue
        used.add(hits[0])
        BLOCKS[hits[0]][1](block)
    stale = [BLOCKS[i][0] for i in range(len(BLOCKS)) if i not in used]
    check("every entry of the table matches a README block", not stale, stale)


try:
    main()
finally:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
