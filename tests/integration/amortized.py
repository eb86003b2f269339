#!/usr/bin/python3
"""The amortized overhead end to end (harness/include/tracebench/sample_book.h),
on the delay tracer's known cost: 200 ns per event, and one event in 200
taking 6,000 ns more (delay.first_pass_* with first_pass_every: as a tracer
that pays for a buffer page once in a few hundred records):

1. the median overhead is what most events cost, the same with the rare cost
   as without (the costly events sit in few samples, which the median leaves
   out): three runs of each, alternating, within 10% or what the runs of one
   configuration moved among themselves;
2. the amortized overhead is 200 + 6000 / 200 = 230 ns, what the events cost
   on average, throughput's figure: the known answer, the run's median + 30,
   lies within its interval (give or take 3%), which is at most twice the
   rare cost wide plus the host's own noise (the width of the run's median
   interval); the result warns that the median leaves it out (where that
   noise is wider than the rare cost's share, as its rule says: when the
   amortized interval lies wholly above the median);
3. without the rare cost, the two figures agree (the median within the
   amortized interval, give or take 3%) and nothing is said: the host's own
   short gaps are taken off (their share of the time, surveyed before the
   run), a preemption left out.

Run on this host and on the simulated slow host (--simulate bhyve: a TSC in
21-cycle steps, the CPU taken away thousands of times a second).  The
amortized figure is a mean, so its repetitions move with the host's gaps
and, on a host whose speed jumps every few seconds, with the level each
block ran at (results/ci/2026-12-02-firecracker-intel-xeon-speed-jumps.md):
held to its interval, as a user relies on it, not to a fixed share of the
30 ns; without the rare cost too (a CI run on that host put the amortized
figure 7% under the median).

usage: amortized.py TRACEBENCH [--simulate SPEC]
"""
import glob
import json
import statistics
import subprocess
import sys
import tempfile

from simulated_host import host_env

NS, EVERY, EXTRA_NS = 200, 200, 6000
RUNS_EACH = 3  # runs with and without the rare cost, alternating (check 1)


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
    return b["overhead_ns_per_event"]["median"], b["amortized_overhead_ns_per_event"]["median"]


def same_median(rares, plains, where):
    """The median is the common event's cost, with or without the rare one:
    the median of the runs with it against the median of those without,
    alternating, within 10% or within what the runs of one configuration
    moved among themselves, the larger.  Not N itself: on some hosts the
    spin before a syscall adds less than it spins (`tracebench selftest`
    judges that case against a plain loop), and on a bhyve-like AMD guest
    how much less moved by 20% between runs a second apart, each run's own
    interval narrower than that
    (results/crosscheck/2026-12-02-bhyve-like-amd-epyc-evening.md)."""
    r = [b["overhead_ns_per_event"]["median"] for b in rares]
    p = [b["overhead_ns_per_event"]["median"] for b in plains]
    moved = max(max(r) - min(r), max(p) - min(p))
    rare, plain = statistics.median(r), statistics.median(p)
    assert abs(rare - plain) <= max(0.1 * plain, moved), \
        (f"{where}: the median moved with the rare cost: {rare:.1f} ns (runs {[round(x, 1) for x in r]}) against "
         f"{plain:.1f} without it (runs {[round(x, 1) for x in p]})")
    print(f"{where}: the median with the rare cost {rare:.1f} ns, without it {plain:.1f} (runs moved {moved:.1f})")


def holds_known_answer(b, known, where, what, added):
    """The amortized interval, widened by 3%, holds `known`; returns how much
    wider it is than twice the rare cost plus the width of the run's own
    median interval (the host's noise between repetitions, which a mean over
    a block's samples sees as much as their median does), <= 0 when not."""
    a, o = b["amortized_overhead_ns_per_event"], b["overhead_ns_per_event"]
    low, high = a["ci_low"], a["ci_high"]
    width = 2 * added + (o["ci_high"] - o["ci_low"])
    assert low - 0.03 * known <= known <= high + 0.03 * known, \
        f"{where}, {what}: amortized [{low:.1f}, {high:.1f}] ns leaves out the known {known:.1f} (+-3%)"
    print(f"{where}, {what}: known {known:.1f} ns within the amortized [{low:.1f}, {high:.1f}] "
          f"(width at most {width:.0f})")
    return (high - low) - width


def informative(excesses, where, what):
    """The amortized interval no wider than holds_known_answer() allows, in
    most of the runs: on the bhyve-like AMD guest one run in a few has an
    interval several times wider (one repetition far out, cause open:
    harness/README.md, "Amortized overhead")."""
    worst = sorted(excesses)[len(excesses) // 2]
    assert worst <= 0, f"{where}, {what}: amortized intervals wider than allowed by {[round(x, 1) for x in excesses]} ns"


def said_as_due(b, stdout, added, simulated):
    """The warning that the median leaves the rare cost out: said where the
    run's own median interval is narrower than the rare cost's share (a
    quiet host; the simulated host's gaps are left aside); where the host's
    noise is wider, said exactly when the amortized interval lies wholly 3%
    above the median, the product's rule (harness/README.md)."""
    said = bool([w for w in b["warnings"] if w.startswith("amortized ")]) and "! amortized" in stdout
    a, o = b["amortized_overhead_ns_per_event"], b["overhead_ns_per_event"]
    if simulated:
        return
    if o["ci_high"] - o["ci_low"] < added:
        assert said, ("the median leaves out the rare cost unsaid", b["warnings"])
    else:
        assert said == (a["ci_low"] >= 1.03 * o["median"]), \
            ("the warning against its rule", said, a, o["median"], b["warnings"])


def main():
    tb = sys.argv[1]
    env, where = host_env(sys.argv)
    simulated = "TRACEBENCH_SIMULATE_HOST" in env
    added = EXTRA_NS / EVERY
    with tempfile.TemporaryDirectory(prefix="tracebench-amortized-") as work:
        # Runs alternating with and without the rare cost, three of each.
        rares, plains = [], []
        for i in range(RUNS_EACH):
            rares.append(run(tb, f"{work}/rare{i}", env, rare=True))
            plains.append(run(tb, f"{work}/plain{i}", env, rare=False)[1])
        excesses = []
        for stdout, b in rares:
            median, amortized = figures(b, "a cost in one event of 200")
            excesses.append(holds_known_answer(b, median + added, where, "one event in 200 dearer", added))
            said_as_due(b, stdout, added, simulated)
            print(f"{where}: one event in {EVERY} {EXTRA_NS} ns dearer: median {median:.1f} ns, amortized "
                  f"{amortized:.1f} ns ({amortized - median:+.1f}, {added:.0f} injected)")
        informative(excesses, where, "one event in 200 dearer")
        excesses = []
        for b in plains:
            median, amortized = figures(b, "no rare cost")
            excesses.append(holds_known_answer(b, median, where, "no rare cost", added))
            assert not [w for w in b["warnings"] if w.startswith("amortized ")], b["warnings"]
            print(f"{where}: no rare cost: median {median:.1f} ns, amortized {amortized:.1f} ns")
        informative(excesses, where, "no rare cost")
        same_median([b for _, b in rares], plains, where)


if __name__ == "__main__":
    main()
