// The twin's prediction for a measured run: the same card, seed, rate and window simulated
// in virtual time and written beside the measurement (DIR/predicted/), so the report can
// draw predicted vs measured curves for every run, not only for sweeps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "core/status.h"
#include "job/fidelity.h"
#include "metrics/summary.h"
#include "twin/cost_model.h"

namespace infereng::job {

// Simulates `opt.card` with the run's load (the same closed loop, open loop or cap:
// --rate, --concurrency, --ramp and the card, resolved by the one rule) over the run's
// window and writes DIR/predicted/{summary.json,requests.jsonl}; summary.json's
// "prediction" says which window it covers. When `measured` (the charted summary) is
// partial (interrupted), the prediction is cut to the measured window: arrivals end where
// the measurement's window ended. FailedPrecondition, with the reason, when the run cannot
// be predicted (no model/accelerator, request-count run, engine speed-up != 1 — its times
// are not engine time — or interrupted before the window began): callers show the reason
// (a missing prediction must never be silent).
// With `measured`, also the fidelity (job/fidelity.h): the prediction against the
// measurement, with the twin's spread over two more seeds; written as summary.json
// "fidelity" and returned in `*fidelity` when given.
// What the prediction's twin prices steps with: the card's roofline unless a measured
// profile (`run --profile FILE`) gives a cost model; `sets` are twin settings applied over
// the card's (the profile's KV capacity). summary.json "prediction.cost_model" names it.
struct PredictionModel {
  std::vector<std::string> sets{};
  std::shared_ptr<const twin::CostModel> cost{};  // null: the roofline
  std::string cost_label{};                       // "measured profile PATH"
};

Status WriteTwinPrediction(const bench::BenchOptions& opt, double engine_speedup, const std::string& dir,
                           const metrics::Summary* measured = nullptr, Fidelity* fidelity = nullptr,
                           const PredictionModel& model = {});

}  // namespace infereng::job
