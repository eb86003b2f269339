// How long `model suite` will take, for its --plan: the plan's runs and
// validations timed by what an earlier suite on this machine measured for
// its own steps (its suite.json), never by a guess; without one, what is
// known before measuring (the validations' length) and no total.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tracebench::model {

// The seconds each kind of step took in one earlier suite.
struct StepTimes {
  std::string source;  // its suite.json; empty when none was found
  std::vector<double> run, fit, validate;
};

// The newest suite.json under `results` (results/model-*/ as `model suite`
// writes by default) made with the same --quick and validation length;
// an empty StepTimes when there is none, or none that can be read.
StepTimes earlier_step_times(const std::string& results, bool quick, double validation_seconds);

// The plan's `#` line: its runs and validations, and the estimate from
// `times` (the mean of each kind of step: a total's estimate) when it has
// every kind.
std::string estimate_line(std::size_t runs, std::size_t validations, double validation_seconds, const StepTimes& times);

}  // namespace tracebench::model
