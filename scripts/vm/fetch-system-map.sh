#!/bin/bash
# The kernel's real System.map for SystemTap, without installing the
# debug kernel: Debian's headers carry none and /boot's is a one-line
# placeholder ("The real System.map is in the linux-image-<release>-dbg
# package"), and stap compiles a user function's return probe
# (process(...).function(...).return, the systemtap tracers' at=return)
# only when System.map names arch_uretprobe_hijack_return_addr.  Downloads
# linux-image-RELEASE-dbg from the archive (~860 MB for 6.1), takes its
# System.map out into tracebench's SystemTap cache (XDG_CACHE_HOME, else
# ~/.cache: tracebench/systemtap/System.map-RELEASE, where the adapter's
# compile tree links it from) and removes the package: ~35 s here.
#   scripts/vm/fetch-system-map.sh RELEASE      (e.g. 6.1.0-57-amd64)
set -euo pipefail
rel=${1:-}
[[ "$rel" =~ ^[0-9][A-Za-z0-9.+_-]*$ ]] || { sed -n '12p' "$0" | sed 's/^# *//' >&2; exit 2; }
cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracebench/systemtap
dest=$cache/System.map-$rel
if [ -s "$dest" ] && ! grep -q "The real System.map is in" "$dest"; then
  echo "$dest (already there)"
  exit 0
fi
work=$(mktemp -d /var/tmp/tracebench-system-map.XXXXXX)
chmod 755 "$work"
chown _apt "$work" 2>/dev/null || true  # apt downloads as _apt where it can write
trap 'rm -rf "$work"' EXIT
echo "fetch-system-map: downloading linux-image-$rel-dbg (its System.map only is kept)" >&2
(cd "$work" && apt-get download -q "linux-image-$rel-dbg" >/dev/null) ||
  { echo "fetch-system-map: linux-image-$rel-dbg is not in the archive apt knows (apt-get update?)" >&2; exit 1; }
dpkg-deb --fsys-tarfile "$work"/linux-image-"$rel"-dbg_*.deb | tar -x -C "$work" "./usr/lib/debug/boot/System.map-$rel"
map=$work/usr/lib/debug/boot/System.map-$rel
grep -q " T arch_uretprobe_hijack_return_addr$" "$map" ||
  echo "fetch-system-map: note: $rel's System.map names no arch_uretprobe_hijack_return_addr (no uretprobes)" >&2
mkdir -p "$cache"
install -m 644 "$map" "$dest.tmp" && mv "$dest.tmp" "$dest"
echo "$dest"
