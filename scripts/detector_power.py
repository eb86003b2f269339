"""The detectors' error rates on this machine (scripts/detector-power.sh).

Pools of real runs are made once, interleaved in time: A (no injection) and
one pool per injected level (the none tracer's inject_cycles at 5% and 10% of
the workload's measured cost per event).  Each trial draws disjoint runs from
the pools and asks a detector:
  - compare: `tracebench compare A B` (one run a side: U test on the
    repetitions; two or more: Welch's t on the runs' medians); an alarm is a
    "regression" verdict for the workload's benchmark;
  - changes: the runs as one history series (A's then B's, dates rewritten
    in that order) and `tracebench history changes --fail-on-change`; an
    alarm is exit 1 (needs three runs per side).
A/A trials draw both sides from A (alarms there are false); injected trials
draw A then the injected pool (alarms there are caught regressions).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracebench", default=os.path.join(here, "..", "build", "bench", "tracebench"))
    ap.add_argument("--out", default="results/detector-power")
    ap.add_argument("--pool-a", type=int, default=30)
    ap.add_argument("--pool-injected", type=int, default=15)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--workload", default="getpid")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    tb = a.tracebench
    if not os.access(tb, os.X_OK):
        sys.exit(f"detector-power: no tracebench binary at {tb} (--tracebench)")
    if a.pool_a < 10 or a.pool_injected < 5 or a.trials < 1:
        sys.exit("detector-power: --pool-a >= 10 (two sides of 5), --pool-injected >= 5, --trials >= 1")
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
        levels = {"5%": max(1, round(0.05 * cost)), "10%": max(1, round(0.10 * cost))}
        print(f"workload {a.workload}: {cost:.0f} cycles per event; injecting {levels}", flush=True)
        pools = {"A": [], "5%": [], "10%": []}
        order = ["A", "A", "5%", "10%"]  # A twice as often, interleaved in time
        want = {"A": a.pool_a, "5%": a.pool_injected, "10%": a.pool_injected}
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
                for case in ("A/A", "5%", "10%"):
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
                print(f"{k}x{k} {det}: " + ", ".join(f"{c} {row[c]}/{a.trials}" for c in ("A/A", "5%", "10%")), flush=True)
        out = {"workload": a.workload, "benchmark": name, "cycles_per_event": cost, "injected_cycles": levels,
               "pool_a": a.pool_a, "pool_injected": a.pool_injected, "trials": a.trials, "seed": a.seed,
               "host": context["host"], "cpu_model": context["cpu_model"], "kernel": context["kernel"]["release"],
               "date_utc": context["date_utc"], "rows": table}
        json.dump(out, open(os.path.join(a.out, "power.json"), "w"), indent=1)
        md = [f"# Detector error rates on {context['host']} ({context['cpu_model']}, kernel {context['kernel']['release']}, "
              f"{context['date_utc'][:10]})\n",
              f"Workload `{a.workload}` ({cost:.0f} cycles per event), quick runs; injected {levels['5%']} and "
              f"{levels['10%']} cycles per event (`none.inject_cycles`); pools of {a.pool_a} A runs and "
              f"{a.pool_injected} per injected level, interleaved in time; {a.trials} trials per cell, disjoint "
              f"runs per trial. compare: a `regression` verdict; changes: `history changes --fail-on-change` "
              f"on the runs as one series (A's, then B's).\n",
              "| runs per side | detector | false alarms (A/A) | caught, +5% | caught, +10% |",
              "|---|---|---:|---:|---:|"]
        for r in table:
            md.append(f"| {r['runs_per_side']}x{r['runs_per_side']} | {r['detector']} | {r['A/A']}/{a.trials} | "
                      f"{r['5%']}/{a.trials} | {r['10%']}/{a.trials} |")
        open(os.path.join(a.out, "power.md"), "w").write("\n".join(md) + "\n")
        print("\n".join(md))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
