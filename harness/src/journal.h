// Internal to the runner: what a run writes as its benchmarks finish.
#pragma once

#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include <fmt/format.h>

#include "tracebench/reporter.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"
#include "tracebench/status.h"

namespace tracebench {

// The run's files as benchmarks finish: result.json rewritten atomically
// with every benchmark so far (context.complete false until close()), and
// samples.csv appended per benchmark, both by their reporters (report.h).
//
// The first write that fails (a full disk, the directory removed or
// replaced) stops the journal: ok() turns false, the runner starts no
// further benchmark, and close() says what is still on disk.  samples.csv
// is cut back to its last whole benchmark, so it never ends in half a row.
class Journal {
 public:
  Journal(std::string dir, bool samples, RunResult* run) : dir_(std::move(dir)), run_(run) {
    struct stat sb {};
    if (stat(dir_.c_str(), &sb) == 0) {
      dev_ = sb.st_dev;
      ino_ = sb.st_ino;
    }
    // The run's result.json was written by the caller before the journal.
    note_results_kept(dir_, 0);
    if (samples) {
      samples_ = std::fopen((dir_ + "/samples.csv").c_str(), "w");
      if (!samples_)
        fail(errno_status("create " + dir_ + "/samples.csv", errno));
      else if (std::fputs(samples_rows(nullptr).c_str(), samples_) < 0 || std::fflush(samples_) != 0)
        fail(errno_status("write " + dir_ + "/samples.csv", errno));
      else
        samples_good_ = static_cast<long>(std::ftell(samples_));
      struct stat ss {};
      if (samples_ && fstat(fileno(samples_), &ss) == 0) samples_ino_ = ss.st_ino;
    }
  }
  ~Journal() {
    if (samples_) std::fclose(samples_);
  }
  bool has(const std::string& name) const { return names_.count(name) > 0; }
  bool ok() const { return error_.is_ok(); }
  const Status& error() const { return error_; }
  // Adds a finished benchmark (its samples too) to the run, and commits it to disk.
  void add(BenchmarkResult r) {
    names_.insert(r.name);
    std::string rows = samples_ ? samples_rows(&r) : std::string();
    run_->benchmarks.push_back(std::move(r));
    if (!ok()) return;  // stopped: what is on disk stays as it was
    if (Status s = check_dir(); !s) return fail(s);
    if (Status s = check_samples(); !s) return fail(s);
    if (samples_) {
      if (std::fwrite(rows.data(), 1, rows.size(), samples_) != rows.size() || std::fflush(samples_) != 0)
        return fail(errno_status("write " + dir_ + "/samples.csv", errno));
      samples_good_ = std::ftell(samples_);
      samples_benchmarks_ = run_->benchmarks.size();
    }
    if (Status s = write_run(dir_, *run_); !s) return fail(s);
    kept_ = run_->benchmarks.size();
    note_results_kept(dir_, kept_);
  }
  // The final result.json (context.complete as the run left it), or what
  // was kept when a write failed on the way.
  Status close() {
    if (Status s = check_samples(); !s) fail(s);
    if (samples_) {
      std::FILE* f = samples_;
      samples_ = nullptr;
      if (std::fclose(f) != 0) fail(errno_status("write " + dir_ + "/samples.csv", errno));
    }
    if (ok()) {
      if (Status s = check_dir(); !s)
        fail(s);
      else if (Status w = write_run(dir_, *run_); !w)
        fail(w);
      else
        note_results_kept(dir_, run_->benchmarks.size());
    }
    if (ok()) return error_;
    return Status::error(
        fmt::format("writing the run's files failed, so it stopped: {}; {}", error_.message(), kept()));
  }

 private:
  // samples.csv by its reporter: the header (`b` null: the file of a run
  // with no benchmark yet), or one benchmark's rows to append.
  static std::string samples_rows(const BenchmarkResult* b) {
    static const RunResult kEmpty;
    Report r;
    // The format is in run_reporters()' own table (reporter_test holds it).
    (void)run_reporters().write("samples-csv", RunReport{kEmpty, false, b}, &r);
    return r.text;
  }
  // The directory this run made, still there: a removed one (or another
  // made in its place) must not be refilled as if nothing happened.
  Status check_dir() const {
    struct stat sb {};
    if (stat(dir_.c_str(), &sb) != 0) return errno_status("the run's directory " + dir_, errno);
    if (sb.st_dev != dev_ || sb.st_ino != ino_)
      return Status::error("the run's directory " + dir_ + " was removed and made again by someone else");
    return Status::ok();
  }
  // samples.csv is appended through one open file: removed or replaced
  // meanwhile, every row would go to a file nobody can read, and the run
  // would end as if its samples were kept.
  Status check_samples() const {
    if (!samples_ || samples_ino_ == 0) return Status::ok();
    struct stat open_sb {
    }, named_sb{};
    const std::string path = dir_ + "/samples.csv";
    if (fstat(fileno(samples_), &open_sb) != 0) return errno_status("fstat " + path, errno);
    if (open_sb.st_nlink == 0 || stat(path.c_str(), &named_sb) != 0 || named_sb.st_ino != samples_ino_)
      return Status::error(path + " was removed or replaced while the run wrote it: its samples are lost");
    return Status::ok();
  }
  void fail(Status s) {
    if (!ok()) return;
    error_ = std::move(s);
    dir_gone_ = !check_dir();
    if (samples_) {
      // What is still buffered is dropped (never written after the cut), and
      // the file goes back to its last whole benchmark: a full disk refuses
      // writes, not truncation.
      __fpurge(samples_);
      if (samples_good_ >= 0 && !dir_gone_) (void)ftruncate(fileno(samples_), samples_good_);
    }
    samples_lost_ = !check_samples();
    if (dir_gone_) note_results_lost();
  }
  std::string kept() const {
    if (dir_gone_) return "nothing of this run was kept (its directory is gone)";
    std::string s =
        fmt::format("kept: {}/result.json with the {} benchmark(s) finished before, marked partial", dir_, kept_);
    if (samples_lost_)
      s += ", without its samples (samples.csv is gone)";
    else if (samples_good_ >= 0)
      s += fmt::format(", and samples.csv with the samples of {} benchmark(s)", samples_benchmarks_);
    return s;
  }

  std::string dir_;
  RunResult* run_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  std::FILE* samples_ = nullptr;
  long samples_good_ = -1;  // samples.csv's length after its last whole benchmark
  std::size_t samples_benchmarks_ = 0, kept_ = 0;
  bool dir_gone_ = false;
  ino_t samples_ino_ = 0;  // the samples.csv this journal appends to
  bool samples_lost_ = false;
  std::set<std::string> names_;
  Status error_ = Status::ok();
};

}  // namespace tracebench
