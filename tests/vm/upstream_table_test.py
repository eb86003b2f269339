#!/usr/bin/env python3
"""scripts/vm/upstream-table.py on crafted compare-kernels.sh outdirs.

A 6.1 -> 6.12 comparison counted in instructions: the uprobe row is put
beside 6.12's RCU change only, the uretprobe row beside 6.11's syscall and
6.12's, getpid is a control, 6.14's and 6.18's changes (outside the range)
appear nowhere; a comparison of getpid alone lists 6.11 and 6.12 as not
measured, unless another comparison of the same kernels measured them; bad input (not an outdir, a row in no run, an existing --out)
exits 2 and writes nothing.  With --host runs on 6.18: 6.18's nop5 change
(read over site_nop on each kernel) gets a row with each kernel's ratio and
the host's, lower on the host when its interval lies below the lab's newest
kernel's, "cannot tell" when they overlap, listed as not measured when the
host ran no site_nop beside it; a host run on 6.12 shows no such section;
host runs of two kernels, a guest's run, or a directory without runs, exit 2.
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


def bench(workload, options, attach, overhead=None):
    name = f"ebpf/{workload}/count/payload:0/threads:1" + ("/attach" if options else "")
    b = {"name": name, "tracer": "ebpf", "workload": workload, "options": options, "action": "count",
         "payload_bytes": 0, "threads": 1, "tracer_details": {"attach": attach}}
    if overhead:
        median, low, high = overhead
        b["overhead_cycles_per_event"] = {"median": median, "ci_low": low, "ci_high": high}
    return b


def host_run(root, name, release, benches):
    write(f"{root}/{name}/result.json",
          {"context": {"command_line": ["tracebench", "run", "-w", "site_nop5"], "kernel": {"release": release},
                       "hypervisor": "KVMKVMKVM"}, "benchmarks": benches})


def row(b, a, bm, ratio, verdict):
    return {"benchmark": b["name"], "what": "overhead", "a_median_ns": a, "b_median_ns": bm, "ratio": ratio,
            "verdict": verdict, "mde_80": 0.0}


def outdir(root, benches_rows, b_benches=None):
    """A compare-kernels outdir; B's runs hold b_benches when given (A's the rows' benchmarks)."""
    for side, release in (("A", "6.1.0-56-amd64"), ("B", "6.12.107+deb12-amd64")):
        write(f"{root}/{side}/round1/vm.json", {"kernel_release": release, "clock": "icount", "accel": "tcg"})
        benches = b_benches if side == "B" and b_benches else [b for b, _ in benches_rows]
        write(f"{root}/{side}/runs/r1/result.json",
              {"context": {"command_line": ["tracebench", "run", "-t", "ebpf"]}, "benchmarks": benches})
    write(f"{root}/compare.json", {"rows": [r for _, r in benches_rows]})


def nop5_line(text):
    lines = [x for x in text.splitlines() if "| ebpf/site_nop5 over site_nop |" in x]
    assert len(lines) == 1, text
    return lines[0]


