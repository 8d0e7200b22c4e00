// Variance across trials: given the Summaries of N repeated trials of the same
// configuration, the mean and 95% confidence interval of every percentile of every
// distribution and of the headline rates, and the run's verdict over all trials
// (docs/metrics.md, "Repeated trials").
//
// The interval is Student t (n-1 dof) intersected with the metric's possible range
// (latencies and rates >= 0, attainment in [0, 1]): the mean cannot lie outside it, so the
// cut interval keeps its coverage, and `clamped` says it was cut. With fewer than 3 trials
// the interval is not reported (`defined` false: t with 1 dof is 12.7 — no information).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/histogram.h"
#include "core/stats.h"
#include "core/status.h"
#include "metrics/quality.h"
#include "metrics/summary.h"

namespace infereng::metrics {

// Trials needed before a confidence interval is reported.
inline constexpr int64_t kMinTrialsForCi = 3;

// A MeanCi whose [low, high] lies inside the metric's range.
struct TrialCi : stats::MeanCi {
  bool clamped = false;  // the t interval reached outside the range and was cut to it
};

struct TrialStats {
  int64_t trials = 0;
  // Distribution key ("ttft_ms", ...) -> field ("p50", "p90", "p95", "p99", "p99_9",
  // "mean", "min", "max") -> mean and CI across trials. Trials where the distribution was
  // empty are left out of that key (n says how many contributed).
  std::map<std::string, std::map<std::string, TrialCi>> distributions;
  // Scalars: "output_tokens_per_s", "requests_per_s", "goodput_rps", "slo_attainment",
  // "offered_rps", "achieved_rps", and "quality_pass_rate" (over the trials that checked
  // eval items; absent when none did).
  std::map<std::string, TrialCi> scalars;
};

TrialStats AggregateTrials(const std::vector<Summary>& trials);

// The run's verdict over its trials. One rule, stated wherever the verdict is shown: a
// trial passes when its SLO verdict (when the card has SLOs) and its quality gate (when
// items were checked) pass, and the run passes only when every trial passes — a trial that
// misses is evidence the configuration can miss under this load (docs/metrics.md).
inline constexpr const char* kTrialsRule = "the run passes only when every trial passes";

struct TrialGate {
  bool has_slos = false;           // the card defines latency SLOs or a throughput floor
  double quality_threshold = 0;    // quality pass-rate floor (0 = none)
};

// Whether one trial passes `gate`.
bool TrialPasses(const Summary& trial, const TrialGate& gate);

struct TrialsVerdict {
  bool pass = true;
  std::vector<int> failed_trials;  // 1-based, in order
};
TrialsVerdict JudgeTrials(const std::vector<Summary>& trials, const TrialGate& gate);

// {"rule", "pass", "failed_trials": [...], "per_trial": [{"trial", "pass", "partial",
// "slo_pass", "slo_attainment", "goodput_rps", "requests_per_s", "output_tokens_per_s",
// "quality_pass_rate" (null when nothing was checked)}]}
nlohmann::json TrialsVerdictToJson(const std::vector<Summary>& trials, const TrialGate& gate);

// Merged runs: the union of one distribution across runs summarised in histogram mode
// (Summary::histograms), with the histograms' stated relative error. Fails naming the first
// run that has no histogram for `key` (exact-mode runs: merge their records instead) or whose
// bucket options differ.
Result<LogHistogram> MergeRunHistograms(const std::vector<Summary>& runs, const std::string& key);

// {"trials": N, "confidence": 0.95, "interval": "...", "distributions": {"ttft_ms": {"p99":
// {"mean","ci_low","ci_high","half_width","n","defined","clamped"}}}, "scalars": {...}}
// (ci_low / ci_high null when the interval is not defined).
nlohmann::json TrialStatsToJson(const TrialStats& t);

}  // namespace infereng::metrics
