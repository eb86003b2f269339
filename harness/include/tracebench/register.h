// Self-registration helpers shared by the tracer, workload and command
// registries: each adapter, workload family or subcommand adds itself with
// one line in its own file.
#pragma once

#define TRACEBENCH_CONCAT_(a, b) a##b
#define TRACEBENCH_CONCAT(a, b) TRACEBENCH_CONCAT_(a, b)
