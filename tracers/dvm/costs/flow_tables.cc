// Tables 6, 3 and 7: the flow through a real site and session, the
// consumer, and the sys/sys10 validation at a paced 50 kHz.
#include "tracers/dvm/costs/costs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
// The usdt cell's site names its semaphore (tb_cost_usdt_tsc_semaphore).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdio>

#include "kmod/include/tracebench_kmod_abi.h"
#include "tracers/dvm/site.h"

namespace tbdvm::costs {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Table 6: flow through a real site and session.
extern "C" __attribute__((noinline)) void tb_cost_site(uint64_t a, uint64_t b) {
  DVM_PROBE(tbcost, "tb_cost_site", "fire", a, b);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline)) void tb_cost_nosite(uint64_t a, uint64_t b) {
  benchmark::DoNotOptimize(a);
  benchmark::DoNotOptimize(b);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline)) void tb_cost_syscall_site(uint64_t a, uint64_t b) {
  DVM_SYSCALL_ENTRY(tbcost_getpid, a, b);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline)) void tb_cost_fbt(uint64_t a, uint64_t b) {
  DVM_FUNCTION_ENTRY(a, b);
  asm volatile("" ::: "memory");
}
// Same marshalling as a site's fire call, without the VM: stage 1+5.
extern "C" __attribute__((noinline)) void tb_cost_stub(Site*, Region, const uint64_t* v, uint32_t n) {
  benchmark::DoNotOptimize(v);
  benchmark::DoNotOptimize(n);
}

std::unique_ptr<Session> session_for(const std::string& src, bool kernel = false) {
  CompileResult r = compile_d(src);
  if (!r.program) {
    std::fprintf(stderr, "dvm_costs: %s\n", r.error.c_str());
    std::abort();
  }
  Options o;
  o.kernel = kernel;
  auto s = std::make_unique<Session>(o);
  Error e = s->enable(r.program);
  if (!e.ok()) {
    std::fprintf(stderr, "dvm_costs: %s\n", e.message.c_str());
    std::abort();
  }
  return s;
}

// Table 6's rows, one registration each (~80 lines), in the table's order.
void register_table6() {
  benchmark::RegisterBenchmark("table6/site_disabled", [](benchmark::State& s) {
    timed(
        s, "table6/site_disabled", 1000,
        [](uint32_t n) {
          for (uint32_t i = 0; i < n; i++) tb_cost_site(i, 2);
        },
        [](uint32_t n) {
          for (uint32_t i = 0; i < n; i++) tb_cost_nosite(i, 2);
        });
  })->Iterations(301);
  benchmark::RegisterBenchmark("table6/stage15_marshal", [](benchmark::State& s) {
    static Site dummy{};
    timed(
        s, "table6/stage15_marshal", 1000,
        [](uint32_t n) {
          for (uint32_t i = 0; i < n; i++) {
            const uint64_t v[3] = {i, 2, 0};
            tb_cost_stub(&dummy, Region{}, v, 2);
          }
        },
        [](uint32_t n) {
          for (uint32_t i = 0; i < n; i++) tb_cost_nosite(i, 2);
        });
  })->Iterations(301);
  // The core alone: VM prepare with no ECBs, and per-ECB prepare.
  benchmark::RegisterBenchmark("table6/core_vm_prepare", [](benchmark::State& s) {
    timed(s, "table6/core_vm_prepare", 1000, [](uint32_t n) {
      for (uint32_t i = 0; i < n; i++) fire_core(nullptr, 0);
    });
  })->Iterations(301);
  // End to end per provider: site enabled with an empty clause (flow only),
  // with 10 empty clauses, and with count().
  struct P {
    const char* name;
    const char* desc;
    void (*fn)(uint64_t, uint64_t);
  } provs[] = {
      {"static", "tbcost:::fire", tb_cost_site},
      {"syscall", "syscall::tbcost_getpid:entry", tb_cost_syscall_site},
      {"fbt", "fbt::tb_cost_fbt:entry", tb_cost_fbt},
  };
  for (auto& p : provs) {
    for (const char* kind : {"flow_1ecb", "flow_10ecb", "count", "count_tid"}) {
      std::string name = std::string("table6/") + p.name + "/" + kind;
      std::string src;
      if (std::string(kind) == "flow_10ecb") {
        for (int i = 0; i < 10; i++) src += std::string(p.desc) + " { }\n";
      } else if (std::string(kind) == "count") {
        src = std::string(p.desc) + " { @c = count(); }";
      } else if (std::string(kind) == "count_tid") {
        src = std::string(p.desc) + " { @c[tid] = count(); }";  // keyed: a hash lookup per firing
      } else {
        src = std::string(p.desc) + " { }";
      }
      auto fn = p.fn;
      benchmark::RegisterBenchmark(name.c_str(), [name, src, fn](benchmark::State& s) {
        auto sess = session_for(src);
        timed(
            s, name, 1000,
            [fn](uint32_t n) {
              for (uint32_t i = 0; i < n; i++) fn(i, 2);
            },
            [](uint32_t n) {
              for (uint32_t i = 0; i < n; i++) tb_cost_nosite(i, 2);
            });
        sess->disable();
      })->Iterations(301);
    }
  }
  // Profile provider: a self-directed SIGPROF (tgkill) with the probe armed,
  // against the same signal with an empty handler (stage 1+5 = "x").
  benchmark::RegisterBenchmark("table6/profile/signal_roundtrip", [](benchmark::State& s) {
    struct sigaction sa {
    }, old{};
    sa.sa_sigaction = [](int, siginfo_t*, void*) {};
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGPROF, &sa, &old);
    pid_t pid = getpid(), tid = static_cast<pid_t>(syscall(SYS_gettid));
    timed(s, "table6/profile/signal_roundtrip", 50, [&](uint32_t n) {
      for (uint32_t i = 0; i < n; i++) syscall(SYS_tgkill, pid, tid, SIGPROF);
    });
    sigaction(SIGPROF, &old, nullptr);
  })->Iterations(101);
  benchmark::RegisterBenchmark("table6/profile/flow_1ecb", [](benchmark::State& s) {
    auto sess = session_for("profile:::profile-1 { }");  // 1 Hz timer: rarely fires by itself
    pid_t pid = getpid(), tid = static_cast<pid_t>(syscall(SYS_gettid));
    timed(s, "table6/profile/flow_1ecb", 50, [&](uint32_t n) {
      for (uint32_t i = 0; i < n; i++) syscall(SYS_tgkill, pid, tid, SIGPROF);
    });
    sess->disable();
    const Cell& rt = g_cells["table6/profile/signal_roundtrip"];
    subtract_part(&g_cells["table6/profile/flow_1ecb"], rt.cycles, rt.min);
  })->Iterations(101);
}

