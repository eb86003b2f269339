// The cost model (harness/model/README.md: Tao & Yang's equations in the form
// the suite fits for Linux tracers): parameters fitted from result files,
// and predictions of what tracing a workload costs.
//
// For a probe point traced by tracer T with probe kind K and action a, with
// N handlers (ECBs, programs, events) of which the extra ones hold their
// predicate with probability p, recording b payload bytes, fired by t threads:
//
//   Cost(P) = fixed + b * per_byte + (N - 1) * (false_predicate + p * (per_ecb - false_predicate))
//             + contention(t) + (w' - w_fit) * probe_per_wakeup                   (eq. 4)
//             + (bursts/s / rate) * idle_start
//   Cost_D  = records/s * (consumer_per_record + b * consumer_per_record_byte)
//             + (wakeups/s - idle wakeups/s) * consumer_per_wakeup
//             + idle wakeups/s * consumer_per_idle_wakeup
//             + enables/s * (consumer_per_enable + (N - 1) * consumer_per_enable_ecb)  (eqs. 5-6)
//   Cost_A  = u * Cost_D, Cost_C = (1 - u) * Cost_D   (u: the consumer's user share)
//   Cost_B  = sum over probes of rate * Cost(P)
//   CPU %   = 100 * (Cost_A + Cost_B + Cost_C) / f_TSC                             (eqs. 7-8)
//
// `fixed` is the measured overhead of one handler, no predicate, payload 0,
// one thread: flow (stages 1, 2, 4, 5) + one handler + the action together.
// The consumer terms are the consumer's measured CPU time (result.json's
// `consumer`: reader threads, daemons, reads on the measuring thread) per
// record, per recorded byte and per wakeup, a least-squares fit over
// benchmarks; its idle time over the benchmark (timers, baseline blocks) is
// spread over the records and wakeups, there being no separate daemon term.
// `probe_per_wakeup` is what the probe itself pays for each consumer wakeup
// it causes (an eBPF ring buffer's irq_work, a perf wakeup): `fixed` was
// measured at the entry's own w_fit wakeups per record (a hot loop wakes the
// reader on most records), a paced workload wakes it on few; w is the
// scenario's wakeups per firing.
//
// A hot loop never lets the CPUs idle; a workload that fires in bursts does.
// `idle_start` is what the first event of a burst costs beyond `fixed` when
// it follows an idle gap (~1 ms: the consumer asleep on an idle CPU, caches
// and predictors cold), measured by runs with a sleep before each sample
// (`run --gap-us`); a burst's first wakeup is its idle wakeup, so w' is the
// wakeups per firing less the bursts'.  `consumer_per_idle_wakeup` is what
// waking such a sleeping consumer costs it (the paper's Table 5, a context
// switch on an idle system), from the same runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/model_description.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench::model {

inline constexpr const char* kModelSchema = "tracebench.model";
// 2: consumer terms fitted; 3: probe_per_wakeup; 4: consumer_per_enable; 5: idle_start, consumer_per_idle_wakeup;
// 6: consumer_per_enable_ecb; 7: action_over_empty; 8: fit.fixed_direct, context.simulated_host
inline constexpr int kModelSchemaVersion = 8;

// The action of an adapter's handler that runs and does nothing (eBPF's empty
// program, the D-VM's clause with no action): its `fixed` is the flow alone,
// the Table 6 analog, and what another action adds to it is that action's
// cost, the Table 4 analog (Entry::action_over_empty).
inline constexpr const char* kEmptyAction = "empty";

// One parameter: a value with its 95% interval, or why it has none.
struct Param {
  std::optional<double> cycles;  // absent: `missing` says why
  double ci_low = 0, ci_high = 0;
  std::size_t n = 0;    // observations (repetitions) it rests on
  std::string missing;  // the reason, and what would produce it
  bool ok() const { return cycles.has_value(); }
  static Param absent(std::string why) {
    Param p;
    p.missing = std::move(why);
    return p;
  }
};

// The payload fit's points and quality.
struct FitPoint {
  std::uint64_t payload_bytes = 0;
  double median_cycles = 0, predicted_cycles = 0;
  std::size_t n = 0;
};

