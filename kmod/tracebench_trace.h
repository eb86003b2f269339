/* SPDX-License-Identifier: GPL-2.0 */
/* Tracepoints of the tracebench companion module (group "tracebench"). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tracebench

#if !defined(_TRACEBENCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACEBENCH_TRACE_H

#include <linux/tracepoint.h>

/* Fixed small event: two u64, value = seq ^ TB_KMOD_FIXED_MAGIC. */
TRACE_EVENT(tracebench_fixed, TP_PROTO(u64 seq, u64 value), TP_ARGS(seq, value),
	    TP_STRUCT__entry(__field(u64, seq) __field(u64, value)),
	    TP_fast_assign(__entry->seq = seq; __entry->value = value;),
	    TP_printk("seq=%llu value=0x%llx", __entry->seq, __entry->value));

/* Dynamic-array payload of 0..4096 bytes (pattern: see tracebench_kmod_abi.h). */
TRACE_EVENT(tracebench_payload, TP_PROTO(u64 seq, const u8 *data, u32 len), TP_ARGS(seq, data, len),
	    TP_STRUCT__entry(__field(u64, seq) __field(u32, len) __dynamic_array(u8, data, len)),
	    TP_fast_assign(__entry->seq = seq; __entry->len = len;
			   memcpy(__get_dynamic_array(data), data, len);),
	    TP_printk("seq=%llu len=%u", __entry->seq, __entry->len));

#endif /* _TRACEBENCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tracebench_trace
#include <trace/define_trace.h>
