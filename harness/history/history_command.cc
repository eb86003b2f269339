// `tracebench history add RUN... | show BENCHMARK | changes [BENCHMARK...]`:
// runs ingested into a history database (default results/history.sqlite; a
// postgresql:// URI names a server),
// each benchmark's figure as a series per machine (host fingerprint) across
// kernels and commits, and the change points in it (tracebench/changepoint.h).
//
// The database is history_db.h's, on either back end.  `add` reads and
// checks every named run before it opens the database, then writes them in
// one transaction: a bad run changes nothing, the same run added again is
// skipped, and a distinct run whose id is taken is kept under a derived id.
#include <filesystem>
#include <iostream>
#include <memory>
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "history_db.h"
#include "tracebench/cli_range.h"
#include "tracebench/command.h"
#include "tracebench/compare.h"
#include "tracebench/results.h"
#include "tracebench/suggest.h"
#include "tracebench/util.h"

namespace tracebench {
namespace {

namespace fs = std::filesystem;
using history::Db;
using history::Point;
using history::Row;
using history::Series;
using history::Value;

struct Args {
  std::string db = "results/history.sqlite";
  std::vector<std::string> runs, benchmarks;
  std::string host;
  double alpha = 0.05, min_change = 0;
  bool json = false, fail_on_change = false;
};

int fail(const char* what, const std::string& why) {
  std::cerr << "tracebench history " << what << ": " << why << "\n";
  return 2;
}

std::string absolute_path(const std::string& p) {
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec);
  return ec ? p : abs.string();
}

// A benchmark's figures as the benchmarks table holds them: what tells two
// runs apart when they carry one id.
using Figures = std::map<std::string, std::tuple<std::string, double, double>>;

Figures figures_of(const RunResult& r) {
  Figures f;
  for (const auto& b : r.benchmarks)
    f[b.name] = {b.status, b.baseline.ns.n ? b.baseline.ns.p50 : -1.0, b.traced.ns.n ? b.traced.ns.p50 : -1.0};
  return f;
}

// Whether the run stored under `id` is `r` added again, or another run with
// the same id: ids before sub-second ones were unique only per --out folder,
// so two runs made in one second in two folders share one.
Status stored_is_same(Db& db, const std::string& id, const RunResult& r, bool* same) {
  Figures stored;
  TB_TRY(
      db.query("SELECT name, status, baseline_ns, traced_ns FROM benchmarks WHERE run_id = ?", {id}, [&](const Row& s) {
        auto real = [&](int c) { return s.is_null(c) ? -1.0 : s.real(c); };
        stored[s.text(0)] = {s.text(1), real(2), real(3)};
      }));
  *same = stored == figures_of(r);
  return Status::ok();
}

// The id a run is stored under: its own, or, when another run already holds
// that one, the id with its result.json's hash appended (the same for every
// add of this run, so adding it again still finds it).
Status history_id(Db& db, const RunResult& r, const std::string& file, std::string* id, bool* known) {
  *id = r.context.run_id;
  *known = false;
  for (int round = 0; round < 2; ++round) {
    bool exists = false;
    TB_TRY(db.query("SELECT 1 FROM runs WHERE run_id = ?", {*id}, [&](const Row&) { exists = true; }));
    if (!exists) return Status::ok();
    bool same = false;
    TB_TRY(stored_is_same(db, *id, r, &same));
    if (same) {
      *known = true;
      return Status::ok();
    }
    if (round == 0) *id = r.context.run_id + "~" + sha256_file(file, false).substr(0, 12);
  }
  return Status::error(fmt::format("{}: run id {} is taken twice by other runs in {}", file, *id, "the history"));
}

// One benchmark's row of the benchmarks table, stored under run id `id`;
// its options column is the configuration its series is keyed by.
Status insert_benchmark(Db& db, const std::string& id, const RunContext& c, const BenchmarkResult& b) {
  const std::string opts = history::configuration_of(c, b);
  // The figure a series follows: what compare compares (the none tracer's
  // own cost, else the overhead).
  const bool base = b.tracer == kBaselineTracer;
  Value value = nullptr, low = nullptr, high = nullptr;
  if (b.status == "ok" && base && b.baseline.ns.n > 0) {
    value = b.baseline.ns.p50;
    low = b.baseline.ns.p10;
    high = b.baseline.ns.p90;
  }
  if (b.status == "ok" && !base && b.overhead_ns) {
    value = b.overhead_ns->median;
    low = b.overhead_ns->low;
    high = b.overhead_ns->high;
  }
  return db.run("INSERT INTO benchmarks VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                {id, b.name, b.tracer, b.workload, b.action, static_cast<std::int64_t>(b.payload_bytes),
                 static_cast<std::int64_t>(b.threads), opts, b.status, b.events.verification,
                 std::string(base ? "baseline" : "overhead"), value, low, high,
                 b.overhead_cycles ? Value(b.overhead_cycles->median) : Value(nullptr),
                 b.baseline.ns.n ? Value(b.baseline.ns.p50) : Value(nullptr),
                 b.traced.ns.n ? Value(b.traced.ns.p50) : Value(nullptr)});
}

