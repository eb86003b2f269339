// The verdict on one selftest case (site x N): how far the recovered cost
// is from the cost really added, against the bound and the noise.
//
// A user site adds N.  The module's probe adds N as its calibration measured
// it (the lower quartile of quiet windows); in the traced blocks its spins
// also run long whenever the CPU is taken mid-spin (an interrupt, the host,
// in TCG the emulator losing its host CPU), and it counts that time: the
// mean beyond the shortest firing, minus what the calibration's windows
// held.  Where such gaps are rarer than a sample, the blocks' medians see
// past them and recover N; where they come several to a sample, as in a
// TCG guest on a host that takes its CPU thousands of times a second, the
// medians hold them and recover N plus that excess.  So a kernel case's
// cost added lies between N and N + excess, and the error is measured from
// that range.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbdelay {

// What one case measured over the rounds.
struct CaseFigures {
  double ns = 0;
  bool kernel = false;
  std::vector<double> medians;        // recovered overhead per round, ns per event
  std::vector<double> halfwidths;     // each round's 95% interval of the median, half its width
  double floor_per_event_ns = 0;      // the run's floor over a sample's events (kernel cases)
  std::vector<double> uncertainties;  // per round: calibration_uncertainty()
  std::vector<double> excesses;       // per round: spin_excess()
  // A syscall site's known cost, per round: what a plain loop of the site
  // sees the spin add (plain_loop.h), and half its 95% interval.  Empty for
  // the other sites, whose known cost is N.
  std::vector<double> references, reference_halfwidths;
  double clock_ratio = 1;  // the module's clock over the traced blocks against its calibration
  // Rounds left out, each the runner's reason: the run's overhead changed
  // level (status "unsteady": the host changed speed mid-run, so the run
  // gave no figure).  The host's doing, not the chain's: never a failure.
  std::vector<std::string> unsteady;
};

enum class Verdict { kPass, kCannotJudge, kFail };

struct Judgement {
  Verdict verdict = Verdict::kFail;
  double known = 0;  // N, or the median of the plain loop's figures where there are some
  double recovered = 0, error = 0, bound = 0, noise = 0;
  double excess = 0;  // the most the module's spins added beyond N (kernel cases; 0 otherwise)
  bool clock_moved = false;
};

// stats.h's median_of, NAN for none (printed as such, never as 0).
double median(std::vector<double> v);

// How well the module knows the cost it adds: |firing_ns - N| + IQR/2 of its
// calibration (the tracer's details, tracers/delay/delay.cc).
double calibration_uncertainty(const nlohmann::json& probe, double ns);

// What the module's spins ran long in the traced blocks beyond what its
// calibration's windows held, ns per firing (never below 0; 0 when unknown).
double spin_excess(const nlohmann::json& probe);

// ±3% of N or ±2 floors, whichever is larger, plus (kernel) the median
// calibration uncertainty.
double bound_of(const CaseFigures& c, double floor_ns);

// Pass within the bound of [known, known + excess] (known: N, or the plain
// loop's figure with its noise added to the run's); beyond it by more than three
// times the noise, FAIL; otherwise, or when the module's clock left its rate
// by more than 2%, CANNOT JUDGE.  Judged on the rounds that gave a figure;
// with none, FAIL, unless every round was left out as unsteady (CANNOT
// JUDGE: the host kept changing speed).
Judgement judge_case(const CaseFigures& c, double floor_ns);

// The rounds a selftest may run in all while some case cannot be judged yet:
// where the host's noise puts a case's few round medians either side of
// its bound, the medians of more rounds settle (within the time budget).
constexpr int kRoundsWhileUndecided = 12;

// Whether another round is due after `done`: the rounds asked for are not
// all run, or some case cannot be judged yet and fewer than
// max(asked, kRoundsWhileUndecided) are done.  A failed case asks for none:
// more rounds do not mend a broken chain.
bool another_round(int done, int asked, const std::vector<Verdict>& verdicts);

}  // namespace tbdelay
