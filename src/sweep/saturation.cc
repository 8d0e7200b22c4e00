#include "sweep/saturation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infereng::sweep {
namespace {

struct Segment {
  double sent = 0, completed = 0, seconds = 0, ttft_sum = 0, ttft_n = 0;
};

Segment Sum(std::span<const LoadSample> s) {
  Segment g;
  for (const LoadSample& x : s) {
    g.sent += x.sent;
    g.completed += x.completed;
    g.seconds += x.width_s;
    if (x.ttft_ms >= 0) {
      g.ttft_sum += x.ttft_ms;
      g.ttft_n += 1;
    }
  }
  return g;
}

// Least-squares slope of in_flight against the interval midpoints.
double Slope(std::span<const LoadSample> s) {
  double n = static_cast<double>(s.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const LoadSample& x : s) {
    double t = x.t_s + x.width_s / 2;
    sx += t;
    sy += x.in_flight;
    sxx += t * t;
    sxy += t * x.in_flight;
  }
  double den = n * sxx - sx * sx;
  return den > 0 ? (n * sxy - sx * sy) / den : 0;
}

}  // namespace

SaturationVerdict DetectSaturation(std::span<const LoadSample> samples, const SaturationOptions& o) {
  SaturationVerdict v;
  if (static_cast<int>(samples.size()) < std::max(o.min_samples, 3)) {
    v.reason = fmt::format("too few samples ({} < {})", samples.size(), std::max(o.min_samples, 3));
    return v;
  }
  std::size_t third = samples.size() / 3;
  Segment early = Sum(samples.first(third));
  Segment late = Sum(samples.last(third));
  if (late.seconds <= 0 || late.sent <= 0) {
    v.reason = "no sends in the late part of the run";
    return v;
  }
  v.send_rate = late.sent / late.seconds;
  v.completion_rate = late.completed / late.seconds;
  // The backlog trend after the first third: in-flight legitimately ramps up while the
  // first requests are still running (about one E2E latency), which is not saturation.
  v.backlog_slope = Slope(samples.last(samples.size() - third));
  v.ttft_early_ms = early.ttft_n > 0 ? early.ttft_sum / early.ttft_n : 0;
  v.ttft_late_ms = late.ttft_n > 0 ? late.ttft_sum / late.ttft_n : 0;

  bool shortfall = v.completion_rate < v.send_rate * (1 - o.throughput_tolerance);
  bool backlog = v.backlog_slope > o.backlog_slope_share * v.send_rate;
  bool latency = early.ttft_n > 0 && late.ttft_n > 0 && v.ttft_late_ms > v.ttft_early_ms * o.latency_growth &&
                 v.ttft_late_ms - v.ttft_early_ms > o.min_latency_growth_ms;
  // No first token at all late in the run while requests keep going out: stalled.
  bool stalled = late.ttft_n == 0 && early.ttft_n > 0;
  v.saturated = shortfall && (backlog || latency || stalled);
  if (v.saturated) {
    v.reason = fmt::format("over-saturated: completing {:.3g}/s of {:.3g}/s offered, in-flight growing {:.3g}/s",
                           v.completion_rate, v.send_rate, v.backlog_slope);
    if (early.ttft_n > 0 && late.ttft_n > 0) v.reason += fmt::format(", TTFT {:.4g} ms -> {:.4g} ms", v.ttft_early_ms, v.ttft_late_ms);
  } else if (shortfall) {
    v.reason = fmt::format("completion rate {:.3g}/s below offered {:.3g}/s but no growing backlog or latency",
                           v.completion_rate, v.send_rate);
  } else {
    v.reason = fmt::format("keeping up: completing {:.3g}/s of {:.3g}/s offered", v.completion_rate, v.send_rate);
  }
  return v;
}

std::vector<LoadSample> SamplesFromTimeseries(const std::vector<metrics::TimeBucket>& buckets) {
  std::vector<LoadSample> out;
  out.reserve(buckets.size());
  for (const metrics::TimeBucket& b : buckets) {
    out.push_back({.t_s = b.start_s,
                   .width_s = b.width_s,
                   .sent = static_cast<double>(b.sent),
                   .completed = static_cast<double>(b.completed + b.errors),
                   .in_flight = b.in_flight,
                   .ttft_ms = b.ttft_count > 0 ? b.ttft_mean_ms : -1});
  }
  return out;
}

}  // namespace infereng::sweep
