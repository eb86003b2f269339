#!/usr/bin/python3
"""Draws `tracebench report`'s page from report-input.json (written by the
tracebench binary from the results schema; nothing here recomputes a figure).

    report.py report-input.json OUT_DIR  ->  OUT_DIR/index.html (SVG inline),
                                             OUT_DIR/report.md, OUT_DIR/figures/*.svg
"""
import html
import io
import json
import os
import sys
from collections import defaultdict

try:
    import matplotlib
    import matplotlib.ticker
except ImportError:  # the report area is not installed (scripts/setup.sh leaves it out)
    sys.exit("tracebench report: the drawing needs matplotlib, which is not installed here; "
             "`scripts/setup.sh --area report` installs it (python3-matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"figure.dpi": 96, "font.size": 9, "svg.fonttype": "none", "axes.grid": True,
                     "grid.alpha": 0.3})


WARN = "#c0392b"  # a warning or a verification that did not pass: see the table under the chart
GOOD = "#2e86c1"  # verified, no warning (information notes do not count)
COLOUR_LEGEND = ("Colours: blue, verified with no warning; red, a warning (something that weakens the figure: "
                 "see the table under the chart) or a verification that did not pass. Information notes (how a "
                 "sample was sized) are listed but paint nothing.")


def options_text(options):
    return ",".join(f"{k}={v}" for k, v in sorted(options.items()))


def label(b, with_samples=False):
    """What a user chose for this benchmark, never the same words for two
    different configurations: tracer, action (left out where it is the tracer's
    only behaviour: `none`, `default`), options, the idle gap, and the samples
    per block where the report holds the same configuration with another."""
    parts = [b["tracer"]]
    if b["action"] not in ("none", "default", b["tracer"]):
        parts.append(b["action"])
    text = " ".join(parts)
    extra = []
    if b["options"]:
        extra.append(options_text(b["options"]))
    if b.get("gap_us"):
        extra.append(f"gap {b['gap_us']} µs")
    if with_samples:
        extra.append(f"{b['samples_per_block']} samples/block")
    return text + (f" ({'; '.join(extra)})" if extra else "")


def sample_sizes_differ(configs, core):
    """The cores (what a configuration is without its samples per block) held
    with more than one samples-per-block value: their labels say it."""
    seen = defaultdict(set)
    for c in configs:
        seen[core(c)].add(c["samples_per_block"])
    return {k for k, v in seen.items() if len(v) > 1}


def config_core(c):
    return (c["tracer"], c["workload"], c["action"], c["payload_bytes"], c["threads"],
            tuple(sorted(c["options"].items())), c.get("gap_us", 0))


def has_warning(c):
    return bool(c["warnings"]) or c["events"]["verification"] in ("failed", "partial")


class Page:
    def __init__(self, out):
        self.out = out
        self.parts = []  # HTML
        self.md = []
        self.figures = 0
        os.makedirs(os.path.join(out, "figures"), exist_ok=True)

    def h(self, level, text):
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")
        self.md.append("#" * level + " " + text + "\n")

    def p(self, text, cls=""):
        self.parts.append(f"<p class='{cls}'>{html.escape(text)}</p>")
        self.md.append(text + "\n")

    def table(self, head, rows, cls=""):
        t = [f"<table class='{cls}'><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
        for r in rows:
            t.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
        t.append("</table>")
        self.parts.append("".join(t))
        self.md.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n" +
                       "".join("| " + " | ".join(str(c) for c in r) + " |\n" for r in rows))

    def figure(self, fig, name, caption):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        plt.close(fig)
        svg = buf.getvalue()
        with open(os.path.join(self.out, "figures", name + ".svg"), "w") as f:
            f.write(svg)
        svg = svg[svg.index("<svg"):]
        self.parts.append(f"<figure id='{html.escape(name)}'>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>")
        self.md.append(f"![{caption}](figures/{name}.svg)\n")
        self.figures += 1


def num(v, spec):
    """A figure formatted, or a dash for none (null in the input)."""
    return "—" if v is None else format(v, spec)


