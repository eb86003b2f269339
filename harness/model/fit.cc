// `tracebench model fit`: the parameters of eq. 4 from result files.  Each
// observation is one repetition's overhead (traced - baseline median, cycles
// per event) of a benchmark that has a figure; the parameters come from the
// runs that vary one knob: payload bytes (fixed + per_byte, a least-squares
// line through the per-size medians), threads (contention over one thread),
// handlers (per_ecb, false_predicate).  The consumer terms come from the
// benchmarks' consumer CPU: cycles per record regressed on payload bytes and
// wakeups per record.  Intervals: percentile bootstrap over the repetitions
// (over the benchmarks for the consumer terms), fixed seed.
//
// Longer than the suite's 600 lines: every term's fit reads the same
// observation tables and bootstrap helpers defined here; split by term
// (payload, handlers, consumer, idle) once those helpers have a header.
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tracebench/handler_count.h"
#include "tracebench/model.h"
#include "tracebench/options.h"
#include "tracebench/run_request.h"
#include "tracebench/tracer.h"
#include "tracebench/stats.h"
#include "tracebench/workload.h"

namespace tracebench::model {
namespace {

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

// The options that set how often a tracer's consumer is woken (and, for a
// reader the producer does not wake, how often its timer does), as the
// tracer describes them (ModelDescription::wakeup_knobs): runs that differ
// only in them are pooled for the consumer fit and the probe's per-wakeup
// term, their wakeups per record being what tells the per-wakeup cost from
// the per-record one.
std::set<std::string> wakeup_knobs(const std::string& tracer) { return model_description(tracer).wakeup_knobs; }

// The configuration: the options less the handler sweep's keys (and less
// `skip`).
std::pair<std::map<std::string, std::string>, std::string> config_of(const BenchmarkResult& b,
                                                                     const std::set<std::string>& skip = {}) {
  std::map<std::string, std::string> o;
  std::string text;
  for (const auto& [k, v] : b.options) {
    if (k == kEcbsOption || k == kExtraPredicateOption || skip.count(k)) continue;
    o[k] = v;
    text += (text.empty() ? "" : ",") + k + "=" + v;
  }
  return {o, text};
}

double median_of(std::vector<double> v) { return summarize(std::move(v)).p50; }

struct Line {
  double intercept = 0, slope = 0;
};

// The means of two series and their sums of centred products.
struct Moments {
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
};
Moments moments(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  Moments m;
  for (std::size_t i = 0; i < x.size(); ++i) {
    m.mx += x[i] / n;
    m.my += y[i] / n;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    m.sxy += (x[i] - m.mx) * (y[i] - m.my);
    m.sxx += (x[i] - m.mx) * (x[i] - m.mx);
    m.syy += (y[i] - m.my) * (y[i] - m.my);
  }
  return m;
}

// Least squares through (x, y); needs two distinct x.
Line least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  const Moments m = moments(x, y);
  Line l;
  l.slope = m.sxx > 0 ? m.sxy / m.sxx : 0;
  l.intercept = m.my - l.slope * m.mx;
  return l;
}

// Pearson's correlation of two series (0 where either is flat).
double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const Moments m = moments(a, b);
  return m.sxx > 0 && m.syy > 0 ? m.sxy / std::sqrt(m.sxx * m.syy) : 0.0;
}

std::vector<double> resample(const std::vector<double>& v, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
  std::vector<double> r(v.size());
  for (double& x : r) x = v[pick(rng)];
  return r;
}

// 2.5th and 97.5th percentiles.
void interval(std::vector<double> draws, Param* p) {
  std::sort(draws.begin(), draws.end());
  p->ci_low = percentile_sorted(draws, 2.5);
  p->ci_high = percentile_sorted(draws, 97.5);
}

// The median of v, its interval a bootstrap of v; the draws in `draws`.
Param median_param(const std::vector<double>& v, int bootstrap, std::mt19937_64& rng,
                   std::vector<double>* draws = nullptr) {
  Param p;
  p.cycles = median_of(v);
  p.n = v.size();
  std::vector<double> d;
  for (int b = 0; b < bootstrap; ++b) d.push_back(median_of(resample(v, rng)));
  interval(d, &p);
  if (draws) *draws = std::move(d);
  return p;
}

Status same_machine(const std::vector<RunResult>& runs) {
  const RunContext& a = runs.front().context;
  for (const auto& r : runs) {
    const RunContext& b = r.context;
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      return Status::error(
          fmt::format("model fit: one model is for one machine and kernel: run {} has {} '{}', run {} "
                      "has '{}'",
                      a.run_id, what, x, b.run_id, y));
    };
    if (b.emulated != a.emulated || b.execution != a.execution)
      return Status::error(fmt::format("model fit: refusing to mix emulated and host runs: {} ran on {}, {} on {}",
                                       a.run_id, a.execution, b.run_id, b.execution));
    if (b.concurrent)
      return Status::error(
          fmt::format("model fit: run {} was measured concurrently with another tracebench command "
                      "(context.concurrent): its figures may hold the other's probes and load; "
                      "measure it again alone",
                      b.run_id));
    if (b.host != a.host) return differ("host", a.host, b.host);
    if (b.cpu_model != a.cpu_model) return differ("CPU", a.cpu_model, b.cpu_model);
    if (b.kernel_release != a.kernel_release) return differ("kernel", a.kernel_release, b.kernel_release);
    if (!(b.tsc_hz > 0) || std::fabs(b.tsc_hz - a.tsc_hz) > 0.01 * a.tsc_hz)
      return Status::error(fmt::format("model fit: run {} has a TSC of {:.0f} Hz, run {} of {:.0f} Hz: not one machine",
                                       a.run_id, a.tsc_hz, b.run_id, b.tsc_hz));
  }
  return Status::ok();
}

// The handlers a benchmark enabled on its probe point: what the tracer
// reports (details.ecbs), else the option, else one.
int handlers_of(const BenchmarkResult& b) {
  if (b.tracer_details.contains(kEcbsOption) && b.tracer_details[kEcbsOption].is_number_integer())
    return std::max(1, b.tracer_details[kEcbsOption].get<int>());
  auto it = b.options.find(kEcbsOption);
  return it == b.options.end() ? 1 : std::max(1, std::atoi(it->second.c_str()));
}

// Whether a benchmark's extra handlers' predicates hold: as the tracer
// reports it, else the option (default: they hold).
bool extra_predicate_holds(const BenchmarkResult& b) {
  if (b.tracer_details.contains(kExtraPredicateOption) && b.tracer_details[kExtraPredicateOption].is_string())
    return b.tracer_details[kExtraPredicateOption].get<std::string>() != "false";
  auto it = b.options.find(kExtraPredicateOption);
  return it == b.options.end() || it->second != "false";
}

// The command that measures an entry: its tracer, the workloads it was
// fitted from, its action and configuration (a hint adds the knob it lacks).
std::string run_command(const Entry& e) {
  std::string cmd = fmt::format("tracebench run -t {}", e.tracer);
  for (const auto& w : e.workloads) cmd += " -w " + w;
  cmd += " -a " + e.action;
  for (const auto& [key, v] : e.options) cmd += fmt::format(" -o {}.{}={}", e.tracer, key, v);
  return cmd;
}

// Whether any workload of the entry takes a payload (`run` refuses payload
// sizes other than 0 for workloads that take none).
bool takes_payload(const Entry& e) {
  for (const auto& name : e.workloads)
    if (const Workload* w = find_workload(name); w && w->takes_payload) return true;
  return false;
}

