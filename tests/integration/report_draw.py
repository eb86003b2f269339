#!/usr/bin/python3
"""The report's drawing (scripts/report/report.py) on a report-input.json made
here, so each question the page answers has a known chart: tracers side by
side at each payload size (a single 64-byte size included), a payload sweep
with one point per size and ticks at the sizes, labels that tell apart
configurations that differ (options, --gap-us, samples per block) and never
read "none none" or "dvm default", red only for warnings (an information note
paints nothing), history with the change point first and times in its x
labels, the cross-check's ratios against the ±10% band.  Headless Chromium loads the page; the test reads the page's text and
counts the charts it expects.

    report_draw.py SOURCE_DIR KEEP_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

src, keep = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="tracebench-draw-")


def fail(why):
    print("FAIL:", why)
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1)


def ci(m, half=2.0):
    return {"median": m, "low": m - half, "high": m + half, "n": 6}


def config(tracer, workload, action, payload, ns, samples=1000, gap=0, options=None, warnings=(), information=(),
           runs=1, verification="passed", kind="syscall"):
    return {"tracer": tracer, "workload": workload, "action": action, "probe_kind": kind, "payload_bytes": payload,
            "threads": 1, "options": options or {}, "gap_us": gap, "samples_per_block": samples, "runs": runs,
            "runs_ok": runs, "names": [f"{tracer}/{workload}/{action}/payload:{payload}/threads:1"],
            "overhead_ns": ci(ns), "untraced_ns_p50": 100.0, "traced_ns_p50": 100.0 + ns,
            "events": {"fired": 1000, "recorded": 1000, "lost": 0, "verification": verification},
            "warnings": list(warnings), "information": list(information), "errors": []}


configs = [
    config("none", "getpid", "none", 0, 1.0),
    config("dvm", "getpid", "default", 0, 300.0,
           information=["batch capped at 64 events so a traced block stays near 50 ms"]),
    config("ftrace", "getpid", "count", 0, 250.0, warnings=["31% of the 6000 traced samples excluded"]),
    config("ebpf", "write_null", "ringbuf", 0, 90.0, kind="syscall", runs=2),
    config("ebpf", "write_null", "ringbuf", 64, 95.0),
    config("ebpf", "write_null", "ringbuf", 64, 97.0, samples=2000),
    config("ebpf", "write_null", "ringbuf", 256, 110.0),
    config("ebpf", "write_null", "ringbuf", 256, 14000.0, gap=100),
    config("ebpf", "write_null", "ringbuf", 1024, 180.0),
    config("ebpf", "write_null", "ringbuf", 1024, 170.0, options={"ebpf.wakeup": "no_wakeup"}),
    config("ftrace", "marker", "payload", 64, 400.0, kind="marker"),
    # A sweep whose points the pilot sized differently (a slow host's 1 KiB
    # block is shorter), none measured twice: one line, no samples in its label.
    config("ftrace", "marker", "payload", 0, 380.0, kind="marker", samples=500),
    config("ftrace", "marker", "payload", 1024, 520.0, kind="marker", samples=250),
]
context = {"host": "h", "cpu_model": "cpu", "cpus": 2, "kernel_release": "6.18.0", "hypervisor": "none",
           "tsc_ghz": 2.0, "floor_cycles": 30.0, "git_sha": "abcdef0123456", "noise_warnings": []}
run = {"file": "r/result.json", "run_id": "r", "date_utc": "2026-11-27T10:00:00Z", "complete": True,
       "context": context, "benchmarks": []}


def point(i, v, kernel="6.18.0", sha="1111111aaaa"):
    return {"run_id": f"run-{i}", "date_utc": f"2026-11-2{i // 10}T1{i % 10}:0{i % 6}:00Z", "kernel": kernel,
            "git_sha": sha, "value_ns": v, "low_ns": v - 1, "high_ns": v + 1}


flat = [point(i, 100.0) for i in range(7)]
step = [point(i, 50.0 if i < 4 else 60.0, sha="1111111aaaa" if i < 4 else "2222222bbbb") for i in range(6)]
history = {"db": "h.sqlite", "left_out": 0, "series": [
    {"benchmark": "a/alone", "host": "h", "what": "overhead", "points": [point(0, 5.0)], "changes": []},
    {"benchmark": "b/flat", "host": "h", "what": "overhead", "points": flat, "changes": []},
    {"benchmark": "c/step", "host": "h", "what": "overhead", "points": step,
     "changes": [{"index": 4, "run_id": "run-4", "before_ns": 50.0, "after_ns": 60.0, "relative_change": 0.2,
                  "p_value": 0.001}]},
]}


def xc_case(name, tool, median, low, high, verdict, skipped=""):
    ratio = {"median": median, "low": low, "high": high, "confidence": 0.9375, "rounds": 5}
    if skipped:
        ratio = {"median": None, "low": None, "high": None, "confidence": None, "rounds": 0}
    return {"name": name, "independent_tool": tool, "independent_ns": None if skipped else 100.0,
            "suite_ns": None if skipped else 100.0 * median, "ratio": ratio, "verdict": verdict,
            "reason": "" if skipped else f"the reason for {verdict}", "skipped": skipped,
            "differs": "" if skipped else f"how {name} differs"}


crosscheck = {"schema": "tracebench.crosscheck", "schema_version": 2, "file": "x/crosscheck.json",
              "date_utc": "2026-11-27T11:00:00Z", "rounds": 5, "tolerance": 0.1,
              "interval": "order statistics", "verdict_rule": "agree within ±10%",
              "machine": {"host": "h", "cpu_model": "cpu", "cpus": 2, "kernel": "6.18.0", "hypervisor": "KVM",
                          "tsc_hz": 2.0e9},
              "cases": [xc_case("ftrace_getpid", "tracefs by hand", 1.01, 0.98, 1.03, "agree"),
                        xc_case("untraced_getpid", "C loop", 2.05, 2.0, 2.1, "disagree"),
                        xc_case("perf_getpid", "perf record", 1.0, 0.7, 1.2, "cannot tell"),
                        xc_case("lttng_hot", "lttng CLI", None, None, None, "not measured",
                                skipped="lttng is not installed")]}
data = {"schema": "tracebench.report-input", "schema_version": 2, "made_utc": "2026-11-27T10:00:00Z", "model": None,
        "validations": [], "history": history, "runs": [run], "configurations": configs, "compare": None,
        "crosscheck": crosscheck}
with open(os.path.join(work, "input.json"), "w") as f:
    json.dump(data, f)
out = os.path.join(work, "page")
subprocess.run(["/usr/bin/python3", os.path.join(src, "scripts/report/report.py"), os.path.join(work, "input.json"),
                out], check=True)
page = open(os.path.join(out, "index.html")).read()

# The charts this input asks for, by id, in the page's order.
expected = ["cost-p0-getpid", "cost-p0-marker", "cost-p0-write_null", "cost-p64", "cost-p256", "cost-p1024",
            "payload_bytes-marker", "payload_bytes-write_null", "crosscheck", "history-0", "history-1"]
ids = re.findall(r"<figure id='([^']+)'>", page)
if ids != expected:
    fail(f"charts {ids}, expected {expected}")


def figure(name):
    m = re.search(r"<figure id='" + re.escape(name) + r"'>(.*?)</figure>", page, re.S)
    return m.group(1)


def text(fragment):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))


# Colours: the ftrace bar (a warning) is red; none and dvm (information only) blue;
# each chart's legend holds one patch of each.
red, blue = "#c0392b", "#2e86c1"
g = figure("cost-p0-getpid")
fills = (g.count("fill: " + red), g.count("fill: " + blue))
if fills != (2, 3):
    fail(f"getpid chart: {fills[0]} red and {fills[1]} blue fills, expected 2 and 3 "
         "(one warning bar, two clean bars, a legend of each)")
t = text(g)
for want in ("none", "dvm", "ftrace count ⚠", "verified, no warning", "warning: see table"):
    if want not in t:
        fail(f"getpid chart lacks the label {want!r}: {t[:400]}")
# The 64-byte question: every tracer at 64 B, told apart by samples per block.
t = text(figure("cost-p64"))
for want in ("write_null: ebpf ringbuf (1000 samples/block)", "write_null: ebpf ringbuf (2000 samples/block)",
             "marker: ftrace payload"):
    if want not in t:
        fail(f"64-byte chart lacks {want!r}: {t[:400]}")
t = text(figure("cost-p256"))
if "ebpf ringbuf (gap 100 µs; 1000 samples/block)" not in t and "ebpf ringbuf (gap 100 µs)" not in t:
    fail(f"the --gap-us run is not labelled apart: {t[:400]}")
t = text(figure("cost-p1024"))
if "ebpf.wakeup=no_wakeup" not in t:
    fail(f"the run with an option is not labelled apart: {t[:400]}")
# The sweep: one line through 0, 64, 256, 1024 with a tick at each; the gap run
# and the option run (one point each) draw no line of their own.
sweep = figure("payload_bytes-write_null")
ticks = re.findall(r"<text[^>]*>\s*(\d+)\s*</text>", sweep)
for want in ("0", "64", "256", "1024"):
    if want not in ticks:
        fail(f"payload sweep has no tick at {want} (ticks {ticks})")
if "ebpf ringbuf (1000 samples/block)" not in text(sweep):
    fail(f"the sweep line does not say which samples per block it holds: {text(sweep)[:400]}")
if "gap" in text(sweep) or "no_wakeup" in text(sweep):
    fail("a one-point configuration drew a sweep line")
marker = text(figure("payload_bytes-marker"))
if "ftrace payload" not in marker or "samples/block" in marker:
    fail(f"points sized differently by the pilot, none measured twice, are one line without samples: {marker[:400]}")
# History: the series that changed comes first, times in its x labels, the kernel once.
h0 = text(figure("history-0"))
if "c/step" not in h0 or "1 change point" not in h0:
    fail(f"history-0 is not the series with the change point: {h0[:300]}")
if "11-20 10:00:00" not in h0 or h0.count("6.18.0") != 1 or "2222222" not in h0:
    fail(f"history x labels: want times, the kernel once and the new commit where it changes: {h0[:600]}")
if "b/flat" not in text(figure("history-1")) or "a/alone" not in text(page.split("Series of one run")[-1]):
    fail("the flat series is not second, or the one-run series is not in the table")
# The cross-check: a point per case that ran (the disagreeing one red), the
# skipped one in the table with its reason, every verdict said.
x = figure("crosscheck")
if x.count("fill: " + red) + x.count("stroke: " + red) == 0 or "untraced_getpid (C loop): disagree" not in text(x):
    fail(f"the cross-check chart does not draw the disagreeing case red: {text(x)[:300]}")
if "lttng_hot" in text(x):
    fail("the cross-check chart draws a skipped case")
xt = text(page.split("<figure id='crosscheck'>")[1].split("<figure")[0])
for want in ("lttng is not installed", "skipped", "cannot tell", "the reason for agree", "how ftrace_getpid differs"):
    if want not in xt:
        fail(f"the cross-check section lacks {want!r}: {xt[:500]}")
# Nowhere two words that say nothing; no chart title repeated in its caption.
whole = text(page)
for bad in ("none none", "dvm default"):
    if bad in whole:
        fail(f"the page says {bad!r}")
if "Colours:" not in whole:
    fail("no legend for the colours")
for name in ids:
    f = figure(name)
    cap = text(re.search(r"<figcaption>(.*?)</figcaption>", f, re.S).group(1)).strip()
    if cap and cap in text(f.split("<figcaption>")[0]):
        fail(f"{name}: the caption is repeated in the chart: {cap!r}")

# The browser: every chart rendered, no script error.
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    fail("chromium is not installed (scripts/setup.sh installs it)")
flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--user-data-dir={work}/profile"]
dom = subprocess.run([browser, *flags, "--virtual-time-budget=3000", "--dump-dom", "file://" + out + "/index.html"],
                     capture_output=True, text=True, timeout=120).stdout
body = re.search(r"<body[^>]*>", dom)
if not body or f'data-figures="{len(expected)}"' not in body.group(0) or 'data-errors="0"' not in body.group(0):
    fail(f"the browser rendered {body.group(0) if body else 'no page'}, expected {len(expected)} figures, no error")
if "What a 64-byte record costs" not in text(dom):
    fail("the browser's page has no 64-byte chart caption")
try:
    os.makedirs(keep, exist_ok=True)
    if not os.access(keep, os.W_OK):
        raise PermissionError(keep)
except PermissionError:
    # A read-only build tree (`ctest -L unit` as a user who did not build):
    # the checks above passed; keep the page and screenshot in the work dir.
    keep = tempfile.mkdtemp(prefix="tracebench-draw-keep-")
subprocess.run([browser, *flags, "--window-size=1200,4000", f"--screenshot={keep}/draw.png",
                "file://" + out + "/index.html"], capture_output=True, timeout=120)
shutil.copy(os.path.join(out, "index.html"), os.path.join(keep, "draw.html"))
shutil.rmtree(work)
print(f"report draw: ok ({len(expected)} charts; screenshot {keep}/draw.png)")
