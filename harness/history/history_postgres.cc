// The history on a PostgreSQL server (history_backends.h), through libpq.
//
// Ownership: PostgreSQL has no application_id, so a table of our own,
// tracebench_history(application_id, schema_version), marks the schema as
// ours; a schema holding other tables and no such mark is someone else's and
// is never written to.  The schema is made under an advisory lock, so two
// first writers do not both take an empty database for theirs to set up.
//
// Concurrency: each write is one SERIALIZABLE transaction.  Two runners
// adding at once either do not touch the same rows, or one of them gets a
// serialization failure (40001), a deadlock (40P01) or a unique violation
// (23505) and runs its whole transaction again, now seeing the other's rows:
// the run-id rule (a colliding id stored as id~hash) is then decided on
// committed data, and no run is lost.
#include <unistd.h>

#include <libpq-fe.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "history_backends.h"

namespace tracebench::history {
namespace {

// A connection attempt to a server that does not answer gives up after this
// (libpq's connect_timeout), unless the URI sets its own.
constexpr const char* kConnectTimeoutS = "10";
// How many times a write that lost a race runs again before it gives up.
constexpr int kWriteAttempts = 30;

class PgRow : public Row {
 public:
  PgRow(const PGresult* r, int row) : r_(r), row_(row) {}
  bool is_null(int c) const override { return PQgetisnull(r_, row_, c); }
  std::string text(int c) const override { return PQgetvalue(r_, row_, c); }
  double real(int c) const override { return is_null(c) ? 0.0 : std::strtod(PQgetvalue(r_, row_, c), nullptr); }
  std::int64_t integer(int c) const override {
    return is_null(c) ? 0 : std::strtoll(PQgetvalue(r_, row_, c), nullptr, 10);
  }

 private:
  const PGresult* r_;
  int row_;
};

// `?` placeholders as PostgreSQL's $1, $2... (outside quoted literals).
std::string numbered(const std::string& sql) {
  std::string out;
  int n = 0;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted)
      out += "$" + std::to_string(++n);
    else
      out += c;
  }
  return out;
}

class PgDb : public Db {
 public:
  explicit PgDb(std::string uri) : uri_(std::move(uri)), name_(masked(uri_)) {}
  ~PgDb() override {
    if (conn_) PQfinish(conn_);
  }
  Status open(bool create);
  Status query(const std::string& sql, const std::vector<Value>& args, const RowFn& row) override;
  Status write(const std::function<Status()>& body) override;
  const std::string& name() const override { return name_; }

 private:
  Status exec(const std::string& sql) {
    return query(sql, {}, [](const Row&) {});
  }
  Status check_ours(bool* empty);
  Status make_schema();
  // Whether the last error was a lost race that running again resolves.
  bool retryable() const { return state_ == "40001" || state_ == "40P01" || state_ == "23505"; }
  std::string uri_, name_;
  PGconn* conn_ = nullptr;
  std::string state_;  // SQLSTATE of the last failed statement
};

Status PgDb::open(bool create) {
  // connect_timeout before the URI: one the URI sets wins.
  const char* keys[] = {"connect_timeout", "dbname", "application_name", nullptr};
  const char* values[] = {kConnectTimeoutS, uri_.c_str(), "tracebench history", nullptr};
  conn_ = PQconnectdbParams(keys, values, 1);
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    for (std::size_t nl; (nl = why.find("\n\t")) != std::string::npos;) why.replace(nl, 2, " ");
    // No server of Debian's here: say how to have one (the area scripts/setup.sh leaves out).
    const char* local = access("/usr/lib/postgresql", F_OK) == 0
                            ? ""
                            : " (no PostgreSQL server is installed on this machine: `scripts/setup.sh --area "
                              "postgres` installs Debian's)";
    return Status::error(
        fmt::format("{}: cannot connect to the history server ({}); is it running, and does the URI "
                    "name it (host, port, dbname, user)?{}",
                    name_, why, local));
  }
  TB_TRY(exec(fmt::format("SET lock_timeout = {}; SET client_min_messages = error", kBusyTimeoutMs)));
  if (!create) {
    // Readers never write: the server refuses it.
    TB_TRY(exec("SET default_transaction_read_only = on"));
    bool empty = false;
    TB_TRY(check_ours(&empty));
    if (empty) return Status::error(name_ + ": not a tracebench history database (it has no tables)");
    return Status::ok();
  }
  // The lock is the session's, taken before the transaction: a
  // SERIALIZABLE transaction reads the snapshot of its first statement, so a
  // lock taken inside it would not show the schema its holder made.
  TB_TRY(query("SELECT pg_advisory_lock(?)", {std::int64_t{kApplicationId}}, [](const Row&) {}));
  Status s = write([&] {
    bool empty = false;
    TB_TRY(check_ours(&empty));
    return empty ? make_schema() : Status::ok();
  });
  if (Status u = query("SELECT pg_advisory_unlock(?)", {std::int64_t{kApplicationId}}, [](const Row&) {}); s) s = u;
  return s;
}

