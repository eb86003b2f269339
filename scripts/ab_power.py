"""How often `tracebench ab` is wrong on this machine, and how long it takes (scripts/ab-power.sh).

Each trial is one whole `tracebench ab` with its default budget (or the
options given after --): A/A trials run the same build on both sides, the
injected trials add the none tracer's inject_cycles at a share of the
workload's measured cost per event to side B.  The cells' trials are
interleaved in time (A/A, +5%, +10%, A/A, ...) so a drift of the host
weighs on every cell alike.  Per cell: the verdicts (regression,
improvement, same, inconclusive), the time and pairs to a verdict, and a
95% interval (Wilson) on the rate that matters: false alarms (a regression
or an improvement) on A/A, regressions caught on the injected cells.

--check asserts the rates against bounds (exit 1 when a cell misses one):
false alarms at most --max-false-alarms, each injected level caught in at
least --min-caught of its trials.
"""
import argparse
import glob
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wilson(k, n, z=1.96):
    """95% interval on a binomial rate k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def calibrate(tb, workload, work):
    """The workload's cost per event under the none tracer, and its benchmark name."""
    out = os.path.join(work, "cal")
    r = run([tb, "run", "-t", "none", "-w", workload, "--quick", "--no-samples", "--out", out])
    if r.returncode != 0:
        sys.exit("ab-power: calibration run failed:\n" + r.stderr)
    res = json.load(open(os.path.join(out, os.listdir(out)[0], "result.json")))
    return res["benchmarks"][0]["baseline"]["cycles_per_event"]["p50"], res["context"]


def one_trial(tb, workload, inject, ab_options, work, index):
    """One `tracebench ab`: its verdict, pairs, seconds and what stopped it."""
    out = os.path.join(work, f"trial-{index}")
    b_spec = ":" if inject == 0 else f":-o none.inject_cycles={inject}"
    r = run([tb, "ab", ".", b_spec, "--out", out, "--json"] + ab_options
            + ["--", "-t", "none", "-w", workload, "--quick"])
    if r.returncode != 0:
        sys.exit(f"ab-power: trial {index} failed (exit {r.returncode}):\n" + r.stderr)
    ab = json.load(open(os.path.join(out, "ab.json")))
    added, a_spread = added_cycles(out)
    shutil.rmtree(out, ignore_errors=True)
    row = ab["rows"][0]
    return {"verdict": row["verdict"] or "inconclusive", "pairs": row["pairs"], "ratio": row["ratio"],
            "seconds": ab["seconds"], "stopped": ab["stopped"], "mde_80": row.get("mde_80"), "added_cycles": added,
            "a_spread_cycles": a_spread}


def added_cycles(session):
    """What B adds per event as its runs measured it, and how far A's own runs spread: the median of B's
    cycles per event minus A's (the traced figure; the injected cost is on both paths) over the session's
    interleaved pairs, and the range of A's.  Unlike B/A the difference does not move with the workload's
    own cost, which drifts with the host between the calibration and the trials; it is known no better
    than the runs of one configuration agree."""
    def cycles(side):
        runs = glob.glob(os.path.join(session, side, "pair-*", "*", "result.json"))
        return [b["traced"]["cycles_per_event"]["p50"] for r in runs for b in json.load(open(r))["benchmarks"]
                if b.get("traced")]
    a, b = cycles("A"), cycles("B")
    if not a or not b:
        return None, None
    return statistics.median(b) - statistics.median(a), max(a) - min(a)


def summarise(case, trials):
    n = len(trials)
    verdicts = {v: sum(t["verdict"] == v for t in trials) for v in ("regression", "improvement", "same", "inconclusive")}
    hits = verdicts["regression"] + verdicts["improvement"] if case == "A/A" else verdicts["regression"]
    low, high = wilson(hits, n)
    secs = sorted(t["seconds"] for t in trials)
    return {"case": case, "trials": n, **verdicts, "rate": hits / n if n else 0.0, "rate_low": low,
            "rate_high": high, "median_seconds": statistics.median(secs), "p90_seconds": secs[int(0.9 * (n - 1))],
            "median_pairs": statistics.median(t["pairs"] for t in trials),
            "median_ratio": statistics.median(t["ratio"] for t in trials),
            "median_added_cycles": median_of_known(t["added_cycles"] for t in trials),
            "median_a_spread_cycles": median_of_known(t["a_spread_cycles"] for t in trials)}


