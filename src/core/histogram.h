// LogHistogram: a mergeable, log-bucketed (HDR-style) histogram of non-negative values
// with a stated relative error, for long simulations and merged runs where keeping raw
// samples is too costly.
//
// Buckets: each power of two above `lowest` is split into `sub_buckets` equal-width
// buckets (log-linear, like HdrHistogram). A value is reported as the midpoint of its
// bucket, so the relative error of any reported percentile is <= 1 / (2 * sub_buckets)
// (64 sub-buckets: <= 0.79%) for values >= lowest; values below `lowest` (and negative
// values) share one underflow bucket (absolute error <= lowest). Values above `highest`
// are clamped into the top bucket and counted in overflow(). NaN is ignored and counted.
//
// count, sum, min and max are kept exactly, so mean/min/max are exact, and percentile
// results are clamped into [min, max] (p0 = min and p100 = max exactly).
//
// Percentiles follow the same rule as stats::PercentileSorted (numpy "linear"), applied to
// the bucket representatives: with exact values v_lo, v_hi replaced by values within the
// relative error, the interpolated result stays within it.
//
// Memory is fixed by the options (the bucket vector grows lazily up to the highest bucket
// index used, at most NumBuckets()). Merge adds bucket counts: Merge(a, b) has exactly the
// bucket counts of a histogram fed the union of both inputs.
//
// Thread-safety: none; use one histogram per thread and merge afterwards.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/stats.h"
#include "core/status.h"

namespace infereng {

struct HistogramOptions {
  double lowest = 1e-3;   // smallest value resolved with relative error (e.g. 1 µs in ms)
  double highest = 1e9;   // largest value tracked (e.g. ~11.6 days in ms)
  int sub_buckets = 64;   // per power of two; relative error <= 1 / (2 * sub_buckets)

  friend bool operator==(const HistogramOptions&, const HistogramOptions&) = default;
};

class LogHistogram {
 public:
  explicit LogHistogram(HistogramOptions options = {});

  void Add(double value) { AddN(value, 1); }
  void AddN(double value, uint64_t n);
  // Same result as Add(v) for each v in order (sum included, bit for bit), in one call:
  // for per-token samples, where a call per value dominated the twin's profile.
  void AddAll(std::span<const double> values);

  // Adds other's counts into this one. Fails (and changes nothing) if options differ.
  Status Merge(const LogHistogram& other);

  void Clear();

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ ? min_ : 0; }
  double max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  uint64_t overflow() const { return overflow_; }  // values clamped above `highest`
  uint64_t nan_count() const { return nan_; }      // NaN inputs, not counted anywhere else

  // Percentile p in [0, 100] (numpy "linear" on bucket representatives); 0 when empty.
  double Percentile(double p) const;
  // The standard set; stddev is computed from bucket representatives (approximate).
  stats::SampleStats Stats() const;

  const HistogramOptions& options() const { return options_; }
  double relative_error() const { return 0.5 / options_.sub_buckets; }
  // Total number of buckets these options allow (the memory bound).
  int NumBuckets() const { return num_buckets_; }
  // Counts per bucket, index 0 = underflow; trailing empty buckets are not stored.
  const std::vector<uint64_t>& bucket_counts() const { return counts_; }
  // Same options and identical bucket counts (ignores trailing zeros).
  bool SameBuckets(const LogHistogram& other) const;

  // Bucket mapping, exposed for tests and for serialisers.
  int BucketIndex(double value) const;
  double BucketLow(int index) const;   // inclusive lower bound
  double BucketHigh(int index) const;  // exclusive upper bound
  double BucketValue(int index) const; // representative (midpoint) before clamping

  // Rebuilds a histogram from serialised parts (see metrics/summary_json for the format).
  static Result<LogHistogram> FromParts(HistogramOptions options, std::vector<uint64_t> counts,
                                        double sum, double min, double max, uint64_t overflow);

 private:
  // Representative of the element with 0-based rank `k` in sorted order.
  double ValueAtRank(uint64_t k) const;

  HistogramOptions options_;
  int num_octaves_ = 0;
  int num_buckets_ = 0;
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t overflow_ = 0;
  uint64_t nan_ = 0;
  double sum_ = 0;
  double min_ = 0, max_ = 0;
};

}  // namespace infereng
