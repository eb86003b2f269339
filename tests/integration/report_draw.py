#!/usr/bin/python3
"""The report's drawing (scripts/report/report.py) on a report-input.json made
here, so each question the page answers has a known chart: tracers side by
side at each payload size (a single 64-byte size included), a payload sweep
with one point per size and ticks at the sizes, labels that tell apart
configurations that differ (options, --gap-us, samples per block) and never
read "none none" or "dvm default", red only for warnings (an information note
paints nothing), history with the change point first and times in its x
labels.  Headless Chromium loads the page; the test reads the page's text and
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
data = {"schema": "tracebench.report-input", "schema_version": 2, "made_utc": "2026-11-27T10:00:00Z", "model": None,
        "validations": [], "history": history, "runs": [run], "configurations": configs, "compare": None}
with open(os.path.join(work, "input.json"), "w") as f:
    json.dump(data, f)
out = os.path.join(work, "page")
subprocess.run(["/usr/bin/python3", os.path.join(src, "scripts/report/report.py"), os.path.join(work, "input.json"),
                out], check=True)
page = open(os.path.join(out, "index.html")).read()

# The charts this input asks for, by id, in the page's order.
expected = ["cost-p0-getpid", "cost-p0-write_null", "cost-p64", "cost-p256", "cost-p1024", "payload_bytes-write_null",
            "history-0", "history-1"]
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
# History: the series that changed comes first, times in its x labels, the kernel once.
h0 = text(figure("history-0"))
if "c/step" not in h0 or "1 change point" not in h0:
    fail(f"history-0 is not the series with the change point: {h0[:300]}")
if "11-20 10:00:00" not in h0 or h0.count("6.18.0") != 1 or "2222222" not in h0:
    fail(f"history x labels: want times, the kernel once and the new commit where it changes: {h0[:600]}")
if "b/flat" not in text(figure("history-1")) or "a/alone" not in text(page.split("Series of one run")[-1]):
    fail("the flat series is not second, or the one-run series is not in the table")
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
os.makedirs(keep, exist_ok=True)
subprocess.run([browser, *flags, "--window-size=1200,4000", f"--screenshot={keep}/draw.png",
                "file://" + out + "/index.html"], capture_output=True, timeout=120)
shutil.copy(os.path.join(out, "index.html"), os.path.join(keep, "draw.html"))
shutil.rmtree(work)
print(f"report draw: ok ({len(expected)} charts; screenshot {keep}/draw.png)")
