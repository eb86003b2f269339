// The model suite's plan and its Table 7: which runs measure the parameters a
// tracer's held-out scenarios need (the scenarios and the options that vary
// its consumer come from the tracer: Tracer::model()), which scenarios
// validate them, and the table that puts prediction and measurement side by
// side.  Pure: the command (suite_command.cc) runs the steps.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tracebench/handler_count.h"
#include "tracebench/model.h"
#include "tracebench/tracer.h"
#include "tracebench/workload.h"

namespace tracebench {

std::vector<std::string> ModelScenario::option_args(const std::string& tracer) const {
  std::vector<std::string> a;
  for (const auto& o : options) a.insert(a.end(), {"-o", o});
  if (handlers > 1) {
    a.insert(a.end(), {"-o", fmt::format("{}.{}={}", tracer, kEcbsOption, handlers), "-o",
                       fmt::format("{}.{}=false", tracer, kExtraPredicateOption)});
  }
  return a;
}

}  // namespace tracebench

namespace tracebench::model {
namespace {

std::vector<std::string> base_with(std::vector<std::string> base, std::initializer_list<std::string> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// `-o O` for each option.
std::vector<std::string> dash_o(const std::vector<std::string>& options) {
  std::vector<std::string> a;
  for (const auto& o : options) a.insert(a.end(), {"-o", o});
  return a;
}

}  // namespace

ModelDescription model_description(const std::string& tracer) {
  std::unique_ptr<Tracer> t = make_tracer(tracer);
  return t ? t->model() : ModelDescription{};
}

// The scenarios come from the tracer (Tracer::model()); a tracer without
// the probe kind has no such row.
std::vector<SuiteScenario> suite_scenarios(const std::string& tracer) { return model_description(tracer).scenarios; }

void size_buffers(const ModelDescription& d, double segment_seconds, std::vector<SuiteScenario>* scenarios) {
  if (!d.segment_buffer) return;  // the others' readers run while the workload fires
  for (auto& s : *scenarios) {
    if (s.payload_bytes == 0) continue;
    // The payload and what the record takes beyond it; twice what a segment
    // writes, for the rate's overshoot and the sub-buffers' unused tails.
    const double kib = 2.0 * s.rate_hz * segment_seconds *
                       static_cast<double>(s.payload_bytes + d.segment_buffer->record_overhead_bytes) / 1024.0;
    std::uint64_t size = 1024;
    while (static_cast<double>(size) < kib && size < (1u << 20)) size *= 2;
    s.options.push_back(fmt::format("{}={}", d.segment_buffer->option_kib, size));
  }
}

void size_buffers(const std::string& tracer, double segment_seconds, std::vector<SuiteScenario>* scenarios) {
  size_buffers(model_description(tracer), segment_seconds, scenarios);
}

std::vector<std::vector<std::string>> suite_runs(const std::string& tracer, const std::vector<SuiteScenario>& scenarios,
                                                 bool quick) {
  return suite_runs(tracer, model_description(tracer), scenarios, quick);
}

namespace {

// The runs of a suite in order, each once (a run asked again by another
// scenario is not repeated), `copies` times the first time it is asked.
class RunList {
 public:
  explicit RunList(bool quick) : quick_(quick) {}
  void add(std::vector<std::string> r, int copies = 1) {
    if (quick_) r.push_back("--quick");
    if (!seen_.insert(r).second) return;
    for (int i = 0; i < copies; ++i) runs_.push_back(r);
  }
  std::vector<std::vector<std::string>> take() { return std::move(runs_); }

