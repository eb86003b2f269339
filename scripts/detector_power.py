"""The detectors' error rates on this machine (scripts/detector-power.sh).

Pools of real runs are made once, interleaved in time: A (no injection) and
one pool per injected level (the none tracer's inject_cycles at 5% and 10% of
the workload's measured cost per event).  Each trial draws disjoint runs from
the pools and asks a detector:
  - compare: `tracebench compare A B` (one run a side: U test on the
    repetitions; two or more: Welch's t on the runs' medians); an alarm is a
    "regression" verdict for the workload's benchmark;
  - changes: the runs as one history series (A's then B's, dates rewritten
    in that order, the injection's option taken out so that the history
    sees one configuration) and `tracebench history changes
    --fail-on-change`; an alarm is exit 1 (needs three runs per side).
A/A trials draw both sides from A (alarms there are false); injected trials
draw A then the injected pool (alarms there are caught regressions).

--check adds a pool at a level no working detector misses (--check-level,
+50% by default) and asserts what was measured (exit 1 when a cell misses
its bound): false alarms at most --max-false-alarms of the trials where the
run is the unit of the test (3x3 and 5x5, nominal level 5%), and that level
caught in at least --min-caught of them where the detector can reach p <=
0.05 (compare 1x1, 3x3, 5x5; changes 5x5) and, for tests on the runs'
medians, where the runs' spread (A's and the level's) lets that many runs a
side see it with 90% power (above it the cell is reported, not asserted).
+5% and +10% are measured, not asserted: whether a machine's run-to-run
noise lets 3 or 5 runs a side see them is what the table is for (a busy
machine does not; that is no bug).
Each bound is printed with the binomial chance that a detector at its
nominal 5% fails it, and that one no better than chance (5% alarms whatever
the runs) passes it: the trials must be enough for both to be small.  Trials
share the pools' runs, so they are not independent; the chances are a
guide, not a guarantee.
"""
import argparse
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


# (runs per side, detector, case, kind): "max" bounds false alarms, "min" catches.
# "check" is the --check level's case.
CHECKS = [(3, "compare", "A/A", "max"), (5, "compare", "A/A", "max"), (3, "changes", "A/A", "max"),
          (5, "changes", "A/A", "max"), (1, "compare", "check", "min"), (3, "compare", "check", "min"),
          (5, "compare", "check", "min"), (5, "changes", "check", "min")]
NOMINAL = 0.05  # the detectors' level: compare's p and history changes' permutation p


def binom_tail(n, p, k):
    """P(X >= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(max(k, 0), n + 1))


# Two-sided 5% critical values of Student's t by degrees of freedom, and the
# normal quantile of 90% power.
T_CRIT = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}  # k - 1 for k up to 5 runs a side
Z_POWER = 1.282


def log_spread(medians):
    """Run-to-run spread: the standard deviation of the runs' log medians."""
    logs = [math.log(m) for m in medians]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def largest_spread_seen(k, level):
    """The largest run-to-run spread at which a test on k run medians a side
    (Welch's t) sees a change of `level` with 90% power; above it a miss is
    the machine's noise, not the detector's.  Welch's degrees of freedom lie
    between k - 1 (one side's spread dominates) and 2k - 2 (equal spreads):
    the bound takes k - 1, so that it holds whatever the two sides' spreads
    (with 2k - 2 a CI run's 3x3 cell at 12.0% spread, A 14.1% and +50%
    9.4%, was asserted at 90% power and caught 22 of 40)."""
    return math.log(1 + level) / ((T_CRIT[k - 1] + Z_POWER) * math.sqrt(2 / k))


