#!/bin/bash
# SystemTap's two runtimes in the VM lab, side by side in one boot, as a
# user runs them:
#   tracebench vm -- run --quick -t systemtap -t systemtap_bpf \
#     -w getpid -w kmod_target -w call -w usdt
# The host compiles the scripts for the guest's kernel and for the very
# tracebench binary the guest runs (tracebench systemtap build, cached);
# the guest runs staprun (the module runtime) or stapbpf (the BPF runtime)
# around each traced block.  Checked: a schema-valid result; the module
# runtime on the syscall, the companion module's function, the user
# function (a uprobe) and the USDT site (its semaphore raised by the
# runtime), the BPF runtime on the syscall and the user function, every
# event accounted for by the scripts' own counters (recorded == fired,
# nothing lost, no stap error), the modules the host compiled used; the
# BPF runtime's refusals (the module's function, the USDT site) said with
# their reasons; the run marked emulated under TCG; no stapio or stapbpf
# left on the host; the boot and the suite inside 3 minutes.  Then, in a second boot,
# three handlers (ecbs) on getpid, each handler's count checked; in a third,
# both runtimes at the user function's return (at=return), or their
# refusal with its hint where the kernel's real System.map is not here.
#   systemtap.sh TRACEBENCH SRC OUTDIR
set -uo pipefail
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
tracebench=$1 src=$2 out=$3
mkdir -p "$(dirname "$out")"
args=(vm --timeout 300 --kernel "$kernel")
rm -rf "$out"
start=$SECONDS
"$tracebench" "${args[@]}" -- run --quick --out "$out" -t systemtap -t systemtap_bpf \
  -w getpid -w kmod_target -w call -w usdt 2>&1 | tee "$out.log"
rc=${PIPESTATUS[0]}
# The budget is the boot and the suite's: the host's compiles (cached after
# the first run, several minutes on a fresh machine) are said and taken off.
compile=$(sed -n 's/^systemtap: .*: compiled in \([0-9]*\) s$/\1/p' "$out.log" | awk '{s += $1} END {print s + 0}')
wall=$((SECONDS - start - compile))
echo "vm systemtap: status $rc, $wall s (boot and suite; $compile s more compiling on the host), results in $out"
if [ $rc -ne 0 ]; then
  echo "--- guest output (tail) ---"; tail -n 40 "$out/guest-output.txt" 2>/dev/null
  exit 1
