/* The tracebench provider's probes, linked into the LTTng-UST reference loop. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tracers/lttng/tracebench_tp.h"
