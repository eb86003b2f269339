#!/usr/bin/env python3
"""Upstream's documented tracing changes beside what this suite measured.

  upstream-table.py [--changes FILE] [--out FILE.md] COMPARE_DIR...

Each COMPARE_DIR is a compare-kernels.sh --outdir (compare.json, A/ and B/
with their runs and each boot's vm.json).  For every row compared, the
changes of FILE (default: upstream-changes.json beside this script) that
landed between A's kernel and B's and name that row (tracer, workload,
options) are put beside it: upstream's figure and source, the kernels, the
medians, B/A, the verdict with its detectable change, and what the VM lab's
clock does to the figure.  A row no change names is a control; a change no
row measured is listed as not measured.  Writes Markdown to stdout, or to
--out (atomically; an existing file is not overwritten).  Exit 2 on bad
input, with nothing written.
"""
import argparse
import glob
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


class BadInput(Exception):
    pass


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{what}: {path}: {e}")


def version_of(release):
    """(major, minor) of a kernel release such as 6.12.107+deb12-amd64."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    if not m:
        raise BadInput(f"not a kernel release: {release!r}")
    return int(m.group(1)), int(m.group(2))


def side_facts(cdir, side):
    """The kernel, the VM lab's clock and the benchmarks of one side."""
    vms = sorted(glob.glob(os.path.join(cdir, side, "round*", "vm.json")))
    runs = sorted(glob.glob(os.path.join(cdir, side, "runs", "*", "result.json")))
    if not vms or not runs:
        raise BadInput(f"{cdir}/{side}: no round*/vm.json or runs/*/result.json (not a compare-kernels.sh --outdir?)")
    vm = load_json(vms[0], "vm.json")
    benchmarks, commands = {}, set()
    for path in runs:
        run = load_json(path, "result.json")
        commands.add(" ".join(run.get("context", {}).get("command_line", [])))
        for b in run.get("benchmarks", []):
            benchmarks.setdefault(b["name"], b)
    return {"release": vm.get("kernel_release", ""), "clock": vm.get("clock", "wall"), "accel": vm.get("accel", ""),
            "benchmarks": benchmarks, "commands": sorted(commands)}


def option_of(bench, key):
    """An option as the run asked it, else as the tracer reported it."""
    if key in (bench.get("options") or {}):
        return str(bench["options"][key])
    details = bench.get("tracer_details")
    if isinstance(details, dict) and key in details:
        return str(details[key])
    return None


def names_row(match, bench):
    if bench.get("tracer") != match["tracer"] or bench.get("workload") not in match["workloads"]:
        return False
    return all(option_of(bench, k) == v for k, v in match.get("options", {}).items())


def clock_note(a, b):
    if "icount" in (a["clock"], b["clock"]):
        return "guest instructions (icount): a trap is priced as its instructions, not its cycles"
    if "tcg" in (a["accel"], b["accel"]):
        return "TCG wall clock: emulated traps and syscalls, boots drift"
    return f"{a['accel'] or 'host'}: hardware traps"


def unit_of(a):
    return "instr" if a["clock"] == "icount" else "ns"


def verdict_text(row):
    v = row.get("verdict", "?")
    mde = row.get("mde_80")
    return f"{v} (MDE80 {100 * mde:.1f}%)" if isinstance(mde, (int, float)) else v


def comparison(cdir):
    cmp_ = load_json(os.path.join(cdir, "compare.json"), "compare.json")
    if not isinstance(cmp_.get("rows"), list):
        raise BadInput(f"{cdir}/compare.json: no rows")
    a, b = side_facts(cdir, "A"), side_facts(cdir, "B")
    return {"dir": cdir, "rows": cmp_["rows"], "A": a, "B": b}


def changes_between(changes, a_release, b_release):
    lo, hi = sorted((version_of(a_release), version_of(b_release)))
    return [c for c in changes if lo < version_of(c["landed"]) <= hi]


def table_rows(comp, changes):
    """(change or None, compare row, benchmark) for each row of a comparison."""
    a, b = comp["A"], comp["B"]
    applying = changes_between(changes, a["release"], b["release"])
    out, seen = [], set()
    for row in comp["rows"]:
        bench = a["benchmarks"].get(row["benchmark"]) or b["benchmarks"].get(row["benchmark"])
        if bench is None:
            raise BadInput(f"{comp['dir']}: {row['benchmark']} is in compare.json but in no run")
        named = [c for c in applying if any(names_row(m, bench) for m in c["rows"])]
        for c in named:
            seen.add(c["title"])
        out.append((named, row, bench))
    return out, [c for c in applying if c["title"] not in seen]


def row_label(bench):
    opts = ", ".join(f"{k}={v}" for k, v in sorted((bench.get("options") or {}).items()))
    return f"{bench['tracer']}/{bench['workload']}" + (f" ({opts})" if opts else "")


def markdown_row(named, row, bench, comp):
    a, b = comp["A"], comp["B"]
    unit = unit_of(a)
    change = "; ".join(f"{c['landed']}: {c['title']} ({c['source']})" for c in named) or "none listed (control)"
    figure = "; ".join(c["upstream_figure"] for c in named) or "-"
    med = lambda v: f"{v:.0f} {unit}" if isinstance(v, (int, float)) else "-"
    ratio = row.get("ratio")
    ratio_text = f"{ratio:.3f}" if isinstance(ratio, (int, float)) else "-"
    return (f"| {change} | {figure} | {row_label(bench)}, {row.get('what', '')} | {a['release']} | {b['release']} | "
            f"{med(row.get('a_median_ns'))} | {med(row.get('b_median_ns'))} | {ratio_text} | {verdict_text(row)} | "
            f"{clock_note(a, b)} |")


HEADER = ("| upstream's documented change (source) | upstream's figure | row here | A | B | A median | B median | B/A "
          "| verdict | what the lab's clock does to it |\n| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |")


def render(comps, changes):
    lines = ["# Upstream's documented changes beside this suite's kernel A/B", ""]
    unmeasured, measured = {}, set()
    for comp in comps:
        rows, missing = table_rows(comp, changes)
        lines += [f"Compared in `{comp['dir']}`; runs: " + "; ".join(f"`{c}`" for c in comp["A"]["commands"]), "",
                  HEADER]
        lines += [markdown_row(named, row, bench, comp) for named, row, bench in rows]
        lines.append("")
        kernels = (comp["A"]["release"], comp["B"]["release"])
        measured |= {(c["title"], kernels) for named, _, _ in rows for c in named}
        unmeasured.update({(c["title"], kernels): c for c in missing})
    missing = [(c, key[1]) for key, c in unmeasured.items() if key not in measured]
    if missing:
        lines.append("Changes between these kernels that no row here measured:")
        lines += [f"- {c['landed']}: {c['title']} ({c['source']}), between {a} and {b}" for c, (a, b) in missing]
        lines.append("")
    return "\n".join(lines)


def write_atomically(path, text):
    if os.path.exists(path):
        raise BadInput(f"{path} exists: not overwritten")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".upstream-table.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--changes", default=os.path.join(HERE, "upstream-changes.json"))
    ap.add_argument("--out")
    ap.add_argument("dirs", nargs="+", metavar="COMPARE_DIR")
    args = ap.parse_args(argv)
    try:
        changes = load_json(args.changes, "changes")["changes"]
        text = render([comparison(d) for d in args.dirs], changes)
        if args.out:
            write_atomically(args.out, text)
        else:
            sys.stdout.write(text)
    except (BadInput, KeyError) as e:
        print(f"upstream-table: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
