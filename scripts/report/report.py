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

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"figure.dpi": 96, "font.size": 9, "svg.fonttype": "none", "axes.grid": True,
                     "grid.alpha": 0.3})


def label(b):
    opts = ",".join(f"{k}={v}" for k, v in sorted(b["options"].items()))
    return f"{b['tracer']} {b['action']}" + (f" ({opts})" if opts else "")


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


def fmt_ci(c, unit=""):
    if not c:
        return "—"
    return f"{c['median']:.1f} [{c['low']:.1f}, {c['high']:.1f}]{unit}"


def overhead_section(page, benches):
    by_wl = defaultdict(list)
    for b in benches:
        if b["status"] == "ok" and b["payload_bytes"] == 0 and b["threads"] == 1 and "ecbs" not in b["options"] \
                and b["overhead_ns"]:
            by_wl[b["workload"]].append(b)
    if not by_wl:
        page.p("No benchmark with an overhead figure at payload 0 and one thread.", "absent")
        return
    page.h(2, "Overhead per event")
    page.p("Traced minus untraced cost per event, median over repetitions with its 95% interval. "
           "A tracer marked ⚠ has a verification or noise warning: see the table under the chart.")
    for wl, bs in sorted(by_wl.items()):
        bs.sort(key=lambda b: b["overhead_ns"]["median"])
        fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(bs) + 1.0))
        y = range(len(bs))
        med = [b["overhead_ns"]["median"] for b in bs]
        lo = [b["overhead_ns"]["median"] - b["overhead_ns"]["low"] for b in bs]
        hi = [b["overhead_ns"]["high"] - b["overhead_ns"]["median"] for b in bs]
        colors = ["#c0392b" if (b["warnings"] or b["events"]["verification"] == "failed") else "#2e86c1" for b in bs]
        ax.barh(list(y), med, xerr=[lo, hi], color=colors, capsize=3)
        ax.set_yticks(list(y))
        ax.set_yticklabels([label(b) + (" ⚠" if b["warnings"] else "") for b in bs])
        ax.set_xlabel("overhead, ns per event (95% interval)")
        ax.set_title(f"workload {wl}")
        page.figure(fig, f"overhead-{wl}", f"Overhead per event, workload {wl}")
        page.table(["tracer", "overhead ns", "overhead cycles", "untraced ns", "traced ns", "fired", "recorded",
                    "lost", "verification", "warnings"],
                   [[label(b), fmt_ci(b["overhead_ns"]), fmt_ci(b["overhead_cycles"]),
                     f"{b['baseline']['ns_p50']:.1f}" if b["baseline"] else "—",
                     f"{b['traced']['ns_p50']:.1f}" if b["traced"] else "—",
                     b["events"]["fired"], b["events"]["recorded"], b["events"]["lost"],
                     b["events"]["verification"], "; ".join(b["warnings"]) or "—"] for b in bs], "figures")


def sweep_section(page, benches, key, title, xlabel, logx):
    lines = defaultdict(list)
    for b in benches:
        if b["status"] != "ok" or not b["overhead_ns"]:
            continue
        if key == "payload_bytes" and (b["threads"] != 1 or "ecbs" in b["options"]):
            continue
        if key == "threads" and (b["payload_bytes"] != 0 or "ecbs" in b["options"]):
            continue
        x = b[key] if key != "ecbs" else int(b["options"].get("ecbs", "1"))
        if key == "ecbs" and (b["payload_bytes"] != 0 or b["threads"] != 1):
            continue
        opts = {k: v for k, v in b["options"].items() if k not in ("ecbs",)}
        name = f"{b['tracer']} {b['action']}" + (" " + ",".join(f"{k}={v}" for k, v in sorted(opts.items())) if opts else "")
        lines[(b["workload"], name)].append((x, b))
    by_wl = defaultdict(dict)
    for (wl, name), pts in lines.items():
        if len({x for x, _ in pts}) >= 2:
            by_wl[wl][name] = sorted(pts, key=lambda p: p[0])
    if not by_wl:
        return
    page.h(2, title)
    for wl, series in sorted(by_wl.items()):
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        for name, pts in sorted(series.items()):
            xs = [x for x, _ in pts]
            ys = [b["overhead_ns"]["median"] for _, b in pts]
            err = [[b["overhead_ns"]["median"] - b["overhead_ns"]["low"] for _, b in pts],
                   [b["overhead_ns"]["high"] - b["overhead_ns"]["median"] for _, b in pts]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name)
        if logx:
            ax.set_xscale("symlog", linthresh=16)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("overhead, ns per event")
        ax.set_title(f"workload {wl}")
        ax.legend(fontsize=8)
        page.figure(fig, f"{key}-{wl}", f"{title}, workload {wl}")


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
               [[r["benchmark"], r["what"], f"{r['a_median_ns']:.2f}", f"{r['b_median_ns']:.2f}",
                 f"{r['ratio']:.3f}" if r["ratio"] is not None else "—", f"{r['p_value']:.4f}", r["method"] or "—",
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
        ax.set_xscale("symlog", linthresh=16)
        ax.set_xlabel("payload bytes (symlog)")
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
            ax.scatter([x], [y], color="#2e86c1")
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
                 "; ".join(v["warnings"]) or "—"] for v in vals], "figures")


