// The cost model's one table of formats (model_reporters.h).  Each format's
// text is its file's function; the table is the only way the commands reach
// them.
#include "harness/model/model_reporters.h"

namespace tracebench::model {
namespace {

class JsonModelReporter final : public JsonReporter<ModelReport> {
 public:
  Status document(const ModelReport& in, nlohmann::json* out) const override {
    *out = to_json(in.model);
    return Status::ok();
  }
};

class MarkdownModelReporter final : public Reporter<ModelReport> {
 public:
  Status write(const ModelReport& in, Report* out) const override {
    out->text = to_markdown(in.model);
    return Status::ok();
  }
};

class CsvModelReporter final : public Reporter<ModelReport> {
 public:
  Status write(const ModelReport& in, Report* out) const override {
    out->text = to_csv(in.model);
    return Status::ok();
  }
};

class TextPredictionReporter final : public Reporter<PredictionReport> {
 public:
  Status write(const PredictionReport& in, Report* out) const override {
    out->text = to_text(in.scenario, in.prediction);
    return Status::ok();
  }
};

class JsonPredictionReporter final : public JsonReporter<PredictionReport> {
 public:
  Status document(const PredictionReport& in, nlohmann::json* out) const override {
    *out = to_json(in.scenario, in.prediction);
    (*out)["model"] = in.model_path;
    (*out)["scenario"] = in.scenario_path;
    return Status::ok();
  }
};

class TextValidationReporter final : public Reporter<ValidationReport> {
 public:
  Status write(const ValidationReport& in, Report* out) const override {
    out->text = to_text(in.scenario, in.validation) + "events: " + in.events.verification_reason + "\n";
    return Status::ok();
  }
};

class JsonValidationReporter final : public JsonReporter<ValidationReport> {
 public:
  Status document(const ValidationReport& in, nlohmann::json* out) const override {
    *out = to_json(in.model, in.scenario, in.measured, in.validation);
    (*out)["date_utc"] = in.date_utc;
    (*out)["events"] = {{"fired", in.events.fired},
                        {"recorded", in.events.recorded},
                        {"lost", in.events.lost},
                        {"verification", in.events.verification},
                        {"reason", in.events.verification_reason}};
    return Status::ok();
  }
};

class MarkdownSuiteReporter final : public Reporter<SuiteReport> {
 public:
  Status write(const SuiteReport& in, Report* out) const override {
    out->text = table7_markdown(in.rows);
    return Status::ok();
  }
};

}  // namespace

const ReporterTable<PredictionReport>& prediction_reporters() {
  static const TextPredictionReporter text;
  static const JsonPredictionReporter json;
  static const ReporterTable<PredictionReport> t("prediction", {{"text", &text}, {"json", &json}});
  return t;
}

const ReporterTable<ValidationReport>& validation_reporters() {
  static const TextValidationReporter text;
  static const JsonValidationReporter json;
  static const ReporterTable<ValidationReport> t("validation", {{"text", &text}, {"json", &json}});
  return t;
}

const ReporterTable<SuiteReport>& suite_reporters() {
  static const MarkdownSuiteReporter markdown;
  static const ReporterTable<SuiteReport> t("Table 7", {{"markdown", &markdown}});
  return t;
}

const ReporterTable<ModelReport>& model_reporters() {
  static const JsonModelReporter json;
  static const MarkdownModelReporter markdown;
  static const CsvModelReporter csv;
  static const ReporterTable<ModelReport> t("model", {{"json", &json}, {"markdown", &markdown}, {"csv", &csv}});
  return t;
}

}  // namespace tracebench::model
