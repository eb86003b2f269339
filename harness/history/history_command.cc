// `tracebench history add RUN... | show BENCHMARK | changes [BENCHMARK...]`:
// runs ingested into a SQLite database (default results/history.sqlite),
// each benchmark's figure as a series per machine (host fingerprint) across
// kernels and commits, and the change points in it (tracebench/changepoint.h).
//
// The database: PRAGMA user_version 1; tables runs (one row per run id) and
// benchmarks (one row per run and benchmark).  `add` reads and checks every
// named run before it opens the database, then writes them in one
// transaction: a bad run changes nothing, a run already there is skipped.
#include <sqlite3.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <variant>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tracebench/changepoint.h"
#include "tracebench/command.h"
#include "tracebench/compare.h"
#include "tracebench/results.h"

namespace tracebench {
namespace {

namespace fs = std::filesystem;
constexpr int kSchemaVersion = 1;

// A machine's stable facts, not its name: the same host renamed is the same
// machine, another CPU or hypervisor under the same name is not.
std::string fingerprint(const RunContext& c) {
  const std::string facts = fmt::format("{}|{}|{}|{}|{:.0f}", c.cpu_model, c.cpus, c.virtualized ? c.hypervisor : "-",
                                        c.execution, c.tsc_hz / 1e6);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : facts) h = (h ^ ch) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

class Db {
 public:
  ~Db() {
    if (db_) sqlite3_close(db_);
  }
  Status open(const std::string& path, bool create) {
    if (!create && !fs::exists(path)) return Status::error(path + ": no history database (tracebench history add RUN...)");
    if (sqlite3_open_v2(path.c_str(), &db_, create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY,
                        nullptr) != SQLITE_OK)
      return Status::error(path + ": " + (db_ ? sqlite3_errmsg(db_) : "cannot open"));
    int version = 0;
    TB_TRY(query("PRAGMA user_version", {}, [&](sqlite3_stmt* s) { version = sqlite3_column_int(s, 0); }));
    if (version > kSchemaVersion)
      return Status::error(fmt::format("{}: history schema version {} is newer than this tracebench reads ({})", path,
                                       version, kSchemaVersion));
    if (version == 0 && create) {
      TB_TRY(exec(
          "CREATE TABLE IF NOT EXISTS runs(run_id TEXT PRIMARY KEY, date_utc TEXT NOT NULL, git_sha TEXT, "
          "host TEXT, host_fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, execution TEXT, file TEXT);"
          "CREATE TABLE IF NOT EXISTS benchmarks(run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL, "
          "tracer TEXT, workload TEXT, action TEXT, payload_bytes INTEGER, threads INTEGER, options TEXT, status TEXT, "
          "verification TEXT, what TEXT, value_ns REAL, low_ns REAL, high_ns REAL, overhead_cycles REAL, "
          "baseline_ns REAL, traced_ns REAL, PRIMARY KEY(run_id, name));"
          "PRAGMA user_version = 1;"));
    } else if (version == 0) {
      return Status::error(path + ": not a tracebench history database");
    }
    return Status::ok();
  }
  Status exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : "error";
      sqlite3_free(err);
      return Status::error("sqlite: " + m);
    }
    return Status::ok();
  }
  // Binds text/number parameters in order; calls `row` per result row.
  template <typename F>
  Status query(const std::string& sql, const std::vector<std::variant<std::string, double, std::int64_t, std::nullptr_t>>& args,
               F row) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      return Status::error(std::string("sqlite: ") + sqlite3_errmsg(db_));
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(s, sqlite3_finalize);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const int k = static_cast<int>(i + 1);
      if (auto* t = std::get_if<std::string>(&args[i])) sqlite3_bind_text(s, k, t->c_str(), -1, SQLITE_TRANSIENT);
      else if (auto* d = std::get_if<double>(&args[i])) sqlite3_bind_double(s, k, *d);
      else if (auto* n = std::get_if<std::int64_t>(&args[i])) sqlite3_bind_int64(s, k, *n);
      else sqlite3_bind_null(s, k);
    }
    for (;;) {
      const int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) return Status::ok();
      if (rc != SQLITE_ROW) return Status::error(std::string("sqlite: ") + sqlite3_errmsg(db_));
      row(s);
    }
  }
  Status run(const std::string& sql, const std::vector<std::variant<std::string, double, std::int64_t, std::nullptr_t>>& args) {
    return query(sql, args, [](sqlite3_stmt*) {});
  }

 private:
  sqlite3* db_ = nullptr;
};

using Value = std::variant<std::string, double, std::int64_t, std::nullptr_t>;

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