struct Entry {
  std::string tracer, probe_kind, action;
  // The benchmarks' tracer options (a configuration: another wakeup policy
  // or buffer size is another entry), less the handler sweep's keys.
  std::map<std::string, std::string> options;
  std::vector<std::string> workloads;  // the benchmarks' workloads it was fitted from
  Param fixed, per_byte, per_ecb, false_predicate;
  Param consumer_per_record, consumer_per_record_byte, consumer_per_wakeup;
  // What one enable/disable cycle costs the consumer apart from its records
  // (an LTTng session's start and stop, a read pass at disable).
  Param consumer_per_enable;
  // What one enable/disable cycle costs the consumer for each extra handler
  // (an ftrace instance's event, an LTTng event rule), from the handler
  // sweep's runs whose extra predicates fail (their handlers record nothing).
  Param consumer_per_enable_ecb;
  // The probe's own cost per consumer wakeup it causes, and the wakeups per
  // record of this entry's runs (what `fixed` includes).
  Param probe_per_wakeup;
  std::optional<double> wakeups_per_record;
  // After an idle gap (runs with `--gap-us`): the extra cycles of a burst's
  // first event, and what waking a consumer asleep on an idle CPU costs it;
  // with the gap they were measured after (µs).
  Param idle_start, consumer_per_idle_wakeup;
  // What this action costs over the empty handler (kEmptyAction) of the same
  // tracer, probe kind and configuration: fixed minus the empty entry's fixed
  // (the Table 4 analog), its interval draw by draw from the two fits'
  // bootstrap draws (independent runs).
  Param action_over_empty;
  std::optional<double> idle_gap_us;
  // The configuration whose hot line (fixed, per_byte) a burst's other
  // events cost, when not this entry's own: one pooled with it whose runs
  // woke no consumer (another wakeup policy), this entry's hot runs waking
  // it.  idle_start is measured against that line, and predicted with it.
  std::optional<std::map<std::string, std::string>> idle_base_options;
  std::map<int, Param> contention;              // threads -> extra cycles per event over one thread
  std::optional<double> r2;                     // of the payload fit (>= 2 payload sizes)
  std::optional<double> worst_residual_cycles;  // largest |median - fit| over the payload sizes
  std::vector<FitPoint> points;
  // A line's `fixed` (its intercept) set against the runs at payload 0
  // measured directly: their median with its order-statistic interval, and
  // whether they agree (the intervals meet, or the figures are within ±25%
  // of the direct one).  A line through sizes on two levels (a
  // consumer asleep in some runs, awake in others) can miss its own point at
  // 0 by a factor; model.md then says so.  Absent without a line or a run at 0.
  struct DirectCheck {
    double median = 0, low = 0, high = 0, confidence = 0;
    std::size_t n = 0;
    bool agrees = true;
  };
  std::optional<DirectCheck> fixed_direct;
  // The handler-count lines' quality ([0] predicate false, [1] acting): a
  // knee in the sweep shows as a low R² and a large residual, not hidden.
  struct LineQuality {
    double r2 = 0, worst_residual_cycles = 0;
    std::size_t points = 0;
  };
  std::optional<LineQuality> handler_fit[2];
  // The consumer fit: cycles per record regressed on payload bytes and
  // wakeups per record over the benchmarks that have a consumer figure.
  struct ConsumerFit {
    std::size_t points = 0;
    double r2 = 0, worst_residual_cycles = 0;  // per record
    std::optional<double> user_fraction;       // of the consumer's time, from /proc ticks
    std::uint64_t ticks = 0;                   // what the split rests on
    std::string user_fraction_missing;         // why there is no split
    // A consumer on its own timer: where consumer_per_wakeup (a pass) was
    // measured instead of fitted here ("" = fitted here).
    std::string per_wakeup_from;
  };
  std::optional<ConsumerFit> consumer_fit;
};

struct Model {
  std::string host, cpu_model, kernel_release, execution = "host";
  bool emulated = false;
  // The simulated host its runs were made on (host_simulation.h; "" for
  // none): such a model predicts that simulation, never a real host.
  std::string simulated_host;
  double tsc_hz = 0;
  std::vector<std::string> runs;  // run ids fitted from
  std::vector<Entry> entries;
  const Entry* find(const std::string& tracer, const std::string& probe_kind, const std::string& action,
                    const std::map<std::string, std::string>& options = {}) const;
};

// Fits a model from runs of one machine and kernel (refuses a mix: emulated
// with host, other hosts, kernels or TSC rates).  `bootstrap` resamples the
// repetitions this many times (fixed seed: the same input gives the same model).
Status fit(const std::vector<RunResult>& runs, Model* out, int bootstrap = 1000);