def history_section(page, hist):
    series = hist["series"]
    page.h(2, "History")
    page.p(f"From {hist['db']}: each benchmark's figure run by run on one machine (the overhead per event, or the "
           "none tracer's own cost), median with its interval, in date order; kernel and commit under each point. "
           "A dashed line marks a change point (E-Divisive with means, permutation test), with its size and p.")
    if not series:
        page.p("The history has no figures of these benchmarks.", "absent")
        return
    for i, s in enumerate(series):
        pts = s["points"]
        fig, ax = plt.subplots(figsize=(8.5, 3.6))
        xs = list(range(len(pts)))
        ys = [p["value_ns"] for p in pts]
        err = [[p["value_ns"] - p["low_ns"] for p in pts], [p["high_ns"] - p["value_ns"] for p in pts]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color="#2e86c1")
        for c in s["changes"]:
            x = c["index"] - 0.5
            color = "#c0392b" if c["relative_change"] > 0 else "#27ae60"
            ax.axvline(x, color=color, linestyle="--", linewidth=1)
            ax.annotate(f"{100 * c['relative_change']:+.1f}% (p {c['p_value']:.3f})", (x, 1.0),
                        xycoords=("data", "axes fraction"), fontsize=7, color=color, xytext=(3, -10),
                        textcoords="offset points")
        step = -(-len(pts) // 8)  # at most 8 labels: date, kernel, commit
        ax.set_xticks(xs[::step])
        ax.set_xticklabels([f"{p['date_utc'][:10]}\n{p['kernel'][:20]}\n{p['git_sha'][:7]}" for p in pts][::step],
                           fontsize=6, rotation=20, ha="right")
        ax.set_xlabel("run (date, kernel, commit)", fontsize=8)
        ax.set_ylabel(f"{s['what']}, ns per event")
        ax.set_title(f"{s['benchmark']} on {s['host']}", fontsize=8)
        page.figure(fig, f"history-{i}", f"History of {s['benchmark']} on {s['host']} ({len(pts)} runs)")
        if s["changes"]:
            page.table(["change at run", "date", "kernel", "before ns", "after ns", "change", "p"],
                       [[c["run_id"], pts[c["index"]]["date_utc"], pts[c["index"]]["kernel"], f"{c['before_ns']:.2f}",
                         f"{c['after_ns']:.2f}", f"{100 * c['relative_change']:+.1f}%", f"{c['p_value']:.3f}"]
                        for c in s["changes"]], "figures")
    if hist["left_out"]:
        page.p(f"{hist['left_out']} more series not drawn: name them with --history-benchmark.", "warn")


def main():
    src, out = sys.argv[1], sys.argv[2]
    data = json.load(open(src))
    page = Page(out)
    page.h(1, "tracebench report")
    page.p(f"Made {data['made_utc']} from {len(data['runs'])} run(s)"
           + (f" and the history {data['history']['db']}." if data.get("history") else "."))
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
        overhead_section(page, benches)
        sweep_section(page, benches, "payload_bytes", "Payload sweeps", "payload bytes (symlog)", True)
        sweep_section(page, benches, "threads", "Thread scaling", "firing threads", False)
        sweep_section(page, benches, "ecbs", "Handler-count sweeps", "handlers on the probe point", False)
        distribution_section(page, benches)
    if data.get("compare"):
        compare_section(page, data["compare"])
    if data.get("model"):
        model_section(page, data["model"])
    if data.get("validations"):
        validation_section(page, data["validations"])
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
    main()