// The entry's configuration with `extra` options at payload 0, planned as
// `run` plans it (run_request.h), on each of its workloads: a command the
// list names must run.  Where the runs were made (the VM lab) is not asked:
// availability is left out.
Status tracer_accepts(const Entry& e, const std::map<std::string, std::string>& extra) {
  if (!make_tracer(e.tracer)) return Status::ok();  // a tracer this binary lacks: it cannot tell
  std::map<std::string, std::string> options = e.options;
  for (const auto& [k, v] : extra) options[k] = v;
  std::vector<std::string> raw;
  for (const auto& [k, v] : options) raw.push_back(k + "=" + v);  // the sole tracer's
  for (const auto& name : e.workloads) {
    if (!find_workload(name)) continue;
    AttachSpec spec;
    TB_TRY(plan_single_run({e.tracer, name, e.action, 0, raw, /*availability_by_caller=*/true}, &spec));
  }
  return Status::ok();
}

std::string handler_sweep_missing(const Entry& e, bool predicate) {
  // A probe its timer fires has one handler per timer (an eBPF perf event
  // runs one program): more handlers would be more timers.
  if (e.probe_kind == "profile")
    return "a profile probe has one handler per timer: no handler-count sweep applies (more programs would be more "
           "timers)";
  // A tracer this binary knows says whether it has the handler-count option.
  if (std::unique_ptr<Tracer> t = make_tracer(e.tracer)) {
    if (!has_handler_count(t->option_schema()))
      return fmt::format("not measured for {} by this version of the suite ({} has no handler-count option)", e.tracer,
                         e.tracer);
  }
  if (Status s = tracer_accepts(e, {{kEcbsOption, "2"}}); !s)
    return "no handler-count sweep applies to this configuration: " + s.message();
  return fmt::format("no handler-count sweep in the runs: `for n in 1 2 4 10; do {} -p 0 -o {}.{}=$n{}; done`",
                     run_command(e), e.tracer, kEcbsOption,
                     predicate ? "" : fmt::format(" -o {}.{}=false", e.tracer, kExtraPredicateOption));
}

// Extra cycles per extra handler: least squares through (0, one handler) and
// (N - 1, N handlers), with its bootstrap interval.
Param per_handler(const std::vector<double>& one, const std::map<int, std::vector<double>>& by_n, int bootstrap,
                  std::mt19937_64& rng, Entry::LineQuality* quality) {
  std::vector<double> x{0}, y{median_of(one)};
  std::size_t n = one.size();
  for (const auto& [h, v] : by_n) {
    x.push_back(h - 1);
    y.push_back(median_of(v));
    n += v.size();
  }
  Param p;
  const Line line = least_squares(x, y);
  p.cycles = line.slope;
  p.n = n;
  double my = 0, ss_tot = 0, ss_res = 0;
  for (double v : y) my += v / static_cast<double>(y.size());
  quality->points = y.size();
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double r = y[i] - (line.intercept + line.slope * x[i]);
    ss_tot += (y[i] - my) * (y[i] - my);
    ss_res += r * r;
    quality->worst_residual_cycles = std::max(quality->worst_residual_cycles, std::fabs(r));
  }
  quality->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  std::vector<double> draws;
  for (int b = 0; b < bootstrap; ++b) {
    std::vector<double> yb{median_of(resample(one, rng))};
    for (const auto& [h, v] : by_n) yb.push_back(median_of(resample(v, rng)));
    draws.push_back(least_squares(x, yb).slope);
  }
  interval(draws, &p);
  return p;
}

// Least squares y = X b (k <= 3 columns) by the normal equations; false
// when the columns are (nearly) dependent.
bool solve_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                         std::vector<double>* b) {
  const std::size_t k = x.empty() ? 0 : x[0].size();
  if (k == 0 || x.size() < k) return false;
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
  for (std::size_t r = 0; r < x.size(); ++r)
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) a[i][j] += x[r][i] * x[r][j];
      a[i][k] += x[r][i] * y[r];
    }
  std::vector<double> diag(k);
  for (std::size_t i = 0; i < k; ++i) diag[i] = a[i][i];
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    // Relative to the column's own scale: a column that is a combination of
    // the others leaves (almost) nothing here.
    if (!(std::fabs(a[c][c]) > 1e-9 * std::max(diag[c], 1e-300))) return false;
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t j = c; j <= k; ++j) a[r][j] -= f * a[c][j];
    }
  }
  b->assign(k, 0);
  for (std::size_t i = 0; i < k; ++i) (*b)[i] = a[i][k] / a[i][i];
  return true;
}

std::string wakeup_hint(const std::string& tracer) {
  std::string hint = model_description(tracer).wakeup_hint;
  return hint.empty() ? "runs with another wakeup policy (this tracer has no option for one)" : hint;
}

