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

}  // namespace

const ReporterTable<ModelReport>& model_reporters() {
  static const JsonModelReporter json;
  static const MarkdownModelReporter markdown;
  static const CsvModelReporter csv;
  static const ReporterTable<ModelReport> t("model", {{"json", &json}, {"markdown", &markdown}, {"csv", &csv}});
  return t;
}

}  // namespace tracebench::model
