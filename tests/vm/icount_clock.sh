#!/bin/bash
# The VM lab's instruction-counting clock end to end (`--clock icount`):
# compare-kernels.sh --clock icount with kernel A = kernel B, one boot each,
# of an eBPF tracepoint on getpid.  Under TCG's wall clock two boots of one
# kernel differ by tens of percent; counting instructions they must give the
# same figure (within 0.5%: the same instructions ran).  Checks: both boots
# ran with the clock asked (vm.json: icount, one vCPU), the guest's results
# say execution qemu-tcg-icount, emulated, with the warning that the figures
# are instructions; every event verified; compare's row says `same` with
# A's and B's figures equal.  Bad input (icount with KVM, or through LAVA)
# is refused with exit 2 before anything boots.  ~50 s under TCG.
#   icount_clock.sh TRACEBENCH SRC OUTDIR
# Kernel: tests/common/test_kernel.sh ($TRACEBENCH_VM_KERNEL, else Debian 12's series in /boot).
set -uo pipefail
tb=$1 src=$2 out=$3
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
[ -n "$kernel" ] || { echo "FAIL: no kernel image: apt-get install linux-image-amd64 linux-headers-amd64"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out"
mkdir -p "$out"

# Refused before anything is built or booted.
"$tb" vm --clock icount --accel kvm --kernel "$kernel" --out-dir "$out/refused-vm" -- run --quick -w getpid \
  >"$out/refused-vm.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "clock icount is TCG's" "$out/refused-vm.txt" ||
  fail "vm --clock icount --accel kvm: exit $rc: $(cat "$out/refused-vm.txt")"
[ ! -e "$out/refused-vm" ] || fail "vm --clock icount --accel kvm left $out/refused-vm"
"$src/scripts/vm/compare-kernels.sh" --tracebench "$tb" --clock icount --lava someone --outdir "$out/refused-ck" \
  "$kernel" "$kernel" -- run --quick -w getpid >"$out/refused-ck.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "clock icount is for local boots" "$out/refused-ck.txt" ||
  fail "compare-kernels --clock icount --lava: exit $rc: $(cat "$out/refused-ck.txt")"
echo "ok: icount with KVM or LAVA refused, exit 2, nothing booted"

start=$SECONDS
"$src/scripts/vm/compare-kernels.sh" --tracebench "$tb" --clock icount --outdir "$out/ck" --timeout 300 \
  "$kernel" "$kernel" -- run -t none -t ebpf -w getpid --quick --no-samples >"$out/ck.txt" 2>&1
rc=$?
echo "compare-kernels --clock icount: status $rc in $((SECONDS - start)) s"
[ $rc -eq 0 ] || { tail -n 40 "$out/ck.txt"; fail "compare-kernels.sh --clock icount exited $rc"; }
/usr/bin/python3 - "$out/ck" <<'PY' || exit 1
import glob, json, os, re, sys
d = sys.argv[1]
figures = {}
for side in ("A", "B"):
    vm = json.load(open(os.path.join(d, side, "round1", "vm.json")))
    assert vm["accel"] == "tcg" and vm["clock"] == "icount" and vm["smp"] == 1 and vm["emulated"], (side, vm)
    (res,) = glob.glob(os.path.join(d, side, "runs", "*", "result.json"))
    r = json.load(open(res))
    c = r["context"]
    assert c["execution"] == "qemu-tcg-icount" and c["emulated"], (side, c["execution"], c["emulated"])
    assert any("counts instructions" in w for w in c["noise_warnings"]), (side, c["noise_warnings"])
    (b,) = [x for x in r["benchmarks"] if x["tracer"] == "ebpf"]
    assert b["status"] == "ok" and b["events"]["verification"] == "passed", (side, b["status"], b["events"])
    figures[side] = b["overhead_cycles_per_event"]["median"]
a, b = figures["A"], figures["B"]
assert a > 0 and abs(b - a) <= 0.005 * a, f"two boots of one kernel: {a} vs {b} instructions per event"
row = [l for l in open(os.path.join(d, "compare.txt")) if l.startswith("ebpf/getpid/")]
assert row and re.search(r"\bsame\b", row[0]), open(os.path.join(d, "compare.txt")).read()
print(f"ok: two boots of one kernel, eBPF on getpid: {a:.0f} and {b:.0f} guest instructions per event; compare: same")
PY
