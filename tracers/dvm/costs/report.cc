// The tables as JSON and Markdown (a reporter each, by format name in
// cost_reporters()), and the same cells in the suite's results schema.
#include "tracers/dvm/costs/costs.h"

#include <sys/utsname.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tracebench/reporter.h"
#include "tracebench/results.h"
#include "tracebench/util.h"

namespace tbdvm::costs {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Tables as JSON + Markdown.
std::string fmt(double v) {
  if (std::isnan(v)) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, std::fabs(v) >= 100 ? "%.0f" : "%.1f", v);
  return b;
}

// Sequences that needed helper instructions (push/flush around an
// associative access) have those helpers' costs taken out, in order.
void subtract_helpers() {
  for (auto& c : g_insn_cases) {
    std::string k = std::string("table1/") + c.name;
    if (!g_cells.count(k)) continue;
    double sub = 0;
    for (auto& h : c.subtract) {
      auto it = g_cells.find("table1/" + h);
      if (it != g_cells.end()) sub += it->second.cycles;
    }
    subtract_part(&g_cells[k], sub, sub);
  }
}

namespace {

// What the tables are written from: the cells the benchmarks filled, the
// machine they ran on, Table 7's rows.  Each format below is one reporter
// (tracebench/reporter.h), found by name in cost_reporters().
struct CostTables {
  const std::map<std::string, Cell>& cells;
  const json& validation;
  json context;  // kernel, machine, tsc_hz, ncpus, cpu_model, unit
  std::string kernel_release, kernel_version;
  double tsc_hz = 0;

  bool has(const std::string& k) const { return cells.count(k) > 0; }
  double val(const std::string& k) const { return has(k) ? cells.at(k).cycles : NAN; }
  json cell(const std::string& k) const {
    auto it = cells.find(k);
    if (it == cells.end()) return nullptr;
    return json{{"cycles", it->second.cycles}, {"cycles_min", it->second.min}};
  }
  // Per-ECB prepare: the extra cost of each further empty ECB on a real site.
  double ecb_prepare() const { return (val("table6/static/flow_10ecb") - val("table6/static/flow_1ecb")) / 9; }
};

// The machine the cells were measured on, as dvm_costs.json's context says it.
CostTables describe(const json& validation, double tsc_hz) {
  CostTables t{g_cells, validation, json::object(), "", "", tsc_hz};
  utsname u{};
  uname(&u);
  t.kernel_release = u.release;
  t.kernel_version = u.version;
  json& ctx = t.context;
  ctx["kernel"] = std::string(u.release);
  ctx["machine"] = std::string(u.machine);
  ctx["tsc_hz"] = tsc_hz;
  ctx["ncpus"] = sysconf(_SC_NPROCESSORS_ONLN);
  {
    std::ifstream ci("/proc/cpuinfo");
    std::string line;
    while (std::getline(ci, line))
      if (line.rfind("model name", 0) == 0) {
        ctx["cpu_model"] = line.substr(line.find(':') + 2);
        break;
      }
  }
  ctx["unit"] = "cycles (rdtsc), median of batches";
  return t;
}

// The paper's Table 1 figures (DTrace on a Pentium 4) beside ours, by class.
const std::map<std::string, const char*>& paper_table1() {
  static const std::map<std::string, const char*> paper = {{"logic", "44"},
                                                           {"add/sub", "41"},
                                                           {"mul", "62"},
                                                           {"div/rem", "127"},
                                                           {"set constant", "31"},
                                                           {"push (by value)", "49"},
                                                           {"push (by reference)", "318"},
                                                           {"flush stack", "31"},
                                                           {"cmp", "60"},
                                                           {"tst", "38"},
                                                           {"branch", "37"},
                                                           {"branch (conditional)", "37"},
                                                           {"load memory", "90"},
                                                           {"store memory", "985"},
                                                           {"mov", "29"},
                                                           {"load global", "252"},
                                                           {"store global", "33"},
                                                           {"store global (by reference)", "15000"},
                                                           {"load thread-local", "982"},
                                                           {"store thread-local", "1562"},
                                                           {"store thread-local (by reference)", "16000"},
                                                           {"load clause-local", "40"},
                                                           {"store clause-local", "57"},
                                                           {"load global assoc", "999"},
                                                           {"store global assoc", "1566"},
                                                           {"load thread assoc", "2227"},
                                                           {"store thread assoc", "2692"}};
  return paper;
}

constexpr const char* kTable3Terms[] = {"status_snapshot",     "buffer_switch",   "aggregation_snapshot",
                                        "aggregation_rebuild", "chew_per_record", "bytes_per_pass"};
constexpr const char* kTable3kTerms[] = {
    "status_snapshot", "buffer_switch",  "aggregation_snapshot",       "aggregation_rebuild",
    "chew_per_record", "bytes_per_pass", "aggregation_snapshot_bytes", "records_per_pass"};
constexpr const char* kProviders[] = {"static", "syscall", "fbt", "profile"};
constexpr const char* kKernelProviders[] = {"syscall", "pid", "usdt", "sdt", "fbt"};

// ---- dvm_costs.json

class JsonCostReporter final : public tracebench::JsonReporter<CostTables> {
 public:
  tracebench::Status document(const CostTables& t, json* out) const override {
    json j = {{"schema", "tracebench.dvm_costs"}, {"schema_version", 1}, {"context", t.context}};
    table1(t, &j);
    table2(t, &j);
    table3(t, &j);
    table5(t, &j);
    table4(t, &j);
    table6(t, &j);
    j["table7_validation"] = t.validation;
    j["targets"] = {{"site_disabled", t.val("table6/site_disabled")},
                    {"count_end_to_end", t.val("table6/static/count")},
                    {"count_tid_end_to_end", t.val("table6/static/count_tid")},
                    {"ecb_prepare", t.ecb_prepare()},
                    {"alu_add", t.val("table1/add")},
                    {"mixed_per_insn", t.val("table1/mixed")}};
    *out = std::move(j);
    return tracebench::Status::ok();
  }