int cmd_add(const Args& a) {
  std::vector<std::string> files;
  for (const auto& r : a.runs)
    if (Status s = result_files(r, &files); !s) return fail("add", s.message());
  std::vector<RunResult> runs(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    Status s = read_run(files[i], &runs[i]);
    if (s) s = check_comparable(runs[i], files[i]);
    if (s && !runs[i].context.complete) s = Status::error(files[i] + ": the run did not finish (context.complete is false)");
    if (!s) return fail("add", s.message() + " (nothing was added)");
  }
  if (const fs::path parent = fs::path(a.db).parent_path(); !parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
  }
  Db db;
  if (Status s = db.open(a.db, true); !s) return fail("add", s.message());
  if (Status s = db.exec("BEGIN IMMEDIATE"); !s) return fail("add", s.message());
  int added = 0, known = 0;
  Status st = Status::ok();
  for (std::size_t i = 0; st && i < runs.size(); ++i) {
    const RunContext& c = runs[i].context;
    bool exists = false;
    st = db.query("SELECT 1 FROM runs WHERE run_id = ?", {c.run_id}, [&](sqlite3_stmt*) { exists = true; });
    if (!st) break;
    if (exists) {
      ++known;
      continue;
    }
    st = db.run("INSERT INTO runs VALUES(?,?,?,?,?,?,?,?)",
                {c.run_id, c.date_utc, c.git_sha, c.host, fingerprint(c), c.kernel_release, c.execution,
                 fs::absolute(files[i]).string()});
    for (const auto& b : runs[i].benchmarks) {
      if (!st) break;
      std::string opts;
      for (const auto& [k, v] : b.options) opts += (opts.empty() ? "" : ",") + k + "=" + v;
      // The figure a series follows: what compare compares (the none
      // tracer's own cost, else the overhead).
      const bool base = b.tracer == "none";
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
      st = db.run("INSERT INTO benchmarks VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  {c.run_id, b.name, b.tracer, b.workload, b.action, static_cast<std::int64_t>(b.payload_bytes),
                   static_cast<std::int64_t>(b.threads), opts, b.status, b.events.verification,
                   std::string(base ? "baseline" : "overhead"), value, low, high,
                   b.overhead_cycles ? Value(b.overhead_cycles->median) : Value(nullptr),
                   b.baseline.ns.n ? Value(b.baseline.ns.p50) : Value(nullptr),
                   b.traced.ns.n ? Value(b.traced.ns.p50) : Value(nullptr)});
    }
    ++added;
  }
  if (!st) {
    db.exec("ROLLBACK");
    return fail("add", st.message() + " (nothing was added)");
  }
  if (Status s = db.exec("COMMIT"); !s) return fail("add", s.message());
  std::cout << fmt::format("history: {} run(s) added, {} already there ({})\n", added, known, a.db);
  return 0;
}

struct Point {
  std::string run_id, date, git, kernel, host, fp;
  double value = 0, low = 0, high = 0;
  std::string what;
};

Status series_of(Db& db, const std::string& name, const std::string& host, std::map<std::string, std::vector<Point>>* out) {
  return db.query(
      "SELECT r.run_id, r.date_utc, r.git_sha, r.kernel, r.host, r.host_fingerprint, b.value_ns, b.low_ns, b.high_ns, "
      "b.what FROM benchmarks b JOIN runs r ON r.run_id = b.run_id WHERE b.name = ? AND b.value_ns IS NOT NULL "
      "AND (? = '' OR r.host = ? OR r.host_fingerprint = ?) ORDER BY r.date_utc, r.run_id",
      {name, host, host, host}, [&](sqlite3_stmt* s) {
        auto text = [&](int i) {
          const unsigned char* t = sqlite3_column_text(s, i);
          return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
        };
        Point p{text(0), text(1), text(2), text(3), text(4), text(5), sqlite3_column_double(s, 6),
                sqlite3_column_double(s, 7), sqlite3_column_double(s, 8), text(9)};
        (*out)[p.fp].push_back(p);
      });
}

ChangePointOptions cp_options(const Args& a) {
  ChangePointOptions o;
  o.alpha = a.alpha;
  o.min_change = a.min_change;
  return o;
}

