#!/usr/bin/python3
"""Validates tracebench result.json files against results/schema.json,
model.json files (`tracebench model fit`) against results/model.schema.json
and validations (`tracebench model validate --out`) against
results/validation.schema.json (chosen by the file's "schema" field).

Usage: validate_result.py RESULT.json [...] [--require-ok [--or-unsteady]]
  --require-ok   also fail when a benchmark's status is not "ok"
  --or-unsteady  with --require-ok, "unsteady" passes too (measured and
                 verified, its overhead on no one level): for an emulated
                 guest, whose clock the tests do not judge
Exit status 0 when every file is valid.
"""
import functools
import json
import pathlib
import sys

import jsonschema

RESULTS = pathlib.Path(__file__).resolve().parent.parent / "results"
SCHEMAS = {"tracebench.result": RESULTS / "schema.json", "tracebench.model": RESULTS / "model.schema.json",
           "tracebench.validation": RESULTS / "validation.schema.json"}


class NotJson(ValueError):
    pass


def reject_constant(name):
    # Python's json reads NaN, Infinity and -Infinity, which JSON does not
    # have (and a figure that was not measured is null, never NaN).
    raise NotJson(f"{name} is not a JSON number (a figure that was not measured is null)")


def load(path):
    return json.loads(pathlib.Path(path).read_text(), parse_constant=reject_constant)


@functools.lru_cache(maxsize=1)
def load_validators():
    validators = {}
    for name, path in SCHEMAS.items():
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[name] = jsonschema.Draft202012Validator(schema)
    return validators


def check_repetitions_stop(path, doc):
    """What the schema cannot say: a benchmark stopped by its interval has
    that interval within its target, from six repetitions on (the fewest whose
    median interval covers 95%); one stopped at its cap ran the cap after the
    repetitions a level shift left out (or reached the limit the file records:
    `limit`, twice the cap in results written before it); none ran more than
    its limit."""
    bad = 0
    for b in doc.get("benchmarks", []):
        stop = b.get("repetitions_stop")
        if not stop:
            continue
        why = None
        kept = b["repetitions"] - len(b.get("left_out_overheads_cycles", []))
        limit = stop.get("limit", 2 * stop["cap"])
        if b["repetitions"] > limit:
            why = f"{b['repetitions']} repetitions, more than the limit {limit}"
        elif stop["rule"] == "interval" and stop["half_width_cycles"] > stop["target_cycles"] * (1 + 1e-9):
            # (up to rounding, as the runner's rule: a quantized clock puts widths exactly on the target)
            why = f"stopped by its interval, yet +-{stop['half_width_cycles']} exceeds the target {stop['target_cycles']}"
        elif stop["rule"] == "interval" and b["repetitions"] < 6:
            why = f"stopped by its interval after {b['repetitions']} repetitions (6 needed)"
        elif stop["rule"] in ("cap", "fixed") and b["status"] == "ok" and kept < stop["cap"] \
                and b["repetitions"] != limit:
            why = f"stopped by '{stop['rule']}' after {b['repetitions']} repetitions ({kept} kept) of {stop['cap']}"
        if why:
            print(f"{path}: {b['name']}: repetitions_stop: {why}", file=sys.stderr)
            bad += 1
    return bad


def main(argv):
    require_ok = "--require-ok" in argv
    passing = {"ok", "unsteady"} if "--or-unsteady" in argv else {"ok"}
    paths = [a for a in argv if not a.startswith("--")]
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    validators = load_validators()
    bad = 0
    for p in paths:
        try:
            doc = load(p)
        except ValueError as e:  # json.JSONDecodeError and NotJson
            print(f"{p}: not valid JSON: {e}", file=sys.stderr)
            bad += 1
            continue
        validator = validators.get(doc.get("schema") if isinstance(doc, dict) else None, validators["tracebench.result"])
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors:
            print(f"{p}: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
        bad += bool(errors)
        bad += check_repetitions_stop(p, doc) if not errors and isinstance(doc, dict) else 0
        if require_ok:
            for b in doc.get("benchmarks", []):
                if b.get("status") not in passing:
                    print(f"{p}: {b.get('name')}: {b.get('status')}: {b.get('error')}", file=sys.stderr)
                    bad += 1
                elif b.get("status") != "ok":
                    print(f"{p}: {b.get('name')}: {b.get('status')} (accepted): {b.get('error')}")
        if not errors and doc.get("schema") == "tracebench.model":
            print(f"{p}: valid model ({len(doc.get('entries', []))} entries)")
        elif not errors and doc.get("schema") == "tracebench.validation":
            print(f"{p}: valid validation")
        elif not errors:
            print(f"{p}: valid ({len(doc.get('benchmarks', []))} benchmarks)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
