// `tracebench dvm`: run a D script against a workload, like dtrace(1).
//
//   tracebench dvm -n 'tb:::fire { @[arg0 % 4] = count(); }' --workload dvm_hot --events 100000
//   tracebench dvm -s script.d --workload dvm_getpid
//   tracebench dvm -S -e -n '...'       print the compiled DIF and exit
//   tracebench dvm -l [-n pattern]      list probes
//   tracebench dvm --kernel -n 'syscall::getpid:entry { @[execname] = count(); }' --workload dvm_getpid
// Flags that dtrace(1) also has mean what they mean there (-n -s -S -e -l -q
// -x); -w is dtrace's "permit destructive actions", which the D-VM has none
// of: refused with a pointer to --workload.
//                                       the same, in the tracebench module (the kernel's probes)
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tracebench/workload.h"
#include "tracebench/command.h"
#include "tracers/dvm/compiler/dcompile.h"
#include "tracers/dvm/runtime.h"

namespace tracebench {
namespace {

struct DvmArgs {
  std::string script;
  std::string file;
  bool print_dif = false;
  bool exit_after_compile = false;
  bool list = false;
  bool quiet = false;
  bool kernel = false;
  bool destructive = false;  // dtrace -w
  std::string workload = "dvm_hot";
  std::uint64_t events = 100000;
  std::size_t payload = 0;
  std::vector<std::string> xopts;
};

volatile std::sig_atomic_t g_interrupted = 0;
constexpr std::uint64_t kChunk = 10000;

int run_dvm(const DvmArgs& a) {
  if (a.destructive) {
    std::fprintf(stderr,
                 "tracebench dvm: -w is dtrace's 'permit destructive actions'; the D-VM has no destructive actions. "
                 "The workload that fires the probes is --workload NAME\n");
    return 2;
  }
  if (a.list) {
    std::vector<tbdvm::ProbeInfo> matched;
    const std::vector<tbdvm::ProbeInfo> user = a.kernel ? std::vector<tbdvm::ProbeInfo>{} : tbdvm::list_probes();
    for (const auto& p : a.kernel ? tbdvm::list_kernel_probes() : user)
      if (a.script.empty() || tbdvm::probe_matches(a.script, p)) matched.push_back(p);
    if (matched.empty()) {  // like dtrace -l: a description that matches nothing is an error
      std::fprintf(stderr, "tracebench dvm: no probe matches '%s'; `tracebench dvm -l` lists them all\n",
                   a.script.c_str());
      return 1;
    }
    std::printf("%5s %10s %12s %24s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME");
    for (const auto& p : matched)
      std::printf("%5u %10s %12s %24s %s\n", p.id, p.provider.c_str(), p.module.c_str(), p.function.c_str(),
                  p.name.c_str());
    return 0;
  }
  std::string src = a.script;
  std::string origin = "-n";
  if (!a.file.empty()) {
    std::ifstream in(a.file);
    if (!in) {
      std::fprintf(stderr, "tracebench dvm: cannot open %s\n", a.file.c_str());
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    src = ss.str();
    origin = a.file;
  }
  if (src.empty()) {
    std::fprintf(stderr, "tracebench dvm: give a D program with -n '<clauses>' or -s file.d (or -l to list probes)\n");
    return 2;
  }
  tbdvm::CompileResult r = tbdvm::compile_d(src);
  if (!r.program) {
    std::fprintf(stderr, "tracebench dvm: %s: %s\n", origin.c_str(), r.error.c_str());
    return 2;
  }
  if (a.print_dif) std::fputs(tbdvm::disassemble(*r.program).c_str(), stdout);
  if (a.exit_after_compile) return 0;

  tbdvm::Options o;
  o.kernel = a.kernel;
  bool quiet = a.quiet;
  auto apply = [&](const std::string& k, const std::string& v) -> bool {
    if (k == "quiet") {
      quiet = true;
      return true;
    }
    tbdvm::Error e = tbdvm::set_option(&o, k, v);
    if (!e.ok()) std::fprintf(stderr, "tracebench dvm: %s\n", e.message.c_str());
    return e.ok();
  };
  for (const auto& [k, v] : r.options)
    if (!apply(k, v)) return 2;
  for (const auto& x : a.xopts) {
    auto eq = x.find('=');
    if (!apply(x.substr(0, eq), eq == std::string::npos ? "" : x.substr(eq + 1))) return 2;
  }
  const Workload* w = find_workload(a.workload);
  if (!w) {
    std::fprintf(stderr, "tracebench dvm: unknown workload '%s' (see `tracebench list`)\n", a.workload.c_str());
    return 2;
  }
  WorkloadParams wp;
  wp.payload_bytes = a.payload;
  std::unique_ptr<WorkloadState> state;
  Status st = w->setup(wp, &state);
  if (!st) {
    std::fprintf(stderr, "tracebench dvm: workload %s: %s\n", w->name.c_str(), st.message().c_str());
    return 1;
  }
  tbdvm::Session session(o);
  tbdvm::Error e = session.enable(r.program);
  if (!e.ok()) {
    std::fprintf(stderr, "tracebench dvm: %s\n", e.message.c_str());
    return 1;
  }
  if (!quiet)
    std::fprintf(stderr, "dvm: matched %zu probe%s, %zu ECB%s\n", session.matched_probes().size(),
                 session.matched_probes().size() == 1 ? "" : "s", session.necbs(), session.necbs() == 1 ? "" : "s");
  session.start_consumer(stdout);
  // Fire in chunks so an exit() action or Ctrl-C stops the run early.  Like
  // dtrace, the first SIGINT/SIGTERM ends the firing and the aggregations are
  // still printed; a second one kills (SA_RESETHAND).
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_handler = [](int) { g_interrupted = 1; };
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  g_interrupted = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  std::uint64_t left = a.events;
  while (left > 0 && !session.exited() && !g_interrupted) {
    std::uint64_t n = left < kChunk ? left : kChunk;
    state->fire(n);
    left -= n;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  session.disable();
  std::fflush(stdout);
  session.print_aggregations(stdout);
  tbdvm::Counters c = session.counters();
  if (!quiet || c.errors || c.drops || c.agg_drops) {
    std::fprintf(stderr, "dvm: %llu probe firings, %llu ECB firings, %llu errors, %llu drops, %llu aggregation drops\n",
                 static_cast<unsigned long long>(c.fired), static_cast<unsigned long long>(c.ecb_fired),
                 static_cast<unsigned long long>(c.errors), static_cast<unsigned long long>(c.drops),
                 static_cast<unsigned long long>(c.agg_drops));
    if (c.stages.firings) {
      // Each interval holds one pair of reads: their floor comes off.
      const double n = static_cast<double>(c.stages.firings), floor = c.stages.floor_cycles / n;
      std::fprintf(stderr,
                   "dvm: stages over %llu timed firings, cycles each (a read pair's %.0f taken off): provider entry "
                   "%.0f, VM %.0f\n",
                   static_cast<unsigned long long>(c.stages.firings), floor, c.stages.entry_cycles / n - floor,
                   c.stages.vm_cycles / n - floor);
    }
    for (uint32_t f = 1; f < tbdvm::kFaultCount; f++)
      if (c.faults[f])
        std::fprintf(stderr, "dvm: %llu error%s: %s\n", static_cast<unsigned long long>(c.faults[f]),
                     c.faults[f] == 1 ? "" : "s", tbdvm::fault_name(f));
  }
  return session.exited() ? session.exit_status() : 0;
}

void install(CLI::App& app, int* exit_status) {
  auto args = std::make_shared<DvmArgs>();
  CLI::App* sub = app.add_subcommand("dvm", "Run a D program on the in-tree D-VM against a workload (like dtrace)");
  sub->add_option("-n", args->script, "D program text (with -l: a probe pattern)");
  sub->add_option("-s", args->file, "D program file");
  sub->add_flag("-S", args->print_dif, "Print the compiled DIF");
  sub->add_flag("-e", args->exit_after_compile, "Exit after compiling");
  sub->add_flag("-l", args->list, "List probes");
  sub->add_flag("-q", args->quiet, "Quiet: only the program's own output");
  sub->add_flag("--kernel", args->kernel,
                "Run the program in the tracebench module on the kernel's probes (syscall entry/return, "
                "BEGIN/END) instead of in this process (needs the module: `tracebench vm`)");
  sub->add_option("--workload", args->workload, "Workload that fires the probes (default dvm_hot)");
  sub->add_flag("-w", args->destructive, "dtrace's 'permit destructive actions': refused (the D-VM has none)");
  sub->add_option("--events", args->events, "Events the workload fires (default 100000)");
  sub->add_option("--payload", args->payload, "Payload bytes per event (default 0)");
  sub->add_option("-x", args->xopts, "D-VM option name=value (bufsize, aggsize, switchrate, nslots, ...)");
  sub->callback([args, exit_status] { *exit_status = run_dvm(*args); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(dvm, tracebench::Command{"dvm", tracebench::install});
