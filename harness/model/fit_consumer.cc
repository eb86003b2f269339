// The cost model's fit: the consumer terms of an entry (consumer_per_record,
// _record_byte, _wakeup, _enable, _enable_ecb, _idle_wakeup, the user share)
// by least squares of the benchmarks' consumer cycles per record, and the
// probe's own cost per consumer wakeup (probe_per_wakeup).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/model/fit_internal.h"

namespace tracebench::model::fit_detail {
namespace {

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

// Until a fit says otherwise: why the idle-wakeup and per-handler enable
// terms are missing.  Returns why the handler sweep's consumer figures are
// missing (the per-handler enable term's reason where the fit cannot set it).
std::string consumer_defaults(const Observations& o, const std::string& run_cmd, Entry* e) {
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
  return no_sweep;
}

// No consumer figure in the runs: every consumer term says why.
void no_consumer_figure(const Observations& o, const std::string& run_cmd, Entry* e) {
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
}

// The consumer regression's design: the columns it fits, its rows, and
// what each row's figure is fitted to (less a timer consumer's passes).
struct ConsumerDesign {
  Columns cols;
  bool on_timer = false;       // the passes are known: not a column
  std::string enable_dropped;  // why the per-enable column was left out ("": it was not)
  std::vector<std::vector<double>> x;
  std::vector<double> y;
};

void fill_rows(const std::vector<ConsumerPoint>& pts, const PassCost* pass, ConsumerDesign* d) {
  d->x.clear();
  d->y.clear();
  for (const auto& p : pts) {
    d->x.push_back(row_of(d->cols, p));
    d->y.push_back(p.cycles_per_record - (d->on_timer ? *pass->off_hot().cycles * p.wakeups_per_record : 0.0));
  }
}

// Why the per-enable column, asked for, cannot be fitted ("": it can).
// It is the last one asked for: with too few figures for it as well, the
// others are fitted without it (its cost stays in consumer_per_record)
// rather than none at all.
std::string enable_drop_reason(const std::vector<ConsumerPoint>& pts, const ConsumerDesign& d,
                               const std::string& run_cmd, const std::string& tracer) {
  if (!d.cols.by_enable) return "";
  if (pts.size() < d.x[0].size() + 1)
    return fmt::format(
        "{} consumer figure(s) are too few for a per-enable term besides the others (it is in consumer_per_record): "
        "more runs, `{} -n 10` among them",
        pts.size(), run_cmd);
  if (!d.cols.by_wakeup) return "";
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
  if (const double r = correlation(w, n); std::fabs(r) > 0.98)
    return fmt::format(
        "wakeups and enable/disable cycles per record move together in the consumer figures (correlation {:.3f}), "
        "so their costs cannot be told apart (it is in consumer_per_wakeup): {}",
        r, wakeup_hint(tracer));
  return "";
}

ConsumerDesign consumer_design(const Observations& o, const std::vector<ConsumerPoint>& pts, const PassCost* pass,
                               const std::string& run_cmd, const std::string& tracer) {
  ConsumerDesign d;
  d.cols = columns_of(o, pts);
  d.on_timer = pass && d.cols.wakeups_known &&
               std::all_of(pts.begin(), pts.end(), [](const ConsumerPoint& p) { return p.wakes_on_timer; });
  if (d.on_timer) d.cols.by_wakeup = false;  // known: not a column
  fill_rows(pts, pass, &d);
  d.enable_dropped = enable_drop_reason(pts, d, run_cmd, tracer);
  if (!d.enable_dropped.empty()) {
    d.cols.by_enable = false;
    fill_rows(pts, pass, &d);
  }
  return d;
}

// Column j of the fit, its interval from the fit's bootstrap.
Param column_param(const RowFit& f, std::size_t j, std::size_t figures, const std::string& run_cmd) {
  if (f.draws[j].size() < 100)
    return Param::absent(
        fmt::format("{} consumer figures are too few to bound the fit (more runs: `{}`)", figures, run_cmd));
  Param p;
  p.cycles = f.b[j];
  p.n = figures;
  interval(f.draws[j], &p);
  return p;
}

// Where a consumer on its own timer has its per-wakeup term from: its
// passes, idle and hot.
std::string timer_wakeup_source(const PassCost& pass, const std::string& tracer) {
  const std::string hot =
      pass.hot.ok() ? fmt::format(
                          "{:.0f} cycles per pass, 95% interval [{:.0f}, {:.0f}], in the {} hot `count` figures of "
                          "its configuration (their consumer cycles per record on wakeups and enable/disable cycles "
                          "per record)",
                          *pass.hot.cycles, pass.hot.ci_low, pass.hot.ci_high, pass.hot_figures)
                    : std::string("no pass cost from the hot `count` figures (too few, or their wakeups too alike)");
  return pass.idle.ok()
             ? fmt::format(
                   "the consumer wakes on its own timer: a pass, measured where it has nothing to read and the "
                   "firing CPU idles (the consumer thread's cycles per pass in the {} `count` runs of its "
                   "configuration after an idle gap), as in a paced workload; {}; the other terms are fitted to "
                   "the hot figures less {:.0f} cycles per pass",
                   pass.idle_figures, hot, *pass.off_hot().cycles)
             : fmt::format(
                   "the consumer wakes on its own timer: a pass, measured where it has nothing to read: {}; not "
                   "fitted here; the other terms are fitted to what the passes leave (no `count` run after an "
                   "idle gap: `tracebench run -t {} -a count -p 0 --gap-us 1000`)",
                   hot, tracer);
}

// consumer_per_wakeup: a timer consumer's pass, the fit's column, or why
// neither.  `col`: the fit's next column, moved past the one taken.
Param wakeup_term(const ConsumerDesign& d, const PassCost* pass, const RowFit& f, std::size_t* col, std::size_t figures,
                  const std::string& run_cmd, const std::string& tracer, Entry::ConsumerFit* q) {
  if (d.on_timer) {
    q->per_wakeup_from = timer_wakeup_source(*pass, tracer);
    return pass->used();
  }
  if (d.cols.by_wakeup) return column_param(f, (*col)++, figures, run_cmd);
  if (!d.cols.wakeups_known)
    return Param::absent(
        "the consumer does not count its wakeups (it spins, or the tracer cannot tell): what they cost is in "
        "consumer_per_record");
  return Param::absent(wakeups_flat(d.cols, tracer, "consumer_per_record"));
}

// consumer_per_enable: the fit's column, or why not.
Param enable_term(const ConsumerDesign& d, const RowFit& f, std::size_t* col, std::size_t figures,
                  const std::string& run_cmd) {
  if (d.cols.by_enable) return column_param(f, (*col)++, figures, run_cmd);
  if (!d.enable_dropped.empty()) return Param::absent(d.enable_dropped);
  if (!d.cols.enables_known)
    return Param::absent(
        "the runs predate the count of enable/disable cycles: what a cycle costs is in consumer_per_record");
  return Param::absent(fmt::format(
      "enable/disable cycles per record hardly vary in the runs ({:.3g} to {:.3g}), so their cost cannot be told "
      "apart (it is in consumer_per_record): a run with fewer samples per block, `{} -n 10`",
      d.cols.n_lo, d.cols.n_hi, run_cmd));
}

// The consumer's user share from its ticks pooled over the figures.
void user_share(const std::vector<ConsumerPoint>& pts, const std::string& run_cmd, Entry::ConsumerFit* q) {
  double user = 0, ticks = 0;
  for (const auto& p : pts) {
    user += p.user_ticks;
    ticks += p.split_ticks;
  }
  q->ticks = static_cast<std::uint64_t>(ticks);
  if (ticks >= 20)
    q->user_fraction = std::clamp(user / ticks, 0.0, 1.0);
  else
    q->user_fraction_missing = fmt::format(
        "the consumer ran {:.0f} tick(s) in the runs (20 needed for a user/kernel split): longer runs (`{} "
        "--repetitions 20`)",
        ticks, run_cmd);
}

}  // namespace

void fit_consumer(const Observations& o, const std::vector<ConsumerPoint>& pts, const std::string& run_cmd,
                  const PassCost* pass, int bootstrap, std::mt19937_64& rng, Entry* e) {
  const std::string no_sweep = consumer_defaults(o, run_cmd, e);
  if (pts.empty()) {
    no_consumer_figure(o, run_cmd, e);
    return;
  }
  const ConsumerDesign d = consumer_design(o, pts, pass, run_cmd, e->tracer);
  // Each figure weighs as its run's records: a run's consumer time varies by
  // about as much from run to run whatever its records (the reader's fixed
  // costs: waking, opening, parsing headers), so per record a run of a few
  // hundred records is a hundred times as noisy as one of tens of thousands,
  // and an unweighted fit passes through the short runs and takes the
  // per-record term from their difference (it can come out negative).
  std::vector<double> records;
  for (const auto& p : pts) records.push_back(p.records);
  RowFit f;
  if (!fit_rows(d.x, d.y, bootstrap, rng, &f, records)) {
    const std::string why =
        fmt::format("{} consumer figure(s) for {} term(s): not enough to fit (more payload sizes or runs: `{}`)",
                    pts.size(), d.x[0].size(), run_cmd);
    e->consumer_per_record = e->consumer_per_record_byte = e->consumer_per_wakeup = e->consumer_per_enable =
        Param::absent(why);
    return;
  }
  Entry::ConsumerFit q;
  q.points = pts.size();
  q.r2 = f.r2;
  q.worst_residual_cycles = f.worst_residual;
  std::size_t col = 0;
  e->consumer_per_record = column_param(f, col++, pts.size(), run_cmd);
  if (d.cols.by_byte)
    e->consumer_per_record_byte = column_param(f, col++, pts.size(), run_cmd);
  else
    e->consumer_per_record_byte = Param::absent(
        o.carries_payload ? fmt::format("one payload size in the consumer figures: `{} -p 0 -p 256 -p 4096`", run_cmd)
                          : std::string("the action records no payload"));
  e->consumer_per_wakeup = wakeup_term(d, pass, f, &col, pts.size(), run_cmd, e->tracer, &q);
  e->consumer_per_enable = enable_term(d, f, &col, pts.size(), run_cmd);
  const double off_pass = d.on_timer ? *pass->off_hot().cycles : 0.0;
  e->consumer_per_enable_ecb = handler_enable_cost(o.handler_consumer, d.cols, f, off_pass, no_sweep, bootstrap, rng);
  if (d.on_timer)
    e->consumer_per_idle_wakeup = Param::absent(
        "the consumer wakes on its own timer, never because of a record: its passes are in consumer_per_wakeup");
  else if (!o.idle_consumer.empty())
    e->consumer_per_idle_wakeup = idle_wakeup_cost(o.idle_consumer, d.cols, f, bootstrap, rng);
  user_share(pts, run_cmd, &q);
  e->consumer_fit = q;
}

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

}  // namespace tracebench::model::fit_detail
