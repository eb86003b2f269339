#include "history_db.h"

#include "tracebench/util.h"

#include <sqlite3.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tracebench::history {

namespace fs = std::filesystem;

std::string fingerprint(const RunContext& c) {
  const std::string facts = fmt::format("{}|{}|{}|{}|{:.0f}", c.cpu_model, c.cpus, c.virtualized ? c.hypervisor : "-",
                                        c.execution, c.tsc_hz / 1e6);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : facts) h = (h ^ ch) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

namespace {

// What a SQLITE_BUSY after the busy timeout means.
std::string busy_advice() {
  return fmt::format(" (another process held the database's lock for the whole {} s this one waited; is a "
                     "`history add` stuck? try again when it has finished)",
                     kBusyTimeoutMs / 1000);
}

}  // namespace

Db::~Db() {
  if (db_) sqlite3_close(db_);
}

// Whether an existing database is ours: it carries our application_id, or
// (written before the id was set) user_version 1 and our two tables.  A file
// with any other schema is someone else's and is never written to.
Status Db::check_ours(const std::string& path, bool* empty) {
  int app_id = 0, version = 0, objects = 0, ours = 0;
  TB_TRY(query("PRAGMA application_id", {}, [&](sqlite3_stmt* s) { app_id = sqlite3_column_int(s, 0); }));
  TB_TRY(query("PRAGMA user_version", {}, [&](sqlite3_stmt* s) { version = sqlite3_column_int(s, 0); }));
  TB_TRY(query("SELECT count(*), count(CASE WHEN type = 'table' AND name IN ('runs', 'benchmarks') THEN 1 END) "
               "FROM sqlite_master",
               {}, [&](sqlite3_stmt* s) {
                 objects = sqlite3_column_int(s, 0);
                 ours = sqlite3_column_int(s, 1);
               }));
  *empty = app_id == 0 && version == 0 && objects == 0;
  if (*empty) return Status::ok();
  const bool tagged = app_id == kApplicationId;
  const bool legacy = app_id == 0 && version == 1 && ours == 2;
  if (!tagged && !legacy)
    return Status::error(fmt::format(
        "{}: not a tracebench history database (application_id {}, user_version {}, {} schema object(s)); it is "
        "left as it is: name another file with --db",
        path, app_id, version, objects));
  if (version > kSchemaVersion)
    return Status::error(fmt::format("{}: history schema version {} is newer than this tracebench reads ({})", path,
                                     version, kSchemaVersion));
  return Status::ok();
}

Status Db::open(const std::string& path, bool create) {
  std::error_code ec;
  if (!create && !fs::exists(path, ec) && !ec)
    return Status::error(path + ": no history database (tracebench history add RUN...)");
  // A FIFO or device under that name is refused before SQLite blocks on it.
  if (fs::exists(path, ec) || ec) TB_TRY(check_input_file(path, UINT64_MAX));
  if (sqlite3_open_v2(path.c_str(), &db_, create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY,
                      nullptr) != SQLITE_OK)
    return Status::error(path + ": " + (db_ ? sqlite3_errmsg(db_) : "cannot open"));
  // Another `history add` may hold the write lock: wait for it (its
  // transaction is one add, short) rather than fail at once.
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  if (!create) {
    bool empty = false;
    TB_TRY(check_ours(path, &empty));
    if (empty) return Status::error(path + ": not a tracebench history database (it is empty)");
    return Status::ok();
  }
  // The check and the schema in one write transaction, so that two adds on
  // a new file do not both take it for empty, and a foreign file is only read.
  TB_TRY(exec("BEGIN IMMEDIATE"));
  bool empty = false;
  Status s = check_ours(path, &empty);
  if (s && empty)
    s = exec(fmt::format(
        "CREATE TABLE runs(run_id TEXT PRIMARY KEY, date_utc TEXT NOT NULL, git_sha TEXT, "
        "host TEXT, host_fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, execution TEXT, file TEXT);"
        "CREATE TABLE benchmarks(run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL, "
        "tracer TEXT, workload TEXT, action TEXT, payload_bytes INTEGER, threads INTEGER, options TEXT, status TEXT, "
        "verification TEXT, what TEXT, value_ns REAL, low_ns REAL, high_ns REAL, overhead_cycles REAL, "
        "baseline_ns REAL, traced_ns REAL, PRIMARY KEY(run_id, name));"
        "PRAGMA application_id = {}; PRAGMA user_version = {};",
        kApplicationId, kSchemaVersion));
  if (!s) {
    (void)exec("ROLLBACK");
    return s;
  }
  return exec("COMMIT");
}

