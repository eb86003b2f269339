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
// The parts: fit_observations.cc (what a benchmark says), fit_stats.cc (the
// statistics), fit_hints.cc (the commands a missing term names),
// fit_passes.cc (a consumer on its own timer), fit_consumer.cc (the consumer
// terms), sharing fit_internal.h; here, runs grouped into entries and each
// entry's probe terms.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/model/fit_internal.h"
#include "tracebench/handler_count.h"
#include "tracebench/model.h"
#include "tracebench/tracer.h"
#include "tracebench/stats.h"

namespace tracebench::model {
namespace {

using namespace fit_detail;

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
// Why the runs give entry `e` no burst cost after an idle gap ("": they do).
std::string no_idle_runs(const Observations& o, const Entry& e) {
  if (e.probe_kind == "profile")
    // Its events are its timer's firings while the thread runs: no burst
    // begins with one after the thread slept (a run after a gap measures
    // the gap's wakeup against a handful of firings).
    return "a profile probe's events are its timer's firings while the thread runs: a burst after an idle gap does "
           "not begin with one, so it has no idle-start term";
  if (o.idle_runs.empty())
    return fmt::format(
        "no run after an idle gap: `{} -p 0 --gap-us 1000` (a sleep before each sample; a paced workload's bursts "
        "each begin so)",
        run_command(e));
  std::set<std::uint64_t> gaps;
  for (const auto& r : o.idle_runs) gaps.insert(r.gap_us);
  if (gaps.size() > 1)
    return fmt::format(
        "runs after idle gaps of {} µs: one gap per model (an idle gap's cost grows with it), fit them "
        "apart",
        fmt::join(gaps, ", "));
  return "";
}

// Why `base` has no hot line to set the runs after a gap against ("": it has).
std::string no_hot_line(const Observations& o, const Entry& base) {
  if (!base.fixed.ok()) return "no hot cost (fixed) to set the runs after an idle gap against: " + base.fixed.missing;
  for (const auto& r : o.idle_runs)
    if (r.payload_bytes > 0 && !base.per_byte.ok())
      return fmt::format("a run after an idle gap has a payload of {} bytes and the model no per-byte cost for it: {}",
                         r.payload_bytes, base.per_byte.missing);
  return "";
}

void fit_idle_start(const Observations& o, const Entry& base, const std::vector<std::pair<double, double>>& line_draws,
                    int bootstrap, std::mt19937_64& rng, Entry* e) {
  if (std::string why = no_idle_runs(o, *e); !why.empty()) {
    e->idle_start = Param::absent(why);
    return;
  }
  e->idle_gap_us = static_cast<double>(o.idle_runs.front().gap_us);
  if (&base != e) e->idle_base_options = base.options;
  if (std::string why = no_hot_line(o, base); !why.empty()) {
    e->idle_start = Param::absent(why);
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

// One payload size: `fixed` its median (at payload 0), no per-byte line.
void fit_one_payload(const Observations& o, const std::string& run_cmd, int bootstrap, std::mt19937_64& rng, Entry* e,
                     std::vector<std::pair<double, double>>* line_draws) {
  const auto& [bytes, v] = *o.by_payload.begin();
  std::vector<double> draws;
  e->fixed = median_param(v, bootstrap, rng, &draws);
  for (double d : draws) line_draws->emplace_back(d, 0.0);
  if (bytes != 0)
    e->fixed = Param::absent(
        fmt::format("the runs have one payload size ({} bytes) and none of 0: `{} -p 0 -p {}`", bytes, run_cmd, bytes));
  e->per_byte =
      Param::absent(o.carries_payload ? fmt::format("one payload size in the runs: `{} -p 0 -p 256 -p 4096`", run_cmd)
                                      : std::string("the action records no payload"));
  e->points.push_back({bytes, median_of(v), median_of(v), v.size()});
}

// Several payload sizes: `fixed` and `per_byte` the least-squares line
// through the per-size medians, its quality, and its bootstrap draws.
void fit_payload_line(const Observations& o, int bootstrap, std::mt19937_64& rng, Entry* e,
                      std::vector<std::pair<double, double>>* line_draws) {
  std::size_t total = 0;
  for (const auto& [p, v] : o.by_payload) total += v.size();
  std::vector<double> x, y;
  for (const auto& [bytes, v] : o.by_payload) {
    x.push_back(static_cast<double>(bytes));
    y.push_back(median_of(v));
  }
  Line l = least_squares(x, y);
  e->fixed.cycles = l.intercept;
  e->per_byte.cycles = l.slope;
  e->fixed.n = e->per_byte.n = total;
  double my = 0, ss_tot = 0, ss_res = 0, worst = 0;
  for (double v : y) my += v / static_cast<double>(y.size());
  std::size_t i = 0;
  for (const auto& [bytes, v] : o.by_payload) {
    double pred = l.intercept + l.slope * x[i];
    ss_tot += (y[i] - my) * (y[i] - my);
    ss_res += (y[i] - pred) * (y[i] - pred);
    worst = std::max(worst, std::fabs(y[i] - pred));
    e->points.push_back({bytes, y[i], pred, v.size()});
    ++i;
  }
  e->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  e->worst_residual_cycles = worst;
  std::vector<double> d_fixed, d_slope;
  for (int b = 0; b < bootstrap; ++b) {
    std::vector<double> yb;
    for (const auto& [bytes, v] : o.by_payload) yb.push_back(median_of(resample(v, rng)));
    Line lb = least_squares(x, yb);
    d_fixed.push_back(lb.intercept);
    d_slope.push_back(lb.slope);
    line_draws->emplace_back(lb.intercept, lb.slope);
  }
  interval(d_fixed, &e->fixed);
  interval(d_slope, &e->per_byte);
}

// The line's intercept against the payload-0 runs' own median: they agree
// when their intervals meet or the figures are within Table 7's ±25% of the
// direct one (a line of a few sizes bends a little at 0; a factor is a line
// that does not hold there).
void check_fixed_against_direct(const Observations& o, Entry* e) {
  auto zero = o.by_payload.find(0);
  if (!e->r2 || !e->fixed.ok() || zero == o.by_payload.end() || zero->second.empty()) return;
  const MedianCI d = median_ci(zero->second);
  const bool meet = d.low <= e->fixed.ci_high && e->fixed.ci_low <= d.high;
  const bool near = std::fabs(*e->fixed.cycles - d.median) <= kTable7CyclesShare * std::fabs(d.median);
  e->fixed_direct = Entry::DirectCheck{d.median, d.low, d.high, d.confidence, d.n, meet || near};
}

// A payload line whose slope is not a cost (more bytes cheaper beyond the
// noise: runs at some sizes on another level than the rest, e.g. a consumer
// asleep in some and awake in others): the per-byte term goes, with why and
// what to run, and `fixed` is the payload-0 median, measured directly (the
// points are set against it alone).
void drop_negative_slope(const Observations& o, const std::string& run_cmd, int bootstrap, std::mt19937_64& rng,
                         Entry* e, std::vector<std::pair<double, double>>* line_draws) {
  const std::string why = negative_cost("per_byte", e->per_byte);
  if (why.empty()) return;
  e->per_byte = Param::absent(fmt::format(
      "fitted at {} (per byte): the runs' payload sizes disagree (compare their consumers' wakeups per record); "
      "not used: `{} -p 0 -p 256 -p 4096` again",
      why, run_cmd));
  line_draws->clear();
  auto zero = o.by_payload.find(0);
  if (zero == o.by_payload.end()) {
    e->fixed = Param::absent(fmt::format("no run at payload 0 to measure it directly: `{} -p 0`", run_cmd));
    return;
  }
  std::vector<double> draws;
  e->fixed = median_param(zero->second, bootstrap, rng, &draws);
  for (double d : draws) line_draws->emplace_back(d, 0.0);
  double worst = 0;
  for (auto& pt : e->points) {
    pt.predicted_cycles = *e->fixed.cycles;
    worst = std::max(worst, std::fabs(pt.median_cycles - pt.predicted_cycles));
  }
  e->worst_residual_cycles = worst;
  e->r2.reset();  // no line was fitted
}

// per_ecb and false_predicate: the handler sweep against the one-handler
// runs at payload 0.
void fit_handlers(const Observations& o, const std::string& run_cmd, int bootstrap, std::mt19937_64& rng, Entry* e) {
  auto one = o.by_payload.find(0);
  for (int truth : {1, 0}) {
    Param& dst = truth ? e->per_ecb : e->false_predicate;
    if (o.by_handlers[truth].empty())
      dst = Param::absent(handler_sweep_missing(*e, truth));
    else if (one == o.by_payload.end())
      dst = Param::absent(fmt::format("no one-handler run at payload 0 to compare with: `{} -p 0`", run_cmd));
    else {
      Entry::LineQuality q;
      dst = per_handler(one->second, o.by_handlers[truth], bootstrap, rng, &q);
      e->handler_fit[truth] = q;
    }
  }
}

// Contention: extra cycles per event at t threads over one thread (payload 0).
void fit_contention(const Observations& o, const std::string& run_cmd, int bootstrap, std::mt19937_64& rng, Entry* e) {
  auto one = o.by_payload.find(0);
  if (o.by_threads.empty()) {
    e->contention[2] =
        Param::absent(fmt::format("no runs with more than one firing thread: `{} -p 0 -j 1 -j 2`", run_cmd));
  } else if (one == o.by_payload.end()) {
    for (const auto& [t, v] : o.by_threads)
      e->contention[t] =
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
      e->contention[t] = p;
    }
  }
}

// One entry: its consumer terms, the probe's per-wakeup cost, the payload
// line (its bootstrap draws in `line_draws`: (fixed, per_byte) per
// resample), the handler sweep and contention, in that order (they share
// the bootstrap's generator).
Entry fit_entry(const Key& k, const Observations& o, const std::vector<ConsumerPoint>& consumer, const PassCost* pass,
                int bootstrap, std::mt19937_64& rng, std::vector<std::pair<double, double>>* line_draws) {
  Entry e;
  std::tie(e.tracer, e.probe_kind, e.action, std::ignore) = k;
  e.options = o.options;
  e.workloads.assign(o.workloads.begin(), o.workloads.end());
  const std::string run_cmd = run_command(e);
  fit_consumer(o, consumer, run_cmd, pass, bootstrap, rng, &e);
  fit_probe_wakeup(o, consumer, bootstrap, rng, &e);
  line_draws->clear();
  if (o.by_payload.empty())
    e.fixed = Param::absent(fmt::format("no run with one thread and one handler: `{} -j 1`", run_cmd));
  else if (o.by_payload.size() == 1)
    fit_one_payload(o, run_cmd, bootstrap, rng, &e, line_draws);
  else {
    fit_payload_line(o, bootstrap, rng, &e, line_draws);
    drop_negative_slope(o, run_cmd, bootstrap, rng, &e, line_draws);
    check_fixed_against_direct(o, &e);
  }
  fit_handlers(o, run_cmd, bootstrap, rng, &e);
  fit_contention(o, run_cmd, bootstrap, rng, &e);
  return e;
}

// Costs measured directly, each against the one-handler line, that came out
// negative beyond the noise (per_ecb, false_predicate, idle_start): absent
// with why, rather than a model nothing may predict with.  (A negative
// per_byte goes with its line: drop_negative_slope.)
void drop_negative_costs(Entry* e) {
  for (auto [name, p] : {std::pair<const char*, Param*>{"per_ecb", &e->per_ecb},
                         {"false_predicate", &e->false_predicate},
                         {"idle_start", &e->idle_start}})
    if (std::string why = negative_cost(name, *p); !why.empty())
      *p = Param::absent(fmt::format("fitted at {}: the runs disagree; not used (measure it again)", why));
}

// The model's context: the runs' machine, kernel and TSC rate (one for all:
// same_machine), and the runs it is fitted from.
Model model_of(const std::vector<RunResult>& runs) {
  Model m;
  const RunContext& c = runs.front().context;
  m.host = c.host;
  m.cpu_model = c.cpu_model;
  m.kernel_release = c.kernel_release;
  m.execution = c.execution;
  m.emulated = c.emulated;
  m.simulated_host = c.simulated_host;
  m.tsc_hz = c.tsc_hz;
  for (const auto& r : runs) m.runs.push_back(r.context.run_id);
  return m;
}

// The entry whose hot line a burst of entry i is set against (fit_idle_start):
// its own, or where its hot runs wake the consumer, a configuration pooled
// with it whose runs woke none.
std::size_t idle_base_of(const Model& m, const std::vector<const Observations*>& of, std::size_t i) {
  const Entry& e = m.entries[i];
  if (of[i]->idle_runs.empty() || !e.wakeups_per_record || !(*e.wakeups_per_record > 0)) return i;
  for (std::size_t j = 0; j < m.entries.size(); ++j) {
    const Entry& q = m.entries[j];
    if (j != i && q.tracer == e.tracer && q.probe_kind == e.probe_kind && q.action == e.action &&
        of[j]->consumer_pool == of[i]->consumer_pool && q.wakeups_per_record && *q.wakeups_per_record == 0 &&
        q.fixed.ok())
      return j;
  }
  return i;
}

}  // namespace

Status fit(const std::vector<RunResult>& runs, Model* out, int bootstrap) {
  if (runs.empty()) return Status::error("model fit: no runs");
  if (bootstrap < 100) return Status::error("model fit: the bootstrap needs at least 100 resamples");
  TB_TRY(same_machine(runs));
  Observed seen = observe_runs(runs);
  if (seen.obs.empty())
    return Status::error(
        "model fit: no benchmark with an overhead figure in the runs (the none tracer is the "
        "baseline, not a tracer): `tracebench run -t <tracer>`");
  Model m = model_of(runs);
  std::mt19937_64 rng(20081);  // fixed: the same runs give the same model
  const std::map<PassKey, PassCost> passes = timer_pass_costs(seen.pools, seen.idle_passes, bootstrap, rng);
  std::vector<std::vector<std::pair<double, double>>> lines;  // each entry's payload line draws
  std::vector<const Observations*> of;
  for (const auto& [k, o] : seen.obs) {
    auto pass = passes.find({std::get<0>(k), std::get<3>(o.consumer_pool)});
    lines.emplace_back();
    of.push_back(&o);
    m.entries.push_back(fit_entry(k, o, seen.pools[o.consumer_pool], pass == passes.end() ? nullptr : &pass->second,
                                  bootstrap, rng, &lines.back()));
  }
  // After an idle gap, against the line of the burst's other events.
  for (std::size_t i = 0; i < m.entries.size(); ++i) {
    const std::size_t base = idle_base_of(m, of, i);
    fit_idle_start(*of[i], m.entries[base], lines[base], bootstrap, rng, &m.entries[i]);
  }
  for (std::size_t i = 0; i < m.entries.size(); ++i) fit_action_over_empty(m.entries, lines, of, i);
  for (auto& e : m.entries) drop_negative_costs(&e);
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
