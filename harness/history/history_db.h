// The results history database, shared by `tracebench history` and
// `tracebench report --history`, on one of two back ends behind one
// interface (Db): a SQLite file (history_sqlite.cc) or a PostgreSQL server
// (history_postgres.cc), chosen by what --db names.
//
// Schema version kSchemaVersion on both; tables runs (one row per run id)
// and benchmarks (one row per run and benchmark).  A machine is its host
// fingerprint, not its name; a series is one benchmark in one
// configuration on one machine in date order, with the kernel and commit on
// every point.  The configuration (benchmarks.options) is the tracer's
// options and the run's marks (configuration_of()): a run with an injected
// cost, or measured beside another, never joins the plain series.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracebench/changepoint.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench::history {

constexpr int kSchemaVersion = 1;
// The mark of a database tracebench created ("TBHI"): SQLite's PRAGMA
// application_id, a row of the tracebench_history table on PostgreSQL.  A
// database without it (and without the tables of version 1) is not ours.
constexpr int kApplicationId = 0x54424849;
// How long a write waits for another writer's lock (SQLite's busy timeout,
// PostgreSQL's lock_timeout).
constexpr int kBusyTimeoutMs = 10000;

// A hash of the machine's stable facts (CPU model and count, hypervisor,
// execution, TSC rate): the same host renamed is the same machine, another
// CPU or hypervisor under the same name is not.
std::string fingerprint(const RunContext& c);

// A benchmark's configuration as the history keys its series: its tracer
// options "k=v,k=v" in key order, then the run's marks: "concurrent"
// (measured beside another command, context.concurrent) and
// "simulated=<spec>" (a simulated host); "" for a plain run.
std::string configuration_of(const RunContext& c, const BenchmarkResult& b);

// The configuration as people read it: "" as "default".
std::string configuration_label(const std::string& config);

using Value = std::variant<std::string, double, std::int64_t, std::nullptr_t>;

// One row of a query's result, columns from 0.
class Row {
 public:
  virtual ~Row() = default;
  virtual bool is_null(int column) const = 0;
  virtual std::string text(int column) const = 0;  // "" for NULL
  virtual double real(int column) const = 0;
  virtual std::int64_t integer(int column) const = 0;
};
using RowFn = std::function<void(const Row&)>;

// A history database.  SQL is written once, with `?` placeholders, in the
// subset both back ends read alike; each back end makes its own schema.
class Db {
 public:
  virtual ~Db() = default;
  // Binds the arguments in order; calls `row` per result row.
  virtual Status query(const std::string& sql, const std::vector<Value>& args, const RowFn& row) = 0;
  Status run(const std::string& sql, const std::vector<Value>& args) {
    return query(sql, args, [](const Row&) {});
  }
  // Runs `body` in one write transaction, committed when it returns ok and
  // rolled back otherwise.  When the transaction lost a race with another
  // writer (PostgreSQL: serialization failure, deadlock, a key another
  // transaction took meanwhile) it is rolled back and `body` runs again from
  // the start, so `body` must decide everything from what it reads inside.
  virtual Status write(const std::function<Status()>& body) = 0;
  // The database as messages name it (a URI with its password masked).
  virtual const std::string& name() const = 0;
};

// Whether `where` names a PostgreSQL server (a postgresql:// or postgres://
// connection URI, or libpq's key=value form: "host=db dbname=tb ...", as
// libpq parses it) rather than a SQLite file.
bool is_server_uri(const std::string& where);
// `where` as it may be printed: a URI's password (user:PASSWORD@ or
// password=...) replaced by ***; a key=value form's password=... too.
std::string masked(const std::string& where);

// Opens the history `where` names.  `create`: open for writing and make the
// schema in a new (empty) database; otherwise read-only, and a missing
// database is an error.  Either way a database that is not ours is an
// error, and nothing is written to it; a schema newer than kSchemaVersion
// is refused.
Status open_db(const std::string& where, bool create, std::unique_ptr<Db>* out);

// One run's figure of one benchmark.
struct Point {
  std::string run_id, date, git, kernel, host, fp, config;
  double value = 0, low = 0, high = 0;
  std::string what;  // "overhead" or "baseline" (the none tracer)
};

// A benchmark's series in one configuration on one machine, with its
// change points.
struct Series {
  std::string benchmark;
  std::vector<Point> points;
  std::vector<ChangePoint> changes;
};

// Every machine's and configuration's series of `name` (only `host`'s, by
// name or fingerprint, when it is not empty), change points found with `o`.
Status series_of(Db& db, const std::string& name, const std::string& host, const ChangePointOptions& o,
                 std::vector<Series>* out);

// Benchmark names in the database, sorted.
Status benchmark_names(Db& db, std::vector<std::string>* out);

// A series as `history list` names it: one benchmark on one machine, with
// how many runs give it a figure (and how many runs hold it at all).
struct SeriesCount {
  std::string benchmark, host, fp, config;
  std::int64_t runs = 0, with_figure = 0;
  std::string first_date, last_date;
};
// Every series in the database, by benchmark name then host.
Status series_counts(Db& db, std::vector<SeriesCount>* out);

// A series as `history show --json` prints it and the report draws it.
nlohmann::json to_json(const Series& s);

}  // namespace tracebench::history
