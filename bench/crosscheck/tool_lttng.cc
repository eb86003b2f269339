// The LTTng-UST reference: a session made with the `lttng` CLI around the
// UST loop program (tracebench-crosscheck-ust): per-UID buffers, discard
// mode, the suite's sub-buffer geometry, only the loop's vpid tracked, the
// event rule created disabled before the session starts (as the suite's
// adapter does) and enabled/disabled around each traced run.  After the
// round's runs the session is stopped (the consumer writes out every sub-buffer) and the
// trace read with babeltrace2 (ctf_count.h).  A root session daemon is used
// if one runs; else one is started for the command and stopped at its end.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "child.h"
#include "ctf_count.h"
#include "tool.h"
#include "undo.h"

namespace tracebench::crosscheck {
namespace {

class LttngTool final : public Tool {
 public:
  std::string missing(const Case& c, const Env& env) override {
    if (!on_path("lttng") || !on_path("lttng-sessiond"))
      return "the lttng CLI is not installed (apt-get install lttng-tools)";
    if (geteuid() != 0) return "needs root (the root session daemon)";
    if (env.loop_dir.empty() || access(env.program(c.loop.program).c_str(), X_OK) != 0)
      return c.loop.program + " was not built (needs liblttng-ust-dev at build time)";
    return ctf_reader_missing();
  }
  std::string version() override { return version_line({"lttng", "--version"}); }

  // Before the loop starts, so that its liblttng-ust registers with the daemon.
  Status prepare(const Env& env) override {
    env_ = &env;
    return ensure_daemon();
  }
  Status begin(const Case& c, const Env& env, const LoopProcess& loop) override {
    env_ = &env;
    session_ = fmt::format("tracebench-{}-crosscheck-{}", getpid(), ++sessions_);
    trace_ = env.work + "/" + session_;
    event_ = c.loop.mode == "hot" ? "tracebench:hot" : "tracebench:payload";
    expect_ = {event_, c.loop.payload};
    TB_TRY(lttng({"create", session_, "--output=" + trace_}));
    session_undo_ = Undo([session = session_, trace = trace_, cpus = env.others] {
      ChildSpec s;
      s.argv = {"lttng", "-q", "destroy", session};
      s.cpus = cpus;
      (void)run_to_end(s, 60);
      std::error_code ec;
      std::filesystem::remove_all(trace, ec);
    });
    const auto& o = c.suite.options;
    TB_TRY(lttng({"enable-channel", "--session", session_, "--userspace", "--buffers-uid", "--discard",
                  "--subbuf-size=" + (o.count("subbuf_size") ? o.at("subbuf_size") : std::string("2M")),
                  "--num-subbuf=" + (o.count("num_subbuf") ? o.at("num_subbuf") : std::string("8")), "tracebench"}));
    TB_TRY(lttng({"untrack", "--session", session_, "--userspace", "--vpid", "--all"}));
    TB_TRY(lttng({"track", "--session", session_, "--userspace", "--vpid=" + std::to_string(loop.pid())}));
    TB_TRY(rule("enable-event"));
    TB_TRY(rule("disable-event"));
    return lttng({"start", session_});
  }
  Status enable() override { return rule("enable-event"); }
  Status disable() override { return rule("disable-event"); }
  Status finish(std::uint64_t fired, ToolCounts* out) override {
    TB_TRY(lttng({"stop", session_}));  // waits until the consumer has written every sub-buffer
    CtfCount n;
    TB_TRY(count_ctf(trace_, expect_, &n));
    out->counted = true;
    out->fired = fired;
    out->recorded = n.events;
    out->lost = n.discarded;
    out->payload_checked = n.checked;
    out->payload_bad = n.bad + n.other_events;
    out->how = "the session's trace read with babeltrace2: events, discarded events, every event's fields";
    return Status::ok();
  }
  void end() override { session_undo_.run(); }

 private:
  Status lttng(std::vector<std::string> args) {
    ChildSpec s;
    s.argv = {"lttng", "-q"};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.cpus = env_->others;
    return run_to_end(s, 60);
  }
  Status rule(const std::string& verb) {
    return lttng({verb, "--session", session_, "--userspace", "--channel", "tracebench", event_});
  }
  // A root session daemon that answers: the one running, or ours.
  Status ensure_daemon() {
    ChildSpec probe;
    probe.argv = {"lttng", "list"};
    probe.cpus = env_->others;
    if (run_to_end(probe, 10)) return Status::ok();
    ChildSpec start;
    start.argv = {"lttng-sessiond", "--daemonize", "--no-kernel"};
    start.cpus = cpus_besides(-1);  // every CPU, as the suite's adapter starts it
    TB_TRY(run_to_end(start, 30));
    std::ifstream f("/var/run/lttng/lttng-sessiond.pid");
    pid_t pid = -1;
    f >> pid;
    if (pid > 0) {
      daemon_undo_ = Undo([pid] {
        std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
        std::string name;
        comm >> name;
        if (name == "lttng-sessiond") kill(pid, SIGTERM);
      });
    }
    return Status::ok();
  }

  const Env* env_ = nullptr;
  int sessions_ = 0;
  std::string session_, trace_, event_;
  CtfExpect expect_;
  Undo daemon_undo_;   // kept for the command's life
  Undo session_undo_;  // the round's session (undone before the daemon)
};

}  // namespace

std::unique_ptr<Tool> make_lttng_tool() { return std::make_unique<LttngTool>(); }

}  // namespace tracebench::crosscheck
