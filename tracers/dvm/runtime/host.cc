// Host services the VM calls (DIF subroutines and variables that need the
// process): timestamps from the TSC calibrated against CLOCK_MONOTONIC,
// the CPU, copyin through process_vm_readv, the user stack.
#include "tracers/dvm/runtime/internal.h"

#include <sched.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>
#include <x86intrin.h>

#include <mutex>

namespace tbdvm {

// ---------------------------------------------------------------------------
// Host.
namespace {
uint64_t g_tsc0, g_ns0, g_mult;  // ns = ns0 + ((tsc - tsc0) * mult) >> 32
std::once_flag g_calib_once;
pid_t g_pid;

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void calibrate() {
  g_pid = getpid();
  uint64_t n0 = mono_ns(), t0 = __rdtsc();
  uint64_t n1;
  do n1 = mono_ns();
  while (n1 - n0 < 20000000ull);
  uint64_t t1 = __rdtsc();
  g_tsc0 = t1;
  g_ns0 = n1;
  g_mult = static_cast<uint64_t>((static_cast<unsigned __int128>(n1 - n0) << 32) / (t1 - t0));
}

uint64_t host_timestamp() {
  uint64_t d = __rdtsc() - g_tsc0;
  return g_ns0 + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * g_mult) >> 32);
}
uint64_t host_vtimestamp() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
uint64_t host_walltimestamp() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
uint64_t host_cpu() {
  unsigned aux;
  __rdtscp(&aux);
  return aux & 0xfff;
}
bool host_copyin(void* dst, uint64_t src, uint64_t len) {
  if (len == 0) return true;
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(src), len};
  ssize_t n = process_vm_readv(g_pid, &local, 1, &remote, 1, 0);
  return n == static_cast<ssize_t>(len);
}
struct UnwindCtx {
  uint64_t* pcs;
  uint32_t max, n, skip;
};
_Unwind_Reason_Code unwind_cb(_Unwind_Context* ctx, void* arg) {
  auto* u = static_cast<UnwindCtx*>(arg);
  if (u->skip) {
    u->skip--;
    return _URC_NO_REASON;
  }
  if (u->n >= u->max) return _URC_END_OF_STACK;
  u->pcs[u->n++] = _Unwind_GetIP(ctx);
  return _URC_NO_REASON;
}
uint32_t host_stack(uint64_t* pcs, uint32_t max) {
  // Skip the D-VM's own frames (host_stack, run_action, dvm_fire_locked, site).
  UnwindCtx u{pcs, max, 0, 5};
  _Unwind_Backtrace(unwind_cb, &u);
  return u.n;
}
}  // namespace

uint64_t rdtsc_cycles() { return __rdtsc(); }

Host default_host() {
  std::call_once(g_calib_once, calibrate);
  Host h;
  h.timestamp = host_timestamp;
  h.vtimestamp = host_vtimestamp;
  h.walltimestamp = host_walltimestamp;
  h.cpu = host_cpu;
  h.copyin = host_copyin;
  h.stack = host_stack;
  h.pid = static_cast<uint64_t>(g_pid);
  h.ppid = static_cast<uint64_t>(getppid());
  h.uid = static_cast<uint64_t>(getuid());
  return h;
}

}  // namespace tbdvm