def median_of_known(values):
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def markdown(out, ab_options):
    rows = out["cells"]
    md = [f"# `tracebench ab` error rates on {out['host']} ({out['cpu_model']}, kernel {out['kernel']}, "
          f"{out['date_utc'][:10]})\n",
          f"Workload `{out['workload']}` under the none tracer ({out['cycles_per_event']:.0f} cycles per event), "
          f"quick runs; `tracebench ab . :B -- -t none -w {out['workload']} --quick`"
          f"{' ' + ' '.join(ab_options) if ab_options else ' with its default budget'}; side B injects "
          + ", ".join(f"{v} cycles ({k})" for k, v in out["injected_cycles"].items())
          + f" per event (`none.inject_cycles`); {out['trials']} trials a cell, interleaved in time; "
          f"{out['wall_seconds'] / 60:.0f} min in all.\n",
          "| case | trials | regression | improvement | same | inconclusive | rate (95% interval) | "
          "median B/A | median time | p90 time | median pairs |",
          "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        what = "false alarms" if r["case"] == "A/A" else "caught"
        md.append(f"| {r['case']} | {r['trials']} | {r['regression']} | {r['improvement']} | {r['same']} | "
                  f"{r['inconclusive']} | {what} {r['rate']:.1%} ({r['rate_low']:.1%}-{r['rate_high']:.1%}) | "
                  f"{r['median_ratio']:.3f} | {r['median_seconds']:.1f} s | {r['p90_seconds']:.1f} s | {r['median_pairs']:g} |")
    if out["checks"]:
        md += ["", "| checked cell | measured | bound | verdict |", "|---|---:|---:|---|"]
        for c in out["checks"]:
            md.append(f"| {c['case']} | {c['measured']:.1%} | {c['bound']} | {'pass' if c['ok'] else 'FAIL'} |")
    return "\n".join(md) + "\n"


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="tracebench ab's false alarms, power and time on this machine")
    ap.add_argument("--tracebench", default=os.path.join(here, "..", "build", "bench", "tracebench"))
    ap.add_argument("--out", default="results/ab-power")
    ap.add_argument("--trials", type=int, default=40, help="trials a cell (default 40)")
    ap.add_argument("--workload", default="getpid")
    ap.add_argument("--levels", default="0.05,0.10", help="injected shares of the cost (default 0.05,0.10)")
    ap.add_argument("--check", action="store_true", help="assert the bounds below; exit 1 when a cell misses one")
    ap.add_argument("--max-false-alarms", type=float, default=0.05)
    ap.add_argument("--min-caught", type=float, default=0.90)
    ap.add_argument("ab_options", nargs="*", help="options of `tracebench ab` for every trial, after --")
    a = ap.parse_args()
    tb = a.tracebench
    if not os.access(tb, os.X_OK):
        sys.exit(f"ab-power: no tracebench binary at {tb} (--tracebench)")
    try:
        shares = [float(x) for x in a.levels.split(",") if x]
    except ValueError:
        sys.exit(f"ab-power: --levels {a.levels}: shares such as 0.05,0.10")
    if a.trials < 1 or not shares or any(not 0 < s <= 10 for s in shares):
        sys.exit("ab-power: --trials >= 1 and every level in (0, 10]")
    if os.path.exists(a.out) and os.listdir(a.out):
        sys.exit(f"ab-power: {a.out} is not empty")
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tracebench-ab-power-")
    try:
        start = time.monotonic()
        cost, context = calibrate(tb, a.workload, work)
        levels = {f"+{round(100 * s)}%": max(1, round(s * cost)) for s in shares}
        inject = {"A/A": 0, **levels}
        print(f"workload {a.workload}: {cost:.0f} cycles per event; injecting {levels}", flush=True)
        trials = {c: [] for c in inject}
        for i in range(a.trials):
            for case, cycles in inject.items():
                trials[case].append(one_trial(tb, a.workload, cycles, a.ab_options, work, len(trials[case])))
            print(f"round {i + 1}/{a.trials}: " + ", ".join(
                f"{c} {sum(t['verdict'] == 'regression' for t in v)}R/{sum(t['verdict'] == 'same' for t in v)}S/"
                f"{sum(t['verdict'] == 'inconclusive' for t in v)}I" for c, v in trials.items()), flush=True)
        cells = [summarise(c, v) for c, v in trials.items()]
        checks = []
        if a.check:
            for c in cells:
                aa = c["case"] == "A/A"
                ok = c["rate"] <= a.max_false_alarms if aa else c["rate"] >= a.min_caught
                checks.append({"case": c["case"], "measured": c["rate"], "ok": ok,
                               "bound": f"{'<=' if aa else '>='} {a.max_false_alarms if aa else a.min_caught:.0%}"})
        out = {"workload": a.workload, "cycles_per_event": cost, "injected_cycles": levels, "trials": a.trials,
               "ab_options": a.ab_options, "host": context["host"], "cpu_model": context["cpu_model"],
               "kernel": context["kernel"]["release"], "date_utc": context["date_utc"],
               "wall_seconds": time.monotonic() - start, "cells": cells, "checks": checks,
               "raw": trials}
        json.dump(out, open(os.path.join(a.out, "ab-power.json"), "w"), indent=1)
        md = markdown(out, a.ab_options)
        open(os.path.join(a.out, "ab-power.md"), "w").write(md)
        print(md)
        failed = [c for c in checks if not c["ok"]]
        for c in failed:
            print(f"ab-power: FAIL: {c['case']}: {c['measured']:.1%}, bound {c['bound']}", file=sys.stderr)
        sys.exit(1 if failed else 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
