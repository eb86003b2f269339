/*
 * The reference loop of the LTTng-UST cross-checks (loop_protocol.h):
 * `tracebench-crosscheck-ust MODE CPU CALLS CHUNK [BYTES]` fires
 * tracepoint(tracebench, hot) (MODE hot, the tag 0x74620001) or
 * tracepoint(tracebench, payload) with BYTES bytes of "abc...z0...9"
 * repeated (MODE payload), the suite's provider header (the same events)
 * with its probes linked into this program (ust_probes.c), as an ordinary
 * instrumented application has them.  The lttng CLI makes the session and
 * enables the event around a traced run; this program knows nothing of it.
 */
#include "loop_protocol.h"

#include <stdint.h>

#include "tracers/lttng/tracebench_tp.h"

static char payload[65536];
static uint32_t payload_len;

static void fire_hot(long n) {
  for (long i = 0; i < n; ++i) {
    lttng_ust_tracepoint(tracebench, hot, 0x74620001u);
    __asm__ volatile("" ::: "memory");
  }
}

static void fire_payload(long n) {
  for (long i = 0; i < n; ++i) {
    lttng_ust_tracepoint(tracebench, payload, payload, payload_len);
    __asm__ volatile("" ::: "memory");
  }
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "hot") == 0) return xc_serve(argc, argv, fire_hot, 1);
  if (argc == 6 && strcmp(argv[1], "payload") == 0) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    payload_len = (uint32_t)xc_arg(argv[5], 1, sizeof payload, "BYTES");
    for (uint32_t i = 0; i < payload_len; ++i) payload[i] = alphabet[i % 36];
    return xc_serve(argc, argv, fire_payload, 1);
  }
  fprintf(stderr, "usage: %s hot CPU CALLS CHUNK | payload CPU CALLS CHUNK BYTES\n", argv[0]);
  return 2;
}
