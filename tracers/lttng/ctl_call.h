// Every liblttng-ctl call that talks to the session daemon, bounded in time.
//
// liblttng-ctl sends a command on the daemon's client socket and blocks in
// recvmsg() until the answer comes, with no timeout; a daemon that is
// stopped (SIGSTOP) or hung still accepts the connection (the kernel queues
// it), so the caller would wait forever.  The library keeps its socket in
// process-wide variables without a lock, so a call abandoned in a thread
// would leave them to the next call.  Instead each call runs in a forked
// child: the child makes the call and writes its outcome to a pipe; the
// parent waits at most the deadline, then kills the child and says so.
// Nothing of the parent's liblttng-ctl state is touched, and the parent
// never sends the daemon anything itself (nor its credentials: liblttng-ctl
// calls getpid() per command, a traced syscall for the kernel adapter).
//
// A daemon that is stopped (state T) is refused at once, and one that did
// not answer once in this process is not waited for again.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <lttng/lttng.h>

#include "tracebench/status.h"

namespace tracebench::lttng {

using std::chrono::milliseconds;

// A control call (create, enable, list, destroy ...).
inline constexpr milliseconds kCtlTimeout{10000};
// lttng_stop_tracing(): the consumer daemon writes every sub-buffer out first.
inline constexpr milliseconds kStopTimeout{60000};
// The leftover check every command makes (`list`, `compare`, `run -t none`
// ... need no LTTng: they wait no longer than this).
inline constexpr milliseconds kLeftoverTimeout{2000};

// The root session daemon's pid (its pid file), 0 when none is known.
pid_t sessiond_pid();

// An error when the daemon cannot answer: it is stopped (SIGSTOP, state T in
// /proc), or a call to it timed out earlier in this process.
Status sessiond_responsive();

// Runs `body` in a child process and waits at most `limit` for it; `*out`
// gets what the body wrote to its argument.  A child that does not finish in
// time is killed: "LTTng session daemon (pid N) did not answer within S s
// (stopped?)" with `what`.
Status bounded_call(const std::string& what, milliseconds limit, const std::function<Status(std::string* out)>& body,
                    std::string* out = nullptr);

// A liblttng-ctl call returning an int (negative: -lttng_error_code), bounded.
Status ctl_call(const std::string& what, const std::function<int()>& call, milliseconds limit = kCtlTimeout);

// Whether a session daemon runs and answers (lttng_session_daemon_alive(),
// bounded): *alive false when none runs; an error when one runs and does not
// answer.
Status probe_sessiond(bool* alive, milliseconds limit = kCtlTimeout);

// What the drains read of a session's channels (lttng_list_channels()).
struct ChannelFacts {
  char name[LTTNG_SYMBOL_NAME_LEN] = {};
  bool counters = false;  // the discarded/lost counters could be read
  std::uint64_t discarded_events = 0, lost_packets = 0, subbuf_size = 0, num_subbuf = 0;
  unsigned switch_timer_us = 0, read_timer_us = 0;
};
Status list_channels(const std::string& what, lttng_handle* handle, std::vector<ChannelFacts>* out);

// For tests: forget that a daemon did not answer.
void forget_silent_sessiond();

}  // namespace tracebench::lttng
