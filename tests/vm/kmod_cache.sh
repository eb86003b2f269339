#!/bin/bash
# build-kmod.sh's cache: a second build of the same sources against the same
# headers runs no compiler and gives the same module; a changed source, or
# `--cache ''`, builds again.  Kbuild's `make` is counted through a wrapper
# first on PATH.  On a copy of the tree, so the change does not touch it.
#   kmod_cache.sh SOURCE_DIR
set -u
. "$(dirname "$0")/../common/test_kernel.sh"
srcdir=$1
kernel=$(tb_test_kernel) || exit 1
headers=${TRACEBENCH_VM_HEADERS:-/usr/src/linux-headers-${kernel##*/vmlinuz-}}
[ -f "$headers/Makefile" ] || { echo "FAIL: no kernel headers (apt-get install linux-headers-amd64; VM-lab tests never skip)"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tree/scripts/vm" "$t/bin"
cp -r "$srcdir/kmod" "$t/tree/kmod"
cp "$srcdir/scripts/vm/build-kmod.sh" "$t/tree/scripts/vm/"
printf '#!/bin/sh\necho "$*" >> %s/make.log\nexec /usr/bin/make "$@"\n' "$t" > "$t/bin/make"
chmod +x "$t/bin/make"
. "$(dirname "$0")/../common/check.sh"
build() { PATH=$t/bin:$PATH "$t/tree/scripts/vm/build-kmod.sh" --headers "$headers" --cache "$t/cache" --out "$t/$1" "${@:2}" > "$t/$1.path" 2> "$t/$1.err"; }
makes() { [ -f "$t/make.log" ] && grep -c modules "$t/make.log" || echo 0; }
entries() { find "$t/cache" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l; }

build first; rc=$?
check "first build succeeds and compiles" '[ $rc -eq 0 ] && [ "$(makes)" -eq 1 ] && [ -f "$t/first/tracebench.ko" ]'
check "the first build fills one cache entry" '[ "$(entries)" -eq 1 ]'
build second; rc=$?
check "the same sources again: no compiler, the same module" \
  '[ $rc -eq 0 ] && [ "$(makes)" -eq 1 ] && cmp -s "$t/first/tracebench.ko" "$t/second/tracebench.ko" && [ "$(cat "$t/second.path")" = "$t/second/tracebench.ko" ]'
echo "/* changed */" >> "$t/tree/kmod/tracebench_main.c"
build third; rc=$?
check "a changed source builds again, as a second entry" '[ $rc -eq 0 ] && [ "$(makes)" -eq 2 ] && [ "$(entries)" -eq 2 ]'
PATH=$t/bin:$PATH "$t/tree/scripts/vm/build-kmod.sh" --headers "$headers" --cache '' --out "$t/fourth" > /dev/null 2> "$t/fourth.err"; rc=$?
check "--cache '' builds afresh and caches nothing" '[ $rc -eq 0 ] && [ "$(makes)" -eq 3 ] && [ "$(entries)" -eq 2 ]'
check "no half-filled entry left" '[ -z "$(find "$t/cache" -maxdepth 1 -name ".fill.*")" ] && [ -z "$(find "$t" -maxdepth 2 -name ".kmod-build.*")" ]'
exit $fail
