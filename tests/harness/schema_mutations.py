#!/usr/bin/python3
"""The results schema validator refuses what it must.

Given a valid result.json (tests/harness/results_test.cc writes its fully
populated sample run), checks that scripts/validate_result.py accepts it as
it is, then that it refuses each mutation of the table below (exit 1, a
message naming the mutated field): a validator that accepts everything, a
schema that lost a constraint, or a mutation that no longer changes the
document each fail this test.
Usage: schema_mutations.py <source dir> <valid result.json>
"""
import contextlib
import copy
import io
import json
import pathlib
import sys
import tempfile

DELETE = object()

# (what, JSON path, new value or DELETE, text the validator's message must contain)
MUTATIONS = [
    ("no schema_version", ["schema_version"], DELETE, "schema_version"),
    ("another schema_version", ["schema_version"], 2, "schema_version"),
    ("an unknown top-level field", ["figures"], {}, "figures"),
    ("benchmarks not an array", ["benchmarks"], {}, "benchmarks"),
    ("no CPUs", ["context", "cpus"], 0, "context/cpus"),
    ("a date that is not UTC ISO 8601", ["context", "date_utc"], "2026-11-22 00:00:00", "context/date_utc"),
    ("an unknown TSC source", ["context", "tsc", "source"], "guessed", "context/tsc/source"),
    ("a TSC rate of 0", ["context", "tsc", "hz"], 0, "context/tsc/hz"),
    ("a config digest that is not sha256", ["context", "kernel", "config_sha256"], "abc", "context/kernel/config_sha256"),
    ("an unknown context field", ["context", "turbo"], True, "context"),
    ("an unavailable counter without its reason", ["context", "counters", 1, "unavailable_reason"], DELETE,
     "context/counters/1"),
    ("an unknown counter source", ["context", "counters", 0, "source"], "pmu", "context/counters/0/source"),
    ("an unknown status", ["benchmarks", 0, "status"], "fine", "benchmarks/0/status"),
    ("an unknown probe kind", ["benchmarks", 0, "probe_kind"], "kprobe", "benchmarks/0/probe_kind"),
    ("one repetition", ["benchmarks", 0, "repetitions"], 1, "benchmarks/0/repetitions"),
    ("no threads", ["benchmarks", 0, "threads"], 0, "benchmarks/0/threads"),
    ("a summary of no sample", ["benchmarks", 0, "traced", "cycles_per_event", "n"], 0,
     "benchmarks/0/traced/cycles_per_event"),
    ("a negative spread", ["benchmarks", 0, "baseline", "cycles_per_event", "stddev"], -1,
     "benchmarks/0/baseline/cycles_per_event"),
    ("a zero in place of a missing summary", ["benchmarks", 0, "traced", "ns_per_event"], 0,
     "benchmarks/0/traced/ns_per_event"),
    ("an ok benchmark without its ns figures", ["benchmarks", 0, "traced", "ns_per_event"], None,
     "benchmarks/0/traced/ns_per_event"),
    ("an ok benchmark without its overhead", ["benchmarks", 0, "overhead_ns_per_event"], None,
     "benchmarks/0/overhead_ns_per_event"),
    ("a failed benchmark with an overhead", ["benchmarks", 1, "overhead_cycles_per_event"],
     {"median": 9, "ci_low": 8.5, "ci_high": 9.5, "ci_confidence": 0.95, "n": 3}, "benchmarks/1/overhead_cycles_per_event"),
    ("a failed benchmark without its reason", ["benchmarks", 1, "error"], "", "benchmarks/1/error"),
    ("a negative sample count", ["benchmarks", 0, "baseline", "samples"], -1, "benchmarks/0/baseline/samples"),
    ("a counter as text", ["benchmarks", 0, "traced", "counters_per_event", "task-clock"], "4.5",
     "benchmarks/0/traced/counters_per_event/task-clock"),
    ("an overhead as text", ["benchmarks", 0, "overhead_cycles_per_event"], "9", "benchmarks/0/overhead_cycles_per_event"),
    ("a confidence above 1", ["benchmarks", 0, "overhead_ns_per_event", "ci_confidence"], 1.5,
     "benchmarks/0/overhead_ns_per_event/ci_confidence"),
    ("a median without its interval", ["benchmarks", 0, "overhead_cycles_per_event", "ci_low"], DELETE,
     "benchmarks/0/overhead_cycles_per_event"),
    ("an unknown verification verdict", ["benchmarks", 0, "events", "verification"], "mostly", "benchmarks/0/events/verification"),
    ("negative events", ["benchmarks", 0, "events", "fired"], -1, "benchmarks/0/events/fired"),
    ("events without their count", ["benchmarks", 0, "events", "recorded"], DELETE, "benchmarks/0/events"),
    ("an option that is not a string", ["benchmarks", 0, "options", "ecbs"], 3, "benchmarks/0/options/ecbs"),
    ("an unknown benchmark field", ["benchmarks", 1, "speedup"], 2.0, "benchmarks/1"),
    ("NaN for an overhead (not JSON)", ["benchmarks", 0, "overhead_cycles_per_event", "median"], float("nan"),
     "NaN"),
    ("Infinity for a sample figure (not JSON)", ["benchmarks", 0, "traced", "cycles_per_event", "max"], float("inf"),
     "Infinity"),
]


def mutate(doc, path, value):
    d = copy.deepcopy(doc)
    parent = d
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if value is DELETE:
        if isinstance(parent, dict) and last not in parent:
            raise KeyError(f"{'/'.join(map(str, path))} is not in the document: the mutation changes nothing")
        del parent[last]
    else:
        if isinstance(parent, dict) and last in parent and parent[last] == value:
            raise ValueError(f"{'/'.join(map(str, path))} is already {value!r}: the mutation changes nothing")
        parent[last] = value
    return d


def validate(validator, doc, tmp):
    """validate_result.py's main() on the document written to a file (in this
    process: a python3 and jsonschema start per mutation would take seconds)."""
    path = pathlib.Path(tmp) / "result.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity are written as such: not JSON
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = validator.main([str(path)])
    return rc, out.getvalue()


def main():
    src, valid = sys.argv[1], sys.argv[2]
    sys.path.insert(0, str(pathlib.Path(src) / "scripts"))
    import validate_result as validator
    doc = json.loads(pathlib.Path(valid).read_text())
    fail = 0
    with tempfile.TemporaryDirectory(prefix="tracebench-schema-") as tmp:
        rc, out = validate(validator, doc, tmp)
        if rc != 0:
            print(f"FAIL: the valid document is refused (exit {rc}):\n{out}")
            return 1
        print(f"ok: the populated result is valid ({len(doc['benchmarks'])} benchmarks)")
        for what, path, value, says in MUTATIONS:
            try:
                bad = mutate(doc, path, value)
            except (KeyError, ValueError, IndexError) as e:
                print(f"FAIL: {what}: {e}")
                fail += 1
                continue
            rc, out = validate(validator, bad, tmp)
            if rc != 1:
                print(f"FAIL: {what}: the validator exited {rc}, not 1:\n{out}")
                fail += 1
            elif says not in out:
                print(f"FAIL: {what}: refused, but the message does not name {says!r}:\n{out}")
                fail += 1
            else:
                print(f"ok: refused {what}: {out.strip().splitlines()[0]}")
    print(f"{len(MUTATIONS)} mutations, {fail} not refused as they must be")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
