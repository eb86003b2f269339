#!/bin/bash
# Where a build's time goes: builds from scratch in DIR with every compile and
# link timed (time-step.sh), then prints the CPU seconds (user+sys) and wall
# time of the whole build, of compiling and of linking, per target and the
# slowest files (summarize.py), with the machine's load while it built.
#   scripts/build/profile.sh [--tests] DIR [-- CMAKE_ARGS...]
# Without --tests: the tool alone (target tracebench, as `scripts/setup.sh`
# builds it); with: everything, the tests included (`scripts/setup.sh --tests`).
# Writes DIR/times.txt (one line a step), DIR/load.txt, DIR/summary.txt.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tests=OFF target=(--target tracebench)
[ "${1:-}" = --tests ] && { tests=ON target=(); shift; }
[ $# -ge 1 ] || { sed -n '6,7p' "$0" | sed 's/^# //' >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)
shift
[ "${1:-}" = -- ] && shift
[ ! -e "$dir/build" ] || { echo "profile.sh: $dir/build exists: give a new DIR" >&2; exit 2; }
step=$src/scripts/build/time-step.sh
export TB_BUILD_TIMES=$dir/times.txt
: > "$TB_BUILD_TIMES"
cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEBENCH_BUILD_TESTS=$tests \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$step" -DCMAKE_C_COMPILER_LAUNCHER="$step" \
  -DCMAKE_CXX_LINKER_LAUNCHER="$step" -DCMAKE_C_LINKER_LAUNCHER="$step" "$@" > "$dir/configure.txt"
# The load while it builds: other builds on the machine stretch the wall time, not the CPU seconds.
(while sleep 15; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"; done) > "$dir/load.txt" &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
/usr/bin/time -o "$dir/total.txt" -f "%U %S %e" cmake --build "$dir/build" -j"$(nproc)" "${target[@]}" > "$dir/build.txt"
python3 "$src/scripts/build/summarize.py" "$dir" | tee "$dir/summary.txt"