 private:
  bool quick_;
  std::vector<std::vector<std::string>> runs_;
  std::set<std::vector<std::string>> seen_;
};

// A scenario with a payload: the per-byte terms.
void payload_runs(const std::vector<std::string>& base, const SuiteScenario& s, const ModelDescription& d,
                  RunList* list) {
  // A sweep through the scenario's size.
  std::set<std::uint64_t> sizes = {0, 64, 1024, s.payload_bytes};
  std::vector<std::string> r = base;
  for (auto p : sizes) r.insert(r.end(), {"-p", std::to_string(p)});
  list->add(r, 2);
  // The scenario's size with 10 samples per block (blocks are otherwise
  // as long as 50 ms of traced time allow, up to 1000 samples): several times
  // the enable/disable cycles per record, which tells what a cycle costs
  // the consumer (a session start and stop, a read pass at disable)
  // from what a record does.
  list->add(base_with(base, {"-p", std::to_string(s.payload_bytes), "-n", "10"}));
  // The same sweep with the reader woken on few records: what the probe
  // pays per wakeup (probe_per_wakeup) and the consumer's per-wakeup
  // term.  A hot loop wakes it on most records, a paced workload on few.
  // The reader then reads on its timer, every 2 ms: often enough that
  // a hot loop of 1 KiB records does not fill the ring.
  if (!s.few_wakeups.empty()) {
    for (const auto& o : dash_o(s.few_wakeups)) r.push_back(o);
    list->add(r);
  }
  // The D-VM's consumer wakes on its timer (switchrate), never on a
  // record: a hot loop gives it ~1e-4 wakeups per record at any size, too
  // few to tell a pass's cost from the records'.  At another rate the
  // wakeups per record differ enough to fit both.
  if (d.second_timer_rate) {
    r.insert(r.end(), {"-o", *d.second_timer_rate});
    list->add(r);
  }
}

// A scenario without a payload: the per-record terms.
void count_runs(const std::vector<std::string>& base, const ModelDescription& d, RunList* list) {
  // Twice: two consumer figures for the per-record term.
  std::vector<std::string> r = base;
  r.insert(r.end(), {"-p", "0"});
  list->add(r, 2);
  list->add(base_with(base, {"-p", "0", "-n", "10"}));  // enable/disable cycles per record, as above
  // The D-VM's consumer passes at its switchrate whatever fires: paced,
  // its cost is per pass, not per record; a second rate tells them apart.
  if (d.second_timer_rate) {
    r.insert(r.end(), {"-o", *d.second_timer_rate});
    list->add(r);
    // And what a pass costs while the firing CPU idles between bursts,
    // as it does paced (a hot loop's passes meet a busy CPU: under TCG
    // the module's cost several times as much): the count after an idle
    // gap, twice, and twice with 10 samples per block (short runs), whose
    // several times the enable/disable cycles per pass tell what a cycle
    // costs the consumer thread from what a pass does.
    list->add(base_with(base, {"-p", "0", "--gap-us", "1000"}), 2);
    list->add(base_with(base, {"-p", "0", "-n", "10", "--gap-us", "1000"}), 2);
  }
}

// After an idle gap: a sleep before each sample, as long as a validation's
// pacing period, so each sample's first event is what a paced burst's first
// event is there (idle_start: caches and predictors cold, the CPU woken).
// A scenario whose records a consumer reads: three sizes, whose wakeups find
// the consumer asleep (consumer_per_idle_wakeup, three consumer figures).
// A counting scenario: twice at payload 0 (a uprobe's figure after a gap
// swings between two modes run to run).  Left out, its validations were
// "not costed" for their bursts: a uprobe after a 1 ms gap costs ~20 times
// its hot figure, and the pid scenario was predicted 41% low (20% with it).
// Not for a profile probe: its events are its timer's firings, which a
// burst does not begin.
void idle_gap_runs(const std::vector<std::string>& base, const SuiteScenario& s, RunList* list) {
  if (s.payload_bytes == 0) {
    const Workload* w = find_workload(s.workload);
    if (w && w->probe.kind == ProbeKind::kProfile) return;
    list->add(base_with(base, {"-p", "0", "--gap-us", "1000"}), 2);
    return;
  }
  std::vector<std::string> r = base;
  for (auto p : std::set<std::uint64_t>{0, s.payload_bytes, 1024}) r.insert(r.end(), {"-p", std::to_string(p)});
  r.insert(r.end(), {"--gap-us", "1000"});
  list->add(r);
}

// The Table 4 analog (the action over the empty handler, whose own fixed
// is the flow, Table 6) for the syscall probe's count and the payload
// scenario's action (record, ringbuf): both in one run, one after the
// other, at payload 0.
// Not for the uprobe rows: a uprobe's trap and return cost tens of
// thousands of cycles that swing by thousands from block to block, and
// an action of tens of cycles is lost in them.
void empty_handler_runs(const std::string& tracer, const SuiteScenario& s, const ModelDescription& d, RunList* list) {
  if (!d.empty_handler_options || (s.name != "sys" && s.name != "payload")) return;
  std::vector<std::string> r = {"run", "-t", tracer, "-w", s.workload, "-a", kEmptyAction, "-a", s.action, "-p", "0"};
  for (const auto& o : dash_o(*d.empty_handler_options)) r.push_back(o);
  list->add(r);
}

// The handler-count sweep: per_ecb and false_predicate.  The scenario's
// own count with failing predicates three times: the line's slope rests on
// that figure, and it moves by a quarter from one run to the next (ten
// handlers' repetitions can gather in two modes, in proportions that differ
// run to run).
void handler_sweep_runs(const std::string& tracer, const std::vector<std::string>& base, const SuiteScenario& s,
                        RunList* list) {
  for (int n : s.handler_sweep())
    for (const char* truth : {"true", "false"}) {
      std::vector<std::string> r = base;
      r.insert(r.end(), {"-p", "0", "-o", fmt::format("{}.{}={}", tracer, kEcbsOption, n), "-o",
                         fmt::format("{}.{}={}", tracer, kExtraPredicateOption, truth)});
      list->add(r, n == s.handlers && std::string(truth) == "false" ? 3 : 1);
    }
}

}  // namespace

std::vector<std::vector<std::string>> suite_runs(const std::string& tracer, const ModelDescription& d,
                                                 const std::vector<SuiteScenario>& scenarios, bool quick) {
  RunList list(quick);
  for (const auto& s : scenarios) {
    std::vector<std::string> base = {"run", "-t", tracer, "-w", s.workload, "-a", s.action};
    for (const auto& o : s.options) base.insert(base.end(), {"-o", o});
    if (s.payload_bytes > 0)
      payload_runs(base, s, d, &list);
    else
      count_runs(base, d, &list);
    idle_gap_runs(base, s, &list);
    empty_handler_runs(tracer, s, d, &list);
    handler_sweep_runs(tracer, base, s, &list);
  }
  return list.take();
}

namespace {
std::string num(std::optional<double> v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("—");
}
}  // namespace

// Which term is off: the probe's or the consumer's error, whichever is the
// larger share of the total's.
std::string term_off(const ValidationFile& v) {
  const double probe = v.measured.probe_cpu_percent - v.predicted.probe_cpu_percent;
  if (!v.predicted.consumer_cpu_percent) return "consumer: not predicted";
  const double consumer = v.measured.consumer_cpu_percent - *v.predicted.consumer_cpu_percent;
  return std::fabs(probe) >= std::fabs(consumer) ? fmt::format("probe ({:+.2f})", probe)
                                                 : fmt::format("consumer ({:+.2f})", consumer);
}

namespace {
// Where a range lies against [lo, hi]: wholly inside (1), wholly outside
// (-1), across a bound (0).
int range_against(double low, double high, double lo, double hi) {
  if (low >= lo && high <= hi) return 1;
  if (high < lo || low > hi) return -1;
  return 0;
}

// The CPU points' error as the pairs' range puts it: the total's error
// with the probe's share at each end of the range (the consumer's share is
// one figure over the traced segments); absent without a range or a probe
// figure to scale it by.
std::optional<std::pair<double, double>> points_range(const ValidationFile& v, const Table7Verdict& t, double err) {
  const ValidationFile::Measured& m = v.measured;
  if (!t.cycles_low || m.probe_cycles == 0) return std::nullopt;
  const double per_cycle = m.probe_cpu_percent / m.probe_cycles;
  const double a = err + (*t.cycles_low - m.probe_cycles) * per_cycle;
  const double b = err + (*t.cycles_high - m.probe_cycles) * per_cycle;
  return std::make_pair(std::min(a, b), std::max(a, b));
}

// The "within" column when the run held and has an error: points first,
// then cycles, each on the pairs' range where there is one.
void judge(const ValidationFile& v, double err, bool ranged, int cycles_against, Table7Verdict* t) {
  const ValidationFile::Measured& m = v.measured;
  const auto pts = points_range(v, *t, err);
  const int points = pts ? range_against(pts->first, pts->second, -kTable7Points, kTable7Points)
                         : (std::fabs(err) <= kTable7Points ? 1 : -1);
  const bool cycles =
      ranged ? cycles_against == 1 : t->cycles_error_share && std::fabs(*t->cycles_error_share) <= kTable7CyclesShare;
  std::string cycles_off =
      t->cycles_error_share ? fmt::format("cycles {:+.0f}%", 100 * *t->cycles_error_share) : "no cycles predicted";
  const std::string range = ranged ? fmt::format("the {} segment pairs' {:.0f} to {:.0f} cycles",
                                                 m.probe_cycles_pairs.size(), *t->cycles_low, *t->cycles_high)
                                   : "";
  if (ranged && !cycles) cycles_off += fmt::format(" ({})", range);
  if (points == -1) {
    t->text = fmt::format("**no**: {:+.2f} points, {}", err, cycles_off);
  } else if (points == 0) {
    t->inside_noise = true;
    t->text = fmt::format(
        "inside the noise: {:+.2f} points, {}; the segment pairs put the error at {:+.2f} to {:+.2f} points, "
        "across ±2: not judged at this length",
        err, cycles_off, pts->first, pts->second);
  } else if (t->inside_noise && ranged) {
    t->text = fmt::format(
        "inside the noise: {:+.2f} points; cycles {:+.0f}%, {} cross ±25% of the prediction: not judged at this "
        "length",
        err, 100 * *t->cycles_error_share, range);
  } else if (t->inside_noise) {
    t->text = fmt::format(
        "inside the noise: {:+.2f} points; the probe's {:.0f} ns per event is within the untraced "
        "spread ({:.0f} ns), its cycles not judged",
        err, *m.probe_ns_per_event, m.untraced_spread_ns_per_event);
  } else if (!cycles) {
    t->text = fmt::format("**no**: {}", cycles_off);
  } else {
    t->passed = true;
    t->text = std::fabs(err) <= 1 ? "yes (±1)" : "yes";
  }
}
}  // namespace

Table7Verdict table7_verdict(const ValidationFile& v) {
  Table7Verdict t;
  const ValidationFile::Measured& m = v.measured;
  const double predicted = v.predicted.probe_cycles;
  if (predicted > 0) t.cycles_error_share = m.probe_cycles / predicted - 1;
  const std::vector<double>& pairs = m.probe_cycles_pairs;
  const bool ranged = pairs.size() >= kTable7MinPairs && predicted > 0;
  if (ranged) {
    t.cycles_low = *std::min_element(pairs.begin(), pairs.end());
    t.cycles_high = *std::max_element(pairs.begin(), pairs.end());
  }
  const int against = ranged ? range_against(*t.cycles_low, *t.cycles_high, predicted * (1 - kTable7CyclesShare),
                                             predicted * (1 + kTable7CyclesShare))
                             : 0;
  t.inside_noise =
      ranged ? against == 0 : m.probe_ns_per_event && std::fabs(*m.probe_ns_per_event) < m.untraced_spread_ns_per_event;
  // A run that did not hold the scenario (its rate, a stop, lost events)
  // tests nothing: its row says what happened, never "yes".
  if (!validation_held(v)) {
    t.text = fmt::format("**not valid**: {}", fmt::join(v.problems, "; "));
  } else if (!v.error_cpu_percent) {
    t.text = "—";
  } else {
    judge(v, *v.error_cpu_percent, ranged, against, &t);
  }
  return t;
}

std::optional<ValidationFile> median_round(const std::vector<ValidationFile>& rounds, std::vector<double>* errors) {
  std::vector<std::pair<double, std::size_t>> by_error;
  errors->clear();
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    // A round that did not hold its scenario has no error to count.
    if (!validation_held(rounds[i])) continue;
    const std::optional<double>& e = rounds[i].error_cpu_percent;
    if (!e) continue;
    errors->push_back(*e);
    by_error.emplace_back(*e, i);
  }
  if (by_error.empty()) return rounds.empty() ? std::nullopt : std::optional<ValidationFile>(rounds.front());
  std::sort(by_error.begin(), by_error.end());
  const std::size_t n = by_error.size();
  std::size_t m = n / 2;  // odd: the middle one
  if (n % 2 == 0 && std::fabs(by_error[m - 1].first) >= std::fabs(by_error[m].first)) m = m - 1;
  return rounds[by_error[m].second];
}

std::string table7_markdown(const std::vector<SuiteRow>& rows) {
  const bool rounds =
      std::any_of(rows.begin(), rows.end(), [](const SuiteRow& r) { return r.round_errors.size() > 1; });
  std::string out =
      "| tracer | scenario | workload | rate (Hz) | cycles/probe predicted | measured | CPU % predicted | measured | "
      "error (points) | cycles error | noise (ns/event) | within ±2 points and ±25% cycles | largest term error |" +
      std::string(rounds ? " errors of the rounds |" : "") +
      "\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|" + std::string(rounds ? "---|" : "") + "\n";
  for (const auto& r : rows) {
    if (!r.validation) {
      out += fmt::format("| {} | {} | {} | | | | | | | | | — | {} |{}\n", r.tracer, r.scenario, r.workload, r.problem,
                         rounds ? " |" : "");
      continue;
    }
    const ValidationFile& v = *r.validation;
    const ValidationFile::Measured& m = v.measured;
    const ValidationFile::Predicted& p = v.predicted;
    const std::optional<double>& err = v.error_cpu_percent;
    const Table7Verdict verdict = table7_verdict(v);
    const std::optional<double> cycles_pct =
        verdict.cycles_error_share ? std::optional<double>(100 * *verdict.cycles_error_share) : std::nullopt;
    // An emulator's rows say so: its cycles and CPU points are the
    // emulator's, comparable with each other, not with a host's.
    out += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.tracer,
                       v.emulated ? fmt::format(" ({}, emulated)", v.execution) : "", r.scenario, r.workload,
                       num(m.rate_hz, "{:.0f}"), num(p.probe_cycles, "{:.0f}"), num(m.probe_cycles, "{:.0f}"),
                       num(p.cpu_percent, "{:.2f}"), num(m.cpu_percent, "{:.2f}"), num(err, "{:+.2f}"),
                       num(cycles_pct, "{:+.0f}%"), num(m.untraced_spread_ns_per_event, "{:.0f}"), verdict.text,
                       term_off(v));
    if (rounds) {
      out.pop_back();  // the newline
      std::vector<std::string> e;
      for (double x : r.round_errors) e.push_back(fmt::format("{:+.2f}", x));
      out += fmt::format(" {} |\n", e.empty() ? "—" : fmt::format("{}", fmt::join(e, " ")));
    }
  }
  return out;
}

}  // namespace tracebench::model
