#!/bin/sh
# One fuzz target, reproducibly: a fixed seed, the seed corpus read from the
# source tree, the inputs libFuzzer finds written to a temporary directory
# (removed after, so the corpus never grows between runs), a time budget.
# A crash's input is kept under ARTIFACTS (libFuzzer's -artifact_prefix) and
# replays with `<target> <that file>`.
# Usage: fuzz_run.sh <target binary> <seed corpus dir> <seed> <seconds> <artifacts dir>
set -u
bin=$1 corpus=$2 seed=$3 seconds=$4 artifacts=$5
[ -d "$corpus" ] || { echo "FAIL: no seed corpus at $corpus"; exit 1; }
mkdir -p "$artifacts"
new=$(mktemp -d /tmp/tracebench-fuzz.XXXXXX)
trap 'rm -rf "$new"' EXIT INT TERM
echo "fuzzing $(basename "$bin"): -seed=$seed, -max_total_time=$seconds, corpus $corpus"
"$bin" -seed="$seed" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$new" "$corpus"
