#!/usr/bin/python3
"""The amortized overhead end to end (harness/include/tracebench/sample_book.h),
on the delay tracer's known cost: 200 ns per event, and one event in 200
taking 6,000 ns more (delay.first_pass_* with first_pass_every: as a tracer
that pays for a buffer page once in a few hundred records):

1. the median overhead is the 200 ns most events cost (the costly events sit
   in few samples, which the median leaves out);
2. the amortized overhead is 200 + 6000 / 200 = 230 ns, what the events cost
   on average, throughput's figure: the difference from the median is the 30
   ns injected, within 20%; the result warns that the median leaves it out;
3. without the rare cost, the two figures agree (within 3% of the cost) and
   nothing is said: the host's own short gaps are taken off (their share of
   the time, surveyed before the run), a preemption left out.

Run on this host (CI) and, where the argument says so, on the simulated slow
host (TRACEBENCH_SIMULATE_HOST=bhyve: a TSC in 21-cycle steps, stolen time in
every timed block), where it fails today: the amortized figure reads +8 to +33
of the 30 ns there, an open defect (harness/README.md, "Amortized overhead").

usage: amortized.py TRACEBENCH [--simulate SPEC]
"""
import glob
import json
import subprocess
import sys
import tempfile

from simulated_host import host_env

NS, EVERY, EXTRA_NS = 200, 200, 6000


def run(tb, out, env, rare):
    # On getpid, whose untraced call spans enough of the clock that the
    # pilot's batch stays at a few events (11 here, fewer on a slow host),
    # so most samples hold no rare event.  Not delay_site: its ~1-cycle call
    # makes the batch follow the host's gaps (27 events at 18,000 gaps a
    # second, 703 at 700), and at hundreds every sample held the rare cost.
    args = [tb, "run", "--quick", "-t", "delay", "-w", "delay_getpid", "--no-samples", "--out", out, "--wait-lock=600",
            "-o", f"delay.ns={NS}"]
    if rare:
        args += ["-o", "delay.first_pass_events=1", "-o", f"delay.first_pass_ns={NS + EXTRA_NS}",
                 "-o", f"delay.first_pass_every={EVERY}"]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    files = glob.glob(f"{out}/*/result.json")
    if p.returncode != 0 or not files:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout, json.load(open(files[0]))["benchmarks"][0]


def figures(b, what):
    assert b["status"] == "ok" and b["events"]["verification"] == "passed", (what, b["status"], b["events"])
    median = b["overhead_ns_per_event"]["median"]
    amortized = b["amortized_overhead_ns_per_event"]["median"]
    # The median: the common event's cost, as the quick suite reads it
    # (`tracebench selftest` holds the figure to its bound; here it is the
    # premise, held to the cross-check's 10%).
    assert abs(median - NS) <= 0.1 * NS, f"{what}: median overhead {median:.1f} ns, not {NS} +-10%"
    return median, amortized


def main():
    tb = sys.argv[1]
    env, where = host_env(sys.argv)
    added = EXTRA_NS / EVERY
    with tempfile.TemporaryDirectory(prefix="tracebench-amortized-") as work:
        stdout, b = run(tb, f"{work}/rare", env, rare=True)
        median, amortized = figures(b, "a cost in one event of 200")
        assert abs(amortized - median - added) <= 0.2 * added, \
            f"{where}: amortized {amortized:.1f} ns - median {median:.1f} = {amortized - median:.1f}, not {added:.0f} +-20%"
        said = [w for w in b["warnings"] if w.startswith("amortized ")]
        assert said and "! amortized" in stdout, ("the median leaves out the rare cost unsaid", b["warnings"])
        print(f"{where}: one event in {EVERY} {EXTRA_NS} ns dearer: median {median:.1f} ns, amortized "
              f"{amortized:.1f} ns ({amortized - median:+.1f}, {added:.0f} injected)")

        _, b = run(tb, f"{work}/plain", env, rare=False)
        median, amortized = figures(b, "no rare cost")
        assert abs(amortized - median) <= 0.03 * NS, \
            f"{where}: without a rare cost amortized {amortized:.1f} ns against the median's {median:.1f}"
        assert not [w for w in b["warnings"] if w.startswith("amortized ")], b["warnings"]
        print(f"{where}: no rare cost: median {median:.1f} ns, amortized {amortized:.1f} ns")


if __name__ == "__main__":
    main()
