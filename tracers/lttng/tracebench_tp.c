/*
 * The probes compilation unit of the tracebench provider: expands the event
 * declarations of tracebench_tp.h into probe callbacks and registers them with
 * liblttng-ust when this library is loaded.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "tracers/lttng/tracebench_tp.h"
