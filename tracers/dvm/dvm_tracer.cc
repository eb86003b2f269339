// Tracer adapter "dvm": runs the in-tree D-VM on the D-VM sites of the
// workloads in bench/dvm_workloads.cc.  attach() compiles a D clause for the
// requested action, so every run is real D through the real VM.
// The same adapter in the D-VM's kernel home is the tracer "dvm_kernel"
// (tracers/dvm_kernel): the tracebench module on the kernel's probes (a
// syscall workload's entry, the module's tracepoints through sdt, its target
// function through fbt), every counting clause behind /pid == <this process>/
// (what the eBPF adapter's tgid filter does).
//
// Actions:
//   count            { @c = count(); }  (option ecbs=N: N clauses, the extra
//                    ones counting into @c1.. or, extra_predicate=false,
//                    behind a predicate that never holds)
//   record           { tracemem(arg1, payload_bytes); }  (trace(arg0) when 0)
//   predicate-false  N-1 clauses /arg0 == -1/ + one count clause (the paper's
//                    sys10 shape; N = option ecbs, default 10)
//   printf           { printf("%d %d\n", arg0, arg2); } to /dev/null
//   quantize         { @q = quantize(arg0); }
//   script           option script=<D clauses>, "$probe" replaced by the site
//   disabled         the workload's probe has no clause while the session is
//                    live on one the workload never fires (user home:
//                    dtrace:::ERROR; kernel home: syscall::acct:entry, so the
//                    syscall provider's dispatch runs on every syscall): the
//                    cost of a disabled probe; nothing may be recorded
// Options: bufsize (default 16m), aggsize, dynvarsize, strsize, scratchsize,
//          nslots, switchrate (default 1000hz), aggrate (default 1hz) (D-VM
//          options), ecbs, script, at (dvm_kernel: a user function's
//          return probe):
//          dvm_option_schema() below.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>
#include <string>

#include "tracebench/handler_count.h"
#include "tracebench/payload_pattern.h"
#include "tracers/common/proc.h"
#include "tracers/common/return_probe.h"
#include "tracers/dvm/compiler/dcompile.h"
#include "tracers/dvm/dvm_tracer.h"
#include "tracers/dvm/runtime.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

// A D-VM option's value is checked by the D-VM's own parser (the one behind
// `#pragma D option` and `tracebench dvm -x`).
std::string dvm_check(const char* key, const std::string& value) {
  tbdvm::Options scratch;
  tbdvm::Error e = tbdvm::set_option(&scratch, key, value);
  if (e.ok()) return "";
  const std::string prefix = std::string("option ") + key + "=" + value + ": ";
  return e.message.rfind(prefix, 0) == 0 ? e.message.substr(prefix.size()) : e.message;
}

