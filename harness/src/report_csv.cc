// The CSV reporter: summary.csv (a line per benchmark) and samples.csv (a
// line per timed sample), and samples.csv read back into a result.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/reporter.h"
#include "tracebench/util.h"
#include "tracebench/results.h"

namespace tracebench {

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}
std::string num(double v) { return fmt::format("{:.3f}", v); }
// A statistic of a variant with no valid sample is an empty field, never 0.
std::string stat(const Summary& s, double v) { return s.n ? num(v) : ""; }
}  // namespace

std::string summary_csv(const RunResult& run) {
  std::string out =
      "name,tracer,workload,probe,action,payload_bytes,threads,status,"
      "baseline_p50_cycles,traced_p50_cycles,overhead_cycles,overhead_ci_low,overhead_ci_high,overhead_ci_confidence,"
      "overhead_ns,baseline_p50_ns,traced_p50_ns,traced_p99_cycles,events_fired,events_recorded,events_lost,"
      "verification,error,amortized_overhead_cycles,amortized_ci_low,amortized_ci_high,amortized_overhead_ns\n";
  for (const auto& b : run.benchmarks) {
    // The amortized figure (harness/README.md), where the run has one.
    const auto& ac = b.amortized_overhead_cycles;
    std::string amortized =
        fmt::format(",{},{},{},{}", ac ? num(ac->median) : "", ac ? num(ac->low) : "", ac ? num(ac->high) : "",
                    b.amortized_overhead_ns ? num(b.amortized_overhead_ns->median) : "");
    std::string oc = b.overhead_cycles ? num(b.overhead_cycles->median) : "";
    std::string lo = b.overhead_cycles ? num(b.overhead_cycles->low) : "";
    std::string hi = b.overhead_cycles ? num(b.overhead_cycles->high) : "";
    // What the interval covers (0.5 with 2 repetitions), not the level asked for.
    std::string conf = b.overhead_cycles ? fmt::format("{:.4f}", b.overhead_cycles->confidence) : "";
    std::string on = b.overhead_ns ? num(b.overhead_ns->median) : "";
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}{}\n", csv_field(b.name),
                       csv_field(b.tracer), csv_field(b.workload), csv_field(b.probe), csv_field(b.action),
                       b.payload_bytes, b.threads, b.status, stat(b.baseline.cycles, b.baseline.cycles.p50),
                       stat(b.traced.cycles, b.traced.cycles.p50), oc, lo, hi, conf, on,
                       stat(b.baseline.ns, b.baseline.ns.p50), stat(b.traced.ns, b.traced.ns.p50),
                       stat(b.traced.cycles, b.traced.cycles.p99), b.events.fired, b.events.recorded, b.events.lost,
                       b.events.verification, csv_field(b.error), amortized);
  }
  return out;
}

std::string samples_csv_rows(const BenchmarkResult& b) {
  std::string out;
  out.reserve(b.samples.size() * 64);
  for (const auto& s : b.samples) {
    out += fmt::format("{},{},{},{},{:.3f},{},{},{}\n", csv_field(b.name), s.traced ? "traced" : "baseline",
                       s.repetition, s.index, s.cycles_per_event, b.batch, s.excluded ? 1 : 0, s.migrated ? 1 : 0);
  }
  return out;
}

namespace {
// The fields of one CSV line ("..." quoting with "" inside, as csv_field writes).
bool split_csv(const std::string& line, std::vector<std::string>* f) {
  f->assign(1, "");
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        f->back() += line[++i];
      else if (c == '"')
        quoted = false;
      else
        f->back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      f->emplace_back();
    } else {
      f->back() += c;
    }
  }
  return !quoted;
}

bool to_long(const std::string& s, long long* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}
}  // namespace

Status read_samples_csv(const std::string& path, RunResult* run) {
  // Regular and finite before it is streamed (samples.csv can be large: no whole-file bound).
  TB_TRY(check_input_file(path, 8ull << 30));
  std::ifstream in(path);
  if (!in) return errno_status("open " + path, errno);
  std::map<std::string, BenchmarkResult*> by_name;
  for (auto& b : run->benchmarks) {
    b.samples.clear();
    by_name[b.name] = &b;
  }
  std::string line;
  std::vector<std::string> f;
  std::size_t n = 0;
  auto bad = [&](const std::string& why) { return Status::error(fmt::format("{}:{}: {}", path, n, why)); };
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) {
      if (line + "\n" != kSamplesCsvHeader) return bad("not a samples.csv header: " + line);
      continue;
    }
    if (line.empty()) continue;
    if (!split_csv(line, &f) || f.size() != 8) return bad("expected 8 fields");
    auto it = by_name.find(f[0]);
    if (it == by_name.end()) return bad("benchmark " + f[0] + " is not in the result");
    SampleRow r;
    long long rep = 0, idx = 0, batch = 0, dis = 0, mig = 0;
    char* end = nullptr;
    r.cycles_per_event = std::strtod(f[4].c_str(), &end);
    if (f[1] != "traced" && f[1] != "baseline") return bad("variant '" + f[1] + "'");
    if (!to_long(f[2], &rep) || !to_long(f[3], &idx) || !to_long(f[5], &batch) || !to_long(f[6], &dis) ||
        !to_long(f[7], &mig) || f[4].empty() || *end != '\0' || rep < 0 || idx < 0 || idx > UINT32_MAX || dis < 0 ||
        dis > 1 || mig < 0 || mig > 1)
      return bad("not a sample: " + line);
    if (static_cast<std::uint64_t>(batch) != it->second->batch)
      return bad(fmt::format("batch {} where the result says {}", batch, it->second->batch));
    r.traced = f[1] == "traced";
    r.repetition = static_cast<int>(rep);
    r.index = static_cast<std::uint32_t>(idx);
    r.excluded = dis == 1;
    r.migrated = mig == 1;
    it->second->samples.push_back(r);
  }
  if (n == 0) return Status::error(path + ": empty (no header)");
  return Status::ok();
}

namespace {
// summary.csv.
class CsvRunReporter final : public Reporter<RunReport> {
 public:
  Status write(const RunReport& in, Report* out) const override {
    out->text = summary_csv(in.run);
    return Status::ok();
  }
};
// samples.csv: the whole file (the header, then every benchmark's rows), or
// one benchmark's rows alone, as the run's journal appends them.
class SamplesCsvRunReporter final : public Reporter<RunReport> {
 public:
  Status write(const RunReport& in, Report* out) const override {
    if (in.benchmark) {
      out->text = samples_csv_rows(*in.benchmark);
      return Status::ok();
    }
    out->text = kSamplesCsvHeader;
    for (const auto& b : in.run.benchmarks) out->text += samples_csv_rows(b);
    return Status::ok();
  }
};
}  // namespace

const Reporter<RunReport>& csv_run_reporter() {
  static const CsvRunReporter r;
  return r;
}
const Reporter<RunReport>& samples_csv_run_reporter() {
  static const SamplesCsvRunReporter r;
  return r;
}

}  // namespace tracebench
