// Fidelity: how close the twin's prediction of a run came to its measurement, shown with
// every measured run (summary of DIR/predicted/, terminal line) so nobody trusts a
// prediction further than it has earned.
//
// Each row is one statistic (TTFT/TPOT/ITL/E2E at P50/P90/P99, output throughput, goodput):
// measured, predicted with the run's seed, the relative error (predicted - measured) /
// measured, and the band the twin itself spans over other seeds of the same load (its own
// sampling spread: an error inside the band is noise, not a model miss). A saturated or
// overloaded prediction is flagged low-confidence: near the knee small cost errors move
// latencies by multiples.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/summary.h"

namespace infereng::job {

struct FidelityRow {
  std::string metric;  // summary key: "ttft_ms", "output_tokens_per_s", ...
  std::string stat;    // "p50" | "p90" | "p99" | "value"
  double measured = 0;
  double predicted = 0;
  double error = 0;     // (predicted - measured) / measured; 0 when measured is 0
  double band_lo = 0;   // predicted, lowest over the seeds (the run's seed included)
  double band_hi = 0;   // ... highest
  bool within_band = false;  // measured lies in [band_lo, band_hi]
};

struct Fidelity {
  std::vector<FidelityRow> rows;
  int seeds = 0;                 // predictions in the band
  double median_abs_error = 0;   // over the rows
  bool low_confidence = false;   // the twin predicts saturation or overload here
  std::string note;              // why low confidence ("" otherwise)
};

// `predicted[0]` is the run's own seed; the rest only widen the band. Statistics with no
// samples on either side are left out.
Fidelity CompareWithPrediction(const metrics::Summary& measured, const std::vector<metrics::Summary>& predicted,
                               bool near_saturation, const std::string& saturation_note);

nlohmann::json FidelityToJson(const Fidelity& f);
// One line: "twin vs measured: TTFT P50 -12% P99 +30%, TPOT P50 -3%, ... (median |error| 9%)".
std::string FidelityLine(const Fidelity& f);

}  // namespace infereng::job
