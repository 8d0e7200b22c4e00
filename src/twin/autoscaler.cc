#include "twin/autoscaler.h"

#include <algorithm>
#include <cmath>

namespace infereng::twin {

ScaleDecision Autoscaler::Decide(Nanos now, double metric_sum, int32_t serving, int32_t starting) {
  ScaleDecision d;
  if (cfg_.autoscale == AutoscaleMetric::kNone) return d;
  // Clamped as a double first: a deep queue over a tiny target overflows int32_t (UB).
  const double want = std::ceil(metric_sum / cfg_.autoscale_target - 1e-9);
  const int32_t desired = static_cast<int32_t>(std::clamp(std::isnan(want) ? 0.0 : want,
                                                          static_cast<double>(cfg_.min_replicas),
                                                          static_cast<double>(cfg_.max_replicas)));
  const int32_t have = serving + starting;
  if (desired > have) {
    d.start = desired - have;
    last_change_ = now;
  } else if (desired < serving && starting == 0 &&
             (last_change_ < 0 || now - last_change_ >= SecondsToNanos(cfg_.cooldown_s))) {
    d.drain = serving - desired;
    last_change_ = now;
  }
  return d;
}

ScaleDecision Autoscaler::OnColdRequest(Nanos now, int32_t serving, int32_t starting) {
  ScaleDecision d;
  if (serving == 0 && starting == 0 && cfg_.max_replicas > 0) {
    d.start = 1;
    last_change_ = now;
  }
  return d;
}

}  // namespace infereng::twin
