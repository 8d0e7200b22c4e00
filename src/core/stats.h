// Exact descriptive statistics over raw samples: the percentile set every infereng report
// uses (p50, p90, p95, p99, p99.9, min, max, mean, count), and the Student-t confidence
// interval used to compare repeated trials.
//
// Percentiles use linear interpolation between closest ranks, exactly numpy's default
// (`numpy.percentile(a, q)`, method="linear"): rank = q/100 * (n-1); the value is
// a[floor(rank)] + (rank - floor(rank)) * (a[ceil(rank)] - a[floor(rank)]) on sorted a.
// Standard deviation is the population one (ddof=0, numpy's default) in SampleStats; the
// confidence interval uses the sample one (ddof=1).
//
// Nothing here allocates beyond the caller's vectors; all functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace infereng::stats {

// The percentile set reported everywhere, in this order.
inline constexpr std::array<double, 5> kStandardPercentiles = {50, 90, 95, 99, 99.9};

// Summary of one distribution. count == 0 means "no samples": every other field is 0 and
// JSON writers emit null for them (never a fake 0 latency).
struct SampleStats {
  int64_t count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p99_9 = 0;

  bool empty() const { return count == 0; }
  // The field for one of kStandardPercentiles (50 -> p50, 99.9 -> p99_9); other values
  // and empty stats return 0.
  double AtStandardPercentile(double p) const;

  friend bool operator==(const SampleStats&, const SampleStats&) = default;
};

// Percentile p (0..100) of already sorted ascending values; 0 for an empty span. p is
// clamped to [0, 100].
double PercentileSorted(std::span<const double> sorted, double p);

// Sorts `values` in place and returns percentile p. Use SummarizeInPlace for several.
double PercentileInPlace(std::vector<double>& values, double p);

// Same result as PercentileInPlace, in O(n) with std::nth_element (partially reorders
// `values`); for one percentile of a short-lived vector (a request's own P99 ITL).
double PercentileSelect(std::vector<double>& values, double p);

// Same result as PercentileSelect on a copy of `values`, without copying or reordering them:
// when the percentile lies near the top (a request's own P99 ITL: at most kTopTail values
// at or above its rank) one pass keeps just those values; otherwise it selects on a copy.
inline constexpr size_t kTopTail = 32;
double PercentileOf(std::span<const double> values, double p);

// Sorts `values` in place and fills every field of SampleStats.
SampleStats SummarizeInPlace(std::vector<double>& values);

// Convenience copy for callers that must keep their order.
inline SampleStats Summarize(std::vector<double> values) { return SummarizeInPlace(values); }

// Mean and two-sided 95% confidence interval of the mean (Student t, n-1 degrees of
// freedom, sample stddev). n == 1 gives a zero-width interval around the value and
// `defined` false (no spread can be estimated); n == 0 gives all zeros.
struct MeanCi {
  int64_t n = 0;
  double mean = 0;
  double stddev = 0;      // sample (ddof=1); 0 when n < 2
  double half_width = 0;  // t_{0.975, n-1} * stddev / sqrt(n)
  double low = 0, high = 0;
  bool defined = false;   // n >= 2

  friend bool operator==(const MeanCi&, const MeanCi&) = default;
};
MeanCi MeanConfidence95(std::span<const double> values);

// Two-sided 97.5% quantile of Student's t distribution with `df` degrees of freedom
// (exact table for df <= 30, then a Cornish-Fisher expansion accurate to ~1e-4).
double StudentT975(int64_t df);

}  // namespace infereng::stats