int cmd_show(const Args& a) {
  Db db;
  if (Status s = db.open(a.db, false); !s) return fail("show", s.message());
  std::map<std::string, std::vector<Point>> series;
  if (Status s = series_of(db, a.benchmarks.at(0), a.host, &series); !s) return fail("show", s.message());
  if (series.empty()) return fail("show", "no figures of " + a.benchmarks[0] + " in " + a.db);
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [fp, pts] : series) {
    std::vector<double> v;
    for (const auto& p : pts) v.push_back(p.value);
    const auto changes = change_points(v, cp_options(a));
    std::set<std::size_t> at;
    for (const auto& c : changes) at.insert(c.index);
    if (!a.json) {
      std::cout << fmt::format("{} on {} (machine {}), {} ns per event ({} runs)\n", a.benchmarks[0], pts[0].host, fp,
                               pts[0].what, pts.size());
      std::cout << fmt::format("  {:<21} {:<26} {:<12} {:>10} {:>22}\n", "date", "kernel", "git", "median", "interval");
      for (std::size_t i = 0; i < pts.size(); ++i)
        std::cout << fmt::format("{} {:<21} {:<26} {:<12} {:>10.2f} {:>22}\n", at.count(i) ? '>' : ' ', pts[i].date,
                                 pts[i].kernel, pts[i].git.substr(0, 12), pts[i].value,
                                 fmt::format("[{:.2f}, {:.2f}]", pts[i].low, pts[i].high));
      for (const auto& c : changes)
        std::cout << fmt::format("  change at {} ({}): {:.2f} -> {:.2f} ns ({:+.1f}%), p {:.3f}\n", pts[c.index].date,
                                 pts[c.index].run_id, c.before_median, c.after_median, 100 * c.relative_change, c.p_value);
    }
    nlohmann::json pj = nlohmann::json::array(), cj = nlohmann::json::array();
    for (const auto& p : pts)
      pj.push_back({{"run_id", p.run_id}, {"date_utc", p.date}, {"git_sha", p.git}, {"kernel", p.kernel},
                    {"value_ns", p.value}, {"low_ns", p.low}, {"high_ns", p.high}});
    for (const auto& c : changes)
      cj.push_back({{"index", c.index}, {"run_id", pts[c.index].run_id}, {"before_ns", c.before_median},
                    {"after_ns", c.after_median}, {"relative_change", c.relative_change}, {"p_value", c.p_value}});
    j.push_back({{"benchmark", a.benchmarks[0]}, {"host", pts[0].host}, {"host_fingerprint", fp}, {"what", pts[0].what},
                 {"points", pj}, {"changes", cj}});
  }
  if (a.json) std::cout << j.dump(2) << "\n";
  return 0;
}

int cmd_changes(const Args& a) {
  Db db;
  if (Status s = db.open(a.db, false); !s) return fail("changes", s.message());
  std::vector<std::string> names = a.benchmarks;
  if (names.empty()) {
    Status s = db.query("SELECT DISTINCT name FROM benchmarks ORDER BY name", {}, [&](sqlite3_stmt* st) {
      names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    });
    if (!s) return fail("changes", s.message());
  }
  int slower = 0, found = 0;
  for (const auto& name : names) {
    std::map<std::string, std::vector<Point>> series;
    if (Status s = series_of(db, name, a.host, &series); !s) return fail("changes", s.message());
    for (const auto& [fp, pts] : series) {
      std::vector<double> v;
      for (const auto& p : pts) v.push_back(p.value);
      for (const auto& c : change_points(v, cp_options(a))) {
        ++found;
        if (c.relative_change > 0) ++slower;
        std::cout << fmt::format("{} on {}: {} at {} (run {}, kernel {}): {:.2f} -> {:.2f} ns ({:+.1f}%), p {:.3f}\n",
                                 name, pts[0].host, c.relative_change > 0 ? "slower" : "faster", pts[c.index].date,
                                 pts[c.index].run_id, pts[c.index].kernel, c.before_median, c.after_median,
                                 100 * c.relative_change, c.p_value);
      }
    }
  }
  std::cout << fmt::format("history: {} change(s) in {} benchmark(s), {} slower\n", found, names.size(), slower);
  if (a.fail_on_change && slower > 0) {
    std::cerr << "tracebench history changes: failing (--fail-on-change): " << slower << " change(s) made a benchmark slower\n";
    return 1;
  }
  return 0;
}

void install(CLI::App& app, int* exit_status) {
  auto* h = app.add_subcommand("history", "Results history: runs in a SQLite database, series, change points");
  h->require_subcommand(1);
  auto a = std::make_shared<Args>();
  auto db_opt = [&](CLI::App* c) { c->add_option("--db", a->db, "The history database")->capture_default_str(); };
  auto* add = h->add_subcommand("add", "Add runs (idempotent; a bad run refuses the lot and changes nothing)");
  add->add_option("RUN", a->runs, "Run directories, result.json files, or directories of runs")->required();
  db_opt(add);
  add->callback([a, exit_status] { *exit_status = cmd_add(*a); });
  auto* show = h->add_subcommand("show", "A benchmark's series per machine, with its change points");
  show->add_option("BENCHMARK", a->benchmarks, "The benchmark's name as in result.json")->required()->expected(1);
  show->add_option("--host", a->host, "Only this host (name or fingerprint)");
  show->add_flag("--json", a->json, "Print JSON");
  db_opt(show);
  auto* changes = h->add_subcommand("changes", "Change points in every (or the named) benchmark's series");
  changes->add_option("BENCHMARK", a->benchmarks, "Benchmark names (default: all)");
  changes->add_option("--host", a->host, "Only this host (name or fingerprint)");
  changes->add_flag("--fail-on-change", a->fail_on_change, "Exit 1 when a change made a benchmark slower");
  db_opt(changes);
  for (CLI::App* c : {show, changes}) {
    c->add_option("--alpha", a->alpha, "Significance level of the permutation test")->capture_default_str()->check(CLI::Range(0.001, 0.5));
    c->add_option("--min-change", a->min_change, "Relative change below which a change is not reported")->capture_default_str()->check(CLI::Range(0.0, 10.0));
  }
  show->callback([a, exit_status] { *exit_status = cmd_show(*a); });
  changes->callback([a, exit_status] { *exit_status = cmd_changes(*a); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(history, tracebench::Command{"history", tracebench::install});
