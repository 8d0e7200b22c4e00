// RunBench: the bench job — one complete `infereng bench` (and `run`, and each measured
// sweep point) against a target, a reproducible baseline. In order:
//   1. resolve the load (load_plan.h), the target URL and the API key;
//   2. discover the engine (engine_probe.h) — unreachable target: Unavailable (exit 3);
//   3. prepare prompts (synthetic with /tokenize-exact or usage-calibrated lengths, or a
//      dataset), the quality eval set, the request body extras the engine accepts;
//   4. write manifest.json first (manifest.h; an interrupted run still says what it was),
//      scrape /metrics, optionally measure cold start (cold_requests.jsonl, reported apart);
//   5. per trial (a load phase, phase.h): warm-up, measurement window, cool-down, drain;
//      records stream to requests.jsonl as they finish (trial-K/ when --trials > 1);
//   6. summarise each trial from its records file (H1's accumulator, exact percentiles, the
//      window from the end of warm-up to the last measured send), aggregate trials (95% CI),
//      scrape /metrics again (client/engine_metrics.h), write summary.json (the summary
//      schema plus the job's extras, summary_extras.h) and the final manifest.json.
// Interruption (BenchOptions::interrupt) or a dead target stops sending, cancels what is
// in flight, keeps every finished record and marks the summary "partial": true.
//
// The API key travels only in the Authorization header; it is scrubbed from every error
// message and never written to any file.
#pragma once

#include "bench/bench_options.h"
#include "core/status.h"

namespace infereng::job {

Result<bench::BenchResult> RunBench(const bench::BenchOptions& options);

}  // namespace infereng::job