Status Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "error";
    sqlite3_free(err);
    if (sqlite3_errcode(db_) == SQLITE_BUSY) m += busy_advice();
    return Status::error("sqlite: " + m);
  }
  return Status::ok();
}

Status Db::prepare(const std::string& sql, const std::vector<Value>& args, sqlite3_stmt** out) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
    return Status::error(std::string("sqlite: ") + sqlite3_errmsg(db_));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int k = static_cast<int>(i + 1);
    if (auto* t = std::get_if<std::string>(&args[i])) sqlite3_bind_text(s, k, t->c_str(), -1, SQLITE_TRANSIENT);
    else if (auto* d = std::get_if<double>(&args[i])) sqlite3_bind_double(s, k, *d);
    else if (auto* n = std::get_if<std::int64_t>(&args[i])) sqlite3_bind_int64(s, k, *n);
    else sqlite3_bind_null(s, k);
  }
  *out = s;
  return Status::ok();
}

Status Db::step(sqlite3_stmt* s, bool* has_row) {
  const int rc = sqlite3_step(s);
  *has_row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW) return Status::ok();
  sqlite3_finalize(s);
  if (rc == SQLITE_DONE) return Status::ok();
  return Status::error(std::string("sqlite: ") + sqlite3_errmsg(db_) + (rc == SQLITE_BUSY ? busy_advice() : ""));
}

Status series_of(Db& db, const std::string& name, const std::string& host, const ChangePointOptions& o,
                 std::vector<Series>* out) {
  std::map<std::string, std::vector<Point>> by_machine;
  TB_TRY(db.query(
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
        by_machine[p.fp].push_back(p);
      }));
  for (auto& [fp, pts] : by_machine) {
    Series s;
    s.benchmark = name;
    std::vector<double> v;
    for (const auto& p : pts) v.push_back(p.value);
    s.changes = change_points(v, o);
    s.points = std::move(pts);
    out->push_back(std::move(s));
  }
  return Status::ok();
}

Status benchmark_names(Db& db, std::vector<std::string>* out) {
  return db.query("SELECT DISTINCT name FROM benchmarks ORDER BY name", {}, [&](sqlite3_stmt* st) {
    out->emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  });
}

Status series_counts(Db& db, std::vector<SeriesCount>* out) {
  return db.query(
      "SELECT b.name, MAX(r.host), r.host_fingerprint, COUNT(*), COUNT(b.value_ns), MIN(r.date_utc), MAX(r.date_utc) "
      "FROM benchmarks b JOIN runs r ON r.run_id = b.run_id GROUP BY b.name, r.host_fingerprint "
      "ORDER BY b.name, MAX(r.host)",
      {}, [&](sqlite3_stmt* st) {
        auto text = [&](int i) {
          const unsigned char* t = sqlite3_column_text(st, i);
          return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
        };
        out->push_back({text(0), text(1), text(2), sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), text(5),
                        text(6)});
      });
}

nlohmann::json to_json(const Series& s) {
  nlohmann::json pj = nlohmann::json::array(), cj = nlohmann::json::array();
  for (const auto& p : s.points)
    pj.push_back({{"run_id", p.run_id}, {"date_utc", p.date}, {"git_sha", p.git}, {"kernel", p.kernel},
                  {"value_ns", p.value}, {"low_ns", p.low}, {"high_ns", p.high}});
  for (const auto& c : s.changes)
    cj.push_back({{"index", c.index}, {"run_id", s.points[c.index].run_id}, {"before_ns", c.before_median},
                  {"after_ns", c.after_median}, {"relative_change", c.relative_change}, {"p_value", c.p_value}});
  const Point& first = s.points.front();
  return {{"benchmark", s.benchmark}, {"host", first.host}, {"host_fingerprint", first.fp}, {"what", first.what},
          {"points", pj}, {"changes", cj}};
}

}  // namespace tracebench::history
