// Saturation detection within one load point: a pure function over the point's time
// series, so it is unit-testable and the same for measured and simulated runs.
//
// An open-loop point is over-saturated when the server completes less than it is offered
// AND the backlog shows it: requests in flight grow with time and TTFT (which includes
// the server queue) grows with time. A saturated point is doomed — its latency grows for
// as long as it runs — so the sweep stops it early and marks it, instead of waiting it out.
//
// The rule compares the early third of the samples with the late third:
//   shortfall  = late completion rate < late send rate × (1 - throughput_tolerance)
//   backlog    = least-squares slope of in-flight over the last two thirds > backlog_slope_share × send rate
//   latency    = late mean TTFT > early mean TTFT × latency_growth and by > min_latency_growth_ms
// saturated when shortfall and (backlog or latency). Fewer than min_samples samples (or no
// sends) give "not saturated" with reason "too few samples": the detector never guesses.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "metrics/summary.h"

namespace infereng::sweep {

// One interval of a point's run (e.g. one second).
struct LoadSample {
  double t_s = 0;         // start of the interval, seconds since the point started
  double width_s = 1;
  double sent = 0;        // requests sent in the interval
  double completed = 0;   // requests finished (any outcome) in the interval
  double in_flight = 0;   // requests in flight (average or at the end of the interval)
  double ttft_ms = -1;    // mean TTFT of first tokens in the interval; < 0 = none
};

struct SaturationOptions {
  int min_samples = 6;
  double throughput_tolerance = 0.10;
  double backlog_slope_share = 0.10;
  double latency_growth = 1.5;
  double min_latency_growth_ms = 20;
};

struct SaturationVerdict {
  bool saturated = false;
  std::string reason;           // one line, for the terminal and the report
  double send_rate = 0;         // late third, per second
  double completion_rate = 0;   // late third, per second
  double backlog_slope = 0;     // in-flight growth per second over the last two thirds
  double ttft_early_ms = 0, ttft_late_ms = 0;
};

SaturationVerdict DetectSaturation(std::span<const LoadSample> samples, const SaturationOptions& options = {});

// Adapter: a Summary's time series as samples (completed + errors count as finished).
std::vector<LoadSample> SamplesFromTimeseries(const std::vector<metrics::TimeBucket>& buckets);

}  // namespace infereng::sweep
