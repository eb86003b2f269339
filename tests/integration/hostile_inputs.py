#!/usr/bin/python3
"""Integrity of figures and inputs, table-driven, on real runs:

- a forced --batch whose samples are under the clock's resolution gives no
  figure (the benchmark fails with the reason, exit 1); one long enough runs;
- an interval from 2 repetitions is labelled with its 50%, never "95%"
  (console, summary.csv, export bencher, report);
- inconsistent result files (negative medians, 2 medians kept of 6 or more repetitions,
  tsc.hz ten times the calibrated rate, an inverted interval) are refused with
  exit 2 by compare, history add, export, report and model fit, naming the
  file and the field, and nothing is written;
- model predict refuses negative and 1e300 terms, naming the term;
- a model validation that was stopped (SIGSTOP) or did not hold its rate (the
  delay tracer's 2 us events at 2 MHz, on any host) says so, exits 1, and its
  file says it did not hold.

usage: hostile_inputs.py TRACEBENCH SOURCE_DIR
"""
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from checks import check, failures

tb, src = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="tracebench-hostile-inputs-")


def tbrun(args, timeout=300):
    return subprocess.run([tb] + args, capture_output=True, text=True, timeout=timeout)


def one_run(args, name):
    """A real run into work/name; its result.json."""
    out = os.path.join(work, name)
    r = tbrun(["run"] + args + ["--out", out])
    files = glob.glob(os.path.join(out, "*", "result.json"))
    return r, (files[0] if files else None)


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.exists(path) else None


# --- 1. A figure below the clock's resolution is not a figure.
r, f = one_run(["-t", "none", "-w", "call", "-b", "1", "--quick"], "batch1")
msg = r.stdout + r.stderr
check("-b 1 on a call -> exit 1", r.returncode == 1, f"exit {r.returncode}: {msg[-600:]}")
check("-b 1 -> the reason, with the batch to give", re.search(r"--batch 1: a sample spans ~\d+ cycles", msg), msg[-600:])
check("-b 1 -> no figure printed", not re.search(r"none/call\S*\s+-?\d+\.\d", msg), msg[-600:])
if f:
    b = json.load(open(f))["benchmarks"][0]
    check("-b 1 -> the result says error, no overhead", b["status"] == "error" and b["overhead_ns_per_event"] is None, b)
r, f = one_run(["-t", "none", "-w", "getpid", "-b", "100", "--quick"], "batch100")
check("-b 100 on getpid (long enough) -> runs, exit 0", r.returncode == 0, r.stderr[-600:])

# --- 1b. An interval from 2 repetitions covers 50%, and every place says so.
r, two = one_run(["-t", "none", "-w", "getpid", "-r", "2", "-n", "50"], "reps2")
msg = r.stdout + r.stderr
check("-r 2 -> runs", r.returncode == 0 and two, msg[-600:])
check("-r 2 console: the interval's 50%, no '95% CI'", "95% CI" not in msg and re.search(r"\] 50%", msg), msg[-600:])
if two:
    csv = open(os.path.join(os.path.dirname(two), "summary.csv")).read().splitlines()
    row = dict(zip(csv[0].split(","), csv[1].split(",")))
    check("-r 2 summary.csv: overhead_ci_confidence 0.5", row.get("overhead_ci_confidence") == "0.5000", csv[:2])
    j = json.load(open(two))["benchmarks"][0]["overhead_ns_per_event"]
    check("-r 2 result.json: ci_confidence 0.5", j["ci_confidence"] == 0.5, j)
    e = tbrun(["export", "bencher", two])
    m = json.loads(e.stdout) if e.returncode == 0 else {}
    oh = next(iter(m.values()), {}).get("overhead-ns", {})
    check("-r 2 export bencher: the value, no bounds taken for a 95% interval",
          "value" in oh and "lower_value" not in oh and "cover less than 95%" in e.stderr, e.stdout[-300:] + e.stderr)
    rep = os.path.join(work, "report-r2")
    e = tbrun(["report", os.path.dirname(two), "--out", rep], timeout=180)
    if e.returncode == 0:
        md = open(os.path.join(rep, "report.md")).read()
        check("-r 2 report: the interval's 50%", "(50%)" in md and "95% interval" not in md, md[:600])
    else:
        check("-r 2 report runs", False, e.stderr[-600:])

# --- 2. Inconsistent inputs: every reader refuses them, nothing is written.
r, good = one_run(["-t", "none", "-w", "getpid", "-r", "6", "-n", "50", "--no-samples"], "good")
check("a good run for the reader cases", r.returncode == 0 and good, r.stderr[-600:])
doc = json.load(open(good))


def bench0(j):
    return j["benchmarks"][0]


def negative_medians(j):
    for v in ("baseline", "traced"):
        bench0(j)[v]["repetition_medians_cycles"] = [-1000.0 - x for x in bench0(j)[v]["repetition_medians_cycles"]]


