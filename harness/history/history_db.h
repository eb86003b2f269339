// The results history database (SQLite), shared by `tracebench history` and
// `tracebench report --history`.
//
// PRAGMA application_id kApplicationId, user_version 1; tables runs (one row per run id) and benchmarks (one
// row per run and benchmark).  A machine is its host fingerprint, not its
// name; a series is one benchmark on one machine in date order, with the
// kernel and commit on every point.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracebench/changepoint.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tracebench::history {

constexpr int kSchemaVersion = 1;
// PRAGMA application_id of a database tracebench created ("TBHI"): a SQLite
// file without it (and without the tables of version 1) is not ours.
constexpr int kApplicationId = 0x54424849;
// How long a write waits for another writer's lock (sqlite3_busy_timeout).
constexpr int kBusyTimeoutMs = 10000;

// A hash of the machine's stable facts (CPU model and count, hypervisor,
// execution, TSC rate): the same host renamed is the same machine, another
// CPU or hypervisor under the same name is not.
std::string fingerprint(const RunContext& c);

using Value = std::variant<std::string, double, std::int64_t, std::nullptr_t>;

class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();
  // `create`: open read-write and make the schema in a new (empty) file;
  // otherwise read-only, and a missing file is an error.  Either way a
  // database that is not ours (check_ours) is an error, and nothing is
  // written to it.  Waits up to kBusyTimeoutMs for another writer's lock.
  Status open(const std::string& path, bool create);
  Status exec(const std::string& sql);
  // Binds the arguments in order; calls `row` per result row.
  template <typename F>
  Status query(const std::string& sql, const std::vector<Value>& args, F row) {
    sqlite3_stmt* s = nullptr;
    TB_TRY(prepare(sql, args, &s));
    for (;;) {
      bool has_row = false;
      if (Status st = step(s, &has_row); !st || !has_row) return st;
      row(s);
    }
  }
  Status run(const std::string& sql, const std::vector<Value>& args) {
    return query(sql, args, [](sqlite3_stmt*) {});
  }

 private:
  // *empty: no schema at all (a new file); else an error unless it is ours.
  Status check_ours(const std::string& path, bool* empty);
  Status prepare(const std::string& sql, const std::vector<Value>& args, sqlite3_stmt** out);
  // Finalizes the statement when it is done or fails.
  Status step(sqlite3_stmt* s, bool* has_row);
  sqlite3* db_ = nullptr;
};

// One run's figure of one benchmark.
struct Point {
  std::string run_id, date, git, kernel, host, fp;
  double value = 0, low = 0, high = 0;
  std::string what;  // "overhead" or "baseline" (the none tracer)
};

// A benchmark's series on one machine, with its change points.
struct Series {
  std::string benchmark;
  std::vector<Point> points;
  std::vector<ChangePoint> changes;
};

// Every machine's series of `name` (only `host`'s, by name or fingerprint,
// when it is not empty), change points found with `o`.
Status series_of(Db& db, const std::string& name, const std::string& host, const ChangePointOptions& o,
                 std::vector<Series>* out);

// Benchmark names in the database, sorted.
Status benchmark_names(Db& db, std::vector<std::string>* out);

// A series as `history list` names it: one benchmark on one machine, with
// how many runs give it a figure (and how many runs hold it at all).
struct SeriesCount {
  std::string benchmark, host, fp;
  std::int64_t runs = 0, with_figure = 0;
  std::string first_date, last_date;
};
// Every series in the database, by benchmark name then host.
Status series_counts(Db& db, std::vector<SeriesCount>* out);

// A series as `history show --json` prints it and the report draws it.
nlohmann::json to_json(const Series& s);

}  // namespace tracebench::history
