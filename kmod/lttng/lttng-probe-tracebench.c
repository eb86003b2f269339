/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * LTTng probe for the tracebench module's tracepoints (built into the
 * lttng-modules tree by scripts/vm/build-lttng-modules.sh; loaded by
 * lttng-sessiond --extra-kmod-probes=tracebench).
 */
#include <linux/module.h>
#include <lttng/tracer.h>

/*
 * The kernel-side declarations, so the compiler checks that the LTTng
 * event prototypes match the module's tracepoints.
 */
#include "tracebench_trace.h"

#include <wrapper/tracepoint.h>

/* tracebench_trace.h set these for the kernel's define_trace.h. */
#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE

#define LTTNG_PACKAGE_BUILD
#define CREATE_TRACE_POINTS
/* The path is pasted into an #include, spaces and all. */
/* clang-format off */
#define TRACE_INCLUDE_PATH instrumentation/events
/* clang-format on */

#include <instrumentation/events/tracebench.h>

MODULE_LICENSE("GPL and additional rights");
MODULE_DESCRIPTION("LTTng probe for the tracebench companion module's tracepoints");
MODULE_VERSION("1");
