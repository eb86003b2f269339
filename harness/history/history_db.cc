#include "history_db.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <memory>

#include "history_backends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace tracebench::history {

std::string fingerprint(const RunContext& c) {
  const std::string facts = fmt::format("{}|{}|{}|{}|{:.0f}", c.cpu_model, c.cpus, c.virtualized ? c.hypervisor : "-",
                                        c.execution, c.tsc_hz / 1e6);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : facts) h = (h ^ ch) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

std::string configuration_of(const RunContext& c, const BenchmarkResult& b) {
  std::vector<std::string> parts;
  std::string opts;
  for (const auto& [k, v] : b.options) opts += (opts.empty() ? "" : ",") + k + "=" + v;
  if (!opts.empty()) parts.push_back(opts);
  if (c.concurrent) parts.push_back("concurrent");
  if (!c.simulated_host.empty()) parts.push_back("simulated=" + c.simulated_host);
  return fmt::format("{}", fmt::join(parts, ";"));
}

std::string configuration_label(const std::string& config) { return config.empty() ? "default" : config; }

namespace {

bool is_uri(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}

// libpq's key=value form, as libpq parses it (a path with '=' in it has a
// key libpq does not know, and stays a path: "./a=b.sqlite").
using Conninfo = std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)>;
Conninfo parse_conninfo(const std::string& where) {
  if (is_uri(where) || where.find('=') == std::string::npos) return Conninfo(nullptr, PQconninfoFree);
  char* err = nullptr;
  Conninfo opts(PQconninfoParse(where.c_str(), &err), PQconninfoFree);
  if (err) PQfreemem(err);
  return opts;
}

// A value as libpq's key=value form reads it back: quoted when it must be.
std::string quoted_value(const std::string& v) {
  if (!v.empty() && v.find_first_of(" \t\n'\\") == std::string::npos) return v;
  std::string q = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') q += '\\';
    q += c;
  }
  return q + "'";
}

// The key=value form again, its password as ***.
std::string masked_conninfo(const PQconninfoOption* opts) {
  std::string out;
  for (const PQconninfoOption* o = opts; o->keyword; ++o) {
    if (!o->val) continue;
    const std::string key = o->keyword;
    out += (out.empty() ? "" : " ") + key + "=" + (key == "password" ? "***" : quoted_value(o->val));
  }
  return out;
}

}  // namespace

bool is_server_uri(const std::string& where) { return is_uri(where) || parse_conninfo(where) != nullptr; }

std::string masked(const std::string& where) {
  if (Conninfo kv = parse_conninfo(where)) return masked_conninfo(kv.get());
  if (!is_uri(where)) return where;
  std::string m = where;
  // scheme://user:PASSWORD@host...: the userinfo ends at the last '@'
  // before the path or query.
  const std::size_t from = m.find("://") + 3;
  const std::size_t end = std::min(m.find_first_of("/?", from), m.size());
  const std::size_t at = m.rfind('@', end == 0 ? 0 : end - 1);
  if (at != std::string::npos && at >= from) {
    const std::size_t colon = m.find(':', from);
    if (colon != std::string::npos && colon < at) m.replace(colon + 1, at - colon - 1, "***");
  }
  // ...?password=PASSWORD&...
  for (std::size_t q = m.find('?'); q != std::string::npos;) {
    const std::size_t key = m.find("password=", q);
    if (key == std::string::npos) break;
    if (m[key - 1] != '?' && m[key - 1] != '&') {
      q = key + 1;
      continue;
    }
    const std::size_t value = key + 9;
    const std::size_t amp = std::min(m.find('&', value), m.size());
    m.replace(value, amp - value, "***");
    q = value + 3;
  }
  return m;
}

Status open_db(const std::string& where, bool create, std::unique_ptr<Db>* out) {
  if (is_server_uri(where)) return open_postgres(where, create, out);
  return open_sqlite(where, create, out);
}