// ---------------------------------------------------------------------------
// Table 6 in the kernel home (table6k/<provider>/stage1|stage2|stage3), where
// the tracebench module is loaded: a count() clause on each kind of probe,
// every firing timed by the module (Options::stage_timing): stage 2 the
// provider's entry (callback to VM), stage 3 the VM; and stage 1, the trap to
// the callback (syscall entry, the uprobe's breakpoint and dispatch for pid
// and usdt),
// measured from the TSC the call hands over as its arg0 (Options::stage_trap)
// where the call is this process's.  A read pair's floor is off each; a cell
// is the median over batches of 1000 firings.
extern "C" __attribute__((noinline, used)) void tb_cost_pid_target(uint64_t tsc, uint64_t b) {
  benchmark::DoNotOptimize(tsc);
  benchmark::DoNotOptimize(b);
  asm volatile("" ::: "memory");
}

// An SDT site guarded by its semaphore whose arg0 is the TSC the caller read.
extern "C" {
__extension__ unsigned short tb_cost_usdt_tsc_semaphore __attribute__((unused, section(".probes")));
}
extern "C" __attribute__((noinline, used)) void tb_cost_usdt_target(uint64_t tsc) {
  if (__builtin_expect(tb_cost_usdt_tsc_semaphore, 0)) DTRACE_PROBE1(tb_cost_usdt, tsc, tsc);
  asm volatile("" ::: "memory");
}

namespace {
// The module's FIRE loop: `count` events of `event` with `payload` bytes.
bool kmod_fire(uint32_t event, uint64_t count, uint32_t payload = 0) {
  const int fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  tb_kmod_fire f{};
  f.event_id = event;
  f.count = count;
  f.payload_size = payload;
  f.batch = 1000;
  const bool ok = ioctl(fd, TB_KMOD_IOC_FIRE, &f) == 0 && f.fired == count;
  close(fd);
  return ok;
}
}  // namespace

