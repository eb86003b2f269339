"""What the getpid cross-checks (crosscheck_ftrace.sh, crosscheck_perf.sh)
share: reading the suite's rounds, pairing the reference runs, and the
verdict written to results/crosscheck/<tracer>.json.

The shell scripts run rounds that alternate the suite and the standard tool;
they leave a file listing the suite's result.json paths and a JSON-lines file
of reference runs ({"round", "variant": "untraced"|"traced", "run", "loop":
<crosscheck_getpid_loop output>, ...}).
"""
import datetime
import json
import platform
import statistics
import sys

KEY = "ns_per_call_median_chunk"


def load_suites(list_path, tracer, workload):
    """[(result.json path, benchmark)] of every round."""
    suites = []
    for path in open(list_path).read().split():
        doc = json.load(open(path))
        bench = [b for b in doc["benchmarks"] if b["tracer"] == tracer and b["workload"] == workload]
        if not bench:
            sys.exit(f"crosscheck_{tracer}: no {tracer}/{workload} benchmark in {path}")
        suites.append((path, bench[0]))
    return suites


def pair_reference(ref_path):
    """Reference runs paired by (round, run): (by_variant, pairs, diffs)."""
    runs = [json.loads(line) for line in open(ref_path)]
    by = {"untraced": {}, "traced": {}}
    for r in runs:
        by[r["variant"]][(r["round"], r["run"])] = r
    pairs = sorted(set(by["untraced"]) & set(by["traced"]))
    diffs = [by["traced"][p]["loop"][KEY] - by["untraced"][p]["loop"][KEY] for p in pairs]
    return by, pairs, diffs


def reference_summary(by, pairs, diffs):
    """The fields every reference block has."""
    return {
        "run_pairs": len(pairs),
        "untraced_ns_per_call_median": statistics.median(by["untraced"][p]["loop"][KEY] for p in pairs),
        "traced_ns_per_call_median": statistics.median(by["traced"][p]["loop"][KEY] for p in pairs),
        "overhead_ns_per_call": statistics.median(diffs),
        "estimator": "median over all run pairs of (traced - untraced) median-chunk ns per call",
        "overhead_ns_per_pair": diffs,
    }


def suite_summary(suites, round_fields):
    """(suite block, its overhead or None, whether every round verified its events)."""
    ok = [b for _, b in suites if b["status"] == "ok" and b.get("overhead_ns_per_event") is not None]
    status_ok = bool(suites) and len(ok) == len(suites)
    verified = status_ok and all(b["events"]["verification"] == "passed" for b in ok)
    rounds = [b["overhead_ns_per_event"]["median"] for b in ok]
    suite_ns = statistics.median(rounds) if status_ok else None
    block = {
        "overhead_ns_per_event": suite_ns,
        "estimator": "median over rounds of each run's overhead_ns_per_event.median",
        "round_overheads_ns": rounds,
        "events_verified": verified,
        "rounds": [dict({"result_json": p, "status": b["status"], "error": b.get("error", ""),
                         "options": b.get("options", {}),
                         "overhead_ns_per_event": b.get("overhead_ns_per_event"),
                         "events": b["events"]}, **round_fields(b)) for p, b in suites],
    }
    return block, suite_ns, verified


def verdict(tracer, event, suite, suite_ns, suite_verified, ref, ref_verified, tol, out_path):
    """Writes the cross-check JSON, prints a one-line summary, returns the exit status."""
    result = {
        "schema": "tracebench.crosscheck",
        "schema_version": 1,
        "tracer": tracer,
        "event": event,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kernel": platform.release(),
        "suite": suite,
        "reference": ref,
        "tolerance": tol,
    }
    if suite_ns is not None and ref["overhead_ns_per_call"] > 0:
        rel = (suite_ns - ref["overhead_ns_per_call"]) / ref["overhead_ns_per_call"]
        result["relative_difference"] = rel
        result["agree"] = abs(rel) <= tol and suite_verified and ref_verified
    else:
        result["relative_difference"] = None
        result["agree"] = False
    json.dump(result, open(out_path, "w"), indent=2)
    print(json.dumps({"suite_overhead_ns": suite_ns, "reference_overhead_ns": ref["overhead_ns_per_call"],
                      "relative_difference": result["relative_difference"], "agree": result["agree"],
                      "reference_events_verified": ref_verified, "out": out_path}))
    return 0 if result["agree"] else 1
