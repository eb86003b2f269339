#!/bin/bash
# Builds kmod/tracebench.ko against a kernel build (headers) directory.
#   build-kmod.sh --headers DIR --out DIR [--kernel IMAGE]
# With --kernel (and pahole installed), also writes DIR/tracebench-btf.ko:
# the module with BTF generated against the kernel image's own BTF (Debian's
# headers lack vmlinux, so Kbuild skips module BTF; BPF fentry/fexit and
# tp_btf on the module's functions and tracepoints need it).
# The sources (kmod/, the D-VM's DIF core in kmod/dvm/core included) are
# copied to a scratch directory first so the source tree stays clean and builds for
# different kernels never share objects.
# Prints the path of the built module.
# The built modules are cached under --cache (default
# ${XDG_CACHE_HOME:-~/.cache}/tracebench/kmod), keyed by everything that goes
# into them: the module's sources, this script, the headers' configuration
# and symbol versions, the compiler and pahole, and the kernel image (its BTF).
# A VM-lab boot otherwise spends most of its set-up rebuilding the same module;
# `--cache ''` builds afresh.  The newest 8 entries are kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../kmod" && pwd)
headers="" out="" kernel="" cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracebench/kmod
while [ $# -gt 0 ]; do
  case "$1" in
    --headers) headers=$2; shift 2;;
    --out) out=$2; shift 2;;
    --kernel) kernel=$2; shift 2;;
    --cache) cache=$2; shift 2;;
    *) echo "build-kmod: unknown argument '$1'" >&2; exit 1;;
  esac
done
[ -n "$out" ] || { echo "build-kmod: --out is required" >&2; exit 1; }
if [ -z "$headers" ]; then headers=/lib/modules/$(uname -r)/build; fi
if [ ! -f "$headers/Makefile" ]; then
  echo "build-kmod: '$headers' is not a kernel build directory (no Makefile);" \
       "install the matching linux-headers package or pass --headers" >&2
  exit 1
fi
mkdir -p "$out"

# What the module is made of, as one hash (see the top).
cache_key() {
  local f
  {
    (cd "$src" && find . -type f ! -name '*.o' ! -name '*.ko' ! -name '*.mod*' ! -name '.*' -print0 |
       LC_ALL=C sort -z | xargs -0 sha256sum)
    sha256sum "$0"
    for f in .config Module.symvers include/generated/utsrelease.h include/config/kernel.release; do
      [ -f "$headers/$f" ] && sha256sum "$headers/$f"
    done
    realpath "$headers"
    gcc --version 2>/dev/null | head -1 || true
    pahole --version 2>/dev/null || true
    if [ -n "$kernel" ]; then sha256sum < "$kernel"; fi
  } 2>/dev/null | sha256sum | cut -c1-24
}
entry=""
if [ -n "$cache" ]; then
  entry=$cache/$(cache_key)
  if [ -f "$entry/.complete" ]; then
    touch "$entry"  # its last use, which the pruning below orders by
    cp "$entry"/*.ko "$out/"
    echo "$out/tracebench.ko"
    exit 0
  fi
fi

build=$(mktemp -d "$out/.kmod-build.XXXXXX")
trap 'rm -rf "$build"' EXIT
cp -r "$src/." "$build/"
rm -f "$build"/*.ko "$build"/*.o "$build"/dvm/*.o "$build"/dvm/core/*.o "$build"/*.mod* "$build"/Module.symvers "$build"/modules.order
if ! make -s -C "$headers" M="$build" modules > "$build/build.log" 2>&1; then
  cat "$build/build.log" >&2
  echo "build-kmod: building the module against $headers failed (is the kernel's compiler installed?)" >&2
  exit 1
fi
cp "$build/tracebench.ko" "$out/tracebench.ko"
# The module builds warning-free (also with W=1); a warning is shown, not buried.
if grep -q 'warning:' "$build/build.log"; then
  echo "build-kmod: the module built with warnings against $headers:" >&2
  grep -A4 'warning:' "$build/build.log" >&2
fi

# (No `readelf | grep -q` under pipefail: grep's early exit fails the pipe.)
has_btf() { local t; t=$(readelf -S "$1" 2>/dev/null || true); [[ "$t" == *" .BTF "* ]]; }

# vmlinux (ELF with .BTF) from a compressed bzImage: try every compression
# magic found in the image.
extract_vmlinux() {  # $1 = image, $2 = output
  local img=$1 dst=$2 magic cmd off
  for spec in 'xz|\xfd7zXZ\x00|xz -dc' 'zstd|\x28\xb5\x2f\xfd|zstd -dcq' 'gzip|\x1f\x8b\x08|gzip -dc' \
              'lz4|\x02\x21\x4c\x18|lz4 -dc' 'bzip2|BZh|bzip2 -dc' 'lzma|\x5d\x00\x00\x00|xz -dc --format=lzma'; do
    magic=$(echo "$spec" | cut -d'|' -f2); cmd=$(echo "$spec" | cut -d'|' -f3)
    command -v "${cmd%% *}" >/dev/null || continue
    for off in $(LC_ALL=C grep -obUaP "$magic" "$img" 2>/dev/null | cut -d: -f1 | head -5); do
      # (tail's stderr: the decompressor stops reading at the stream's end.)
      tail -c +$((off + 1)) "$img" 2>/dev/null | $cmd > "$dst" 2>/dev/null
      if has_btf "$dst"; then return 0; fi
    done
  done
  return 1
}
if [ -n "$kernel" ] && command -v pahole >/dev/null && ! has_btf "$out/tracebench.ko"; then
  vmlinux=$headers/vmlinux
  [ -f "$vmlinux" ] || { vmlinux=$build/vmlinux; extract_vmlinux "$kernel" "$vmlinux" || vmlinux=""; }
  if [ -n "$vmlinux" ]; then
    flags="--btf_gen_floats -j"
    for f in "$headers/scripts/pahole-flags.sh" "$(readlink -f "$headers/scripts" 2>/dev/null)/pahole-flags.sh"; do
      [ -f "$f" ] && { flags=$(PAHOLE=pahole bash "$f" 2>/dev/null || echo "$flags"); break; }
    done
    cp "$out/tracebench.ko" "$build/tracebench-btf.ko"
    if LLVM_OBJCOPY=objcopy pahole -J $flags --btf_base "$vmlinux" "$build/tracebench-btf.ko" >/dev/null 2>&1 &&
       has_btf "$build/tracebench-btf.ko"; then
      cp "$build/tracebench-btf.ko" "$out/tracebench-btf.ko"
    else
      echo "build-kmod: module BTF generation failed; BPF fentry/tp_btf on the module will be unavailable" >&2
    fi
  else
    echo "build-kmod: no vmlinux with BTF for $kernel; module built without BTF" >&2
  fi
fi
# Into the cache: filled beside it, then renamed into place, so a
# concurrent build of the same key never sees half an entry.
if [ -n "$entry" ] && mkdir -p "$cache" 2>/dev/null; then
  fill=$(mktemp -d "$cache/.fill.XXXXXX")
  cp "$out"/tracebench*.ko "$fill/" && touch "$fill/.complete" && mv -T "$fill" "$entry" 2>/dev/null || rm -rf "$fill"
  # Keep the newest 8 (by last use).
  ls -1dt "$cache"/*/ 2>/dev/null | tail -n +9 | xargs -r rm -rf
fi
echo "$out/tracebench.ko"
