#!/usr/bin/env python3
"""scripts/vm/upstream-table.py on crafted compare-kernels.sh outdirs.

A 6.1 -> 6.12 comparison counted in instructions: the uprobe row is put
beside 6.12's RCU change only, the uretprobe row beside 6.11's syscall and
6.12's, getpid is a control, 6.14's and 6.18's changes (outside the range)
appear nowhere; a comparison of getpid alone lists 6.11 and 6.12 as not
measured, unless another comparison of the same kernels measured them; bad input (not an outdir, a row in no run, an existing --out)
exits 2 and writes nothing.
"""
import json
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(SRC, "scripts", "vm", "upstream-table.py")


def write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def bench(workload, options, attach):
    name = f"ebpf/{workload}/count/payload:0/threads:1" + ("/attach" if options else "")
    return {"name": name, "tracer": "ebpf", "workload": workload, "options": options,
            "tracer_details": {"attach": attach}}


def row(b, a, bm, ratio, verdict):
    return {"benchmark": b["name"], "what": "overhead", "a_median_ns": a, "b_median_ns": bm, "ratio": ratio,
            "verdict": verdict, "mde_80": 0.0}


def outdir(root, benches_rows):
    for side, release in (("A", "6.1.0-56-amd64"), ("B", "6.12.107+deb12-amd64")):
        write(f"{root}/{side}/round1/vm.json", {"kernel_release": release, "clock": "icount", "accel": "tcg"})
        write(f"{root}/{side}/runs/r1/result.json",
              {"context": {"command_line": ["tracebench", "run", "-t", "ebpf"]},
               "benchmarks": [b for b, _ in benches_rows]})
    write(f"{root}/compare.json", {"rows": [r for _, r in benches_rows]})


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def line_of(text, label):
    lines = [x for x in text.splitlines() if f"| {label}," in x]
    assert len(lines) == 1, (label, text)
    return lines[0]


def main():
    tmp = tempfile.mkdtemp(prefix="tb-upstream-table-")
    up = bench("site_nop", {}, "uprobe")
    uret = bench("site_nop", {"attach": "uretprobe"}, "uretprobe")
    ctl = bench("getpid", {}, "tracepoint")
    outdir(f"{tmp}/both", [(up, row(up, 1263, 1164, 0.922, "improvement")),
                           (uret, row(uret, 2480, 2216, 0.894, "improvement")),
                           (ctl, row(ctl, 420, 464, 1.105, "regression"))])
    r = run(f"{tmp}/both")
    assert r.returncode == 0, r.stderr
    t = r.stdout
    u = line_of(t, "ebpf/site_nop")
    assert "6.12: uprobes' hot path" in u and "6.11" not in u and "6.14" not in u, u
    assert "| 1263 instr | 1164 instr | 0.922 | improvement (MDE80 0.0%) |" in u and "icount" in u, u
    ur = line_of(t, "ebpf/site_nop (attach=uretprobe)")
    assert "6.11: x86 uretprobe through a syscall" in ur and "6.12: uprobes' hot path" in ur, ur
    c = line_of(t, "ebpf/getpid")
    assert c.startswith("| none listed (control) | - |") and "regression" in c, c
    assert "6.14" not in t and "6.18" not in t and "no row here measured" not in t, t

    outdir(f"{tmp}/ctl", [(ctl, row(ctl, 420, 464, 1.105, "regression"))])
    r = run(f"{tmp}/ctl")
    assert r.returncode == 0, r.stderr
    missing = r.stdout.split("no row here measured:")[1]
    assert "- 6.11: x86 uretprobe" in missing and "- 6.12: uprobes' hot path" in missing, r.stdout
    assert "6.14" not in missing, missing
    # Measured by another comparison of the same kernels: not listed.
    r = run(f"{tmp}/ctl", f"{tmp}/both")
    assert r.returncode == 0 and "no row here measured" not in r.stdout, r.stdout

    # Bad input: exit 2, a reason, nothing written.
    out = f"{tmp}/table.md"
    os.makedirs(f"{tmp}/empty")
    r = run("--out", out, f"{tmp}/empty")
    assert r.returncode == 2 and "compare.json" in r.stderr and not os.path.exists(out), (r.returncode, r.stderr)
    ghost = f"{tmp}/ghost"  # a compared row that no run has
    outdir(ghost, [(ctl, row(ctl, 420, 464, 1.105, "regression"))])
    write(f"{ghost}/compare.json", {"rows": [row(ctl, 420, 464, 1.105, "regression"), row(up, 1, 1, 1.0, "same")]})
    r = run("--out", out, ghost)
    assert r.returncode == 2 and "in no run" in r.stderr and not os.path.exists(out), (r.returncode, r.stderr)
    r = run("--out", out, f"{tmp}/both")
    assert r.returncode == 0 and os.path.getsize(out) > 0, r.stderr
    before = open(out).read()
    r = run("--out", out, f"{tmp}/ctl")
    assert r.returncode == 2 and "not overwritten" in r.stderr and open(out).read() == before, r.stderr
    leftovers = [n for n in os.listdir(tmp) if n.startswith(".upstream-table.")]
    assert not leftovers, leftovers
    subprocess.run(["rm", "-rf", tmp], check=True)
    print("ok: upstream-table.py")


if __name__ == "__main__":
    main()