def interval_ok(c):
    return c["low"] is not None and c["high"] is not None and c["low"] <= c["median"] <= c["high"]


def fmt_ci(c, unit=""):
    if not c or c.get("median") is None:
        return "—"
    # Each interval with the confidence it has (50% with 2 repetitions).
    text = (f"{c['median']:.1f} [{num(c['low'], '.1f')}, {num(c['high'], '.1f')}]{unit} "
            f"({c.get('confidence_label', '?')})")
    return text if interval_ok(c) else text + " (interval does not hold the median: not drawn)"


def err_bars(cis):
    """matplotlib's [below, above] error bars; an interval that does not hold
    its median (schema-valid, but inconsistent) gets none instead of a
    negative bar, and the table says so (fmt_ci)."""
    below = [c["median"] - c["low"] if interval_ok(c) else 0.0 for c in cis]
    above = [c["high"] - c["median"] if interval_ok(c) else 0.0 for c in cis]
    return [below, above]


def ci_caption(cis):
    """The intervals' confidence for a chart's label: one figure when they share it."""
    labels = sorted({c.get("confidence_label", "?") for c in cis if c})
    if len(labels) == 1:
        return f"{labels[0]} interval"
    return "interval; confidence " + ", ".join(labels) if labels else "interval"


def legend_patches(ax):
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=GOOD, label="verified, no warning"), Patch(color=WARN, label="warning: see table")],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def cost_chart(page, cs, name, caption, with_workload, multi):
    """Bars of overhead per event, one per configuration, cheapest on top."""
    cs = sorted(cs, key=lambda c: c["overhead_ns"]["median"], reverse=True)
    names = [(f"{c['workload']}: " if with_workload else "") + label(c, config_core(c) in multi)
             + (" ⚠" if has_warning(c) else "") for c in cs]
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(cs) + 1.1))
    y = list(range(len(cs)))
    med = [c["overhead_ns"]["median"] for c in cs]
    ax.barh(y, med, xerr=err_bars([c["overhead_ns"] for c in cs]), color=[WARN if has_warning(c) else GOOD for c in cs], capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    for yi, c in zip(y, cs):
        m = c["overhead_ns"]["median"]
        ax.annotate(f"{m:,.0f}" if abs(m) >= 100 else f"{m:.3g}", (max(c["overhead_ns"]["high"] if interval_ok(c["overhead_ns"]) else m, m), yi),
                    xytext=(4, 0), textcoords="offset points", va="center", fontsize=7)
    # Probe points a hundredfold apart (a uprobe next to a tracepoint) on one
    # linear axis would leave the cheap ones as slivers.
    positive = [m for m in med if m > 0]
    log = len(positive) == len(med) and len(med) > 1 and max(med) > 30 * min(med)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(f"overhead, ns per event (median, {ci_caption([c['overhead_ns'] for c in cs])})"
                  + (", log axis" if log else ""))
    legend_patches(ax)
    page.figure(fig, name, caption)
    page.table(["configuration", "workload", "runs", "overhead ns", "untraced ns", "traced ns", "fired", "recorded",
                "lost", "verification", "warnings", "information"],
               [[label(c, config_core(c) in multi), c["workload"], c["runs"], fmt_ci(c["overhead_ns"]),
                 f"{c['untraced_ns_p50']:.1f}" if c["untraced_ns_p50"] is not None else "—",
                 f"{c['traced_ns_p50']:.1f}" if c["traced_ns_p50"] is not None else "—",
                 c["events"]["fired"], c["events"]["recorded"], c["events"]["lost"], c["events"]["verification"],
                 "; ".join(c["warnings"]) or "—", "; ".join(c["information"]) or "—"] for c in cs], "figures")


def cost_section(page, configs):
    """Tracers side by side at each payload size present: at payload 0 one
    chart per workload (what an event costs at that probe point), at each
    other size one chart across the workloads that carry it (what an N-byte
    record costs in each tracer)."""
    usable = [c for c in configs if c["runs_ok"] and c["overhead_ns"] and c["threads"] == 1
              and "ecbs" not in c["options"]]
    if not usable:
        page.p("No benchmark with an overhead figure at one thread.", "absent")
        return
    multi = sample_sizes_differ(configs, config_core)
    page.h(2, "Cost per event at each payload size")
    page.p("Traced minus untraced cost per event: the median over repetitions with its interval and the confidence "
           "that interval has (95% or more from 6 repetitions on; fewer cover less); the runs of "
           "one configuration are pooled (the runs column counts them). " + COLOUR_LEGEND)
    for p in sorted({c["payload_bytes"] for c in usable}):
        at = [c for c in usable if c["payload_bytes"] == p]
        if p == 0:
            page.h(3, "No payload")
            by_wl = defaultdict(list)
            for c in at:
                by_wl[c["workload"]].append(c)
            for wl, cs in sorted(by_wl.items()):
                cost_chart(page, cs, f"cost-p0-{wl}", f"Workload {wl} ({cs[0]['probe_kind']} probe), no payload",
                           False, multi)
        else:
            page.h(3, f"{p}-byte records")
            wls = sorted({c["workload"] for c in at})
            cost_chart(page, at, f"cost-p{p}", f"What a {p}-byte record costs, tracers side by side (workloads "
                       f"{', '.join(wls)})", True, multi)


def sweep_section(page, configs, key, title, xlabel, logx):
    """One line per configuration (and workload) with one point per value of
    `key`; a value measured by several runs is one pooled point."""
    def x_of(c):
        return int(c["options"].get("ecbs", "1")) if key == "ecbs" else c[key]

    def fits(c):
        if not c["runs_ok"] or not c["overhead_ns"]:
            return False
        if key == "payload_bytes":
            return c["threads"] == 1 and "ecbs" not in c["options"]
        if key == "threads":
            return c["payload_bytes"] == 0 and "ecbs" not in c["options"]
        return c["payload_bytes"] == 0 and c["threads"] == 1

    def without_x(c):
        d = dict(c, options={k: v for k, v in c["options"].items() if k != "ecbs"})
        d[key if key != "ecbs" else "threads"] = None if key != "ecbs" else c["threads"]
        return d

    shown = [c for c in configs if fits(c)]
    # A line's points may differ in samples per block (the pilot sizes each
    # configuration's blocks, and on a slow host it sizes a 1 KiB payload's
    # otherwise than an empty one's); only where one point was measured at two
    # sample sizes do the labels say it, and the lines split by it.
    twice = sample_sizes_differ(shown, config_core)
    multi = {config_core(without_x(c)) for c in shown if config_core(c) in twice}
    lines = defaultdict(dict)
    for c in shown:
        bare = without_x(c)
        lines[(c["workload"], label(bare, config_core(bare) in multi))][x_of(c)] = c
    by_wl = defaultdict(dict)
    for (wl, name), pts in lines.items():
        if len(pts) >= 2:
            by_wl[wl][name] = sorted(pts.items())
    if not by_wl:
        return
    page.h(2, title)
    for wl, series in sorted(by_wl.items()):
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        ticks = set()
        for name, pts in sorted(series.items()):
            xs = [x for x, _ in pts]
            ticks.update(xs)
            ys = [c["overhead_ns"]["median"] for _, c in pts]
            err = err_bars([c["overhead_ns"] for _, c in pts])
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name)
        if logx:
            ax.set_xscale("symlog", linthresh=max(1, min([t for t in ticks if t > 0] or [1])))
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([str(t) for t in sorted(ticks)])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel(xlabel)
        ax.set_ylabel("overhead, ns per event (" +
                      ci_caption([c["overhead_ns"] for pts in series.values() for _, c in pts]) + ")")
        ax.legend(fontsize=8)
        page.figure(fig, f"{key}-{wl}", f"Workload {wl}: one line per configuration, repeated runs pooled into one "
                    "point with its interval (its confidence in the axis label)")
        if key == "threads":
            throughput_figure(page, wl, series)