// Least squares over rows with a bootstrap over the rows (a resample whose
// columns cannot be told apart, one payload size drawn say, is skipped).
struct RowFit {
  std::vector<double> b;
  std::vector<std::vector<double>> draws;  // per column
  double r2 = 0, worst_residual = 0;
};
bool fit_rows(const std::vector<std::vector<double>>& x, const std::vector<double>& y, int bootstrap,
              std::mt19937_64& rng, RowFit* f, const std::vector<double>& scale = {}) {
  const std::size_t k = x.empty() ? 0 : x[0].size();
  // Each row and its y times its scale (weighted least squares, weights the
  // scales squared); the quality is said unscaled.
  auto solve = [&](const std::vector<std::size_t>& pick, std::vector<double>* b) {
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    for (std::size_t i : pick) {
      const double c = scale.empty() ? 1.0 : scale[i];
      xs.push_back(x[i]);
      for (double& v : xs.back()) v *= c;
      ys.push_back(y[i] * c);
    }
    return solve_least_squares(xs, ys, b);
  };
  std::vector<std::size_t> all(x.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (x.size() < k + 1 || !solve(all, &f->b)) return false;
  double my = 0, ss_tot = 0, ss_res = 0;
  for (double v : y) my += v / static_cast<double>(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    double pred = 0;
    for (std::size_t j = 0; j < k; ++j) pred += f->b[j] * x[i][j];
    ss_tot += (y[i] - my) * (y[i] - my);
    ss_res += (y[i] - pred) * (y[i] - pred);
    f->worst_residual = std::max(f->worst_residual, std::fabs(y[i] - pred));
  }
  f->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  f->draws.assign(k, {});
  std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
  for (int it = 0; it < bootstrap; ++it) {
    std::vector<std::size_t> rows;
    std::vector<double> bb;
    for (std::size_t i = 0; i < x.size(); ++i) rows.push_back(pick(rng));
    if (!solve(rows, &bb)) continue;
    for (std::size_t j = 0; j < k; ++j) f->draws[j].push_back(bb[j]);
  }
  return true;
}

// Which columns the benchmarks of a pool can tell apart from the intercept.
struct Columns {
  bool by_byte = false, by_wakeup = false, wakeups_known = true;
  double w_lo = 1e300, w_hi = -1;
  bool by_enable = false, enables_known = true;
  double n_lo = 1e300, n_hi = -1;
};
Columns columns_of(const Observations& o, const std::vector<ConsumerPoint>& pts) {
  Columns c;
  std::set<double> payloads;
  for (const auto& p : pts) {
    payloads.insert(p.payload_bytes);
    if (p.wakeups_per_record < 0) c.wakeups_known = false;
    c.w_lo = std::min(c.w_lo, p.wakeups_per_record);
    c.w_hi = std::max(c.w_hi, p.wakeups_per_record);
    if (p.enables_per_record < 0) c.enables_known = false;
    c.n_lo = std::min(c.n_lo, p.enables_per_record);
    c.n_hi = std::max(c.n_hi, p.enables_per_record);
  }
  c.by_byte = o.carries_payload && payloads.size() >= 2;
  // Wakeups per record must vary: by half again, or from none to some.
  c.by_wakeup = c.wakeups_known && (c.w_lo > 0 ? c.w_hi >= 1.5 * c.w_lo : c.w_hi >= 0.05);
  // Enable/disable cycles per record likewise (runs with fewer samples per
  // block, `-n`, have more of them).
  c.by_enable = c.enables_known && c.n_lo > 0 && c.n_hi >= 1.5 * c.n_lo;
  return c;
}
std::vector<double> row_of(const Columns& c, const ConsumerPoint& p) {
  std::vector<double> r{1.0};
  if (c.by_byte) r.push_back(p.payload_bytes);
  if (c.by_wakeup) r.push_back(p.wakeups_per_record);
  if (c.by_enable) r.push_back(p.enables_per_record);
  return r;
}
std::string wakeups_flat(const Columns& c, const std::string& tracer, const char* where) {
  return fmt::format(
      "wakeups per record hardly vary in the runs ({:.3g} to {:.3g}), so their cost cannot be told "
      "apart (it is in {}): {}",
      c.w_lo, c.w_hi, where, wakeup_hint(tracer));
}

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
Param hot_pass_cost(const std::vector<const ConsumerPoint*>& pts, int bootstrap, std::mt19937_64& rng) {
  double w_lo = 1e300, w_hi = 0, e_lo = 1e300, e_hi = 0;
  for (const auto* p : pts) {
    w_lo = std::min(w_lo, p->wakeups_per_record);
    w_hi = std::max(w_hi, p->wakeups_per_record);
    e_lo = std::min(e_lo, p->enables_per_record);
    e_hi = std::max(e_hi, p->enables_per_record);
  }
  if (!(w_hi >= 1.5 * w_lo)) return Param::absent("the hot count runs' wakeups per record hardly vary");
  const bool by_enable = e_lo > 0 && e_hi >= 1.5 * e_lo;
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto* p : pts) {
    x.push_back(by_enable ? std::vector<double>{1.0, p->wakeups_per_record, p->enables_per_record}
                          : std::vector<double>{1.0, p->wakeups_per_record});
    y.push_back(p->cycles_per_record);
  }
  RowFit f;
  if (!fit_rows(x, y, bootstrap, rng, &f) || f.draws[1].size() < 100)
    return Param::absent("too few hot count runs to fit a pass");
  Param c;
  c.cycles = f.b[1];
  c.n = pts.size();
  interval(f.draws[1], &c);
  return c;  // its interval judged by the caller
}
// A count run after an idle gap: the consumer thread's cycles per pass, and
// enable/disable cycles per pass (-1: not counted).
struct IdlePass {
  double cycles_per_pass = 0, enables_per_pass = -1;
};
// Where the runs' enable cycles per pass vary (the suite's run with 10
// samples per block has several times the others'), the pass is the
// intercept of their cycles per pass on enables per pass: an enable cycle
// costs the thread too (with the module's syscall probe a kprobe, whose
// arming and disarming patch kernel text and can cost the thread as much as
// a hundred passes), and that cost is the per-enable term's (fitted with the
// others), not a pass's.  Else the median.
Param idle_pass_cost(const std::vector<IdlePass>& runs, int bootstrap, std::mt19937_64& rng) {
  if (runs.size() < 2) return Param::absent("fewer than two count runs after an idle gap");
  double e_lo = 1e300, e_hi = -1;
  for (const auto& r : runs) {
    e_lo = std::min(e_lo, r.enables_per_pass);
    e_hi = std::max(e_hi, r.enables_per_pass);
  }
  Param c;
  if (runs.size() >= 3 && e_lo > 0 && e_hi >= 1.5 * e_lo) {
    c.n = runs.size();
    // The bootstrap resamples the long runs and the short ones apart: a
    // resample of one kind alone would put a line through two points a
    // hair apart.
    std::vector<const IdlePass*> shape[2];
    for (const auto& r : runs) shape[r.enables_per_pass * r.enables_per_pass > e_lo * e_hi].push_back(&r);
    auto intercept = [](const std::vector<const IdlePass*>& pick, double* out) {
      std::vector<std::vector<double>> x;
      std::vector<double> y;
      for (const auto* r : pick) {
        x.push_back({1.0, r->enables_per_pass});
        y.push_back(r->cycles_per_pass);
      }
      std::vector<double> b;
      if (!solve_least_squares(x, y, &b)) return false;
      *out = b[0];
      return true;
    };
    std::vector<const IdlePass*> all;
    for (const auto& r : runs) all.push_back(&r);
    double b0 = 0;
    if (!intercept(all, &b0)) return Param::absent("the count runs after an idle gap cannot be fitted");
    c.cycles = b0;
    std::vector<double> d;
    for (int it = 0; it < bootstrap; ++it) {
      std::vector<const IdlePass*> pick;
      for (const auto& g : shape) {
        std::uniform_int_distribution<std::size_t> one(0, g.size() - 1);
        for (std::size_t i = 0; i < g.size(); ++i) pick.push_back(g[one(rng)]);
      }
      if (intercept(pick, &b0)) d.push_back(b0);
    }
    if (d.size() < 100) return Param::absent("the count runs after an idle gap are too few to bound a pass");
    interval(d, &c);
  } else {
    std::vector<double> per_pass;
    for (const auto& r : runs) per_pass.push_back(r.cycles_per_pass);
    c = median_param(per_pass, bootstrap, rng);
  }
  if (!(c.ci_low > 0)) return Param::absent("the idle count runs' pass cost is not above zero");
  return c;
}
std::map<PassKey, PassCost> timer_pass_costs(const std::map<Key, std::vector<ConsumerPoint>>& pools,
                                             const std::map<PassKey, std::vector<IdlePass>>& idle_passes, int bootstrap,
                                             std::mt19937_64& rng) {
  std::map<PassKey, std::vector<const ConsumerPoint*>> counts;
  for (const auto& [k, pts] : pools) {
    if (std::get<2>(k) != "count") continue;
    for (const auto& p : pts)
      if (p.wakes_on_timer && p.wakeups_per_record > 0) counts[{std::get<0>(k), std::get<3>(k)}].push_back(&p);
  }
  std::map<PassKey, PassCost> out;
  for (const auto& [key, pts] : counts) {
    PassCost c;
    c.hot = hot_pass_cost(pts, bootstrap, rng);
    c.hot_figures = pts.size();
    out[key] = c;
  }
  for (const auto& [key, per_pass] : idle_passes) {
    out[key].idle = idle_pass_cost(per_pass, bootstrap, rng);
    out[key].idle_figures = per_pass.size();
  }
  for (auto it = out.begin(); it != out.end();) it = it->second.ok() ? std::next(it) : out.erase(it);
  return out;
}

