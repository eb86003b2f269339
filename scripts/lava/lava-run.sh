#!/bin/bash
# Runs a tracebench LAVA job with LAVA's dispatcher alone (lava-run, no
# server) and rebuilds the run from its log.
#   lava-run.sh [--device DEVICE.jinja2] [--job-id N] JOB.yaml OUTDIR
# DEVICE defaults to devices/qemu-tcg.jinja2 (rendered with the job's
# context by render-device.py).  OUTDIR gets:
#   device.yaml     the device configuration lava-run ran with
#   job.log.yaml    LAVA's log (the records a server keeps for the job)
#   results.yaml    LAVA's results records from it (test cases, the job's)
#   lava/           the dispatcher's own output (description.yaml, result.yaml)
#   run/            the run rebuilt by `tracebench lava fetch` (+ lava.json)
# Exit 0 when the job passed and the run came back complete; 1 otherwise
# (what finished is still in run/); 2 bad input.  Needs root (lava-run).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
device=$here/devices/qemu-tcg.jinja2 job_id=$$
tracebench=${TRACEBENCH:-$here/../../build/bench/tracebench}
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2;;
    --job-id) job_id=$2; shift 2;;
    -*) echo "lava-run.sh: unknown option '$1'" >&2; exit 2;;
    *) break;;
  esac
done
[ $# -eq 2 ] || { echo "usage: lava-run.sh [--device DEVICE.jinja2] [--job-id N] JOB.yaml OUTDIR" >&2; exit 2; }
job=$1 out=$2
[ -f "$job" ] || { echo "lava-run.sh: no job file $job" >&2; exit 2; }
command -v lava-run >/dev/null || { echo "lava-run.sh: lava-run not found: \`scripts/setup.sh --area lava\` installs LAVA (lava-dispatcher lava-server)" >&2; exit 2; }
[ -x "$tracebench" ] || { echo "lava-run.sh: no tracebench at $tracebench (set TRACEBENCH)" >&2; exit 2; }
mkdir -p "$out"
/usr/bin/python3 "$here/render-device.py" "$device" --job "$job" --out "$out/device.yaml" || exit 2
# lava-run logs its records on stderr; the process is killed with this script.
setpriv --pdeathsig TERM lava-run --device "$out/device.yaml" --job-id "$job_id" --output-dir "$out/lava" "$job" \
  > "$out/job.log.yaml" 2>&1
lava_rc=$?
grep -F '"lvl": "results"' "$out/job.log.yaml" > "$out/results.yaml"
"$tracebench" lava fetch --log "$out/job.log.yaml" "$out/run"
fetch_rc=$?
echo "lava-run.sh: lava-run exited $lava_rc, fetch $fetch_rc; $out" >&2
[ $lava_rc -eq 0 ] && [ $fetch_rc -eq 0 ] && exit 0
[ $fetch_rc -eq 2 ] && [ $lava_rc -eq 0 ] && exit 2
exit 1
