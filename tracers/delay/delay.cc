// The known-answer tracer: at the probe of a delay site (site.h) its handler
// busy-waits `ns` nanoseconds per event, and does nothing else, so the suite
// must report an overhead of `ns` per event (`tracebench selftest` checks
// that it does).  The nanoseconds become TSC cycles at the rate this tracer
// calibrates itself against CLOCK_MONOTONIC_RAW (not the rate the run
// converts with, so a wrong rate in the run shows), and the spin is trimmed
// at attach by what the handler's call, count and last rdtsc add: the
// handler, called back to back, is timed over windows long enough for the
// timing's own cost to vanish beside it, and the spin is corrected until one
// call costs `ns`.
//
// Its kernel half serves the companion module's tracepoint
// tracebench:tracebench_fixed (workload kmod_fixed): there the module's own
// probe spins, calibrated in the kernel and registered only while the tracer
// is enabled (kernel_probe.h, kmod/delay_probe.c).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "calibration.h"
#include "handled.h"
#include "kernel_probe.h"
#include "site.h"
#include "tracebench/clock.h"
#include "tracebench/host_simulation.h"
#include "tracebench/options.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

class DelayTracer final : public Tracer {
 public:
  std::string_view name() const override { return "delay"; }
  std::string_view description() const override {
    return "known answer: busy-waits a calibrated N ns per event at a delay site, on the traced path only";
  }
  // The user sites need a TSC of constant rate; the kernel half calibrates
  // the module's clock itself.
  Availability available() override {
    if (cpu_has_flag("constant_tsc")) return Availability::yes();
    if (tbdelay::kernel_probe_unavailable().empty()) return Availability::yes();
    return Availability::no(std::string(kNoConstantTsc));
  }
  std::vector<std::string> actions() const override { return {"spin"}; }
  bool supports(const ProbePoint& p) const override {
    return p.name.rfind(tbdelay::kProbePrefix, 0) == 0 || is_kernel_probe(p);
  }
  const OptionSchema& option_schema() const override {
    static const OptionSchema schema = {
        {.name = "ns",
         .type = OptionSpec::Type::kUint,
         .help = "nanoseconds the handler busy-waits per event while enabled (TSC cycles at a rate calibrated against "
                 "CLOCK_MONOTONIC_RAW, trimmed at attach for the handler's own cost)",
         .default_value = "200",
         .min = 1,
         .max = 1000000},
        {.name = "first_pass_events",
         .type = OptionSpec::Type::kUint,
         .help = "a first pass that costs more: the first N traced events after attach take first_pass_ns each, as "
                 "a tracer whose buffer is slow on its first pass (its pages touched for the first time); user "
                 "sites",
         .default_value = "0",
         .min = 0,
         .max = 100000000},
        {.name = "first_pass_ns",
         .type = OptionSpec::Type::kUint,
         .help = "nanoseconds each event of the first pass takes (>= ns; with first_pass_events)",
         .default_value = "0",
         .min = 0,
         .max = 1000000},
        {.name = "first_pass_every",
         .type = OptionSpec::Type::kUint,
         .help = "the first pass comes again every N traced events (0: once): a cost that keeps changing level, as "
                 "on a host that alternates between a fast and a slow mode; with first_pass_events=1, a cost paid "
                 "once in N events, as a tracer's buffer page (the amortized overhead's known answer)",
         .default_value = "0",
         .min = 0,
         .max = 100000000},
        {.name = "buffer_events",
         .type = OptionSpec::Type::kUint,
         .help = "events the tracer says its buffer holds, as a tracer whose buffer is fixed at attach (0: none): "
                 "a block then holds at most half of it, and a run's warm-up fires it twice over before it judges the "
                 "blocks (give first_pass_events: the suite knows the first pass)",
         .default_value = "0",
         .min = 0,
         .max = 100000000}};
    return schema;
  }
  // A buffer fixed at attach (tracer.h), slow on its first passes: twice round.
  std::uint64_t block_event_capacity() const override { return buffer_events_ / 2; }
  std::uint64_t first_pass_events() const override { return 2 * buffer_events_; }
  Status validate(const AttachSpec& spec) const override {
    OptionValues v;
    TB_TRY(option_values("delay", option_schema(), spec, &v));
    return check_first_pass(v, is_kernel_probe(spec.probe));
  }
  Status attach(const AttachSpec& spec) override {
    OptionValues v;
    TB_TRY(option_values("delay", option_schema(), spec, &v));
    ns_ = v.number("ns");
    kernel_ = is_kernel_probe(spec.probe);
    TB_TRY(check_first_pass(v, kernel_));
    if (kernel_) return attach_kernel();
    if (!cpu_has_flag("constant_tsc")) return Status::error(std::string(kNoConstantTsc));
    hz_ = tbdelay::tsc_hz();
    if (!(hz_ > 0)) return Status::error("could not calibrate the TSC against CLOCK_MONOTONIC_RAW");
    gap_cycles_ = tbdelay::gap_cycles(hz_);
    tbdelay::set_gap_cycles(gap_cycles_);
    TB_TRY(calibrate());
    tbdelay::reset_handled();
    first_pass_events_ = v.number("first_pass_events");
    buffer_events_ = v.number("buffer_events");
    first_pass_ns_ = v.number("first_pass_ns");
    const double extra = static_cast<double>(first_pass_ns_) - static_cast<double>(ns_);
    tbdelay::set_first_pass(first_pass_events_, v.number("first_pass_every"),
                            spin_cycles_ + static_cast<std::uint64_t>(std::llround(std::max(0.0, extra) * 1e-9 * hz_)));
    return Status::ok();
  }
  Status enable() override {
    if (kernel_) return kprobe_.enable(true);
    tbdelay::g_spin_cycles.store(spin_cycles_, std::memory_order_relaxed);
    return Status::ok();
  }
  Status disable() override {
    if (kernel_) return kprobe_.enable(false);
    tbdelay::g_spin_cycles.store(0, std::memory_order_relaxed);
    return Status::ok();
  }
  // The handler (or the module's probe) counts every event it delayed.
  EventCounts counts() override {
    EventCounts c;
    if (!kernel_) {
      c.recorded = tbdelay::handled();
      return c;
    }
    if (Status s = kprobe_.status(&kstatus_); !s) {
      c.tracer_errors = 1;
      c.tracer_error_detail = s.message();
    }
    c.recorded = kstatus_.firings;
    return c;
  }
  nlohmann::json details() const override {
    if (kernel_) return kernel_details();
    return {{"ns", ns_},
            {"first_pass_events", first_pass_events_},
            {"first_pass_ns", first_pass_ns_},
            {"buffer_events", buffer_events_},
            {"tsc_hz", hz_},
            {"spin_cycles", spin_cycles_},
            {"handler_cycles", handler_cycles_},
            {"handler_ns", handler_cycles_ / hz_ * 1e9},
            {"gap_cycles", gap_cycles_}};
  }
  void teardown() noexcept override {
    tbdelay::g_spin_cycles.store(0, std::memory_order_relaxed);
    tbdelay::set_first_pass(0, 0, 0);
    kprobe_.close();
  }

