#include "tracebench/counters.h"

#include <linux/perf_event.h>
#include <papi.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "tracebench/clock.h"
#include "tracebench/stats.h"
#include "tracebench/system.h"

namespace tracebench {
namespace {

struct PerfSw {
  const char* name;
  std::uint64_t config;
};
constexpr PerfSw kPerfSoftware[] = {
    {"task-clock", PERF_COUNT_SW_TASK_CLOCK},
    {"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
};

constexpr const char* kPapiPresets[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", "PAPI_BR_MSP"};

}  // namespace

bool hardware_pmu_exposed(const std::string& root) {
  std::error_code ec;
  for (const char* pmu : {"cpu", "cpu_core", "cpu_atom"}) {
    if (std::filesystem::exists(root + "/sys/bus/event_source/devices/" + pmu, ec)) return true;
  }
  return false;
}

std::string perf_refusal_hint(int err, bool hardware, const std::string& root) {
  if (err == EACCES || err == EPERM) {
    const std::string level = read_file_trimmed(root + "/proc/sys/kernel/perf_event_paranoid");
    if (level.empty()) return "run as root (perf_event_paranoid unreadable)";
    return fmt::format("kernel.perf_event_paranoid is {}: run as root, or set it to 1 or lower (sysctl)", level);
  }
  if (hardware && !hardware_pmu_exposed(root)) {
    return "no hardware PMU exposed (/sys/bus/event_source/devices/cpu missing: a VM without PMU passthrough); "
           "use bare metal or a VM that passes the PMU through";
  }
  return {};
}

Counters::~Counters() { close(); }

std::vector<std::string> Counters::live_names() const {
  std::vector<std::string> names;
  for (std::size_t i : live_) names.push_back(info_[i].name);
  return names;
}

void Counters::open() {
  if (open_) return;
  open_ = true;
  open_papi();
  open_perf();
  calibrate();
}

void Counters::open_papi() {
  int ver = PAPI_library_init(PAPI_VER_CURRENT);
  papi_version_ = fmt::format("{}.{}.{}.{}", PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
                              PAPI_VERSION_REVISION(PAPI_VERSION), PAPI_VERSION_INCREMENT(PAPI_VERSION));
  std::string why_off;
  if (ver != PAPI_VER_CURRENT) {
    why_off = fmt::format("PAPI_library_init failed: {}", PAPI_strerror(ver));
  } else {
    int cidx = PAPI_get_component_index("perf_event");
    const PAPI_component_info_t* ci = cidx >= 0 ? PAPI_get_component_info(cidx) : nullptr;
    if (ci && ci->disabled) {
      why_off = fmt::format("PAPI perf_event component disabled: {}", ci->disabled_reason);
    } else if (PAPI_create_eventset(&papi_eventset_) != PAPI_OK) {
      why_off = "PAPI_create_eventset failed";
      papi_eventset_ = -1;
    }
  }
  if (!why_off.empty()) {
    if (std::string hint = perf_refusal_hint(ENOENT, true); !hint.empty()) why_off += ": " + hint;
  }
  for (const char* preset : kPapiPresets) {
    CounterInfo c{preset, "papi", false, why_off};
    if (why_off.empty()) {
      int code = 0;
      int rc = PAPI_event_name_to_code(const_cast<char*>(preset), &code);
      if (rc == PAPI_OK) rc = PAPI_query_event(code);
      if (rc == PAPI_OK) rc = PAPI_add_event(papi_eventset_, code);
      if (rc == PAPI_OK) {
        c.live = true;
      } else {
        c.unavailable_reason = fmt::format("PAPI: {}", PAPI_strerror(rc));
        // PAPI's own error ("Event does not exist") does not say why.
        if (std::string hint = perf_refusal_hint(ENOENT, true); !hint.empty()) c.unavailable_reason += ": " + hint;
      }
    }
    if (c.live) {
      live_.push_back(info_.size());
      ++papi_live_;
    }
    info_.push_back(c);
  }
  if (papi_live_ > 0) {
    if (int rc = PAPI_start(papi_eventset_); rc != PAPI_OK) {
      // Could not start: take them back out of the live list.
      for (auto& c : info_) {
        if (c.source == "papi" && c.live) {
          c.live = false;
          c.unavailable_reason = fmt::format("PAPI_start: {}", PAPI_strerror(rc));
        }
      }
      live_.clear();
      papi_live_ = 0;
    } else {
      papi_buf_.resize(papi_live_);
    }
  }
}

void Counters::open_perf() {
  for (const auto& sw : kPerfSoftware) {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = sw.config;
    attr.read_format = PERF_FORMAT_GROUP;
    attr.disabled = perf_leader_ < 0 ? 1 : 0;
    int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, perf_leader_, PERF_FLAG_FD_CLOEXEC));
    CounterInfo c{sw.name, "perf_event", fd >= 0, {}};
    if (fd < 0) {
      const int err = errno;
      c.unavailable_reason = fmt::format("perf_event_open: {}", std::strerror(err));
      if (std::string hint = perf_refusal_hint(err, false); !hint.empty()) c.unavailable_reason += ": " + hint;
    } else {
      if (perf_leader_ < 0) perf_leader_ = fd;
      perf_fds_.push_back(fd);
      live_.push_back(info_.size());
      ++perf_live_;
    }
    info_.push_back(c);
  }
  if (perf_leader_ >= 0) {
    ioctl(perf_leader_, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    perf_buf_.resize(1 + perf_live_);
  }
}

void Counters::read(std::vector<std::int64_t>* values) {
  values->resize(live_.size());
  std::size_t k = 0;
  if (papi_live_ > 0) {
    PAPI_read(papi_eventset_, papi_buf_.data());
    for (std::size_t i = 0; i < papi_live_; ++i) (*values)[k++] = papi_buf_[i];
  }
  if (perf_live_ > 0) {
    ssize_t n = ::read(perf_leader_, perf_buf_.data(), perf_buf_.size() * sizeof(std::uint64_t));
    bool ok = n == static_cast<ssize_t>(perf_buf_.size() * sizeof(std::uint64_t));
    for (std::size_t i = 0; i < perf_live_; ++i) {
      (*values)[k++] = ok ? static_cast<std::int64_t>(perf_buf_[1 + i]) : -1;
    }
  }
}

void Counters::calibrate() {
  if (live_.empty()) return;
  std::vector<std::int64_t> a, b;
  std::vector<double> cost;
  std::vector<std::vector<double>> deltas(live_.size());
  for (int i = 0; i < 201; ++i) {
    read(&a);
    std::uint64_t t0 = tsc_begin();
    read(&b);
    std::uint64_t t1 = tsc_end_lfence();  // works whether or not CPUID reports RDTSCP
    cost.push_back(static_cast<double>(t1 - t0));
    for (std::size_t k = 0; k < live_.size(); ++k) deltas[k].push_back(static_cast<double>(b[k] - a[k]));
  }
  read_cost_cycles_ = summarize(cost).p50;
  empty_delta_.clear();
  for (auto& d : deltas) empty_delta_.push_back(summarize(d).p50);
}

void Counters::close() {
  if (!open_) return;
  open_ = false;
  if (papi_eventset_ >= 0) {
    if (papi_live_ > 0) {
      std::vector<long long> sink(papi_live_);
      PAPI_stop(papi_eventset_, sink.data());
    }
    PAPI_cleanup_eventset(papi_eventset_);
    PAPI_destroy_eventset(&papi_eventset_);
    papi_eventset_ = -1;
  }
  for (int fd : perf_fds_) ::close(fd);
  perf_fds_.clear();
  perf_leader_ = -1;
  info_.clear();
  live_.clear();
  papi_live_ = perf_live_ = 0;
}

}  // namespace tracebench
