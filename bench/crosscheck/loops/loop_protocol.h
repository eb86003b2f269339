/*
 * What the reference loop programs of `tracebench crosscheck` share: the
 * protocol with the command and the timing.  Plain C and libc, nothing of
 * tracebench: the reference side of a cross-check is measured by code that
 * shares nothing with the suite's harness.
 *
 *   PROGRAM MODE CPU CALLS CHUNK [PAYLOAD_BYTES]
 *
 * pins itself to CPU, prints "ready <pid>" and then serves one request per
 * line of stdin until "quit" or end of file:
 *
 *   run [WARM]
 *          fires WARM events to warm up (default CALLS / 10), then CALLS events timed with
 *          clock_gettime(CLOCK_MONOTONIC_RAW) in chunks of CHUNK events, and
 *          prints one line of JSON: {"fired": warm-up + timed events,
 *          "calls": timed events, "chunk": CHUNK, "median_chunk_ns": the
 *          median chunk's ns per event, "mean_ns": ns per event over the
 *          whole timed run, "getpid_ns": right after the run, the median of
 *          20 chunks of 50 getpid(2) calls, ns per call: the machine's speed
 *          then, which the command compares with its own probes; 0 in a
 *          program whose events are getpid calls (they would be traced)}
 *
 * The median chunk leaves out what an interrupt or a preemption adds to a
 * few chunks (as the suite's medians do); the mean keeps it.
 */
#ifndef TRACEBENCH_CROSSCHECK_LOOP_PROTOCOL_H
#define TRACEBENCH_CROSSCHECK_LOOP_PROTOCOL_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Fires n events of the program's mode. */
typedef void (*xc_fire_fn)(long n);

static double xc_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int xc_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static long xc_arg(const char *s, long lo, long hi, const char *what) {
  char *end = NULL;
  const long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) {
    fprintf(stderr, "bad %s: %s (expected %ld..%ld)\n", what, s, lo, hi);
    exit(2);
  }
  return v;
}

static void xc_pin(long cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("sched_setaffinity");
    exit(2);
  }
}

static double xc_median(double *v, long n) {
  qsort(v, (size_t)n, sizeof v[0], xc_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The machine's speed now: getpid(2) in 20 chunks of 50, the median chunk. */
static double xc_getpid_ns(void) {
  double per[20];
  for (int c = 0; c < 20; ++c) {
    const double a = xc_now_ns();
    for (int i = 0; i < 50; ++i) syscall(SYS_getpid);
    per[c] = (xc_now_ns() - a) / 50;
  }
  return xc_median(per, 20);
}

/* One timed run: prints its JSON line (with the getpid probe when `probe`). */
static void xc_run(xc_fire_fn fire, long warm, long calls, long chunk, double *per, int probe) {
  const long chunks = calls / chunk;
  fire(warm);
  const double t0 = xc_now_ns();
  for (long c = 0; c < chunks; ++c) {
    const double a = xc_now_ns();
    fire(chunk);
    per[c] = (xc_now_ns() - a) / (double)chunk;
  }
  const double total = xc_now_ns() - t0;
  const double median = xc_median(per, chunks);
  printf(
      "{\"fired\": %ld, \"calls\": %ld, \"chunk\": %ld, \"median_chunk_ns\": %.4f, \"mean_ns\": %.4f, "
      "\"getpid_ns\": %.4f}\n",
      warm + chunks * chunk, chunks * chunk, chunk, median, total / (double)(chunks * chunk),
      probe ? xc_getpid_ns() : 0.0);
  fflush(stdout);
}

/* argv[2..4]: CPU CALLS CHUNK.  Serves requests until "quit" or EOF; each
 * run is followed by the getpid probe when `probe` (not where the events are
 * getpid calls). */
static int xc_serve(int argc, char **argv, xc_fire_fn fire, int probe) {
  if (argc < 5) return 2;
  const long cpu = xc_arg(argv[2], 0, CPU_SETSIZE - 1, "CPU");
  const long calls = xc_arg(argv[3], 1, 100000000, "CALLS");
  const long chunk = xc_arg(argv[4], 1, calls, "CHUNK");
  double *per = malloc(sizeof(double) * (size_t)(calls / chunk));
  if (!per) return 1;
  xc_pin(cpu);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  char line[64];
  long warm = 0;
  char end = 0;
  while (fgets(line, sizeof line, stdin)) {
    if (strcmp(line, "run\n") == 0) {
      xc_run(fire, calls / 10, calls, chunk, per, probe);
    } else if (sscanf(line, "run %ld%c", &warm, &end) == 2 && end == '\n' && warm >= 0 && warm <= 1000000000) {
      xc_run(fire, warm, calls, chunk, per, probe);
    } else if (strcmp(line, "quit\n") == 0) {
      break;
    } else {
      fprintf(stderr, "unknown request: %s", line);
      free(per);
      return 2;
    }
  }
  free(per);
  return 0;
}

#endif