 private:
  // Chooses the spin so that one handler call costs ns_: the handler's cost
  // with the shortest spin says what it adds to any spin, and two rounds of
  // correction take the remainder out.
  Status calibrate() {
    const double target = static_cast<double>(ns_) * 1e-9 * hz_;
    const double least = tbdelay::handler_cycles(1, hz_);
    if (least > target)
      return Status::error(fmt::format(
          "delay.ns={} is less than the handler's own cost on this CPU (~{:.0f} ns: its call, count and rdtsc); "
          "choose delay.ns >= {:.0f}",
          ns_, least / hz_ * 1e9, std::ceil(least / hz_ * 1e9)));
    double spin = std::max(1.0, target - (least - 1.0));
    double cost = tbdelay::handler_cycles(static_cast<std::uint64_t>(std::llround(spin)), hz_);
    for (int round = 0; round < 2; ++round) {
      spin = std::max(1.0, spin + (target - cost));
      cost = tbdelay::handler_cycles(static_cast<std::uint64_t>(std::llround(spin)), hz_);
    }
    spin_cycles_ = static_cast<std::uint64_t>(std::llround(spin));
    handler_cycles_ = cost;
    return Status::ok();
  }

  static Status check_first_pass(const OptionValues& v, bool kernel) {
    const std::uint64_t events = v.number("first_pass_events"), ns = v.number("first_pass_ns");
    const std::uint64_t every = v.number("first_pass_every");
    if (kernel && (events > 0 || ns > 0 || every > 0 || v.number("buffer_events") > 0))
      return Status::error(
          "delay.first_pass_* and buffer_events are served at user sites only (delay_site, delay_getpid)");
    if (every > 0 && every <= events)
      return Status::error(fmt::format(
          "delay.first_pass_every={} must be more than first_pass_events={} (the pass, then the rest)", every, events));
    if (events == 0 && ns == 0 && every == 0) return Status::ok();
    if (events == 0 || ns < v.number("ns"))
      return Status::error(fmt::format(
          "delay.first_pass_events and delay.first_pass_ns go together, with first_pass_ns >= ns ({}): got {} events "
          "at {} ns",
          v.number("ns"), events, ns));
    return Status::ok();
  }

