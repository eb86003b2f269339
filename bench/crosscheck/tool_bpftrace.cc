// The eBPF reference: a bpftrace one-liner counting the loop's events,
//   BEGIN { printf("ready\n"); } PROBE /pid == LOOP/ { @ = count(); }
// started for each traced run (BEGIN runs once every probe is attached, so
// "ready" means attached) and stopped with SIGINT after it, on which
// bpftrace prints its map: `@: N`; the counts of the round's runs, summed,
// are checked against what the loop fired.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>

#include <fmt/format.h>

#include "child.h"
#include "tool.h"

namespace tracebench::crosscheck {
namespace {

// The probe of the case: the getpid tracepoint, or a uprobe on the loop's nop function.
std::string probe_of(const Case& c, const std::string& loop_path) {
  if (c.loop.mode == "nop") return "uprobe:" + loop_path + ":tb_xc_nop";
  return "tracepoint:syscalls:sys_enter_getpid";
}

bool has_uprobes() {
  for (const char* p : {"/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"}) {
    if (access(p, F_OK) == 0) return true;
  }
  return false;
}

class BpftraceTool final : public Tool {
 public:
  std::string missing(const Case& c, const Env&) override {
    if (!on_path("bpftrace")) return "bpftrace is not installed (apt-get install bpftrace)";
    if (geteuid() != 0) return "needs root (BPF programs)";
    if (c.loop.mode == "nop" && !has_uprobes()) return "the kernel has no uprobes (CONFIG_UPROBE_EVENTS)";
    return "";
  }
  std::string version() override { return version_line({"bpftrace", "--version"}); }

  Status begin(const Case& c, const Env& env, const LoopProcess& loop) override {
    script_ = fmt::format("BEGIN {{ printf(\"ready\\n\"); }} {} /pid == {}/ {{ @ = count(); }}",
                          probe_of(c, loop.path()), loop.pid());
    env_ = &env;
    counted_ = 0;
    return Status::ok();
  }
  Status enable() override {
    ChildSpec spec;
    spec.argv = {"bpftrace", "-B", "line", "-e", script_};
    spec.cpus = env_->others;
    spec.stdout_pipe = true;
    spec.stderr_path = env_->work + "/bpftrace.stderr";
    TB_TRY(bpftrace_.start(spec));
    for (std::string line; line != "ready";) {
      if (Status s = bpftrace_.read_line(60, &line); !s)
        return Status::error("bpftrace did not attach: " + s.message());
    }
    return Status::ok();
  }
  Status disable() override {
    bpftrace_.signal(SIGINT);
    std::string text;
    TB_TRY(bpftrace_.read_to_end(60, &text));
    int st = 0;
    if (!bpftrace_.wait(10, &st)) {
      bpftrace_.kill();
      return Status::error("bpftrace did not exit on SIGINT within 10 s");
    }
    std::smatch m;
    static const std::regex count(R"(@: (\d+))");
    if (!std::regex_search(text, m, count))
      return Status::error("bpftrace printed no count (" + describe_wait_status(st) + "): " + text +
                           bpftrace_.stderr_text());
    counted_ += std::stoull(m[1].str());
    return Status::ok();
  }
  Status finish(std::uint64_t fired, ToolCounts* out) override {
    out->counted = true;
    out->fired = fired;
    out->recorded = counted_;
    out->how = "bpftrace's @ = count() map, printed as each traced run's bpftrace exits";
    return Status::ok();
  }
  void end() override { bpftrace_.kill(); }

 private:
  std::string script_;
  const Env* env_ = nullptr;
  std::uint64_t counted_ = 0;  // the round's counts so far
  Child bpftrace_;
};

}  // namespace

std::unique_ptr<Tool> make_bpftrace_tool() { return std::make_unique<BpftraceTool>(); }

}  // namespace tracebench::crosscheck
