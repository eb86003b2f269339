// One probe site, two tracers: a noinline function that holds both a D-VM
// static site and an LTTng-UST tracepoint (tracebench:payload) on the same
// payload, so `tracebench run -t dvm,lttng -w same_site` compares the two
// tracers' per-event cost at exactly the same place, against the same
// untraced loop.  Whichever tracer is attached, the other's site stays
// disabled (one load and a not-taken branch, paid in the baseline too).
//
//   dvm    tb:tracebench:tb_same_site:fire (arg0 = i, arg1 = payload,
//          arg2 = bytes); action `record` = tracemem(arg1, bytes)
//   lttng  tracebench:payload carrying the same bytes
//
// The payload is the suite's pattern (tracebench/payload_pattern.h), which
// both tracers check byte for byte in what they recorded.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "tracers/lttng/tracebench_tp.h"  // tracepoints defined in bench/lttng_ust.cc

#include "tracebench/workload.h"
#include "tracebench/payload_pattern.h"
#include "tracers/dvm/site.h"
#include "tracers/lttng/ust_provider.h"

extern "C" __attribute__((noinline, used)) void tb_same_site(std::uint64_t i, const char* p, std::uint32_t n) {
  DVM_PROBE_REGION(tb, "tb_same_site", "fire", p, n, i, reinterpret_cast<std::uint64_t>(p), n);
  lttng_ust_tracepoint(tracebench, payload, p, n);
  asm volatile("" ::: "memory");
}

namespace tracebench {
namespace {

class SameSiteLoop final : public WorkloadState {
 public:
  explicit SameSiteLoop(std::size_t bytes) : buf_(bytes ? bytes : 1, '\0'), len_(bytes) {
    for (std::size_t i = 0; i < buf_.size(); ++i) buf_[i] = payload_byte(i);
  }
  void fire(std::uint64_t n) override {
    const char* data = buf_.data();
    for (std::uint64_t i = 0; i < n; ++i) tb_same_site(i, data, len_);
  }

 private:
  std::string buf_;
  std::uint32_t len_;
};

Status setup(const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
  if (p.payload_bytes > std::numeric_limits<std::uint32_t>::max())
    return Status::error("same_site: payload_bytes must fit in 32 bits");
  // Registers the LTTng probes (whatever the tracer), so the disabled
  // tracepoint costs the same in every run.
  TB_TRY(lttng::load_provider());
  *out = std::make_unique<SameSiteLoop>(p.payload_bytes);
  return Status::ok();
}

Availability available() {
  if (lttng::provider_present()) return Availability::yes();
  return Availability::no("the LTTng-UST provider library " + lttng::provider_path() +
                          " is missing (build the tracebench_lttng_provider target)");
}

}  // namespace

// "dvm:" names the D-VM site (function tb_same_site); the kind and target
// name the LTTng-UST tracepoint.
TRACEBENCH_REGISTER_WORKLOAD(
    same_site, Workload{"same_site", "same_site",
                        "noinline tb_same_site() holding a D-VM site and the LTTng-UST tracepoint tracebench:payload "
                        "on the same payload_bytes bytes (compare dvm and lttng at one site)",
                        ProbePoint{"dvm:tb_same_site", ProbeKind::kUstTracepoint, "tracebench:payload", 0,
                                   "D-VM static site + LTTng-UST tracepoint in one function"},
                        true, setup, available});

}  // namespace tracebench
