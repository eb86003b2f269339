#!/bin/bash
# Lists kernel tracing state tagged as tracebench's: tracefs instances,
# dynamic (uprobe/kprobe) events, BPF programs named tb_*, enabled events in
# the top-level buffer that we might have touched, SystemTap's modules
# (tracebench_stap_*), their stapio and session folders.  Prints nothing and exits
# 0 when there is none; prints what it found and exits 1 otherwise.  The
# names are the scheme of tracers/common/names.h (tracebench-<pid>[-...],
# tb<pid>_..., /tmp/tracebench-lttng-<pid>...).
T=/sys/kernel/tracing
found=0
if [ -d "$T/instances" ]; then
  for i in "$T"/instances/tracebench*; do
    [ -e "$i" ] && { echo "tracefs instance: ${i##*/}"; found=1; }
  done
fi
if [ -r "$T/dynamic_events" ] && grep -q tracebench "$T/dynamic_events"; then
  grep tracebench "$T/dynamic_events" | sed 's/^/dynamic event: /'
  found=1
fi
if command -v bpftool >/dev/null 2>&1; then
  progs=$(bpftool prog show 2>/dev/null | grep -E "name tb_" || true)
  [ -n "$progs" ] && { echo "$progs" | sed 's/^/bpf program: /'; found=1; }
fi
if [ -d /sys/fs/bpf ] && ls /sys/fs/bpf 2>/dev/null | grep -q tracebench; then
  ls /sys/fs/bpf | grep tracebench | sed 's/^/bpf pin: /'
  found=1
fi
if [ -e /dev/tracebench ] || grep -q '^tracebench ' /proc/modules 2>/dev/null; then
  echo "kernel module: tracebench loaded"
  found=1
fi
for m in /sys/module/tracebench_stap_*; do
  [ -e "$m" ] && { echo "systemtap module: ${m##*/}"; found=1; }
done
if pgrep -f '(stapio|stapbpf) .*tracebench_stap_' >/dev/null 2>&1; then
  pgrep -af '(stapio|stapbpf) .*tracebench_stap_' | sed 's/^/systemtap stapio or stapbpf: /'
  found=1
fi
for d in /tmp/tracebench-*-stap-*; do
  [ -e "$d" ] && { echo "systemtap session directory: $d"; found=1; }
done
for d in /tmp/tracebench-lttng-*; do
  [ -e "$d" ] && { echo "lttng trace directory: $d"; found=1; }
done
if [ -e /run/tracebench-lttng-sessiond ]; then
  echo "lttng-sessiond started by tracebench: /run/tracebench-lttng-sessiond"
  found=1
fi
if command -v lttng >/dev/null 2>&1 && pgrep -x lttng-sessiond >/dev/null 2>&1; then
  sessions=$(timeout 5 lttng --mi xml list 2>/dev/null | grep -o '<name>tracebench-[0-9][^<]*</name>' || true)
  [ -n "$sessions" ] && { echo "$sessions" | sed 's/^/lttng session: /'; found=1; }
fi
exit $found
