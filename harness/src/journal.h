// Internal to the runner: what a run writes as its benchmarks finish.
#pragma once

#include <cstdio>
#include <set>
#include <string>

#include "tracebench/results.h"
#include "tracebench/sample_book.h"
#include "tracebench/status.h"

namespace tracebench {

// The run's files as benchmarks finish: result.json rewritten atomically
// with every benchmark so far (context.complete false until close()), and
// samples.csv appended per benchmark.
class Journal {
 public:
  Journal(std::string dir, bool samples, RunResult* run) : dir_(std::move(dir)), run_(run) {
    if (samples) {
      samples_ = std::fopen((dir_ + "/samples.csv").c_str(), "w");
      if (samples_) std::fputs("benchmark,variant,repetition,sample,cycles_per_event,batch,disturbed,migrated\n", samples_);
    }
  }
  ~Journal() {
    if (samples_) std::fclose(samples_);
  }
  bool has(const std::string& name) const { return names_.count(name) > 0; }
  // Adds a finished benchmark and commits it to disk.
  void add(const BenchmarkResult& r, const SampleBook* book) {
    names_.insert(r.name);
    run_->benchmarks.push_back(r);
    if (samples_ && book) {
      for (const auto& s : book->rows()) {
        std::fprintf(samples_, "%s,%s,%d,%u,%.3f,%llu,%d,%d\n", r.name.c_str(), s.traced ? "traced" : "baseline",
                     s.repetition, s.index, s.cycles_per_event, static_cast<unsigned long long>(r.batch),
                     s.excluded ? 1 : 0, s.migrated ? 1 : 0);
      }
      std::fflush(samples_);
    }
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
