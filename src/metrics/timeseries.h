// TimeSeriesBuilder: per-time-bucket chart data (sent, completed, errors, output tokens,
// time-averaged in-flight, TTFT mean/p99) for one run, in bounded memory.
//
// Buckets start at `bucket_s` wide from t0; when an event falls beyond max_buckets, adjacent
// pairs merge and the width doubles (counts add, histograms merge exactly), so memory never
// exceeds max_buckets buckets whatever the run length. Events before t0 go to bucket 0.
// Single-threaded.
#pragma once

#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "metrics/record.h"
#include "metrics/summary.h"

namespace infereng::metrics {

class TimeSeriesBuilder {
 public:
  TimeSeriesBuilder(Nanos t0, double bucket_s, int max_buckets);

  // Adds the record's events; `ttft_ms` is its TTFT from t_send when defined (< 0: none).
  void Add(const RequestRecord& r, double ttft_ms);
  std::vector<TimeBucket> Buckets() const;
  double bucket_s() const { return NanosToSeconds(width_); }

 private:
  struct Bucket {
    int64_t sent = 0, completed = 0, errors = 0, output_tokens = 0, ttft_count = 0;
    double in_flight_ns = 0;  // request-nanoseconds overlapping the bucket
    double ttft_sum_ms = 0;
    LogHistogram ttft;
    explicit Bucket(const HistogramOptions& o) : ttft(o) {}
  };
  // Index of the bucket holding t, growing/coarsening as needed.
  size_t Slot(Nanos t);
  void Coarsen();

  Nanos t0_;
  Nanos width_;
  size_t max_buckets_;
  HistogramOptions hist_options_;
  std::vector<Bucket> buckets_;
};

}  // namespace infereng::metrics