const OptionSchema& dvm_option_schema() {
  using T = OptionSpec::Type;
  auto dvm_size = [](const char* name, const char* help, std::optional<std::string> def, const char* format) {
    return OptionSpec{.name = name,
                      .type = T::kText,
                      .help = help,
                      .default_value = std::move(def),
                      .format = format,
                      .check = [name](const std::string& v) { return dvm_check(name, v); }};
  };
  // Defaults sized so a hot loop's records are recorded, not dropped (a
  // dropped record costs less than a recorded one, so drops flatter the
  // figure): 16 MB per-CPU buffers switched at 1000 Hz hold a 64-byte
  // record every 4 ns, faster than any probe fires; DTrace's defaults (4 MB
  // at 100 Hz) hold one every 150 ns, slower than a hot loop's events.
  static const OptionSchema schema = {
      dvm_size("bufsize", "principal buffer per slot (each half)", "16m", "a size like 64k or 4m, 1..1g"),
      dvm_size("aggsize", "aggregation buffer per slot", "1m", "a size like 64k or 4m, 1..1g"),
      dvm_size("dynvarsize", "dynamic variable space", "1m", "a size like 64k or 4m, 1..1g"),
      dvm_size("scratchsize", "scratch space per slot", "8k", "a size like 64k or 4m, 1..1g"),
      dvm_size("strsize", "string size", "256", "16..4096"),
      [&] {
        OptionSpec o = dvm_size("nslots", "per-CPU buffer slots", std::nullopt, "1..256");
        o.default_help = "one per online CPU";
        return o;
      }(),
      dvm_size("switchrate", "consumer wakeups per second (each reads the principal buffers)", "1000hz",
               "a rate like 10hz, up to 10000hz"),
      dvm_size("aggrate",
               "aggregation snapshots per second (at most one per consumer wakeup; printa() and the "
               "final pass take their own), DTrace's default",
               "1hz", "a rate like 10hz, up to 10000hz"),
      {.name = "consumer_cpu",
       .type = T::kUint,
       .help = "CPU the consumer thread pins itself to. On the measured CPU its passes run between the workload's "
               "events and are in the traced figure; the result then says so in `warnings`",
       .default_help = "the first CPU the measured thread is not pinned to",
       .max = 4095},
      ecbs_option("ECBs on the site. predicate-false: ecbs - 1 false predicates + one count (the paper's sys10); "
                  "count: ecbs clauses, the extra ones as `extra_predicate` says (a handler-count sweep for "
                  "`tracebench model fit`)",
                  1000, "10 for predicate-false, 1 for count"),
      extra_predicate_option("count with ecbs > 1: the extra clauses count too (`true`: each its own aggregation, "
                             "all checked), or carry a predicate that never holds (`false`)"),
      {.name = "script",
       .type = T::kText,
       .help = "the script action's D clauses; `$probe` is replaced by the site",
       .format = "D clauses"},
      {.name = "stagetiming",
       .type = T::kChoice,
       .help = "dvm_kernel: time every firing's stages in the module (provider entry, VM; details().stages), at the "
               "cost of four TSC reads per firing",
       .default_value = "false",
       .words = {"true", "false"}},
      common::at_option("dvm_kernel: on a user function, the pid provider's `entry` probe (a uprobe) or its "
                        "`return` probe (a uretprobe: the kernel replaces the return address at entry and fires "
                        "when the function returns)"),
      {.name = "syscallprobe",
       .type = T::kChoice,
       .help = "dvm_kernel: how syscall probes attach. `tracepoint`: the raw syscall tracepoints, whose callback runs "
               "on every syscall once one syscall probe is enabled; `kprobe`: a kprobe (kretprobe) on each enabled "
               "syscall's function (__x64_sys_<name>), DTrace's way: other syscalls run untouched, a firing pays the "
               "kprobe",
       .default_value = "tracepoint",
       .words = {"tracepoint", "kprobe"}},
  };
  return schema;
}

// The disabled action's live probe: one the workloads never fire.  In the
// kernel, a syscall probe: the sys_enter tracepoint's callback then runs on
// every syscall and finds no probe for the workload's.
constexpr const char* kDisabledUserProbe = "dtrace:::ERROR";
constexpr const char* kDisabledKernelProbe = "syscall::acct:entry";

class DvmTracer final : public Tracer {
 public:
  DvmTracer(bool kernel, ModelDescription model) : kernel_(kernel), model_(std::move(model)) {}
  std::string_view name() const override { return kernel_ ? "dvm_kernel" : "dvm"; }
  std::string_view description() const override {
    return kernel_ ? "in-tree D-VM in the tracebench module: the same ECBs, predicates, actions and aggregations "
                     "on the kernel's probes (syscalls, the module's tracepoints, kernel functions)"
                   : "in-tree D-VM: DTrace-style ECBs, predicates, actions and aggregations in user space";
  }
  Availability available() override {
    if (!kernel_) return Availability::yes();
    const tbdvm::Error e = tbdvm::kernel_home_check();
    return e.ok() ? Availability::yes() : Availability::no(e.message);
  }
  std::vector<std::string> actions() const override {
    return {"default", "count", "record", "predicate-false", "printf", "quantize", "script", "disabled", "empty"};
  }
  std::map<std::string, std::string> versions() const override { return {{"dvm", "1"}}; }
  const OptionSchema& option_schema() const override { return dvm_option_schema(); }
  ModelDescription model() const override { return model_; }

  bool supports(const ProbePoint& p) const override { return !probe_desc(p, kernel_).empty(); }