// The model's files: model.json (results/model.schema.json), model.md, model.csv.
nlohmann::json to_json(const Model& m);
Status from_json(const nlohmann::json& j, Model* m);
std::string to_markdown(const Model& m);
// An entry's action with its configuration, as the tables show it:
// "ringbuf (poll_ms=2, wakeup=no_wakeup)".
std::string action_label(const Entry& e);
std::string to_csv(const Model& m);

// A scenario to predict (SCENARIO.json): probes and consumers.
struct ProbeLoad {
  std::string tracer, probe_kind, action;
  std::uint64_t payload_bytes = 0;
  int handlers = 1;
  double predicate_true = 1;  // of each extra handler
  double rate_hz = 0;
  int threads = 1;
  // The consumer wakeups its records cause per second, when known: with the
  // entry's probe_per_wakeup, the firing cost moves from the entry's own
  // wakeups per record to these.
  std::optional<double> wakeups_hz;
  // Which configuration's entry; needed only when the model has several.
  std::optional<std::map<std::string, std::string>> options;
  // Bursts per second whose first event follows an idle gap (a paced
  // workload: one per period); each costs the entry's idle_start.
  double bursts_hz = 0;
};
struct ConsumerLoad {
  std::string tracer, probe_kind, action;  // the entry whose consumer parameters apply
  double records_hz = 0, wakeups_hz = 0;
  std::uint64_t payload_bytes = 0;  // per record
  double enables_hz = 0;            // enable/disable cycles per second (0: tracing runs throughout)
  int handlers = 1;                 // on the probe point: each extra one's enable cycles at consumer_per_enable_ecb
  std::optional<std::map<std::string, std::string>> options;
  // Of wakeups_hz, those that find the consumer asleep on an idle CPU (at
  // most one per burst): costed at consumer_per_idle_wakeup.
  double idle_wakeups_hz = 0;
};
struct Scenario {
  std::vector<ProbeLoad> probes;
  std::vector<ConsumerLoad> consumers;
};
Status scenario_from_json(const nlohmann::json& j, Scenario* s);

// An entry's terms by their model.json names ("fixed", "per_byte", ...,
// "contention_<threads>").
std::vector<std::pair<std::string, const Param*>> named_params(const Entry& e);

// The largest magnitude a model term may have, in cycles: a second of a GHz
// CPU per event; beyond it a term is not a cost but a damaged file.
inline constexpr double kMaxTermCycles = 1e9;
// A model's terms as costs (from_json and fit apply it): every value and
// bound finite and within kMaxTermCycles, each interval ordered and near
// its value, and `fixed` not negative beyond a disabled probe's noise with
// its whole interval.  The message names the entry and the term.
Status check_model_terms(const Model& m);
// Why a fitted cost term (`fixed`, `per_byte`, `per_ecb`, `false_predicate`,
// `idle_start`: costs measured directly, not differences) is not a cost:
// negative beyond a disabled probe's noise with its whole interval below
// zero.  "" when it is one, or is absent, or is another term.
std::string negative_cost(const std::string& term, const Param& p);
// Whether the runs pinned a fitted term down: false when its 95% interval
// is over ten times as wide as its value (model.md shows it as "not
// determined here" and names the runs that would); true when absent.
bool determined(const Param& p);
// A fitted entry's fixed cost against the figures it was fitted from (its
// payload points): far outside them, the fit was fed inconsistent runs.
Status check_fixed_against_points(const Model& m);

struct ProbeCost {
  double cycles = 0;         // eq. 4, per firing
  double wakeup_cycles = 0;  // of which the wakeup term ((w - w_fit) * probe_per_wakeup)
  std::string wakeup_note;   // wakeups given but the term not applied: why
  double idle_cycles = 0;    // of which the bursts' term ((bursts / rate) * idle_start)
  double cycles_per_s = 0;   // rate * cycles
  double cpu_percent = 0;
};
struct Prediction {
  std::vector<ProbeCost> probes;
  double cost_a = 0, cost_b = 0, cost_c = 0;  // cycles per second (eqs. 7-8)
  // A consumer whose user/kernel split the model lacks (too few ticks): its
  // cycles are known, whether they are Cost_A or Cost_C is not.
  double cost_ac_unsplit = 0;
  std::string split_missing;  // why, when cost_ac_unsplit > 0
  double cpu_percent_a = 0, cpu_percent_b = 0, cpu_percent_c = 0, cpu_percent_ac_unsplit = 0, cpu_percent = 0;
  double consumer_cpu_percent() const { return cpu_percent_a + cpu_percent_c + cpu_percent_ac_unsplit; }
};

