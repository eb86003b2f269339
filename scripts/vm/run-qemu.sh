#!/bin/bash
# Boots a kernel + VM-lab initramfs under qemu and brings the results back.
#   run-qemu.sh --kernel IMAGE --initrd CPIO --outdir DIR
#               [--accel auto|kvm|tcg] [--clock wall|icount] [--timeout SECONDS]
#               [--smp N] [--mem MB] [--append "kernel args"] [--verbose]
# Writes DIR/<files from the guest's /results>, DIR/console.log and
# DIR/vm.json ({accel, emulated, kernel, ...}); exits with the guest's status,
# or 3 when the VM failed (timeout, crash, truncated result stream).
# qemu is killed on every exit path.
#
# --accel auto tries KVM first and falls back to TCG when the guest does not
# boot under it (a nested host may hang it, or qemu may abort).  That failure
# is remembered until the host reboots, for the same qemu: in
# ${XDG_CACHE_HOME:-~/.cache}/tracebench/kvm-failed (boot id, qemu version,
# why), so the next auto boots go to TCG at once instead of paying the probe
# again (up to TB_VM_KVM_PROBE_SECONDS, 20 s, a boot on a host whose KVM
# hangs guests).  --accel kvm always tries; a KVM boot that works forgets it.
#
# --clock icount: TCG whose clock counts instructions (QEMU -icount
# shift=0,sleep=off): the guest's TSC and clocks advance one ns per
# instruction, so what the guest measures is the same on every boot (a
# figure is instructions per event; the guest runs as execution
# qemu-tcg-icount).  One vCPU: under -icount QEMU does not bring up a second
# one here (the boot stops at "Bringing up secondary CPUs").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
kernel="" initrd="" outdir="" accel=auto clock=wall timeout_s=600 smp=2 mem=1024 append="" verbose=0
kvm_probe_s=${TB_VM_KVM_PROBE_SECONDS:-20}
kvm_dev=${TB_VM_KVM_DEV:-/dev/kvm}
boot_id_file=${TB_VM_BOOT_ID_FILE:-/proc/sys/kernel/random/boot_id}
kvm_memo=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracebench/kvm-failed
die() { echo "run-qemu: $*" >&2; exit 3; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=$2; shift 2;;
    --initrd) initrd=$2; shift 2;;
    --outdir) outdir=$2; shift 2;;
    --accel) accel=$2; shift 2;;
    --clock) clock=$2; shift 2;;
    --timeout) timeout_s=$2; shift 2;;
    --smp) smp=$2; shift 2;;
    --mem) mem=$2; shift 2;;
    --append) append=$2; shift 2;;
    --verbose) verbose=1; shift;;
    *) die "unknown argument '$1'";;
  esac
done
[ -f "$kernel" ] || die "kernel image '$kernel' not found"
[ -f "$initrd" ] || die "initramfs '$initrd' not found"
[ -n "$outdir" ] || die "--outdir is required"
case "$accel" in auto|kvm|tcg) ;; *) die "--accel must be auto, kvm or tcg";; esac
case "$clock" in wall|icount) ;; *) die "--clock must be wall or icount";; esac
if [ "$clock" = icount ]; then
  [ "$accel" = kvm ] && die "--clock icount is TCG's (QEMU -icount): use --accel tcg or auto"
  accel=tcg
  [ "$smp" -gt 1 ] && echo "run-qemu: --clock icount boots one vCPU (QEMU's -icount brings up no second one here), not $smp" >&2
  smp=1