  // Everything before the session: options, the D program for the action,
  // its compilation.  Touches nothing outside this process.
  // Long (~85 lines): one D program per action, written where the action's
  // checks are, so that what each action traces reads as one table.
  Status prepare(const AttachSpec& spec, tbdvm::Options* opts, std::string* source, std::string* action,
                 tbdvm::CompileResult* out) const {
    OptionValues v;
    TB_TRY(option_values("dvm", dvm_option_schema(), spec, &v));
    std::string desc;
    TB_TRY(site_description(spec.probe, v.text("at") == "return", &desc));
    // In the kernel every process fires the probe: the counting clauses take
    // this process's events only.
    const std::string ours = kernel_ ? " /pid == " + std::to_string(getpid()) + "/" : "";
    tbdvm::Options o;
    o.kernel = kernel_;
    for (const char* k : {"bufsize", "aggsize", "dynvarsize", "scratchsize", "strsize", "nslots", "switchrate",
                          "aggrate", "stagetiming", "syscallprobe"}) {
      if (!v.has(k)) continue;
      tbdvm::Error e = tbdvm::set_option(&o, k, v.text(k));
      if (!e.ok()) return Status::error("dvm: " + e.message);  // the schema ran the same check
    }
    if (!kernel_ && (o.stage_timing || o.syscall_kprobe))
      return Status::error(std::string("dvm: option ") + (o.stage_timing ? "stagetiming" : "syscallprobe") +
                           " applies to the kernel home (tracer dvm_kernel)");
    // The consumer away from the measured CPU, as the other tracers' readers
    // are (a thread inherits its creator's pin: the measured CPU's).
    o.consumer_cpu =
        v.has("consumer_cpu") ? static_cast<int>(v.number("consumer_cpu")) : common::cpu_away_from_this_thread();
    if (v.has("consumer_cpu")) TB_TRY(common::check_consumer_cpu(std::string(name()), o.consumer_cpu));
    *action = spec.action == "default" ? "count" : spec.action;
    const int ecbs = v.has("ecbs") ? static_cast<int>(v.number("ecbs")) : *action == "predicate-false" ? 10 : 1;
    const bool extra_true = v.text("extra_predicate") == "true";
    if (v.given("extra_predicate") && *action != "count")
      return Status::error("dvm: extra_predicate applies to the count action (with ecbs > 1)");
    std::string script = v.has("script") ? v.text("script") : "";
    std::string src;
    if (*action == "count") {
      // Clause 0 counts into @c; the extra ones into @c1.. (checked equal to
      // @c in counts()) or, with a false predicate, into @f (never).
      src = desc + ours + " { @c = count(); }";
      for (int i = 1; i < ecbs; i++)
        src += extra_true ? "\n" + desc + ours + " { @c" + std::to_string(i) + " = count(); }"
                          : "\n" + desc + " /arg0 == -1/ { @f = count(); }";
    } else if (*action == "record") {
      if (kernel_ && spec.payload_bytes && spec.probe.kind != ProbeKind::kKmodTracepoint)
        return Status::error(
            "dvm_kernel: a payload record copies the payload the probe hands over: the module's "
            "payload tracepoint does (-w kmod_payload), a syscall does not; record with payload 0");
      // In the module the payload's first 8 bytes are the event's sequence
      // number (arg0), recorded first so the consumer can check them too.
      src = !spec.payload_bytes ? desc + ours + " { trace(arg0); }"
            : kernel_ ? desc + ours + " { trace(arg0); tracemem(arg1, " + std::to_string(spec.payload_bytes) + "); }"
                      : desc + " { tracemem(arg1, " + std::to_string(spec.payload_bytes) + "); }";
    } else if (*action == "predicate-false") {
      for (int i = 0; i < ecbs - 1; i++) src += desc + " /arg0 == -1/ { @f = count(); }\n";
      src += desc + ours + " { @c = count(); }";
    } else if (*action == "printf") {
      src = desc + ours + " { printf(\"%d %d\\n\", arg0, arg2); }";
    } else if (*action == "quantize") {
      src = desc + ours + " { @q = quantize(arg0); }";
    } else if (*action == "empty") {
      // The flow alone: the site, the ECB and its (kernel home: pid)
      // predicate, no action; what count or record adds is over this.
      src = desc + ours + " { }";
    } else if (*action == "disabled") {
      src = std::string(kernel_ ? kDisabledKernelProbe : kDisabledUserProbe) + ours + " { @d = count(); }";
    } else if (*action == "script") {
      if (script.empty()) return Status::error("dvm: action script needs --option script='<D clauses>'");
      for (size_t p; (p = script.find("$probe")) != std::string::npos;) script.replace(p, 6, desc);
      src = script;
    } else {
      return Status::error("dvm: unknown action '" + spec.action +
                           "' (count, record, predicate-false, printf, quantize, script, disabled, empty)");
    }
    *out = tbdvm::compile_d(src);
    if (!out->program) return Status::error("dvm: D program: " + out->error + "\n" + src);
    for (const auto& [k, v] : out->options) {
      if (k == "quiet") continue;
      tbdvm::Error e = tbdvm::set_option(&o, k, v);
      if (!e.ok()) return Status::error("dvm: " + e.message);
    }
    if (!kernel_) TB_TRY(check_memory(o));
    *opts = o;
    *source = src;
    return Status::ok();
  }

