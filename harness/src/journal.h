// Internal to the runner: what a run writes as its benchmarks finish.
#pragma once

#include <cstdio>
#include <set>
#include <string>

#include "tracebench/report.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench {

// The run's files as benchmarks finish: result.json rewritten atomically
// with every benchmark so far (context.complete false until close()), and
// samples.csv appended per benchmark, both by their reporters (report.h).
class Journal {
 public:
  Journal(std::string dir, bool samples, RunResult* run) : dir_(std::move(dir)), run_(run) {
    if (samples) {
      samples_ = std::fopen((dir_ + "/samples.csv").c_str(), "w");
      if (samples_) std::fputs(kSamplesCsvHeader, samples_);
    }
  }
  ~Journal() {
    if (samples_) std::fclose(samples_);
  }
  bool has(const std::string& name) const { return names_.count(name) > 0; }
  // Adds a finished benchmark (its samples too) to the run, and commits it to disk.
  void add(BenchmarkResult r) {
    names_.insert(r.name);
    if (samples_) {
      std::string rows = samples_csv_rows(r);
      if (std::fwrite(rows.data(), 1, rows.size(), samples_) != rows.size() || std::fflush(samples_) != 0)
        error_ = Status::error("write " + dir_ + "/samples.csv");
    }
    run_->benchmarks.push_back(std::move(r));
    if (Status s = write_run(dir_, *run_); !s) error_ = s;
  }
  Status close() {
    if (samples_ && std::fclose(samples_) != 0) error_ = Status::error("write " + dir_ + "/samples.csv");
    samples_ = nullptr;
    if (!error_) return error_;
    return write_run(dir_, *run_);  // the final one, with context.complete
  }

 private:
  std::string dir_;
  RunResult* run_;
  std::FILE* samples_ = nullptr;
  std::set<std::string> names_;
  Status error_ = Status::ok();
};

}  // namespace tracebench
