#!/bin/bash
# How often the suite's detectors raise a false alarm on A/A runs of one
# build, and how often they catch a calibrated regression (none.inject_cycles
# at 5% and 10% of the workload's cost), for 1x1, 3x3 and 5x5 runs per side.
#   scripts/detector-power.sh [--tracebench BIN] [--out DIR] [--pool-a N] [--pool-injected N] [--trials N]
#                             [--workload W] [--check [--check-level S] [--max-false-alarms R] [--min-caught R]
#                             [--asserted-only]]
# Writes DIR/power.md and DIR/power.json (default results/detector-power).  --check
# adds a pool at +50% (--check-level) and asserts false alarms and catches of it against
# bounds (exit 1 when a cell misses one); --asserted-only leaves out the +5% and +10%
# pools, which nothing asserts (the test's quicker run).
exec /usr/bin/python3 "$(dirname "$0")/detector_power.py" "$@"
