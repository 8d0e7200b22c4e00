// The twin's prediction for a measured run: the same card, seed, rate and window simulated
// in virtual time and written beside the measurement (DIR/predicted/), so the report can
// draw predicted vs measured curves for every run, not only for sweeps.
#pragma once

#include <string>

#include "bench/bench_options.h"
#include "core/status.h"

namespace infereng::bench {

// Simulates `opt.card` with the run's load (the same closed loop, open loop or cap:
// --rate, --concurrency, --ramp and the card, resolved by the one rule) and writes
// DIR/predicted/{summary.json,requests.jsonl}. FailedPrecondition when the card cannot be
// simulated (no model/accelerator, request-count run, engine speed-up != 1), saying why:
// callers show the reason (a missing prediction must never be silent).
Status WriteTwinPrediction(const BenchOptions& opt, double engine_speedup, const std::string& dir);

}  // namespace infereng::bench