  // The D probe description of the workload's site, at its return where
  // `at_return` (the kernel home's pid provider: a uretprobe).
  Status site_description(const ProbePoint& probe, bool at_return, std::string* desc) const {
    const std::string tracer(name());
    TB_TRY(common::check_at_return(tracer.c_str(), at_return, probe));
    if (at_return && !kernel_)
      return Status::error(
          "dvm: option at=return applies to the kernel home (tracer dvm_kernel): the user home's "
          "sites are static");
    *desc = probe_desc(probe, kernel_);
    if (desc->empty())
      return Status::error(kernel_ ? "dvm_kernel: workload probe " + probe.name +
                                         " has no kernel-home probe: use a syscall workload (getpid, ...) or the "
                                         "module's (kmod_fixed, kmod_payload, kmod_target)"
                                   : "dvm: workload probe " + probe.name +
                                         " has no D-VM site; use a dvm_* workload (`tracebench list`)");
    if (at_return) desc->replace(desc->size() - std::string_view("entry").size(), std::string::npos, "return");
    return Status::ok();
  }

  // The user-space home allocates every slot's buffers at enable(): more
  // than the machine has available is refused here, before anything runs.
  static Status check_memory(const tbdvm::Options& o) {
    const std::uint64_t need = tbdvm::slot_memory_bytes(o);
    if (need > tbdvm::kMaxSlotMemory)
      return Status::error("dvm: the buffers would need " + std::to_string(need >> 20) + " MiB (" +
                           std::to_string(tbdvm::slot_count(o)) + " slots of 2 x bufsize + aggsize + scratchsize), " +
                           "more than the D-VM's " + std::to_string(tbdvm::kMaxSlotMemory >> 20) +
                           " MiB; lower bufsize, aggsize or nslots");
    const std::uint64_t have = common::mem_available_bytes();
    if (have == 0 || need <= have) return Status::ok();
    return Status::error(
        "dvm: the buffers need " + std::to_string(need >> 20) + " MiB (" + std::to_string(tbdvm::slot_count(o)) +
        " slots of 2 x bufsize + aggsize + scratchsize) but " + std::to_string(have >> 20) +
        " MiB of memory are available (MemAvailable in /proc/meminfo); lower bufsize, aggsize or nslots");
  }

  Status validate(const AttachSpec& spec) const override {
    tbdvm::Options o;
    std::string src, action;
    tbdvm::CompileResult r;
    return prepare(spec, &o, &src, &action, &r);
  }

