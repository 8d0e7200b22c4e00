// FitTableScale: a measured profile's step times scaled to what a run of the real traffic
// shows, by re-simulating that run's own schedule.
//
// Why (FIDELITY.md (b3, session 9)): a profile measures steps one request at a time; under
// real traffic the same engine's steps ran 15-20% slower in every held-out cycle (the
// bench client and the server's HTTP threads share the cores with the compute thread), a
// bias of one sign at every load. The table's points cannot see it, and a per-request
// decode point of a loaded run cannot be priced alone (its step shared the batch with
// others, over a span only a replay knows). So the fit replays each run: its requests'
// send times and token counts become a trace (distinct prefixes, as random prompts share
// none), the twin (card, --set keys, the profile's table) serves it, and the table's times
// are scaled by k until, request by request, the twin's TPOT matches the run's: the median
// over the requests both decoded of (simulated / measured) TPOT is 1 (session 19: the TPOT
// P50 it used before is one request's in a short run, and jumps with k). k <- k / ratio
// until two k's bracket 1, then bisection in log k, up to 12 rounds, stopping within 0.5%
// (else the closest k simulated). Several runs: k is the geometric mean of their own k's.
// RunScale's TPOT P50s are shown for the reader; they are not what is fitted.
//
// Input: run directories (requests.jsonl + summary.json, as bench writes them). A run with
// fewer than 5 successful requests of 2+ output tokens, or no TPOT P50, is skipped with a
// note. Thread-safety: pure function (it writes a temporary trace file per run).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "twin/cost_model.h"
#include "twin/measured_cost.h"
#include "twin/setup.h"

namespace infereng::job {

// A cost model's step times times `scale` (the table's shape kept, its level moved).
class ScaledCostModel final : public twin::CostModel {
 public:
  ScaledCostModel(std::shared_ptr<const twin::CostModel> inner, double scale)
      : inner_(std::move(inner)), scale_(scale) {}
  double StepSeconds(const twin::StepShape& s) const override { return scale_ * inner_->StepSeconds(s); }

 private:
  std::shared_ptr<const twin::CostModel> inner_;
  double scale_;
};

struct RunScale {
  std::string run;
  double scale = 1;
  double measured_tpot_ms = 0;
  double simulated_tpot_ms_before = 0;  // at scale 1
  double simulated_tpot_ms_after = 0;   // at `scale`
};

struct TableScaleFit {
  bool ok = false;          // at least one run fitted
  double scale = 1;         // geometric mean over the fitted runs
  double spread = 0;        // max |log(k_run / scale)|: how much the runs disagree
  std::vector<RunScale> runs;
  std::vector<std::string> notes;  // skipped runs, with why
};

// Every step time of `table` (curves and occupancy grid) times `scale`; the front end kept.
void ScaleTable(twin::MeasuredTable* table, double scale);

// `setup`: the twin as simulate builds it with the profile applied (setup.cost = the
// measured table). `tmp_dir`: where the per-run trace files go (created if missing).
Result<TableScaleFit> FitTableScale(const card::WorkloadCard& card, const twin::TwinSetup& setup,
                                    const std::vector<std::string>& run_dirs, const std::string& tmp_dir);

}  // namespace infereng::job
