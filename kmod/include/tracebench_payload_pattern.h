/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The suite's one payload pattern: byte i of every payload a workload hands
 * a tracer (trace_marker text, a buffer argument, an LTTng-UST text
 * sequence, the companion module's payload tracepoint) is
 * tb_payload_byte(i), and every tracer that records a payload checks what it
 * kept against this function.
 *
 * Printable ASCII '!'..'~' (never '\0' or '\n': the kernel appends "\n\0" to
 * a trace_marker write, LTTng-UST carries the payload as a CTF text
 * sequence), position-dependent with period 94 (coprime stride 7), so a
 * shifted or truncated copy does not verify.
 *
 * C, freestanding: included by the kernel module (through
 * tracebench_kmod_abi.h) and by user space (tracebench/payload_pattern.h).
 * It lives here because the module build only sees kmod/.
 */
#ifndef TRACEBENCH_PAYLOAD_PATTERN_H
#define TRACEBENCH_PAYLOAD_PATTERN_H

#define TB_PAYLOAD_PATTERN_PERIOD 94u

static inline unsigned char tb_payload_byte(unsigned long i)
{
	return (unsigned char)('!' + (i * 7u + 3u) % TB_PAYLOAD_PATTERN_PERIOD);
}

#endif /* TRACEBENCH_PAYLOAD_PATTERN_H */
