// The cost model's fit (fit.cc) in parts that share these types: the
// observations grouped per entry (fit_observations.cc), the small statistics
// (fit_stats.cc), the commands a missing term names (fit_hints.cc), the
// passes of a consumer on its own timer (fit_passes.cc) and the consumer
// terms (fit_consumer.cc).  Internal to harness/model/: nothing outside the
// model needs them.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tracebench/model.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench::model::fit_detail {

// tracer, probe kind, action, configuration (options as "k=v,k=v")
using Key = std::tuple<std::string, std::string, std::string, std::string>;

// One benchmark's consumer figure (one thread, one handler).
struct ConsumerPoint {
  double cycles_per_record = 0;
  double records = 1;  // what the figure is over
  double payload_bytes = 0;
  double wakeups_per_record = -1;          // -1: not counted
  double enables_per_record = -1;          // -1: not counted (results written before it)
  double user_ticks = 0, split_ticks = 0;  // pooled over benchmarks for the user/kernel split
  double overhead_cycles = 0;              // the benchmark's overhead per event (median over repetitions)
  std::string config;                      // its configuration, wakeup knobs included
  bool wakes_on_timer = false;             // the probe causes none of the consumer's wakeups
};

// A benchmark run with a sleep before each sample (`run --gap-us`, one
// thread, one handler): its repetitions' overheads per event, each sample
// being `batch` events of which the first follows the gap.
struct IdleRun {
  std::uint64_t payload_bytes = 0;
  double batch = 1;  // events per sample (a profile probe's: its ops' timer firings)
  std::uint64_t gap_us = 0;
  std::vector<double> overhead;  // per repetition, cycles per event
};
// Its consumer figure: cycles per record, and of its wakeups per record
// those that found the consumer asleep (at most one per sample).
struct IdleConsumerPoint {
  ConsumerPoint point;  // wakeups_per_record: the others (warm)
  double idle_wakeups_per_record = 0;
};

struct Observations {
  std::map<std::uint64_t, std::vector<double>> by_payload;  // one thread, one handler
  std::map<int, std::vector<double>> by_threads;            // payload 0, > 1 thread, one handler
  // Payload 0, one thread, N > 1 handlers: the extra ones doing the action
  // too, or carrying a predicate that never holds.
  std::map<int, std::vector<double>> by_handlers[2];  // [0] predicate false, [1] true
  std::set<std::string> workloads;
  bool carries_payload = false;
  std::map<std::string, std::string> options;
  Key consumer_pool;                // where its consumer figures go
  std::vector<double> own_wakeups;  // wakeups per record of its one-handler, one-thread benchmarks
  std::vector<IdleRun> idle_runs;   // after an idle gap: apart from everything above
  std::vector<IdleConsumerPoint> idle_consumer;
  // The handler sweep's consumer figures whose extra handlers' predicates
  // fail (they record nothing), with the handlers of each.
  std::vector<std::pair<ConsumerPoint, int>> handler_consumer;
  // The options its adapter says were in effect (details().options; a value
  // that is not a string as JSON): a default an action implies shows here,
  // not in `options` (eBPF's empty program turns the kernel's run stats on).
  std::map<std::string, std::set<std::string>> effective;
};

// What one pass of a consumer on its own timer costs (the D-VM's, at its
// switchrate), measured where it has nothing to read: the tracer's `count`
// runs (the counts stay in the tracer's aggregations).  Two figures, as a
// pass costs what the CPUs it reaches are doing:
// - `hot`, from the hot count runs: their consumer cycles per record
//   regressed on wakeups per record, and on enable/disable cycles per record
//   where they vary (what stopping the tracer costs the caller, e.g. lifting
//   uprobes in the module, is not a pass).  What a pass costs while the
//   firing CPU is busy in a hot loop, and so what the hot runs of the other
//   actions carry per pass (fit_consumer takes it off them).  In a hot loop
//   that records, the wakeups per record hardly vary, so a fit of pass and
//   record from those runs alone cannot tell them apart.
// - `idle`, from the count runs after an idle gap (`run --gap-us`): the
//   consumer thread's cycles per pass while the firing CPU mostly sleeps, as
//   in a paced workload.  A pass that reaches every CPU (the module's: an
//   ioctl and a cross-CPU call per CPU) costs a guest under TCG several
//   times as much when it meets a vCPU busy in a hot loop; the paced
//   workloads a prediction is for are this case (idle_pass_cost: what the
//   thread spends per enable cycle told apart where the runs vary it).
// A prediction uses `idle` where its interval excludes zero, else `hot` where
// its interval does; the hot figures lose `hot` where fitted (its point
// estimate: a figure of theirs, not a prediction's), else `idle`.  Per tracer and
// configuration (the wakeup knobs aside): under TCG a pass of the module's
// D-VM costs half again as much with the syscall probe placed as a kprobe.
using PassKey = std::pair<std::string, std::string>;  // tracer, configuration less the wakeup knobs
struct PassCost {
  Param hot, idle;
  std::size_t hot_figures = 0, idle_figures = 0;
  bool hot_bounded() const { return hot.ok() && hot.ci_low > 0; }
  // The figure a prediction uses: a pass on an idle CPU where measured.
  const Param& used() const { return idle.ok() ? idle : hot; }
  // What the hot figures lose per pass: a hot pass where fitted and above
  // zero (else an idle one, the hot passes' excess over it then in the
  // other terms).
  const Param& off_hot() const { return hot.ok() && *hot.cycles > 0 ? hot : idle; }
  bool ok() const { return idle.ok() || hot_bounded(); }
};
// A count run after an idle gap: the consumer thread's cycles per pass, and
// enable/disable cycles per pass (-1: not counted).
struct IdlePass {
  double cycles_per_pass = 0, enables_per_pass = -1;
};

