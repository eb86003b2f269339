#!/bin/bash
# How often `tracebench ab` raises a false alarm on A/A, how often it catches a
# calibrated regression (none.inject_cycles at 5% and 10% of the workload's
# cost), and how long it takes to a verdict, with ab's default budget.
#   scripts/ab-power.sh [--tracebench BIN] [--out DIR] [--trials N] [--workload W]
#                       [--levels 0.05,0.10] [--check [--max-false-alarms R] [--min-caught R]]
#                       [-- AB-OPTIONS]
# Writes DIR/ab-power.md and DIR/ab-power.json (default results/ab-power).
exec /usr/bin/python3 "$(dirname "$0")/ab_power.py" "$@"
