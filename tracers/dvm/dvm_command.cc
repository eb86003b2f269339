// `tracebench dvm`: run a D script against a workload, like dtrace(1).
//
//   tracebench dvm -n 'tb:::fire { @[arg0 % 4] = count(); }' --workload dvm_hot --events 100000
//   tracebench dvm -s script.d --workload dvm_getpid
//   tracebench dvm -S -e -n '...'       print the compiled DIF and exit
//   tracebench dvm -l [-n pattern]      list probes
//   tracebench dvm --kernel -n 'syscall::getpid:entry { @[execname] = count(); }' --workload dvm_getpid
//                                       the same, in the tracebench module (the kernel's probes)
//   tracebench dvm --kernel -c 'ls /' -n 'syscall:::entry /pid == $target/ { @[probefunc] = count(); }'
//   tracebench dvm -s script.d 42 getpid     macro arguments $1, $2
// Flags that dtrace(1) also has mean what they mean there (-n -s -S -e -l -q
// -x -o -c -p); -w is dtrace's "permit destructive actions", which the D-VM
// has none of: refused with a pointer to --workload.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tracebench/workload.h"
#include "tracebench/command.h"
#include "tracebench/run_request.h"
#include "tracebench/lock_flags.h"
#include "tracebench/machine_lock.h"
#include "tracebench/util.h"
#include "tracers/dvm/append_output.h"
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
  // Numbers as typed (signed: "-5" is refused, never wrapped), checked by check_numbers().
  long long events = 100000;
  long long payload = 0;
  std::vector<std::string> xopts;
  std::string output;                   // -o: append the traced data here
  std::string command;                  // -c: run it, trace until it exits ($target)
  long long target_pid = -1;            // -p: trace until it exits ($target)
  std::vector<std::string> macro_args;  // $1..$N
  bool workload_given = false;
  LockFlags lock;
};

// The file execvp() would run for `word` (a path, or the first executable
// of that name along PATH), resolved; the word itself when there is none
// (the pid provider then says so, and so does the exec).
std::string resolve_program(const std::string& word) {
  std::vector<std::string> candidates;
  if (word.find('/') != std::string::npos) {
    candidates.push_back(word);
  } else {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
      const size_t colon = dirs.find(':', start);
      const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + word);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  for (const std::string& c : candidates) {
    char real[PATH_MAX];
    if (access(c.c_str(), X_OK) == 0 && realpath(c.c_str(), real)) return real;
  }
  return word;
}

