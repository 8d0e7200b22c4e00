// Terminal presentation of a Summary (simulate, bench and run print it) and the metric
// boundaries / alias texts that every report shows next to the numbers (docs/metrics.md).
// Pure functions returning strings: callers print them to their CommandIo streams.
#pragma once

#include <string>
#include <vector>

#include "metrics/summary.h"

namespace infereng::metrics {

struct TableOptions {
  bool show_boundaries = true;   // the one-line definitions under the table
  bool show_timeseries = false;  // a compact per-bucket listing
  bool color = false;            // ANSI colours for pass/fail (TTY only)
};

// A compact fixed-width table: one row per non-empty distribution (p50 .. p99.9, mean,
// max, n), then rates, SLOs (value vs threshold, PASS/FAIL), errors and flags.
std::string FormatSummaryTable(const Summary& summary, const TableOptions& options = {});

// The metric boundaries (what each number measures, from which timestamp to which).
std::string MetricBoundariesText();

// Alias table: the same quantity's name in other tools.
struct AliasRow {
  std::string infereng, vllm, sglang, aiperf, guidellm, llmperf;
};
const std::vector<AliasRow>& ToolAliases();
// The alias table as fixed-width text.
std::string ToolAliasesText();

}  // namespace infereng::metrics
