#!/usr/bin/env bash
# Fidelity cross-check for the lttng adapter (LTTng-UST).
#
# 1. The suite: `tracebench run --tracer lttng` on ust_hot and on ust_payload
#    with 64 bytes, overhead read from its result.json.
# 2. An independent measurement, the lttng-ust tests/benchmark way: a small C
#    program compiled here, with the same provider header
#    (tracers/lttng/tracebench_tp.h) but its probes linked statically (the
#    suite dlopen()s them), times the same tracepoint loop with
#    clock_gettime, untraced and traced, pinned to the same CPU.  The session
#    is made with the `lttng` CLI: a session tracebench-xcheck-<pid>, the same
#    channel geometry, the program's own vpid tracked, the event rule enabled
#    before and disabled after each traced run (`lttng enable-event`/
#    `disable-event`, run by the program itself).  Its events are then counted
#    in the CTF trace with babeltrace2's Python bindings (python3-bt2), and must
#    equal what it fired (recorded + discarded).
# The loop is timed in chunks of 2000 calls and a run's cost is its median
# chunk, so that a run preempted by whatever else shares the two cores is not
# counted as tracer cost (the whole-run mean is kept beside it).  Suite and
# reference alternate over ROUNDS rounds, both against one session daemon
# (started here, unpinned, when none runs): LTTng's cost on this machine moves
# by tens of ns over minutes with the load on the other vCPU, so each side is
# sampled over the same stretch of time.  Compared are each side's lowest
# round (the state with an idle neighbour; both sides show the same two
# states), which must agree within 25 %; medians over rounds are reported too.
# Output: results/crosscheck/lttng.json, with the figures of every round of
# both sides (set SUITE_OUT to keep the suite's run directories).
# Exit status: 0 agree, 1 disagree, 2 could not measure.
#
# Environment: BUILD (build dir, default <repo>/build), ROUNDS (suite +
# reference rounds, default 5), N (tracepoint calls per timed reference run,
# default 200000), RUNS (reference run pairs per round, default 5), REPS (suite
# repetitions per round, default 4), CHUNK (calls per timed chunk, default
# 2000), SUBBUF (sub-buffer size, default 2M), NUM_SUBBUF (default 8).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TB=$BUILD/bench/tracebench
OUT=${OUT:-$ROOT/results/crosscheck}
N=${N:-200000}
RUNS=${RUNS:-5}
REPS=${REPS:-4}
ROUNDS=${ROUNDS:-5}
SUBBUF=${SUBBUF:-2M}
NUM_SUBBUF=${NUM_SUBBUF:-8}
CHUNK=${CHUNK:-2000}
PAYLOAD=64
TOLERANCE=0.25
CPU=$(( $(nproc) - 1 ))
SESSION=tracebench-xcheck-$$
PY=/usr/bin/python3            # Debian's, which has the bt2 module
WORK=$(mktemp -d /tmp/tracebench-xcheck-lttng.XXXXXX)
SUITE_OUT=${SUITE_OUT:-$WORK/suite}   # the suite's run directories (kept only when set)
SESSIOND_PID=""                # set when this script started the daemon

die() { echo "crosscheck_lttng: $*" >&2; exit 2; }

cleanup() {
  if lttng list "$SESSION" >/dev/null 2>&1; then
    lttng -q destroy "$SESSION" >/dev/null 2>&1 || echo "crosscheck_lttng: could not destroy $SESSION" >&2
  fi
  if [[ -n $SESSIOND_PID ]] && [[ $(cat "/proc/$SESSIOND_PID/comm" 2>/dev/null) == lttng-sessiond ]]; then
    kill -TERM "$SESSIOND_PID" 2>/dev/null || true
    for _ in $(seq 100); do [[ -e /proc/$SESSIOND_PID ]] && [[ $(awk '{print $3}' "/proc/$SESSIOND_PID/stat" 2>/dev/null) != Z ]] || break; sleep 0.1; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ $(id -u) == 0 ]] || die "needs root (the root lttng-sessiond)"