def throughput_figure(page, wl, series):
    """A thread-scaling sweep's traced events per second, every firing
    thread's together: one line per configuration."""
    lines = {name: [(x, c["traced_events_per_second"]) for x, c in pts if c.get("traced_events_per_second")]
             for name, pts in series.items()}
    if not any(lines.values()):
        return
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for name, pts in sorted(lines.items()):
        if pts:
            ax.plot([x for x, _ in pts], [y / 1e6 for _, y in pts], marker="o", label=name)
    ax.set_xticks(sorted({x for pts in lines.values() for x, _ in pts}))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("firing threads")
    ax.set_ylabel("traced M events/s, all threads")
    ax.legend(fontsize=8)
    page.figure(fig, f"threads-events-per-second-{wl}", f"Workload {wl}: events per second of every firing thread "
                "together (the throughput selftests/bpf's bench reports), median of the runs pooled")


def distribution_section(page, benches):
    shown = [b for b in benches if b["status"] == "ok" and b["samples_ns"]["traced"] and b["payload_bytes"] == 0
             and b["threads"] == 1 and "ecbs" not in b["options"]][:12]
    if not shown:
        page.p("No samples to draw distributions from (runs written with --no-samples, or none succeeded).", "absent")
        return
    page.h(2, "Distributions")
    page.p("Empirical CDF of the per-event cost of every undisturbed sample, untraced vs traced.")
    cols = 3
    rows = (len(shown) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 2.6 * rows), squeeze=False)
    for ax, b in zip([a for r in axes for a in r], shown):
        for variant, color in (("baseline", "#7f8c8d"), ("traced", "#c0392b")):
            v = sorted(b["samples_ns"][variant])
            if v:
                ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", color=color, label=variant)
        ax.set_title(f"{b['workload']}: {label(b)}", fontsize=8)
        ax.set_xlabel("ns per event", fontsize=8)
        ax.legend(fontsize=7)
    for ax in [a for r in axes for a in r][len(shown):]:
        ax.set_visible(False)
    fig.tight_layout()
    page.figure(fig, "distributions", "Per-event cost distributions, untraced vs traced")


