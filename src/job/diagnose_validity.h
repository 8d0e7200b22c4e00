// The validity of a measurement, checked before any hypothesis about the engine: did the
// client keep its schedule (lag, CPU, achieved vs offered rate), how many requests failed and
// how, was the warm-up long enough, are there samples enough for the percentiles quoted. A
// client that shaped the result is the first finding of `diagnose` (job/diagnose.h).
#pragma once

#include <vector>

#include "job/diagnose_evidence.h"
#include "job/diagnose_facts.h"

namespace infereng::job {

// Thresholds, one place (docs/diagnose.md quotes them).
struct ValidityLimits {
  double lag_warn_ms = 1;        // summary's own flag (schedule_lag_flagged)
  double lag_fail_ms = 10;       // or 10% of TTFT p50, whichever is larger
  double cpu_warn_share = 0.8;   // client CPU seconds per second of run
  double achieved_fail = 0.95;   // achieved / offered
  double error_warn = 0.01;      // failed / in-window
  double error_fail = 0.05;
  double warmup_ratio_warn = 1.5;  // TTFT of the window's first third / last third
  int64_t p99_min_samples = 100;   // fewer: the P99 is a single request's
};

std::vector<ValidityCheck> CheckValidity(const RunFacts& f, const ValidityLimits& limits = {});

// True when a check says the client, not the engine, shaped the result.
bool ClientShaped(const std::vector<ValidityCheck>& checks);

}  // namespace infereng::job
