#!/bin/bash
# SystemTap's module runtime in the VM lab, as a user runs it:
# `tracebench vm -- run --quick -t systemtap -w getpid -w kmod_target`.  The
# host compiles the scripts for the guest's kernel (tracebench systemtap
# build, cached), the guest runs staprun around each traced block; checked:
# a schema-valid result with both benchmarks ok, every event accounted for
# by the scripts' own counters (recorded == fired, nothing lost, no stap
# error), the modules the host compiled used, the run marked emulated under
# TCG, no stapio left on the host, and the whole run inside 3 minutes.
#   systemtap.sh TRACEBENCH SRC OUTDIR
set -uo pipefail
tracebench=$1 src=$2 out=$3
mkdir -p "$(dirname "$out")"
args=(vm --timeout 300)
[ -n "${TRACEBENCH_VM_KERNEL:-}" ] && args+=(--kernel "$TRACEBENCH_VM_KERNEL")
# boot DIR [RUN-ARGS...]: one guest boot of the suite's systemtap run into
# DIR; sets wall (s) and result (its result.json), or fails the test.
boot() {
  local dir=$1 start=$SECONDS rc
  shift
  rm -rf "$dir"
  "$tracebench" "${args[@]}" -- run --quick --out "$dir" -t systemtap -w getpid -w kmod_target "$@"
  rc=$?
  wall=$((SECONDS - start))
  echo "vm systemtap $*: status $rc, $wall s (compile, boot and suite), results in $dir"
  if [ $rc -ne 0 ]; then
    echo "--- guest output (tail) ---"; tail -n 40 "$dir/guest-output.txt" 2>/dev/null
    exit 1
  fi
  local found=("$dir"/results/*/result.json)
  result=${found[0]}
  [ -f "$result" ] || { echo "FAIL: no result.json came back from the guest ($dir)"; exit 1; }
}
boot "$out"
results=("$result")
/usr/bin/python3 "$src/scripts/validate_result.py" --require-ok "${results[0]}" || exit 1
/usr/bin/python3 - "${results[0]}" "$out/vm.json" "$wall" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
vm = json.load(open(sys.argv[2]))
wall = int(sys.argv[3])
assert r["context"]["emulated"] == vm["emulated"], "a TCG run must be marked emulated"
rows = {b["workload"]: b for b in r["benchmarks"] if b["tracer"] == "systemtap"}
assert set(rows) == {"getpid", "kmod_target"}, f"systemtap benchmarks: {sorted(rows)}"
for w, b in rows.items():
    e, d = b["events"], b["tracer_details"]
    assert b["status"] == "ok", (w, b.get("error"))
    assert e["verification"] == "passed", (w, e["verification_reason"])
    assert e["exact"] and e["fired"] > 0 and e["recorded"] == e["fired"] and e["lost"] == 0, (w, e)
    assert e["tracer_errors"] == 0, (w, e)
    assert d["module_source"] == "precompiled" and d["module"].startswith("tracebench_stap_"), (w, d)
    assert sum(d["per_session"]) == e["recorded"] and d["sessions"] == len(d["per_session"]), (w, d)
    # Each session saw its probe count (its own events) before its block.
    assert d["liveness_events"] >= d["sessions"], (w, d)
    print(f"  {w}: {e['recorded']} of {e['fired']} events counted by the script in {d['sessions']} sessions, "
          f"overhead {b['overhead_ns_per_event']['median'] if isinstance(b['overhead_ns_per_event'], dict) else b['overhead_ns_per_event']} ns")
assert wall <= 180, f"the run took {wall} s, over its 3-minute budget"
PY
if pgrep -f 'stapio .*tracebench_stap_' >/dev/null; then echo "FAIL: a stapio is left on the host"; exit 1; fi

# The BPF runtime (-o systemtap.runtime=bpf): getpid counted by stapbpf's
# script (the number compiled in, the pid as -x), kmod_target refused with
# the reason.  Its own guest boot: one `run` takes one set of options.
bout=$out-bpf
boot "$bout" -o systemtap.runtime=bpf
bwall=$wall bresults=("$result")
grep -q "skipping systemtap/kmod_target/.*the BPF runtime (systemtap.runtime=bpf) is built for syscall entry only" \
  "$bout/guest-output.txt" || { echo "FAIL: kmod_target under the bpf runtime not refused with its reason"; exit 1; }
/usr/bin/python3 - "${bresults[0]}" "${results[0]}" "$bwall" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
bwall = int(sys.argv[3])
rows = [b for b in r["benchmarks"] if b["tracer"] == "systemtap" and b["workload"] == "getpid"]
assert len(rows) == 1, f"bpf getpid rows: {len(rows)}"
b = rows[0]
e, d = b["events"], b["tracer_details"]
assert b["status"] == "ok", b.get("error")
assert d["runtime"] == "bpf" and d["module_source"] == "precompiled", d
assert e["verification"] == "passed" and e["exact"], e
assert e["fired"] > 0 and e["recorded"] == e["fired"] and e["lost"] == 0 and e["tracer_errors"] == 0, e
assert d["liveness_events"] == 0, d
assert sum(d["per_session"]) == e["recorded"] and d["sessions"] == len(d["per_session"]), d
# kmod_target: refused (its reason checked in the guest's output above), never measured.
assert not any(x["workload"] == "kmod_target" and x["status"] == "ok" for x in r["benchmarks"] if x["tracer"] == "systemtap")
def med(x):
    o = x["overhead_ns_per_event"]
    return o["median"] if isinstance(o, dict) else o
mod = [x for x in m["benchmarks"] if x["tracer"] == "systemtap" and x["workload"] == "getpid"][0]
print(f"  getpid (bpf): {e['recorded']} of {e['fired']} events counted by stapbpf's script in {d['sessions']} "
      f"sessions, overhead {med(b)} ns (module runtime: {med(mod)} ns)")
assert bwall <= 120, f"the bpf run took {bwall} s, over its 2-minute budget"
PY
if pgrep -f 'stapbpf .*tracebench_stap_' >/dev/null; then echo "FAIL: a stapbpf is left on the host"; exit 1; fi
echo "vm systemtap: passed"
