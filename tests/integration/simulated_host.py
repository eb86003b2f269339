"""The host an integration script runs on: this one, or the simulated host
its arguments name (`SCRIPT TRACEBENCH --simulate SPEC`: the environment's
TRACEBENCH_SIMULATE_HOST, harness/include/tracebench/host_simulation.h)."""
import os


def host_env(argv):
    """The environment for tracebench and the host's name for messages."""
    env = dict(os.environ)
    if len(argv) > 3 and argv[2] == "--simulate":
        env["TRACEBENCH_SIMULATE_HOST"] = argv[3]
    return env, env.get("TRACEBENCH_SIMULATE_HOST", "this host")
