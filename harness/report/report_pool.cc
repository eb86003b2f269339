#include "report_pool.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "tracebench/stats.h"

namespace tracebench::report {
namespace {

using nlohmann::json;

// Benchmarks that measured the same thing the same way: what a user chose on
// the command line.  The batch is left out (chosen per run from the floor),
// and so are the samples a block took where the run says what it allowed
// (the pilot's choice under that limit varies run to run).
using Key = std::tuple<std::string, std::string, std::string, std::uint64_t, int, std::map<std::string, std::string>,
                       std::uint64_t, std::uint64_t>;

Key key_of(const BenchmarkResult& b) {
  return {b.tracer,  b.workload, b.action, b.payload_bytes,
          b.threads, b.options,  b.gap_us, b.samples_per_block_limit.value_or(b.samples_per_block)};
}

struct Member {
  const BenchmarkResult* b;
  double ns_per_cycle;
};

// "failed" outranks "partial", which outranks the rest: a pooled point is
// no better verified than its worst run.
int rank(const std::string& verification) {
  if (verification == "failed") return 3;
  if (verification == "partial") return 2;
  if (verification == "passed") return 0;
  return 1;
}

// With the confidence the interval has (a pool of few repetitions covers
// less than 95%): the report labels each interval with it.
json ci_json(const MedianCI& c) {
  return {{"median", c.median},
          {"low", c.low},
          {"high", c.high},
          {"n", c.n},
          {"confidence", c.confidence},
          {"confidence_label", confidence_label(c.confidence)}};
}

// Every kept repetition's traced minus baseline median, in ns.
std::vector<double> repetition_overheads_ns(const std::vector<Member>& ms) {
  std::vector<double> v;
  for (const auto& m : ms) {
    const auto& base = m.b->baseline.repetition_medians;
    const auto& tr = m.b->traced.repetition_medians;
    for (std::size_t i = 0; i < base.size() && i < tr.size(); ++i) v.push_back((tr[i] - base[i]) * m.ns_per_cycle);
  }
  return v;
}

json pooled_overhead(const std::vector<Member>& ms) {
  std::vector<const Member*> with;
  for (const auto& m : ms)
    if (m.b->overhead_ns) with.push_back(&m);
  if (with.empty()) return nullptr;
  if (with.size() == 1) return ci_json(*with.front()->b->overhead_ns);
  std::vector<Member> kept;
  for (const auto* m : with) kept.push_back(*m);
  std::vector<double> v = repetition_overheads_ns(kept);
  if (v.size() < 2) return nullptr;
  return ci_json(median_ci(v));
}

json configuration(const std::vector<Member>& ms) {
  const BenchmarkResult& first = *ms.front().b;
  json names = json::array(), warnings = json::array(), information = json::array(), errors = json::array();
  std::uint64_t fired = 0, recorded = 0, lost = 0, ok = 0;
  std::string verification = "passed";
  std::vector<double> base_p50, traced_p50, traced_eps;
  auto add_unique = [](json& a, const std::string& s) {
    if (std::find(a.begin(), a.end(), s) == a.end()) a.push_back(s);
  };
  for (const auto& m : ms) {
    const BenchmarkResult& b = *m.b;
    names.push_back(b.name);
    if (b.status != "ok") {
      add_unique(errors, b.status + ": " + b.error);
      continue;
    }
    ++ok;
    fired += b.events.fired;
    recorded += b.events.recorded;
    lost += b.events.lost;
    if (rank(b.events.verification) > rank(verification)) verification = b.events.verification;
    for (const auto& w : b.warnings) add_unique(is_information(w) ? information : warnings, w);
    if (b.baseline.ns.n) base_p50.push_back(b.baseline.ns.p50);
    if (b.traced.ns.n) traced_p50.push_back(b.traced.ns.p50);
    if (b.events_per_second) traced_eps.push_back(*b.events_per_second);
  }
  if (ok == 0) verification = first.events.verification;
  auto median = [](std::vector<double> v) -> json {
    if (v.empty()) return nullptr;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  return {{"tracer", first.tracer},
          {"workload", first.workload},
          {"action", first.action},
          {"probe_kind", first.probe_kind},
          {"payload_bytes", first.payload_bytes},
          {"threads", first.threads},
          {"options", first.options},
          {"gap_us", first.gap_us},
          {"samples_per_block", first.samples_per_block},
          {"runs", ms.size()},
          {"runs_ok", ok},
          {"names", names},
          {"overhead_ns", pooled_overhead(ms)},
          {"untraced_ns_p50", median(base_p50)},
          {"traced_ns_p50", median(traced_p50)},
          {"traced_events_per_second", median(traced_eps)},
          {"events", {{"fired", fired}, {"recorded", recorded}, {"lost", lost}, {"verification", verification}}},
          {"warnings", warnings},
          {"information", information},
          {"errors", errors}};
}

}  // namespace

bool is_information(const std::string& note) {
  // A capped batch is how the sample was sized (the baseline then resolves
  // to a fraction of a cycle per event); it does not weaken the figure.
  return note.rfind("batch capped", 0) == 0;
}

nlohmann::json pool_configurations(const std::vector<RunResult>& runs) {
  std::map<Key, std::vector<Member>> by_key;
  std::vector<Key> order;  // first appearance, so the page follows the runs
  for (const auto& r : runs) {
    const double ns_per_cycle = r.context.tsc_hz > 0 ? 1e9 / r.context.tsc_hz : 0;
    for (const auto& b : r.benchmarks) {
      Key k = key_of(b);
      auto& v = by_key[k];
      if (v.empty()) order.push_back(k);
      v.push_back({&b, ns_per_cycle});
    }
  }
  json out = json::array();
  for (const auto& k : order) out.push_back(configuration(by_key[k]));
  return out;
}

}  // namespace tracebench::report