// A figure's consumer cycles per record beyond what the fit gives for its
// records, bytes, wakeups and enable cycles (`row`), per unit of what the fit
// leaves out (`units` per record): e.g. idle wakeups, or extra handlers'
// enable cycles.
struct Excess {
  std::vector<double> row;
  double cycles_per_record = 0, units = 0;
};
// Their excess per unit over the figures, with an interval from the fit's
// bootstrap draws and a resample of the figures.  kMedian: the median of each
// figure's excess per unit, for figures of alike units (robust to one odd
// run); kSlope: the least-squares slope of excess on units through the
// origin, for units that differ (figures with many units weigh more: a few
// units per record magnify a figure's noise).  `what` names the unit in the
// reason it is not used: an interval not above zero.
enum class Pooling { kMedian, kSlope };
Param excess_per_unit(const std::vector<Excess>& pts, const RowFit& f, Pooling pooling, const char* what, int bootstrap,
                      std::mt19937_64& rng) {
  auto estimate = [&](const std::vector<double>& b, const std::vector<std::size_t>& pick) {
    std::vector<double> per;
    double xy = 0, xx = 0;
    for (std::size_t i : pick) {
      double fitted = 0;
      for (std::size_t j = 0; j < b.size(); ++j) fitted += b[j] * pts[i].row[j];
      const double excess = pts[i].cycles_per_record - fitted;
      per.push_back(excess / pts[i].units);
      xy += excess * pts[i].units;
      xx += pts[i].units * pts[i].units;
    }
    return pooling == Pooling::kMedian ? median_of(per) : xy / xx;
  };
  std::vector<std::size_t> all(pts.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  Param p;
  p.cycles = estimate(f.b, all);
  p.n = pts.size();
  const std::size_t draws = f.draws.empty() ? 0 : f.draws[0].size();
  if (draws < 100) return Param::absent("the consumer fit's bootstrap is too thin to bound it");
  std::uniform_int_distribution<std::size_t> pick_draw(0, draws - 1), pick_run(0, pts.size() - 1);
  std::vector<double> d;
  for (int it = 0; it < bootstrap; ++it) {
    const std::size_t k = pick_draw(rng);
    std::vector<double> b;
    for (const auto& col : f.draws) b.push_back(col[k]);
    std::vector<std::size_t> runs;
    for (std::size_t i = 0; i < pts.size(); ++i) runs.push_back(pick_run(rng));
    d.push_back(estimate(b, runs));
  }
  interval(d, &p);
  if (!(p.ci_low > 0))
    return Param::absent(
        fmt::format("{:.0f} cycles per {} over the fitted terms, 95% interval [{:.0f}, {:.0f}]: not "
                    "above them; not used",
                    *p.cycles, what, p.ci_low, p.ci_high));
  return p;
}

// What waking a consumer asleep on an idle CPU costs it: of each run after an
// idle gap, its cycles per record (its tasks' time in the traced blocks)
// less what the fit gives for its records, bytes and other (warm) wakeups,
// per idle wakeup.
Param idle_wakeup_cost(const std::vector<IdleConsumerPoint>& idle, const Columns& cols, const RowFit& f, int bootstrap,
                       std::mt19937_64& rng) {
  std::vector<Excess> pts;
  for (const auto& p : idle)
    pts.push_back({row_of(cols, p.point), p.point.cycles_per_record, p.idle_wakeups_per_record});
  return excess_per_unit(pts, f, Pooling::kMedian, "idle wakeup", bootstrap, rng);
}

// What an enable/disable cycle costs the consumer per extra handler (an
// ftrace instance's event enabled and disabled, an LTTng event rule): of each
// run of the handler sweep whose extra predicates fail, so that the extra
// handlers record nothing, its cycles per record less what the fit gives for
// one handler's (its records, wakeups and enable cycles), per extra handler
// per enable cycle.  `off_pass`: a pass's cycles, for a consumer on its own
// timer (its figures fitted less them).
Param handler_enable_cost(const std::vector<std::pair<ConsumerPoint, int>>& sweep, const Columns& cols, const RowFit& f,
                          double off_pass, const std::string& missing_sweep, int bootstrap, std::mt19937_64& rng) {
  if (sweep.empty()) return Param::absent(missing_sweep);
  std::vector<Excess> pts;
  for (const auto& [p, handlers] : sweep) {
    if (p.enables_per_record <= 0) continue;
    pts.push_back({row_of(cols, p), p.cycles_per_record - off_pass * std::max(0.0, p.wakeups_per_record),
                   (handlers - 1) * p.enables_per_record});
  }
  if (pts.empty())
    return Param::absent(
        "the handler sweep's runs predate the count of enable/disable cycles: their consumer "
        "figures cannot be put per cycle");
  // The sweep's runs have 1 to 9 extra handlers: their units differ ninefold.
  return excess_per_unit(pts, f, Pooling::kSlope, "extra handler per enable cycle", bootstrap, rng);
}

// The consumer terms of one entry.  `pass`: the tracer's consumer wakes on
// its own timer and what a pass costs is known (timer_pass_costs); the
// other terms are then fitted to what the passes leave.
void fit_consumer(const Observations& o, const std::vector<ConsumerPoint>& pts, const std::string& run_cmd,
                  const PassCost* pass, int bootstrap, std::mt19937_64& rng, Entry* e) {
  e->consumer_per_idle_wakeup = Param::absent(
      o.idle_consumer.empty()
          ? fmt::format("no run after an idle gap whose consumer was woken by its records: `{} -p 0{} --gap-us "
                        "1000`",
                        run_cmd, takes_payload(*e) ? " -p 256" : "")
          : std::string("no consumer fit to set the runs after an idle gap against"));
  const std::string no_sweep =
      o.by_handlers[0].empty()
          ? handler_sweep_missing(*e, false)
          : std::string("the handler sweep's runs whose extra predicates fail have no consumer figure");
  e->consumer_per_enable_ecb = Param::absent(
      o.handler_consumer.empty() ? no_sweep : "no consumer fit to set the handler sweep's consumer figures against");
  if (pts.empty()) {
    // With one-thread runs of this very configuration in hand, running them
    // again would measure nothing more: the action has no consumer.
    const std::string why =
        o.by_payload.empty()
            ? fmt::format("no consumer figure in the runs (a consumer is measured at one thread): `{} -j 1`", run_cmd)
            : fmt::format(
                  "no consumer figure in the runs: {} {} keeps nothing for a consumer to read, so this "
                  "configuration has no consumer term (a recording action of {} has one: `tracebench list`; "
                  "runs written before tracebench measured consumers have none either)",
                  e->tracer, e->action, e->tracer);
    e->consumer_per_record = e->consumer_per_record_byte = e->consumer_per_wakeup = e->consumer_per_enable =
        Param::absent(why);
    if (!o.by_payload.empty() && o.idle_consumer.empty()) e->consumer_per_idle_wakeup = Param::absent(why);
    if (!o.by_payload.empty() && o.handler_consumer.empty()) e->consumer_per_enable_ecb = Param::absent(why);
    return;
  }
  Columns cols = columns_of(o, pts);
  const bool on_timer = pass && cols.wakeups_known &&
                        std::all_of(pts.begin(), pts.end(), [](const ConsumerPoint& p) { return p.wakes_on_timer; });
  if (on_timer) cols.by_wakeup = false;  // known: not a column
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  auto rows = [&] {
    x.clear();
    y.clear();
    for (const auto& p : pts) {
      x.push_back(row_of(cols, p));
      y.push_back(p.cycles_per_record - (on_timer ? *pass->off_hot().cycles * p.wakeups_per_record : 0.0));
    }
  };
  rows();
  RowFit f;
  Entry::ConsumerFit q;
  q.points = pts.size();
  // The per-enable term is the last one asked for: with too few figures for
  // it as well, the others are fitted without it (its cost stays in
  // consumer_per_record) rather than none at all.
  std::string enable_dropped;
  if (cols.by_enable && pts.size() < x[0].size() + 1) {
    enable_dropped = fmt::format(
        "{} consumer figure(s) are too few for a per-enable term besides the others (it is in consumer_per_record): "
        "more runs, `{} -n 10` among them",
        pts.size(), run_cmd);
    cols.by_enable = false;
    rows();
  } else if (cols.by_enable && cols.by_wakeup) {
    // Wakeups and enable cycles per record that move together from run to
    // run (perf's: a run with 10 samples per block has more of both) cannot
    // be told apart: a fit of both trades one for the other, huge and of
    // opposite signs, and a prediction at other rates inherits their
    // difference.  The enable term goes (it is in the wakeup term).
    std::vector<double> w, n;
    for (const auto& p : pts) {
      w.push_back(p.wakeups_per_record);
      n.push_back(p.enables_per_record);
    }
    if (const double r = correlation(w, n); std::fabs(r) > 0.98) {
      enable_dropped = fmt::format(
          "wakeups and enable/disable cycles per record move together in the consumer figures (correlation {:.3f}), "
          "so their costs cannot be told apart (it is in consumer_per_wakeup): {}",
          r, wakeup_hint(e->tracer));
      cols.by_enable = false;
      rows();
    }
  }
  // Each figure weighs as its run's records: a run's consumer time varies by
  // about as much from run to run whatever its records (the reader's fixed
  // costs: waking, opening, parsing headers), so per record a run of a few
  // hundred records is a hundred times as noisy as one of tens of thousands,
  // and an unweighted fit passes through the short runs and takes the
  // per-record term from their difference (it can come out negative).
  std::vector<double> records;
  for (const auto& p : pts) records.push_back(p.records);
  const bool fitted = fit_rows(x, y, bootstrap, rng, &f, records);
  const std::size_t k = x[0].size();
  if (!fitted) {
    const std::string why =
        fmt::format("{} consumer figure(s) for {} term(s): not enough to fit (more payload sizes or runs: `{}`)",
                    pts.size(), k, run_cmd);
    e->consumer_per_record = e->consumer_per_record_byte = e->consumer_per_wakeup = e->consumer_per_enable =
        Param::absent(why);
    return;
  }
  q.r2 = f.r2;
  q.worst_residual_cycles = f.worst_residual;
  auto param = [&](std::size_t j) {
    if (f.draws[j].size() < 100)
      return Param::absent(
          fmt::format("{} consumer figures are too few to bound the fit (more runs: `{}`)", pts.size(), run_cmd));
    Param p;
    p.cycles = f.b[j];
    p.n = pts.size();
    interval(f.draws[j], &p);
    return p;
  };
  std::size_t col = 0;
  e->consumer_per_record = param(col++);
  if (cols.by_byte)
    e->consumer_per_record_byte = param(col++);
  else
    e->consumer_per_record_byte = Param::absent(
        o.carries_payload ? fmt::format("one payload size in the consumer figures: `{} -p 0 -p 256 -p 4096`", run_cmd)
                          : std::string("the action records no payload"));
  if (on_timer) {
    e->consumer_per_wakeup = pass->used();
    const std::string hot =
        pass->hot.ok() ? fmt::format(
                             "{:.0f} cycles per pass, 95% interval [{:.0f}, {:.0f}], in the {} hot `count` figures of "
                             "its configuration (their consumer cycles per record on wakeups and enable/disable cycles "
                             "per record)",
                             *pass->hot.cycles, pass->hot.ci_low, pass->hot.ci_high, pass->hot_figures)
                       : std::string("no pass cost from the hot `count` figures (too few, or their wakeups too alike)");
    q.per_wakeup_from =
        pass->idle.ok()
            ? fmt::format(
                  "the consumer wakes on its own timer: a pass, measured where it has nothing to read and the "
                  "firing CPU idles (the consumer thread's cycles per pass in the {} `count` runs of its "
                  "configuration after an idle gap), as in a paced workload; {}; the other terms are fitted to "
                  "the hot figures less {:.0f} cycles per pass",
                  pass->idle_figures, hot, *pass->off_hot().cycles)
            : fmt::format(
                  "the consumer wakes on its own timer: a pass, measured where it has nothing to read: {}; not "
                  "fitted here; the other terms are fitted to what the passes leave (no `count` run after an "
                  "idle gap: `tracebench run -t {} -a count -p 0 --gap-us 1000`)",
                  hot, e->tracer);
  } else if (cols.by_wakeup)
    e->consumer_per_wakeup = param(col++);
  else if (!cols.wakeups_known)
    e->consumer_per_wakeup = Param::absent(
        "the consumer does not count its wakeups (it spins, or the tracer cannot tell): what they cost is in "
        "consumer_per_record");
  else
    e->consumer_per_wakeup = Param::absent(wakeups_flat(cols, e->tracer, "consumer_per_record"));
  if (cols.by_enable)
    e->consumer_per_enable = param(col++);
  else if (!enable_dropped.empty())
    e->consumer_per_enable = Param::absent(enable_dropped);
  else if (!cols.enables_known)
    e->consumer_per_enable = Param::absent(
        "the runs predate the count of enable/disable cycles: what a cycle costs is in consumer_per_record");
  else
    e->consumer_per_enable = Param::absent(fmt::format(
        "enable/disable cycles per record hardly vary in the runs ({:.3g} to {:.3g}), so their cost cannot be told "
        "apart (it is in consumer_per_record): a run with fewer samples per block, `{} -n 10`",
        cols.n_lo, cols.n_hi, run_cmd));
  e->consumer_per_enable_ecb = handler_enable_cost(o.handler_consumer, cols, f,
                                                   on_timer ? *pass->off_hot().cycles : 0.0, no_sweep, bootstrap, rng);
  if (on_timer)
    e->consumer_per_idle_wakeup = Param::absent(
        "the consumer wakes on its own timer, never because of a record: its passes are in consumer_per_wakeup");
  else if (!o.idle_consumer.empty())
    e->consumer_per_idle_wakeup = idle_wakeup_cost(o.idle_consumer, cols, f, bootstrap, rng);
  double user = 0, ticks = 0;
  for (const auto& p : pts) {
    user += p.user_ticks;
    ticks += p.split_ticks;
  }
  q.ticks = static_cast<std::uint64_t>(ticks);
  if (ticks >= 20)
    q.user_fraction = std::clamp(user / ticks, 0.0, 1.0);
  else
    q.user_fraction_missing = fmt::format(
        "the consumer ran {:.0f} tick(s) in the runs (20 needed for a user/kernel split): longer runs (`{} "
        "--repetitions 20`)",
        ticks, run_cmd);
  e->consumer_fit = q;
}

// The probe's own cost per consumer wakeup: the benchmarks' overhead per
// event regressed on payload bytes and wakeups per record, pooled like the
// consumer's figures (runs that differ only in the wakeup knob).
void fit_probe_wakeup(const Observations& o, const std::vector<ConsumerPoint>& pts, int bootstrap, std::mt19937_64& rng,
                      Entry* e) {
  if (!o.own_wakeups.empty()) {
    double sum = 0;
    for (double w : o.own_wakeups) sum += w;
    e->wakeups_per_record = sum / static_cast<double>(o.own_wakeups.size());
  }
  if (pts.empty()) {
    e->probe_per_wakeup = Param::absent("no consumer figure in the runs: no wakeups to cost");
    return;
  }
  if (std::all_of(pts.begin(), pts.end(), [](const ConsumerPoint& p) { return p.wakes_on_timer; })) {
    // What its passes cost a firing thread is contention for the buffers
    // while a pass runs: in a hot loop every pass meets a firing, paced few
    // do; not a cost per wakeup to scale by a workload's wakeups.
    e->probe_per_wakeup = Param::absent(
        "the consumer wakes on its own timer, never because of a record: the probe causes none of its wakeups (what "
        "a pass costs a firing that meets it is in fixed)");
    return;
  }
  const Columns cols = columns_of(o, pts);
  if (!cols.wakeups_known) {
    e->probe_per_wakeup = Param::absent(
        "the consumer does not count its wakeups (it spins, or the tracer cannot tell): what the probe pays for "
        "them is in fixed");
    return;
  }
  if (!cols.by_wakeup) {
    e->probe_per_wakeup = Param::absent(wakeups_flat(cols, e->tracer, "fixed"));
    return;
  }
  // Wakeups per record that vary by themselves (a hot loop's reader keeping
  // up at one payload size, not at another) move with what else the probe
  // does there: only another wakeup policy varies them alone.
  std::set<std::string> configs;
  for (const auto& p : pts) configs.insert(p.config);
  if (configs.size() < 2) {
    e->probe_per_wakeup = Param::absent(fmt::format(
        "one wakeup policy in the runs: its wakeups per record ({:.3g} to {:.3g}) vary with the payload, not alone, "
        "so what they cost the probe is in fixed: {}",
        cols.w_lo, cols.w_hi, wakeup_hint(e->tracer)));
    return;
  }
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& p : pts) {
    x.push_back(row_of(cols, p));
    y.push_back(p.overhead_cycles);
  }
  RowFit f;
  if (!fit_rows(x, y, bootstrap, rng, &f) || f.draws.back().size() < 100) {
    e->probe_per_wakeup =
        Param::absent(fmt::format("{} benchmarks with a consumer are too few to fit the probe's per-wakeup cost: {}",
                                  pts.size(), wakeup_hint(e->tracer)));
    return;
  }
  Param p;
  p.cycles = f.b.back();
  p.n = pts.size();
  interval(f.draws.back(), &p);
  // A term the runs cannot tell from zero is not a measurement: scaled by a
  // paced workload's wakeups (hundreds of times a hot loop's per record) its
  // noise would be the prediction.
  if (p.ci_low <= 0 && p.ci_high >= 0) {
    e->probe_per_wakeup = Param::absent(fmt::format(
        "fitted {:.0f} cycles per wakeup with a 95% interval [{:.0f}, {:.0f}] that holds zero: the runs cannot tell "
        "what a wakeup costs the probe from noise, so it stays in fixed (more repetitions of both policies: "
        "--repetitions 20)",
        *p.cycles, p.ci_low, p.ci_high));
    return;
  }
  e->probe_per_wakeup = p;
}

