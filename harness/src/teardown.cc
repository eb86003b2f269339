// Signals and emergency teardown: the tracers attached right now are torn
// down on SIGINT/SIGTERM/SIGHUP (after the current block, or by the watcher
// if the run does not progress) and on an uncaught exception; what adapters
// keep until exit is released then too, and at a normal exit.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "run_state.h"
#include "tracebench/runner.h"
#include "tracebench/tracer.h"

namespace tracebench {

std::atomic<bool> g_stop_requested{false};

// ---------------------------------------------------------------------------
// Emergency teardown: the tracers attached right now.

std::recursive_mutex g_active_mu;
std::atomic<std::uint64_t> g_progress{0};

namespace {
std::set<Tracer*>& active_tracers() {
  static std::set<Tracer*> s;
  return s;
}
}  // namespace

ActiveTracer::ActiveTracer(Tracer* t) : tracer_(t) {
  std::lock_guard<std::recursive_mutex> lock(g_active_mu);
  active_tracers().insert(t);
}

ActiveTracer::~ActiveTracer() {
  std::lock_guard<std::recursive_mutex> lock(g_active_mu);
  active_tracers().erase(tracer_);
}

// ---------------------------------------------------------------------------
// What adapters keep from one benchmark to the next.

namespace {
std::mutex g_kept_mu;
std::vector<void (*)()>& kept() {
  static std::vector<void (*)()> v;
  return v;
}
}  // namespace

void keep_until_exit(void (*release)()) {
  std::lock_guard<std::mutex> lock(g_kept_mu);
  for (auto* f : kept()) {
    if (f == release) return;
  }
  if (kept().empty()) std::atexit([] { (void)release_kept_until_exit(); });
  kept().push_back(release);
}

std::size_t release_kept_until_exit() {
  std::vector<void (*)()> fns;
  {
    std::lock_guard<std::mutex> lock(g_kept_mu);
    fns = kept();  // registered again if they keep something again
  }
  for (auto it = fns.rbegin(); it != fns.rend(); ++it) (*it)();
  return fns.size();
}

namespace {
std::mutex g_kept_results_mu;
std::string g_kept_dir;
std::size_t g_kept_benchmarks = 0;
}  // namespace

void note_results_kept(const std::string& dir, std::size_t benchmarks) {
  std::lock_guard<std::mutex> lock(g_kept_results_mu);
  g_kept_dir = dir;
  g_kept_benchmarks = benchmarks;
}

void note_results_lost() {
  std::lock_guard<std::mutex> lock(g_kept_results_mu);
  g_kept_dir.clear();
  g_kept_benchmarks = 0;
}

std::string kept_results_text() {
  // From the terminate handler too: never wait on a lock the failing thread may hold.
  std::unique_lock<std::mutex> lock(g_kept_results_mu, std::try_to_lock);
  if (!lock.owns_lock()) return "what was written is in the run's directory, if any";
  if (g_kept_dir.empty()) return "no result file was written";
  if (g_kept_benchmarks == 0) return "no benchmark had finished: " + g_kept_dir + "/result.json holds none";
  return fmt::format("the results of {} finished benchmark(s) are kept in {}/result.json", g_kept_benchmarks,
                     g_kept_dir);
}

void install_signal_watcher() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    sigwait(&set, &sig);
    g_stop_requested = true;
    std::fprintf(stderr, "\ntracebench: %s received, stopping after the current block\n", strsignal(sig));
    // Wait for the run to unwind; if it does not progress, tear down here.
    std::uint64_t seen = g_progress.load();
    for (int i = 0; i < 50; ++i) {
      timespec ts{0, 100 * 1000 * 1000};
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM)) break;  // second signal
      nanosleep(&ts, nullptr);
      if (i == 49 && g_progress.load() != seen) {
        seen = g_progress.load();
        i = 0;
      }
    }
    std::fprintf(stderr, "tracebench: tore down %zu tracer(s), exiting\n", teardown_active_tracers());
    (void)release_kept_until_exit();
    _exit(130);
  }).detach();
  // An exception nobody catches (a library's, a bug of ours) must not leave
  // instances, probes or links behind either.
  std::set_terminate([] {
    std::string what = "unknown";
    if (auto e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) { what = x.what(); } catch (...) {
      }
    }
    std::fprintf(stderr, "tracebench: uncaught exception (%s); tearing down\n", what.c_str());
    const std::size_t n = teardown_active_tracers();
    std::fprintf(stderr, "tracebench: tore down %zu tracer(s); %s\n", n, kept_results_text().c_str());
    (void)release_kept_until_exit();
    _exit(70);  // EX_SOFTWARE
  });
}

std::size_t teardown_active_tracers() {
  // The run may be tearing a tracer down right now: wait for it (up to 20 s;
  // a teardown stuck in the kernel longer than that is left to `cleanup`).
  std::unique_lock<std::recursive_mutex> lock(g_active_mu, std::try_to_lock);
  for (int i = 0; i < 2000 && !lock.owns_lock(); ++i) {
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
    lock.try_lock();
  }
  if (!lock.owns_lock()) return 0;
  std::size_t n = active_tracers().size();
  for (Tracer* t : active_tracers()) t->teardown();
  return n;
}

}  // namespace tracebench