  Status attach(const AttachSpec& spec) override {
    teardown();
    tbdvm::Options o;
    std::string src;
    tbdvm::CompileResult r;
    TB_TRY(prepare(spec, &o, &src, &action_, &r));
    auto ep = spec.options.find("extra_predicate");
    extra_predicate_false_ = action_ == "predicate-false" || (ep != spec.options.end() && ep->second == "false");
    source_ = src;
    consumer_shares_cpu_ = common::this_thread_pinned_to(o.consumer_cpu);
    session_ = std::make_unique<tbdvm::Session>(o);
    tbdvm::Error e = session_->enable(r.program);
    if (!e.ok()) {
      session_.reset();
      return Status::error("dvm: " + e.message);
    }
    session_->pause();  // armed only between enable() and disable()
    if (action_ == "record" && spec.payload_bytes) {
      // The workloads fill their payload with the suite's pattern
      // (tracebench/payload_pattern.h): check every recorded byte against it.
      // The consumer checks every record, so the check is one memcmp against
      // the pattern laid out once (computing the pattern byte by byte for
      // every record made the consumer fall behind a hot loop).
      payload_bytes_ = spec.payload_bytes;
      expected_.resize(spec.payload_bytes);
      for (std::size_t i = 0; i < expected_.size(); i++) expected_[i] = static_cast<uint8_t>(payload_byte(i));
      session_->set_record_hook([this](const tbdvm::Ecb& e, const uint8_t* rec) {
        uint64_t seq = 0;
        bool have_seq = false;
        for (uint32_t k = 0; k < e.nactions; k++) {
          const tbdvm::Action& a = e.actions[k];
          if (a.kind == tbdvm::kActTrace && a.size == 8) {
            std::memcpy(&seq, rec + a.offset, 8);
            have_seq = true;
          }
          if (a.kind != tbdvm::kActTracemem) continue;
          payload_checked_.fetch_add(1, std::memory_order_relaxed);
          // The module's payload: bytes 0..7 are the sequence number (little
          // endian), the rest the suite's pattern.
          const size_t head = have_seq ? std::min<size_t>(8, a.size) : 0;
          bool head_ok = true;
          for (size_t i = 0; i < head; i++)
            head_ok = head_ok && rec[a.offset + i] == static_cast<uint8_t>(seq >> (8 * i));
          if (a.size != expected_.size()) {
            if (payload_truncated_.fetch_add(1, std::memory_order_relaxed) == 0) payload_kept_ = a.size;
          } else if (head_ok && std::memcmp(rec + a.offset + head, expected_.data() + head, a.size - head) == 0) {
            verified_bytes_.fetch_add(a.size, std::memory_order_relaxed);
          } else {
            payload_mismatches_.fetch_add(1, std::memory_order_relaxed);
          }
        }
      });
    }
    if (action_ == "printf") {
      devnull_ = std::fopen("/dev/null", "w");
      if (!devnull_) return Status::error("dvm: cannot open /dev/null for printf output");
    }
    session_->start_consumer(devnull_);
    return Status::ok();
  }

  Status enable() override {
    if (!session_) return Status::error("dvm: enable() before attach()");
    tbdvm::Error e = session_->resume();
    return e.ok() ? Status::ok() : Status::error("dvm: " + e.message);
  }
  Status disable() override {
    if (session_) session_->pause();
    return Status::ok();
  }
  Status drain() override {
    if (session_) session_->consume_once();
    return Status::ok();
  }

  bool reads_on_caller() const override { return true; }  // drain() is one consumer pass
  std::vector<ConsumerTask> consumer_tasks() const override {
    if (!session_ || session_->consumer_tid() == 0) return {};
    return {{"consumer (switchrate)", static_cast<int>(getpid()), session_->consumer_tid()}};
  }

  EventCounts counts() override {
    EventCounts c;
    if (!session_) return c;
    // Every pass of the consumer is a wakeup (a timer at switchrate, records or not).
    c.consumer_wakeups = static_cast<std::int64_t>(session_->consumer_stats().passes);
    c.consumer_wakes_on_timer = true;
    tbdvm::Counters k = session_->counters();
    c.lost = k.drops + k.agg_drops + k.busy_drops;
    // A clause that faulted (bad address, division by zero, ...) did not do
    // what it says, whatever the counts: an error, never a loss.
    c.tracer_errors = k.errors;
    if (k.errors) {
      std::string what;
      for (uint32_t f = 1; f < tbdvm::kFaultCount; f++)
        if (k.faults[f])
          what += (what.empty() ? "" : ", ") + std::to_string(k.faults[f]) + " x " + tbdvm::fault_name(f);
      c.tracer_error_detail = "D-VM faults: " + (what.empty() ? std::to_string(k.errors) + " errors" : what) + " in " +
                              std::to_string(k.ecb_fired) + " ECB firings";
    }
    if (action_ == "record" || action_ == "printf") {
      c.recorded = session_->records_total();
      if (payload_bytes_) {
        // tracemem(arg1, N) copies the workload's buffer; every record's
        // copy is checked, and all of it is reported, good or bad.
        c.payload_source = PayloadSource::kWorkload;
        c.payload_checked_events = payload_checked_;
        c.payload_mismatched_events = payload_mismatches_;
        c.payload_truncated_events = payload_truncated_;
        c.payload_kept_bytes = payload_kept_;
        if (payload_mismatches_) c.payload_mismatch_detail = "tracemem() bytes differ from the payload pattern";
        c.payload_verified = verified_bytes_;
      }
    } else if (action_ == "disabled") {
      // The live clause must not have fired either (nothing else calls it here).
      c.probe_disabled = true;
      c.disabled_detail =
          std::string("the session is live on ") + (kernel_ ? kDisabledKernelProbe : kDisabledUserProbe);
      for (const auto& a : session_->aggregations())
        for (const auto& row : a.rows) c.recorded += static_cast<std::uint64_t>(row.values.at(0));
    } else if (action_ == "script") {
      // Probe firings the VM handled; ECB-level numbers are in details().
      c.recorded = k.fired;
      c.lost = k.busy_drops;
    } else if (action_ == "empty") {
      // The clause's firings (its predicate held): it records nothing else.
      c.recorded = k.ecb_fired;
    } else {
      // @c (or @q) is what was recorded; every extra counting clause (@c1..)
      // of a handler-count sweep must have counted exactly as many.
      std::map<std::string, std::uint64_t> sums;
      for (const auto& a : session_->aggregations()) {
        const std::string& n = a.desc->name;
        if (n != "q" && (n.empty() || n[0] != 'c' || n.find_first_not_of("0123456789", 1) != std::string::npos))
          continue;
        for (const auto& row : a.rows)
          for (int64_t v : row.values) sums[n] += static_cast<std::uint64_t>(v);
      }
      c.recorded = sums.count("q") ? sums["q"] : sums["c"];
      for (const auto& [n, sum] : sums) {
        if (n == "c" || n == "q" || sum == c.recorded) continue;
        ++c.tracer_errors;
        c.tracer_error_detail +=
            (c.tracer_error_detail.empty() ? "" : "; ") +
            ("clause @" + n + " counted " + std::to_string(sum) + ", @c " + std::to_string(c.recorded));
      }
    }
    return c;
  }

