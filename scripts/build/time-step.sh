#!/bin/bash
# A compiler or linker launcher (CMAKE_<LANG>_COMPILER_LAUNCHER,
# CMAKE_<LANG>_LINKER_LAUNCHER) that appends "user sys wall output" of the
# step it runs to $TB_BUILD_TIMES: profile.sh's per-file and per-target times.
out=unknown prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  prev=$a
done
exec /usr/bin/time -a -o "${TB_BUILD_TIMES:?}" -f "%U %S %e $out" "$@"
