// The cost model's outputs by format (reporter.h's interface), one table per
// input kind:
//   ModelReport       model_reporters()       json (model.json, model_files.cc), markdown
//                                             (model.md, model_markdown.cc), csv (model.csv, model_csv.cc)
//   PredictionReport  prediction_reporters()  text, json (predict.cc's to_text/to_json)
//   ValidationReport  validation_reporters()  text, json (validate.cc's to_text/to_json)
//   SuiteReport       suite_reporters()       markdown (Table 7, validate.cc's table7_markdown)
// `model fit`, `model predict`, `model validate` and `model suite` write
// through these tables.
#pragma once

#include "tracebench/model.h"
#include "tracebench/reporter.h"
#include "tracebench/results.h"

namespace tracebench::model {

struct ModelReport {
  const Model& model;
};
const ReporterTable<ModelReport>& model_reporters();

// A prediction and what it was made from (the files' paths go into the JSON).
struct PredictionReport {
  const Scenario& scenario;
  const Prediction& prediction;
  std::string model_path, scenario_path;
};
const ReporterTable<PredictionReport>& prediction_reporters();

// One validation: the model, the scenario held, what was measured, the
// verdict, and the tracer's event accounting.
struct ValidationReport {
  const Model& model;
  const ValidationScenario& scenario;
  const ValidationMeasured& measured;
  const Validation& validation;
  const EventsResult& events;
  std::string date_utc;
};
const ReporterTable<ValidationReport>& validation_reporters();

// Table 7: a row per (tracer, scenario).
struct SuiteReport {
  const std::vector<SuiteRow>& rows;
};
const ReporterTable<SuiteReport>& suite_reporters();

}  // namespace tracebench::model