 private:
  static void table1(const CostTables& t, json* j) {
    json t1 = json::array();
    for (auto& c : g_insn_cases) {
      std::string k = std::string("table1/") + c.name;
      t1.push_back({{"instruction", c.name}, {"class", c.cls}, {"cost", t.cell(k)}});
    }
    (*j)["table1_instructions"] = t1;
    (*j)["dif_call_ret"] = t.cell("table6/dif_call_ret");
  }
  static void table2(const CostTables& t, json* j) {
    json t2 = json::array();
    for (uint32_t id = 0; id < kVarBuiltinEnd; id++) {
      const char* n = builtin_name(id);
      if (!n) continue;
      t2.push_back({{"variable", n}, {"cost", t.cell(std::string("table2/") + n)}});
    }
    (*j)["table2_builtins"] = t2;
  }
  static void table3(const CostTables& t, json* j) {
    json t3;
    for (const char* k : kTable3Terms) t3[k] = t.val(std::string("table3/") + k);
    if (t.val("table3/aggregation_snapshot") > 0) {
      // Copy-out bandwidth: the aggregation snapshot is a memcpy under the slot lock.
      double bpc = t.val("table3/aggregation_snapshot_bytes") / t.val("table3/aggregation_snapshot");
      t3["aggregation_snapshot_bytes"] = t.val("table3/aggregation_snapshot_bytes");
      t3["copy_bandwidth_MBps"] = bpc * t.tsc_hz / 1e6;
    }
    (*j)["table3_consumer"] = t3;
    if (!t.has("table3k/status_snapshot")) return;
    json t3k;
    for (const char* k : kTable3kTerms) t3k[k] = t.val(std::string("table3k/") + k);
    if (t.val("table3k/aggregation_snapshot") > 0) {
      const double bpc = t.val("table3k/aggregation_snapshot_bytes") / t.val("table3k/aggregation_snapshot");
      t3k["copy_bandwidth_MBps"] = bpc * t.tsc_hz / 1e6;
    }
    (*j)["table3_consumer_kernel"] = t3k;
  }
  static void table5(const CostTables& t, json* j) {
    json t5;
    for (const char* k : {"switch_one_cpu", "wakeup_other_cpu"}) {
      const std::string key = std::string("table5/") + k;
      if (!t.has(key)) continue;  // one CPU: nothing to wake on another
      t5[k] = t.cell(key);
      t5[std::string(k) + "_ns"] = t.val(key) / t.tsc_hz * 1e9;
    }
    if (t.has("table5/switch_one_cpu")) t5["pipe_write_read"] = median(t.cells.at("table5/switch_one_cpu").base);
    (*j)["table5_context_switch"] = t5;
  }
  static void table4(const CostTables& t, json* j) {
    json t4 = json::array();
    for (auto& [k, c] : t.cells) {
      if (k.rfind("table4/", 0) != 0) continue;
      t4.push_back({{"name", k.substr(7)}, {"cost", t.cell(k)}});
    }
    (*j)["table4_actions"] = t4;
  }
  static void table6(const CostTables& t, json* j) {
    json t6;
    const double st15 = t.val("table6/stage15_marshal"), vm = t.val("table6/core_vm_prepare"), ecb = t.ecb_prepare();
    t6["site_disabled"] = t.cell("table6/site_disabled");
    t6["stage1_5_marshal_call"] = t.cell("table6/stage15_marshal");
    t6["vm_prepare"] = t.cell("table6/core_vm_prepare");
    t6["ecb_prepare"] = ecb;
    json provs = json::object();
    for (const char* p : kProviders) {
      std::string b = std::string("table6/") + p + "/";
      double stage24 = t.val(b + "flow_1ecb") - st15 - vm - ecb;
      provs[p] = {{"flow_1ecb", t.cell(b + "flow_1ecb")},
                  {"flow_10ecb", t.cell(b + "flow_10ecb")},
                  {"count", t.cell(b + "count")},
                  {"count_tid", t.cell(b + "count_tid")},
                  {"stage2_4_derived", std::string(p) == "profile" ? json(nullptr) : json(stage24)}};
    }
    t6["providers"] = provs;
    (*j)["table6_flow"] = t6;
    if (!t.has("table6k/syscall/stage2")) return;
    // The kernel home: the module times each firing's stages.
    json t6k;
    for (const char* p : kKernelProviders) {
      const std::string b = std::string("table6k/") + p + "/";
      if (!t.has(b + "stage2")) continue;
      t6k[p] = {{"stage1_trap", t.cell(b + "stage1")},
                {"stage2_provider_entry", t.cell(b + "stage2")},
                {"stage3_vm", t.cell(b + "stage3")}};
    }
    (*j)["table6_stages_kernel"] = t6k;
  }
};

// ---- dvm_costs.md

class MarkdownCostReporter final : public tracebench::Reporter<CostTables> {
 public:
  tracebench::Status write(const CostTables& t, tracebench::Report* out) const override {
    std::string md = "# D-VM cost tables\n\nMeasured on " + t.context.value("cpu_model", std::string("?")) +
                     ", kernel " + t.kernel_release + ", TSC " + fmt(t.tsc_hz / 1e9) +
                     " GHz. Cycles per operation (rdtsc, median).\n\n";
    md += table1(t) + table2(t) + table3(t) + table5(t) + table4(t) + table6(t) + validation(t) + targets(t);
    out->text = std::move(md);
    return tracebench::Status::ok();
  }

