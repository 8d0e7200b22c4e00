// Terminal presentation of repeated trials (bench/run --trials N): one line per trial, the
// mean and bounded 95% interval across them (metrics/trials.h), and the run's verdict with
// its rule. A pure function returning text: src/cli/ prints it.
#pragma once

#include <string>
#include <vector>

#include "metrics/summary.h"
#include "metrics/trials.h"

namespace infereng::metrics {

// Empty for a single trial (the summary table says everything then).
std::string FormatTrialsTable(const std::vector<Summary>& trials, const TrialGate& gate);

}  // namespace infereng::metrics