def two_medians(j):
    for v in ("baseline", "traced"):
        bench0(j)[v]["repetition_medians_cycles"] = bench0(j)[v]["repetition_medians_cycles"][:2]


def tsc_tenfold(j):
    j["context"]["tsc"]["hz"] = 10 * j["context"]["tsc"]["calibrated_hz"]


def inverted(j):
    o = bench0(j)["overhead_ns_per_event"]
    o["ci_low"], o["ci_high"] = o["ci_high"] + 5, o["ci_low"] - 5


# name, mutation, what the message must name
BAD = [
    ("negative medians", negative_medians, r"repetition_medians_cycles\[0\]: -?\d+(\.\d+)? cycles per event is below"),
    # A run may hold more repetitions than asked (steady state extends it).
    ("2 medians kept", two_medians, r"2 medians for \d+ repetitions"),
    ("tsc.hz ten times the calibrated", tsc_tenfold, r"context\.tsc\.hz: .* 10\.00 times the calibrated"),
    ("inverted interval", inverted, r"overhead_ns_per_event: the interval \[.*\] does not hold its median"),
]


def bad_run(name, mutate):
    d = os.path.join(work, "bad-" + re.sub(r"\W+", "_", name), "run")
    os.makedirs(d)
    j = json.loads(json.dumps(doc))
    mutate(j)
    p = os.path.join(d, "result.json")
    json.dump(j, open(p, "w"))
    return p


for name, mutate, pattern in BAD:
    p = bad_run(name, mutate)
    d = os.path.dirname(p)
    db = os.path.join(work, "history.sqlite")
    before = sha(db)
    cases = [("compare", ["compare", good, p], None),
             ("history add", ["history", "add", d, "--db", db], db),
             ("export bencher", ["export", "bencher", d, "--out", os.path.join(d, "..", "bencher.json")],
              os.path.join(d, "..", "bencher.json")),
             ("report", ["report", d, "--out", os.path.join(d, "..", "report")], os.path.join(d, "..", "report")),
             ("model fit", ["model", "fit", d, "--out", os.path.join(d, "..", "model.json")],
              os.path.join(d, "..", "model.json"))]
    for cmd, args, written in cases:
        e = tbrun(args, timeout=120)
        out = e.stdout + e.stderr
        check(f"{cmd}, {name} -> exit 2", e.returncode == 2, f"exit {e.returncode}: {out[-600:]}")
        check(f"{cmd}, {name} -> names the file and the field", p in out and re.search(pattern, out), out[-600:])
        if cmd == "history add":
            check(f"{cmd}, {name} -> the history unchanged", sha(db) == before, "the database changed")
        elif written:
            check(f"{cmd}, {name} -> nothing written", not os.path.exists(written), written)
    # The run as it was is still read: the refusals are of the edits.
    if name == BAD[0][0]:
        e = tbrun(["history", "add", os.path.dirname(good), "--db", db])
        check("history add of the run as written -> accepted", e.returncode == 0, e.stderr[-300:])

# --- 2b. The model's inputs: a real fit, then its terms edited.
r, traced = one_run(["-t", "ftrace", "-w", "getpid", "-r", "6", "-n", "100", "--no-samples"], "ftrace")
check("an ftrace run to fit", r.returncode == 0 and traced, r.stderr[-600:])
model = os.path.join(work, "model", "model.json")
e = tbrun(["model", "fit", os.path.dirname(traced), "--out", model])
check("model fit of the run -> exit 0", e.returncode == 0, e.stderr[-600:])
mj = json.load(open(model)) if os.path.exists(model) else {"entries": []}
entry = next((x for x in mj["entries"] if x["tracer"] == "ftrace"), None)
check("the model has the ftrace entry", entry is not None, mj.get("entries"))
if entry:
    scenario = os.path.join(work, "scenario.json")
    json.dump({"probes": [{"tracer": "ftrace", "probe_kind": entry["probe_kind"], "action": entry["action"],
                           "rate_hz": 1000}]}, open(scenario, "w"))
    e = tbrun(["model", "predict", "--model", model, scenario])
    check("model predict of the fitted model -> exit 0", e.returncode == 0, e.stderr[-300:])
    for name, fixed, pattern in [
            ("negative fixed", {"cycles": -5000.0, "ci_low": -5100.0, "ci_high": -4900.0, "n": 6},
             r"term fixed: -5000 cycles.*a cost cannot be negative"),
            ("1e300 fixed", {"cycles": 1e300, "ci_low": 1e300, "ci_high": 1e300, "n": 6},
             r"term fixed: 1e\+300 cycles is beyond"),
            ("fixed far outside its interval", dict(entry["parameters"]["fixed"], cycles=-770379.0),
             r"term fixed: -770379 cycles lies far outside its own interval")]:
        bad = json.loads(json.dumps(mj))
        next(x for x in bad["entries"] if x["tracer"] == "ftrace")["parameters"]["fixed"] = fixed
        p = os.path.join(work, "model-" + re.sub(r"\W+", "_", name) + ".json")
        json.dump(bad, open(p, "w"))
        out_p = os.path.join(work, "prediction-" + re.sub(r"\W+", "_", name) + ".json")
        e = tbrun(["model", "predict", "--model", p, scenario, "--out", out_p])
        msg = e.stdout + e.stderr
        check(f"model predict, {name} -> exit 2", e.returncode == 2, f"exit {e.returncode}: {msg[-400:]}")
        check(f"model predict, {name} -> names the entry and the term", re.search(pattern, msg), msg[-400:])
        check(f"model predict, {name} -> nothing written", not os.path.exists(out_p), out_p)
    # model fit on inconsistent runs: refused, no model written.
    for name, mutate, pattern in BAD:
        d = os.path.join(work, "badfit-" + re.sub(r"\W+", "_", name), "run")
        os.makedirs(d)
        j = json.load(open(traced))
        mutate(j)
        json.dump(j, open(os.path.join(d, "result.json"), "w"))
        out_m = os.path.join(work, "badfit-" + re.sub(r"\W+", "_", name), "model.json")
        e = tbrun(["model", "fit", d, "--out", out_m])
        msg = e.stdout + e.stderr
        check(f"model fit on ftrace runs, {name} -> exit 2", e.returncode == 2 and re.search(pattern, msg),
              f"exit {e.returncode}: {msg[-400:]}")
        check(f"model fit on ftrace runs, {name} -> no model", not os.path.exists(out_m), out_m)

