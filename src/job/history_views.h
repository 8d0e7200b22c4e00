// What `history list/show/trend/export` show of the run history: the list table, one
// entry in full, a metric over time (terminal table with a sparkline, and a self-contained
// HTML page with the chart and each point's CI), and the CSV export. Text only; the CLI
// prints it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/history_db.h"

namespace infereng::job {

std::string FormatHistoryList(const std::vector<store::RunEntry>& entries);
std::string FormatHistoryEntry(const store::RunEntry& entry);

struct TrendPoint {
  int64_t id = 0;
  std::string when;  // registered_at
  double value = 0;
  std::optional<double> ci_low, ci_high;
  bool partial = false;
};

// The entries that have `metric`, in order. NotFound naming the metrics they do have when
// none has it (with a did-you-mean).
Result<std::vector<TrendPoint>> TrendOf(const std::vector<store::RunEntry>& entries, const std::string& metric);

// One block character per value, scaled between the min and the max ("▁▃█").
std::string Sparkline(const std::vector<double>& values);

std::string FormatTrend(const std::string& metric, const std::vector<TrendPoint>& points);
std::string TrendHtml(const std::string& metric, const std::vector<TrendPoint>& points);

// One row per entry: the run's facts, then one column per metric any entry has (sorted).
std::string HistoryCsv(const std::vector<store::RunEntry>& entries);

}  // namespace infereng::job