// What a burst's first event costs beyond the hot cost of the burst's other
// events when it follows an idle gap: of each repetition of a run after a
// gap, the sample's events (batch) times their overhead per event less the
// hot line at its payload (fixed + b * per_byte).  The median over the
// repetitions; the interval resamples them with the line's bootstrap draws.
// The hot line is `base`'s: the entry's own, or where the entry's hot runs
// wake the consumer and a configuration pooled with it does not (another
// wakeup policy), that one's: a burst's other events wake no one (its first
// wakeup is the idle one), and a hot loop's wakeups make its figure swing
// between two modes, a block where most samples hold a wakeup or few do.
void fit_idle_start(const Observations& o, const Entry& base, const std::vector<std::pair<double, double>>& line_draws,
                    int bootstrap, std::mt19937_64& rng, Entry* e) {
  const std::string run_cmd = run_command(*e);
  if (o.idle_runs.empty()) {
    e->idle_start = Param::absent(fmt::format(
        "no run after an idle gap: `{} -p 0 --gap-us 1000` (a sleep before each sample; a paced workload's bursts "
        "each begin so)",
        run_cmd));
    return;
  }
  std::set<std::uint64_t> gaps;
  for (const auto& r : o.idle_runs) gaps.insert(r.gap_us);
  if (gaps.size() > 1) {
    e->idle_start =
        Param::absent(fmt::format("runs after idle gaps of {} µs: one gap per model (an idle gap's cost "
                                  "grows with it), fit them apart",
                                  fmt::join(gaps, ", ")));
    return;
  }
  e->idle_gap_us = static_cast<double>(*gaps.begin());
  if (&base != e) e->idle_base_options = base.options;
  if (!base.fixed.ok()) {
    e->idle_start =
        Param::absent("no hot cost (fixed) to set the runs after an idle gap against: " + base.fixed.missing);
    return;
  }
  for (const auto& r : o.idle_runs)
    if (r.payload_bytes > 0 && !base.per_byte.ok()) {
      e->idle_start =
          Param::absent(fmt::format("a run after an idle gap has a payload of {} bytes and the model no "
                                    "per-byte cost for it: {}",
                                    r.payload_bytes, base.per_byte.missing));
      return;
    }
  auto extra = [&](double fixed, double per_byte, const std::vector<std::vector<double>>& overheads) {
    std::vector<double> v;
    for (std::size_t i = 0; i < o.idle_runs.size(); ++i) {
      const IdleRun& r = o.idle_runs[i];
      const double hot = fixed + per_byte * static_cast<double>(r.payload_bytes);
      for (double x : overheads[i]) v.push_back(r.batch * (x - hot));
    }
    return median_of(v);
  };
  std::vector<std::vector<double>> own;
  std::size_t n = 0;
  for (const auto& r : o.idle_runs) {
    own.push_back(r.overhead);
    n += r.overhead.size();
  }
  Param p;
  p.cycles = extra(*base.fixed.cycles, base.per_byte.ok() ? *base.per_byte.cycles : 0.0, own);
  p.n = n;
  std::vector<double> d;
  for (int b = 0; b < bootstrap && !line_draws.empty(); ++b) {
    std::vector<std::vector<double>> re;
    for (const auto& r : o.idle_runs) re.push_back(resample(r.overhead, rng));
    const auto& [f, s] = line_draws[static_cast<std::size_t>(b) % line_draws.size()];
    d.push_back(extra(f, s, re));
  }
  interval(d, &p);
  // Like probe_per_wakeup, used only as a cost its interval shows: runs after
  // a gap that cost less than the hot line say the hot loop's figure holds
  // something a burst does not pay (under TCG, the D-VM module's consumer
  // passes meeting a firing thread in every block).
  if (!(p.ci_low > 0)) {
    e->idle_start = Param::absent(fmt::format(
        "runs after an idle gap cost {:.0f} cycles per burst over the hot line, 95% interval [{:.0f}, {:.0f}]: not "
        "above it, so the hot loop's figure holds what a burst pays and more; not used",
        *p.cycles, p.ci_low, p.ci_high));
    return;
  }
  e->idle_start = p;
}