// The -c command: forked at once, held until the session is enabled (dtrace
// grabs it stopped), then exec'd.
struct Child {
  pid_t pid = -1;
  int go_fd = -1;   // writing here lets the child exec
  std::string exe;  // the program it will run (pid probes' a.out)
  ~Child() {
    if (go_fd >= 0) close(go_fd);  // the child exits without exec
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
};

bool spawn_held(const std::string& command, Child* c, std::string* err) {
  wordexp_t we{};
  if (wordexp(command.c_str(), &we, WRDE_NOCMD) != 0 || we.we_wordc == 0) {
    *err = "-c '" + command + "': not a command (words are split as the shell does; no substitutions)";
    if (we.we_wordv) wordfree(&we);
    return false;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    wordfree(&we);
    *err = "pipe: " + std::string(std::strerror(errno));
    return false;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(p[1]);
    char go;
    if (read(p[0], &go, 1) != 1) _exit(127);  // the tracer gave up
    std::signal(SIGPIPE, SIG_DFL);            // tracebench ignores it (cli.cc); the command gets the default
    execvp(we.we_wordv[0], we.we_wordv);
    std::fprintf(stderr, "tracebench dvm: -c: cannot run %s: %s\n", we.we_wordv[0], std::strerror(errno));
    _exit(127);
  }
  close(p[0]);
  c->exe = resolve_program(we.we_wordv[0]);
  wordfree(&we);
  if (pid < 0) {
    close(p[1]);
    *err = "fork: " + std::string(std::strerror(errno));
    return false;
  }
  c->pid = pid;
  c->go_fd = p[1];
  return true;
}

volatile std::sig_atomic_t g_interrupted = 0;
constexpr std::uint64_t kChunk = 10000;

// Ranges of the numeric options, checked before anything is compiled or run.
// --events: 1e15 is "until exit() or Ctrl-C" (as dtrace runs until stopped), yet no wrapped negative.
constexpr long long kMaxEvents = 1000000000000000LL;
constexpr long long kMaxPid = INT_MAX;  // pid_t; a pid that does not exist is "no such process"

bool check_numbers(const DvmArgs& a) {
  auto range = [](const char* flag, long long v, long long lo, long long hi, const char* what) {
    if (v >= lo && v <= hi) return true;
    std::fprintf(stderr, "tracebench dvm: %s %lld is outside %lld..%lld (%s)\n", flag, v, lo, hi, what);
    return false;
  };
  if (Status st = check_payload_arg(a.payload); !st) {  // as every command's --payload
    std::fprintf(stderr, "tracebench dvm: %s\n", st.message().c_str());
    return false;
  }
  return range("--events", a.events, 1, kMaxEvents, "events the workload fires") &&
         (a.target_pid == -1 || range("-p", a.target_pid, 1, kMaxPid, "a process id"));
}

// -o must not be the program it runs, nor a run's result file (the traced
// data appended to it would spoil it).
bool check_output_path(const DvmArgs& a) {
  if (a.output.empty()) return true;
  Status st = a.file.empty() ? Status::ok() : check_output_not_input("-o", a.output, {a.file});
  const std::filesystem::path p(a.output);
  const std::string name = p.filename().string();
  std::error_code ec;
  if (st && (name == "result.json" || name == "samples.csv" || name == "summary.csv") &&
      std::filesystem::exists(
          p.parent_path().empty() ? std::filesystem::path("result.json") : p.parent_path() / "result.json", ec))
    st = Status::error("-o " + a.output +
                       " is a file of a tracebench run: appending the traced data would spoil it; "
                       "name another file");
  if (!st) std::fprintf(stderr, "tracebench dvm: %s\n", st.message().c_str());
  return st.is_ok();
}

// -x flags the session takes that are no option of the dvm tracer: dtrace's
// valueless flags (-x quiet, -x zdefs) and its aliases (-x cpus, -x Z).
bool session_only(const std::string& x) {
  const auto eq = x.find('=');
  if (eq == std::string::npos) return true;
  const std::string key = x.substr(0, eq);
  return key == "quiet" || key == "zdefs" || key == "Z" || key == "cpus";
}

// Another process (-c/-p): only the kernel home's probes see it.
bool traces_other(const DvmArgs& a) { return !a.command.empty() || a.target_pid >= 0; }

// The request planned as `run -t dvm` (`-t dvm_kernel` with --kernel) plans
// it (tracebench/run_request.h): its workload, payload and -x options refused
// the same way, in the same words, and the options parsed once into the
// values the session is set from.  The module's presence is the session's to
// report (-l and the compiler run without it).  With -c/-p there is no
// workload: the options are parsed as the plan parses them, and a payload,
// which only a workload hands over, is refused.
Status plan_request(const DvmArgs& a, std::vector<std::string>* session_x,
                    std::shared_ptr<const OptionValues>* planned_x) {
  const std::string tracer = a.kernel ? "dvm_kernel" : "dvm";
  std::vector<std::string> raw;
  for (const auto& x : a.xopts) (session_only(x) ? *session_x : raw).push_back(x);
  if (traces_other(a)) {
    if (a.payload != 0)
      return Status::error(
          fmt::format("--payload {}: -c/-p trace another process, whose events carry what it "
                      "hands over; --payload is for this one's --workload",
                      a.payload));
    return plan_tracer_options(tracer, raw, planned_x);
  }
  SingleRunRequest req{tracer, a.workload, "default", a.payload, std::move(raw), /*availability_by_caller=*/true};
  AttachSpec spec;
  TB_TRY(plan_single_run(req, &spec));
  *planned_x = spec.parsed_options;
  return Status::ok();
}

// -l: the probes (the kernel home's with the pid and usdt probes the
// description names), like dtrace -l; a description that matches none is
// an error.
int list_probes(const DvmArgs& a) {
  std::vector<tbdvm::ProbeInfo> matched;
  std::vector<tbdvm::ProbeInfo> probes = a.kernel ? tbdvm::list_kernel_probes() : tbdvm::list_probes();
  if (a.kernel && !a.script.empty()) {
    tbdvm::Error e = tbdvm::kernel_process_probes({a.script}, {}, static_cast<uint32_t>(probes.size()) + 1, &probes);
    if (!e.ok()) {
      std::fprintf(stderr, "tracebench dvm: %s\n", e.message.c_str());
      return 1;
    }
  }
  for (const auto& p : probes)
    if (a.script.empty() || tbdvm::probe_matches(a.script, p)) matched.push_back(p);
  if (matched.empty()) {
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

// The D program's text (-n, or -s FILE: bounded, and a FIFO or device
// refused without a read) and its origin for messages.
Status read_program(const DvmArgs& a, std::string* src, std::string* origin) {
  *src = a.script;
  *origin = "-n";
  if (!a.file.empty()) {
    if (Status st = read_input_file(a.file, 16 << 20, src); !st) return Status::error("-s " + st.message());
    *origin = a.file;
  }
  if (src->empty()) return Status::error("give a D program with -n '<clauses>' or -s file.d (or -l to list probes)");
  return Status::ok();
}

// dvm's own rules for -c, -p, --kernel and --workload, which no `run` has.
Status check_process_flags(const DvmArgs& a) {
  if (!a.command.empty() && a.target_pid >= 0) return Status::error("-c and -p both name the traced process; give one");
  if (traces_other(a) && !a.kernel)
    return Status::error(
        "-c/-p trace another process, which only the kernel home's probes see: add --kernel (the "
        "user home's probes are this process's own sites)");
  if (traces_other(a) && a.workload_given)
    return Status::error("-c/-p trace a process until it exits; --workload is for tracing this one");
  if (a.target_pid >= 0 && kill(static_cast<pid_t>(a.target_pid), 0) != 0 && errno == ESRCH)
    return Status::error(fmt::format("-p {}: no such process", a.target_pid));
  return Status::ok();
}

// The session's options: the program's pragmas, then the session-only -x
// flags, then the values the plan parsed.  -x quiet sets *quiet.
bool apply_options(const tbdvm::CompileResult& r, const std::vector<std::string>& session_x,
                   const std::shared_ptr<const OptionValues>& planned_x, bool kernel, tbdvm::Options* o, bool* quiet) {
  auto apply = [&](const std::string& k, const std::string& v) -> bool {
    if (k == "quiet") {
      *quiet = true;
      return true;
    }
    tbdvm::Error e = tbdvm::set_option(o, k, v);
    if (!e.ok()) std::fprintf(stderr, "tracebench dvm: %s\n", e.message.c_str());
    return e.ok();
  };
  for (const auto& [k, v] : r.options)
    if (!apply(k, v)) return false;
  for (const auto& x : session_x) {
    auto eq = x.find('=');
    if (!apply(x.substr(0, eq), eq == std::string::npos ? "" : x.substr(eq + 1))) return false;
  }
  if (planned_x)
    for (const auto& spec : make_tracer(kernel ? "dvm_kernel" : "dvm")->option_schema())
      if (planned_x->given(spec.name) && !apply(spec.name, planned_x->text(spec.name))) return false;
  return true;
}

// The workload fired in chunks, so that an exit() action or Ctrl-C stops it early.
void fire_workload(const DvmArgs& a, WorkloadState* state, const tbdvm::Session& session) {
  std::uint64_t left = static_cast<std::uint64_t>(a.events);
  while (left > 0 && !session.exited() && !g_interrupted) {
    std::uint64_t n = left < kChunk ? left : kChunk;
    state->fire(n);
    left -= n;
  }
}

// -c/-p: lets the held command run, then waits until the process exits (or
// exit(), or a signal), and says how it ended.
void trace_process(const DvmArgs& a, Child* child, const tbdvm::Session& session, bool quiet) {
  const pid_t pid = child->pid > 0 ? child->pid : static_cast<pid_t>(a.target_pid);
  if (child->go_fd >= 0) {
    char go = 1;
    if (write(child->go_fd, &go, 1) != 1) std::fprintf(stderr, "tracebench dvm: -c: the command did not start\n");
    close(child->go_fd);
    child->go_fd = -1;
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  while (!session.exited() && !g_interrupted) {
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) break;
    } else if (kill(pid, 0) != 0 && errno == ESRCH) {
      break;
    } else {
      usleep(100000);
    }
  }
  if (pidfd >= 0) close(pidfd);
  int status = 0;
  if (child->pid > 0 && waitpid(child->pid, &status, g_interrupted || session.exited() ? WNOHANG : 0) == child->pid) {
    child->pid = -1;
    if (!quiet)
      std::fprintf(stderr, "dvm: pid %d %s %d\n", static_cast<int>(pid),
                   WIFEXITED(status) ? "exited with status" : "killed by signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  } else if (child->pid > 0) {
    // Stopped by exit() or a signal first: released, as dtrace does, not waited for.
    if (!quiet) std::fprintf(stderr, "dvm: pid %d released, still running\n", static_cast<int>(pid));
    child->pid = -1;
  } else if (a.target_pid >= 0 && !quiet && kill(pid, 0) != 0) {
    std::fprintf(stderr, "dvm: pid %d has exited\n", static_cast<int>(pid));
  }
}

// Firings, errors and drops (always when there were errors or drops), the
// stage timing when the module took it, and each fault's count.
void print_counters(const tbdvm::Counters& c, bool quiet) {
  if (quiet && !c.errors && !c.drops && !c.agg_drops) return;
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
    for (const auto& p : c.stages.providers) {
      const double m = static_cast<double>(p.firings);
      std::fprintf(stderr, "dvm:   %-15s %10llu firings: provider entry %.0f, VM %.0f\n", p.name.c_str(),
                   static_cast<unsigned long long>(p.firings), p.entry_cycles / m - floor, p.vm_cycles / m - floor);
    }
  }
  for (uint32_t f = 1; f < tbdvm::kFaultCount; f++)
    if (c.faults[f])
      std::fprintf(stderr, "dvm: %llu error%s: %s\n", static_cast<unsigned long long>(c.faults[f]),
                   c.faults[f] == 1 ? "" : "s", tbdvm::fault_name(f));
}

// What is refused before anything is spawned, compiled or attached, after
// the flags every mode shares (check_flags): the program, the process flags
// and the planned request.  False when refused (said).
bool check_request(const DvmArgs& a, std::string* src, std::string* origin, std::vector<std::string>* session_x,
                   std::shared_ptr<const OptionValues>* planned_x) {
  Status st = read_program(a, src, origin);
  if (st) st = check_process_flags(a);
  if (st) st = plan_request(a, session_x, planned_x);
  if (!st) std::fprintf(stderr, "tracebench dvm: %s\n", st.message().c_str());
  return st.is_ok();
}

// The numbers, -o and -w, refused in every mode (-l too).
bool check_flags(const DvmArgs& a) {
  if (!check_numbers(a) || !check_output_path(a)) return false;
  if (a.destructive)
    std::fprintf(stderr,
                 "tracebench dvm: -w is dtrace's 'permit destructive actions'; the D-VM has no destructive actions. "
                 "The workload that fires the probes is --workload NAME\n");
  return !a.destructive;
}

// Spawns the -c command held (unless -e), and compiles the program with
// $target set.  A result without a program on failure (said).
tbdvm::CompileResult compile(const DvmArgs& a, const std::string& src, const std::string& origin, Child* child) {
  tbdvm::CompileOptions copts;
  copts.args.push_back(a.file.empty() ? "tracebench" : a.file);
  copts.args.insert(copts.args.end(), a.macro_args.begin(), a.macro_args.end());
  if (!a.command.empty() && !a.exit_after_compile) {
    std::string err;
    if (!spawn_held(a.command, child, &err)) {
      std::fprintf(stderr, "tracebench dvm: %s\n", err.c_str());
      return {};
    }
    copts.target = child->pid;
  } else if (!a.command.empty()) {
    copts.target = 0;  // -e: compiled, never run
  }
  if (a.target_pid >= 0) copts.target = static_cast<pid_t>(a.target_pid);
  tbdvm::CompileResult r = tbdvm::compile_d(src, copts);
  if (!r.program) std::fprintf(stderr, "tracebench dvm: %s: %s\n", origin.c_str(), r.error.c_str());
  return r;
}

// The workload this process fires (none with -c/-p), set up.  Exit status 1
// when its setup fails (said), else 0.
int setup_workload(const DvmArgs& a, std::unique_ptr<WorkloadState>* state) {
  if (traces_other(a)) return 0;
  const Workload* w = find_workload(a.workload);  // the plan found it
  WorkloadParams wp;
  wp.payload_bytes = static_cast<std::size_t>(a.payload);
  if (Status st = w->setup(wp, state); !st) {
    std::fprintf(stderr, "tracebench dvm: workload %s: %s\n", w->name.c_str(), st.message().c_str());
    return 1;
  }
  return 0;
}

// Enabled: fires the workload or traces the process until done, exit() or
// a signal, then prints the aggregations and counters.  Like dtrace, the
// first SIGINT/SIGTERM ends the firing and the aggregations are still
// printed; a second one kills (SA_RESETHAND).
void run_session(const DvmArgs& a, tbdvm::Session* session, WorkloadState* state, Child* child, std::FILE* out,
                 bool quiet) {
  if (!quiet)
    std::fprintf(stderr, "dvm: matched %zu probe%s, %zu ECB%s\n", session->matched_probes().size(),
                 session->matched_probes().size() == 1 ? "" : "s", session->necbs(), session->necbs() == 1 ? "" : "s");
  session->start_consumer(out);
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = [](int) { g_interrupted = 1; };
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  g_interrupted = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  if (state)
    fire_workload(a, state, *session);
  else
    trace_process(a, child, *session, quiet);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  session->disable();
  std::fflush(out);
  session->print_aggregations(out);
  print_counters(session->counters(), quiet);
}

int run_dvm(const DvmArgs& a) {
  if (!check_flags(a)) return 2;
  if (a.list) return list_probes(a);
  std::string src, origin;
  std::vector<std::string> session_x;
  std::shared_ptr<const OptionValues> planned_x;
  if (!check_request(a, &src, &origin, &session_x, &planned_x)) return 2;
  Child child;
  tbdvm::CompileResult r = compile(a, src, origin, &child);
  if (!r.program) return 2;
  if (a.print_dif) std::fputs(tbdvm::disassemble(*r.program).c_str(), stdout);
  if (a.exit_after_compile) return 0;
  tbdvm::Options o;
  o.kernel = a.kernel;
  if (child.pid > 0) {
    o.target_pid = child.pid;
    o.target_exe = child.exe;
  } else if (a.target_pid > 0) {
    o.target_pid = static_cast<pid_t>(a.target_pid);
  }
  bool quiet = a.quiet;
  if (!apply_options(r, session_x, planned_x, a.kernel, &o, &quiet)) return 2;
  std::unique_ptr<WorkloadState> state;
  if (int failed = setup_workload(a, &state)) return failed;
  // Attaching: one such command per machine (tracebench/machine_lock.h).
  MachineLock lock;
  LockRequest req;
  Status locked = a.lock.request(&req);
  if (locked) locked = lock.acquire(req, "tracebench dvm");
  if (!locked) {
    std::fprintf(stderr, "%s\n", locked.message().c_str());
    return 2;
  }
  tbdvm::Session session(o);
  if (tbdvm::Error e = session.enable(r.program); !e.ok()) {
    std::fprintf(stderr, "tracebench dvm: %s\n", e.message.c_str());
    return 1;
  }
  // -o: the traced data goes there (appended, as dtrace does); messages stay
  // on stderr.  Opened once the session is enabled: a refused program leaves
  // no file behind.
  AppendOutput outfile;
  if (std::string err; !a.output.empty() && !outfile.open(a.output, &err)) {
    std::fprintf(stderr, "tracebench dvm: %s\n", err.c_str());
    return 2;
  }
  run_session(a, &session, state.get(), &child, outfile.file() ? outfile.file() : stdout, quiet);
  if (std::string err; !outfile.commit(&err)) {
    std::fprintf(stderr, "tracebench dvm: %s (the file is as it was before)\n", err.c_str());
    return 1;
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
  sub->add_option("-x", args->xopts, "D-VM option name=value (bufsize, aggsize, switchrate, aggrate, nslots, ...)");
  sub->add_option("-o", args->output, "Append the traced data (records, aggregations) to this file");
  sub->add_option("-c", args->command,
                  "Run this command and trace until it exits; $target is its pid (kernel home: --kernel)");
  sub->add_option("-p", args->target_pid, "Trace until process PID exits; $target is PID (kernel home: --kernel)");
  add_lock_flags(sub, &args->lock);
  sub->add_option("macro_args", args->macro_args, "Macro arguments: $1, $2, ... in the program ($$1 as a string)");
  sub->positionals_at_end();
  sub->callback([args, sub, exit_status] {
    args->workload_given = sub->count("--workload") > 0;
    *exit_status = run_dvm(*args);
  });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(dvm, tracebench::Command{"dvm", tracebench::install});