def check_cells(table, trials, max_false, min_caught, check_case, spread=None, level=None):
    """One verdict per asserted cell, with what its bound means in binomial terms.
    A catch cell whose test works on the runs' medians (k >= 2) is asserted
    only where the A runs' spread lets k runs a side see the level."""
    out = []
    for k, det, case, kind in CHECKS:
        case = check_case if case == "check" else case
        row = next(r for r in table if r["runs_per_side"] == k and r["detector"] == det)
        got = row[case]
        if kind == "min" and k >= 2 and spread is not None and spread > largest_spread_seen(k, level):
            out.append({"runs_per_side": k, "detector": det, "case": case, "measured": got, "trials": trials,
                        "bound": "not asserted", "ok": True,
                        "meaning": f"the runs' spread here ({spread:.1%}) is above the {largest_spread_seen(k, level):.1%} "
                                   f"at which {k} runs a side see +{level:.0%} with 90% power"})
            continue
        if kind == "max":
            bound = math.floor(max_false * trials)
            ok = got <= bound
            meaning = (f"a detector at its nominal {NOMINAL:.0%} fails this with chance "
                       f"{binom_tail(trials, NOMINAL, bound + 1):.2g}")
        else:
            bound = math.ceil(min_caught * trials)
            ok = got >= bound
            meaning = (f"one that alarms {NOMINAL:.0%} of the time whatever the runs passes with chance "
                       f"{binom_tail(trials, NOMINAL, bound):.2g}")
        out.append({"runs_per_side": k, "detector": det, "case": case, "measured": got, "trials": trials,
                    "bound": f"{'<=' if kind == 'max' else '>='} {bound}", "ok": ok, "meaning": meaning})
    return out