def compare_section(page, cmp):
    rows = [r for r in cmp["rows"] if r["ratio"] is not None]
    page.h(2, "Comparison (B/A)")
    page.p(f"A: {', '.join(cmp['a'])}; B: {', '.join(cmp['b'])}. p as compare finds it (test column): Welch's t on "
           "each run's median where both sides have two runs or more, the paired t on the log ratios where they are "
           "pairs, else Mann-Whitney U over the pooled repetitions. MDE80: the smallest change that test would find "
           "with 80% power; inconclusive: no significant change, and MDE80 above the threshold.")
    if rows:
        rows.sort(key=lambda r: r["ratio"])
        fig, ax = plt.subplots(figsize=(7.5, 0.4 * len(rows) + 1.0))
        colors = {"regression": "#c0392b", "improvement": "#27ae60"}
        ax.barh(range(len(rows)), [r["ratio"] for r in rows], color=[colors.get(r["verdict"], "#95a5a6") for r in rows])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r["benchmark"] for r in rows], fontsize=7)
        ax.set_xlabel("B / A (red: regression, green: improvement, grey: same or inconclusive)")
        page.figure(fig, "compare", "B/A per benchmark")
    page.table(["benchmark", "what", "A ns", "B ns", "B/A", "p", "test", "MDE80", "verdict"],
               [[r["benchmark"], r["what"], num(r.get("a_median_ns"), ".2f"), num(r.get("b_median_ns"), ".2f"),
                 num(r["ratio"], ".3f"), num(r.get("p_value"), ".4f"), r["method"] or "—",
                 (f"{100 * r['mde_80']:.1f}%" if r.get("mde_80") is not None else
                  ("inf" if r["ratio"] is not None else "—")),
                 r["verdict"] + (": " + r["detail"] if r["detail"] else "")] for r in cmp["rows"]], "figures")
    for w in cmp["warnings"]:
        page.p("warning: " + w, "warn")


