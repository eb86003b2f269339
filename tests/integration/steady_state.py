#!/usr/bin/python3
"""Steady state end to end (harness/include/tracebench/steady_state.h), on the
delay tracer's known cost with a first pass that costs three times as much, as
a tracer whose buffer is slow on its first pass (LTTng-UST on a VM whose page
faults are dear):

1. the tracer says how many events its buffer holds (delay.buffer_events):
   the warm-up fires them twice over, then its blocks agree: the figure is the
   steady cost, no level shift is left for the repetitions;
2. it does not say so: the warm-up settles on the first pass's plateau, the
   repetitions begin in it, and the level check leaves those out and takes
   more: the figure is still the steady cost, the shift is in the result;
3. the first pass comes again and again (a host alternating between two
   modes): no level holds for the repetitions an interval needs, so there is
   no figure: the benchmark is `unsteady` and names the levels (never `ok`
   with one of them).

Each is run on this host and, where the argument says so, on the simulated
slow host too (TRACEBENCH_SIMULATE_HOST=bhyve).

usage: steady_state.py TRACEBENCH [--simulate SPEC]
"""
import glob
import json
import subprocess
import sys
import tempfile

from simulated_host import host_env

NS, FIRST_NS = 200, 600
# A quick block is 10 ms of traced events at the pilot's cost, which the
# first pass sets, whatever batch the host's clock and gaps give (samples per
# block are not limited: -n); warm-up blocks alike.  The first pass is
# counted in such blocks.
BLOCK = int(0.01 / (FIRST_NS * 1e-9))


def run(tb, out, first_pass, buffer_events, env, every=0):
    args = [tb, "run", "--quick", "-t", "delay", "-w", "delay_site", "--no-samples", "--out", out,
            "-n", "10000000", "--wait-lock=600",
            "-o", f"delay.ns={NS}", "-o", f"delay.first_pass_events={first_pass}", "-o", f"delay.first_pass_ns={FIRST_NS}",
            "-o", f"delay.buffer_events={buffer_events}", "-o", f"delay.first_pass_every={every}"]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    files = glob.glob(f"{out}/*/result.json")
    if not files:
        sys.exit(f"no result from {' '.join(args)} (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p, json.load(open(files[0]))["benchmarks"][0]


def near(b, what):
    got = (b.get("overhead_ns_per_event") or {}).get("median")
    # ±10%: the first pass costs three times as much; a figure that mixed it
    # in would be far off.
    ok = b["status"] == "ok" and got is not None and abs(got - NS) <= 0.1 * NS
    assert ok, f"{what}: {b['status']} {b.get('error', '')} overhead {got} ns, not {NS} ±10%; warm-up {b.get('warmup')}, " \
               f"level shifts {b.get('level_shifts')}"
    return got


def main():
    tb = sys.argv[1]
    env, where = host_env(sys.argv)
    with tempfile.TemporaryDirectory(prefix="tracebench-steady-") as work:
        # 1. A buffer the tracer declares slow on its first passes: the warm-up
        # goes round it twice.
        first = 6 * BLOCK
        _, b = run(tb, f"{work}/declared", first, first, env)
        got = near(b, "declared buffer")
        w = b["warmup"]
        assert w["stop"] == "stationary" and w["events"] >= 2 * first and w["min_events"] == 2 * first, w
        assert not b.get("level_shifts"), ("the warm-up left a shift to the repetitions", b.get("level_shifts"))
        print(f"{where}: declared buffer of {first} events: warm-up {w['blocks']} blocks, {w['events']} events; "
              f"{got:.1f} ns")
        # 2. Undeclared: three warm-up blocks on the plateau, then three
        # repetitions begin in it; the level check leaves them out.
        first = 6 * BLOCK
        _, b = run(tb, f"{work}/undeclared", first, 0, env)
        got = near(b, "undeclared first pass")
        shifts = b.get("level_shifts") or []
        assert shifts and shifts[0]["before_cycles"] > 2 * shifts[0]["after_cycles"], shifts
        assert b["repetitions"] > 6 and b["repetitions_stop"]["cap"] == 6, (b["repetitions"], b["repetitions_stop"])
        print(f"{where}: undeclared first pass of {first} events: warm-up {b['warmup']['stop']} after "
              f"{b['warmup']['blocks']} blocks; {shifts[0]['repetitions_left_out']} repetitions left out, "
              f"{b['repetitions']} run; {got:.1f} ns")
        # 3. A first pass that comes again every six blocks, as a host that
        # alternates between two modes: three repetitions on each level in
        # turn never make the six an interval needs within the limit (three
        # times the cap).  A block's events as the run before sized it (the same
        # pilot, on the first pass).
        block = b["samples_per_block"] * b["batch"]
        first = 3 * block
        p, b = run(tb, f"{work}/unsteady", first, 0, env, every=6 * block)
        assert p.returncode == 0 and b["status"] == "unsteady" and "changed level" in b["error"], \
            (p.returncode, b["status"], b["error"], b.get("level_shifts"), b.get("warmup"))
        assert b.get("overhead_ns_per_event") is None and len(b.get("level_shifts") or []) >= 2, b
        assert "unsteady: the overhead changed level" in p.stdout, p.stdout
        print(f"{where}: a first pass of {first} events every {6 * block}: {b['error']}")


if __name__ == "__main__":
    main()
