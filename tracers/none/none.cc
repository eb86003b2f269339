// The baseline: attaches to nothing and records nothing, so traced and
// baseline blocks are the same workload (an A/A comparison whose "overhead"
// shows the run's noise), and the baseline block gives the workload's own
// cost per event.
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

class NoneTracer final : public Tracer {
 public:
  std::string_view name() const override { return "none"; }
  std::string_view description() const override {
    return "no tracer: the untraced baseline of every workload";
  }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"none"}; }
  // A marker write needs a tracer's instance to write to.
  bool supports(const ProbePoint& p) const override { return p.kind != ProbeKind::kMarker; }
  Status validate(const AttachSpec& spec) const override {
    if (!spec.options.empty()) {
      return Status::error("the none tracer takes no options (got '" + spec.options.begin()->first + "')");
    }
    return Status::ok();
  }
  Status attach(const AttachSpec& spec) override { return validate(spec); }
  Status enable() override { return Status::ok(); }
  Status disable() override { return Status::ok(); }
  // Records nothing by design: the judge answers not_applicable.
  EventCounts counts() override {
    EventCounts c;
    c.records_events = false;
    return c;
  }
  void teardown() noexcept override {}
};

}  // namespace

TRACEBENCH_REGISTER_TRACER(none, [] { return std::make_unique<NoneTracer>(); });

}  // namespace tracebench