  static bool is_kernel_probe(const ProbePoint& p) {
    return p.kind == ProbeKind::kKmodTracepoint && p.target == tbdelay::kKernelProbeTarget;
  }

  // The module calibrates its probe for ns_ (and refuses a ns_ below its
  // shortest firing, saying what that is).
  Status attach_kernel() {
    TB_TRY(kprobe_.open());
    Status s = kprobe_.calibrate(static_cast<std::uint32_t>(ns_), &kcal_);
    if (!s) kprobe_.close();
    return s;
  }

  // What the module chose and measured, and the time its probe really spent
  // per firing by its own clock, whose rate over the enabled intervals is
  // checked against the calibration's (a guest clock that drifts shows).
  nlohmann::json kernel_details() const {
    const double hz = static_cast<double>(kcal_.clock_hz);
    nlohmann::json d = {{"ns", ns_},
                        {"site", "kernel"},
                        {"clock_hz", kcal_.clock_hz},
                        {"kernel_tsc_khz", kcal_.kernel_khz},
                        {"spin_cycles", kcal_.spin_cycles},
                        {"spin_ns", kcal_.ns(static_cast<double>(kcal_.spin_cycles))},
                        {"least_firing_ns", kcal_.least_ns()},
                        {"firing_ns", kcal_.firing_ns()},
                        {"firing_iqr_ns", kcal_.ns(kcal_.firing_iqr_cycles)},
                        {"untraced_event_ns", kcal_.ns(kcal_.untraced_cycles)},
                        {"firings", kstatus_.firings}};
    if (kstatus_.firings && hz > 0) {
      d["spent_ns_per_firing"] =
          static_cast<double>(kstatus_.spent_cycles) / static_cast<double>(kstatus_.firings) / hz * 1e9;
      d["min_spent_ns"] = static_cast<double>(kstatus_.min_spent_cycles) / hz * 1e9;
    }
    if (kstatus_.enabled_ns && hz > 0)
      d["enabled_clock_ratio"] =
          static_cast<double>(kstatus_.enabled_cycles) / (static_cast<double>(kstatus_.enabled_ns) * 1e-9) / hz;
    return d;
  }

  static constexpr std::string_view kNoConstantTsc =
      "the CPU's TSC rate is not constant (no constant_tsc flag): a spin of N cycles is not N ns";

  bool kernel_ = false;
  tbdelay::KernelProbe kprobe_;
  tbdelay::KernelCalibration kcal_;
  tbdelay::KernelProbeStatus kstatus_;
  std::uint64_t ns_ = 0, first_pass_events_ = 0, first_pass_ns_ = 0, buffer_events_ = 0;
  double hz_ = 0;
  std::uint64_t spin_cycles_ = 0, gap_cycles_ = 0;
  double handler_cycles_ = 0;
};

}  // namespace

TRACEBENCH_REGISTER_TRACER(delay, [] { return std::make_unique<DelayTracer>(); });

}  // namespace tracebench
