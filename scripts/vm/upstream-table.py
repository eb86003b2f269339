#!/usr/bin/env python3
"""Upstream's documented tracing changes beside what this suite measured.

  upstream-table.py [--changes FILE] [--out FILE.md] [--host RUN_DIR]... COMPARE_DIR...

Each COMPARE_DIR is a compare-kernels.sh --outdir (compare.json, A/ and B/
with their runs and each boot's vm.json).  For every row compared, the
changes of FILE (default: upstream-changes.json beside this script) that
landed between A's kernel and B's and name that row (tracer, workload,
options) are put beside it: upstream's figure and source, the kernels, the
medians, B/A, the verdict with its detectable change, and what the VM lab's
clock does to the figure.  A row no change names is a control; a change no
row measured is listed as not measured.  --host: a host's `tracebench run`
result directories, on a kernel newer than the lab's; a change that landed
after every kernel compared and at or before the host's, and that says what
its rows are read against (relative_to), is shown with each row's cost over
that reference on each kernel: the lab's from the comparisons' runs, the
host's from its runs, and whether the host's ratio lies below or above the
lab's (the two machines' own scales cancel in a ratio on one kernel; what
emulation does to the lab's is said).  Writes Markdown to stdout, or to
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
    benchmarks, commands, loaded = {}, set(), []
    for path in runs:
        run = load_json(path, "result.json")
        loaded.append(run)
        commands.add(" ".join(run.get("context", {}).get("command_line", [])))
        for b in run.get("benchmarks", []):
            benchmarks.setdefault(b["name"], b)
    return {"release": vm.get("kernel_release", ""), "clock": vm.get("clock", "wall"), "accel": vm.get("accel", ""),
            "benchmarks": benchmarks, "commands": sorted(commands), "runs": loaded}


def host_facts(dirs):
    """The kernel and the runs of a host's `tracebench run` directories."""
    runs, commands = [], set()
    for d in dirs:
        paths = sorted(glob.glob(os.path.join(d, "result.json")) + glob.glob(os.path.join(d, "*", "result.json")))
        if not paths:
            raise BadInput(f"--host {d}: no result.json in it or in its subdirectories (not a run directory?)")
        for path in paths:
            run = load_json(path, "result.json")
            execution = run.get("context", {}).get("execution", "host")
            if execution != "host":
                raise BadInput(f"--host {path}: a run made under {execution}, not on this machine's own kernel")
            runs.append(run)
            commands.add(" ".join(run.get("context", {}).get("command_line", [])))
    releases = {r.get("context", {}).get("kernel", {}).get("release", "") for r in runs}
    if len(releases) != 1:
        raise BadInput(f"--host: the runs are of {len(releases)} kernels ({', '.join(sorted(releases))}), not one")
    release = releases.pop()
    version_of(release)
    return {"release": release, "runs": runs, "commands": sorted(commands),
            "hypervisor": runs[0].get("context", {}).get("hypervisor", "")}


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
    shown = dict(bench.get("options") or {})
    if bench.get("payload_bytes"):
        shown["payload"] = bench["payload_bytes"]
    opts = ", ".join(f"{k}={v}" for k, v in sorted(shown.items()))
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


def render(comps, changes, host=None):
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
    if host:
        lines += render_host(comps, changes, host)
    return "\n".join(lines)


def overhead_of(bench):
    """(median, low, high) of a benchmark's overhead per event, in cycles where it has them."""
    for key in ("overhead_cycles_per_event", "overhead_ns_per_event"):
        o = bench.get(key)
        if isinstance(o, dict) and isinstance(o.get("median"), (int, float)):
            return o["median"], o.get("ci_low", o["median"]), o.get("ci_high", o["median"])
    return None


def same_but_workload(a, b):
    keys = ("tracer", "action", "payload_bytes", "threads")
    return all(a.get(k) == b.get(k) for k in keys) and (a.get("options") or {}) == (b.get("options") or {})


def run_ratios(runs, match, reference):
    """Per run that measured a row `match` names and its reference workload
    beside it: (row label, ratio, low, high) of the row's overhead over the
    reference's (the interval's ends over the other's opposite ends)."""
    out = []
    for run in runs:
        benches = run.get("benchmarks", [])
        for b in benches:
            if not names_row(match, b):
                continue
            ref = next((r for r in benches if r.get("workload") == reference and same_but_workload(r, b)), None)
            ob, orf = overhead_of(b), overhead_of(ref) if ref else None
            if not ob or not orf or min(orf) <= 0:
                continue
            out.append((row_label(b), ob[0] / orf[0], ob[1] / orf[2], ob[2] / orf[1]))
    return out