void register_table6k() {
  if (!kernel_home_check().ok()) return;  // the module's D-VM is not here
  struct Provider {
    const char* name;  // the cell's
    const char* kind;  // the module's probe kind, as Counters names it
    std::string desc;
    bool (*fire)(uint32_t n);
  };
  const std::vector<Provider> provs = {
      {"syscall", "syscall entry", "syscall::getpid:entry",
       [](uint32_t n) {
         for (uint32_t i = 0; i < n; i++) syscall(SYS_getpid, tsc_begin());
         return true;
       }},
      {"pid", "pid entry", "pid" + std::to_string(getpid()) + ":a.out:tb_cost_pid_target:entry",
       [](uint32_t n) {
         for (uint32_t i = 0; i < n; i++) tb_cost_pid_target(tsc_begin(), i);
         return true;
       }},
      {"usdt", "usdt", "tb_cost_usdt" + std::to_string(getpid()) + ":a.out::tsc",
       [](uint32_t n) {
         for (uint32_t i = 0; i < n; i++) tb_cost_usdt_target(tsc_begin());
         return true;
       }},
      {"sdt", "sdt", "sdt:tracebench::tracebench_fixed", [](uint32_t n) { return kmod_fire(TB_KMOD_EV_FIXED, n); }},
      {"fbt", "fbt entry", "fbt:tracebench:tracebench_kmod_target:entry",
       [](uint32_t n) { return kmod_fire(TB_KMOD_EV_TARGET, n); }},
  };
  for (const Provider& p : provs) {
    const std::string base = std::string("table6k/") + p.name + "/";
    benchmark::RegisterBenchmark((base + "stages").c_str(), [p, base](benchmark::State& s) {
      CompileResult r = compile_d(p.desc + " { @c = count(); }");
      Options o;
      o.kernel = true;
      o.stage_timing = true;
      o.stage_trap = true;
      Session sess(o);
      Error e = r.program ? sess.enable(r.program) : Error{r.error};
      if (!e.ok()) {
        s.SkipWithError(e.message.c_str());
        return;
      }
      auto of_kind = [&p](const Counters& c) {
        for (const auto& x : c.stages.providers)
          if (x.name == p.kind) return x;
        return Counters::Stages::Provider{};
      };
      std::vector<double> st1, st2, st3;
      for (auto _ : s) {
        const Counters a = sess.counters();
        if (!p.fire(1000)) {
          s.SkipWithError("the module's FIRE loop failed");
          return;
        }
        const Counters b = sess.counters();
        const auto pa = of_kind(a), pb = of_kind(b);
        const double n = static_cast<double>(pb.firings - pa.firings);
        const double all = static_cast<double>(b.stages.firings - a.stages.firings);
        if (n <= 0 || all <= 0) continue;
        const double floor = static_cast<double>(b.stages.floor_cycles - a.stages.floor_cycles) / all;
        st2.push_back(static_cast<double>(pb.entry_cycles - pa.entry_cycles) / n - floor);
        st3.push_back(static_cast<double>(pb.vm_cycles - pa.vm_cycles) / n - floor);
        const double t = static_cast<double>(pb.trap_firings - pa.trap_firings);
        if (t > 0) st1.push_back(static_cast<double>(pb.trap_cycles - pa.trap_cycles) / t - floor);
      }
      sess.disable();
      auto cell_of = [](const std::vector<double>& v) {
        return Cell{median(v), *std::min_element(v.begin(), v.end()), "", v};
      };
      if (st2.empty()) {
        s.SkipWithError("no timed firing of the probe");
        return;
      }
      if (!st1.empty()) g_cells[base + "stage1"] = cell_of(st1);
      g_cells[base + "stage2"] = cell_of(st2);
      g_cells[base + "stage3"] = cell_of(st3);
      s.counters["stage2_cycles"] = median(st2);
    })->Iterations(51);
  }
}