// The Table 4 analog: what entry i's action costs over the empty handler
// (kEmptyAction) of its tracer at the same probe kind and configuration.  The
// two fits' bootstrap draws come from independent runs, so their difference
// draw by draw is a draw of the difference.
void fit_action_over_empty(std::vector<Entry>& entries,
                           const std::vector<std::vector<std::pair<double, double>>>& lines,
                           const std::vector<const Observations*>& of, std::size_t i) {
  Entry& e = entries[i];
  if (e.action == kEmptyAction) {
    e.action_over_empty = Param::absent("the empty handler itself: its fixed cost is the flow alone (Table 6 analog)");
    return;
  }
  std::size_t flow = entries.size();
  for (std::size_t j = 0; j < entries.size(); ++j)
    if (entries[j].tracer == e.tracer && entries[j].probe_kind == e.probe_kind && entries[j].action == kEmptyAction &&
        entries[j].options == e.options)
      flow = j;
  if (flow == entries.size()) {
    // A tracer this binary knows says whether it has an empty handler.
    if (std::unique_ptr<Tracer> t = make_tracer(e.tracer)) {
      const auto actions = t->actions();
      if (std::find(actions.begin(), actions.end(), kEmptyAction) == actions.end()) {
        e.action_over_empty = Param::absent(fmt::format(
            "{} has no empty handler (action `{}`) to set the action against: its fixed cost is flow and action "
            "together",
            e.tracer, kEmptyAction));
        return;
      }
    }
    // One that ran in another configuration tells what it needs (eBPF's
    // empty program, the kernel's run stats): the hint measures both so.
    Entry alike = e;
    std::string ran;
    for (const auto& q : entries)
      if (q.tracer == e.tracer && q.probe_kind == e.probe_kind && q.action == kEmptyAction) {
        for (const auto& [key, value] : q.options) alike.options.insert({key, value});
        ran = fmt::format(" (it ran as `{}`)", action_label(q));
        break;
      }
    e.action_over_empty =
        Param::absent(fmt::format("no run of the empty handler at this probe kind and configuration{}: `{} -a {} -p 0`",
                                  ran, run_command(alike), kEmptyAction));
    return;
  }
  const Entry& q = entries[flow];
  // Alike in what both adapters' runs say was in effect, implied defaults
  // included: an action measured with them otherwise would carry their cost.
  for (const auto& [key, values] : of[i]->effective) {
    auto it = of[flow]->effective.find(key);
    if (it == of[flow]->effective.end() || it->second == values) continue;
    Entry alike = e;
    alike.options[key] = fmt::format("{}", fmt::join(it->second, "|"));
    e.action_over_empty = Param::absent(
        fmt::format("the empty handler's runs had {}={}, this action's {}={}: measure both alike (`{} -a {} -p 0`)",
                    key, alike.options[key], key, fmt::join(values, "|"), run_command(alike), kEmptyAction));
    return;
  }
  if (!e.fixed.ok() || !q.fixed.ok()) {
    e.action_over_empty =
        Param::absent(fmt::format("no fixed cost for {}: {}", e.fixed.ok() ? "the empty handler" : "this action",
                                  e.fixed.ok() ? q.fixed.missing : e.fixed.missing));
    return;
  }
  Param p;
  p.cycles = *e.fixed.cycles - *q.fixed.cycles;
  p.n = std::min(e.fixed.n, q.fixed.n);
  std::vector<double> d;
  for (std::size_t b = 0; b < std::min(lines[i].size(), lines[flow].size()); ++b)
    d.push_back(lines[i][b].first - lines[flow][b].first);
  if (d.empty()) {
    e.action_over_empty = Param::absent("no bootstrap draws of the two fixed costs");
    return;
  }
  interval(d, &p);
  e.action_over_empty = p;
}

