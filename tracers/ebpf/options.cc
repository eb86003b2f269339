// The eBPF adapter's options: the schema `tracebench list --options ebpf`
// prints, and how an AttachSpec becomes the adapter's configuration (the
// program type and hook, the action, the ring's wakeup and consumer).
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <string>

#include "ebpf_tracer.h"
#include "bpf/tb_shared.h"
#include "bpf_objects.h"
#include "tracebench/handler_count.h"
#include "tracebench/options.h"
#include "tracers/common/proc.h"

namespace tracebench::ebpf {

const OptionSchema& option_schema() {
  using T = OptionSpec::Type;
  static const OptionSchema schema = {
      {.name = "attach",
       .type = T::kChoice,
       .help = "the BPF program type and hook (table above)",
       .default_help = "from the probe kind (table above)",
       .words = {"tracepoint", "raw_tp", "tp_btf", "uprobe", "uretprobe", "uprobe_multi", "usdt", "fentry", "fexit",
                 "kprobe", "perf_event"}},
      {.name = "profile_hz",
       .type = T::kUint,
       .help = "profile probes (attach=perf_event): samples per second of the firing thread's CPU time, a "
               "software cpu-clock event with a fixed period of 1e9/hz ns (bpftrace's `profile:hz`)",
       .default_value = "10000",
       .min = 1,
       .max = 100000},
      {.name = "wakeup",
       .type = T::kChoice,
       .help = "`bpf_ringbuf_submit()` flags 0, `BPF_RB_NO_WAKEUP`, `BPF_RB_FORCE_WAKEUP` (ringbuf only)",
       .default_value = "default",
       .words = {"default", "no_wakeup", "force"}},
      {.name = "consumer",
       .type = T::kChoice,
       .help = "`epoll` (`ring_buffer__poll`/`perf_buffer__poll`) or `spin` (`__consume` in a loop)",
       .default_value = "epoll",
       .words = {"epoll", "spin"}},
      {.name = "consumer_cpu",
       .type = T::kUint,
       .help = "CPU the consumer thread pins itself to. On the measured CPU (e.g. `--cpu 0 -o "
               "ebpf.consumer_cpu=0`) it drains the buffer between the workload's events: its work is then in "
               "the traced figure and no cross-CPU wakeup is paid, and the result says so in `warnings`",
       .default_help = "the first CPU the measured thread is not pinned to",
       .max = 4095},
      {.name = "poll_ms",
       .type = T::kUint,
       .help = "epoll timeout; with `no_wakeup` the consumer only runs on timeouts",
       .default_value = "10",
       .min = 1,
       .max = 10000},
      {.name = "buffer_kb",
       .type = T::kUint,
       .help = "ring buffer size, or perf buffer size per CPU; at least one page",
       .default_help = "4096 (ringbuf), 256 (perfbuf)",
       .min = 4,
       .max = 1u << 20,
       .power_of_two = true,
       .sizes_buffer = true},
      {.name = "record_bytes",
       .type = T::kUint,
       .help = "record size, a multiple of 8 (16.. when copying the workload's buffer)",
       .default_help = "the payload size rounded up to 8 (+ 8 for the header when copied), or 64",
       .min = 8,
       .max = TB_MAX_RECORD_BYTES},
      {.name = "hash_map",
       .type = T::kChoice,
       .help = "per-CPU or shared hash map for the hash action",
       .default_value = "percpu",
       .words = {"percpu", "shared"}},
      {.name = "hash_entries",
       .type = T::kUint,
       .help = "hash map capacity",
       .default_value = "10240",
       .min = 1,
       .max = 1u << 24},
      ecbs_option("programs on the probe point (count action): the extra ones are separate programs with their "
                  "own counters and links on the same hook, filtering as `extra_predicate` says (a handler-count "
                  "sweep for `tracebench model fit`)",
                  64),
      extra_predicate_option("with ecbs > 1: the extra programs' process filter holds (`true`: each counts every "
                             "event, checked) or never holds (`false`: a tgid no task has, compared on every event)"),
      {.name = "pid_filter",
       .type = T::kChoice,
       .help = "whose hits a uprobe is for (count action): `self`, or another process of this binary that calls "
               "the probed function 1000 times at the first enable (the proof the probe is live), so that every "
               "hit of the measured process is rejected: by the kernel at the link (`other_kernel`, the probe "
               "installed in that process alone, as `bpftrace -p`) or by the program (`other_program`, installed "
               "in every process and the tgid compared on each hit, as a `/pid == N/` predicate)",
       .default_value = "self",
       .words = {"self", "other_kernel", "other_program"}},
      {.name = "stats",
       .type = T::kBool,
       .help = "kernel run statistics (`bpf_enable_stats(BPF_STATS_RUN_TIME)`, held from attach to teardown)",
       .default_help = "off; on for `empty`"},
  };
  return schema;
}

// Long (~155 lines) on purpose: the options one after another, each a few
// lines from its typed value to the configuration with the checks that tie
// it to the action and probe, so that a key's reading sits in one place.
Status EbpfTracer::parse_options(const AttachSpec& spec) {
  OptionValues opts;
  TB_TRY(tracebench::option_values("ebpf", option_schema(), spec, &opts));

  // Action.
  std::string action = spec.action.empty() || spec.action == "default" ? "count" : spec.action;
  auto acts = actions();
  if (std::find(acts.begin(), acts.end(), action) == acts.end())
    return Status::error("ebpf: unknown action '" + action +
                         "'; actions: empty, count (default), hash, ringbuf, perfbuf");
  cfg_.action = action;

  // Attach type, defaulting from the probe kind.
  std::string def_attach;
  switch (spec.probe.kind) {
    case ProbeKind::kSyscall: def_attach = "tracepoint"; break;
    case ProbeKind::kUserFunction: def_attach = "uprobe"; break;
    case ProbeKind::kUsdt: def_attach = "usdt"; break;
    case ProbeKind::kKernelFunction: def_attach = "fentry"; break;
    case ProbeKind::kKmodTracepoint: def_attach = "tracepoint"; break;
    case ProbeKind::kProfile: def_attach = "perf_event"; break;
    default:
      return Status::error("ebpf: cannot attach to probe '" + spec.probe.name + "' of kind " +
                           std::string(to_string(spec.probe.kind)) +
                           "; supported kinds: syscall, user function, usdt, kernel function, "
                           "kmod tracepoint, profile");
  }
  std::string attach = opts.has("attach") ? opts.text("attach") : def_attach;
  if (!parse_attach_type(attach, &cfg_.attach))
    return Status::error(
        "ebpf: unknown attach type '" + attach +
        "'; use tracepoint|raw_tp|tp_btf|uprobe|uretprobe|uprobe_multi|usdt|fentry|fexit|kprobe|perf_event");
  const AttachType t = cfg_.attach;
  bool compatible = false;
  switch (spec.probe.kind) {
    case ProbeKind::kSyscall:
      compatible = t == AttachType::kTracepoint || t == AttachType::kRawTp || t == AttachType::kTpBtf ||
                   t == AttachType::kFentry || t == AttachType::kFexit || t == AttachType::kKprobe;
      break;
    case ProbeKind::kUserFunction:
      compatible = t == AttachType::kUprobe || t == AttachType::kUretprobe || t == AttachType::kUprobeMulti;
      break;
    case ProbeKind::kUsdt: compatible = t == AttachType::kUsdt; break;
    case ProbeKind::kKernelFunction:
      compatible = t == AttachType::kFentry || t == AttachType::kFexit || t == AttachType::kKprobe;
      break;
    case ProbeKind::kKmodTracepoint: compatible = t == AttachType::kTracepoint; break;
    case ProbeKind::kProfile: compatible = t == AttachType::kPerfEvent; break;
    default: break;
  }
  if (!compatible)
    return Status::error(
        "ebpf: attach=" + attach + " cannot attach to " + std::string(to_string(spec.probe.kind)) + " probe '" +
        spec.probe.name +
        "' (syscall: tracepoint|raw_tp|tp_btf|fentry|fexit|kprobe; user function: "
        "uprobe|uretprobe|uprobe_multi; usdt: usdt; kernel function: fentry|fexit|kprobe; kmod tracepoint: tracepoint; "
        "profile: perf_event)");

  // Ring buffer wakeup policy.
  wakeup_ = opts.text("wakeup");
  if (wakeup_ == "default")
    cfg_.wakeup_flags = 0;
  else if (wakeup_ == "no_wakeup")
    cfg_.wakeup_flags = BPF_RB_NO_WAKEUP;
  else
    cfg_.wakeup_flags = BPF_RB_FORCE_WAKEUP;
  if (wakeup_ != "default" && action != "ringbuf")
    return Status::error("ebpf: wakeup=" + wakeup_ +
                         " applies to the ringbuf action only (perf buffers wake per record)");

  const std::string consumer = opts.text("consumer");
  consumer_cfg_.mode = consumer == "spin" ? ConsumerMode::kSpin : ConsumerMode::kEpoll;

  // Default: away from the measured CPU (the first online one on a one-CPU machine).
  const std::vector<int> online = online_cpus();
  const int away = common::cpu_away_from_this_thread();
  std::uint64_t v = opts.has("consumer_cpu") ? opts.number("consumer_cpu")
                    : away >= 0              ? static_cast<std::uint64_t>(away)
                                             : static_cast<std::uint64_t>(online.empty() ? 0 : online.front());
  if (opts.has("consumer_cpu")) TB_TRY(common::check_consumer_cpu("ebpf", static_cast<long>(v)));
  const long ncpu = static_cast<long>(online.size());
  consumer_cfg_.cpu = static_cast<int>(v);
  // Said in the result: a consumer on the measured CPU reads the buffer
  // between the workload's events (its cost lands in the traced figure and
  // no cross-CPU wakeup happens), one elsewhere is woken across CPUs.
  consumer_shares_cpu_ = ncpu > 1 && common::this_thread_pinned_to(consumer_cfg_.cpu);
  consumer_cfg_.poll_ms = static_cast<int>(opts.number("poll_ms"));

  // Where the records' payload comes from: the workload's buffer, copied
  // with bpf_probe_read_user() at probes that hand one over (the syscall's
  // or function's arguments named by the probe point), else generated.
  const ProbePoint& pp = spec.probe;
  const bool buffer_at_probe = pp.payload_addr_arg >= 0 && pp.payload_len_arg >= 0 &&
                               ((pp.kind == ProbeKind::kSyscall &&
                                 (t == AttachType::kTracepoint || t == AttachType::kRawTp || t == AttachType::kTpBtf) &&
                                 pp.payload_addr_arg < 5 && pp.payload_len_arg < 5) ||
                                (pp.kind == ProbeKind::kUserFunction && t == AttachType::kUprobe &&
                                 pp.payload_addr_arg < 5 && pp.payload_len_arg < 5));
  copy_payload_ = (action == "ringbuf" || action == "perfbuf") && spec.payload_bytes > 0 && buffer_at_probe;
  cfg_.payload_arg = copy_payload_ ? pp.payload_addr_arg : -1;
  cfg_.payload_len_arg = copy_payload_ ? pp.payload_len_arg : -1;

  // Record size: an 8-byte header + the payload when copied; the payload
  // rounded up to 8 when generated; else 64 bytes.
  std::uint64_t def_record = spec.payload_bytes ? (spec.payload_bytes + 7) / 8 * 8 : 64;
  if (copy_payload_) def_record += 8;
  if (def_record < 8) def_record = 8;
  if (def_record > TB_MAX_RECORD_BYTES)
    return Status::error("ebpf: payload of " + std::to_string(spec.payload_bytes) +
                         " bytes exceeds the largest record (" + std::to_string(TB_MAX_RECORD_BYTES) + " bytes)");
  v = opts.has("record_bytes") ? opts.number("record_bytes") : def_record;
  if (v < (copy_payload_ ? 16u : 8u) || v % 8)
    return Status::error("ebpf: record_bytes must be a multiple of 8 in 8.." + std::to_string(TB_MAX_RECORD_BYTES));
  cfg_.record_bytes = static_cast<std::uint32_t>(v);

  const bool perf = action == "perfbuf";
  v = opts.has("buffer_kb") ? opts.number("buffer_kb") : perf ? 256 : 4096;
  buffer_kb_ = v;
  const long page = sysconf(_SC_PAGESIZE);
  if (v * 1024 < static_cast<std::uint64_t>(page)) return Status::error("ebpf: buffer_kb must be at least one page");
  cfg_.ringbuf_bytes = static_cast<std::uint32_t>(v * 1024);
  consumer_cfg_.perf_pages = v * 1024 / static_cast<std::uint64_t>(page);

  cfg_.hash_shared = opts.text("hash_map") == "shared";
  cfg_.hash_entries = static_cast<std::uint32_t>(opts.number("hash_entries"));

  // The profile probe's sampling period.
  if (opts.given("profile_hz") && t != AttachType::kPerfEvent)
    return Status::error("ebpf: profile_hz applies to profile probes (attach=perf_event) only");
  profile_period_ns_ = 1000000000ull / opts.number("profile_hz");
  if (t == AttachType::kPerfEvent)
    TB_TRY(common::check_profile_rate("ebpf", opts.number("profile_hz"),
                                      common::read_text("/proc/sys/kernel/perf_event_max_sample_rate")));

  // Handlers on the probe point: the count program N times.
  ecbs_ = static_cast<int>(opts.number("ecbs"));
  if (ecbs_ > 1 && t == AttachType::kPerfEvent)
    return Status::error("ebpf: ecbs=" + std::to_string(ecbs_) +
                         " cannot apply to a profile probe: a perf event runs one BPF program (more programs would be "
                         "more timers, not more handlers on one)");
  extra_false_ = opts.text("extra_predicate") == "false";
  if (ecbs_ > 1 && action != "count")
    return Status::error("ebpf: ecbs=" + std::to_string(ecbs_) +
                         " applies to the count action (each extra program counts, or filters everything out)");

  // Whose hits the probe is for.
  const std::string pf = opts.text("pid_filter");
  pid_filter_ = pf == "other_kernel"    ? PidFilter::kOtherKernel
                : pf == "other_program" ? PidFilter::kOtherProgram
                                        : PidFilter::kSelf;
  if (pid_filter_ != PidFilter::kSelf) {
    if (pp.kind != ProbeKind::kUserFunction || pp.address == 0)
      return Status::error("ebpf: pid_filter=" + pf + " needs a user-function probe with a known address (the other " +
                           "process calls it): user sites such as site_nop or call, not " + pp.name);
    if (action != "count" || ecbs_ > 1 || (spec.pid > 0 && spec.pid != getpid()))
      return Status::error("ebpf: pid_filter=" + pf +
                           " applies to the count action with one program, in the process that runs tracebench");
  }

  // Kernel run stats cost two sched_clock() reads per run of the program
  // (on a VM's clock, more than the program itself), so they are off unless asked for; the
  // empty action has no other way to count and turns them on.
  stats_ = opts.has("stats") ? opts.on("stats") : action == "empty";
  if (!stats_ && action == "empty")
    return Status::error(
        "ebpf: action 'empty' records nothing, so its events are counted from the kernel's "
        "run count; it needs stats=on");
  return Status::ok();
}

}  // namespace tracebench::ebpf
