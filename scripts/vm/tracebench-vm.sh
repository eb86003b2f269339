#!/bin/bash
# The VM lab: runs a command (normally `tracebench run ...`) on a kernel of
# your choice under qemu and brings the result files back.
#
#   tracebench-vm.sh --kernel IMAGE [--headers DIR] [--outdir DIR]
#       [--accel auto|kvm|tcg] [--clock wall|icount] [--timeout S] [--smp N] [--mem MB]
#       [--bin EXE[:DEST]]... [--file SRC:DEST]... [--no-kmod] [--lttng-modules]
#       [--kmod-param NAME=VALUE]... [--verbose]
#       [--initramfs-out FILE [--lava]] -- COMMAND [ARGS...]
#
# Steps: build kmod/ against the kernel's headers, build an initramfs with
# busybox + the binaries (+ their shared libraries) + the module, boot qemu
# (KVM if it boots, else TCG), run COMMAND in /results of the guest with the
# module loaded, decode the result channel into OUTDIR, exit with COMMAND's
# status (3 = the VM itself failed).  --lttng-modules also builds LTTng's
# kernel tracer for the kernel (build-lttng-modules.sh, cached) and packs it
# with lttng-sessiond, lttng-consumerd, the lttng CLI and babeltrace2's
# plugins, for the lttng_kernel adapter.  --kmod-param NAME=VALUE (repeatable)
# is passed to the guest's insmod of the module (e.g. inject_delay_ns=100,
# kmod/README.md); the parameters in effect come back in kmod-params.txt, and
# a module that refuses to load ends the boot with status 125 and its reason
# in insmod-error.txt.  OUTDIR/vm.json records the kernel and the acceleration
# (TCG results are marked "emulated"); --clock icount gives TCG a clock that
# counts instructions (run-qemu.sh).  --initramfs-out FILE stops after the
# module and the initramfs are built (FILE gets the initramfs, nothing
# boots); with --lava the initramfs is one for a LAVA job (mkinitramfs.sh
# --lava; `tracebench lava job`, harness/lava/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
kernel="" headers="" outdir="" stap=0 accel=auto clock=wall timeout_s=600 smp=2 mem=1024 kmod=1 lttng_modules=0 verbose=()
bins=() files=() kparams=() initramfs_out="" lava=()
die() { echo "tracebench-vm: $*" >&2; exit 3; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=$2; shift 2;;
    --headers) headers=$2; shift 2;;
    --outdir) outdir=$2; shift 2;;
    --accel) accel=$2; shift 2;;
    --clock) clock=$2; shift 2;;
    --timeout) timeout_s=$2; shift 2;;
    --smp) smp=$2; shift 2;;
    --mem) mem=$2; shift 2;;
    --bin) bins+=(--bin "$2"); shift 2;;
    --file) files+=(--file "$2"); shift 2;;
    --no-kmod) kmod=0; shift;;
    --kmod-param) kparams+=("$2"); shift 2;;
    --lttng-modules) lttng_modules=1; shift;;
    --verbose) verbose=(--verbose); shift;;
    --initramfs-out) initramfs_out=$2; shift 2;;
    --lava) lava=(--lava); shift;;
    --) shift; break;;
    *) die "unknown argument '$1' (the guest command goes after --)";;
  esac
