#!/bin/sh
# `tracebench dvm` macro arguments after the program ($1 an integer, $$2 a
# string) and -o appending the traced data: two runs, both runs' lines in the
# file, nothing on stdout.
set -eu
tb=$1
f=$(mktemp)
trap 'rm -f "$f"' EXIT
for i in 1 2; do
  out=$("$tb" dvm -q --workload dvm_hot --events 100 -o "$f" \
    -n 'tb:::fire /arg0 == $1/ { printf("%s=%d\n", $$2, arg0); }' 7 seven)
  [ -z "$out" ] || { echo "stdout not empty with -o: $out"; exit 1; }
done
printf 'seven=7\nseven=7\n' | cmp - "$f" || { echo "file holds:"; cat "$f"; exit 1; }
echo ok