def check_host(tmp):
    """6.18's nop5 change beside a 6.1 -> 6.12 comparison, from host runs on 6.18."""
    nop_a, nop5_a = bench("site_nop", {}, "uprobe", (1263, 1263, 1263)), bench("site_nop5", {}, "uprobe", (7600, 7600, 7600))
    nop_b, nop5_b = bench("site_nop", {}, "uprobe", (1164, 1150, 1180)), bench("site_nop5", {}, "uprobe", (7000, 6900, 7100))
    outdir(f"{tmp}/nop5", [(nop_a, row(nop_a, 1263, 1164, 0.922, "improvement")),
                           (nop5_a, row(nop5_a, 7600, 7000, 0.921, "improvement"))], [nop_b, nop5_b])
    host_run(f"{tmp}/host", "r1", "6.18.44-fc", [bench("site_nop", {}, "uprobe", (1000, 980, 1020)),
                                                  bench("site_nop5", {}, "uprobe", (250, 245, 255))])
    r = run("--host", f"{tmp}/host", f"{tmp}/nop5")
    assert r.returncode == 0, r.stderr
    section = r.stdout.split("## Changes the host's kernel has")[1]
    line = nop5_line(section)
    # 6.1: 7600/1263; 6.12: 7000/1164 in [6900/1180, 7100/1150]; the host 250/1000 in [245/1020, 255/980].
    assert line.startswith("| 6.18: optimized uprobes on a 5-byte nop"), line
    assert "| 6.017 [6.017, 6.017] | 6.014 [5.847, 6.174] | 0.250 [0.240, 0.260] | lower on the host |" in line, line
    assert "| 6.1.0-56-amd64 (lab) | 6.12.107+deb12-amd64 (lab) | 6.18.44-fc (host) |" in section, section
    assert "not measure" not in section, section
    # The host's interval (5.743 to 6.010) reaching into the newest lab kernel's, below its median: cannot tell.
    host_run(f"{tmp}/host_wide", "r1", "6.18.44-fc", [bench("site_nop", {}, "uprobe", (1000, 990, 1010)),
                                                       bench("site_nop5", {}, "uprobe", (5900, 5800, 5950))])
    r = run("--host", f"{tmp}/host_wide", f"{tmp}/nop5")
    assert "| cannot tell: the intervals overlap |" in nop5_line(r.stdout), r.stdout
    # The host ran nop5 without its reference: listed as not measured.
    host_run(f"{tmp}/host_alone", "r1", "6.18.44-fc", [bench("site_nop5", {}, "uprobe", (250, 245, 255))])
    r = run("--host", f"{tmp}/host_alone", f"{tmp}/nop5")
    assert r.returncode == 0 and "did not measure (a row and its reference workload):\n- 6.18: optimized" in r.stdout, r.stdout
    # A host on 6.12 has nothing the lab's kernels lack.
    host_run(f"{tmp}/host_612", "r1", "6.12.107+deb12-amd64", [bench("site_nop5", {}, "uprobe", (250, 245, 255))])
    r = run("--host", f"{tmp}/host_612", f"{tmp}/nop5")
    assert r.returncode == 0 and "## Changes the host's kernel has" not in r.stdout, r.stdout
    # Bad host input: runs of two kernels, a directory without runs.
    host_run(f"{tmp}/host_612", "r2", "6.18.44-fc", [])
    r = run("--host", f"{tmp}/host_612", f"{tmp}/nop5")
    assert r.returncode == 2 and "not one" in r.stderr, (r.returncode, r.stderr)
    write(f"{tmp}/host_guest/r1/result.json", {"context": {"kernel": {"release": "6.18.44-fc"},
                                                          "execution": "qemu-tcg"}, "benchmarks": []})
    r = run("--host", f"{tmp}/host_guest", f"{tmp}/nop5")
    assert r.returncode == 2 and "made under qemu-tcg" in r.stderr, (r.returncode, r.stderr)
    os.makedirs(f"{tmp}/no_runs")
    r = run("--host", f"{tmp}/no_runs", f"{tmp}/nop5")
    assert r.returncode == 2 and "no result.json" in r.stderr, (r.returncode, r.stderr)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def line_of(text, label):
    lines = [x for x in text.splitlines() if f"| {label}," in x]
    assert len(lines) == 1, (label, text)
    return lines[0]


def main():
    with tempfile.TemporaryDirectory(prefix="tb-upstream-table-") as tmp:
        check_table(tmp)
    print("ok: upstream-table.py")


def check_table(tmp):
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
    # A payload size is part of the row's name.
    sized = dict(ctl, name="ebpf/getpid/count/payload:64/threads:1", payload_bytes=64)
    outdir(f"{tmp}/sized", [(ctl, row(ctl, 420, 464, 1.105, "regression")), (sized, row(sized, 500, 500, 1.0, "same"))])
    r = run(f"{tmp}/sized")
    assert r.returncode == 0 and "| ebpf/getpid (payload=64), overhead |" in r.stdout, r.stdout
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
    check_host(tmp)
    leftovers = [n for n in os.listdir(tmp) if n.startswith(".upstream-table.")]
    assert not leftovers, leftovers


if __name__ == "__main__":
    main()
