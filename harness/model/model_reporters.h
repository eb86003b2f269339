// The cost model's files by format (reporter.h's interface): json
// (model.json, model_files.cc), markdown (model.md, model_markdown.cc), csv
// (model.csv, model_csv.cc).  `model fit` writes each through this table.
#pragma once

#include "tracebench/model.h"
#include "tracebench/reporter.h"

namespace tracebench::model {

struct ModelReport {
  const Model& model;
};
const ReporterTable<ModelReport>& model_reporters();

}  // namespace tracebench::model
