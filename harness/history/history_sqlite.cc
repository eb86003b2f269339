// The history on a SQLite file (history_backends.h): PRAGMA application_id
// and user_version mark it; one writer at a time (BEGIN IMMEDIATE), the
// others wait up to kBusyTimeoutMs for its lock.
#include <sqlite3.h>

#include <filesystem>

#include <fmt/format.h>

#include "history_backends.h"
#include "tracebench/util.h"

namespace tracebench::history {
namespace {

namespace fs = std::filesystem;

// What a SQLITE_BUSY after the busy timeout means.
std::string busy_advice() {
  return fmt::format(
      " (another process held the database's lock for the whole {} s this one waited; is a "
      "`history add` stuck? try again when it has finished)",
      kBusyTimeoutMs / 1000);
}

class SqliteRow : public Row {
 public:
  explicit SqliteRow(sqlite3_stmt* s) : s_(s) {}
  bool is_null(int c) const override { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string text(int c) const override {
    const unsigned char* t = sqlite3_column_text(s_, c);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  }
  double real(int c) const override { return sqlite3_column_double(s_, c); }
  std::int64_t integer(int c) const override { return sqlite3_column_int64(s_, c); }

 private:
  sqlite3_stmt* s_;
};

class SqliteDb : public Db {
 public:
  explicit SqliteDb(std::string path) : path_(std::move(path)) {}
  ~SqliteDb() override {
    if (db_) sqlite3_close(db_);
  }
  Status open(bool create);
  Status query(const std::string& sql, const std::vector<Value>& args, const RowFn& row) override;
  Status write(const std::function<Status()>& body) override;
  const std::string& name() const override { return path_; }

