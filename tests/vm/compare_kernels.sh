#!/bin/bash
# The documented two-kernel command end to end, made cheap: kernel A = kernel
# B (the VM lab's default kernel), two interleaved rounds of a small run.
# Checks: every boot succeeded, both sides' run directories were pooled
# (2 runs each) and the comparison printed a row per benchmark.
#   compare_kernels.sh TRACEBENCH OUTDIR
set -uo pipefail
tb=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
kernel=${TRACEBENCH_VM_KERNEL:-$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)}
[ -n "$kernel" ] || { echo "FAIL: no kernel image: apt-get install linux-image-amd64 linux-headers-amd64"; exit 1; }
rm -rf "$out"
start=$SECONDS
"$here/../../scripts/vm/compare-kernels.sh" --tracebench "$tb" --outdir "$out" --rounds 2 --timeout 300 \
  "$kernel" "$kernel" -- run -t none -t kprobes -w kmod_fixed -w kmod_target --quick -r 3 -n 300 --no-samples
rc=$?
echo "compare-kernels: status $rc in $((SECONDS - start)) s"
[ $rc -eq 0 ] || { echo "FAIL: compare-kernels.sh exited $rc"; exit 1; }
for side in A B; do
  n=$(ls -1 "$out/$side/runs" | wc -l)
  [ "$n" -eq 2 ] || { echo "FAIL: side $side has $n runs, expected 2"; exit 1; }
done
grep -q '^A: 2 runs' "$out/compare.txt" || { echo "FAIL: A is not pooled:"; cat "$out/compare.txt"; exit 1; }
grep -q '^B: 2 runs' "$out/compare.txt" || { echo "FAIL: B is not pooled"; exit 1; }
for b in none/kmod_fixed kprobes/kmod_target; do
  grep -q "^$b/" "$out/compare.txt" || { echo "FAIL: no row for $b"; cat "$out/compare.txt"; exit 1; }
done
if grep -q 'missing on one side' "$out/compare.txt"; then echo "FAIL: a benchmark failed"; cat "$out/compare.txt"; exit 1; fi
# Bad input: a clear error, nothing booted.
msg=$("$here/../../scripts/vm/compare-kernels.sh" --tracebench "$tb" --rounds 0 "$kernel" "$kernel" -- run 2>&1)
[ $? -eq 2 ] && echo "$msg" | grep -q -- '--rounds must be' || { echo "FAIL: --rounds 0 not rejected: $msg"; exit 1; }
echo "compare-kernels: ok"