fi
tcg_thread=${TRACEBENCH_VM_TCG_THREAD:-single}
case "$tcg_thread" in single|multi) ;; *) die "TRACEBENCH_VM_TCG_THREAD must be single or multi";; esac
[[ "$timeout_s" =~ ^[0-9]+$ ]] && [ "$timeout_s" -gt 0 ] || die "--timeout must be a positive number of seconds"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found: \`scripts/setup.sh --area vm\` installs the VM lab (qemu-system-x86)"
mkdir -p "$outdir"
work=$(mktemp -d)
qpid=""
tailpid=""
cleanup() {
  # A second signal while tearing down (a user's second Ctrl-C, a group's
  # TERM after its leader's) would run `exit` inside this trap and leave
  # the work directory behind: from here on, nothing interrupts it.
  trap '' INT TERM HUP
  if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
    kill -TERM "$qpid" 2>/dev/null || true
    sleep 0.5
    kill -KILL "$qpid" 2>/dev/null || true
    wait "$qpid" 2>/dev/null || true
  fi
  [ -n "$tailpid" ] && kill "$tailpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# The first signal's own trap already ignores the next ones: one arriving
# between `exit` and cleanup's first line would otherwise end the EXIT trap
# before it removed anything.
trap 'trap "" INT TERM HUP; exit 130' INT
trap 'trap "" INT TERM HUP; exit 143' TERM
trap 'trap "" INT TERM HUP; exit 129' HUP

# Starts qemu in the background; sets qpid.
start_qemu() {  # $1 = kvm|tcg, $2 = channel file, $3 = console file
  local a=$1 chan=$2 con=$3
  # One TCG thread for all vCPUs.  With multi-threaded TCG a guest CPU can
  # keep executing a stale translation of code another CPU has just patched
  # (text_poke_bp, when kprobes, ftrace or static keys change): it then traps
  # on an int3 that is no longer in memory, the kernel's int3 handler sees the
  # byte gone and returns to re-execute it, forever, with interrupts off in
  # __schedule or the idle loop, while the patching CPU waits for it in
  # smp_call_function_many_cond (soft lockups in two CI runs and once here).
  # One thread translates and runs every vCPU in turn, so a code write is
  # seen by the next instruction fetch of any vCPU; on 2 host cores it runs
  # the VM-lab tests as fast (kprobes tests 46-49 s vs 49-51 s multi-threaded).
  # TRACEBENCH_VM_TCG_THREAD=multi restores QEMU's default.
  # idle=halt: QEMU emulates MWAIT as a halt; a CPU idling in MWAIT gets no
  # wake-up IPI because it advertises that it polls.
  local accel_args=(-accel "tcg,thread=$tcg_thread" -cpu max) idle=idle=halt label=$a
  [ "$a" = kvm ] && { accel_args=(-accel kvm -cpu host); idle=""; }
  [ "$a" = tcg ] && [ "$clock" = icount ] && { accel_args+=(-icount shift=0,sleep=off); label=tcg-icount; }
  : > "$chan"; : > "$con"
  # qemu dies with this script, however it ends (SIGKILL included).
  with_pdeathsig KILL qemu-system-x86_64 "${accel_args[@]}" -smp "$smp" -m "$mem" \
    -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 loglevel=4 panic=-1 oops=panic softlockup_panic=1 softlockup_all_cpu_backtrace=1 $idle rdinit=/init tsc=reliable tracebench.accel=$label $append" \
    -display none -monitor none -no-reboot -nodefaults \
    -chardev file,id=con,path="$con" -serial chardev:con \
    -chardev file,id=chan,path="$chan" -serial chardev:chan \
    </dev/null >"$work/qemu.out" 2>&1 &
  qpid=$!
  disown "$qpid" 2>/dev/null || true  # no job-status noise when qemu aborts
}

# Waits for qemu to exit, at most $1 seconds; returns 0 if it exited.
wait_qemu() {
  local deadline=$((SECONDS + $1))
  while kill -0 "$qpid" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.2
  done
  wait "$qpid" 2>/dev/null || true
  qpid=""
  return 0
}

kvm_usable() { [ -r "$kvm_dev" ] && [ -w "$kvm_dev" ]; }

# qemu's version line, read once: the KVM memo's key and vm.json's "qemu".
qemu_version=$(qemu-system-x86_64 --version | head -1)
# This boot of the host and this qemu, as the KVM memo keys them.
host_key() {
  printf '%s %s' "$(tr -d '\n' <"$boot_id_file" 2>/dev/null || echo unknown)" \
    "$(printf '%s' "$qemu_version" | sha256sum | cut -c1-16)"
}
# The reason KVM failed on this boot with this qemu, if it did.
kvm_failed_before() {
  local key
  key=$(host_key)
  [ -f "$kvm_memo" ] && awk -v k="$key" 'index($0, k " ") == 1 { print substr($0, length(k) + 2); found = 1 } END { exit !found }' "$kvm_memo"
}
remember_kvm_failed() {
  mkdir -p "$(dirname "$kvm_memo")" 2>/dev/null &&
    printf '%s %s\n' "$(host_key)" "$1" >"$kvm_memo.$$" 2>/dev/null && mv "$kvm_memo.$$" "$kvm_memo" 2>/dev/null || true
}

chan=$work/channel
con=$outdir/console.log
t0=$SECONDS
chosen=""
if [ "$accel" = auto ] && kvm_usable && earlier=$(kvm_failed_before); then
  echo "run-qemu: KVM failed on this host earlier since its boot ($earlier); TCG (emulated, slower; --accel kvm tries again)" >&2
elif [ "$accel" = kvm ] || { [ "$accel" = auto ] && kvm_usable; }; then
  kvm_usable || die "--accel kvm: /dev/kvm is not usable (missing or no permission)"
  start_qemu kvm "$chan" "$con"
  # A kernel that hangs under KVM (seen on nested setups) never says TBBOOT.
  deadline=$((SECONDS + kvm_probe_s))
  while ! grep -q '^TBBOOT' "$chan" 2>/dev/null; do
    if ! kill -0 "$qpid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then break; fi
    sleep 0.2
  done
  if grep -q '^TBBOOT' "$chan" 2>/dev/null; then
    chosen=kvm
    rm -f "$kvm_memo"
  else
    kill -KILL "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true; qpid=""
    [ "$accel" = kvm ] && die "guest did not boot under KVM within ${kvm_probe_s}s: $(head -c 300 "$work/qemu.out") (try --accel tcg)"
    # qemu's own words (an assertion in its KVM code, on some nested hosts)
    # are not the user's problem here: they go to a file the line names.
    why="did not boot the guest within ${kvm_probe_s}s"
    [ -s "$work/qemu.out" ] && why="cannot run a guest here (qemu's message: $outdir/qemu-kvm-attempt.err)"
    echo "run-qemu: KVM $why; falling back to TCG (emulated, slower)" >&2
    if [ -s "$work/qemu.out" ]; then remember_kvm_failed "qemu: $(head -n 1 "$work/qemu.out" | cut -c1-200)"
    else remember_kvm_failed "$why"; fi
    cp "$work/qemu.out" "$outdir/qemu-kvm-attempt.err" 2>/dev/null || true
    cp "$con" "$outdir/console-kvm-attempt.log" 2>/dev/null || true
  fi
fi
if [ -z "$chosen" ]; then
  chosen=tcg
  start_qemu tcg "$chan" "$con"
fi
if [ $verbose -eq 1 ]; then
  tail -n +1 -f "$con" >&2 &
  tailpid=$!
fi
boot_s=""
remaining=$((timeout_s - (SECONDS - t0)))
[ $remaining -lt 1 ] && remaining=1
timed_out=0
wait_qemu "$remaining" || timed_out=1
elapsed=$((SECONDS - t0))
boot_s=$(awk '/^TBBOOT /{print $3; exit}' "$chan" 2>/dev/null | tr -d '\r' || true)
[ -n "$tailpid" ] && { sleep 0.3; kill "$tailpid" 2>/dev/null || true; tailpid=""; }

rc=3
guest_status=""
if [ $timed_out -eq 1 ]; then
  echo "run-qemu: guest did not finish within ${timeout_s}s; killed (see $con)" >&2
else
  if guest_status=$("$here/decode-channel.sh" "$chan" "$outdir"); then
    rc=$guest_status
  else
    echo "run-qemu: result stream incomplete (guest crashed?); last console lines:" >&2
    tail -n 30 "$con" >&2 || true
    guest_status=""
  fi
fi
kver=$(awk '/^TBBOOT /{print $2; exit}' "$chan" 2>/dev/null | tr -d '\r' || true)
qver=$(printf '%s' "$qemu_version" | sed 's/"/\\"/g')
emulated=false; [ "$chosen" = tcg ] && emulated=true
cat > "$outdir/vm.json" <<JSON
{
  "accel": "$chosen",
  "clock": "$clock",
  "emulated": $emulated,
  "kernel_image": "$(realpath "$kernel")",
  "kernel_release": "${kver}",
  "qemu": "${qver}",
  "smp": $smp,
  "tcg_thread": $([ "$chosen" = tcg ] && echo "\"$tcg_thread\"" || echo null),
  "mem_mb": $mem,
  "timed_out": $([ $timed_out -eq 1 ] && echo true || echo false),
  "guest_status": ${guest_status:-null},
  "guest_uptime_at_init_seconds": ${boot_s:-null},
  "wall_seconds": $elapsed
}
JSON
exit "$rc"
