// One way in for every run request.  `run`, `model validate` and `dvm`
// hand what the user typed (tracer, workload, action, payload, `-o`
// options) to these functions, and make_plan() (plan.cc) is the one place
// that judges it: the same input is refused by every command with the same
// message.  Options are parsed against the tracer's schema there, once; the
// typed values travel in each BenchSpec to the tracer's attach spec.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tracebench/runner.h"
#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench {

// Largest payload any workload hands over (`--payload`); each workload and
// tracer may refuse less (the plan says which).
inline constexpr long long kMaxPayloadBytes = 1 << 20;

// The payload as typed (signed: "-5" is refused, never wrapped) against
// 0..kMaxPayloadBytes.
Status check_payload_arg(long long bytes);

// Options by tracer name ("ebpf" -> {"wakeup": "no_wakeup"}).
using TracerOptions = std::map<std::string, std::map<std::string, std::string>>;

// Splits `-o <tracer>.<key>=<value>` arguments.  `sole_tracer`, when not
// empty, is the only tracer of the command and a bare `<key>=<value>` is its
// own (`model validate -o wakeup=...`, `dvm -x bufsize=...`).  Keys carry no
// dot, so `a.b=c` always names tracer `a`.
Status split_option_args(const std::vector<std::string>& raw, std::string_view sole_tracer, TracerOptions* out);

// A request for one benchmark: what `model validate` and `dvm` measure.
struct SingleRunRequest {
  std::string tracer, workload;
  std::string action = "default";  // "default": the tracer's first action
  long long payload = 0;
  std::vector<std::string> raw_options;  // as split_option_args() takes them
  bool availability_by_caller = false;   // RunOptions::availability_by_caller
};

// Plans `req` exactly as `run -t T -w W [-a A] -p P -o ...` would (the same
// checks, the same messages) and fills `spec` with the one benchmark's
// attach spec (probe, action, payload, options parsed once) and `bench` with
// its name and parts.
Status plan_single_run(const SingleRunRequest& req, AttachSpec* spec, BenchSpec* bench = nullptr);

// A request with no workload (`dvm -c/-p` traces another process): the
// tracer's `-o` options split and parsed as the plan parses them, the same
// refusals in the same words; `parsed` gets the typed values.
Status plan_tracer_options(const std::string& tracer, const std::vector<std::string>& raw_options,
                           std::shared_ptr<const OptionValues>* parsed);

// The refusal of `-o <tracer>.<key>=...` for a tracer the request does not run.
Status tracer_not_in_run(const std::string& tracer, const std::string& key, const std::string& running);

// The attach spec of a planned benchmark: its probe, action, payload and
// the options the plan parsed (pid left 0: the caller's process).
Status attach_spec_of(const BenchSpec& bench, const RunOptions& opt, AttachSpec* out);

}  // namespace tracebench