def model_section(page, model):
    entries = [e for e in model["entries"] if len(e["fit"]["points"]) >= 2]
    page.h(2, "Cost model: the payload fits")
    ctx = model["context"]
    page.p(f"model.json fitted from {len(ctx['runs'])} run(s) on {ctx['host']} ({ctx['cpu_model']}, kernel "
           f"{ctx['kernel_release']}): per entry, the per-payload medians and the fitted line fixed + b * per_byte; "
           "the residual is the median minus the line.")
    if not entries:
        page.p("No entry has a payload sweep (two sizes or more) to show a fit of.", "absent")
    else:
        fig, ax = plt.subplots(figsize=(7.5, 3.8))
        for e in entries:
            pts = e["fit"]["points"]
            name = f"{e['tracer']} {e['probe_kind']} {e['action']}" + (
                " (" + ",".join(f"{k}={v}" for k, v in sorted(e["options"].items())) + ")" if e["options"] else "")
            ax.plot([p["payload_bytes"] for p in pts], [p["median_cycles"] - p["predicted_cycles"] for p in pts],
                    marker="o", label=name)
        ax.axhline(0, color="black", linewidth=0.8)
        sizes = sorted({p["payload_bytes"] for e in entries for p in e["fit"]["points"]})
        ax.set_xscale("symlog", linthresh=max(1, min([x for x in sizes if x > 0] or [1])))
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(x) for x in sizes])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("payload bytes (symlog axis)")
        ax.set_ylabel("residual, cycles per event")
        ax.legend(fontsize=7)
        page.figure(fig, "model-residuals", "Payload-fit residuals per model entry")
    rows = []
    for e in model["entries"]:
        f = e["parameters"]["fixed"]
        b = e["parameters"]["per_byte"]
        rows.append([f"{e['tracer']} {e['probe_kind']} {e['action']}",
                     ",".join(f"{k}={v}" for k, v in sorted(e["options"].items())) or "—",
                     f"{f['cycles']:.1f} [{f['ci_low']:.1f}, {f['ci_high']:.1f}]" if f["cycles"] is not None else "—",
                     f"{b['cycles']:.3f}" if b["cycles"] is not None else "—",
                     f"{e['fit']['r2']:.3f}" if e["fit"]["r2"] is not None else "—"])
    page.table(["entry", "options", "fixed (cycles)", "per byte", "R²"], rows, "figures")


def held(v):
    """Whether a validation held its scenario (files written before "conditions" did)."""
    return v.get("conditions", {}).get("held", True)


def problems(v):
    return [] if held(v) else ["NOT VALID: " + p for p in v["conditions"]["problems"]]


