// The standard-tool side of the VM lab's getpid cross-checks
// (crosscheck_lttng_kernel.sh, vm/crosscheck-systemtap.sh: tracers that need
// a kernel that loads modules, which `tracebench crosscheck` does not run on
// the host): N getpid syscalls after a warm-up, timed in chunks of CHUNK calls; prints JSON with the mean and the median chunk per call
// (interrupts and preemption land in a few chunks only, as the suite's
// per-sample median excludes them).
//   getpid_loop [N=4000] [CHUNK=50]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4000, chunk = argc > 2 ? atol(argv[2]) : 50, warm = 1000;
  if (chunk <= 0) chunk = 50;
  long chunks = n / chunk;
  double *per = malloc(sizeof(double) * (chunks ? chunks : 1));
  if (!per) return 1;
  for (long i = 0; i < warm; ++i) syscall(SYS_getpid);
  double t0 = now_ns();
  for (long c = 0; c < chunks; ++c) {
    double a = now_ns();
    for (long i = 0; i < chunk; ++i) syscall(SYS_getpid);
    per[c] = (now_ns() - a) / chunk;
  }
  double total = now_ns() - t0;
  double median = 0;
  if (chunks) {
    qsort(per, chunks, sizeof(double), cmp);
    median = chunks % 2 ? per[chunks / 2] : (per[chunks / 2 - 1] + per[chunks / 2]) / 2;
  }
  printf(
      "{\"calls\": %ld, \"warmup_calls\": %ld, \"chunk\": %ld, \"ns_per_call_mean\": %.4f, "
      "\"ns_per_call_median_chunk\": %.4f}\n",
      chunks * chunk, warm, chunk, chunks ? total / (chunks * chunk) : 0.0, median);
  free(per);
  return 0;
}
