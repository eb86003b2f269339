// The perf reference: `perf record` attached to the loop process for each
// traced run: started with its events disabled (-D -1), switched on through
// its control FIFO (the acknowledgement says it is recording), off again
// after the run, then stopped with SIGINT; its perf.data counted with `perf
// report --stats` (SAMPLE and LOST_SAMPLES events).  A new perf for each
// run, because a perf event that is open but disabled is not an untraced
// syscall: it keeps the tracepoint's probe registered (here ~50 ns per
// getpid), and the suite's untraced blocks have no event open either.
// --no-bpf-event: perf record then stops in ~50 ms instead of ~1 s.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <regex>
#include <thread>

#include "child.h"
#include "tool.h"
#include "tracebench/runner.h"

namespace tracebench::crosscheck {
namespace {

std::uint64_t last_count(const std::string& text, const std::string& label) {
  const std::regex re(label + R"( events:\s+(\d+))");
  std::uint64_t n = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) n = std::stoull((*it)[1].str());
  return n;
}

class PerfRecordTool final : public Tool {
 public:
  ~PerfRecordTool() override { end(); }
  std::string missing(const Case&, const Env&) override {
    if (!on_path("perf")) return "perf is not installed (apt-get install linux-perf)";
    if (version_line({"perf", "--version"}).rfind("perf version", 0) != 0)
      return "perf does not run here: " + version_line({"perf", "--version"});
    if (geteuid() != 0) return "needs root (tracepoint samples)";
    return "";
  }
  std::string version() override { return version_line({"perf", "--version"}); }

  Status begin(const Case& c, const Env& env, const LoopProcess& loop) override {
    env_ = &env;
    pid_ = loop.pid();
    const auto& o = c.suite.options;
    pages_ = o.count("mmap_pages") ? o.at("mmap_pages") : "512";
    ctl_path_ = env.work + "/perf.ctl";
    ack_path_ = env.work + "/perf.ack";
    data_ = env.work + "/perf.data";
    samples_ = lost_ = 0;
    return Status::ok();
  }
  Status enable() override {
    for (const auto& p : {ctl_path_, ack_path_}) {
      unlink(p.c_str());
      if (mkfifo(p.c_str(), 0600) != 0) return errno_status("mkfifo " + p, errno);
    }
    ChildSpec spec;
    spec.argv = {"perf",
                 "record",
                 "-q",
                 "-e",
                 "syscalls:sys_enter_getpid",
                 "-c",
                 "1",
                 "-m",
                 pages_,
                 "-B",
                 "--no-bpf-event",
                 "-p",
                 std::to_string(pid_),
                 "-o",
                 data_,
                 "-D",
                 "-1",
                 "--control",
                 "fifo:" + ctl_path_ + "," + ack_path_};
    spec.cpus = env_->others;
    spec.stderr_path = env_->work + "/perf.stderr";
    TB_TRY(perf_.start(spec));
    TB_TRY(open_control());
    return command("enable");
  }
  Status disable() override {
    TB_TRY(command("disable"));
    close_control();
    perf_.signal(SIGINT);
    int st = 0;
    if (!perf_.wait(60, &st)) {
      perf_.kill();
      return Status::error("perf record did not exit within 60 s of SIGINT");
    }
    std::string stats;
    ChildSpec report;
    report.argv = {"perf", "report", "-i", data_, "--stats"};
    report.cpus = env_->others;
    TB_TRY(run_to_end(report, 60, &stats));
    samples_ += last_count(stats, "SAMPLE");
    lost_ += last_count(stats, "LOST_SAMPLES");
    unlink(data_.c_str());
    return Status::ok();
  }
  Status finish(std::uint64_t fired, ToolCounts* out) override {
    out->counted = true;
    out->fired = fired;
    out->recorded = samples_;
    out->lost = lost_;
    out->how = "perf report --stats on each traced run's perf.data: SAMPLE and LOST_SAMPLES events";
    return Status::ok();
  }
  void end() override {
    close_control();
    perf_.kill();
  }

 private:
  // perf opens both FIFOs itself; ours open once it has (ENXIO before).
  Status open_control() {
    const auto start = std::chrono::steady_clock::now();
    while ((ctl_ = open(ctl_path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
      if (errno != ENXIO) return errno_status("open " + ctl_path_, errno);
      int st = 0;
      if (perf_.wait(0, &st))
        return Status::error("perf record ended (" + describe_wait_status(st) + "): " + perf_.stderr_text());
      if (g_stop_requested) return Status::error("interrupted");
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60))
        return Status::error("perf record did not open its control FIFO within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ack_ = open(ack_path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (ack_ < 0) return errno_status("open " + ack_path_, errno);
    return Status::ok();
  }
  void close_control() {
    if (ctl_ >= 0) close(ctl_);
    if (ack_ >= 0) close(ack_);
    ctl_ = ack_ = -1;
  }
  // A control command and its "ack".
  Status command(const std::string& what) {
    const std::string line = what + "\n";
    if (write(ctl_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return errno_status("perf record's control FIFO", errno);
    std::string got;
    const auto start = std::chrono::steady_clock::now();
    while (got.find("ack") == std::string::npos) {
      if (g_stop_requested) return Status::error("interrupted");
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60))
        return Status::error("perf record did not acknowledge `" + what + "` within 60 s: " + perf_.stderr_text());
      pollfd p{ack_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[64];
      const ssize_t n = read(ack_, buf, sizeof buf);
      if (n > 0) got.append(buf, static_cast<std::size_t>(n));
      if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // no writer yet
    }
    return Status::ok();
  }

  const Env* env_ = nullptr;
  pid_t pid_ = -1;
  std::string pages_, ctl_path_, ack_path_, data_;
  std::uint64_t samples_ = 0, lost_ = 0;  // the round's so far
  int ctl_ = -1, ack_ = -1;
  Child perf_;
};

}  // namespace

std::unique_ptr<Tool> make_perf_record_tool() { return std::make_unique<PerfRecordTool>(); }

}  // namespace tracebench::crosscheck
