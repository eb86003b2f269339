#!/bin/sh
# /tb/lava-test.sh: the guest side of a tracebench LAVA job (busybox sh).
#
# LAVA's test shell runs this (the job's inline test definition,
# harness/lava/lava_job.cc).  It runs /tb/run.sh (the tracebench command)
# in /results, and sends the run's files back in the job log, on the
# console, as framed base64 lines (harness/lava/README.md, "How results
# come back"):
#   TBLAVA FILE <rev> <name> <size> <sha256>
#   TBLAVA DATA <rev> <line number> <base64 of up to 57 bytes>
#   TBLAVA END <rev> <name> <lines>
#   TBLAVA FINAL               (the run ended: what follows is its last word)
#   TBLAVA DONE <status>
# Every line says what it is, so a kernel message or a line LAVA split is
# found, not decoded into the file; the host (`tracebench lava fetch`)
# keeps, per file, the last revision whose size and sha256 check.
# result.json is rewritten by the run after each benchmark (the journal):
# each new version goes out as soon as it is seen, so the benchmarks that
# finished come back even when the job times out or the board dies; every
# file of /results goes out at the end.  Then each benchmark becomes a LAVA
# test case (`tracebench lava cases`: pass, or fail when its verification
# failed, with its overhead per event in ns).
set -u
export PATH=/tb/bin:$PATH
rev=0
mkdir -p /results /tmp/tblava
cd /results || exit 1

# send FILE (a path relative to /results): from a copy, so that the run
# replacing the file meanwhile cannot mix two versions in one revision.
send() {
  rev=$((rev + 1))
  cp "$1" /tmp/tblava/snap || return 0
  size=$(stat -c %s /tmp/tblava/snap)
  sum=$(sha256sum /tmp/tblava/snap | cut -d' ' -f1)
  echo "TBLAVA FILE $rev $1 $size $sum"
  base64 /tmp/tblava/snap | awk -v r="$rev" '{ print "TBLAVA DATA " r " " NR " " $0 }'
  echo "TBLAVA END $rev $1 $(base64 /tmp/tblava/snap | wc -l)"
}

# Every result.json whose content changed since it last went out.
send_changed() {
  for f in $(find . -name result.json | sed 's|^\./||' | sort); do
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    [ -n "$sum" ] || continue
    key=/tmp/tblava/$(echo "$f" | tr '/' '_')
    [ "$(cat "$key" 2>/dev/null)" = "$sum" ] && continue
    echo "$sum" > "$key"
    send "$f"
  done
}

kmod_status=$(cat /tb/kmod-status 2>/dev/null || echo 0)
if [ "$kmod_status" != 0 ]; then
  echo "tracebench-lava: the companion module was not loaded as asked: $(cat /results/insmod-error.txt 2>/dev/null)"
  lava-test-case tracebench-module --result fail
  echo "TBLAVA FINAL"
  [ -f insmod-error.txt ] && send insmod-error.txt
  echo "TBLAVA DONE $kmod_status"
  exit 0
fi

# KVM names itself to the kernel; `run` cannot tell KVM under QEMU from any
# other KVM host, so it is told (TCG it detects from CPUID itself).
TB_RUN_EXECUTION=""
dmesg | grep -q 'Hypervisor detected: KVM' && TB_RUN_EXECUTION="--execution qemu-kvm"
export TB_RUN_EXECUTION

(sh /tb/run.sh > /results/guest-output.txt 2>&1; echo $? > /tmp/tblava/status) &
runner=$!
while kill -0 $runner 2>/dev/null; do
  sleep 1
  send_changed
done
wait $runner
status=$(cat /tmp/tblava/status 2>/dev/null || echo 126)
cat /results/guest-output.txt
dmesg > /results/dmesg.txt 2>/dev/null
if grep -qE 'WARNING: CPU|BUG:|Oops|general protection|KASAN|UBSAN|RCU stall|soft lockup' /results/dmesg.txt; then
  echo "tracebench-lava: kernel reported a warning or oops (see dmesg.txt)"
  [ "$status" = 0 ] && status=124
fi
echo "TBLAVA FINAL"
for f in $(find . -type f | sed 's|^\./||' | sort); do send "$f"; done
for f in $(find . -name result.json | sort); do
  tracebench lava cases "$f" | while read -r name result measurement; do
    if [ "$measurement" = - ]; then
      lava-test-case "$name" --result "$result"
    else
      lava-test-case "$name" --result "$result" --measurement "$measurement" --units ns
    fi
  done
done
if [ "$status" = 0 ]; then
  lava-test-case tracebench-exit --result pass
else
  lava-test-case tracebench-exit --result fail
fi
echo "TBLAVA DONE $status"
exit 0
