#include <gtest/gtest.h>

#include "tracebench/workload.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

TEST(Registry, NoneTracerIsFirstAndAlwaysAvailable) {
  ASSERT_FALSE(tracer_registry().empty());
  EXPECT_EQ(tracer_registry().front().name, "none");
  auto t = make_tracer("none");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->available().ok);
  EXPECT_EQ(make_tracer("no-such-tracer"), nullptr);
}

TEST(Registry, NoneTracerRejectsOptions) {
  auto t = make_tracer("none");
  AttachSpec spec;
  spec.options["buffer_kb"] = "64";
  Status s = t->attach(spec);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("buffer_kb"), std::string::npos);
}

TEST(Registry, BaselineWorkloadsDeclareTheirProbePoints) {
  struct Want {
    const char* name;
    ProbeKind kind;
  } want[] = {{"empty", ProbeKind::kNone},
              {"call", ProbeKind::kUserFunction},
              {"getpid", ProbeKind::kSyscall},
              {"read", ProbeKind::kSyscall},
              {"write_null", ProbeKind::kSyscall},
              {"site_nop", ProbeKind::kUserFunction},
              {"site_push", ProbeKind::kUserFunction},
              {"site_nop5", ProbeKind::kUserFunction},
              {"site_ret", ProbeKind::kUserFunction},
              {"usdt", ProbeKind::kUsdt}};
  for (const auto& w : want) {
    const Workload* wl = find_workload(w.name);
    ASSERT_NE(wl, nullptr) << w.name;
    EXPECT_EQ(wl->probe.kind, w.kind) << w.name;
    EXPECT_FALSE(wl->probe.name.empty());
    if (w.kind == ProbeKind::kUserFunction) { EXPECT_NE(wl->probe.address, 0u) << w.name; }
  }
  EXPECT_TRUE(find_workload("write_null")->takes_payload);
  EXPECT_FALSE(find_workload("getpid")->takes_payload);
}

TEST(Registry, EveryWorkloadFiresWithoutATracer) {
  for (const auto& w : workload_registry()) {
    if (w.probe.kind == ProbeKind::kMarker || w.probe.kind == ProbeKind::kKmodTracepoint ||
        w.probe.kind == ProbeKind::kKernelFunction) {
      continue;  // these need a tracer's file or the companion module
    }
    std::unique_ptr<WorkloadState> st;
    WorkloadParams p;
    p.payload_bytes = w.takes_payload ? 64 : 0;
    Status s = w.setup(p, &st);
    ASSERT_TRUE(s.is_ok()) << w.name << ": " << s.message();
    st->fire(100);
  }
}

}  // namespace
}  // namespace tracebench
