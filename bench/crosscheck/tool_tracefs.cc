// The ftrace reference: a tracefs instance set up by hand, by writing its
// files as `echo` would (no libtracefs, nothing of the suite's adapter):
// instance tracebench-<pid>-crosscheck (the naming `tracebench cleanup`
// knows), buffer_size_kb and trace_clock as the suite's options, overwrite,
// set_event_pid = the loop; the event's enable file written around each
// traced run; what it recorded read from the per-CPU stats after the round
// (entries + overrun + dropped events).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tool.h"
#include "undo.h"

namespace tracebench::crosscheck {
namespace {

constexpr const char* kEvent = "events/syscalls/sys_enter_getpid";

std::string tracefs_root() {
  for (const char* p : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (access((std::string(p) + "/instances").c_str(), F_OK) == 0) return p;
  }
  return "";
}

Status write_file(const std::string& path, const std::string& value, bool truncate = false) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | (truncate ? O_TRUNC : 0));
  if (fd < 0) return errno_status("open " + path, errno);
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) return errno_status("write `" + value + "` to " + path, err);
  return Status::ok();
}

// entries, overrun and dropped events summed over the instance's CPUs.
void read_stats(const std::string& inst, std::uint64_t* entries, std::uint64_t* lost) {
  *entries = *lost = 0;
  std::error_code ec;
  for (const auto& cpu : std::filesystem::directory_iterator(inst + "/per_cpu", ec)) {
    std::ifstream f(cpu.path() / "stats");
    std::string line;
    while (std::getline(f, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = line.substr(0, colon);
      std::uint64_t v = 0;
      std::istringstream(line.substr(colon + 1)) >> v;
      if (key == "entries") *entries += v;
      if (key == "overrun" || key == "dropped events") *lost += v;
    }
  }
}

class TracefsTool final : public Tool {
 public:
  std::string missing(const Case&, const Env&) override {
    if (geteuid() != 0) return "needs root (tracefs)";
    const std::string root = tracefs_root();
    if (root.empty()) return "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
    if (access((root + "/" + kEvent + "/enable").c_str(), W_OK) != 0)
      return "no tracepoint syscalls:sys_enter_getpid in " + root;
    return "";
  }
  std::string version() override { return "tracefs at " + tracefs_root(); }

  Status begin(const Case& c, const Env&, const LoopProcess& loop) override {
    inst_ = fmt::format("{}/instances/tracebench-{}-crosscheck", tracefs_root(), getpid());
    if (mkdir(inst_.c_str(), 0755) != 0) return errno_status("mkdir " + inst_, errno);
    undo_ = Undo([inst = inst_] {
      (void)write_file(inst + "/" + kEvent + "/enable", "0");
      (void)write_file(inst + "/tracing_on", "0");
      rmdir(inst.c_str());
    });
    const auto& o = c.suite.options;
    TB_TRY(write_file(inst_ + "/buffer_size_kb", o.count("buffer_kb") ? o.at("buffer_kb") : "8192"));
    TB_TRY(write_file(inst_ + "/trace_clock", o.count("clock") ? o.at("clock") : "local"));
    TB_TRY(write_file(inst_ + "/options/overwrite", "1"));
    TB_TRY(write_file(inst_ + "/set_event_pid", std::to_string(loop.pid())));
    TB_TRY(write_file(inst_ + "/trace", "", true));  // empty, its counters at zero
    return write_file(inst_ + "/tracing_on", "1");
  }
  Status enable() override { return write_file(inst_ + "/" + kEvent + "/enable", "1"); }
  Status disable() override { return write_file(inst_ + "/" + kEvent + "/enable", "0"); }
  Status finish(std::uint64_t fired, ToolCounts* out) override {
    out->counted = true;
    out->fired = fired;
    read_stats(inst_, &out->recorded, &out->lost);
    out->how = "the instance's per_cpu/*/stats: entries, overrun + dropped events";
    return Status::ok();
  }
  void end() override { undo_.run(); }

 private:
  std::string inst_;
  Undo undo_;
};

}  // namespace

std::unique_ptr<Tool> make_tracefs_tool() { return std::make_unique<TracefsTool>(); }

}  // namespace tracebench::crosscheck