// ---------------------------------------------------------------------------
// Table 3: consumer costs on a session with 1000 aggregation keys and a
// stream of 64-byte records, per pass of 2000 firings: in this process
// (table3/), and, where the tracebench module is loaded (the VM lab), in the
// kernel home (table3k/: DVM_STATUS, DVM_BUFSNAP per CPU, DVM_AGGSNAP per CPU,
// each an ioctl with its copy-out).
namespace {
void consumer_passes(benchmark::State& s, const std::string& prefix, Session* sess,
                     const std::function<void()>& fire_2000) {
  // Chew and print (Cost_A): records are formatted and written to /dev/null.
  std::FILE* devnull = std::fopen("/dev/null", "w");
  sess->set_output(devnull);
  std::vector<double> status, sw, snap, rebuild, chew, bytes, recs, aggbytes;
  for (auto _ : s) {
    ConsumerStats before = sess->consumer_stats();
    fire_2000();
    sess->consume_once();
    ConsumerStats a = sess->consumer_stats();
    status.push_back(static_cast<double>(a.status_cycles - before.status_cycles));
    sw.push_back(static_cast<double>(a.buf_switch_cycles - before.buf_switch_cycles));
    snap.push_back(static_cast<double>(a.agg_snapshot_cycles - before.agg_snapshot_cycles));
    rebuild.push_back(static_cast<double>(a.agg_rebuild_cycles - before.agg_rebuild_cycles));
    chew.push_back(static_cast<double>(a.chew_cycles - before.chew_cycles));
    bytes.push_back(static_cast<double>(a.bytes_copied - before.bytes_copied));
    aggbytes.push_back(static_cast<double>(a.agg_bytes_copied - before.agg_bytes_copied));
    recs.push_back(static_cast<double>(a.records - before.records));
  }
  sess->disable();
  std::fclose(devnull);
  auto cell_of = [](const std::vector<double>& v) {
    return Cell{median(v), *std::min_element(v.begin(), v.end()), "", v};
  };
  std::vector<double> chew_per(chew.size());
  for (size_t i = 0; i < chew.size(); i++) chew_per[i] = chew[i] / std::max(1.0, recs[i]);
  g_cells[prefix + "status_snapshot"] = cell_of(status);
  g_cells[prefix + "buffer_switch"] = cell_of(sw);
  g_cells[prefix + "aggregation_snapshot"] = cell_of(snap);
  g_cells[prefix + "aggregation_rebuild"] = cell_of(rebuild);
  g_cells[prefix + "chew_per_record"] = cell_of(chew_per);
  g_cells[prefix + "bytes_per_pass"] = Cell{median(bytes), 0, "", {}};
  g_cells[prefix + "aggregation_snapshot_bytes"] = Cell{median(aggbytes), 0, "", {}};
  g_cells[prefix + "records_per_pass"] = Cell{median(recs), 0, "", {}};
  s.counters["agg_snapshot_cycles"] = median(snap);
}

}  // namespace

void register_table3() {
  benchmark::RegisterBenchmark("table3/consumer_pass", [](benchmark::State& s) {
    auto sess = session_for("tbcost:::fire { @k[arg0 % 1000] = count(); tracemem(arg1, 64); }");
    alignas(8) static uint8_t payload[64];
    // Records need a readable payload: fire through a region site.
    consumer_passes(s, "table3/", sess.get(), [] {
      for (uint64_t i = 0; i < 2000; i++)
        DVM_PROBE_REGION(tbcost, "tb_cost_site", "fire", payload, 64, i, reinterpret_cast<uint64_t>(payload));
    });
  })->Iterations(51);
  if (!kernel_home_check().ok()) return;  // the module's D-VM is not here
  // The same clause on the module's payload tracepoint, fired by its
  // in-kernel loop (2000 events of 64 bytes per pass, on this CPU).
  benchmark::RegisterBenchmark("table3k/consumer_pass", [](benchmark::State& s) {
    auto sess = session_for("sdt:tracebench::tracebench_payload /pid == " + std::to_string(getpid()) +
                                "/ { @k[arg0 % 1000] = count(); tracemem(arg1, 64); }",
                            true);
    consumer_passes(s, "table3k/", sess.get(), [] {
      if (!kmod_fire(TB_KMOD_EV_PAYLOAD, 2000, 64)) std::abort();
    });
  })->Iterations(51);
}

// ---------------------------------------------------------------------------
// The tables checked bottom up: a getpid loop paced at 50 kHz; per-event
// cycles in the event region untraced vs traced, against the sum of the
// Table 1, 2, 4 and 6 cells the probe path runs through.  Cycles only: the
// D-VM's Table 7, the CPU a paced workload actually uses traced and
// untraced, is `tracebench model suite -t dvm` (task-clock and /proc/stat).
extern "C" __attribute__((noinline)) long tb_cost_getpid(uint64_t i) {
  DVM_SYSCALL_ENTRY(getpid, i, 0);
  return syscall(SYS_getpid);
}

// Busy-waits between events so the rate is `hz`; appends the cycles of each
// event region (site + syscall) to `out`.
void paced_events(double hz, uint64_t n, std::vector<double>* out) {
  uint64_t period = static_cast<uint64_t>(g_tsc_hz / hz);
  uint64_t next = __rdtsc();
  for (uint64_t i = 0; i < n; i++) {
    while (__rdtsc() < next) _mm_pause();
    next += period;
    uint64_t t0 = tsc_begin();
    tb_cost_getpid(i);
    uint64_t t1 = tsc_end();
    out->push_back(static_cast<double>(t1 - t0));
  }
}