def ratio_span(ratios):
    """The median ratio and the widest interval over the runs, or None."""
    if not ratios:
        return None
    points = sorted(r[1] for r in ratios)
    return points[len(points) // 2], min(r[2] for r in ratios), max(r[3] for r in ratios)


def span_text(span):
    return "-" if span is None else f"{span[0]:.3f} [{span[1]:.3f}, {span[2]:.3f}]"


def host_verdict(host, lab):
    if host is None or lab is None:
        return "cannot tell: not measured on both"
    if host[2] < lab[1]:
        return "lower on the host"
    if host[1] > lab[2]:
        return "higher on the host"
    return "cannot tell: the intervals overlap"


def lab_kernels(comps):
    """Every kernel the comparisons ran, oldest first, with the runs and the facts of its side."""
    kernels = {}
    for comp in comps:
        for side in ("A", "B"):
            facts = comp[side]
            k = kernels.setdefault(facts["release"], {"facts": facts, "runs": []})
            k["runs"] += facts["runs"]
    return [(rel, kernels[rel]) for rel in sorted(kernels, key=version_of)]


def host_changes(changes, kernels, host):
    newest_lab = max(version_of(rel) for rel, _ in kernels)
    return [c for c in changes if c.get("relative_to") and newest_lab < version_of(c["landed"]) <= version_of(host["release"])]


def host_rows(change, kernels, host):
    """One line per row label the host measured: the ratio on each lab kernel and on the host."""
    ref = change["relative_to"]
    lines, labels = [], []
    for match in change["rows"]:
        for label, *_ in run_ratios(host["runs"], match, ref):
            if label not in labels:
                labels.append(label)
    for label in labels:
        pick = lambda runs: ratio_span([r for m in change["rows"] for r in run_ratios(runs, m, ref) if r[0] == label])
        labs = [pick(k["runs"]) for _, k in kernels]
        on_host = pick(host["runs"])
        newest = next((x for x in reversed(labs) if x is not None), None)
        lab_notes = sorted({clock_note(k["facts"], k["facts"]) for _, k in kernels})
        lines.append(f"| {change['landed']}: {change['title']} ({change['source']}) | {change['upstream_figure']} | "
                     f"{label} over {ref} | " + " | ".join(span_text(x) for x in labs) + f" | {span_text(on_host)} | "
                     f"{host_verdict(on_host, newest)} | lab: {'; '.join(lab_notes)}; host: hardware traps |")
    return lines


def render_host(comps, changes, host):
    kernels = lab_kernels(comps)
    applying = host_changes(changes, kernels, host)
    if not applying:
        return []
    lines = ["## Changes the host's kernel has and the lab's kernels do not", "",
             f"Host: kernel {host['release']}" + (f" under {host['hypervisor']}" if host["hypervisor"] else "") +
             "; runs: " + "; ".join(f"`{c}`" for c in host["commands"]) + ". Each figure is a row's overhead over "
             "its reference workload's on the same kernel (median over the runs, and the widest interval): the "
             "lab's and the host's machines differ, so only such ratios stand side by side.", "",
             "| upstream's documented change (source) | upstream's figure | row here, over | " +
             " | ".join(f"{rel} (lab)" for rel, _ in kernels) + f" | {host['release']} (host) | verdict | clocks |",
             "| --- | --- | --- | " + " | ".join("---:" for _ in kernels) + " | ---: | --- | --- |"]
    unmeasured = []
    for c in applying:
        rows = host_rows(c, kernels, host)
        lines += rows
        if not rows:
            unmeasured.append(c)
    lines.append("")
    if unmeasured:
        lines.append("Changes the host's kernel has that its runs did not measure (a row and its reference workload):")
        lines += [f"- {c['landed']}: {c['title']} ({c['source']}), over {c['relative_to']}" for c in unmeasured]
        lines.append("")
    return lines


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
    ap.add_argument("--host", action="append", default=[], metavar="RUN_DIR")
    ap.add_argument("dirs", nargs="+", metavar="COMPARE_DIR")
    args = ap.parse_args(argv)
    try:
        changes = load_json(args.changes, "changes")["changes"]
        host = host_facts(args.host) if args.host else None
        text = render([comparison(d) for d in args.dirs], changes, host)
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
