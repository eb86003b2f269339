#!/bin/bash
# `tracebench vm` takes its qemu down with it: SIGKILL of tracebench (its
# script's PR_SET_PDEATHSIG, then the scripts' traps and qemu's own
# PR_SET_PDEATHSIG), and SIGTERM (forwarded to the script's process group).
# Each round starts a guest under TCG, waits until qemu runs, signals
# tracebench only, then checks that qemu and both scripts are gone within a
# bound and that no result comes back later (the guest's run would take
# minutes: 5000 repetitions).  TERM2 signals twice, 0.3 s apart (a user's
# second Ctrl-C reaches the scripts while they tear down): each round's
# scripts leave nothing in its own TMPDIR.
#   vm_signals.sh TRACEBENCH OUT_DIR
set -uo pipefail
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
tracebench=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
. "$(dirname "$0")/../common/check.sh"

# Descendants of $1 (pid comm lines), through /proc's parent links.
descendants() {
  local p
  for p in $(ps -o pid= --ppid "$1"); do
    echo "$p $(cat /proc/$p/comm 2>/dev/null)"
    descendants "$p"
  done
}

# Alive and not a zombie (an orphan's zombie waits for whoever reaps it).
running() { [ -r /proc/$1/stat ] && [ "$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1)" != Z ]; }

for round in KILL TERM TERM2; do
  sig=${round%2}
  dir=$out/$round
  mkdir -p "$dir/tmp"
  TMPDIR=$dir/tmp "$tracebench" vm --kernel "$kernel" --no-kmod --accel tcg --timeout 600 --out-dir "$dir/results" -- run -t none -w getpid -r 5000 --no-samples \
    > "$dir.log" 2>&1 &
  tb=$!
  qemu="" family=""
  for _ in $(seq 600); do  # up to 120 s for the initramfs and qemu's start
    family=$(descendants $tb)
    qemu=$(echo "$family" | awk '$2 ~ /^qemu-system/ {print $1; exit}')
    [ -n "$qemu" ] && break
    kill -0 $tb 2>/dev/null || break
    sleep 0.2
  done
  check "$round: qemu started under tracebench vm" '[ -n "$qemu" ]' || { cat "$dir.log"; continue; }
  sleep 2
  pids=$(echo "$family" | awk '{print $1}' | tr '\n' ' ')
  kill -$sig $tb
  [ "$round" = TERM2 ] && { sleep 0.3; kill -TERM $tb 2>/dev/null; }
  gone=0
  for _ in $(seq 75); do  # 15 s
    alive=""
    for p in $pids; do running "$p" && alive="$alive $p"; done
    [ -z "$alive" ] && { gone=1; break; }
    sleep 0.2
  done
  check "$round: qemu and the scripts ($pids) are gone within 15 s of the signal to tracebench" '[ $gone -eq 1 ]' ||
    ps -o pid,ppid,stat,args -p "${alive// /,}" 2>/dev/null
  wait $tb 2>/dev/null
  sleep 5
  check "$round: no result came back afterwards" '! find "$dir" -name result.json | grep -q .'
  check "$round: the scripts left nothing in their TMPDIR" '[ -z "$(ls -A "$dir/tmp")" ]' || ls -la "$dir/tmp"
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done  # (only on failure: nothing of ours stays)
done
exit $fail
