#!/bin/bash
# Cross-checks the systemtap adapter's getpid figure against stap run by
# hand in the VM lab's guest: a script written here (not the adapter's),
# compiled with stap for the guest's kernel, run with `staprun -c` around an
# independent loop (scripts/crosscheck_getpid_loop.c, N getpid calls timed
# in chunks), the loop timed alone and traced, interleaved, ROUNDS times;
# in the same boot `tracebench run --quick -t systemtap -w getpid`.  Prints
# the hand overhead (median chunk, traced - alone), the suite's and their
# ratio; the guest's output is kept in OUTDIR.
#   scripts/vm/crosscheck-systemtap.sh TRACEBENCH OUTDIR [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tb=$1 out=$2 rounds=${3:-5}
kernel=$(ls -1 /boot/vmlinuz-* | sort -V | tail -1)
krel=$(kernel_release "$kernel")
headers=$(headers_for "$krel")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/getpid_loop" "$here/../crosscheck_getpid_loop.c"
# The adapter's prepared tree (Debian's split headers, the patched runtime): any stap needs them for this kernel.
"$tb" systemtap build --headers "$headers" --out "$work/unused" >/dev/null  # (the suite's getpid module, packed below)
tree=$HOME/.cache/tracebench/systemtap/$(basename "$(readlink -f "$headers")")
cat > "$work/hand.stp" <<'STP'
global n
probe kernel.trace("raw_syscalls:sys_enter") { if (pid() == target() && $id == 39) n++ }
probe end { printf("hand count %d\n", n) }
STP
(cd "$work" && stap -r "$tree/build" -R "$tree/runtime" -DSTP_NO_OVERLOAD -p4 -m xc_hand hand.stp >/dev/null)
cat > "$work/guest.sh" <<EOF2
cd /results
for r in \$(seq $rounds); do
  echo "alone \$(/tb/bin/getpid_loop 200000 50)"
  staprun -o /tmp/hand.txt -c "/tb/bin/getpid_loop 200000 50" /tb/xc/xc_hand.ko > /tmp/loop.txt 2>/tmp/hand.err
  echo "traced \$(cat /tmp/loop.txt) \$(cat /tmp/hand.txt | tr '\n' ' ')"
done
tracebench run --quick -t systemtap -w getpid --out /results/suite > /dev/null 2>&1; echo "suite status \$?"
EOF2
mkdir -p "$work/xc" && cp "$work/xc_hand.ko" "$work/xc/"
"$here/tracebench-vm.sh" --kernel "$kernel" --outdir "$out" --bin "$work/getpid_loop:/tb/bin/getpid_loop" \
  --bin "$tb:/tb/bin/tracebench" --file "$work/xc:/tb/xc" --file "$work/guest.sh:/tb/guest.sh" \
  --file "$work/unused:/tb/stap" --bin "$(command -v staprun):/usr/bin/staprun" \
  --bin /usr/lib/systemtap/stapio:/usr/lib/systemtap/stapio -- sh -c \
  "mkdir -p /results/suite && exec sh /tb/guest.sh" >/dev/null 2>&1 || true
python3 - "$out" <<'PY'
import glob, json, re, statistics, sys
out = sys.argv[1]
lines = open(f"{out}/guest-output.txt").read().splitlines()
alone = [json.loads(l.split(" ", 1)[1])["ns_per_call_median_chunk"] for l in lines if l.startswith("alone {")]
traced, counts = [], []
for l in lines:
    if l.startswith("traced {"):
        traced.append(json.loads(l[7:l.index("}") + 1])["ns_per_call_median_chunk"])
        m = re.search(r"hand count (\d+)", l)
        counts.append(int(m.group(1)) if m else -1)
r = json.load(open(glob.glob(f"{out}/suite/*/result.json")[0]))
b = [b for b in r["benchmarks"] if b["tracer"] == "systemtap"][0]
suite = b["overhead_ns_per_event"]["median"] if isinstance(b["overhead_ns_per_event"], dict) else b["overhead_ns_per_event"]
hand = statistics.median(traced) - statistics.median(alone)
print(f"rounds {len(alone)}: loop alone {statistics.median(alone):.1f} ns, traced {statistics.median(traced):.1f} ns; "
      f"hand overhead {hand:.1f} ns; counts by the hand script {counts} (of 201000 getpid each: 1000 warm-up + 200000)")
print(f"suite systemtap/getpid overhead {suite:.1f} ns ({b['events']['verification']}); suite / hand = {suite / hand:.3f}")
PY
