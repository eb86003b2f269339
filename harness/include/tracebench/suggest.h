// "Did you mean": the known names closest to one a user mistyped, for
// errors that name an unknown benchmark or series.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tracebench {

// Edit distance (insertions, deletions, substitutions, and two neighbours
// swapped: "ebfp" is one from "ebpf"), case-sensitive.
std::size_t edit_distance(const std::string& a, const std::string& b);

// Up to `max` of `known`, closest first: names that contain `wrong` (or are
// contained in it), then those within an edit distance of a third of the
// longer name; nothing when none is that close.
std::vector<std::string> closest_names(const std::string& wrong, const std::vector<std::string>& known,
                                       std::size_t max = 3);

// "; did you mean: a, b?" with closest_names(), or "" when none is close.
std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& known);

// "unknown tracer 'ebfp'; did you mean: ebpf? (see `tracebench list`)", from
// the registered tracers; the same for a workload.
std::string unknown_tracer_message(const std::string& name);
std::string unknown_workload_message(const std::string& name);

}  // namespace tracebench