// Untraced and traced blocks of 500 events alternate (the session is paused
// and resumed between them) so drift and noise hit both alike.
void paced_interleaved(Session* sess, double hz, double seconds, double* untraced, double* traced) {
  std::vector<double> off, on;
  uint64_t blocks = std::max<uint64_t>(2, static_cast<uint64_t>(hz * seconds / 1000));
  for (uint64_t b = 0; b < blocks; b++) {
    sess->pause();
    paced_events(hz, 500, &off);
    sess->resume();
    paced_events(hz, 500, &on);
  }
  *untraced = median(off);
  *traced = median(on);
}

// Two registrations (~80 lines): the DIF call's cost and Table 7's paced
// validation, whose program texts and runs are written out where they are used.
void register_validation() {
  // The cost of one DIF program invocation (call, register file, ret).
  benchmark::RegisterBenchmark("table6/dif_call_ret", [](benchmark::State& s) {
    static Dif d = [] {
      Dif x;
      x.insns = {I(kOpRet, 0)};
      return x;
    }();
    const Program* p = d.prog();
    timed(s, "table6/dif_call_ret", 500, [p](uint32_t n) {
      Core& c = core();
      for (uint32_t i = 0; i < n; i++) benchmark::DoNotOptimize(dif_exec(p, &c.slot.ms));
    });
  })->Iterations(301);
  benchmark::RegisterBenchmark("table7/validation", [](benchmark::State& s) {
    for (auto _ : s) {
      const double hz = 50000;
      std::string sys1 = "syscall::getpid:entry { @c = count(); }";
      std::string sys10;
      for (int i = 0; i < 9; i++) sys10 += "syscall::getpid:entry /arg0 == -1/ { @f = count(); }\n";
      sys10 += "syscall::getpid:entry { @c = count(); }";
      struct Run {
        const char* name;
        std::string src;
        int false_preds;
      } runs[] = {{"sys", sys1, 0}, {"sys10", sys10, 9}};
      for (auto& r : runs) {
        auto sess = session_for(r.src);
        double untraced = 0, traced = 0;
        paced_interleaved(sess.get(), hz, 2 * g_validation_seconds, &untraced, &traced);
        sess->disable();
        double measured = traced - untraced;
        // Predicted from the tables (equation 4): flow + M*ecb_prepare +
        // sum of predicate DIF costs + the count action.
        auto cell = [](const std::string& k) { return g_cells.count(k) ? g_cells[k].cycles : NAN; };
        double ecb_prep = (cell("table6/syscall/flow_10ecb") - cell("table6/syscall/flow_1ecb")) / 9;
        double flow = cell("table6/syscall/flow_1ecb") - ecb_prep;
        int m = 1 + r.false_preds;
        double pred = 0;
        if (r.false_preds) {
          // /arg0 == -1/: compile it and add up its instructions' costs.
          CompileResult cr = compile_d("tb:::x /arg0 == -1/ { }");
          const DifObject& d = *cr.program->clauses[0].predicate;
          double one = 0;
          // Walk the path a false predicate executes (conditional branches
          // not taken) and add each instruction's Table 1/2 cost.
          for (uint32_t pc = 0; pc < d.insns.size();) {
            const Insn& in = d.insns[pc];
            std::string op = op_name(in.op);
            if (op == "ret") break;
            if (op == "ldgs")
              one += cell("table2/arg0");
            else if (op == "ba")
              one += cell("table1/ba");
            else if (in.op > kOpBa && in.op <= kOpBleu)
              one += cell("table1/be");
            else
              one += cell("table1/" + op);
            pc = op == "ba" ? in.imm : pc + 1;
          }
          one += cell("table6/dif_call_ret");
          pred = r.false_preds * one;
        }
        double action = cell("table4/action/count");
        double predicted = flow + m * ecb_prep + pred + action;
        json v = {{"name", r.name},
                  {"event_rate_hz", hz},
                  {"seconds_per_phase", g_validation_seconds},
                  {"ecbs", m},
                  {"false_predicates", r.false_preds},
                  {"untraced_event_cycles", untraced},
                  {"traced_event_cycles", traced},
                  {"measured_probe_cycles", measured},
                  {"predicted_probe_cycles", predicted},
                  {"error_cycles", measured - predicted}};
        g_validation.push_back(v);
        s.counters[std::string(r.name) + "_measured"] = measured;
        s.counters[std::string(r.name) + "_predicted"] = predicted;
      }
    }
  })->Iterations(1);
}

}  // namespace tbdvm::costs
