/*
 * The tracebench LTTng-UST tracepoint provider: provider "tracebench", two
 * events.  The usual lttng-ust layout: this header declares the events, one
 * probes compilation unit (tracebench_tp.c, built as
 * libtracebench_lttng_provider.so) instantiates the probes, and the call
 * sites (bench/lttng_ust.cc) define the tracepoints with dynamic probe
 * linkage, so the tracebench binary does not link liblttng-ust: the provider
 * library (and with it liblttng-ust and its listener threads) is loaded only
 * when an LTTng workload or the lttng adapter needs it (ust_provider.h).
 *
 *   tracebench:hot      one 32-bit integer (the workload passes kHotTag)
 *   tracebench:payload  a text sequence of `len` bytes (payload_pattern.h)
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tracebench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tracers/lttng/tracebench_tp.h"

#if !defined(TRACEBENCH_LTTNG_TRACEBENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TRACEBENCH_LTTNG_TRACEBENCH_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(tracebench, hot, LTTNG_UST_TP_ARGS(uint32_t, tag),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint32_t, tag, tag)))

LTTNG_UST_TRACEPOINT_EVENT(tracebench, payload, LTTNG_UST_TP_ARGS(const char *, data, uint32_t, len),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_sequence_text(char, data, data, uint32_t, len)))

/* The same 64 bytes as a fixed-size array of integers: no length field,
 * a size known when the probe is compiled (how a C program would usually
 * declare a fixed payload). */
LTTNG_UST_TRACEPOINT_EVENT(tracebench, array64, LTTNG_UST_TP_ARGS(const uint8_t *, data),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_array(uint8_t, data, data, 64)))

#endif /* TRACEBENCH_LTTNG_TRACEBENCH_TP_H */

#include <lttng/tracepoint-event.h>
