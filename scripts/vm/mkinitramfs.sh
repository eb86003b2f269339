#!/bin/bash
# Builds the VM-lab initramfs (uncompressed newc cpio).
#   mkinitramfs.sh --out FILE --run SCRIPT [--kmod KO] [--bin EXE[:DEST]]...
#                  [--file SRC:DEST]... [--env FILE] [--busybox PATH]
#                  [--kmod-param NAME=VALUE]... [--lava]
# --bin copies an executable plus every shared library ldd reports (and the
# dynamic loader) at their host paths, so the very same binary runs in the
# guest.  DEST defaults to /tb/bin/<basename>.  --kmod-param (needs --kmod)
# is given to the guest's insmod of the module (/tb/kmod-params, one a line):
# NAME is [A-Za-z_][A-Za-z0-9_]*, VALUE [A-Za-z0-9_.,:+-]+ (no quoting in the
# guest: nothing else gets through).  --lava makes an initramfs for a LAVA
# job (harness/lava/): /init prepares the guest as for the VM lab, then
# gives LAVA a shell on the console instead of running /tb/run.sh (LAVA's
# test shell runs it through /tb/lava-test.sh, scripts/lava/guest-test.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out="" run="" kmod="" envf="" busybox=/bin/busybox lava=0
bins=() files=() kparams=()
die() { echo "mkinitramfs: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --run) run=$2; shift 2;;
    --kmod) kmod=$2; shift 2;;
    --bin) bins+=("$2"); shift 2;;
    --file) files+=("$2"); shift 2;;
    --env) envf=$2; shift 2;;
    --busybox) busybox=$2; shift 2;;
    --kmod-param) kparams+=("$2"); shift 2;;
    --lava) lava=1; shift;;
    *) die "unknown argument '$1'";;
  esac
done
[ -n "$out" ] || die "--out is required"
[ -n "$run" ] && [ -f "$run" ] || die "--run SCRIPT is required and must exist"
for kp in "${kparams[@]}"; do
  kmod_param_ok "$kp" || die "--kmod-param '$kp': expected NAME=VALUE, $kmod_param_rule"
done
[ ${#kparams[@]} -eq 0 ] || [ -n "$kmod" ] || die "--kmod-param needs --kmod"
[ -x "$busybox" ] || die "$busybox not found: \`scripts/setup.sh --area vm\` installs the VM lab (busybox-static)"
if ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked'; then
  # `file` may be missing; ldd is the fallback check.
  if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is not static: apt-get install busybox-static"; fi
fi
command -v cpio >/dev/null || die "cpio not found: apt-get install cpio"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,results,tb/bin,etc,root,lib,lib64}
cp "$busybox" "$root/bin/busybox"
cp "$here/guest-init.sh" "$root/init"
chmod 755 "$root/init"
cp "$run" "$root/tb/run.sh"
[ -n "$envf" ] && cp "$envf" "$root/tb/env.sh"
[ -n "$kmod" ] && { [ -f "$kmod" ] || die "no module $kmod"; cp "$kmod" "$root/tb/tracebench.ko"; }
[ ${#kparams[@]} -eq 0 ] || printf '%s\n' "${kparams[@]}" > "$root/tb/kmod-params"
if [ $lava -eq 1 ]; then
  cp "$here/../lava/guest-test.sh" "$root/tb/lava-test.sh"
  : > "$root/tb/lava"
fi
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"

copy_lib() {  # host path -> same path in the guest (symlinks resolved)
  local p=$1
  [ -e "$root$p" ] && return 0
  mkdir -p "$root$(dirname "$p")"
  cp -L "$p" "$root$p"
}
# An executable without its debug sections: the suite's binaries are built
# with -g, and tracebench's debug information is ~9/10 of its size (~170 MB
# of a RelWithDebInfo build): copied into every initramfs, read by qemu and
# unpacked by the guest kernel at each boot, under TCG too.  The guest runs
# the code; the symbol table, the build id and the SDT notes (what uprobes,
# the usdt provider and backtraces use) stay.  Anything strip does not take
# (a script) is copied as it is.
copy_exe() {
  if command -v strip >/dev/null && strip --strip-debug -o "$2" "$1" 2>/dev/null; then
    chmod --reference="$1" "$2"
  else
    cp -L "$1" "$2"
  fi
}
for spec in "${bins[@]}"; do
  src=${spec%%:*}
  dest=/tb/bin/$(basename "$src")
  [ "$spec" != "$src" ] && dest=${spec#*:}
  [ -x "$src" ] || die "no executable $src"
  mkdir -p "$root$(dirname "$dest")"
  copy_exe "$(readlink -f "$src")" "$root$dest"
  if ldd "$src" >/dev/null 2>&1; then
    while read -r lib; do
      [ -n "$lib" ] && copy_lib "$lib"
    done < <(ldd "$src" | awk '/=> \//{print $3} $1 ~ /^\//{print $1}')
    # not found libraries are fatal: the guest could not run the binary.
    if ldd "$src" | grep -q 'not found'; then die "$src: $(ldd "$src" | grep 'not found' | head -1)"; fi
  fi
done
for spec in "${files[@]}"; do
  src=${spec%%:*}; dest=${spec#*:}
  [ -e "$src" ] || die "no file $src"
  mkdir -p "$root$(dirname "$dest")"
  cp -rL "$src" "$root$dest"
done
# Keep the loader's search path working for libraries outside /lib.
for f in /etc/ld.so.conf /etc/ld.so.cache; do [ -f "$f" ] && cp "$f" "$root/etc/"; done
[ -d /etc/ld.so.conf.d ] && cp -r /etc/ld.so.conf.d "$root/etc/" || true
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) > "$out.tmp"
mv "$out.tmp" "$out"