def main():
    # SIGTERM (a ctest timeout, a CI cancel) unwinds like an exception, so the
    # work directory is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracebench", default=os.path.join(here, "..", "build", "bench", "tracebench"))
    ap.add_argument("--out", default="results/detector-power")
    ap.add_argument("--pool-a", type=int, default=30)
    ap.add_argument("--pool-injected", type=int, default=15)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--workload", default="getpid")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", action="store_true", help="assert the bounds below; exit 1 when a cell misses its bound")
    ap.add_argument("--max-false-alarms", type=float, default=0.15,
                    help="largest share of A/A trials with an alarm at 3x3 and 5x5 (default 0.15)")
    ap.add_argument("--min-caught", type=float, default=0.75,
                    help="smallest share of --check-level trials caught (default 0.75)")
    ap.add_argument("--check-level", type=float, default=0.5,
                    help="with --check: the injected share of the cost that must be caught (default 0.5)")
    ap.add_argument("--asserted-only", action="store_true",
                    help="with --check: only the pools that are asserted (A/A and --check-level), "
                         "not the +5%% and +10%% ones, which are measured, not asserted")
    a = ap.parse_args()
    tb = a.tracebench
    if not os.access(tb, os.X_OK):
        sys.exit(f"detector-power: no tracebench binary at {tb} (--tracebench)")
    if a.pool_a < 10 or a.pool_injected < 5 or a.trials < 1:
        sys.exit("detector-power: --pool-a >= 10 (two sides of 5), --pool-injected >= 5, --trials >= 1")
    if a.check and (a.trials < 20 or not 0 <= a.max_false_alarms < 1 or not 0 < a.min_caught <= 1
                    or not 0.1 < a.check_level <= 10):
        sys.exit("detector-power: --check needs --trials >= 20 (fewer cannot tell a detector from chance), "
                 "0 <= --max-false-alarms < 1, 0 < --min-caught <= 1 and 0.1 < --check-level <= 10")
    if a.asserted_only and not a.check:
        sys.exit("detector-power: --asserted-only goes with --check")
    if os.path.exists(a.out) and os.listdir(a.out):
        sys.exit(f"detector-power: {a.out} is not empty")
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tracebench-power-")
    try:
        base = [tb, "run", "-t", "none", "-w", a.workload, "--quick", "--no-samples"]
        cal = os.path.join(work, "cal")
        r = run(base + ["--out", cal])
        if r.returncode != 0:
            sys.exit("detector-power: calibration run failed:\n" + r.stderr)
        res = json.load(open(os.path.join(cal, os.listdir(cal)[0], "result.json")))
        cost = res["benchmarks"][0]["baseline"]["cycles_per_event"]["p50"]
        name = res["benchmarks"][0]["name"]
        shares = {} if a.asserted_only else {"5%": 0.05, "10%": 0.10}
        check_case = f"{round(100 * a.check_level)}%" if a.check else None
        if check_case:
            shares[check_case] = a.check_level
        levels = {k: max(1, round(v * cost)) for k, v in shares.items()}
        cases = ["A/A"] + list(levels)
        print(f"workload {a.workload}: {cost:.0f} cycles per event; injecting {levels}", flush=True)
        pools = {"A": [], **{k: [] for k in levels}}
        order = ["A", "A"] + list(levels)  # A twice as often, interleaved in time
        want = {"A": a.pool_a, **{k: a.pool_injected for k in levels}}
        while any(len(pools[k]) < want[k] for k in pools):
            for k in order:
                if len(pools[k]) >= want[k]:
                    continue
                d = os.path.join(work, "pool", k.replace("%", "pct"), str(len(pools[k])))
                cmd = base + ["--out", d] + ([] if k == "A" else ["-o", f"none.inject_cycles={levels[k]}"])
                r = run(cmd)
                if r.returncode != 0:
                    sys.exit("detector-power: a pool run failed:\n" + r.stderr)
                pools[k].append(os.path.join(d, os.listdir(d)[0]))
            print(f"pools: " + ", ".join(f"{k} {len(v)}/{want[k]}" for k, v in pools.items()), flush=True)
        context = json.load(open(os.path.join(pools["A"][0], "result.json")))["context"]

        rng = random.Random(a.seed)
        trial_dir = os.path.join(work, "trial")

        def compare_alarm(sa, sb):
            shutil.rmtree(trial_dir, ignore_errors=True)
            for side, runs in (("a", sa), ("b", sb)):
                for i, src in enumerate(runs):
                    os.makedirs(os.path.join(trial_dir, side, str(i)))
                    shutil.copy(os.path.join(src, "result.json"), os.path.join(trial_dir, side, str(i)))
            r = run([tb, "compare", os.path.join(trial_dir, "a"), os.path.join(trial_dir, "b"), "--json"])
            if r.returncode != 0:
                sys.exit("detector-power: compare failed:\n" + r.stderr)
            row = next(x for x in json.loads(r.stdout)["rows"] if x["benchmark"] == name)
            return row["verdict"] == "regression"

        def changes_alarm(sa, sb):
            shutil.rmtree(trial_dir, ignore_errors=True)
            for i, src in enumerate(list(sa) + list(sb)):
                r = json.load(open(os.path.join(src, "result.json")))
                r["context"]["run_id"] = f"t{i:02d}"
                r["context"]["date_utc"] = f"2000-01-01T00:{i:02d}:00Z"
                # The history keeps each configuration its own series, so
                # an injected run would start one of its own: the injection
                # stands for a change the configuration does not show (a
                # kernel's, a commit's), and its option goes.
                for b in r["benchmarks"]:
                    b["options"] = {}
                os.makedirs(os.path.join(trial_dir, "runs", str(i)))
                json.dump(r, open(os.path.join(trial_dir, "runs", str(i), "result.json"), "w"))
            db = os.path.join(trial_dir, "h.sqlite")
            r = run([tb, "history", "add", os.path.join(trial_dir, "runs"), "--db", db])
            if r.returncode != 0:
                sys.exit("detector-power: history add failed:\n" + r.stderr)
            r = run([tb, "history", "changes", name, "--db", db, "--fail-on-change"])
            if r.returncode not in (0, 1):
                sys.exit("detector-power: history changes failed:\n" + r.stderr)
            return r.returncode == 1

        detectors = {"compare": compare_alarm, "changes": changes_alarm}
        table = []
        for k in (1, 3, 5):
            for det, fn in detectors.items():
                if det == "changes" and k < 3:
                    continue  # a series needs three runs on each side of a change
                row = {"runs_per_side": k, "detector": det}
                for case in cases:
                    hits = 0
                    for _ in range(a.trials):
                        if case == "A/A":
                            picked = rng.sample(pools["A"], 2 * k)
                            sa, sb = picked[:k], picked[k:]
                        else:
                            sa, sb = rng.sample(pools["A"], k), rng.sample(pools[case], k)
                        hits += fn(sa, sb)
                    row[case] = hits
                table.append(row)
                print(f"{k}x{k} {det}: " + ", ".join(f"{c} {row[c]}/{a.trials}" for c in cases), flush=True)
        spread = None
        if check_case:  # Welch's t sees both sides' spreads: their quadratic mean
            sides = [log_spread([json.load(open(os.path.join(d, "result.json")))["benchmarks"][0]["traced"]
                                 ["cycles_per_event"]["p50"] for d in pools[k]]) for k in ("A", check_case)]
            spread = math.sqrt((sides[0] ** 2 + sides[1] ** 2) / 2)
            print(f"run-to-run spread: A {sides[0]:.1%}, +{check_case} {sides[1]:.1%}", flush=True)
        checks = (check_cells(table, a.trials, a.max_false_alarms, a.min_caught, check_case, spread, a.check_level)
                  if a.check else [])
        out = {"workload": a.workload, "benchmark": name, "cycles_per_event": cost, "injected_cycles": levels, "check_level": a.check_level if a.check else None,
               "pool_a": a.pool_a, "pool_injected": a.pool_injected, "trials": a.trials, "seed": a.seed,
               "host": context["host"], "cpu_model": context["cpu_model"], "kernel": context["kernel"]["release"],
               "date_utc": context["date_utc"], "rows": table, "checks": checks, "run_spread": spread}
        json.dump(out, open(os.path.join(a.out, "power.json"), "w"), indent=1)
        md = [f"# Detector error rates on {context['host']} ({context['cpu_model']}, kernel {context['kernel']['release']}, "
              f"{context['date_utc'][:10]})\n",
              f"Workload `{a.workload}` ({cost:.0f} cycles per event), quick runs; injected "
              f"{', '.join(f'{v} ({k})' for k, v in levels.items())} cycles per event (`none.inject_cycles`); "
              f"pools of {a.pool_a} A runs and "
              f"{a.pool_injected} per injected level, interleaved in time; {a.trials} trials per cell, disjoint "
              f"runs per trial. compare: a `regression` verdict; changes: `history changes --fail-on-change` "
              f"on the runs as one series (A's, then B's).\n",
              "| runs per side | detector | false alarms (A/A) | " + " | ".join(f"caught, +{k}" for k in levels) + " |",
              "|---|---|" + "---:|" * len(cases)]
        for r in table:
            md.append(f"| {r['runs_per_side']}x{r['runs_per_side']} | {r['detector']} | "
                      + " | ".join(f"{r[c]}/{a.trials}" for c in cases) + " |")
        if checks:
            md += ["", "| checked cell | measured | bound | verdict | what the bound means |", "|---|---:|---:|---|---|"]
            for c in checks:
                md.append(f"| {c['runs_per_side']}x{c['runs_per_side']} {c['detector']} {c['case']} | "
                          f"{c['measured']}/{c['trials']} | {c['bound']} | "
                          f"{('pass' if c['bound'] != 'not asserted' else '-') if c['ok'] else 'FAIL'} | "
                          f"{c['meaning']} |")
        open(os.path.join(a.out, "power.md"), "w").write("\n".join(md) + "\n")
        print("\n".join(md))
        failed = [c for c in checks if not c["ok"]]
        for c in failed:
            print(f"detector-power: FAIL: {c['runs_per_side']}x{c['runs_per_side']} {c['detector']} {c['case']}: "
                  f"{c['measured']}/{c['trials']}, bound {c['bound']}", file=sys.stderr)
        if failed:
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
