#include "reference_round.h"

#include <unistd.h>

#include <regex>

#include "child.h"
#include "loop_process.h"
#include "round_stats.h"

namespace tracebench::crosscheck {
namespace {

// `perf bench syscall basic`: its own loop of getppid(2), pinned to the
// measured CPU; its "usecs/op" is the mean over every call, wall time.  It
// runs under SCHED_FIFO, so that another process sharing the CPU does not
// put its own time into that mean (seen here with two compilers running:
// 345-446 ns against the suite's 167-177, whose median leaves preempted
// samples out); interrupts still count.
Status perf_bench_round(const Case& c, const Env& env, ReferenceRound* out) {
  ChildSpec s;
  s.argv = {"perf", "bench", "syscall", "basic", "-l", std::to_string(c.loop.calls)};
  s.cpus = {env.cpu};
  s.fifo_priority = 1;
  std::string text;
  TB_TRY(run_to_end(s, 120, &text));
  std::smatch m;
  static const std::regex per_op(R"(([0-9.]+) usecs/op)");
  if (!std::regex_search(text, m, per_op)) return Status::error("perf bench printed no usecs/op: " + text);
  out->figure_ns = out->untraced_ns = std::stod(m[1].str()) * 1000.0;
  out->verified = true;
  return Status::ok();
}

Status loop_alone_round(const Case& c, const Env& env, ReferenceRound* out) {
  LoopProcess loop;
  TB_TRY(loop.start(env, c.loop));
  LoopRun run;
  TB_TRY(loop.run(&run));
  loop.stop();
  out->figure_ns = out->untraced_ns = run.median_chunk_ns;
  out->untraced_runs = {run.median_chunk_ns};
  if (run.getpid_ns > 0) out->getpid_ns = {run.getpid_ns};
  out->verified = true;
  return Status::ok();
}

// Untraced, then kTracedRuns times traced (the tool switched on) and
// untraced again: each traced run's figure is its time minus the mean of
// the untraced runs on either side, the round's the median of those.
Status tool_round(const Case& c, Tool* tool, const Env& env, ReferenceRound* out) {
  TB_TRY(tool->prepare(env));
  LoopProcess loop;
  TB_TRY(loop.start(env, c.loop));
  struct End {
    Tool* t;
    ~End() { t->end(); }
  } end{tool};
  TB_TRY(tool->begin(c, env, loop));
  LoopRun run;
  TB_TRY(loop.run(&run));
  out->untraced_runs = {run.median_chunk_ns};
  if (run.getpid_ns > 0) out->getpid_ns = {run.getpid_ns};
  std::vector<double> figures;
  std::uint64_t fired = 0;
  for (int i = 0; i < kTracedRuns; ++i) {
    TB_TRY(tool->enable());
    TB_TRY(loop.run(&run));
    TB_TRY(tool->disable());
    fired += run.fired;
    out->traced_runs.push_back(run.median_chunk_ns);
    if (run.getpid_ns > 0) out->getpid_ns.push_back(run.getpid_ns);
    TB_TRY(loop.run(&run));
    out->untraced_runs.push_back(run.median_chunk_ns);
    if (run.getpid_ns > 0) out->getpid_ns.push_back(run.getpid_ns);
    figures.push_back(out->traced_runs.back() - 0.5 * (out->untraced_runs[i] + out->untraced_runs[i + 1]));
  }
  TB_TRY(tool->finish(fired, &out->counts));
  loop.stop();
  out->untraced_ns = median_of(out->untraced_runs);
  out->traced_ns = median_of(out->traced_runs);
  out->figure_ns = median_of(figures);
  out->verified = counts_verified(out->counts);
  return Status::ok();
}

}  // namespace

std::string reference_missing(const Case& c, Tool* tool, const Env& env) {
  if (c.kind == ToolKind::kPerfBench) {
    if (!on_path("perf")) return "perf is not installed (apt-get install linux-perf)";
    if (version_line({"perf", "--version"}).rfind("perf version", 0) != 0)
      return "perf does not run here: " + version_line({"perf", "--version"});
    return "";
  }
  if (env.loop_dir.empty() || access(env.program(c.loop.program).c_str(), X_OK) != 0)
    return c.loop.program + " was not built (it is built with the tracebench target)";
  return tool ? tool->missing(c, env) : "";
}

Status reference_round(const Case& c, Tool* tool, const Env& env, ReferenceRound* out) {
  *out = ReferenceRound{};
  if (c.kind == ToolKind::kPerfBench) return perf_bench_round(c, env, out);
  if (c.kind == ToolKind::kLoopAlone) return loop_alone_round(c, env, out);
  return tool_round(c, tool, env, out);
}

}  // namespace tracebench::crosscheck