def validation_section(page, vals):
    page.h(2, "Cost model: predicted vs measured CPU (Table 7)")
    pts = [v for v in vals if v["predicted"]["cpu_percent"] is not None]
    # A prediction far off the measured range (a consumer fit that does not
    # hold) would squash every other point: it is named under the chart.
    top = max([v["measured"]["cpu_percent"] for v in vals] + [1.0]) * 2 + 2
    off = [v for v in pts if not (-top <= v["predicted"]["cpu_percent"] <= top)]
    pts = [v for v in pts if v not in off]
    if pts:
        fig, ax = plt.subplots(figsize=(6.5, 5))
        xs = [v["predicted"]["cpu_percent"] for v in pts]
        ys = [v["measured"]["cpu_percent"] for v in pts]
        hi = max(max(xs), max(ys), 1) * 1.1
        lo = min(min(xs), min(ys), 0)
        ax.fill_between([lo, hi], [lo - 2, hi - 2], [lo + 2, hi + 2], color="#d5f5e3", label="within ±2 points")
        ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
        for v, x, y in zip(pts, xs, ys):
            # A run that did not hold its scenario tests nothing: a red cross.
            if held(v):
                ax.scatter([x], [y], color="#2e86c1")
            else:
                ax.scatter([x], [y], color="#c0392b", marker="x")
            ax.annotate(f"{v['scenario']['tracer']} {os.path.basename(v['file']).split('-', 1)[-1][:-5]}", (x, y),
                        fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("predicted CPU % (of one CPU)")
        ax.set_ylabel("measured CPU %")
        ax.legend(fontsize=8, loc="upper left")
        page.figure(fig, "validation", "Predicted vs measured CPU per validated scenario")
    for v in off:
        page.p(f"Off the chart: {v['scenario']['tracer']} {os.path.basename(v['file'])} predicted "
               f"{v['predicted']['cpu_percent']:.2f} % against {v['measured']['cpu_percent']:.2f} % measured.", "warn")
    page.table(["file", "tracer", "workload", "rate Hz", "predicted %", "measured %", "error (points)", "warnings"],
               [[os.path.basename(v["file"]), v["scenario"]["tracer"], v["scenario"]["workload"],
                 f"{v['measured']['rate_hz']:.0f}",
                 f"{v['predicted']['cpu_percent']:.2f}" if v["predicted"]["cpu_percent"] is not None else "—",
                 f"{v['measured']['cpu_percent']:.2f}",
                 f"{v['error']['cpu_percent']:+.2f}" if v["error"]["cpu_percent"] is not None else "—",
                 "; ".join(problems(v) + v["warnings"]) or "—"] for v in vals], "figures")


XC_COLOURS = {"agree": "#27ae60", "disagree": WARN, "cannot tell": "#95a5a6", "not measured": "#95a5a6"}


def crosscheck_section(page, xc):
    """`tracebench crosscheck`'s file: each case's ratio suite/independent with its interval, the ±10% band."""
    page.h(2, "Cross-check against independent tools")
    m = xc.get("machine") or {}
    page.p(f"{xc['file']}: {xc['date_utc']}, {m.get('host', '?')} ({m.get('cpu_model', '?')} x{m.get('cpus', '?')}, "
           f"kernel {m.get('kernel', '?')}, hypervisor {m.get('hypervisor') or 'none'}, TSC "
           f"{(m.get('tsc_hz') or 0) / 1e9:.3f} GHz), {xc['rounds']} rounds. Ratio = suite / independent per round; "
           f"interval: {xc['interval']}. Verdict: {xc['verdict_rule']}.")
    ran = [c for c in xc["cases"] if not c["skipped"] and c["ratio"]["median"] is not None]
    if ran:
        fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(ran) + 1.0))
        tol = xc["tolerance"]
        ax.axvspan(1 - tol, 1 + tol, color="#27ae60", alpha=0.12, label=f"±{100 * tol:.0f}%")
        ax.axvline(1.0, color="black", linewidth=0.8)
        for i, c in enumerate(ran):
            r = c["ratio"]
            ax.errorbar([r["median"]], [i], xerr=[[r["median"] - r["low"]], [r["high"] - r["median"]]], fmt="o",
                        color=XC_COLOURS.get(c["verdict"], "#95a5a6"), capsize=3)
        ax.set_yticks(range(len(ran)))
        ax.set_yticklabels([f"{c['name']} ({c['independent_tool']}): {c['verdict']}" for c in ran], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("suite / independent (green: agree, red: disagree, grey: cannot tell or not measured)")
        ax.legend(fontsize=7, loc="lower right")
        page.figure(fig, "crosscheck", "Each case's ratio and its interval over the rounds, the ±10% band shaded")
    page.table(["case", "independent tool", "independent ns", "suite ns", "ratio", "interval", "verdict", "why"],
               [[c["name"], c["independent_tool"], num(c["independent_ns"], ".1f"), num(c["suite_ns"], ".1f"),
                 num(c["ratio"]["median"], ".3f"),
                 (f"[{c['ratio']['low']:.3f}, {c['ratio']['high']:.3f}] {100 * c['ratio']['confidence']:.1f}%"
                  if c["ratio"]["median"] is not None else "—"),
                 "skipped" if c["skipped"] else c["verdict"], c["skipped"] or c["reason"]]
                for c in xc["cases"]], "figures")
    differs = [c for c in xc["cases"] if not c["skipped"] and c.get("differs")]
    if differs:
        page.p("Where the two designs differ: " + "; ".join(f"{c['name']}: {c['differs']}" for c in differs) + ".")


def history_order(series):
    """What changed first: series with a change point, the largest change
    first; then the rest, those with the most runs first."""
    def key(s):
        biggest = max([abs(c["relative_change"]) for c in s["changes"]] or [0])
        return (0 if s["changes"] else 1, -biggest, -len(s["points"]), s["benchmark"], s.get("configuration", ""),
                s["host"])
    return sorted(series, key=key)


def history_ticks(pts):
    """x labels: the run's time; the kernel and the commit only where they
    differ from the point before (a label repeated on every run says nothing)."""
    out, kernel, sha = [], None, None
    for p in pts:
        lines = [p["date_utc"][5:19].replace("T", " ")]
        if p["kernel"] != kernel:
            lines.append(p["kernel"][:20])
        if p["git_sha"][:7] != sha:
            lines.append(p["git_sha"][:7])
        kernel, sha = p["kernel"], p["git_sha"][:7]
        out.append("\n".join(lines))
    return out


def history_section(page, hist):
    series = history_order(hist["series"])
    page.h(2, "History")
    page.p(f"From {hist['db']}: each benchmark's figure run by run on one machine (the overhead per event, or the "
           "none tracer's own cost), median with its interval, in time order; the x labels give the run's time (UTC) "
           "and the kernel and commit where they change. Series with a change point come first, the largest change "
           "first. A dashed line marks a change point (E-Divisive with means, permutation test), red slower, green "
           "faster, with its size and p.")
    if not series:
        page.p("The history has no figures of these benchmarks.", "absent")
        return
    single = [s for s in series if len(s["points"]) < 2]
    drawn = [s for s in series if len(s["points"]) >= 2]
    for i, s in enumerate(drawn):
        pts = s["points"]
        fig, ax = plt.subplots(figsize=(8.5, 3.6))
        xs = list(range(len(pts)))
        ys = [p["value_ns"] for p in pts]
        err = err_bars([{"median": p["value_ns"], "low": p["low_ns"], "high": p["high_ns"]} for p in pts])
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=GOOD)
        for c in s["changes"]:
            x = c["index"] - 0.5
            color = WARN if c["relative_change"] > 0 else "#27ae60"
            ax.axvline(x, color=color, linestyle="--", linewidth=1)
            ax.annotate(f"{100 * c['relative_change']:+.1f}% (p {c['p_value']:.3f})", (x, 1.0),
                        xycoords=("data", "axes fraction"), fontsize=7, color=color, xytext=(3, -10),
                        textcoords="offset points")
        step = -(-len(pts) // 8)  # at most 8 labels
        ax.set_xticks(xs[::step])
        ax.set_xticklabels(history_ticks(pts[::step]), fontsize=6)  # changes between labelled runs
        ax.set_xlabel("run time (UTC); kernel and commit where they change", fontsize=8)
        ax.set_ylabel(f"{s['what']}, ns per event")
        changed = f", {len(s['changes'])} change point(s)" if s["changes"] else ", no change point"
        config = f" ({s['configuration']})" if s.get("configuration") else ""
        page.figure(fig, f"history-{i}", f"{s['benchmark']}{config} on {s['host']}: {len(pts)} runs{changed}")
        if s["changes"]:
            page.table(["change at run", "date", "kernel", "before ns", "after ns", "change", "p"],
                       [[c["run_id"], pts[c["index"]]["date_utc"], pts[c["index"]]["kernel"], f"{c['before_ns']:.2f}",
                         f"{c['after_ns']:.2f}", f"{100 * c['relative_change']:+.1f}%", f"{c['p_value']:.3f}"]
                        for c in s["changes"]], "figures")
    if single:
        page.h(3, "Series of one run (nothing to draw over time yet)")
        page.table(["benchmark", "host", "date", "kernel", "commit", "ns per event"],
                   [[s["benchmark"], s["host"], s["points"][0]["date_utc"], s["points"][0]["kernel"],
                     s["points"][0]["git_sha"][:7], f"{s['points'][0]['value_ns']:.2f}"] for s in single if s["points"]])
    if hist["left_out"]:
        page.p(f"{hist['left_out']} more series not drawn: name them with --history-benchmark.", "warn")


def main():
    src, out = sys.argv[1], sys.argv[2]
    data = json.load(open(src))
    page = Page(out)
    page.h(1, "tracebench report")
    page.p(f"Made {data['made_utc']} from {len(data['runs'])} run(s)"
           + (f", the history {data['history']['db']}" if data.get("history") else "")
           + (f", the cross-check {data['crosscheck']['file']}" if data.get("crosscheck") else "") + ".")
    benches = [b for r in data["runs"] for b in r["benchmarks"]]
    failed = [b for b in benches if b["status"] != "ok"]
    if data["runs"]:
        page.h(2, "Machine and runs")
        page.table(["run", "date", "host", "CPU", "kernel", "hypervisor", "TSC GHz", "floor cycles", "git", "complete"],
                   [[r["run_id"], r["date_utc"], r["context"]["host"], f"{r['context']['cpu_model']} x{r['context']['cpus']}",
                     r["context"]["kernel_release"], r["context"]["hypervisor"], f"{r['context']['tsc_ghz']:.3f}",
                     f"{r['context']['floor_cycles']:.0f}", r["context"]["git_sha"][:12], r["complete"]]
                    for r in data["runs"]])
        warnings = sorted({w for r in data["runs"] for w in r["context"]["noise_warnings"]})
        if warnings:
            page.parts.append("<details><summary>Noise warnings (" + str(len(warnings)) + ")</summary><ul>" +
                              "".join(f"<li>{html.escape(w)}</li>" for w in warnings) + "</ul></details>")
            page.md.append("Noise warnings:\n\n" + "".join(f"- {w}\n" for w in warnings))
        configs = data["configurations"]
        cost_section(page, configs)
        sweep_section(page, configs, "payload_bytes", "Payload sweeps", "payload bytes (symlog axis)", True)
        sweep_section(page, configs, "threads", "Thread scaling", "firing threads", False)
        sweep_section(page, configs, "ecbs", "Handler-count sweeps", "handlers on the probe point", False)
        distribution_section(page, benches)
    if data.get("compare"):
        compare_section(page, data["compare"])
    if data.get("model"):
        model_section(page, data["model"])
    if data.get("validations"):
        validation_section(page, data["validations"])
    if data.get("crosscheck"):
        crosscheck_section(page, data["crosscheck"])
    if data.get("history"):
        history_section(page, data["history"])
    if failed:
        page.h(2, "Benchmarks without figures")
        page.table(["benchmark", "status", "why"], [[b["name"], b["status"], b["error"]] for b in failed])
    body = "\n".join(page.parts)
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tracebench report</title>
<script>
  window.tbErrors = [];
  window.addEventListener("error", function (e) {{ window.tbErrors.push(String(e.message)); }});
  window.addEventListener("load", function () {{
    document.body.setAttribute("data-figures", String(document.querySelectorAll("figure svg").length));
    document.body.setAttribute("data-errors", String(window.tbErrors.length));
  }});
</script>
<style>
 body {{ font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }}
 table {{ border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em; }}
 th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; }}
 th {{ background: #f0f3f4; }}
 figure {{ margin: 1em 0 0.2em; }} figcaption {{ font-size: 12px; color: #555; }}
 .warn {{ color: #a04000; }} .absent {{ color: #777; font-style: italic; }}
 svg {{ max-width: 100%; height: auto; }}
</style></head>
<body data-expected-figures="{page.figures}">
{body}
</body></html>
"""
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(doc)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(page.md))
    print(f"report: {page.figures} figure(s)")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the last resort: a message, never a traceback
        print(f"report.py: cannot draw the report: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
