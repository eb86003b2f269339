// In-kernel loop floor of the companion module: FIRE with no tracer
// attached, timed by the module with the TSC per batch of events.  A
// benchmark, not a test: it prints what it measured (JSON on stdout and in
// the file given as argv[1]) and fails only when the module cannot run.
//   tracebench_kmod_floor [out.json]
// The VM lab runs it with the kmod ABI tests (vm.kmod_abi).  The survey's
// 'none' floor was 17 ns (getnstimeofday around each event).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kmod/include/tracebench_kmod_abi.h"

int main(int argc, char** argv) {
  int fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "tracebench_kmod_floor: %s: %s (load kmod/tracebench.ko or use the VM lab)\n",
                 TB_KMOD_DEVICE_PATH, std::strerror(errno));
    return 1;
  }
  tb_kmod_info info{};
  if (ioctl(fd, TB_KMOD_IOC_INFO, &info) != 0 || info.abi_version != TB_KMOD_ABI_VERSION) {
    std::fprintf(stderr, "tracebench_kmod_floor: module ABI mismatch or INFO failed\n");
    return 1;
  }
  const double ns_per_cycle = info.tsc_khz ? 1e6 / info.tsc_khz : 0.0;
  nlohmann::json out;
  out["kernel_release"] = info.kernel_release;
  out["tsc_khz"] = info.tsc_khz;
  out["unit"] = (info.caps & TB_KMOD_CAP_TSC) ? "tsc_cycles" : "ns";
  out["events"] = nlohmann::json::array();
  const std::uint32_t batch = 1000;
  const std::uint64_t count = 200 * batch;
  struct Row {
    const char* name;
    std::uint32_t id, payload, flags;
  } rows[] = {
      {"fixed", TB_KMOD_EV_FIXED, 0, 0},         {"fixed_irqs_off", TB_KMOD_EV_FIXED, 0, TB_KMOD_FIRE_IRQS_OFF},
      {"payload_32", TB_KMOD_EV_PAYLOAD, 32, 0}, {"payload_4096", TB_KMOD_EV_PAYLOAD, 4096, 0},
      {"target_16", TB_KMOD_EV_TARGET, 16, 0},
  };
  for (const Row& r : rows) {
    std::vector<std::uint64_t> samples(count / batch);
    tb_kmod_fire f{};
    f.event_id = r.id;
    f.count = count;
    f.payload_size = r.payload;
    f.flags = r.flags;
    f.batch = batch;
    f.samples_ptr = reinterpret_cast<std::uintptr_t>(samples.data());
    f.samples_cap = static_cast<std::uint32_t>(samples.size());
    if (ioctl(fd, TB_KMOD_IOC_FIRE, &f) != 0) {
      std::fprintf(stderr, "tracebench_kmod_floor: FIRE %s: %s\n", r.name, std::strerror(errno));
      return 1;
    }
    // What it measured must be what it asked for: every event fired, one
    // sample per batch, and no batch timed as free.
    if (f.fired != count || f.samples_written != count / batch) {
      std::fprintf(stderr, "tracebench_kmod_floor: %s fired %llu of %llu events, %u of %llu samples\n", r.name,
                   static_cast<unsigned long long>(f.fired), static_cast<unsigned long long>(count), f.samples_written,
                   static_cast<unsigned long long>(count / batch));
      return 1;
    }
    samples.resize(f.samples_written);
    std::sort(samples.begin(), samples.end());
    if (samples.front() == 0) {
      std::fprintf(stderr, "tracebench_kmod_floor: %s: a batch of %u events took 0 %s\n", r.name, batch,
                   (info.caps & TB_KMOD_CAP_TSC) ? "cycles" : "ns");
      return 1;
    }
    auto per_event = [&](double q) {
      return static_cast<double>(samples[static_cast<std::size_t>(q * (samples.size() - 1))]) / batch;
    };
    nlohmann::json e;
    e["event"] = r.name;
    e["count"] = f.fired;
    e["batch"] = batch;
    e["cycles_per_event_min"] = per_event(0.0);
    e["cycles_per_event_median"] = per_event(0.5);
    e["cycles_per_event_p90"] = per_event(0.9);
    if (ns_per_cycle > 0) {
      e["ns_per_event_min"] = per_event(0.0) * ns_per_cycle;
      e["ns_per_event_median"] = per_event(0.5) * ns_per_cycle;
    }
    out["events"].push_back(e);
  }
  close(fd);
  std::string text = out.dump(2);
  std::printf("%s\n", text.c_str());
  if (argc > 1) {
    std::ofstream f(argv[1]);
    f << text << "\n";
    if (!f) {
      std::fprintf(stderr, "tracebench_kmod_floor: cannot write %s\n", argv[1]);
      return 1;
    }
  }
  return 0;
}