Entry fit_entry(const Key& k, const Observations& o, const std::vector<ConsumerPoint>& consumer, const PassCost* pass,
                int bootstrap, std::mt19937_64& rng, std::vector<std::pair<double, double>>* line_draws) {
  Entry e;
  std::tie(e.tracer, e.probe_kind, e.action, std::ignore) = k;
  e.options = o.options;
  e.workloads.assign(o.workloads.begin(), o.workloads.end());
  const std::string run_cmd = run_command(e);
  fit_consumer(o, consumer, run_cmd, pass, bootstrap, rng, &e);
  fit_probe_wakeup(o, consumer, bootstrap, rng, &e);

  std::size_t total = 0;
  for (const auto& [p, v] : o.by_payload) total += v.size();
  line_draws->clear();  // (fixed, per_byte) per bootstrap resample
  if (o.by_payload.empty()) {
    e.fixed = Param::absent(fmt::format("no run with one thread and one handler: `{} -j 1`", run_cmd));
  } else if (o.by_payload.size() == 1) {
    const auto& [bytes, v] = *o.by_payload.begin();
    std::vector<double> draws;
    e.fixed = median_param(v, bootstrap, rng, &draws);
    for (double d : draws) line_draws->emplace_back(d, 0.0);
    if (bytes != 0)
      e.fixed = Param::absent(fmt::format("the runs have one payload size ({} bytes) and none of 0: `{} -p 0 -p {}`",
                                          bytes, run_cmd, bytes));
    e.per_byte =
        Param::absent(o.carries_payload ? fmt::format("one payload size in the runs: `{} -p 0 -p 256 -p 4096`", run_cmd)
                                        : std::string("the action records no payload"));
    e.points.push_back({bytes, median_of(v), median_of(v), v.size()});
  } else {
    std::vector<double> x, y;
    for (const auto& [bytes, v] : o.by_payload) {
      x.push_back(static_cast<double>(bytes));
      y.push_back(median_of(v));
    }
    Line l = least_squares(x, y);
    e.fixed.cycles = l.intercept;
    e.per_byte.cycles = l.slope;
    e.fixed.n = e.per_byte.n = total;
    double my = 0, ss_tot = 0, ss_res = 0, worst = 0;
    for (double v : y) my += v / static_cast<double>(y.size());
    std::size_t i = 0;
    for (const auto& [bytes, v] : o.by_payload) {
      double pred = l.intercept + l.slope * x[i];
      ss_tot += (y[i] - my) * (y[i] - my);
      ss_res += (y[i] - pred) * (y[i] - pred);
      worst = std::max(worst, std::fabs(y[i] - pred));
      e.points.push_back({bytes, y[i], pred, v.size()});
      ++i;
    }
    e.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
    e.worst_residual_cycles = worst;
    std::vector<double> d_fixed, d_slope;
    for (int b = 0; b < bootstrap; ++b) {
      std::vector<double> yb;
      for (const auto& [bytes, v] : o.by_payload) yb.push_back(median_of(resample(v, rng)));
      Line lb = least_squares(x, yb);
      d_fixed.push_back(lb.intercept);
      d_slope.push_back(lb.slope);
      line_draws->emplace_back(lb.intercept, lb.slope);
    }
    interval(d_fixed, &e.fixed);
    interval(d_slope, &e.per_byte);
  }

  // Contention: extra cycles per event at t threads over one thread (payload 0).
  auto one = o.by_payload.find(0);
  for (int truth : {1, 0}) {
    Param& dst = truth ? e.per_ecb : e.false_predicate;
    if (o.by_handlers[truth].empty())
      dst = Param::absent(handler_sweep_missing(e, truth));
    else if (one == o.by_payload.end())
      dst = Param::absent(fmt::format("no one-handler run at payload 0 to compare with: `{} -p 0`", run_cmd));
    else {
      Entry::LineQuality q;
      dst = per_handler(one->second, o.by_handlers[truth], bootstrap, rng, &q);
      e.handler_fit[truth] = q;
    }
  }
  if (o.by_threads.empty()) {
    e.contention[2] =
        Param::absent(fmt::format("no runs with more than one firing thread: `{} -p 0 -j 1 -j 2`", run_cmd));
  } else if (one == o.by_payload.end()) {
    for (const auto& [t, v] : o.by_threads)
      e.contention[t] =
          Param::absent(fmt::format("no one-thread run at payload 0 to compare with: `{} -p 0 -j 1`", run_cmd));
  } else {
    for (const auto& [t, v] : o.by_threads) {
      Param p;
      p.cycles = median_of(v) - median_of(one->second);
      p.n = v.size();
      std::vector<double> draws;
      for (int b = 0; b < bootstrap; ++b)
        draws.push_back(median_of(resample(v, rng)) - median_of(resample(one->second, rng)));
      interval(draws, &p);
      e.contention[t] = p;
    }
  }
  return e;
}

}  // namespace

