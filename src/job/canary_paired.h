// The canary's paired statistics: request i goes to the baseline and to the candidate at the
// same intended instant, with the same prompt and output length, so the two latencies of
// request i differ by the targets and by noise only — not by what the request was. Comparing
// the per-request differences (candidate - baseline) removes the between-request variance
// (prompt length, output length, load at that moment) that makes an unpaired comparison of
// percentiles wide, so a small consistent slowdown is seen at a sample size where the
// unpaired intervals still include 0 (docs/canary.md).
//
// Per metric (TTFT, TPOT, E2E) over the requests that succeeded on both targets (paired by
// record id, the request's index in the schedule): the median and P90 of the differences with
// percentile-bootstrap intervals (pairs resampled iid: the pairing already removed the shared
// conditions; seeded), and the two-sided Wilcoxon signed-rank p-value (core/rank_stats.h).
// The verdict: "worse" / "better" when p < 1 - confidence, by the median difference's sign;
// else "no detectable difference". Pure functions over records.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "metrics/record.h"

namespace infereng::job {

// The paired metrics, by summary key, in report order; the default latency criteria they
// stand in for (TTFT P99, ITL P99 — TPOT is a request's mean ITL — and E2E P99).
struct PairedKey {
  const char* key;        // "ttft_ms"
  const char* label;      // "TTFT"
  const char* criterion;  // the default criterion it decides: "ttft_ms.p99"
};
inline constexpr PairedKey kPairedKeys[] = {
    {"ttft_ms", "TTFT", "ttft_ms.p99"}, {"tpot_ms", "TPOT", "itl_ms.p99"}, {"e2e_ms", "E2E", "e2e_ms.p99"}};

// Below this many pairs a metric has no paired verdict (the unpaired one decides).
inline constexpr int64_t kMinPairs = 10;

struct PairedOptions {
  int resamples = 1000;
  double confidence = 0.95;
  uint64_t seed = 20261201;
};

enum class PairedVerdict { kWorse, kBetter, kNoDifference, kTooFew };
std::string_view PairedVerdictName(PairedVerdict v);  // "worse" | "better" | "no detectable difference" | "too few pairs"

struct PairedMetric {
  std::string key, label, criterion;
  int64_t pairs = 0;
  double baseline_median = 0;             // of the baseline's values in the pairs (ms)
  double median = 0, median_low = 0, median_high = 0;  // of candidate - baseline (ms), with interval
  double p90 = 0, p90_low = 0, p90_high = 0;
  int64_t candidate_slower = 0;           // pairs where the candidate took longer
  double p_value = 1;                     // Wilcoxon signed-rank, two-sided
  PairedVerdict verdict = PairedVerdict::kTooFew;
  // median / baseline_median (0 when the baseline median is 0).
  double relative() const { return baseline_median > 0 ? median / baseline_median : 0; }
};

struct PairedComparison {
  int64_t baseline_requests = 0, candidate_requests = 0, pairs = 0;  // pairs: ok on both
  std::vector<PairedMetric> metrics;      // kPairedKeys order
  const PairedMetric* Find(const std::string& criterion) const;  // by criterion ("ttft_ms.p99")
};

PairedComparison ComparePaired(const std::vector<metrics::RequestRecord>& baseline,
                               const std::vector<metrics::RequestRecord>& candidate, const PairedOptions& options = {});

// Reads both run directories' requests.jsonl (as compare does) and pairs them.
Result<PairedComparison> ComparePairedDirs(const std::string& baseline_dir, const std::string& candidate_dir,
                                           const PairedOptions& options = {});

// "TTFT paired: candidate +3.02 ms per request (median [+2.9, +3.1]; P90 +3.4 [...]), 40 of 40
// slower, Wilcoxon p = 1.8e-08"
std::string PairedText(const PairedMetric& m);

nlohmann::json PairedToJson(const PairedComparison& p);

}  // namespace infereng::job
