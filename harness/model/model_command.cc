// `tracebench model fit|predict|validate`: the cost model's parameters from
// result files, what a scenario of probes and consumers would cost, and a
// paced run that measures it (validate_command.cc).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tracebench/command.h"
#include "tracebench/model.h"
#include "tracebench/results.h"
#include "tracebench/run_identity.h"
#include "tracebench/util.h"
#include "fit_command.h"
#include "harness/model/model_reporters.h"
#include "suite_command.h"
#include "validate_command.h"

namespace tracebench::model {
namespace {

struct PredictArgs {
  std::string model, scenario, out;
  bool json = false;
};

// "model.json" -> "model" + ext, beside it.
std::string sibling(const std::string& json_path, const char* ext) {
  std::filesystem::path p(json_path);
  return (p.parent_path() / (p.stem().string() + ext)).string();
}

int fail(const char* what, const Status& s) {
  std::cerr << "tracebench model " << what << ": " << s.message() << "\n";
  return 2;
}

// A benchmark whose verification is partial (the tracer lost more events
// than its run allowed) has a figure that mixes recording and dropping: the
// fit leaves it out and says so.
std::vector<std::string> leave_out_partial(std::vector<RunResult>* runs, const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < runs->size(); ++i) {
    auto& bs = (*runs)[i].benchmarks;
    for (const auto& b : bs)
      if (b.events.verification == "partial")
        out.push_back(fmt::format("{} of {}: its tracer lost {} of {} events (verification partial)", b.name, files[i],
                                  b.events.lost, b.events.recorded + b.events.lost));
    bs.erase(std::remove_if(bs.begin(), bs.end(),
                            [](const BenchmarkResult& b) { return b.events.verification == "partial"; }),
             bs.end());
  }
  return out;
}

int run_predict(const PredictArgs& a) {
  nlohmann::json mj, sj;
  Model m;
  Scenario s;
  Prediction p;
  if (Status st = read_json_file(a.model, &mj); !st) return fail("predict", st);
  if (Status st = from_json(mj, &m); !st) return fail("predict", Status::error(a.model + ": " + st.message()));
  if (Status st = read_json_file(a.scenario, &sj); !st) return fail("predict", st);
  if (Status st = scenario_from_json(sj, &s); !st)
    return fail("predict", Status::error(a.scenario + ": " + st.message()));
  if (Status st = predict(m, s, &p); !st) return fail("predict", st);
  if (Status st = check_prediction_costs(s, p); !st) return fail("predict", st);
  const PredictionReport in{s, p, a.model, a.scenario};
  Report json, shown;
  if (Status st = prediction_reporters().write("json", in, &json); !st) return fail("predict", st);
  if (Status st = prediction_reporters().write(a.json ? "json" : "text", in, &shown); !st) return fail("predict", st);
  if (!a.out.empty()) {
    if (Status st = check_output_not_input("--out", a.out, {a.model, a.scenario}); !st) return fail("predict", st);
    if (Status st = write_file_atomic(a.out, json.text); !st) return fail("predict", st);
  }
  std::cout << shown.text;
  return 0;
}

void install(CLI::App& app, int* exit_status) {
  auto* model = app.add_subcommand("model", "The cost model: fit its parameters from runs, predict a scenario's cost");
  model->require_subcommand(1);
  auto fa = std::make_shared<FitArgs>();
  auto* f = model->add_subcommand("fit", "Fit the parameters (fixed, per byte, contention, ...) from result files");
  f->add_option("RESULT", fa->inputs, "Run directories, result.json files, or directories of runs")->required();
  f->add_option("--out", fa->out, "model.json to write (model.md and model.csv beside it)")->capture_default_str();
  f->add_option("--bootstrap", fa->bootstrap, "Bootstrap resamples for the 95% intervals")
      ->capture_default_str()
      ->check(CLI::Range(100, 100000));
  f->callback([fa, exit_status] { *exit_status = run_fit(*fa, std::cout, std::cerr); });
  auto pa = std::make_shared<PredictArgs>();
  auto* p = model->add_subcommand("predict", "Per-probe cycles (eq. 4) and CPU share (eqs. 5-8) of a scenario");
  p->add_option("--model", pa->model, "model.json from `tracebench model fit`")->required();
  p->add_option("SCENARIO", pa->scenario, "SCENARIO.json: probes (and consumers) with their rates")->required();
  p->add_option("--out", pa->out, "Also write the prediction as JSON to this file");
  p->add_flag("--json", pa->json, "Print JSON");
  p->callback([pa, exit_status] { *exit_status = run_predict(*pa); });
  install_validate(model, exit_status);
  install_suite(model, exit_status);
}

}  // namespace

int run_fit(const FitArgs& a, std::ostream& out, std::ostream& err) {
  auto fail = [&](const char* what, const Status& s) {
    err << "tracebench model " << what << ": " << s.message() << "\n";
    return 2;
  };
  if (a.out.size() < 6 || a.out.substr(a.out.size() - 5) != ".json")
    return fail("fit", Status::error("--out names the model.json to write (a path ending in .json)"));
  std::vector<std::string> files;
  for (const auto& in : a.inputs)
    if (Status s = result_files(in, &files); !s) return fail("fit", s);
  for (const auto& path : {a.out, sibling(a.out, ".md"), sibling(a.out, ".csv")})
    if (Status s = check_output_not_input("--out", path, run_files(files)); !s) return fail("fit", s);
  std::vector<RunResult> runs(files.size());
  for (std::size_t i = 0; i < files.size(); ++i)
    if (Status s = read_run(files[i], &runs[i]); !s) return fail("fit", s);
  // A copied or linked run is one run: counted twice it would weigh twice.
  std::vector<std::string> dropped;
  if (Status s = count_each_run_once(&files, &runs, &dropped); !s) return fail("fit", s);
  for (const auto& d : dropped) err << "tracebench model fit: note: " << d << "\n";
  const std::vector<std::string> left_out = leave_out_partial(&runs, files);
  Model m;
  if (Status s = fit(runs, &m, a.bootstrap); !s) return fail("fit", s);
  // What the fit gives is checked as the model's readers check it: a term
  // no reader would accept is never written.
  if (Status s = check_model_terms(m); !s)
    return fail("fit", Status::error(s.message() + " (nothing written: the runs fitted are inconsistent)"));
  if (Status s = check_fixed_against_points(m); !s) return fail("fit", s);
  // Everything computed before anything is written; each file replaced atomically.
  Report model_json, md, csv;
  for (const auto& [format, text] :
       {std::pair{"json", &model_json}, std::pair{"markdown", &md}, std::pair{"csv", &csv}})
    if (Status s = model_reporters().write(format, ModelReport{m}, text); !s) return fail("fit", s);
  const std::filesystem::path dir = std::filesystem::path(a.out).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec) && !std::filesystem::create_directories(dir, ec))
    return fail("fit", Status::error(fmt::format("--out: cannot create {}: {}", dir.string(), ec.message())));
  for (const auto& [path, text] : {std::pair{a.out, &model_json.text}, std::pair{sibling(a.out, ".md"), &md.text},
                                   std::pair{sibling(a.out, ".csv"), &csv.text}}) {
    if (Status s = write_file_atomic(path, *text); !s) return fail("fit", s);
  }
  out << md.text << fmt::format("\nwrote {}, {}, {}\n", a.out, sibling(a.out, ".md"), sibling(a.out, ".csv"));
  for (const auto& l : left_out) err << "tracebench model fit: left out " << l << "\n";
  return 0;
}
}  // namespace tracebench::model

TRACEBENCH_REGISTER_COMMAND(model, tracebench::Command{"model", tracebench::model::install});
