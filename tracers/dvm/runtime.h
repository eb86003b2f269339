// D-VM runtime (user space): probe table, sessions (a DTrace "consumer
// state"), the consumer thread and the profile provider.  Not freestanding:
// this is the part that allocates, at enable time only.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kmod/dvm/core/vm.h"
#include "tracers/dvm/program.h"
#include "tracers/dvm/site.h"

namespace tbdvm {

// Errors are values (the core library does not depend on the harness).
struct Error {
  std::string message;  // empty = ok
  bool ok() const { return message.empty(); }
  static Error none() { return {}; }
};

struct Options {
  uint32_t nslots = 0;             // 0 = online CPUs
  uint32_t bufsize = 1u << 20;     // principal buffer bytes per slot (each half)
  uint32_t aggsize = 1u << 20;     // aggregation buffer bytes per slot
  uint32_t dynvarsize = 1u << 20;  // dynamic variable space bytes
  uint32_t strsize = 256;
  uint32_t scratchsize = 8192;     // per slot
  double switchrate_hz = 1.0;      // consumer wakeups per second (principal buffers read)
  double aggrate_hz = 1.0;         // aggregation snapshots per second (DTrace's default too)
  bool allow_zero_probes = false;  // dtrace -Z
  // The CPU the consumer thread pins itself to; -1: where its creator may run
  // (a harness's adapter sets one away from the measured CPU, as the other
  // tracers' readers are; a thread inherits its creator's pin).
  int consumer_cpu = -1;
  uint64_t profile_target_tid = 0;  // profile provider signals this thread (0 = enabler)
  // Where the session lives: false = this process (its static sites), true =
  // the tracebench module (/dev/tracebench: the kernel's probes, slots per CPU).
  bool kernel = false;
  // The kernel home times each firing's stages (Counters::stages): the
  // provider's entry and the VM, with the reads' floor.
  bool stage_timing = false;
  // With stage_timing: the traced code passes the TSC it read just before
  // each call as the call's arg0 (getpid(tsc), f(tsc)), so the module
  // measures stage 1 of syscall and pid entry probes (Provider::trap_*).
  // For benchmarks that do; no option string sets it.
  bool stage_trap = false;
  // The kernel home's syscall probes: false, the raw syscall tracepoints (one
  // callback on every syscall once any syscall probe is enabled); true, a
  // kprobe (kretprobe) on each enabled syscall's own function, DTrace's way:
  // the other syscalls run untouched, each firing pays the kprobe.
  bool syscall_kprobe = false;
  // The -c command's process before it has exec'd: pid probes on it take
  // their a.out from target_exe, not from /proc/<pid>/exe.
  int64_t target_pid = -1;
  std::string target_exe;
};
// Parses "bufsize=4m", "switchrate=10hz", "nslots=2" ...
Error set_option(Options* o, const std::string& key, const std::string& value);

// The user-space home's buffer slots (nslots, else one per online CPU up
// to 256) and the memory a session allocates for them at enable().
// More than kMaxSlotMemory is refused.
uint32_t slot_count(const Options& o);
uint64_t slot_memory_bytes(const Options& o);
constexpr uint64_t kMaxSlotMemory = 4ull << 30;

// Where a USDT probe's argument is, from its SDT note's spec ("-4@%edi",
// "8@$5", "-4@-20(%rbp)", "8@(%rax,%rdx,8)", "8@sym(%rip)"): the module's
// tb_kmod_dvm_usdt_arg (kind, size, register numbers are the module's).
struct UsdtArg {
  uint8_t kind = 0;   // TB_KMOD_USDT_ARG_IMM, _REG or _MEM
  int8_t size = 0;    // bytes; negative: signed
  uint8_t reg = 0;    // TB_KMOD_USDT_REG_*
  uint8_t index = 0;  // memory: the index register, when scale is not 0
  uint8_t scale = 0;  // memory: 0, or 1, 2, 4, 8 (base + index * scale + value)
  int64_t value = 0;  // immediate, or displacement (rip: from the probe's address)
};
// Parses one x86-64 argument spec.  `pc` is the probe's address in its file
// and `symbol` finds a symbol's address for "sym(%rip)" / "sym+8(%rip)"
// operands; an error says what form this reader does not take.
Error parse_usdt_arg(const std::string& spec, uint64_t pc,
                     const std::function<bool(const std::string&, uint64_t*)>& symbol, UsdtArg* out);

// Every probe this process can fire: static sites plus on-demand ones.
struct ProbeInfo {
  uint32_t id;
  Site* site;  // nullptr: a probe of the kernel home
  std::string provider, module, function, name;
  uint32_t kernel_kind = 0, kernel_arg = 0;  // the kernel home's probe (tb_kmod_dvm_probe)
  std::string kernel_path;                   // pid/usdt probes: the file and the instruction's offset in it
  uint64_t kernel_offset = 0;
  uint64_t kernel_ref_ctr = 0;     // usdt: the semaphore's file offset, 0: none
  std::vector<UsdtArg> usdt_args;  // usdt: where its arguments are
};
std::vector<ProbeInfo> list_probes();
// The probes of the kernel home (Options::kernel): dtrace:::BEGIN/END, the
// module's tracepoints sdt:tracebench::tracebench_fixed and _payload,
// syscall::<name>:entry/return for every syscall of this architecture, and
// fbt:<module>:<function>:entry/return for every kernel text symbol.
// Built once per process (kallsyms is read then).
const std::vector<ProbeInfo>& list_kernel_probes();
// Whether the kernel home can run here: the tracebench module loaded,
// speaking this binary's ABI, with its D-VM; else why not.  *nr_syscalls:
// the running kernel's syscall table size.
Error kernel_home_check(uint32_t* nr_syscalls = nullptr);
// profile:::profile-N (N Hz on every CPU) and profile:::tick-N (one CPU) of
// the kernel home, made for the descriptions that name them (N 1..10000).
std::vector<ProbeInfo> kernel_timer_probes(const std::vector<std::string>& patterns);
// pid<P>:<module>:<function>:entry/return of the kernel home (uprobes), made
// for the descriptions that name them, numbered from first_id: module a.out
// (P's executable, Options::target_exe while a -c command waits to start) or
// the basename of a file P maps; functions from the file's ELF symbols (globs
// allowed).  An error says which process, module or file is missing.
Error kernel_pid_probes(const std::vector<std::string>& patterns, const Options& o, uint32_t first_id,
                        std::vector<ProbeInfo>* out);
// <provider><P>:<module>:<function>:<name> of the kernel home (DTrace's USDT
// naming): the SDT notes (.note.stapsdt) of process P's modules whose
// provider and name match; function is the one holding the site.  A
// provider field of letters ending in digits other than "pid" names one.
Error kernel_usdt_probes(const std::vector<std::string>& patterns, const Options& o, uint32_t first_id,
                         std::vector<ProbeInfo>* out);
// Both, numbered from first_id: the probes made for these descriptions in
// other processes.
Error kernel_process_probes(const std::vector<std::string>& patterns, const Options& o, uint32_t first_id,
                            std::vector<ProbeInfo>* out);
// A probe description's fields: provider, module, function, name, missing
// leading ones empty (DTrace rules); none when it has more than four.
std::vector<std::string> description_fields(const std::string& pattern);
// Matches "prov:mod:func:name" with shell globs, missing leading fields and
// empty fields matching anything (DTrace rules).
bool probe_matches(const std::string& pattern, const ProbeInfo& p);

// Fires dtrace:::BEGIN / END explicitly (the session does it on start/stop).
struct ConsumerStats {
  uint64_t passes = 0;
  uint64_t agg_snapshots = 0;  // of the aggregations (each pass's at most one; printa's and trunc's too)
  uint64_t status_cycles = 0, buf_switch_cycles = 0, agg_snapshot_cycles = 0, agg_rebuild_cycles = 0, chew_cycles = 0;
  uint64_t bytes_copied = 0;      // principal + aggregation bytes read
  uint64_t agg_bytes_copied = 0;  // aggregation snapshot bytes (memcpy)
  uint64_t records = 0;
  uint64_t error_records = 0;  // faults reported (ErrorRecord), not counted in records
};

struct Counters {
  uint64_t fired = 0, ecb_fired = 0, drops = 0, agg_drops = 0, busy_drops = 0, errors = 0;
  uint64_t faults[kFaultCount] = {};
  // Options::stage_timing (kernel home): sums over the timed firings, in TSC
  // cycles; floor = the cost of one pair of reads, included once in each.
  struct Stages {
    uint64_t firings = 0, entry_cycles = 0, vm_cycles = 0, floor_cycles = 0;
    // The same per provider (the module's probe kinds: syscall entry/return,
    // sdt, fbt entry/return, profile, tick, BEGIN/END/ERROR).
    struct Provider {
      std::string name;
      uint64_t firings = 0, entry_cycles = 0, vm_cycles = 0;
      // Options::stage_trap: stage 1 (the call's trap to the callback) of
      // the firings whose arg0 was the caller's TSC.
      uint64_t trap_firings = 0, trap_cycles = 0;
    };
    std::vector<Provider> providers;  // those that fired
  } stages;
};

// One merged aggregation row.
struct AggRow {
  std::vector<std::string> key_strings;  // decoded, for printing
  std::vector<int64_t> key_ints;
  std::vector<int64_t> values;
};
struct AggResult {
  const AggDesc* desc = nullptr;
  std::vector<AggRow> rows;  // sorted the way DTrace prints them
  int64_t normal = 1;        // normalize()'s factor: printed values are divided by it
};
// stddev()'s value from its row (count, sum, 128-bit sum of squares).
int64_t agg_stddev(const std::vector<int64_t>& values);

class KernelHome;

class Session {
 public:
  explicit Session(Options o = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Verifies, matches probes, allocates buffers and arms the sites.
  Error enable(std::shared_ptr<CompiledProgram> prog);
  // Where records are printed by consume_once() (nullptr: only counted).
  void set_output(std::FILE* out) { out_ = out; }
  // Where faults are reported, as dtrace(1) does, when there is an output
  // (default stderr).
  void set_error_output(std::FILE* err) { err_ = err; }
  // Called for every record the consumer reads (before printing), e.g. to
  // verify payload bytes.  Set before start_consumer().
  using RecordHook = std::function<void(const Ecb& ecb, const uint8_t* record)>;
  void set_record_hook(RecordHook hook) { record_hook_ = std::move(hook); }
  // Starts the consumer thread (optional; drain() works without it).
  void start_consumer(std::FILE* out);
  // Disarms the sites, waits for firings in flight, stops the consumer and
  // does a final pass (END fires before that if any clause asked for it).
  void disable();
  // Disarm / re-arm the sites without losing buffers or aggregations (the
  // harness's baseline blocks run between pause() and resume()).
  void pause();
  Error resume();
  bool armed() const { return armed_; }
  // One consumer pass (switch, read, snapshot aggregations, rebuild).
  void consume_once();

  Counters counters() const;
  const ConsumerStats& consumer_stats() const { return cstats_; }
  // The consumer thread's tid (0 when it is not running).
  int consumer_tid() const { return consumer_tid_.load(); }
  // Why the consumer thread could not pin itself to Options::consumer_cpu ("" = it did, or none asked).
  const std::string& consumer_pin_error() const { return pin_error_; }
  uint64_t records_for_epid(uint32_t epid) const;
  uint64_t records_total() const { return cstats_.records; }
  std::vector<AggResult> aggregations();
  // Every aggregation that printa() has not printed yet (dtrace's output at exit).
  void print_aggregations(std::FILE* out);
  std::vector<std::string> matched_probes() const;
  size_t necbs() const { return ecbs_.size(); }
  // exit() ran on the probe path (exit_status() is known once consumed).
  bool exited() const { return exited_ || state_.exit_requested.load(std::memory_order_relaxed); }
  int exit_status() const { return exit_status_; }
  State* state() { return &state_; }
  // Slots: this process's (user home) or the module's, one per possible CPU.
  uint32_t nslots() const;
  const Options& options() const { return opt_; }

 private:
  struct EcbInfo;
  void chew(const uint8_t* data, uint32_t len);
  void report_error(const uint8_t* record);
  // printa/clear/trunc/normalize/denormalize, as the consumer reads them.
  void agg_op(const ActionDesc& d, int64_t arg);
  void reset_agg(uint32_t agg_id, const std::string* key, bool unlink);
  std::vector<AggResult> aggregations_locked();
  void print_aggregation(std::FILE* out, const AggResult& r, bool named, const PrintfDesc* format);
  void snapshot_aggs();
  void merge_aggs(const uint8_t* arena, uint32_t used);
  void consumer_loop();
  // The consumer thread's pass: the principal buffers every time, the
  // aggregations only when 1/aggrate has passed since their last snapshot
  // (DTrace's aggrate apart from its switchrate).
  void consume_pass(bool snapshot_aggregations);
  Error alloc_state();
  void free_state();

  Options opt_;
  std::shared_ptr<CompiledProgram> prog_;
  State state_;
  std::vector<std::unique_ptr<Binding>> bindings_;
  std::vector<std::pair<Site*, Binding*>> site_bindings_;
  std::vector<std::unique_ptr<Ecb>> ecbs_;
  std::vector<std::vector<Action>> action_store_;
  std::vector<std::vector<const Program*>> key_store_;
  std::vector<EcbInfo> epids_;   // index = epid - 1
  std::vector<uint8_t> memory_;  // all slot memory in one block
  std::vector<uint8_t> dyn_chunks_;
  std::vector<uint32_t> dyn_buckets_;
  std::vector<uint64_t> gvals_;
  std::vector<uint8_t> gstr_;
  std::vector<Slot> slots_;
  bool enabled_ = false;
  bool armed_ = false;
  bool exited_ = false;
  int exit_status_ = 0;
  std::FILE* out_ = nullptr;
  std::FILE* err_ = stderr;
  std::map<uint32_t, int64_t> normal_;  // normalize() factors by aggregation
  std::vector<bool> printed_;           // printa() printed it: not again at exit
  RecordHook record_hook_;
  std::thread consumer_;
  std::atomic<int> consumer_tid_{0};
  std::string pin_error_;  // written by the consumer thread before it publishes its tid
  std::mutex consume_mu_;
  bool stop_ = false;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::vector<uint8_t> agg_copy_;
  std::map<std::pair<uint32_t, std::string>, std::vector<int64_t>> agg_merged_;
  ConsumerStats cstats_;
  std::vector<uint64_t> epid_records_;
  void* profile_timer_ = nullptr;
  std::unique_ptr<KernelHome> kernel_;  // Options::kernel, enabled until disable()
  Counters kernel_final_;               // the module's counters at disable()
  uint32_t kernel_ncpus_ = 0;
  std::vector<uint8_t> buf_copy_;  // the kernel home's principal buffer copy-out
};

// Host defaults (rdtsc-scaled monotonic clock, process_vm_readv copyin, ...).
Host default_host();
uint64_t rdtsc_cycles();

}  // namespace tbdvm
