// Marker family: one write(2) of `payload_bytes` of a known pattern to the
// tracer's trace_marker per event.  The tracer (ftrace) names the file with
// Tracer::marker_file() and checks the pattern when it reads events back.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "tracebench/workload.h"
#include "tracebench/payload_pattern.h"

namespace tracebench {
namespace {

class MarkerState final : public WorkloadState {
 public:
  MarkerState(int fd, std::size_t payload) : fd_(fd), buf_(payload ? payload : 1) {
    fill_payload(buf_.data(), payload);
    len_ = payload;
  }
  ~MarkerState() override {
    if (fd_ >= 0) close(fd_);
  }
  void fire(std::uint64_t n) override {
    const char* p = buf_.data();
    for (std::uint64_t i = 0; i < n; ++i) {
      // The result is deliberately ignored: while the tracer is disabled the
      // kernel refuses the write (EBADF) and that refusal is the disabled cost.
      ssize_t r = write(fd_, p, len_);
      (void)r;
    }
  }

 private:
  int fd_;
  std::vector<char> buf_;
  std::size_t len_ = 0;
};

Status setup_marker(const WorkloadParams& params, std::unique_ptr<WorkloadState>* out) {
  if (params.marker_file.empty())
    return Status::error(
        "workload 'marker' needs a tracer that owns a trace_marker "
        "(Tracer::marker_file()); run it with --tracer ftrace");
  int fd = open(params.marker_file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno_status("open " + params.marker_file, errno);
  *out = std::make_unique<MarkerState>(fd, params.payload_bytes);
  return Status::ok();
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_WORKLOAD(
    marker, ::tracebench::Workload{
                .name = "marker",
                .family = "marker",
                .description = "write(2) of payload_bytes of a known pattern to the tracer's trace_marker",
                .probe = {.name = "marker:trace_marker",
                          .kind = ::tracebench::ProbeKind::kMarker,
                          .target = "trace_marker",
                          .address = 0,
                          .description = "one trace_marker write per event"},
                .takes_payload = true,
                .setup = ::tracebench::setup_marker,
            });