// Eqs. 4-8.  An error names the parameter a probe or consumer needs and the
// model lacks.
Status predict(const Model& m, const Scenario& s, Prediction* out);
// A prediction as a cost: no probe's cycles and no part of the consumers'
// CPU below zero (signed terms, such as the consumer's least-squares ones,
// may add up to less).  `model predict` refuses such a prediction, naming
// the entry, rather than print a negative cost or CPU share; `model
// validate` shows it with a warning that the fit does not hold.
Status check_prediction_costs(const Scenario& s, const Prediction& p);
nlohmann::json to_json(const Scenario& s, const Prediction& p);
std::string to_text(const Scenario& s, const Prediction& p);

// --- `tracebench model validate`: the Table 7 analog ---------------------
// A workload fired at a paced rate for some seconds on the measured CPU, in
// segments alternating untraced (tracer attached, disabled) and traced; the
// firing thread's CPU time per event, the consumer's CPU time, and the whole
// machine's busy time (/proc/stat, the independent check) measured per
// segment; against what the model predicts for the rates achieved.  CPU
// shares are percent of one CPU.
struct ValidationScenario {
  std::string tracer, workload, probe_kind, action;
  std::map<std::string, std::string> options;  // the configuration (the model entry's), without the two below
  int handlers = 1;                            // option ecbs: handlers on the probe point
  double predicate_true = 1;                   // option extra_predicate: whether the extra handlers' predicates hold
  std::uint64_t payload_bytes = 0;
  double rate_hz = 0;  // requested
  double seconds = 0;
  // The scenario's probe as `predict` takes it, firing at `rate`.
  ProbeLoad probe_load(double rate) const;
};
struct ValidationSegment {
  bool traced = false;
  double wall_ns = 0, thread_cpu_ns = 0, machine_busy_ns = 0;
  std::uint64_t events = 0;
  double consumer_cpu_ns = 0;  // traced: consumer tasks + reads on the firing thread (disable)
  // Traced: of it, the consumer tasks' own time (schedstat), and the same
  // threads' perf task-clock, an independent count (absent where perf could
  // not count them or the tracer names no consumer task).
  double consumer_tasks_ns = 0;
  std::optional<double> consumer_tasks_perf_ns;
  std::uint64_t consumer_tasks_switches = 0;  // their context switches (perf), with the perf count
  // Traced: perf's task-clock was opened on the consumer tasks for this
  // segment.  validate opens it in two of the four traced segments, so what
  // counting them costs the tasks is measured (with against without).
  bool task_clock = false;
  std::uint64_t ticks = 0, late_ticks = 0;  // pacing periods, and those begun > 1 period late
  std::uint64_t bursts = 0;                 // periods that fired at least one event
  // The longest pacing period, start to next start: a process stopped
  // (SIGSTOP) or starved of the CPU shows as one period of that length.
  double longest_period_ns = 0;
};
struct ValidationMeasured {
  std::vector<ValidationSegment> segments;
  double drain_consumer_cpu_ns = 0;  // the final drain's reads and the tasks meanwhile
  // Events fired traced before the segments: the tracer's first passes
  // (Tracer::first_pass_events), verified with the rest, not in `records`.
  std::uint64_t first_pass_events = 0;
  std::uint64_t records = 0;  // what the consumer read of the segments' events
  std::optional<std::uint64_t> wakeups;
  // The consumer wakes on its timer from attach to drain, untraced segments
  // included: its rate is its wakeups over all segments, not the traced ones.
  bool wakes_on_timer = false;
  // A profile probe: its timer's firings the tracer saw in the traced
  // segments (judged against its clock): the probe's events, not the ops.
  std::optional<std::uint64_t> timer_firings;
  // The events the tracer saw (recorded + lost) and of them those lost.
  std::uint64_t seen = 0, lost = 0;
};
// What a validation must hold for its figures to test the model at the
// scenario's rate (`model validate` says so, Table 7's row too).
struct ValidationLimits {
  double min_rate_share = 0.9;   // of the rate asked, held over the traced segments
  double max_period_ms = 100;    // of a 1 ms pacing period: longer, the process was stopped or starved
  double max_lost_share = 0.05;  // of the events the tracer saw (model validate --max-lost-percent)
};
struct Validation {
  double rate_hz = 0;  // probe events per second achieved while traced (a profile probe's: its timer's)
  double ops_hz = 0;   // the workload's events (ops) per second while traced: the paced rate
  double untraced_ns_per_event = 0, traced_ns_per_event = 0;
  double probe_cycles = 0, probe_cpu_percent = 0, consumer_cpu_percent = 0, cpu_percent = 0;
  double system_busy_delta_percent = 0;     // machine busy, traced minus untraced
  double late_share = 0;                    // of the pacing periods
  double untraced_spread_ns_per_event = 0;  // max - min over the untraced segments: the noise
  // The probe's cycles per probe from each adjacent pair of segments, one
  // traced and one untraced, in segment order (probe_cycles_by_pair()): how
  // far the figure moves within the run, which Table 7 judges it against.
  std::vector<double> probe_cycles_pairs;
  // The consumer tasks' CPU share by schedstat (the traced segments), and in
  // the segments perf's task-clock counted, by both (the cross-check; absent
  // where perf could not count one of them).
  double consumer_tasks_cpu_percent = 0;
  std::optional<double> consumer_tasks_counted_cpu_percent, consumer_tasks_perf_cpu_percent;
  // schedstat minus task-clock per context switch of the tasks, in µs: the
  // switches into and out of them, which task-clock leaves out.
  std::optional<double> consumer_switch_gap_us;
  std::uint64_t consumer_tasks_switches = 0;
  // The consumer tasks' share (schedstat) in the traced segments where perf's
  // task-clock counted them minus in those where it did not, CPU points: what
  // the cross-check costs them, noise included (absent without both kinds).
  std::optional<double> task_clock_effect_percent;
  double predicted_probe_cycles = 0, predicted_probe_cpu_percent = 0;
  double predicted_wakeup_cycles = 0;         // of predicted_probe_cycles
  std::string wakeup_note;                    // wakeups measured, the term not applied: why
  double bursts_hz = 0, idle_wakeups_hz = 0;  // traced: bursts after an idle gap, and wakeups at most one per burst
  double predicted_idle_cycles = 0;           // of predicted_probe_cycles: the bursts' idle_start
  std::string idle_note;                      // bursts (or idle wakeups) not costed: why
  std::optional<double> predicted_consumer_cpu_percent, predicted_cpu_percent;
  std::string consumer_missing;  // why no consumer prediction
  std::vector<std::string> warnings;
  // Why the run did not hold the scenario (rate, a stop, lost events): the
  // figures are then of another load and the validation does not count as
  // agreeing or not (validation_problems()).
  std::vector<std::string> problems;
  double longest_period_ms = 0;
  double lost_share = 0;
  bool held() const { return problems.empty(); }
};
// The problems of a validation: a rate held below limits.min_rate_share of
// the asked, a pacing period longer than limits.max_period_ms, more events
// lost than limits.max_lost_share.  evaluate() fills Validation::problems
// with them.
std::vector<std::string> validation_problems(const ValidationScenario& s, const ValidationMeasured& x,
                                             const Validation& v, const ValidationLimits& limits);