// Ours: the current schema holds tracebench_history with our mark (and our
// two tables); empty: it holds no relations at all.
Status PgDb::check_ours(bool* empty) {
  std::string schema;
  std::int64_t objects = 0, ours = 0, marked = 0;
  TB_TRY(
      query("SELECT current_schema(), count(c.oid), "
            "count(CASE WHEN c.relkind = 'r' AND c.relname IN ('runs', 'benchmarks') THEN 1 END), "
            "count(CASE WHEN c.relkind = 'r' AND c.relname = 'tracebench_history' THEN 1 END) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S')",
            {}, [&](const Row& r) {
              schema = r.text(0);
              objects = r.integer(1);
              ours = r.integer(2);
              marked = r.integer(3);
            }));
  if (schema.empty())
    return Status::error(name_ + ": the connection has no current schema (search_path names none that exists)");
  *empty = objects == 0;
  if (*empty) return Status::ok();
  std::int64_t app_id = 0, version = 0;
  if (marked)
    TB_TRY(query("SELECT application_id, schema_version FROM tracebench_history", {}, [&](const Row& r) {
      app_id = r.integer(0);
      version = r.integer(1);
    }));
  if (app_id != kApplicationId || ours != 2)
    return Status::error(fmt::format(
        "{}: not a tracebench history database (schema {} holds {} relation(s) and no tracebench_history mark); it "
        "is left as it is: name another database with --db",
        name_, schema, objects));
  if (version > kSchemaVersion)
    return Status::error(fmt::format("{}: history schema version {} is newer than this tracebench reads ({})", name_,
                                     version, kSchemaVersion));
  return Status::ok();
}

// history_sqlite.cc's schema, translated: 8-byte floats and integers, and
// text compared byte by byte (COLLATE "C") so that series are ordered as
// SQLite orders them, whatever the server's locale.
Status PgDb::make_schema() {
  return exec(
      fmt::format("CREATE TABLE runs(run_id TEXT COLLATE \"C\" PRIMARY KEY, date_utc TEXT COLLATE \"C\" NOT NULL, "
                  "git_sha TEXT COLLATE \"C\", host TEXT COLLATE \"C\", host_fingerprint TEXT COLLATE \"C\" NOT NULL, "
                  "kernel TEXT COLLATE \"C\" NOT NULL, execution TEXT COLLATE \"C\", file TEXT COLLATE \"C\");"
                  "CREATE TABLE benchmarks(run_id TEXT COLLATE \"C\" NOT NULL REFERENCES runs(run_id), "
                  "name TEXT COLLATE \"C\" NOT NULL, tracer TEXT COLLATE \"C\", workload TEXT COLLATE \"C\", "
                  "action TEXT COLLATE \"C\", payload_bytes BIGINT, threads BIGINT, options TEXT COLLATE \"C\", "
                  "status TEXT COLLATE \"C\", verification TEXT COLLATE \"C\", what TEXT COLLATE \"C\", "
                  "value_ns DOUBLE PRECISION, low_ns DOUBLE PRECISION, high_ns DOUBLE PRECISION, "
                  "overhead_cycles DOUBLE PRECISION, baseline_ns DOUBLE PRECISION, traced_ns DOUBLE PRECISION, "
                  "PRIMARY KEY(run_id, name));"
                  "CREATE TABLE tracebench_history(application_id INTEGER NOT NULL, schema_version INTEGER NOT NULL);"
                  "COMMENT ON TABLE tracebench_history IS 'tracebench results history: schema version and owner mark';"
                  "INSERT INTO tracebench_history VALUES({}, {})",
                  kApplicationId, kSchemaVersion));
}

Status PgDb::write(const std::function<Status()>& body) {
  std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    state_.clear();
    Status s = exec("BEGIN ISOLATION LEVEL SERIALIZABLE");
    if (s) s = body();
    if (s) s = exec("COMMIT");
    if (s) return s;
    const bool again = retryable();
    (void)exec("ROLLBACK");  // the first error is the one reported
    if (!again || attempt == kWriteAttempts)
      return again ? Status::error(s.message() + fmt::format(" (gave up after {} attempts)", attempt)) : s;
    // Another writer won: wait a little (more each time, at random, so
    // that the two do not meet again) and run the transaction again.
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + jitter() % (5 * attempt)));
  }
}

Status PgDb::query(const std::string& sql, const std::vector<Value>& args, const RowFn& row) {
  std::vector<std::string> text(args.size());
  std::vector<const char*> values(args.size());
  std::vector<Oid> types(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (auto* t = std::get_if<std::string>(&args[i]))
      text[i] = *t, types[i] = 25;  // text
    else if (auto* d = std::get_if<double>(&args[i]))
      text[i] = fmt::format("{}", *d), types[i] = 701;  // float8
    else if (auto* n = std::get_if<std::int64_t>(&args[i]))
      text[i] = std::to_string(*n), types[i] = 20;  // int8
    values[i] = std::holds_alternative<std::nullptr_t>(args[i]) ? nullptr : text[i].c_str();
  }
  PGresult* r = args.empty() ? PQexec(conn_, sql.c_str())
                             : PQexecParams(conn_, numbered(sql).c_str(), static_cast<int>(args.size()), types.data(),
                                            values.data(), nullptr, nullptr, 0);
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    const char* code = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    state_ = code ? code : "";
    std::string why = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    PQclear(r);
    return Status::error(fmt::format("postgresql: {}: {}", name_, why));
  }
  for (int i = 0, n = PQntuples(r); i < n; ++i) row(PgRow(r, i));
  PQclear(r);
  return Status::ok();
}

}  // namespace

Status open_postgres(const std::string& uri, bool create, std::unique_ptr<Db>* out) {
  auto db = std::make_unique<PgDb>(uri);
  TB_TRY(db->open(create));
  *out = std::move(db);
  return Status::ok();
}

}  // namespace tracebench::history
