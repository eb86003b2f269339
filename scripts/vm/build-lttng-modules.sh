#!/bin/bash
# Builds LTTng's kernel tracer (lttng-modules), plus an LTTng probe for the
# tracebench module's tracepoints (kmod/lttng/), for a VM-lab kernel and
# stages it as a module tree the guest mounts at /lib/modules:
#   build-lttng-modules.sh --headers DIR [--release REL] [--source DIR] [--cache DIR]
# Prints the staged root (ROOT/lib/modules/REL/{extra/*.ko,modules.*}).
#
# Source: /usr/src/lttng-modules-* when lttng-modules-dkms is installed, else
# Debian's lttng-modules-dkms package fetched with `apt-get download` (it is
# not installed: its DKMS hook fails the apt transaction on kernels it does
# not build for). Probes that do not compile against the kernel (2.13.9 vs
# 6.1.0-56: probes/lttng-probe-timer) are left out and listed in
# ROOT/lib/modules/REL/extra/DROPPED; a failure anywhere else is an error.
# Modules are stripped of debug info. Libkmod (which lttng-sessiond uses to
# load them) needs the kernel's modules.builtin* and modules.order beside
# depmod's indexes: they come from /lib/modules/REL (linux-image-REL).
#
# The result is cached per lttng-modules version and kernel (the headers'
# Module.symvers) under --cache (default ${XDG_CACHE_HOME:-~/.cache}/tracebench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kmod=$(cd "$here/../../kmod" && pwd)
headers="" release="" source="" cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracebench
die() { echo "build-lttng-modules: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --headers) headers=$2; shift 2;;
    --release) release=$2; shift 2;;
    --source) source=$2; shift 2;;
    --cache) cache=$2; shift 2;;
    *) die "unknown argument '$1'";;
  esac
done
[ -n "$headers" ] && [ -f "$headers/Makefile" ] || die "--headers must be a kernel build directory (got '${headers}')"
if [ -z "$release" ]; then
  release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$headers/include/generated/utsrelease.h" 2>/dev/null || true)
  [ -n "$release" ] || die "cannot tell the kernel release of $headers; pass --release"
fi
command -v depmod >/dev/null || die "depmod not found: apt-get install kmod"
modsrc=/lib/modules/$release
for f in modules.builtin modules.builtin.modinfo modules.order; do
  [ -f "$modsrc/$f" ] || die "$modsrc/$f is missing (apt-get install linux-image-$release): the guest's libkmod needs it"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$source" ]; then
  source=$(ls -d /usr/src/lttng-modules-* 2>/dev/null | sort -V | tail -1 || true)
fi
if [ -z "$source" ]; then
  deb=$(ls /var/cache/apt/archives/lttng-modules-dkms_*.deb 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$deb" ]; then
    (cd "$work" && apt-get download lttng-modules-dkms > "$work/download.log" 2>&1) ||
      die "apt-get download lttng-modules-dkms failed ($(tail -1 "$work/download.log")); run apt-get update first"
    deb=$(ls "$work"/lttng-modules-dkms_*.deb)
  fi
  dpkg-deb -x "$deb" "$work/deb"
  source=$(ls -d "$work"/deb/usr/src/lttng-modules-* | sort -V | tail -1)
fi
[ -f "$source/src/probes/Kbuild" ] || die "$source is not an lttng-modules source tree"
version=$(basename "$source"); version=${version#lttng-modules-}
symvers=none
[ -f "$headers/Module.symvers" ] && symvers=$(sha256sum "$headers/Module.symvers" | cut -c1-16)
probe=$(cat "$kmod/lttng/tracebench.h" "$kmod/lttng/lttng-probe-tracebench.c" "$kmod/tracebench_trace.h" |
        sha256sum | cut -c1-12)
root=$cache/lttng-modules/$version/$release-$symvers-tb$probe
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi

cp -r "$source" "$work/src"
kbuild=$work/src/src/probes/Kbuild
# The tracebench probe: the LTTng event definitions and the module's own
# tracepoint header (the probe includes it to check the prototypes).
cp "$kmod/lttng/tracebench.h" "$work/src/include/instrumentation/events/tracebench.h"
cp "$kmod/lttng/lttng-probe-tracebench.c" "$kmod/tracebench_trace.h" "$work/src/src/probes/"
printf '\n# tracebench companion module (added by build-lttng-modules.sh)\nobj-$(CONFIG_LTTNG) += lttng-probe-tracebench.o\nCFLAGS_lttng-probe-tracebench.o += -I$(src)\n' >> "$kbuild"
dropped=()
jobs=$(nproc 2>/dev/null || echo 2)
for attempt in 1 2 3 4 5; do
  # The package Makefile sets CONFIG_LTTNG=m and calls Kbuild on KERNELDIR
  # with M=$PWD/src.
  if (cd "$work/src" && make -k -j"$jobs" KERNELDIR="$headers") > "$work/build.log" 2>&1; then break; fi
  # Which probes failed: leave them out and build again.
  mapfile -t bad < <(grep -oE 'src/probes/lttng-probe-[A-Za-z0-9_-]+\.o\] Error' "$work/build.log" |
                     sed -E 's|.*/(lttng-probe-[A-Za-z0-9_-]+)\.o.*|\1|' | sort -u)
  if [ ${#bad[@]} -eq 0 ] || [ $attempt -eq 5 ]; then
    grep -E 'error|Error' "$work/build.log" | head -20 >&2
    die "lttng-modules $version does not build against $headers (log above)"
  fi
  for p in "${bad[@]}"; do
    if [ "$p" = lttng-probe-tracebench ]; then
      grep -B2 -A8 'lttng-probe-tracebench' "$work/build.log" | head -40 >&2
      die "the tracebench probe (kmod/lttng) does not build against $headers"
    fi
    echo "build-lttng-modules: probe $p does not build against $release; leaving it out" >&2
    before=$(cksum < "$kbuild")
    sed -i -E 's|^([[:space:]]*obj-\$\(CONFIG_LTTNG\)[[:space:]]*\+=[[:space:]]*'"$p"'\.o)|# dropped by tracebench: \1|' "$kbuild"
    [ "$(cksum < "$kbuild")" != "$before" ] || die "cannot leave $p out: no 'obj-\$(CONFIG_LTTNG) += $p.o' line in $kbuild"
    dropped+=("$p")
  done
done

stage=$work/root
extra=$stage/lib/modules/$release/extra
mkdir -p "$extra"
while IFS= read -r ko; do
  strip --strip-debug -o "$extra/$(basename "$ko")" "$ko"
done < <(find "$work/src" -name '*.ko')
[ -f "$extra/lttng-tracer.ko" ] || die "the build produced no lttng-tracer.ko"
[ -f "$extra/lttng-probe-tracebench.ko" ] || die "the build produced no lttng-probe-tracebench.ko"
if [ ${#dropped[@]} -gt 0 ]; then printf "%s\n" "${dropped[@]}"; fi > "$extra/DROPPED"
for f in modules.builtin modules.builtin.modinfo modules.order; do cp "$modsrc/$f" "$stage/lib/modules/$release/"; done
depmod -b "$stage" "$release" || die "depmod failed"
mkdir -p "$(dirname "$root")"
rm -rf "$root"
cp -r "$stage" "$root"
touch "$root/.complete"
echo "$root"