// A validation file (results/validation.schema.json, `to_json` above) as the
// suite reads it back: the figures Table 7 shows, typed, and the document
// as it was read (passed on unchanged).
struct ValidationFile {
  struct Measured {
    double rate_hz = 0, probe_cycles = 0, probe_cpu_percent = 0, consumer_cpu_percent = 0, cpu_percent = 0;
    double untraced_spread_ns_per_event = 0;
    // The probe's measured cost per event (traced - untraced), ns; absent in
    // files that do not have both.
    std::optional<double> probe_ns_per_event;
    // Each segment pair's cycles per probe; empty in files written before
    // them.
    std::vector<double> probe_cycles_pairs;
  } measured;
  struct Predicted {
    double probe_cycles = 0, probe_cpu_percent = 0;
    std::optional<double> consumer_cpu_percent, cpu_percent;  // null: the model lacks the consumer
  } predicted;
  std::optional<double> error_cpu_percent;  // measured minus predicted; null without a prediction
  // Whether the run held its scenario, and why not; files written before
  // "conditions" existed held it.
  bool held = true;
  std::vector<std::string> problems;
  // The model's context: an emulator's figures are the emulator's.
  bool emulated = false;
  std::string execution;
  nlohmann::json document;
};
// Refuses a missing or ill-typed field, naming it ("measured.rate_hz is a
// string, not a number").
Status validation_from_json(const nlohmann::json& j, ValidationFile* out);
// Whether a validation held its scenario: false when its "conditions" say it
// did not; true for files written before conditions existed.
inline bool validation_held(const ValidationFile& v) { return v.held; }
// The measured figures and the prediction for them; an error when the model
// cannot predict the probe or a segment kind is missing.
Status evaluate(const Model& m, const ValidationScenario& s, const ValidationMeasured& x, Validation* out,
                const ValidationLimits& limits = {});