  nlohmann::json details() const override {
    nlohmann::json j = nlohmann::json::object();
    if (!session_) return j;
    tbdvm::Counters k = session_->counters();
    const tbdvm::ConsumerStats& cs = session_->consumer_stats();
    j["script"] = source_;
    put_handler_count(&j, session_->necbs(), !extra_predicate_false_);
    j["probe_firings"] = k.fired;
    j["ecb_firings"] = k.ecb_fired;
    j["principal_drops"] = k.drops;
    j["aggregation_drops"] = k.agg_drops;
    j["busy_drops"] = k.busy_drops;
    j["errors"] = k.errors;
    nlohmann::json faults = nlohmann::json::object();
    for (uint32_t f = 1; f < tbdvm::kFaultCount; f++)
      if (k.faults[f]) faults[tbdvm::fault_name(f)] = k.faults[f];
    j["faults"] = faults;
    if (k.stages.firings) {
      // Cycles per timed firing, the read pair's floor taken off each.
      const double n = static_cast<double>(k.stages.firings), floor = k.stages.floor_cycles / n;
      nlohmann::json by = nlohmann::json::object();
      for (const auto& p : k.stages.providers) {
        const double m = static_cast<double>(p.firings);
        by[p.name] = {{"timed_firings", p.firings},
                      {"provider_entry_cycles", p.entry_cycles / m - floor},
                      {"vm_cycles", p.vm_cycles / m - floor}};
      }
      j["stages"] = {{"timed_firings", k.stages.firings},
                     {"read_floor_cycles", floor},
                     {"provider_entry_cycles", k.stages.entry_cycles / n - floor},
                     {"vm_cycles", k.stages.vm_cycles / n - floor},
                     {"by_provider", by}};
    }
    j["consumer"] = {{"passes", cs.passes},
                     {"aggregation_snapshots", cs.agg_snapshots},
                     {"status_snapshot_cycles", cs.status_cycles},
                     {"buffer_switch_cycles", cs.buf_switch_cycles},
                     {"aggregation_snapshot_cycles", cs.agg_snapshot_cycles},
                     {"aggregation_rebuild_cycles", cs.agg_rebuild_cycles},
                     {"chew_cycles", cs.chew_cycles},
                     {"bytes_copied", cs.bytes_copied},
                     {"records", cs.records}};
    j["options"] = {{"bufsize", session_->options().bufsize},
                    {"aggsize", session_->options().aggsize},
                    {"switchrate_hz", session_->options().switchrate_hz},
                    {"aggrate_hz", session_->options().aggrate_hz},
                    {"consumer_cpu", session_->options().consumer_cpu},
                    {"nslots", session_->nslots()}};
    if (!session_->consumer_pin_error().empty()) j["consumer"]["pin_error"] = session_->consumer_pin_error();
    if (consumer_shares_cpu_)
      j["warnings"] = {"the consumer thread runs on the measured CPU (consumer_cpu=" +
                       std::to_string(session_->options().consumer_cpu) +
                       "): its passes run between the workload's events, so their work is in the traced figure; give "
                       "dvm.consumer_cpu another CPU to measure the probe path alone"};
    j["home"] = kernel_ ? "kernel" : "user";
    if (kernel_) j["options"]["syscallprobe"] = session_->options().syscall_kprobe ? "kprobe" : "tracepoint";
    return j;
  }

