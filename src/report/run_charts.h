// Charts of one run (measured or simulated), built from RunData: latency CDFs with the
// card's SLO lines, latency and load over time, a per-request waterfall and the error
// breakdown. Each returns finished SVG markup (svg_chart.h); ids are prefixed with
// `id_prefix` so several runs can share one page. `predicted` (may be null) is a twin run
// of the same workload, drawn dashed beside the measured curves.
#pragma once

#include <string>
#include <vector>

#include "report/run_data.h"

namespace infereng::report {

struct RunChartOptions {
  std::string id_prefix = "run";
  const RunData* predicted = nullptr;
  std::size_t waterfall_rows = 40;
};

// TTFT, ITL and E2E CDFs.
std::vector<std::string> LatencyCdfCharts(const RunData& run, const RunChartOptions& options);
// TTFT and ITL over time; in-flight and server queue over time; send/complete rates.
std::vector<std::string> OverTimeCharts(const RunData& run, const RunChartOptions& options);
// Queue / prefill / decode for an evenly spaced sample of requests.
std::string WaterfallChart(const RunData& run, const RunChartOptions& options);
// The TTFT split per request (queue, prefill, client+network stacked), for an evenly spaced
// sample of the requests whose engine reported its phases, sorted by TTFT, with the phase
// boundaries in the subtitle; empty string when no request has a split.
std::string TtftSplitChart(const RunData& run, const RunChartOptions& options);
// Errors by class (bar chart); empty string when there are no errors.
std::string ErrorChart(const RunData& run, const RunChartOptions& options);

// True when the run's SLO evaluation uses the incl.-queue variants (open loop).
bool OpenLoop(const RunData& run);

}  // namespace infereng::report