namespace {

// A row read back is checked as result.json is when read (result_check.h):
// a database edited by hand, or written by another program, is refused
// naming the run, the benchmark and the field, never drawn or searched for
// change points.
Status check_point(const Db& db, const std::string& name, const Point& p) {
  auto bad = [&](const std::string& what) {
    return Status::error(
        fmt::format("{}: run {}, benchmark {}: {}: not a figure tracebench history wrote (the "
                    "database was edited, or written by something else)",
                    db.name(), p.run_id, name, what));
  };
  for (const auto& [field, v] :
       {std::pair{"value_ns", p.value}, std::pair{"low_ns", p.low}, std::pair{"high_ns", p.high}})
    if (!std::isfinite(v)) return bad(fmt::format("{} is {}", field, v));
  if (!(p.low <= p.value && p.value <= p.high))
    return bad(fmt::format("the interval [{}, {}] does not hold its figure {}", p.low, p.high, p.value));
  if (p.what != "overhead" && p.what != "baseline") return bad(fmt::format("what is '{}'", p.what));
  if (p.what == "baseline" && !(p.value > 0)) return bad(fmt::format("a baseline of {} ns", p.value));
  std::tm tm{};
  const char* end = strptime(p.date.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || (*end != 'Z' && *end != '\0')) return bad(fmt::format("date_utc '{}' is not a UTC time", p.date));
  return Status::ok();
}

}  // namespace

Status series_of(Db& db, const std::string& name, const std::string& host, const ChangePointOptions& o,
                 std::vector<Series>* out) {
  // (machine, configuration) -> points
  std::map<std::pair<std::string, std::string>, std::vector<Point>> by_series;
  TB_TRY(db.query(
      "SELECT r.run_id, r.date_utc, r.git_sha, r.kernel, r.host, r.host_fingerprint, b.options, b.value_ns, b.low_ns, "
      "b.high_ns, b.what FROM benchmarks b JOIN runs r ON r.run_id = b.run_id WHERE b.name = ? AND b.value_ns IS NOT "
      "NULL AND (? = '' OR r.host = ? OR r.host_fingerprint = ?) ORDER BY r.date_utc, r.run_id",
      {name, host, host, host}, [&](const Row& r) {
        Point p{r.text(0), r.text(1), r.text(2), r.text(3), r.text(4), r.text(5),
                r.text(6), r.real(7), r.real(8), r.real(9), r.text(10)};
        by_series[{p.fp, p.config}].push_back(p);
      }));
  for (const auto& [key, pts] : by_series)
    for (const auto& p : pts) TB_TRY(check_point(db, name, p));
  for (auto& [key, pts] : by_series) {
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
  return db.query("SELECT DISTINCT name FROM benchmarks ORDER BY name", {},
                  [&](const Row& r) { out->push_back(r.text(0)); });
}

Status series_counts(Db& db, std::vector<SeriesCount>* out) {
  return db.query(
      "SELECT b.name, MAX(r.host), r.host_fingerprint, b.options, COUNT(*), COUNT(b.value_ns), MIN(r.date_utc), "
      "MAX(r.date_utc) FROM benchmarks b JOIN runs r ON r.run_id = b.run_id "
      "GROUP BY b.name, r.host_fingerprint, b.options ORDER BY b.name, MAX(r.host), b.options",
      {}, [&](const Row& r) {
        out->push_back({r.text(0), r.text(1), r.text(2), r.text(3), r.integer(4), r.integer(5), r.text(6), r.text(7)});
      });
}

nlohmann::json to_json(const Series& s) {
  nlohmann::json pj = nlohmann::json::array(), cj = nlohmann::json::array();
  for (const auto& p : s.points)
    pj.push_back({{"run_id", p.run_id},
                  {"date_utc", p.date},
                  {"git_sha", p.git},
                  {"kernel", p.kernel},
                  {"value_ns", p.value},
                  {"low_ns", p.low},
                  {"high_ns", p.high}});
  for (const auto& c : s.changes)
    cj.push_back({{"index", c.index},
                  {"run_id", s.points[c.index].run_id},
                  {"before_ns", c.before_median},
                  {"after_ns", c.after_median},
                  {"relative_change", c.relative_change},
                  {"p_value", c.p_value}});
  const Point& first = s.points.front();
  return {{"benchmark", s.benchmark},
          {"configuration", first.config},
          {"host", first.host},
          {"host_fingerprint", first.fp},
          {"what", first.what},
          {"points", pj},
          {"changes", cj}};
}

}  // namespace tracebench::history
