// The per-request threshold check goodput and attainment count with, for callers that judge
// requests one by one (compare's resampling, metrics/bootstrap.h). The accumulator
// (summary.cc) uses the same rule; both live in summary.cc so it is written once.
#pragma once

#include <vector>

#include "card/card.h"
#include "metrics/derive.h"
#include "metrics/record.h"

namespace infereng::metrics {

// Whether `r` succeeded and met every per-request threshold (docs/metrics.md, "SLO
// evaluation"; open loop: TTFT and E2E incl. queue). Quality is not part of it: goodput
// also needs quality_pass != 0.
bool MeetsThresholds(const RequestRecord& r, const RequestMetrics& m, const std::vector<card::RequestThreshold>& thresholds,
                     bool open_loop);

}  // namespace infereng::metrics
