// The cost model's fit: what one pass of a consumer on its own timer costs
// (fit_internal.h's PassCost), from the hot `count` runs and from the
// `count` runs after an idle gap.
#include <algorithm>

#include "harness/model/fit_internal.h"

namespace tracebench::model::fit_detail {
namespace {

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

}  // namespace

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

}  // namespace tracebench::model::fit_detail