Status fit(const std::vector<RunResult>& runs, Model* out, int bootstrap) {
  if (runs.empty()) return Status::error("model fit: no runs");
  if (bootstrap < 100) return Status::error("model fit: the bootstrap needs at least 100 resamples");
  TB_TRY(same_machine(runs));
  std::map<Key, Observations> obs;
  std::map<Key, std::vector<ConsumerPoint>> pools;
  std::map<PassKey, std::vector<IdlePass>> idle_passes;  // count runs after an idle gap
  for (const auto& r : runs) {
    const double tsc = r.context.tsc_hz;
    for (const auto& b : r.benchmarks) {
      if (b.status != "ok" || !b.overhead_cycles || b.tracer == kBaselineTracer) continue;
      const auto& base = b.baseline.repetition_medians;
      const auto& tr = b.traced.repetition_medians;
      std::vector<double> v;
      // A profile probe's repetitions are per op; its events are its timer's
      // firings, so many per op.
      const double per_op = b.events.timer_events_per_op.value_or(1.0);
      for (std::size_t i = 0; i < std::min(base.size(), tr.size()); ++i)
        if (std::isfinite(tr[i] - base[i])) v.push_back((tr[i] - base[i]) / per_op);
      if (v.empty()) continue;
      auto [options, config] = config_of(b);
      Observations& o = obs[{b.tracer, b.probe_kind, b.action, config}];
      o.options = options;
      o.consumer_pool = {b.tracer, b.probe_kind, b.action, config_of(b, wakeup_knobs(b.tracer)).second};
      o.workloads.insert(b.workload);
      if (b.tracer_details.contains("options") && b.tracer_details["options"].is_object())
        for (const auto& [key, value] : b.tracer_details["options"].items())
          o.effective[key].insert(value.is_string() ? value.get<std::string>() : value.dump());
      if (b.events.payload_source != "none") o.carries_payload = true;
      const int handlers = handlers_of(b);
      if (b.gap_us > 0) {
        // After an idle gap: its own terms, kept out of the hot ones.
        if (handlers != 1 || b.threads != 1) continue;
        o.idle_runs.push_back(
            {b.payload_bytes, static_cast<double>(std::max<std::uint64_t>(1, b.batch)) * per_op, b.gap_us, v});
        const auto& c = b.consumer;
        if (c && c->wakes_on_timer && b.action == "count" && c->wakeups && *c->wakeups > 0 && tsc > 0) {
          // A consumer on its own timer with nothing to read: what its
          // thread spends per pass while the firing CPU mostly sleeps
          // (timer_pass_costs); the caller's disable and drain left out.
          const double passes = static_cast<double>(*c->wakeups);
          idle_passes[{b.tracer, std::get<3>(o.consumer_pool)}].push_back(
              {std::max(0.0, c->cpu_ns - c->caller_cpu_ns) * tsc / 1e9 / passes,
               c->enables ? static_cast<double>(*c->enables) / passes : -1.0});
        }
        if (c && c->records > 0 && c->wakeups && *c->wakeups > 0 && !c->wakes_on_timer && tsc > 0) {
          // At most one wakeup per traced sample found the consumer asleep.
          // With the tasks' time in the traced blocks alone, the records are
          // those blocks' (the pilot's hot ones left out).
          const double samples = static_cast<double>(b.repetitions) * static_cast<double>(b.samples_per_block);
          const double records = c->traced_cpu_ns
                                     ? std::min(static_cast<double>(c->records), samples * static_cast<double>(b.batch))
                                     : static_cast<double>(c->records);
          const double idle = std::min(static_cast<double>(*c->wakeups), samples);
          // The tasks' time in the traced blocks alone where the run has it:
          // these runs' few records would magnify what the tasks do idle in
          // the baseline blocks (a reader's poll timeouts), and the fitted
          // per-enable term set against the reads at disable, which are
          // measured and left out.
          IdleConsumerPoint ip;
          const double ns = c->traced_cpu_ns ? *c->traced_cpu_ns : std::max(0.0, c->cpu_ns - c->caller_cpu_ns);
          ip.point.cycles_per_record = ns * tsc / 1e9 / records;
          ip.point.payload_bytes = static_cast<double>(b.payload_bytes);
          ip.point.wakeups_per_record = (static_cast<double>(*c->wakeups) - idle) / records;
          ip.point.enables_per_record = 0;
          ip.idle_wakeups_per_record = idle / records;
          o.idle_consumer.push_back(ip);
        }
        continue;
      }
      if (b.consumer && b.threads == 1 && b.consumer->records > 0 && tsc > 0 &&
          (handlers == 1 || (b.payload_bytes == 0 && !extra_predicate_holds(b)))) {
        const ConsumerResult& c = *b.consumer;
        ConsumerPoint p;
        p.cycles_per_record = c.cpu_ns * tsc / 1e9 / static_cast<double>(c.records);
        p.records = static_cast<double>(c.records);
        p.payload_bytes = static_cast<double>(b.payload_bytes);
        if (c.wakeups) p.wakeups_per_record = static_cast<double>(*c.wakeups) / static_cast<double>(c.records);
        if (c.enables) p.enables_per_record = static_cast<double>(*c.enables) / static_cast<double>(c.records);
        p.user_ticks = c.user_ticks;
        p.split_ticks = static_cast<double>(c.ticks);
        p.overhead_cycles = median_of(v);
        p.config = config;
        p.wakes_on_timer = c.wakes_on_timer;
        if (handlers > 1) {
          o.handler_consumer.emplace_back(p, handlers);  // what the extra handlers' enable cycles cost it
        } else {
          pools[o.consumer_pool].push_back(p);
          if (p.wakeups_per_record >= 0) o.own_wakeups.push_back(p.wakeups_per_record);
        }
      }
      if (handlers > 1) {
        if (b.threads != 1 || b.payload_bytes != 0) continue;  // one knob at a time
        auto& dst = o.by_handlers[extra_predicate_holds(b)][handlers];
        dst.insert(dst.end(), v.begin(), v.end());
      } else if (b.threads == 1) {
        auto& dst = o.by_payload[b.payload_bytes];
        dst.insert(dst.end(), v.begin(), v.end());
      } else if (b.payload_bytes == 0) {
        auto& dst = o.by_threads[b.threads];
        dst.insert(dst.end(), v.begin(), v.end());
      }
    }
  }
  if (obs.empty())
    return Status::error(
        "model fit: no benchmark with an overhead figure in the runs (the none tracer is the "
        "baseline, not a tracer): `tracebench run -t <tracer>`");
  Model m;
  const RunContext& c = runs.front().context;
  m.host = c.host;
  m.cpu_model = c.cpu_model;
  m.kernel_release = c.kernel_release;
  m.execution = c.execution;
  m.emulated = c.emulated;
  m.tsc_hz = c.tsc_hz;
  for (const auto& r : runs) m.runs.push_back(r.context.run_id);
  std::mt19937_64 rng(20081);  // fixed: the same runs give the same model
  const std::map<PassKey, PassCost> passes = timer_pass_costs(pools, idle_passes, bootstrap, rng);
  std::vector<std::vector<std::pair<double, double>>> lines;
  std::vector<const Observations*> of;
  for (const auto& [k, o] : obs) {
    auto pass = passes.find({std::get<0>(k), std::get<3>(o.consumer_pool)});
    lines.emplace_back();
    of.push_back(&o);
    m.entries.push_back(fit_entry(k, o, pools[o.consumer_pool], pass == passes.end() ? nullptr : &pass->second,
                                  bootstrap, rng, &lines.back()));
  }
  // After an idle gap, against the line of the burst's other events: the
  // entry's own, or a quiet configuration's (fit_idle_start).
  for (std::size_t i = 0; i < m.entries.size(); ++i) {
    const Entry& e = m.entries[i];
    std::size_t base = i;
    if (!of[i]->idle_runs.empty() && e.wakeups_per_record && *e.wakeups_per_record > 0)
      for (std::size_t j = 0; j < m.entries.size(); ++j) {
        const Entry& q = m.entries[j];
        if (j != i && q.tracer == e.tracer && q.probe_kind == e.probe_kind && q.action == e.action &&
            of[j]->consumer_pool == of[i]->consumer_pool && q.wakeups_per_record && *q.wakeups_per_record == 0 &&
            q.fixed.ok()) {
          base = j;
          break;
        }
      }
    fit_idle_start(*of[i], m.entries[base], lines[base], bootstrap, rng, &m.entries[i]);
  }
  for (std::size_t i = 0; i < m.entries.size(); ++i) fit_action_over_empty(m.entries, lines, of, i);
  *out = std::move(m);
  return Status::ok();
}

const Entry* Model::find(const std::string& tracer, const std::string& probe_kind, const std::string& action,
                         const std::map<std::string, std::string>& options) const {
  for (const auto& e : entries)
    if (e.tracer == tracer && e.probe_kind == probe_kind && e.action == action && e.options == options) return &e;
  return nullptr;
}

}  // namespace tracebench::model
