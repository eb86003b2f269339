// LTTng-UST tracepoint sites, the lttng-ust tests/benchmark way: the same
// loop runs untraced (tracepoint disabled: one load and a not-taken branch)
// and traced, and the difference per event is the tracer's cost.
//
//   ust_hot      tracepoint(tracebench, hot, tag): a 4-byte integer payload
//   ust_payload  tracepoint(tracebench, payload, buf, len): a CTF text
//                sequence of payload_bytes bytes of a known pattern
//
// The provider (tracers/lttng/tracebench_tp.h) is linked dynamically: the
// probes live in libtracebench_lttng_provider.so, loaded by setup() (or by
// the lttng adapter's attach()), see tracers/lttng/ust_provider.h.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "tracers/lttng/tracebench_tp.h"

#include "tracebench/workload.h"
#include "tracers/lttng/payload_pattern.h"
#include "tracers/lttng/ust_provider.h"

namespace tracebench {
namespace {

class UstHotLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) {
      lttng_ust_tracepoint(tracebench, hot, lttng::kHotTag);
      // Keeps the tracepoint's enabled-state load inside the loop.
      asm volatile("" ::: "memory");
    }
  }
};

class UstPayloadLoop final : public WorkloadState {
 public:
  explicit UstPayloadLoop(std::size_t bytes) : buf_(bytes, '\0') {
    for (std::size_t i = 0; i < bytes; ++i) buf_[i] = lttng::payload_byte(i);
  }
  void fire(std::uint64_t n) override {
    const char* data = buf_.data();
    const auto len = static_cast<std::uint32_t>(buf_.size());
    for (std::uint64_t i = 0; i < n; ++i) {
      lttng_ust_tracepoint(tracebench, payload, data, len);
      asm volatile("" ::: "memory");
    }
  }

 private:
  std::string buf_;
};

// tracebench:array64: the pattern's first 64 bytes as a fixed-size array.
class UstArrayLoop final : public WorkloadState {
 public:
  UstArrayLoop() {
    for (std::size_t i = 0; i < sizeof buf_; ++i) buf_[i] = static_cast<std::uint8_t>(lttng::payload_byte(i));
  }
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) {
      lttng_ust_tracepoint(tracebench, array64, buf_);
      asm volatile("" ::: "memory");
    }
  }

 private:
  std::uint8_t buf_[64];
};

Availability provider_available() {
  if (lttng::provider_present()) return Availability::yes();
  return Availability::no("the LTTng-UST provider library " + lttng::provider_path() +
                          " is missing (build the tracebench_lttng_provider target)");
}

Status setup_hot(const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
  TB_TRY(lttng::load_provider());
  *out = std::make_unique<UstHotLoop>();
  return Status::ok();
}

Status setup_payload(const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
  if (p.payload_bytes > std::numeric_limits<std::uint32_t>::max()) {
    return Status::error("ust_payload: payload_bytes must fit in 32 bits");
  }
  TB_TRY(lttng::load_provider());
  *out = std::make_unique<UstPayloadLoop>(p.payload_bytes);
  return Status::ok();
}

Workload ust_workload(const char* name, const char* event, const char* what, bool takes_payload,
                      decltype(Workload::setup) setup) {
  Workload w;
  w.name = name;
  w.family = "lttng_ust";
  w.description = what;
  w.probe = ProbePoint{std::string("ust:tracebench:") + event, ProbeKind::kUstTracepoint,
                       std::string("tracebench:") + event, 0, std::string("LTTng-UST tracepoint tracebench:") + event};
  w.takes_payload = takes_payload;
  w.setup = std::move(setup);
  w.available = provider_available;
  return w;
}

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(ust_hot,
                             ust_workload("ust_hot", "hot", "LTTng-UST tracepoint tracebench:hot with a 4-byte payload",
                                          false, setup_hot));

TRACEBENCH_REGISTER_WORKLOAD(ust_array64, [] {
  Workload w = ust_workload(
      "ust_array64", "array64",
      "LTTng-UST tracepoint tracebench:array64 carrying 64 bytes as a fixed-size array "
      "(lttng_ust_field_array)",
      true, [](const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
        if (p.payload_bytes != 64)
          return Status::error("ust_array64 carries exactly 64 bytes, not " + std::to_string(p.payload_bytes));
        *out = std::make_unique<UstArrayLoop>();
        return Status::ok();
      });
  w.fixed_payloads = {64};
  return w;
}());

TRACEBENCH_REGISTER_WORKLOAD(ust_payload, ust_workload("ust_payload", "payload",
                                                       "LTTng-UST tracepoint tracebench:payload carrying "
                                                       "payload_bytes bytes as a CTF text sequence",
                                                       true, setup_payload));

}  // namespace tracebench