fi
results=("$out"/results/*/result.json)
[ -f "${results[0]}" ] || { echo "FAIL: no result.json came back from the guest"; exit 1; }
/usr/bin/python3 "$src/scripts/validate_result.py" --require-ok --or-unsteady "${results[0]}" || exit 1
for why in "skipping systemtap_bpf/kmod_target/.*the BPF runtime (systemtap_bpf) is built for syscall entry" \
  "skipping systemtap_bpf/usdt/.*does not raise a USDT site's semaphore"; do
  grep -q "$why" "$out/guest-output.txt" || { echo "FAIL: no refusal with its reason: $why"; exit 1; }
done
PYTHONPATH="$src/tests/vm" /usr/bin/python3 - "${results[0]}" "$out/vm.json" "$wall" <<'PY' || exit 1
import json, sys
from guest_result import measured, overhead_ns
r = json.load(open(sys.argv[1]))
vm = json.load(open(sys.argv[2]))
wall = int(sys.argv[3])
assert r["context"]["emulated"] == vm["emulated"], "a TCG run must be marked emulated"
rows = {(b["tracer"], b["workload"]): b for b in r["benchmarks"] if b["tracer"].startswith("systemtap")}
want = {("systemtap", w) for w in ("getpid", "kmod_target", "call", "usdt")}
want |= {("systemtap_bpf", w) for w in ("getpid", "call")}
assert set(rows) == want, f"systemtap benchmarks: {sorted(rows)}, expected {sorted(want)}"
for (t, w), b in sorted(rows.items()):
    e, d = b["events"], b["tracer_details"]
    assert measured(b), (t, w, b.get("error"))
    assert e["verification"] == "passed", (t, w, e["verification_reason"])
    assert e["exact"] and e["fired"] > 0 and e["recorded"] == e["fired"] and e["lost"] == 0, (t, w, e)
    assert e["tracer_errors"] == 0, (t, w, e)
    assert d["runtime"] == ("bpf" if t == "systemtap_bpf" else "module"), (t, w, d)
    assert d["module_source"] == "precompiled" and d["module"].startswith("tracebench_stap_"), (t, w, d)
    assert sum(d["per_session"]) == e["recorded"] and d["sessions"] == len(d["per_session"]), (t, w, d)
    # The module runtime's syscall, function and uprobe scripts saw their
    # probe count events of the adapter's own before each block (taken off);
    # the USDT site's semaphore and the BPF runtime's liveness events are
    # never among the counted ones.
    if t == "systemtap" and w != "usdt":
        assert d["liveness_events"] >= d["sessions"], (t, w, d)
    else:
        assert d["liveness_events"] == 0, (t, w, d)
    print(f"  {t:13} {w:11}: {e['recorded']} of {e['fired']} events counted by the script in {d['sessions']} "
          f"sessions, overhead {overhead_ns(b, '.1f')}")
assert wall <= 180, f"the boot and the suite took {wall} s, over their 3-minute budget"
PY
# Handlers (ecbs): three probes of the script on getpid's point, the extra
# two counting too, each checked against the first (their own liveness
# events taken off): compiled on the host from the run's -o (--handlers).
hout=$out-handlers
rm -rf "$hout"
"$tracebench" "${args[@]}" -- run --quick --out "$hout" -t systemtap -w getpid \
  -o systemtap.ecbs=3 -o systemtap.extra_predicate=true > "$hout.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: the ecbs=3 run: status $rc"; tail -n 30 "$hout.log"; exit 1; fi
PYTHONPATH="$src/tests/vm" /usr/bin/python3 - "$hout" <<'PY' || exit 1
import glob, json, sys
from guest_result import measured, overhead_ns
(b,) = json.load(open(glob.glob(f"{sys.argv[1]}/results/*/result.json")[0]))["benchmarks"]
e, d = b["events"], b["tracer_details"]
assert measured(b) and e["verification"] == "passed", (b.get("error"), e)
assert e["recorded"] == e["fired"] and e["lost"] == 0 and e["tracer_errors"] == 0, e
assert d["ecbs"] == 3 and d["extra_predicate"] == "true", d
print(f"  systemtap getpid, 3 handlers (each checked): {e['recorded']} events, "
      f"overhead {overhead_ns(b, '.1f')}")
PY
# Return probes (at=return) on the user function, both runtimes, in a third
# boot: stap compiles them only with the kernel's real System.map, which
# Debian keeps in linux-image-<release>-dbg (scripts/vm/fetch-system-map.sh
# puts it in the cache; modules compiled with it stay cached): the run is
# checked, or without a real System.map the compile's refusal and its hint.
rel=${kernel##*/vmlinuz-}
cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracebench/systemtap
real_map=""
for m in "$cache/System.map-$rel" "/usr/lib/debug/boot/System.map-$rel" "/boot/System.map-$rel"; do
  if [ -s "$m" ] && ! grep -q "The real System.map is in" "$m"; then real_map=$m; break; fi
done
rout=$out-return
rm -rf "$rout"
"$tracebench" "${args[@]}" -- run --quick --out "$rout" -t systemtap -t systemtap_bpf -w call \
  -o systemtap.at=return -o systemtap_bpf.at=return > "$rout.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  [ -z "$real_map" ] && grep -q "scripts/vm/fetch-system-map.sh $rel" "$rout.log" ||
    { echo "FAIL: the at=return run: status $rc (System.map: ${real_map:-none real})"; tail -n 20 "$rout.log"; exit 1; }
  echo "  return probes: refused with the hint (no real System.map for $rel here: scripts/vm/fetch-system-map.sh $rel)"
else
  PYTHONPATH="$src/tests/vm" /usr/bin/python3 - "$rout" <<'PY' || exit 1
import glob, json, sys
from guest_result import measured, overhead_ns
bs = json.load(open(glob.glob(f"{sys.argv[1]}/results/*/result.json")[0]))["benchmarks"]
assert sorted(b["tracer"] for b in bs) == ["systemtap", "systemtap_bpf"], [b["name"] for b in bs]
for b in bs:
    e, d = b["events"], b["tracer_details"]
    assert measured(b) and e["verification"] == "passed", (b["name"], b.get("error"), e)
    assert e["recorded"] == e["fired"] and e["lost"] == 0 and e["tracer_errors"] == 0, (b["name"], e)
    assert d["at"] == "return" and d["module_source"] == "precompiled", (b["name"], d)
    print(f"  {b['tracer']:13} call, at its return: {e['recorded']} events, overhead {overhead_ns(b, '.1f')}")
PY
fi
if pgrep -f 'stapio .*tracebench_stap_|stapbpf .*tracebench_stap_' >/dev/null; then
  echo "FAIL: a stapio or stapbpf is left on the host"; exit 1
fi
echo "vm systemtap: passed"