 private:
  static std::string table1(const CostTables& t) {
    std::string md =
        "## Table 1: DIF instructions\n\n| instruction | class | cycles | DTrace (P4) |\n|---|---|---:|---:|\n";
    const auto& paper = paper_table1();
    md += "| (invoke: prologue + ret) | call | " + fmt(t.val("table1/dif_invoke_empty")) + " | |\n";
    md += "| ret (empty program) | ret | " + fmt(t.val("table6/dif_call_ret")) + " | 28 |\n";
    for (auto& c : g_insn_cases) {
      std::string k = std::string("table1/") + c.name;
      md += std::string("| ") + c.name + " | " + c.cls + " | " + fmt(t.val(k)) + " | " +
            (paper.count(c.cls) ? paper.at(c.cls) : "") + " |\n";
    }
    return md;
  }
  static std::string table2(const CostTables& t) {
    std::string md = "\n## Table 2: built-in variables (one load, fresh firing)\n\n| variable | cycles |\n|---|---:|\n";
    for (uint32_t id = 0; id < kVarBuiltinEnd; id++) {
      const char* n = builtin_name(id);
      if (!n) continue;
      md += std::string("| ") + n + " | " + fmt(t.val(std::string("table2/") + n)) + " |\n";
    }
    return md;
  }
  static std::string table3(const CostTables& t) {
    std::string md =
        "\n## Table 3: consumer (per pass: 2000 firings, 1000 aggregation keys, 64-byte records)\n\n| "
        "term | value |\n|---|---:|\n";
    for (const char* k : kTable3Terms) {
      std::string key = std::string("table3/") + k;
      md += std::string("| ") + k + (std::string(k) == "bytes_per_pass" ? " (bytes)" : " (cycles)") + " | " +
            fmt(t.val(key)) + " |\n";
    }
    if (t.val("table3/aggregation_snapshot") > 0) {
      double bpc = t.val("table3/aggregation_snapshot_bytes") / t.val("table3/aggregation_snapshot");
      md += "| aggregation snapshot bytes | " + fmt(t.val("table3/aggregation_snapshot_bytes")) + " |\n";
      md += "| copy-out bandwidth (MB/s) | " + fmt(bpc * t.tsc_hz / 1e6) + " |\n";
    }
    if (!t.has("table3k/status_snapshot")) return md;
    // The kernel home: each term an ioctl (its copy-out included), from this process.
    md += "\n## Table 3, kernel home (the module's DVM_STATUS, DVM_BUFSNAP and DVM_AGGSNAP ioctls, per pass: " +
          fmt(t.val("table3k/records_per_pass")) + " records of the payload tracepoint, 1000 aggregation keys, " +
          "every CPU's buffers)\n\n| term | value |\n|---|---:|\n";
    for (const char* k : kTable3kTerms) {
      const std::string key = std::string("table3k/") + k;
      const bool count = std::string(k).find("bytes") != std::string::npos || std::string(k) == "records_per_pass";
      md += std::string("| ") + k + (count ? "" : " (cycles)") + " | " + fmt(t.val(key)) + " |\n";
    }
    if (t.val("table3k/aggregation_snapshot") > 0) {
      const double bpc = t.val("table3k/aggregation_snapshot_bytes") / t.val("table3k/aggregation_snapshot");
      md += "| copy-out bandwidth, aggregation snapshot (MB/s) | " + fmt(bpc * t.tsc_hz / 1e6) + " |\n";
    }
    return md;
  }
  static std::string table5(const CostTables& t) {
    std::string md =
        "\n## Table 5: context switch (a one-byte token through two pipes, per hop, minus the hop's own pipe write "
        "and read in one thread; lmbench's lat_ctx way)\n\n| term | cycles | ns | DTrace (P4, idle) "
        "|\n|---|---:|---:|---:|\n";
    for (const char* k : {"switch_one_cpu", "wakeup_other_cpu"}) {
      const std::string key = std::string("table5/") + k;
      if (!t.has(key)) continue;  // one CPU: nothing to wake on another
      md += std::string("| ") +
            (std::string(k) == "switch_one_cpu" ? "context switch, both threads on one CPU"
                                                : "wakeup of a thread on another CPU") +
            " | " + fmt(t.val(key)) + " | " + fmt(t.val(key) / t.tsc_hz * 1e9) + " | " +
            (std::string(k) == "switch_one_cpu" ? "8 µs" : "") + " |\n";
    }
    if (t.has("table5/switch_one_cpu")) {
      const double pipe = median(t.cells.at("table5/switch_one_cpu").base);
      md += "| pipe write + read, one thread (the baseline) | " + fmt(pipe) + " | " + fmt(pipe / t.tsc_hz * 1e9) +
            " | |\n";
    }
    return md;
  }
  static std::string table4(const CostTables& t) {
    std::string md =
        "\n## Table 4: subroutines, actions, aggregations (fire with the action minus fire without; "
        "subroutines include argument set-up)\n\n| name | cycles |\n|---|---:|\n";
    for (auto& [k, c] : t.cells) {
      if (k.rfind("table4/", 0) != 0) continue;
      md += "| " + k.substr(7) + " | " + fmt(c.cycles) + " |\n";
    }
    return md;
  }
  static std::string table6(const CostTables& t) {
    const double st15 = t.val("table6/stage15_marshal"), vm = t.val("table6/core_vm_prepare"), ecb = t.ecb_prepare();
    std::string md =
        "\n## Table 6: flow per provider\n\nC_vm_prepare = " + fmt(vm) + " (DTrace 432), C_ecb_prepare = " + fmt(ecb) +
        " (DTrace 298); disabled site = " + fmt(t.val("table6/site_disabled")) +
        "; site call marshalling beyond a plain call (stage 1+5) = " + fmt(st15) +
        ".\n\n| provider | flow, 1 empty ECB | flow, 10 empty ECBs | count() end to end | @[tid] = count() "
        "end to end | stage 2+4 (derived) |\n|---|---:|---:|---:|---:|---:|\n";
    for (const char* p : kProviders) {
      std::string b = std::string("table6/") + p + "/";
      double f1 = t.val(b + "flow_1ecb");
      double stage24 = f1 - st15 - vm - ecb;
      md +=
          std::string("| ") + p + " | " + fmt(f1) + " | " + fmt(t.val(b + "flow_10ecb")) + " | " +
          fmt(t.val(b + "count")) + " | " + fmt(t.val(b + "count_tid")) + " | " +
          (std::string(p) == "profile" ? "x = " + fmt(t.val("table6/profile/signal_roundtrip")) + " (signal round trip)"
                                       : fmt(stage24)) +
          " |\n";
    }
    if (!t.has("table6k/syscall/stage2")) return md;
    md +=
        "\n## Table 6, kernel home (the module's stage timing of a count() clause, cycles per firing, a TSC read "
        "pair's floor off each)\n\nStage 1 is the call's trap to the provider's callback (the syscall entry; the "
        "breakpoint and the uprobe's dispatch, pid and usdt), measured from the TSC the call hands over as its first "
        "argument; the module's own loop fires sdt and fbt, so theirs is not measured.\n\n"
        "| provider | stage 1: trap to callback | stage 2: provider entry | stage 3: VM |\n|---|---:|---:|---:|\n";
    for (const char* p : kKernelProviders) {
      const std::string b = std::string("table6k/") + p + "/";
      if (!t.has(b + "stage2")) continue;
      md += std::string("| ") + p + " | " + (t.has(b + "stage1") ? fmt(t.val(b + "stage1")) : "not measured") + " | " +
            fmt(t.val(b + "stage2")) + " | " + fmt(t.val(b + "stage3")) + " |\n";
    }
    return md;
  }
  static std::string validation(const CostTables& t) {
    std::string md =
        "\n## The tables checked bottom up: sys vs sys10 at 50 kHz (getpid)\n\nCycles per event in the paced event "
        "region, traced less untraced, against the sum of the Table 1, 2, 4 and 6 cells the probe path runs through. "
        "The CPU a paced workload uses traced and untraced (Table 7) is measured by `tracebench model suite -t dvm`."
        "\n\n| run | ECBs | predicted cycles/probe | measured | error |\n|---|---:|---:|---:|---:|\n";
    for (auto& v : t.validation) {
      md += "| " + v.at("name").get<std::string>() + " | " + std::to_string(v.at("ecbs").get<int>()) + " | " +
            fmt(v.at("predicted_probe_cycles").get<double>()) + " | " +
            fmt(v.at("measured_probe_cycles").get<double>()) + " | " + fmt(v.at("error_cycles").get<double>()) + " |\n";
    }
    return md;
  }
  // Targets from the issue, checked against what was measured.
  static std::string targets(const CostTables& t) {
    std::string md = "\n## Targets\n\n| target | limit | measured |\n|---|---:|---:|\n";
    md += "| disabled site | <= 2 | " + fmt(t.val("table6/site_disabled")) + " |\n";
    md += "| one ECB with count(), end to end | <= 80 | " + fmt(t.val("table6/static/count")) + " |\n";
    md += "| per-ECB prepare | <= 15 | " + fmt(t.ecb_prepare()) + " |\n";
    md += "| simple ALU instruction (add) | <= 3 | " + fmt(t.val("table1/add")) + " |\n";
    md += "| mixed instruction stream, per instruction | <= 5 | " + fmt(t.val("table1/mixed")) + " |\n";
    md += "| one ECB with @[tid] = count(), end to end | <= 150 | " + fmt(t.val("table6/static/count_tid")) + " |\n";
    return md;
  }
};

// The cost tables' formats by name.
const tracebench::ReporterTable<CostTables>& cost_reporters() {
  static const JsonCostReporter json_reporter;
  static const MarkdownCostReporter markdown_reporter;
  static const tracebench::ReporterTable<CostTables> t("D-VM cost tables",
                                                       {{"json", &json_reporter}, {"markdown", &markdown_reporter}});
  return t;
}

// The same cells in the suite's results schema: one benchmark per cell,
// tracer "dvm", workload "dvm_costs", traced = the cell's per-op cycles
// (baseline already subtracted per batch), the table in tracer_details.
tracebench::RunResult results_run(const CostTables& t) {
  tracebench::RunResult run;
  run.context.date_utc = tracebench::utc_now_iso8601();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  run.context.host = host;
  run.context.cpu_model = t.context.value("cpu_model", std::string());
  run.context.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  run.context.kernel_release = t.kernel_release;
  run.context.kernel_version = t.kernel_version;
  run.context.tsc_hz = t.tsc_hz;
  run.context.tsc_calibrated_hz = g_tsc_calibrated_hz;
  run.context.tsc_source = g_tsc_source;
  run.context.tracebench_version = "dvm_costs";
  run.context.git_sha = TBDVM_GIT_SHA;
  run.context.build_type = TBDVM_BUILD_TYPE;
  run.context.compiler = __VERSION__;
  run.context.run_id = tracebench::make_run_id(run.context);
  // A timed() cell is a benchmark as the suite has them: baseline and traced
  // per-op cycles of each batch (a batch stands for a repetition), the
  // overhead the median of their paired differences.  A cell the consumer
  // counted itself has no baseline: listed as skipped, saying where it is.
  const double ns_per_cycle = t.tsc_hz > 0 ? 1e9 / t.tsc_hz : 0;
  auto scaled = [](std::vector<double> v, double f) {
    for (double& x : v) x *= f;
    return v;
  };
  for (auto& [k, c] : t.cells) {
    tracebench::BenchmarkResult b;
    b.name = "dvm/dvm_costs/" + k;
    b.tracer = "dvm";
    b.workload = "dvm_costs";
    b.probe = "tb:tracebench:bench:fire";
    b.probe_kind = "user_function";  // D-VM sites are static probes in user code, as the dvm_* workloads say
    b.action = k;
    b.tracer_details = {{"table", k.substr(0, k.find('/'))},
                        {"cell", k},
                        {"cycles_median", c.cycles},
                        {"unit", "cycles per operation"}};
    b.repetitions = static_cast<int>(std::max<std::size_t>(2, c.samples.size()));
    const bool paired = !c.traced.empty() && c.traced.size() == c.base.size() && c.samples.size() == c.traced.size() &&
                        c.samples.size() >= 2 && ns_per_cycle > 0;
    if (!paired) {
      b.status = "skipped";
      b.error =
          "measured by the consumer's own cycle counters, without a paired baseline: the figure is in "
          "dvm_costs.json";
      run.benchmarks.push_back(std::move(b));
      continue;
    }
    b.samples_per_block = 1;
    for (auto [v, src] : {std::pair{&b.baseline, &c.base}, std::pair{&b.traced, &c.traced}}) {
      v->cycles = tracebench::summarize(*src);
      v->ns = tracebench::summarize(scaled(*src, ns_per_cycle));
      v->samples = src->size();
      v->repetition_medians = *src;
    }
    b.overhead_cycles = tracebench::median_ci(c.samples);
    b.overhead_ns = tracebench::median_ci(scaled(c.samples, ns_per_cycle));
    run.benchmarks.push_back(std::move(b));
  }
  return run;
}

}  // namespace

void write_tables(const std::string& dir) {
  subtract_helpers();
  std::filesystem::create_directories(dir);
  const CostTables t = describe(g_validation, g_tsc_hz);
  tracebench::Report json_file, md_file;
  for (const auto& [format, out] : {std::pair{"json", &json_file}, std::pair{"markdown", &md_file}})
    if (tracebench::Status s = cost_reporters().write(format, t, out); !s)
      std::fprintf(stderr, "dvm_costs: %s\n", s.message().c_str());
  std::ofstream(dir + "/dvm_costs.json") << json_file.text;
  tracebench::RunResult run = results_run(t);
  tracebench::Status ws = tracebench::write_run(dir + "/" + run.context.run_id, run);
  if (!ws)
    std::fprintf(stderr, "dvm_costs: results schema: %s\n", ws.message().c_str());
  else
    std::printf("wrote %s/%s/result.json (results schema)\n", dir.c_str(), run.context.run_id.c_str());
  std::ofstream(dir + "/dvm_costs.md") << md_file.text;
  std::printf("\nwrote %s/dvm_costs.json and %s/dvm_costs.md\n", dir.c_str(), dir.c_str());
}

}  // namespace tbdvm::costs
