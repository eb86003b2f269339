/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * LTTng instrumentation of the tracebench module's tracepoints
 * (../tracebench_trace.h), so LTTng's kernel tracer can record them:
 * scripts/vm/build-lttng-modules.sh builds it into the lttng-modules tree as
 * include/instrumentation/events/tracebench.h with probes/lttng-probe-tracebench.c.
 * Same names and fields as the kernel's events; the payload is a sequence of
 * bytes (not text: the pattern holds zero bytes).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tracebench

#if !defined(LTTNG_TRACE_TRACEBENCH_H) || defined(TRACE_HEADER_MULTI_READ)
#define LTTNG_TRACE_TRACEBENCH_H

#include <lttng/tracepoint-event.h>
#include <linux/types.h>

LTTNG_TRACEPOINT_EVENT(tracebench_fixed, TP_PROTO(u64 seq, u64 value), TP_ARGS(seq, value),
		       TP_FIELDS(ctf_integer(u64, seq, seq) ctf_integer_hex(u64, value, value)))

LTTNG_TRACEPOINT_EVENT(tracebench_payload, TP_PROTO(u64 seq, const u8 *data, u32 len),
		       TP_ARGS(seq, data, len),
		       TP_FIELDS(ctf_integer(u64, seq, seq) ctf_sequence(u8, data, data, u32, len)))

#endif /* LTTNG_TRACE_TRACEBENCH_H */

/* This part must be outside protection */
#include <lttng/define_trace.h>
