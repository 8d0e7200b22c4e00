// `canary --baseline URL --candidate URL --card FILE`: is the candidate deployment safe to
// roll out? The library behind `infereng canary` (docs/canary.md): typed results, no printing.
//
// One step = one paired run: the card's workload (same seed, same request sequence) is sent
// to BOTH targets by two bench jobs (job::RunBench) that share one start instant, so request
// i goes to the baseline and to the candidate at the same intended time, and both see the
// same conditions (time of day, the client's host, a shared network). The two run
// directories are then compared with compare's statistics (job::CompareRuns: bootstrap
// intervals on the percentiles, goodput, the error rate, the quality pass-rate delta) and
// judged: the default criteria (below) or the --accept expressions, plus the card's SLOs and
// quality floor on the candidate. A step is "go" when every criterion holds.
//
// Gradual mode: steps at 5%, 25%, 50%, 100% of the workload's requests; the step at fraction
// 1/N sends the requests whose index % N == 0 (bench/shard.h's dealing rule, shard 0 of N:
// the same requests at their intended times, at 1/N of the rate) to both targets. The
// canary widens while each step is go at its own sample size and stops with no-go at the
// first failing step; every step's evidence is kept. A fraction must be 1/N.
//
// Default criteria (no --accept): the candidate is not detectably worse (the interval of
// the change excludes 0 on the worse side) on TTFT P99, ITL P99, E2E P99 and the error rate,
// and the quality pass rate did not drop (compare's quality rule). Where requests succeeded
// on both targets (at least kMinPairs), the per-request paired test (job/canary_paired.h)
// decides too: TTFT, TPOT (for ITL) and E2E are no-go when the paired differences are
// detectably positive (Wilcoxon p < 1 - confidence) and their median exceeds min_effect of
// the baseline median — a consistent slowdown the unpaired P99 intervals are too wide to
// see. The unpaired P99 check stays beside it for tail-only regressions.
//
// The API key (bench::ApiKeyOptions, the same for both targets) reaches only Authorization
// headers: it is never in canary.json, the run directories or an error message.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"
#include "core/status.h"
#include "job/canary_paired.h"
#include "job/compare.h"

namespace infereng::job {

struct CanaryOptions {
  std::string baseline, candidate;  // target URLs
  // The workload, load overrides, client settings and API key of both runs (its target and
  // out_dir are set per run; shard and start_at are the canary's).
  bench::BenchOptions bench;
  std::string out_dir;               // "" = keep the comparison in memory only (the runs still need a dir: tests)
  std::vector<AcceptExpr> accept;    // empty: the default criteria
  metrics::BootstrapOptions bootstrap;
  bool gradual = false;
  std::vector<double> fractions = {0.05, 0.25, 0.5, 1.0};  // gradual steps, each 1/N, increasing, ending at 1
  // Both runs start this long after the canary starts, at one shared instant: time enough
  // for each run's engine probe and prompt setup.
  Nanos start_delay = 3 * kNanosPerSecond;
  // Default criteria: a latency P99 fails only when it is detectably worse AND its point
  // estimate is more than this much worse (relative), so a real but negligible difference
  // between two healthy deployments is not a no-go.
  double min_effect = 0.05;
  // Called before each step ("step 2/4: 25% of requests") and with each run's progress.
  std::function<void(const std::string&)> on_step;
};

struct CanaryReason {
  std::string criterion;  // "ttft_ms.p99", "--accept 'e2e_ms.mean<=+20ms'", "card SLO: ttft p99 <= 500 ms"
  std::string text;       // with its numbers: "TTFT P99 worse: 41.2 -> 88.0 ms (+113.6% [+95.0%, +130.1%])"
};

struct CanaryStep {
  double fraction = 1.0;
  int shard_n = 1;                      // the step sends requests with index % shard_n == 0
  std::string dir;                      // where this step's runs are ("" = out_dir itself)
  std::string baseline_dir, candidate_dir;
  Comparison comparison;
  PairedComparison paired;              // per-request pairs (empty metrics: none read)
  bool baseline_slo_pass = true, candidate_slo_pass = true;  // the card's SLOs, each run on its own
  bool partial = false;                 // a run was interrupted or its target went away
  bool go = false;
  std::vector<CanaryReason> reasons;    // why no-go (empty when go)
  std::vector<std::string> notes;       // the runs' notes, "baseline: ..." / "candidate: ..."
};

struct CanaryResult {
  std::vector<CanaryStep> steps;        // run so far (gradual: up to the first no-go)
  bool go = false;
  bool interrupted = false;             // by the user: the verdict is not reached
  std::vector<std::string> criteria;    // what "go" meant, in words
};

// Checks the options (fractions, --accept), probes both targets (Unavailable naming the one
// that does not answer, before any load is sent), runs the step(s) and writes
// OUT/canary.json, OUT/canary.md and each step's comparison.html.
Result<CanaryResult> RunCanary(const CanaryOptions& options);

// The step's verdict from its comparison (the default criteria or the accept results).
void JudgeCanaryStep(const CanaryOptions& options, CanaryStep* step);

// What "go" means for these options, in words (canary.json "criteria", the terminal).
std::vector<std::string> CanaryCriteria(const CanaryOptions& options);

// {"schema": "infereng.canary/1", "go", "verdict": "go"|"no-go", "interrupted", "criteria",
//  "baseline", "candidate" (URLs, credentials removed), "steps": [{"fraction", "dir",
//  "baseline_dir", "candidate_dir", "go", "partial", "slo": {"baseline", "candidate"},
//  "reasons": [{"criterion", "text"}], "comparison": compare's JSON, "paired": PairedToJson}]}
nlohmann::json CanaryToJson(const CanaryResult& r, const CanaryOptions& options);
std::string CanaryMarkdown(const CanaryResult& r, const CanaryOptions& options);

}  // namespace infereng::job
