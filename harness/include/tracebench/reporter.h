// The one reporter interface.  A reporter turns one kind of typed input (a
// run, a comparison, a cost model, ...) into one format; the formats of an
// input kind are found by name in that kind's one table, so a command picks
// a reporter by format and never calls a format's function itself.
//
//   input             table                  formats (the file that writes each)
//   RunReport         run_reporters()        console (report_console.cc), json (report_json.cc),
//                                            csv, samples-csv (report_csv.cc), bencher
//                                            (report_bencher.cc), kcidb (report_kcidb.cc)
//   CompareReport     compare_reporters()    text, json (report_compare.cc), junit (report_junit.cc)
//   the cost model's  model::model_reporters(), prediction_reporters(), validation_reporters(),
//   outputs           suite_reporters() (harness/model/model_reporters.h: the model's files,
//                     predict's and validate's text and JSON, Table 7)
//
// Each table is written out in one place (src/reporters.cc for the first
// two); a format missing from it, or a name no table holds, is refused with
// the formats there are (tests/harness/reporter_test.cc holds the lists).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/compare.h"
#include "tracebench/report.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench {

// What a reporter writes: the format's text, and what its reader should be
// told beside it (stderr; empty when nothing).
struct Report {
  std::string text;
  std::string notes;
};

template <class Input>
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status write(const Input& in, Report* out) const = 0;
  // A JSON format's document (its text is document.dump(2) + "\n"), for a
  // caller that embeds it in a document of its own; other formats refuse.
  virtual Status document(const Input& in, nlohmann::json* out) const {
    (void)in;
    (void)out;
    return Status::error("this format writes text, not a JSON document");
  }
};

// A JSON format: write() is its document, indented by two.
template <class Input>
class JsonReporter : public Reporter<Input> {
 public:
  Status write(const Input& in, Report* out) const override {
    nlohmann::json j;
    TB_TRY(this->document(in, &j));
    out->text = j.dump(2) + "\n";
    return Status::ok();
  }
  Status document(const Input& in, nlohmann::json* out) const override = 0;
};

// The formats of one input kind, by name.
template <class Input>
class ReporterTable {
 public:
  using Entry = std::pair<std::string, const Reporter<Input>*>;
  ReporterTable(std::string what, std::vector<Entry> entries) : what_(std::move(what)), entries_(std::move(entries)) {}

  // The reporter of `format`, or an error naming the formats there are.
  Status find(std::string_view format, const Reporter<Input>** out) const {
    for (const auto& [name, r] : entries_)
      if (name == format) {
        *out = r;
        return Status::ok();
      }
    std::string known;
    for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.first;
    return Status::error("no " + what_ + " format \"" + std::string(format) + "\" (formats: " + known + ")");
  }
  Status write(std::string_view format, const Input& in, Report* out) const {
    const Reporter<Input>* r = nullptr;
    TB_TRY(find(format, &r));
    return r->write(in, out);
  }
  Status document(std::string_view format, const Input& in, nlohmann::json* out) const {
    const Reporter<Input>* r = nullptr;
    TB_TRY(find(format, &r));
    if (Status s = r->document(in, out); !s)
      return Status::error(what_ + " format " + std::string(format) + ": " + s.message());
    return Status::ok();
  }
  std::vector<std::string> formats() const {
    std::vector<std::string> v;
    for (const auto& e : entries_) v.push_back(e.first);
    return v;
  }

 private:
  std::string what_;
  std::vector<Entry> entries_;
};

// ---- a run: result.json's RunResult
struct RunReport {
  const RunResult& run;
  bool verbose = false;                        // console: information notes too
  const BenchmarkResult* benchmark = nullptr;  // samples-csv: only its rows (no header)
  KcidbSource kcidb;                           // kcidb: where the submission comes from
};
const ReporterTable<RunReport>& run_reporters();

// ---- two sides of runs compared (compare.h)
struct CompareReport {
  const CompareResult& result;
  const std::vector<const RunResult*>& a;
  const std::vector<const RunResult*>& b;
  double threshold = 0.05, alpha = 0.05;  // junit: what --fail-on-regression fails
};
const ReporterTable<CompareReport>& compare_reporters();

// The reporters each format's file defines (the tables above list them).
const Reporter<RunReport>& console_run_reporter();
const Reporter<RunReport>& json_run_reporter();
const Reporter<RunReport>& csv_run_reporter();
const Reporter<RunReport>& samples_csv_run_reporter();
const Reporter<RunReport>& bencher_run_reporter();
const Reporter<RunReport>& kcidb_run_reporter();
const Reporter<CompareReport>& text_compare_reporter();
const Reporter<CompareReport>& json_compare_reporter();
const Reporter<CompareReport>& junit_compare_reporter();

}  // namespace tracebench
