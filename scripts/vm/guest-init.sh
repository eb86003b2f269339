#!/bin/busybox sh
# /init of the tracebench VM-lab initramfs (runs as PID 1 in the guest).
#
# Mounts the kernel file systems, loads the tracebench module, runs
# /tb/run.sh, then ships every file in /results back to the host over the
# second serial port (/dev/ttyS1) in a framed, checksummed base64 stream:
#   TBBOOT <kernel release>
#   TBFILE <name> <size> <sha256>
#   <base64 lines>
#   TBEND <name>
#   TBEXIT <status>
# and powers off.  The host side is scripts/vm/decode-channel.sh.
#
# In an initramfs for LAVA (/tb/lava, mkinitramfs.sh --lava) the guest is
# prepared the same way (file systems, module, environment), and then LAVA
# gets a shell on the console: it logs in at the prompt and its test shell
# runs the command through /tb/lava-test.sh (scripts/lava/guest-test.sh),
# which sends the results back in the job log.
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /tmp /results /dev/pts /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# LTTng's session daemon keeps its sockets in /var/run/lttng and lttng-ust
# its wait futex in /dev/shm.
mkdir -p /var /dev/shm
[ -e /var/run ] || ln -s /run /var/run
mount -t tmpfs tmpfs /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ulimit -l unlimited 2>/dev/null
# The guest exists to be measured: let the harness read PMU/software counters
# (Debian defaults to perf_event_paranoid=3) and see kernel addresses.
echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null
export PATH=/tb/bin:/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root TMPDIR=/tmp TB_VM_GUEST=1
mkdir -p /root
# The host tells the guest how it is run (kernel command line): results
# produced under TCG are emulated and must never be compared with host ones.
for arg in $(cat /proc/cmdline); do
  case "$arg" in tracebench.accel=*) TRACEBENCH_VM_ACCEL=${arg#tracebench.accel=};; esac
done
export TRACEBENCH_VM_ACCEL=${TRACEBENCH_VM_ACCEL:-unknown}
if [ "$TRACEBENCH_VM_ACCEL" = kvm ]; then export TRACEBENCH_VM_EMULATED=0; else export TRACEBENCH_VM_EMULATED=1; fi
[ -f /tb/env.sh ] && . /tb/env.sh

CH=/dev/ttyS1
stty -F $CH raw -echo 2>/dev/null
[ -f /tb/lava ] || echo "TBBOOT $(uname -r) $(cut -d' ' -f1 /proc/uptime)" > $CH

status=0
# Module parameters (`tracebench vm --kmod-param NAME=VALUE`, one a line in
# /tb/kmod-params, checked on the host: [A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.,:+-]+).
# TB_KMOD_PARAMS has them for tests that reload the module.
TB_KMOD_PARAMS=""
[ -f /tb/kmod-params ] && TB_KMOD_PARAMS=$(tr '\n' ' ' < /tb/kmod-params | sed 's/ *$//')
export TB_KMOD_PARAMS
# The module with BTF (fentry/tp_btf need it) if the kernel accepts it, else
# the plain build.  TB_KMOD_PATH is the one that loaded (tests reload it).
if [ -f /tb/tracebench.ko ]; then
  export TB_KMOD_PATH=/tb/tracebench.ko
  # shellcheck disable=SC2086 # the parameters are separate words
  if [ -f /tb/tracebench-btf.ko ] && insmod /tb/tracebench-btf.ko $TB_KMOD_PARAMS 2>/tmp/insmod-btf.err; then
    export TB_KMOD_PATH=/tb/tracebench-btf.ko
  elif ! insmod /tb/tracebench.ko $TB_KMOD_PARAMS 2>/tmp/insmod.err; then
    # Comes back as /results/insmod-error.txt: the host prints it.
    {
      echo "insmod /tb/tracebench.ko${TB_KMOD_PARAMS:+ $TB_KMOD_PARAMS} failed: $(cat /tmp/insmod.err)"
      dmesg | grep -i 'tracebench' | tail -n 5
    } > /results/insmod-error.txt
    echo "tracebench-vm: $(cat /results/insmod-error.txt)" >&2
    status=125
  elif [ -f /tb/tracebench-btf.ko ]; then
    echo "tracebench-vm: module BTF rejected ($(cat /tmp/insmod-btf.err)); loaded without BTF" >&2
  fi
  [ -e /sys/kernel/btf/tracebench ] && export TB_KMOD_BTF=1
  # The kernel loads a module with an unknown parameter (a warning in dmesg):
  # a misspelt parameter must not make a run that measured something else.
  if [ $status -eq 0 ]; then
    for kp in $TB_KMOD_PARAMS; do
      if [ ! -e "/sys/module/tracebench/parameters/${kp%%=*}" ]; then
        echo "insmod $TB_KMOD_PATH $TB_KMOD_PARAMS: the module has no parameter '${kp%%=*}' (it has: $(ls /sys/module/tracebench/parameters 2>/dev/null | tr '\n' ' '))" \
          > /results/insmod-error.txt
        echo "tracebench-vm: $(cat /results/insmod-error.txt)" >&2
        status=125
      fi
    done
  fi
  # The parameters in effect, as evidence of what the run measured.
  for p in /sys/module/tracebench/parameters/*; do
    [ -f "$p" ] && echo "${p##*/}=$(cat "$p")"
  done > /results/kmod-params.txt 2>/dev/null
  [ -s /results/kmod-params.txt ] || rm -f /results/kmod-params.txt
fi

if [ -f /tb/lava ]; then
  # The module's outcome for /tb/lava-test.sh (125: not loaded as asked).
  echo "$status" > /tb/kmod-status
  # LAVA saw the kernel start (its banner); from here kernel messages stay
  # off the console, where they would cut the result lines (dmesg keeps them).
  dmesg -n 1
  export PS1='tracebench-lava# ' ENV=
  # PID 1 must not exit: a shell that ends is started again.
  while :; do setsid cttyhack sh -i; sleep 1; done
fi

if [ $status -eq 0 ]; then
  cd /results
  # Output goes to the console and to a result file; the status through a file.
  { sh /tb/run.sh; echo $? > /tmp/tb-status; } 2>&1 | tee /results/guest-output.txt
  status=$(cat /tmp/tb-status 2>/dev/null || echo 126)
  cd /
fi

if grep -q '^tracebench ' /proc/modules 2>/dev/null; then
  rmmod tracebench || echo "tracebench-vm: rmmod tracebench failed" >&2
fi
dmesg > /results/dmesg.txt 2>/dev/null
# Kernel warnings/oopses are failures of the run (the module must not cause any).
if grep -qE 'WARNING: CPU|BUG:|Oops|general protection|KASAN|UBSAN|RCU stall|soft lockup' /results/dmesg.txt; then
  echo "tracebench-vm: kernel reported a warning or oops (see dmesg.txt)" >&2
  [ $status -eq 0 ] && status=124
fi

cd /results
for f in $(find . -type f | sed 's|^\./||' | sort); do
  size=$(stat -c %s "$f")
  sum=$(sha256sum "$f" | cut -d' ' -f1)
  echo "TBFILE $f $size $sum" > $CH
  base64 "$f" > $CH
  echo "TBEND $f" > $CH
done
echo "TBEXIT $status" > $CH
sync
poweroff -f
