// `tracebench model fit`: the parameters of eq. 4 from result files.  Each
// observation is one repetition's overhead (traced - baseline median, cycles
// per event) of a benchmark that has a figure; the parameters come from the
// runs that vary one knob: payload bytes (fixed + per_byte, a least-squares
// line through the per-size medians), threads (contention over one thread).
// Intervals: percentile bootstrap over the repetitions, fixed seed.
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "tracebench/model.h"
#include "tracebench/stats.h"

namespace tracebench::model {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // tracer, probe kind, action

struct Observations {
  std::map<std::uint64_t, std::vector<double>> by_payload;  // one thread, one handler
  std::map<int, std::vector<double>> by_threads;            // payload 0, > 1 thread, one handler
  // Payload 0, one thread, N > 1 handlers: the extra ones doing the action
  // too, or carrying a predicate that never holds.
  std::map<int, std::vector<double>> by_handlers[2];        // [0] predicate false, [1] true
  std::set<std::string> workloads;
  bool carries_payload = false;
};

double median_of(std::vector<double> v) { return summarize(std::move(v)).p50; }

struct Line {
  double intercept = 0, slope = 0;
};

// Least squares through (x, y); needs two distinct x.
Line least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  Line l;
  l.slope = sxx > 0 ? sxy / sxx : 0;
  l.intercept = my - l.slope * mx;
  return l;
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

Status same_machine(const std::vector<RunResult>& runs) {
  const RunContext& a = runs.front().context;
  for (const auto& r : runs) {
    const RunContext& b = r.context;
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      return Status::error(fmt::format("model fit: one model is for one machine and kernel: run {} has {} '{}', run {} "
                                       "has '{}'",
                                       a.run_id, what, x, b.run_id, y));
    };
    if (b.emulated != a.emulated || b.execution != a.execution)
      return Status::error(fmt::format("model fit: refusing to mix emulated and host runs: {} ran on {}, {} on {}",
                                       a.run_id, a.execution, b.run_id, b.execution));
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
  if (b.tracer_details.contains("ecbs") && b.tracer_details["ecbs"].is_number_integer())
    return std::max(1, b.tracer_details["ecbs"].get<int>());
  auto it = b.options.find("ecbs");
  return it == b.options.end() ? 1 : std::max(1, std::atoi(it->second.c_str()));
}

std::string handler_sweep_missing(const std::string& tracer, const std::string& action, bool predicate) {
  if (tracer != "dvm")
    return fmt::format("not measured for {} by this version of the suite (only the dvm tracer has a handler-count "
                       "option)",
                       tracer);
  return fmt::format("no handler-count sweep in the runs: `tracebench run -t dvm -a {} -p 0 -o dvm.ecbs=N{}` for N = "
                     "1, 2, 4, 10",
                     action, predicate ? "" : " -o dvm.extra_predicate=false");
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

const char* kConsumerNotMeasuredYet =
    "not measured by this version of the suite (it needs the consumer's CPU time per record and per wakeup)";

Entry fit_entry(const Key& k, const Observations& o, int bootstrap, std::mt19937_64& rng) {
  Entry e;
  std::tie(e.tracer, e.probe_kind, e.action) = k;
  e.workloads.assign(o.workloads.begin(), o.workloads.end());
  e.consumer_user_per_record = Param::absent(kConsumerNotMeasuredYet);
  e.consumer_sys_per_record = Param::absent(kConsumerNotMeasuredYet);
  e.consumer_per_wakeup = Param::absent(kConsumerNotMeasuredYet);
  const std::string run_cmd = fmt::format("tracebench run -t {} -a {}", e.tracer, e.action);

  std::size_t total = 0;
  for (const auto& [p, v] : o.by_payload) total += v.size();
  if (o.by_payload.empty()) {
    e.fixed = Param::absent(fmt::format("no run with one thread and one handler: `{} -j 1`", run_cmd));
  } else if (o.by_payload.size() == 1) {
    const auto& [bytes, v] = *o.by_payload.begin();
    e.fixed.cycles = median_of(v);
    e.fixed.n = v.size();
    std::vector<double> draws;
    for (int b = 0; b < bootstrap; ++b) draws.push_back(median_of(resample(v, rng)));
    interval(draws, &e.fixed);
    if (bytes != 0)
      e.fixed = Param::absent(fmt::format("the runs have one payload size ({} bytes) and none of 0: `{} -p 0 -p {}`",
                                          bytes, run_cmd, bytes));
    e.per_byte = Param::absent(o.carries_payload
                                   ? fmt::format("one payload size in the runs: `{} -p 0 -p 256 -p 4096`", run_cmd)
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
    }
    interval(d_fixed, &e.fixed);
    interval(d_slope, &e.per_byte);
  }

  // Contention: extra cycles per event at t threads over one thread (payload 0).
  auto one = o.by_payload.find(0);
  for (int truth : {1, 0}) {
    Param& dst = truth ? e.per_ecb : e.false_predicate;
    if (o.by_handlers[truth].empty())
      dst = Param::absent(handler_sweep_missing(e.tracer, e.action, truth));
    else if (one == o.by_payload.end())
      dst = Param::absent(fmt::format("no one-handler run at payload 0 to compare with: `{} -p 0`", run_cmd));
    else {
      Entry::LineQuality q;
      dst = per_handler(one->second, o.by_handlers[truth], bootstrap, rng, &q);
      e.handler_fit[truth] = q;
    }
  }
  if (o.by_threads.empty()) {
    e.contention[2] = Param::absent(fmt::format("no runs with more than one firing thread: `{} -p 0 -j 1 -j 2`", run_cmd));
  } else if (one == o.by_payload.end()) {
    for (const auto& [t, v] : o.by_threads)
      e.contention[t] = Param::absent(fmt::format("no one-thread run at payload 0 to compare with: `{} -p 0 -j 1`", run_cmd));
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
  for (const auto& r : runs) {
    for (const auto& b : r.benchmarks) {
      if (b.status != "ok" || !b.overhead_cycles || b.tracer == "none") continue;
      const auto& base = b.baseline.repetition_medians;
      const auto& tr = b.traced.repetition_medians;
      std::vector<double> v;
      for (std::size_t i = 0; i < std::min(base.size(), tr.size()); ++i)
        if (std::isfinite(tr[i] - base[i])) v.push_back(tr[i] - base[i]);
      if (v.empty()) continue;
      Observations& o = obs[{b.tracer, b.probe_kind, b.action}];
      o.workloads.insert(b.workload);
      if (b.events.payload_source != "none") o.carries_payload = true;
      const int handlers = handlers_of(b);
      if (handlers > 1) {
        if (b.threads != 1 || b.payload_bytes != 0) continue;  // one knob at a time
        // What the extra handlers' predicates do: as the tracer reports it, else the option.
        auto it = b.options.find("extra_predicate");
        bool truth = it == b.options.end() || it->second != "false";
        if (b.tracer_details.contains("extra_predicate") && b.tracer_details["extra_predicate"].is_string())
          truth = b.tracer_details["extra_predicate"].get<std::string>() != "false";
        auto& dst = o.by_handlers[truth][handlers];
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
    return Status::error("model fit: no benchmark with an overhead figure in the runs (the none tracer is the "
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
  for (const auto& [k, o] : obs) m.entries.push_back(fit_entry(k, o, bootstrap, rng));
  *out = std::move(m);
  return Status::ok();
}

const Entry* Model::find(const std::string& tracer, const std::string& probe_kind, const std::string& action) const {
  for (const auto& e : entries)
    if (e.tracer == tracer && e.probe_kind == probe_kind && e.action == action) return &e;
  return nullptr;
}

}  // namespace tracebench::model