// --- the observations (fit_observations.cc) ---

// The runs' benchmarks grouped: observations per entry, consumer figures
// per pool (runs that differ only in the wakeup knobs), and per timer
// consumer's configuration its `count` runs after an idle gap.
struct Observed {
  std::map<Key, Observations> obs;
  std::map<Key, std::vector<ConsumerPoint>> pools;
  std::map<PassKey, std::vector<IdlePass>> idle_passes;
};
Observed observe_runs(const std::vector<RunResult>& runs);
// The options that set how often a tracer's consumer is woken (and, for a
// reader the producer does not wake, how often its timer does), as the
// tracer describes them (ModelDescription::wakeup_knobs): runs that differ
// only in them are pooled for the consumer fit and the probe's per-wakeup
// term, their wakeups per record being what tells the per-wakeup cost from
// the per-record one.
std::set<std::string> wakeup_knobs(const std::string& tracer);
// The configuration: the options less the handler sweep's keys (and less
// `skip`).
std::pair<std::map<std::string, std::string>, std::string> config_of(const BenchmarkResult& b,
                                                                     const std::set<std::string>& skip = {});
// One model is for one machine, kernel and TSC rate, host or emulated.
Status same_machine(const std::vector<RunResult>& runs);
// The handlers a benchmark enabled on its probe point: what the tracer
// reports (details.ecbs), else the option, else one.
int handlers_of(const BenchmarkResult& b);
// Whether a benchmark's extra handlers' predicates hold: as the tracer
// reports it, else the option (default: they hold).
bool extra_predicate_holds(const BenchmarkResult& b);

// --- the small statistics (fit_stats.cc) ---

// The median of v.
double median_of(std::vector<double> v);
struct Line {
  double intercept = 0, slope = 0;
};

// The means of two series and their sums of centred products.
struct Moments {
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
};
Moments moments(const std::vector<double>& x, const std::vector<double>& y);
// Least squares through (x, y); needs two distinct x.
Line least_squares(const std::vector<double>& x, const std::vector<double>& y);
// Pearson's correlation of two series (0 where either is flat).
double correlation(const std::vector<double>& a, const std::vector<double>& b);
// A resample of v with replacement, of v's size.
std::vector<double> resample(const std::vector<double>& v, std::mt19937_64& rng);
// The 2.5th and 97.5th percentiles of the draws as p's interval.
void interval(std::vector<double> draws, Param* p);
// The median of v, its interval a bootstrap of v; the draws in `draws`.
Param median_param(const std::vector<double>& v, int bootstrap, std::mt19937_64& rng,
                   std::vector<double>* draws = nullptr);
// Least squares y = X b (k <= 3 columns) by the normal equations; false
// when the columns are (nearly) dependent.
bool solve_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                         std::vector<double>* b);
// Least squares over rows with a bootstrap over the rows (a resample whose
// columns cannot be told apart, one payload size drawn say, is skipped).
struct RowFit {
  std::vector<double> b;
  std::vector<std::vector<double>> draws;  // per column
  double r2 = 0, worst_residual = 0;
};
// Rows weighted by `scale` where given (each row and its y times its scale).
bool fit_rows(const std::vector<std::vector<double>>& x, const std::vector<double>& y, int bootstrap,
              std::mt19937_64& rng, RowFit* f, const std::vector<double>& scale = {});

// --- the commands a term that was not measured names (fit_hints.cc) ---

// The command that measures an entry: its tracer, the workloads it was
// fitted from, its action and configuration (a hint adds the knob it lacks).
std::string run_command(const Entry& e);
// Whether any workload of the entry takes a payload (`run` refuses payload
// sizes other than 0 for workloads that take none).
bool takes_payload(const Entry& e);
// Why the entry has no per_ecb (`predicate`) or false_predicate term, and
// the handler-count sweep that would measure it where one applies.
std::string handler_sweep_missing(const Entry& e, bool predicate);
// The runs that would vary a tracer's consumer wakeups (its model description's hint).
std::string wakeup_hint(const std::string& tracer);

// --- the consumer's passes on its own timer (fit_passes.cc) ---

// Per tracer and configuration less the wakeup knobs: a pass's cost from the
// hot `count` runs' consumer figures (`pools`) and from the `count` runs
// after an idle gap (`idle_passes`); only those with a usable figure.
std::map<PassKey, PassCost> timer_pass_costs(const std::map<Key, std::vector<ConsumerPoint>>& pools,
                                             const std::map<PassKey, std::vector<IdlePass>>& idle_passes, int bootstrap,
                                             std::mt19937_64& rng);

// --- the consumer terms (fit_consumer.cc) ---

// The consumer terms of one entry.  `pass`: the tracer's consumer wakes on
// its own timer and what a pass costs is known (timer_pass_costs); the
// other terms are then fitted to what the passes leave.
void fit_consumer(const Observations& o, const std::vector<ConsumerPoint>& pts, const std::string& run_cmd,
                  const PassCost* pass, int bootstrap, std::mt19937_64& rng, Entry* e);
// The probe's own cost per consumer wakeup: the benchmarks' overhead per
// event regressed on payload bytes and wakeups per record, pooled like the
// consumer's figures (runs that differ only in the wakeup knob).
void fit_probe_wakeup(const Observations& o, const std::vector<ConsumerPoint>& pts, int bootstrap, std::mt19937_64& rng,
                      Entry* e);

}  // namespace tracebench::model::fit_detail