  void teardown() noexcept override {
    if (session_) {
      session_->disable();
      session_.reset();
    }
    payload_bytes_ = 0;
    verified_bytes_ = 0;
    payload_mismatches_ = 0;
    payload_checked_ = 0;
    payload_truncated_ = 0;
    payload_kept_ = 0;
    if (devnull_) {
      std::fclose(devnull_);
      devnull_ = nullptr;
    }
  }

  ~DvmTracer() override { teardown(); }

 private:
  // The D probe description for a workload's probe point, or "" if the
  // workload has no D-VM site there (in the kernel: no such syscall).
  static std::string probe_desc(const ProbePoint& p, bool kernel) {
    if (kernel) {
      // A function of this binary: the pid provider's uprobe on it.
      if (p.kind == ProbeKind::kUserFunction) return "pid" + std::to_string(getpid()) + ":a.out:" + p.target + ":entry";
      // A USDT site of this binary ("provider:name"): the usdt provider's.
      if (const auto colon = p.target.find(':'); p.kind == ProbeKind::kUsdt && colon != std::string::npos)
        return p.target.substr(0, colon) + std::to_string(getpid()) + ":a.out::" + p.target.substr(colon + 1);
      for (const auto& pi : tbdvm::list_kernel_probes()) {
        if (p.kind == ProbeKind::kSyscall && pi.provider == "syscall" && pi.function == p.target && pi.name == "entry")
          return "syscall::" + pi.function + ":entry";
        // The module's tracepoints: "tracebench:<event>" is sdt:tracebench::<event>.
        if (p.kind == ProbeKind::kKmodTracepoint && pi.provider == "sdt" && p.target == pi.module + ":" + pi.name)
          return "sdt:" + pi.module + "::" + pi.name;
        if (p.kind == ProbeKind::kKernelFunction && pi.provider == "fbt" && pi.function == p.target &&
            pi.name == "entry")
          return "fbt:" + pi.module + ":" + pi.function + ":entry";
      }
      return {};
    }
    // A workload's probe named "dvm:<function>" has a D-VM site in
    // <function> (its kind and target may name another tracer's probe at
    // the same place, bench/same_site.cc).
    if (p.name.rfind("dvm:", 0) != 0) return {};
    std::string func = p.name.substr(4);
    for (const auto& pi : tbdvm::list_probes()) {
      if (pi.function != func) continue;
      if (p.kind == ProbeKind::kSyscall && (pi.provider != "syscall" || pi.name != "entry")) continue;
      return pi.provider + ":" + pi.module + ":" + pi.function + ":" + pi.name;
    }
    return {};
  }

  const bool kernel_;  // the kernel home (dvm_kernel)
  const ModelDescription model_;
  bool consumer_shares_cpu_ = false;  // the consumer pinned to the measured CPU (said in details())
  std::unique_ptr<tbdvm::Session> session_;
  std::string action_;
  bool extra_predicate_false_ = false;  // the extra ECBs' predicates never hold
  std::size_t payload_bytes_ = 0;
  std::vector<uint8_t> expected_;  // the payload pattern, payload_bytes_ long
  std::atomic<std::uint64_t> verified_bytes_{0};
  std::atomic<std::uint64_t> payload_mismatches_{0};
  std::atomic<std::uint64_t> payload_checked_{0};    // records whose tracemem() was checked
  std::atomic<std::uint64_t> payload_truncated_{0};  // tracemem() of another size than asked
  std::atomic<std::uint64_t> payload_kept_{0};       // its size, in the first such record
  std::string source_;
  std::FILE* devnull_ = nullptr;
};

}  // namespace

std::unique_ptr<Tracer> make_dvm_tracer(bool kernel_home, ModelDescription model) {
  return std::make_unique<DvmTracer>(kernel_home, std::move(model));
}

TRACEBENCH_REGISTER_TRACER(dvm, [] { return make_dvm_tracer(false, dvm_model()); });

}  // namespace tracebench