[[ -x $TB ]] || die "$TB not found; build it first (cmake --build $BUILD --target tracebench) or set BUILD"
command -v lttng >/dev/null || die "lttng not found (apt-get install lttng-tools)"
command -v lttng-sessiond >/dev/null || die "lttng-sessiond not found (apt-get install lttng-tools)"
command -v cc >/dev/null || die "a C compiler (cc) is needed"
[[ -x $PY ]] && "$PY" -c 'import bt2' 2>/dev/null || die "babeltrace2's Python bindings are needed (apt-get install python3-bt2)"
mkdir -p "$OUT"

# ---------------------------------------------------------------- the reference
cat > "$WORK/tp.c" <<'EOF'
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tracers/lttng/tracebench_tp.h"
EOF
cat > "$WORK/ust_loop.c" <<'EOF'
/* Times tracepoint(tracebench, EVENT) in a loop, untraced and traced, and
 * toggles the event rule with the lttng CLI around each traced run.
 * Prints one JSON object per run and a summary line.
 * usage: ust_loop SESSION CHANNEL hot|payload N LEN RUNS CHUNK */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tracers/lttng/tracebench_tp.h"

extern char **environ;
static char payload[65536];

static void lttng_cli(const char *a0, const char *a1, const char *a2, const char *a3, const char *a4,
                      const char *a5, const char *a6, const char *a7) {
  char *argv[] = {"lttng", "-q", (char *)a0, (char *)a1, (char *)a2, (char *)a3, (char *)a4,
                  (char *)a5, (char *)a6, (char *)a7, NULL};
  pid_t pid;
  int st = 0;
  if (posix_spawnp(&pid, "lttng", NULL, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) < 0 ||
      !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "ust_loop: lttng %s failed\n", a0);
    exit(2);
  }
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void calls(int hot, long n, uint32_t len) {
  if (hot) {
    for (long i = 0; i < n; ++i) {
      lttng_ust_tracepoint(tracebench, hot, 0x74620001u);
      __asm__ volatile("" ::: "memory");
    }
  } else {
    for (long i = 0; i < n; ++i) {
      lttng_ust_tracepoint(tracebench, payload, payload, len);
      __asm__ volatile("" ::: "memory");
    }
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* n calls in chunks of `chunk`: *mean = ns per call over the whole run,
 * returns the median chunk's ns per call (a chunk that was preempted on this
 * shared machine does not move it). */
static double timed(int hot, long n, long chunk, uint32_t len, double *mean) {
  static double per[100000];
  long k = n / chunk;
  double t0 = now_ns();
  for (long c = 0; c < k; ++c) {
    double a = now_ns();
    calls(hot, chunk, len);
    per[c] = (now_ns() - a) / chunk;
  }
  *mean = (now_ns() - t0) / (k * chunk);
  qsort(per, k, sizeof per[0], cmp_double);
  return k % 2 ? per[k / 2] : (per[k / 2 - 1] + per[k / 2]) / 2;
}

int main(int argc, char **argv) {
  if (argc != 8) return 2;
  const char *session = argv[1], *channel = argv[2];
  int hot = strcmp(argv[3], "hot") == 0;
  const char *event = hot ? "tracebench:hot" : "tracebench:payload";
  long chunk = atol(argv[7]);
  if (chunk <= 0) return 2;
  long n = atol(argv[4]) / chunk * chunk, warm = n / 20;
  if (n < chunk || n / chunk > 100000) return 2;
  uint32_t len = (uint32_t)atol(argv[5]);
  int runs = atoi(argv[6]);
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  if (len > sizeof payload) return 2;
  for (uint32_t i = 0; i < len; ++i) payload[i] = alphabet[i % 36];
  char vpid[32];
  snprintf(vpid, sizeof vpid, "--vpid=%d", (int)getpid());
  lttng_cli("track", "--session", session, "--userspace", vpid, NULL, NULL, NULL);
  long fired = 0;
  for (int i = 0; i < runs; ++i) {
    for (int k = 0; k < 2; ++k) {
      int traced = (k == 0) == (i % 2 == 1);  /* alternate the order */
      if (traced) lttng_cli("enable-event", "--session", session, "--userspace", "--channel", channel, event, NULL);
      double mean = 0;
      calls(hot, warm, len);
      double ns = timed(hot, n, chunk, len, &mean);
      if (traced) {
        lttng_cli("disable-event", "--session", session, "--userspace", "--channel", channel, event, NULL);
        fired += n + warm;
      }
      printf("{\"run\": %d, \"variant\": \"%s\", \"calls\": %ld, \"warmup_calls\": %ld, \"chunk_calls\": %ld, "
             "\"ns_per_call\": %.4f, \"ns_per_call_run_mean\": %.4f}\n",
             i, traced ? "traced" : "untraced", n, warm, chunk, ns, mean);
    }
  }
  printf("{\"summary\": true, \"event\": \"%s\", \"payload_bytes\": %u, \"traced_events_fired\": %ld}\n", event,
         len, fired);
  return 0;
}
EOF
cc -O2 -I"$ROOT" -o "$WORK/ust_loop" "$WORK/ust_loop.c" "$WORK/tp.c" -llttng-ust -ldl \
  || die "cannot build the reference program (apt-get install liblttng-ust-dev)"

# One session daemon for both sides (the adapter uses a running one and
# leaves it alone); started here, unpinned, when none runs.  A daemon that a
# tracebench lttng adapter started (recorded in /run/tracebench-lttng-sessiond)
# disappears when that run ends, so wait for it to go first.
for _ in $(seq 240); do [[ -e /run/tracebench-lttng-sessiond ]] || break; sleep 0.5; done
[[ -e /run/tracebench-lttng-sessiond ]] && die "a tracebench run's lttng-sessiond is still running; try again later"
if ! lttng list >/dev/null 2>&1; then
  lttng-sessiond --daemonize --no-kernel || die "cannot start lttng-sessiond"
  SESSIOND_PID=$(cat /var/run/lttng/lttng-sessiond.pid)
fi

count_events() {  # trace dir, event name -> {"events": N, "discarded": M, "bad_payload": K}
  "$PY" - "$1" "$2" "$PAYLOAD" <<'EOF'
import bt2, json, sys
path, name, plen = sys.argv[1], sys.argv[2], int(sys.argv[3])
alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
want = "".join(alphabet[i % 36] for i in range(plen))
events = discarded = bad = 0
for msg in bt2.TraceCollectionMessageIterator(path):
    if type(msg) is bt2._EventMessageConst:
        if msg.event.name == name:
            events += 1
            if name == "tracebench:payload" and str(msg.event.payload_field["data"]) != want:
                bad += 1
    elif type(msg) is bt2._DiscardedEventsMessageConst and msg.count is not None:
        discarded += msg.count
print(json.dumps({"events": events, "discarded": discarded, "bad_payload": bad}))
EOF
}

lttng_do() {  # lttng CLI, quiet; its exit status is all that is read
  local rc=0
  lttng -q "$@" >/dev/null || rc=$?
  if (( rc != 0 )); then
    lttng list >/dev/null 2>&1 || die "lttng $1 failed: the session daemon went away (stopped by another process?)"
    die "lttng $1 failed (exit $rc)"
  fi
}

reference() {  # round, kind
  local round=$1 kind=$2 len=0
  [[ $kind == payload ]] && len=$PAYLOAD
  local trace=$WORK/trace-$round-$kind
  lttng_do create "$SESSION" --output="$trace"
  lttng_do enable-channel --session "$SESSION" --userspace --buffers-uid --discard \
    --subbuf-size="$SUBBUF" --num-subbuf="$NUM_SUBBUF" tracebench
  lttng_do untrack --session "$SESSION" --userspace --vpid --all
  # The event rule exists (disabled) before the session starts, as in the adapter.
  lttng_do enable-event --session "$SESSION" --userspace --channel tracebench "tracebench:$kind"
  lttng_do disable-event --session "$SESSION" --userspace --channel tracebench "tracebench:$kind"
  lttng_do start "$SESSION"
  taskset -c "$CPU" "$WORK/ust_loop" "$SESSION" tracebench "$kind" "$N" "$len" "$RUNS" "$CHUNK" \
    > "$WORK/loop-$round-$kind.jsonl" || die "the reference program failed"
  lttng_do stop "$SESSION"
  local counted
  counted=$(count_events "$trace" "tracebench:$kind") || die "counting the reference trace failed"
  lttng_do destroy "$SESSION"
  rm -rf "$trace"
  "$PY" - "$round" "$kind" "$WORK/loop-$round-$kind.jsonl" "$counted" >> "$WORK/ref.jsonl" <<'EOF'
import json, sys
rnd, kind, path, counted = int(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
lines = [json.loads(l) for l in open(path)]
print(json.dumps({"round": rnd, "kind": kind, "runs": [l for l in lines if "summary" not in l],
                  "summary": [l for l in lines if "summary" in l][0], "counted": counted}))
EOF
}

# Rounds alternate the suite and the reference: the two vCPUs here may share
# a physical core with other load, which moves LTTng's cost by tens of ns
# over minutes, so each side is sampled across the same stretch of time.
: > "$WORK/ref.jsonl"
: > "$WORK/suite.list"
for ((round = 0; round < ROUNDS; ++round)); do
  "$TB" run --tracer lttng --workload ust_hot --workload ust_payload --payload 0 --payload "$PAYLOAD" \
    --repetitions "$REPS" --cpu "$CPU" \
    --option "lttng.subbuf_size=$SUBBUF" --option "lttng.num_subbuf=$NUM_SUBBUF" --no-samples \
    --out "$SUITE_OUT/round-$round" > "$WORK/suite.log" 2>&1 \
    || { cat "$WORK/suite.log" >&2; die "tracebench run failed"; }
  SUITE_JSON=$(ls -1d "$SUITE_OUT"/round-$round/*/result.json 2>/dev/null | tail -n 1)
  [[ -n $SUITE_JSON ]] || die "tracebench wrote no result.json under $SUITE_OUT/round-$round"
  echo "$SUITE_JSON" >> "$WORK/suite.list"
  reference "$round" hot
  reference "$round" payload
done

# ---------------------------------------------------------------- compare
"$PY" - "$WORK/suite.list" "$WORK/ref.jsonl" "$OUT/lttng.json" "$TOLERANCE" "$N" "$CPU" "$SUBBUF" "$NUM_SUBBUF" "$PAYLOAD" "$CHUNK" <<'EOF'
import json, statistics, sys, datetime, platform
suite_list, ref_path, out_path, tol, n, cpu, subbuf, nsub, plen, chunk = sys.argv[1:11]
tol, n, plen = float(tol), int(n), int(plen)
suite_paths = [l.strip() for l in open(suite_list) if l.strip()]
suites = [json.load(open(p)) for p in suite_paths]
refs = [json.loads(l) for l in open(ref_path)]
med = statistics.median
checks, agree_all = {}, True
for kind, workload, payload in (("hot", "ust_hot", 0), ("payload", "ust_payload", plen)):
    suite_rounds, ref_rounds = [], []
    for rnd, suite in enumerate(suites):
        bench = [b for b in suite["benchmarks"]
                 if b["tracer"] == "lttng" and b["workload"] == workload and b["payload_bytes"] == payload]
        if not bench:
            sys.exit("crosscheck_lttng: no lttng/%s payload %d benchmark in %s" % (workload, payload, suite_paths[rnd]))
        b = bench[0]
        ok = b["status"] == "ok" and b.get("overhead_ns_per_event") is not None
        suite_rounds.append({
            "round": rnd,
            "run_id": suites[rnd]["context"].get("run_id"),
            "status": b["status"],
            "error": b.get("error", ""),
            "options": b.get("options", {}),
            "overhead_ns_per_event": b.get("overhead_ns_per_event"),
            "baseline_ns_per_event_p50": b["baseline"]["ns_per_event"]["p50"] if ok else None,
            "traced_ns_per_event_p50": b["traced"]["ns_per_event"]["p50"] if ok else None,
            "events": b["events"],
            "verified": ok and b["events"]["verification"] == "passed",
        })
    for r in (r for r in refs if r["kind"] == kind):
        by = {"untraced": {}, "traced": {}}
        for run in r["runs"]:
            by[run["variant"]][run["run"]] = run
        pairs = sorted(set(by["untraced"]) & set(by["traced"]))
        diffs = [by["traced"][i]["ns_per_call"] - by["untraced"][i]["ns_per_call"] for i in pairs]
        fired = r["summary"]["traced_events_fired"]
        c = r["counted"]
        ref_rounds.append({
            "round": r["round"],
            "run_pairs": len(pairs),
            "untraced_ns_per_call_median": med(by["untraced"][i]["ns_per_call"] for i in pairs),
            "traced_ns_per_call_median": med(by["traced"][i]["ns_per_call"] for i in pairs),
            "overhead_ns_per_call": med(diffs),
            "overhead_ns_per_pair": diffs,
            "overhead_ns_per_call_run_mean": med(
                by["traced"][i]["ns_per_call_run_mean"] - by["untraced"][i]["ns_per_call_run_mean"] for i in pairs),
            "events_fired_traced": fired,
            "events_recorded": c["events"],
            "events_discarded": c["discarded"],
            "payload_mismatches": c["bad_payload"],
            "verified": c["events"] + c["discarded"] == fired and c["bad_payload"] == 0,
        })
    suite_ok = all(r["verified"] for r in suite_rounds)
    ref_ok = all(r["verified"] for r in ref_rounds)
    # Compared: each side's lowest round (the state with an idle neighbour);
    # the medians over rounds are reported beside it.
    suite_all = [r["overhead_ns_per_event"]["median"] for r in suite_rounds] if suite_ok else []
    ref_all = [r["overhead_ns_per_call"] for r in ref_rounds]
    suite_ns = min(suite_all) if suite_all else None
    ref_ns = min(ref_all)
    check = {
        "event": "tracebench:" + kind,
        "payload_bytes": payload,
        "compared": "lowest round of each side",
        "suite_overhead_ns": suite_ns,
        "reference_overhead_ns": ref_ns,
        "suite_overhead_ns_median_of_rounds": med(suite_all) if suite_all else None,
        "reference_overhead_ns_median_of_rounds": med(ref_all),
        "suite_rounds": suite_rounds,
        "reference": {
            "method": "C loop of tracepoint(tracebench, %s) (probes linked statically), pinned with taskset, "
                      "timed with CLOCK_MONOTONIC_RAW in chunks of %s calls, ns_per_call = median chunk of a "
                      "run (ns_per_call_run_mean: the whole run, preemptions included); session created with "
                      "the lttng CLI (per-UID buffers, discard, subbuf %s x %s, vpid tracked), event rule "
                      "enabled/disabled with lttng enable-event/disable-event around each traced run; events "
                      "counted with babeltrace2's Python bindings" % (kind, chunk, subbuf, nsub),
            "calls_per_run": n,
            "cpu": int(cpu),
            "rounds": ref_rounds,
        },
        "suite_verified": suite_ok,
        "reference_verified": ref_ok,
    }
    if suite_ok and ref_ok and ref_ns > 0:
        rel = (suite_ns - ref_ns) / ref_ns
        check["relative_difference"] = rel
        check["agree"] = abs(rel) <= tol
    else:
        check["relative_difference"] = None
        check["agree"] = False
    agree_all = agree_all and check["agree"]
    checks[kind] = check
result = {
    "schema": "tracebench.crosscheck",
    "schema_version": 1,
    "tracer": "lttng",
    "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "kernel": platform.release(),
    "rounds": len(suites),
    "tolerance": tol,
    "checks": checks,
    "agree": agree_all,
}
json.dump(result, open(out_path, "w"), indent=2)
print(json.dumps({k: {"suite_overhead_ns": c["suite_overhead_ns"],
                      "reference_overhead_ns": c["reference_overhead_ns"],
                      "suite_rounds_ns": [r["overhead_ns_per_event"]["median"] if r["overhead_ns_per_event"] else None
                                          for r in c["suite_rounds"]],
                      "reference_rounds_ns": [r["overhead_ns_per_call"] for r in c["reference"]["rounds"]],
                      "relative_difference": c["relative_difference"],
                      "verified": c["suite_verified"] and c["reference_verified"],
                      "agree": c["agree"]} for k, c in checks.items()} | {"out": out_path}))
sys.exit(0 if agree_all else 1)
EOF