nlohmann::json to_json(const Model& m, const ValidationScenario& s, const ValidationMeasured& x, const Validation& v);
std::string to_text(const ValidationScenario& s, const Validation& v);

// `tracebench model suite`: per tracer, the held-out macro scenarios of
// Table 7 (its own description of them, Tracer::model()) and the runs that
// measure the parameters they need.
using SuiteScenario = ModelScenario;
// The registered tracer's description; empty for a tracer this binary lacks.
ModelDescription model_description(const std::string& tracer);
std::vector<SuiteScenario> suite_scenarios(const std::string& tracer);  // empty: no scenarios for it
// A tracer whose reader empties its buffer only between validation segments
// (ModelDescription::segment_buffer) must hold a whole segment's records,
// or the validation measures a tracer that drops: gives such scenarios a
// buffer for `segment_seconds` at their rate with room to spare, a power of
// two of KiB (at most 1 GiB per CPU; beyond, validate reports the loss).
void size_buffers(const ModelDescription& d, double segment_seconds, std::vector<SuiteScenario>* scenarios);
void size_buffers(const std::string& tracer, double segment_seconds, std::vector<SuiteScenario>* scenarios);
// The `tracebench run ...` argument lists, in order, each once (twice where
// the consumer's per-record term needs two figures).
std::vector<std::vector<std::string>> suite_runs(const std::string& tracer, const ModelDescription& d,
                                                 const std::vector<SuiteScenario>& scenarios, bool quick);
// The same, with the registered tracer's description.
std::vector<std::vector<std::string>> suite_runs(const std::string& tracer, const std::vector<SuiteScenario>& scenarios,
                                                 bool quick);
struct SuiteRow {
  std::string tracer, scenario, workload;
  std::optional<ValidationFile> validation;  // results/validation.schema.json
  std::string problem;                       // why there is none
  // With several rounds (`model suite --rounds N`): every round's error in
  // CPU points; `validation` is then the round whose error is the median
  // (a measured round, not an average), and "within ±2" is decided on it.
  std::vector<double> round_errors;
};
// Of several rounds' validations of one scenario, the one whose error is the
// median (of an even count, the middle one farther from zero: a tie never
// flatters the model); null when none has an error.  Fills `errors` with every round's error, in round order.
std::optional<ValidationFile> median_round(const std::vector<ValidationFile>& rounds, std::vector<double>* errors);
// The larger of the probe's and the consumer's error, in CPU points.
std::string term_off(const ValidationFile& validation);
// The probe's cycles per probe of each adjacent pair of segments (0-1, 2-3,
// ...; a validation alternates them ABBA, so each pair is one traced and one
// untraced segment side by side), in order; a pair of one kind is skipped.
// `firings_per_op` converts per op to per probe event (a profile probe).
std::vector<double> probe_cycles_by_pair(const std::vector<ValidationSegment>& segments, double firings_per_op,
                                         double tsc_hz);
// How a validation is judged in Table 7: the total CPU share within ±2
// points of the prediction, and the cycles per probe within ±25% of it.
// With at least kTable7MinPairs segment pairs, both are judged on the range
// of the pairs' figures, which holds their median with probability
// 1 - 2 / 2^pairs (87.5% at four); the points' range puts the probe's share
// at each end of it beside the consumer's.  Within when the whole range lies
// inside the bounds, not within when it lies wholly outside, "inside the
// noise" when it crosses a bound (this run cannot tell; longer segments
// can).  Files without pairs: inside the noise when the probe's cost is
// within the untraced segments' spread, else judged on the figures alone.
inline constexpr double kTable7Points = 2, kTable7CyclesShare = 0.25;
inline constexpr std::size_t kTable7MinPairs = 4;
struct Table7Verdict {
  std::optional<double> cycles_error_share;  // measured / predicted - 1
  // The pairs' range of cycles per probe, when there are pairs enough.
  std::optional<double> cycles_low, cycles_high;
  bool inside_noise = false;  // the measurement cannot tell whether the row is within its bounds
  bool passed = false;
  std::string text;  // the "within" column
};
Table7Verdict table7_verdict(const ValidationFile& validation);
std::string table7_markdown(const std::vector<SuiteRow>& rows);

}  // namespace tracebench::model