// What one add did, decided inside its transaction (and decided again when
// the transaction runs again).
struct Added {
  int added = 0, known = 0;
  std::vector<std::string> renamed;  // "FILE: ... stored as ID" notes
};

// The body of add's transaction: every run stored (or found there already).
Status add_runs(Db& db, const std::vector<RunResult>& runs, const std::vector<std::string>& files, Added* out) {
  *out = Added{};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunContext& c = runs[i].context;
    std::string id;
    bool exists = false;
    TB_TRY(history_id(db, runs[i], files[i], &id, &exists));
    if (exists) {
      ++out->known;
      continue;
    }
    if (id != c.run_id)
      out->renamed.push_back(
          fmt::format("{}: another run already has its id {}; stored as {}", files[i], c.run_id, id));
    TB_TRY(
        db.run("INSERT INTO runs VALUES(?,?,?,?,?,?,?,?)", {id, c.date_utc, c.git_sha, c.host, history::fingerprint(c),
                                                            c.kernel_release, c.execution, absolute_path(files[i])}));
    for (const auto& b : runs[i].benchmarks) TB_TRY(insert_benchmark(db, id, c, b));
    ++out->added;
  }
  return Status::ok();
}

int cmd_add(const Args& a) {
  // A directory with no run in it (`history add results/*/` names the
  // folders of notes beside the runs) is passed over, said so; a bad run
  // still refuses the lot.
  std::vector<std::string> files, empty;
  for (const auto& r : a.runs) {
    const std::size_t before = files.size();
    if (Status s = result_files(r, &files, true); !s) return fail("add", s.message());
    if (files.size() == before) empty.push_back(r);
  }
  if (files.empty()) return fail("add", fmt::format("no run in {} (nothing was added)", fmt::join(a.runs, ", ")));
  if (!empty.empty())
    std::cerr << fmt::format("tracebench history add: no run in {}: passed over\n", fmt::join(empty, ", "));
  std::vector<RunResult> runs(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    Status s = read_run(files[i], &runs[i]);
    if (s) s = check_comparable(runs[i], files[i]);
    if (s && !runs[i].context.complete)
      s = Status::error(files[i] + ": the run did not finish (context.complete is false)");
    if (!s) return fail("add", s.message() + " (nothing was added)");
  }
  std::unique_ptr<Db> db;
  if (Status s = history::open_db(a.db, true, &db); !s) return fail("add", s.message());
  Added done;
  if (Status s = db->write([&] { return add_runs(*db, runs, files, &done); }); !s)
    return fail("add", s.message() + " (nothing was added)");
  for (const auto& note : done.renamed) std::cerr << "tracebench history add: " << note << "\n";
  std::cout << fmt::format("history: {} run(s) added, {} already there ({})\n", done.added, done.known, db->name());
  return 0;
}

ChangePointOptions cp_options(const Args& a) {
  ChangePointOptions o;
  o.alpha = a.alpha;
  o.min_change = a.min_change;
  return o;
}

