// The twin's prediction for a measured run: the same card, seed, rate and window simulated
// in virtual time and written beside the measurement (DIR/predicted/), so the report can
// draw predicted vs measured curves for every run, not only for sweeps.
#pragma once

#include <string>

#include "bench/bench_options.h"
#include "core/status.h"
#include "job/fidelity.h"
#include "metrics/summary.h"

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
Status WriteTwinPrediction(const bench::BenchOptions& opt, double engine_speedup, const std::string& dir,
                           const metrics::Summary* measured = nullptr, Fidelity* fidelity = nullptr);

}  // namespace infereng::job
