// The baseline: attaches to nothing and records nothing, so traced and
// baseline blocks are the same workload (an A/A comparison whose "overhead"
// shows the run's noise), and the baseline block gives the workload's own
// cost per event.  `inject_cycles=N` makes the workload N TSC cycles per
// event slower (both blocks): a calibrated regression for measuring how
// often compare and the change-point detector catch one; `inject_percent=P`
// makes it P% of the workload's own cost slower, measured on this machine,
// so an example's regression is as large on every host.
#include <fmt/format.h>

#include "tracebench/options.h"
#include "tracebench/results.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

class NoneTracer final : public Tracer {
 public:
  std::string_view name() const override { return kBaselineTracer; }
  std::string_view description() const override { return "no tracer: the untraced baseline of every workload"; }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"none"}; }
  // A marker write needs a tracer's instance to write to.
  bool supports(const ProbePoint& p) const override { return p.kind != ProbeKind::kMarker; }
  bool attaches_many_sites() const override { return true; }  // attaches nothing, anywhere
  const OptionSchema& option_schema() const override {
    static const OptionSchema schema = {
        {.name = "inject_cycles",
         .type = OptionSpec::Type::kUint,
         .help = "TSC cycles added to every event the workload fires, in both blocks (a spin after each batch, "
                 "inside the timed region): a known regression for measuring the suite's detectors",
         .default_value = "0",
         .min = 0,
         .max = 1000000},
        {.name = "inject_percent",
         .type = OptionSpec::Type::kUint,
         .help = "the same sized to the host: this percentage of the workload's own cost per event, measured on "
                 "this machine before the blocks (a regression that is as large on a slow host as on a fast one)",
         .default_value = "0",
         .min = 0,
         .max = 1000}};
    return schema;
  }
  Status validate(const AttachSpec& spec) const override {
    OptionValues v;
    TB_TRY(option_values("none", option_schema(), spec, &v));
    if (v.number("inject_cycles") && v.number("inject_percent"))
      return Status::error("none: inject_cycles and inject_percent are two ways to one injection: give one");
    return Status::ok();
  }
  Status attach(const AttachSpec& spec) override {
    TB_TRY(validate(spec));
    OptionValues v;
    TB_TRY(option_values("none", option_schema(), spec, &v));
    inject_cycles_ = v.number("inject_cycles");
    inject_percent_ = v.number("inject_percent");
    return Status::ok();
  }
  std::uint64_t injected_cycles_per_event() const override { return inject_cycles_; }
  double injected_percent_of_workload() const override { return static_cast<double>(inject_percent_); }
  nlohmann::json details() const override {
    nlohmann::json d = nlohmann::json::object();
    if (inject_cycles_) d["inject_cycles"] = inject_cycles_;
    if (inject_percent_) d["inject_percent"] = inject_percent_;
    return d;
  }
  Status enable() override { return Status::ok(); }
  Status disable() override { return Status::ok(); }
  // Records nothing by design: the judge answers not_applicable.
  EventCounts counts() override {
    EventCounts c;
    c.records_events = false;
    return c;
  }
  void teardown() noexcept override {}

 private:
  std::uint64_t inject_cycles_ = 0;
  std::uint64_t inject_percent_ = 0;
};

}  // namespace

TRACEBENCH_REGISTER_TRACER(none, [] { return std::make_unique<NoneTracer>(); });

}  // namespace tracebench
