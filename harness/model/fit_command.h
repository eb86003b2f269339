// `tracebench model fit`: the model's parameters from result files, written
// as model.json beside its .md and .csv (model_command.cc).  `model suite`
// calls it in its own process (suite_command.cc).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tracebench::model {

struct FitArgs {
  std::vector<std::string> inputs;
  std::string out = "model.json";
  int bootstrap = 1000;
};

// The command's exit status: 0 with the tables on `out`, 2 with the reason on
// `err` (and nothing written).
int run_fit(const FitArgs& a, std::ostream& out, std::ostream& err);

}  // namespace tracebench::model