// An unknown benchmark name: the error, with the nearest names the
// database holds.
std::string unknown_benchmark(Db& db, const std::string& name, const std::string& path, const std::string& host) {
  std::vector<std::string> names;
  std::string why = fmt::format("no figures of {} in {}", name, path);
  if (!history::benchmark_names(db, &names)) return why;
  if (std::find(names.begin(), names.end(), name) != names.end())
    return why + " (the benchmark is there, but none of its runs" + (host.empty() ? "" : " on host " + host) +
           " has a figure)";
  return why + did_you_mean(name, names) + " (`tracebench history list` lists the series)";
}

int cmd_list(const Args& a) {
  std::unique_ptr<Db> db;
  if (Status s = history::open_db(a.db, false, &db); !s) return fail("list", s.message());
  std::vector<history::SeriesCount> series;
  if (Status s = history::series_counts(*db, &series); !s) return fail("list", s.message());
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : series)
      j.push_back({{"benchmark", c.benchmark},
                   {"configuration", c.config},
                   {"host", c.host},
                   {"host_fingerprint", c.fp},
                   {"runs", c.runs},
                   {"runs_with_figure", c.with_figure},
                   {"first_date_utc", c.first_date},
                   {"last_date_utc", c.last_date}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::size_t width = 9, config_width = 13;
  for (const auto& c : series) {
    width = std::max(width, c.benchmark.size());
    config_width = std::max(config_width, history::configuration_label(c.config).size());
  }
  std::cout << fmt::format("{:<{}} {:<{}} {:<20} {:>5} {:>7}  {}\n", "benchmark", width, "configuration", config_width,
                           "host", "runs", "figures", "first .. last run");
  for (const auto& c : series)
    std::cout << fmt::format("{:<{}} {:<{}} {:<20} {:>5} {:>7}  {} .. {}\n", c.benchmark, width,
                             history::configuration_label(c.config), config_width, c.host, c.runs, c.with_figure,
                             c.first_date, c.last_date);
  std::cout << fmt::format("history: {} series in {}\n", series.size(), db->name());
  return 0;
}

int cmd_show(const Args& a) {
  std::unique_ptr<Db> db;
  if (Status s = history::open_db(a.db, false, &db); !s) return fail("show", s.message());
  std::vector<Series> series;
  if (Status s = history::series_of(*db, a.benchmarks.at(0), a.host, cp_options(a), &series); !s)
    return fail("show", s.message());
  if (series.empty()) return fail("show", unknown_benchmark(*db, a.benchmarks[0], db->name(), a.host));
  nlohmann::json j = nlohmann::json::array();
  for (const Series& ser : series) {
    const auto& pts = ser.points;
    j.push_back(history::to_json(ser));
    if (a.json) continue;
    std::set<std::size_t> at;
    for (const auto& c : ser.changes) at.insert(c.index);
    std::cout << fmt::format("{} ({}) on {} (machine {}), {} ns per event ({} runs)\n", a.benchmarks[0],
                             history::configuration_label(pts[0].config), pts[0].host, pts[0].fp, pts[0].what,
                             pts.size());
    std::cout << fmt::format("  {:<21} {:<26} {:<12} {:>10} {:>22}\n", "date", "kernel", "git", "median", "interval");
    for (std::size_t i = 0; i < pts.size(); ++i)
      std::cout << fmt::format("{} {:<21} {:<26} {:<12} {:>10.2f} {:>22}\n", at.count(i) ? '>' : ' ', pts[i].date,
                               pts[i].kernel, pts[i].git.substr(0, 12), pts[i].value,
                               fmt::format("[{:.2f}, {:.2f}]", pts[i].low, pts[i].high));
    for (const auto& c : ser.changes)
      std::cout << fmt::format("  change at {} ({}): {:.2f} -> {:.2f} ns ({:+.1f}%), p {:.3f}\n", pts[c.index].date,
                               pts[c.index].run_id, c.before_median, c.after_median, 100 * c.relative_change,
                               c.p_value);
  }
  if (a.json) std::cout << j.dump(2) << "\n";
  return 0;
}

int cmd_changes(const Args& a) {
  std::unique_ptr<Db> db;
  if (Status s = history::open_db(a.db, false, &db); !s) return fail("changes", s.message());
  std::vector<std::string> names = a.benchmarks;
  if (names.empty())
    if (Status s = history::benchmark_names(*db, &names); !s) return fail("changes", s.message());
  int slower = 0, found = 0;
  for (const auto& name : names) {
    std::vector<Series> series;
    if (Status s = history::series_of(*db, name, a.host, cp_options(a), &series); !s)
      return fail("changes", s.message());
    if (series.empty() && !a.benchmarks.empty())
      return fail("changes", unknown_benchmark(*db, name, db->name(), a.host));
    for (const Series& ser : series) {
      const auto& pts = ser.points;
      for (const auto& c : ser.changes) {
        ++found;
        if (c.relative_change > 0) ++slower;
        std::cout << fmt::format(
            "{} ({}) on {}: {} at {} (run {}, kernel {}): {:.2f} -> {:.2f} ns ({:+.1f}%), p {:.3f}\n", name,
            history::configuration_label(pts[0].config), pts[0].host, c.relative_change > 0 ? "slower" : "faster",
            pts[c.index].date, pts[c.index].run_id, pts[c.index].kernel, c.before_median, c.after_median,
            100 * c.relative_change, c.p_value);
      }
    }
  }
  std::cout << fmt::format("history: {} change(s) in {} benchmark(s), {} slower\n", found, names.size(), slower);
  if (a.fail_on_change && slower > 0) {
    std::cerr << "tracebench history changes: failing (--fail-on-change): " << slower
              << " change(s) made a benchmark slower\n";
    return 1;
  }
  return 0;
}

void install(CLI::App& app, int* exit_status) {
  auto* h = app.add_subcommand(
      "history", "Results history: runs in a SQLite file or a PostgreSQL database, series, change points");
  h->require_subcommand(1);
  auto a = std::make_shared<Args>();
  auto db_opt = [&](CLI::App* c) {
    c->add_option("--db", a->db, "The history: a SQLite file, or a postgresql:// (postgres://) connection URI")
        ->capture_default_str();
  };
  auto* add = h->add_subcommand("add", "Add runs (idempotent; a bad run refuses the lot and changes nothing)");
  add->add_option("RUN", a->runs, "Run directories, result.json files, or directories of runs")->required();
  db_opt(add);
  add->callback([a, exit_status] { *exit_status = cmd_add(*a); });
  auto* show = h->add_subcommand("show", "A benchmark's series per machine, with its change points");
  show->add_option("BENCHMARK", a->benchmarks, "The benchmark's name as in result.json")->required()->expected(1);
  show->add_option("--host", a->host, "Only this host (name or fingerprint)");
  show->add_flag("--json", a->json, "Print JSON");
  db_opt(show);
  auto* list = h->add_subcommand("list", "The series: each benchmark per machine, with its run counts");
  list->add_flag("--json", a->json, "Print JSON");
  db_opt(list);
  list->callback([a, exit_status] { *exit_status = cmd_list(*a); });
  auto* changes = h->add_subcommand("changes", "Change points in every (or the named) benchmark's series");
  changes->add_option("BENCHMARK", a->benchmarks, "Benchmark names (default: all)");
  changes->add_option("--host", a->host, "Only this host (name or fingerprint)");
  changes->add_flag("--fail-on-change", a->fail_on_change, "Exit 1 when a change made a benchmark slower");
  db_opt(changes);
  for (CLI::App* c : {show, changes}) {
    c->add_option("--alpha", a->alpha, "Significance level of the permutation test")
        ->capture_default_str()
        ->check(finite_range(0.001, 0.5));
    c->add_option("--min-change", a->min_change, "Relative change below which a change is not reported")
        ->capture_default_str()
        ->check(finite_range(0.0, 10.0));
  }
  show->callback([a, exit_status] { *exit_status = cmd_show(*a); });
  changes->callback([a, exit_status] { *exit_status = cmd_changes(*a); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(history, tracebench::Command{"history", tracebench::install});
