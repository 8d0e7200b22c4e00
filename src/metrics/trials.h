// Variance across trials: given the Summaries of N repeated trials of the same
// configuration, the mean and 95% confidence interval (Student t, n-1 dof) of every
// percentile of every distribution and of the headline rates (docs/metrics.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/histogram.h"
#include "core/stats.h"
#include "core/status.h"
#include "metrics/summary.h"

namespace infereng::metrics {

struct TrialStats {
  int64_t trials = 0;
  // Distribution key ("ttft_ms", ...) -> field ("p50", "p90", "p95", "p99", "p99_9",
  // "mean", "min", "max") -> mean and CI across trials. Trials where the distribution was
  // empty are left out of that key (n says how many contributed).
  std::map<std::string, std::map<std::string, stats::MeanCi>> distributions;
  // Scalars: "output_tokens_per_s", "requests_per_s", "goodput_rps", "slo_attainment",
  // "offered_rps", "achieved_rps".
  std::map<std::string, stats::MeanCi> scalars;
};

TrialStats AggregateTrials(const std::vector<Summary>& trials);

// Merged runs: the union of one distribution across runs summarised in histogram mode
// (Summary::histograms), with the histograms' stated relative error. Fails naming the first
// run that has no histogram for `key` (exact-mode runs: merge their records instead) or whose
// bucket options differ.
Result<LogHistogram> MergeRunHistograms(const std::vector<Summary>& runs, const std::string& key);

// {"trials": N, "distributions": {"ttft_ms": {"p99": {"mean","ci_low","ci_high",
// "half_width","n"}}}, "scalars": {...}}
nlohmann::json TrialStatsToJson(const TrialStats& t);

}  // namespace infereng::metrics