done
[ $# -gt 0 ] || die "no guest command after --"
for kp in "${kparams[@]}"; do
  kmod_param_ok "$kp" || die "--kmod-param '$kp': expected NAME=VALUE, $kmod_param_rule"
done
[ ${#kparams[@]} -eq 0 ] || [ $kmod -eq 1 ] || die "--kmod-param and --no-kmod: there is no module to give parameters to"
if [ -z "$kernel" ]; then
  kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$kernel" ] || die "no --kernel and no /boot/vmlinuz-*: \`scripts/setup.sh --area vm\` installs Debian's (linux-image-amd64 linux-headers-amd64)"
fi
[ -f "$kernel" ] || die "kernel image '$kernel' not found"
[ -r "$kernel" ] || die "kernel image '$kernel' is not readable (Debian installs them 0600: run as root)"
# Kernel release: from the file name (/boot/vmlinuz-<release>) or the bzImage header.
krel=$(kernel_release "$kernel")
if { [ $kmod -eq 1 ] || [ $lttng_modules -eq 1 ]; } && [ -z "$headers" ]; then
  headers=$(headers_for "$krel")
  [ -n "$headers" ] || die "no kernel headers for '${krel:-$kernel}': apt-get install linux-headers-${krel:-<release>}, or pass --headers DIR (or --no-kmod)"
fi
[ ${#lava[@]} -eq 0 ] || [ -n "$initramfs_out" ] || die "--lava needs --initramfs-out FILE (LAVA boots it, not this script)"
[ -n "$outdir" ] || outdir=vm-results/${krel:-kernel}-$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$initramfs_out" ] || mkdir -p "$outdir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

kargs=()
if [ $kmod -eq 1 ]; then
  ko=$("$here/build-kmod.sh" --headers "$headers" --out "$work/kmod" --kernel "$kernel") || die "module build failed"
  kargs=(--kmod "$ko")
  for kp in "${kparams[@]}"; do kargs+=(--kmod-param "$kp"); done
  [ -f "$work/kmod/tracebench-btf.ko" ] && kargs+=(--file "$work/kmod/tracebench-btf.ko:/tb/tracebench-btf.ko")
fi
if [ $lttng_modules -eq 1 ]; then
  modroot=$("$here/build-lttng-modules.sh" --headers "$headers" ${krel:+--release "$krel"}) ||
    die "building lttng-modules failed"
  kargs+=(--file "$modroot/lib/modules:/lib/modules")
  for b in lttng-sessiond lttng; do
    p=$(command -v $b) || die "$b not found: apt-get install lttng-tools"
    kargs+=(--bin "$p:$p")
  done
  # The session daemon runs the consumer daemon from its compiled-in path.
  consumerd=$(ls /usr/lib/*/lttng/libexec/lttng-consumerd 2>/dev/null | head -1)
  [ -n "$consumerd" ] || die "lttng-consumerd not found: apt-get install lttng-tools"
  kargs+=(--bin "$consumerd:$consumerd")
  [ -d /usr/share/xml/lttng ] && kargs+=(--file /usr/share/xml/lttng:/usr/share/xml/lttng)
  plugins=$(ls -d /usr/lib/*/babeltrace2/plugins 2>/dev/null | head -1)
  [ -n "$plugins" ] || die "babeltrace2's plugins not found: apt-get install libbabeltrace2-0"
  kargs+=(--file "$plugins:$plugins")
fi
# SystemTap (a guest command that names the systemtap tracer): the tracebench
# binary that goes into the guest compiles its scripts here against the
# guest's headers (`tracebench systemtap build`, cached), and the guest gets
# the modules in /tb/stap with staprun and stapio (tracers/systemtap/README.md);
# for systemtap_bpf (SystemTap's BPF runtime) the BPF scripts (.bo) and stapbpf.
# A `model` command (model suite) also gets the handler counts its sweep runs;
# a `run` naming its workloads (-w) gets the scripts of those only, of the
# actions it names (-a; count by default), of its handler count (ecbs) and,
# with at=return, the user functions' return probes.
stap_runtime=module stap_sweep=() stap_workloads=() stap_actions=() prev=""
for a in "$@"; do
  case "$a" in systemtap|-tsystemtap|--tracer=systemtap) stap=1;; esac
  case "$a" in systemtap_bpf|-tsystemtap_bpf|--tracer=systemtap_bpf) stap=1 stap_runtime=all;; esac
  case "$a" in model) stap_sweep=(--model-sweep);; esac
  case "$prev" in -w|--workload) stap_workloads+=(--workload "$a");; esac
  case "$a" in -w?*) stap_workloads+=(--workload "${a#-w}");; --workload=*) stap_workloads+=(--workload "${a#--workload=}");; esac
  case "$prev" in -a|--action) case "$a" in count|record) stap_actions+=(--action "$a");; esac;; esac
  case "$a" in -acount|-arecord) stap_actions+=(--action "${a#-a}");; --action=count|--action=record) stap_actions+=(--action "${a#--action=}");; esac
  case "$a" in systemtap.ecbs=*|systemtap_bpf.ecbs=*) stap_actions+=(--handlers "${a#*.ecbs=}");; esac
  case "$a" in systemtap.at=return|systemtap_bpf.at=return) stap_actions+=(--at-return);; esac
  prev=$a
done
[ ${#stap_sweep[@]} -eq 0 ] || stap_workloads=()
if [ $stap -eq 1 ]; then
  tb=""
  for b in "${bins[@]}"; do case "$b" in *:/tb/bin/tracebench) tb=${b%%:*};; esac; done
  [ -n "$tb" ] || die "the guest runs SystemTap but no tracebench binary goes in (--bin TRACEBENCH:/tb/bin/tracebench) to compile its scripts"
  [ -n "$headers" ] || headers=$(headers_for "$krel")
  [ -n "$headers" ] || die "SystemTap's scripts are compiled against the guest kernel's headers: apt-get install linux-headers-${krel:-<release>}"
  "$tb" systemtap build --runtime "$stap_runtime" --headers "$headers" --out "$work/stap" ${ko:+--kmod "$ko"} \
    --exe-path /tb/bin/tracebench "${stap_sweep[@]}" "${stap_workloads[@]}" "${stap_actions[@]}" >/dev/null || die "compiling SystemTap's scripts for ${krel:-the kernel} failed"
  stapio=/usr/lib/systemtap/stapio
  [ -x "$stapio" ] && command -v staprun >/dev/null || die "staprun/stapio not found: \`scripts/setup.sh --area systemtap\` installs them (systemtap-runtime)"
  kargs+=(--file "$work/stap:/tb/stap" --bin "$(command -v staprun):/usr/bin/staprun" --bin "$stapio:$stapio")
  if [ "$stap_runtime" = all ]; then
    command -v stapbpf >/dev/null || die "stapbpf not found (systemtap_bpf): \`scripts/setup.sh --area systemtap\` installs it (systemtap)"
    kargs+=(--bin "$(command -v stapbpf):/usr/bin/stapbpf")
  fi
fi
# The guest command, quoted for busybox sh.
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
  echo "# generated by tracebench-vm.sh"
  printf 'exec'
  for a in "$@"; do printf ' %s' "$(q "$a")"; done
  echo
} > "$work/run.sh"
"$here/mkinitramfs.sh" --out "$work/initramfs.cpio" --run "$work/run.sh" "${kargs[@]}" \
  "${bins[@]}" "${files[@]}" "${lava[@]}" || die "initramfs build failed"
if [ -n "$initramfs_out" ]; then
  cp "$work/initramfs.cpio" "$initramfs_out.tmp" && mv "$initramfs_out.tmp" "$initramfs_out" ||
    die "cannot write $initramfs_out"
  echo "tracebench-vm: initramfs in $initramfs_out (kernel release ${krel:-unknown})" >&2
  exit 0
fi
set +e
# In the background so a TERM/INT sent to this script alone is forwarded at
# once (bash runs traps only between foreground commands); run-qemu.sh kills
# qemu on its way out, and gets SIGTERM should this script die without a trap
# (SIGKILL).  `tracebench vm` runs this script in a process group of its own
# that it signals, and that gets SIGTERM when tracebench dies.
# Its working files go under ours (TMPDIR), so that whatever stops it half
# way through its teardown, our EXIT trap removes them once it is gone.
TMPDIR=$work with_pdeathsig TERM "$here/run-qemu.sh" --kernel "$kernel" --initrd "$work/initramfs.cpio" --outdir "$outdir" \
  --accel "$accel" --clock "$clock" --timeout "$timeout_s" --smp "$smp" --mem "$mem" "${verbose[@]}" &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM INT HUP
wait $child
rc=$?
while kill -0 $child 2>/dev/null; do wait $child; rc=$?; done
# Gone: from here to our EXIT trap's removal nothing may stop us half way
# (a second Ctrl-C would leave our work, and run-qemu.sh's in it, behind).
trap '' TERM INT HUP
set -e
if [ $rc -eq 125 ] && [ -f "$outdir/insmod-error.txt" ]; then
  echo "tracebench-vm: the module could not be loaded as asked in the guest, nothing ran: $(cat "$outdir/insmod-error.txt")" >&2
fi
echo "tracebench-vm: results in $outdir (status $rc)" >&2
exit $rc
