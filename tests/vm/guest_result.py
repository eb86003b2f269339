"""What the VM-lab tests read from a guest's result.json.

Under TCG the guest's clock is emulated and can change level mid-run: a
benchmark measured and verified on no one level is "unsteady", with no
figure (harness/README.md, "Steady state").  The VM-lab tests check the
tracers in the guest (every event accounted for), so they take "unsteady"
as measured, and print its figure as absent rather than fail on it.
"""

MEASURED = ("ok", "unsteady")


def measured(b):
    """True when the benchmark was measured and verified (ok or unsteady)."""
    return b.get("status") in MEASURED


def overhead_ns(b, spec="8.1f"):
    """The overhead's median as text, "(unsteady: no figure)" when it has none."""
    o = b.get("overhead_ns_per_event")
    return format(o["median"], spec) + " ns/event" if o else "(unsteady: no figure)"


def interval_ns(b):
    """The overhead's interval as text, or nothing when it has none."""
    o = b.get("overhead_ns_per_event")
    return f"[{o['ci_low']:.1f}, {o['ci_high']:.1f}]" if o else ""


def overhead_ratio(a, b):
    """a's overhead over b's as text, "-" when either has no figure."""
    x, y = a.get("overhead_ns_per_event"), b.get("overhead_ns_per_event")
    return f"{x['median'] / y['median']:.2f}" if x and y else "-"
