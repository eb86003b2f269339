#!/usr/bin/env bash
# Fidelity cross-check for the lttng_kernel adapter (LTTng's kernel domain),
# in the VM lab (this machine's kernel loads no modules).
#
# One boot of the VM-lab kernel with lttng-modules (tracebench-vm.sh
# --lttng-modules); in it, ROUNDS rounds alternate
# 1. the suite: `tracebench run -t lttng_kernel -w getpid` (syscall entry+exit
#    events), overhead per call from its result.json;
# 2. an independent measurement with LTTng's own CLI: the plain C getpid loop
#    of the other cross-checks (scripts/crosscheck_getpid_loop.c), timed
#    untraced, then inside a session made by hand (`lttng create`,
#    `enable-channel -k` with the suite's geometry, `enable-event -k --syscall
#    getpid`, `start`), cost = traced - untraced median chunk per call.
#    Its trace comes back to the host and babeltrace2's Python bindings count
#    the entry/exit events: at least the calls the loop made, as many exits as
#    entries, nothing discarded.
# Both sides run under TCG (emulated): only their ratio means something.
# The medians over rounds must agree within 25 %.
# Output: results/crosscheck/lttng_kernel.json.
# Exit status: 0 agree, 1 disagree, 2 could not measure.
#
# Environment: BUILD (build dir, default <repo>/build), ROUNDS (default 3),
# N (calls per reference loop, default 20000), CHUNK (default 200),
# TRACEBENCH_VM_KERNEL (default: the newest /boot/vmlinuz-*).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TB=$BUILD/bench/tracebench
OUT=${OUT:-$ROOT/results/crosscheck}
ROUNDS=${ROUNDS:-3}
N=${N:-20000}
CHUNK=${CHUNK:-200}
TOLERANCE=0.25
PY=/usr/bin/python3            # Debian's, which has the bt2 module
WORK=$(mktemp -d /tmp/tracebench-xcheck-lttng-kernel.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

die() { echo "crosscheck_lttng_kernel: $*" >&2; exit 2; }
[ -x "$TB" ] || die "no $TB (build first)"
"$PY" -c 'import bt2' 2>/dev/null || die "python3-bt2 is missing (apt-get install python3-bt2)"
cc -O2 -o "$WORK/getpid_loop" "$ROOT/scripts/crosscheck_getpid_loop.c" || die "cannot compile the reference loop"

cat > "$WORK/guest.sh" <<EOF
set -u
exe="--execution qemu-\$TRACEBENCH_VM_ACCEL"
# One daemon for both sides (the adapter uses a running one and leaves it).
lttng-sessiond --daemonize --extra-kmod-probes=tracebench || exit 2
for r in \$(seq 1 $ROUNDS); do
  tracebench run \$exe -t lttng_kernel -w getpid -r 6 -n 1000 --out suite-\$r > suite-\$r.log 2>&1 || exit 2
  getpid_loop $N $CHUNK > base-\$r.json || exit 2
  lttng create xck-\$r --output=/results/trace-\$r > /dev/null || exit 2
  lttng enable-channel -k c --subbuf-size=2M --num-subbuf=8 > /dev/null || exit 2
  lttng enable-event -k -c c --syscall getpid > /dev/null || exit 2
  lttng start > /dev/null || exit 2
  getpid_loop $N $CHUNK > traced-\$r.json || exit 2
  lttng stop > /dev/null
  lttng list xck-\$r | sed -n 's/.*Discarded events: *//p' > discarded-\$r.txt
  lttng destroy xck-\$r > /dev/null
done
EOF

vm=(--no-kmod --lttng-modules --bin "$TB:/tb/bin/tracebench" --bin "$WORK/getpid_loop:/tb/bin/getpid_loop"
    --file "$WORK/guest.sh:/tb/xcheck.sh" --outdir "$WORK/vm" --timeout 900)
[ -n "${TRACEBENCH_VM_KERNEL:-}" ] && vm+=(--kernel "$TRACEBENCH_VM_KERNEL")
"$ROOT/scripts/vm/tracebench-vm.sh" "${vm[@]}" -- sh /tb/xcheck.sh ||
  { tail -n 30 "$WORK/vm/guest-output.txt" >&2 2>/dev/null; die "the VM run failed"; }

mkdir -p "$OUT"
"$PY" - "$WORK/vm" "$ROUNDS" "$N" "$TOLERANCE" "$OUT/lttng_kernel.json" <<'PY'
import bt2, glob, json, statistics, sys
vm, rounds, n, tol, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
vmj = json.load(open(f"{vm}/vm.json"))
suite, ref, checks = [], [], []
for r in range(1, rounds + 1):
    (res,) = glob.glob(f"{vm}/suite-{r}/*/result.json")
    (b,) = json.load(open(res))["benchmarks"]
    assert b["status"] == "ok" and b["events"]["verification"] == "passed", b.get("error")
    suite.append(b["overhead_ns_per_event"]["median"])
    base = json.load(open(f"{vm}/base-{r}.json"))
    traced = json.load(open(f"{vm}/traced-{r}.json"))
    ref.append(traced["ns_per_call_median_chunk"] - base["ns_per_call_median_chunk"])
    names = {}
    for m in bt2.TraceCollectionMessageIterator(f"{vm}/trace-{r}"):
        if type(m) is bt2._EventMessageConst:
            names[m.event.name] = names.get(m.event.name, 0) + 1
    calls = traced["calls"] + traced["warmup_calls"]
    entries, exits = names.get("syscall_entry_getpid", 0), names.get("syscall_exit_getpid", 0)
    discarded = int(open(f"{vm}/discarded-{r}.txt").read().strip() or 0)
    ok = entries >= calls and exits == entries and discarded == 0
    checks.append({"round": r, "loop_calls": calls, "entries": entries, "exits": exits,
                   "discarded": discarded, "ok": ok})
    assert ok, f"round {r}: the reference trace does not hold the loop's calls: {checks[-1]}"
s, f = statistics.median(suite), statistics.median(ref)
ratio = s / f
agree = abs(ratio - 1) <= tol
result = {
    "tracer": "lttng_kernel", "workload": "getpid (syscall entry+exit events)",
    "kernel": vmj["kernel_release"], "accel": vmj["accel"], "emulated": vmj["emulated"],
    "suite_overhead_ns_per_round": suite, "reference_overhead_ns_per_round": ref,
    "suite_median_ns": s, "reference_median_ns": f, "ratio": ratio, "tolerance": tol, "agree": agree,
    "reference": "crosscheck_getpid_loop.c under an `lttng` CLI kernel session (--syscall getpid), "
                 "traced minus untraced median chunk",
    "reference_trace_checks": checks,
}
json.dump(result, open(out, "w"), indent=2)
print(f"lttng_kernel getpid on {vmj['kernel_release']} ({vmj['accel']}): suite {s:.1f} ns, "
      f"lttng CLI loop {f:.1f} ns, ratio {ratio:.3f} -> {'agree' if agree else 'DISAGREE'}")
sys.exit(0 if agree else 1)
PY