 private:
  Status exec(const std::string& sql);
  // *empty: no schema at all (a new file); else an error unless it is ours.
  Status check_ours(bool* empty);
  Status make_schema();
  Status prepare(const std::string& sql, const std::vector<Value>& args, sqlite3_stmt** out);
  std::string path_;
  sqlite3* db_ = nullptr;
};

// Whether an existing database is ours: it carries our application_id, or
// (written before the id was set) user_version 1 and our two tables.  A file
// with any other schema is someone else's and is never written to.
Status SqliteDb::check_ours(bool* empty) {
  int app_id = 0, version = 0, objects = 0, ours = 0;
  TB_TRY(query("PRAGMA application_id", {}, [&](const Row& r) { app_id = static_cast<int>(r.integer(0)); }));
  TB_TRY(query("PRAGMA user_version", {}, [&](const Row& r) { version = static_cast<int>(r.integer(0)); }));
  TB_TRY(
      query("SELECT count(*), count(CASE WHEN type = 'table' AND name IN ('runs', 'benchmarks') THEN 1 END) "
            "FROM sqlite_master",
            {}, [&](const Row& r) {
              objects = static_cast<int>(r.integer(0));
              ours = static_cast<int>(r.integer(1));
            }));
  *empty = app_id == 0 && version == 0 && objects == 0;
  if (*empty) return Status::ok();
  const bool tagged = app_id == kApplicationId;
  const bool legacy = app_id == 0 && version == 1 && ours == 2;
  if (!tagged && !legacy)
    return Status::error(fmt::format(
        "{}: not a tracebench history database (application_id {}, user_version {}, {} schema object(s)); it is "
        "left as it is: name another file with --db",
        path_, app_id, version, objects));
  if (version > kSchemaVersion)
    return Status::error(fmt::format("{}: history schema version {} is newer than this tracebench reads ({})", path_,
                                     version, kSchemaVersion));
  return Status::ok();
}

Status SqliteDb::make_schema() {
  return exec(fmt::format(
      "CREATE TABLE runs(run_id TEXT PRIMARY KEY, date_utc TEXT NOT NULL, git_sha TEXT, "
      "host TEXT, host_fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, execution TEXT, file TEXT);"
      "CREATE TABLE benchmarks(run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL, "
      "tracer TEXT, workload TEXT, action TEXT, payload_bytes INTEGER, threads INTEGER, options TEXT, status TEXT, "
      "verification TEXT, what TEXT, value_ns REAL, low_ns REAL, high_ns REAL, overhead_cycles REAL, "
      "baseline_ns REAL, traced_ns REAL, PRIMARY KEY(run_id, name));"
      "PRAGMA application_id = {}; PRAGMA user_version = {};",
      kApplicationId, kSchemaVersion));
}

Status SqliteDb::open(bool create) {
  std::error_code ec;
  if (!create && !fs::exists(path_, ec) && !ec)
    return Status::error(path_ + ": no history database (tracebench history add RUN...)");
  // A FIFO or device under that name is refused before SQLite blocks on it.
  if (fs::exists(path_, ec) || ec) TB_TRY(check_input_file(path_, UINT64_MAX));
  if (create)
    if (const fs::path parent = fs::path(path_).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  if (sqlite3_open_v2(path_.c_str(), &db_, create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY,
                      nullptr) != SQLITE_OK)
    return Status::error(path_ + ": " + (db_ ? sqlite3_errmsg(db_) : "cannot open"));
  // Another `history add` may hold the write lock: wait for it (its
  // transaction is one add, short) rather than fail at once.
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  if (!create) {
    bool empty = false;
    TB_TRY(check_ours(&empty));
    if (empty) return Status::error(path_ + ": not a tracebench history database (it is empty)");
    return Status::ok();
  }
  // The check and the schema in one write transaction, so that two adds on
  // a new file do not both take it for empty, and a foreign file is only read.
  return write([&] {
    bool empty = false;
    TB_TRY(check_ours(&empty));
    return empty ? make_schema() : Status::ok();
  });
}

// SQLite takes the write lock at BEGIN IMMEDIATE, so writers queue there
// (up to the busy timeout) and a transaction never has to be run again.
Status SqliteDb::write(const std::function<Status()>& body) {
  TB_TRY(exec("BEGIN IMMEDIATE"));
  if (Status s = body(); !s) {
    (void)exec("ROLLBACK");  // the body's own error is the one reported
    return s;
  }
  return exec("COMMIT");
}

Status SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "error";
    sqlite3_free(err);
    if (sqlite3_errcode(db_) == SQLITE_BUSY) m += busy_advice();
    return Status::error("sqlite: " + m);
  }
  return Status::ok();
}

Status SqliteDb::prepare(const std::string& sql, const std::vector<Value>& args, sqlite3_stmt** out) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
    return Status::error(std::string("sqlite: ") + sqlite3_errmsg(db_));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int k = static_cast<int>(i + 1);
    if (auto* t = std::get_if<std::string>(&args[i]))
      sqlite3_bind_text(s, k, t->c_str(), -1, SQLITE_TRANSIENT);
    else if (auto* d = std::get_if<double>(&args[i]))
      sqlite3_bind_double(s, k, *d);
    else if (auto* n = std::get_if<std::int64_t>(&args[i]))
      sqlite3_bind_int64(s, k, *n);
    else
      sqlite3_bind_null(s, k);
  }
  *out = s;
  return Status::ok();
}

Status SqliteDb::query(const std::string& sql, const std::vector<Value>& args, const RowFn& row) {
  sqlite3_stmt* s = nullptr;
  TB_TRY(prepare(sql, args, &s));
  const SqliteRow r(s);
  for (;;) {
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      row(r);
      continue;
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_DONE) return Status::ok();
    return Status::error(std::string("sqlite: ") + sqlite3_errmsg(db_) + (rc == SQLITE_BUSY ? busy_advice() : ""));
  }
}

}  // namespace

Status open_sqlite(const std::string& path, bool create, std::unique_ptr<Db>* out) {
  auto db = std::make_unique<SqliteDb>(path);
  TB_TRY(db->open(create));
  *out = std::move(db);
  return Status::ok();
}

}  // namespace tracebench::history