# --- 3. Validations say what happened: stopped, or the rate not held.
if entry:
    vjson = os.path.join(work, "validation-stopped.json")
    p = subprocess.Popen([tb, "model", "validate", "--model", model, "-t", "ftrace", "-w", "getpid", "-a", entry["action"], "--rate", "5000",
                          "--seconds", "4", "--out", vjson], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Stopped while it paces (8 segments of 0.5 s): pacing is sleeps to 1 ms
    # deadlines, so the thread is seen asleep in hrtimer_nanosleep poll after
    # poll (attaching does not sleep so).
    def pacing():
        try:
            return open(f"/proc/{p.pid}/wchan").read().strip() == "hrtimer_nanosleep"
        except OSError:
            return False
    deadline, seen = time.time() + 60, 0
    while seen < 3 and time.time() < deadline and p.poll() is None:
        seen = seen + 1 if pacing() else 0
        time.sleep(0.02)
    p.send_signal(signal.SIGSTOP)
    time.sleep(1.0)
    p.send_signal(signal.SIGCONT)
    o, err = p.communicate(timeout=120)
    check("validate stopped 1 s by SIGSTOP -> exit 1", p.returncode == 1, f"exit {p.returncode}: {o[-400:]}{err[-400:]}")
    check("validate stopped -> its verdict says the period and the stop",
          "NOT A VALIDATION" in o and re.search(r"pacing period lasted \d+ ms.*SIGSTOP", o), o[-600:])
    v = json.load(open(vjson)) if os.path.exists(vjson) else {}
    check("validate stopped -> its file says it did not hold", v.get("conditions", {}).get("held") is False,
          v.get("conditions"))

# A rate no host can hold: the delay tracer's 2 us per event caps the traced
# rate at 500 kHz whatever the host's syscalls cost, and it never drops an
# event (ftrace's getpid did hold 2 MHz on a fast host once its buffer
# overflowed: dropping is cheap).  Fitted for the model, validated at 2 MHz.
drun, dres = one_run(["-t", "delay", "-w", "delay_getpid", "-o", "delay.ns=2000", "-r", "3", "-n", "50", "--no-samples"], "delay")
dmodel = os.path.join(work, "delay-model", "model.json")
e = tbrun(["model", "fit", os.path.dirname(dres or work), "--out", dmodel])
check("model fit of a delay run -> exit 0", dres and e.returncode == 0, drun.stderr[-300:] + e.stderr[-300:])
if os.path.exists(dmodel):
    vjson = os.path.join(work, "validation-rate.json")
    e = tbrun(["model", "validate", "--model", dmodel, "-t", "delay", "-w", "delay_getpid", "-a", "spin", "-o", "delay.ns=2000",
               "--rate", "2000000", "--seconds", "0.4", "--out", vjson], timeout=120)
    check("validate at 2 MHz of a 2 us event -> exit 1, the rate not held",
          e.returncode == 1 and re.search(r"the rate was not held: \d+ Hz of the 2000000 Hz asked", e.stdout),
          f"exit {e.returncode}: {e.stdout[-600:]}{e.stderr[-300:]}")
    v = json.load(open(vjson)) if os.path.exists(vjson) else {}
    check("validate at 2 MHz -> its file says it did not hold, and why",
          v.get("conditions", {}).get("held") is False
          and any("rate was not held" in x for x in v.get("conditions", {}).get("problems", [])), v.get("conditions"))

shutil.rmtree(work, ignore_errors=True)
print(f"{len(failures)} failure(s)" + (": " + ", ".join(failures) if failures else ""))
sys.exit(1 if failures else 0)
