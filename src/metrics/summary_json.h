// Summary <-> JSON (nlohmann), the one summary schema for simulated and measured runs
// (docs/results-schema.md). Empty distributions are written with null values and
// count 0; reading accepts what writing produces and names the offending key on error
// ("summary.ttft_ms.p99: expected a number").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/histogram.h"
#include "core/status.h"
#include "metrics/summary.h"

namespace infereng::metrics {

nlohmann::json SampleStatsToJson(const stats::SampleStats& s);
Result<stats::SampleStats> SampleStatsFromJson(const nlohmann::json& j, const std::string& where);

nlohmann::json HistogramToJson(const LogHistogram& h);
Result<LogHistogram> HistogramFromJson(const nlohmann::json& j, const std::string& where);

nlohmann::json SummaryToJson(const Summary& summary);
Result<Summary> SummaryFromJson(const nlohmann::json& j);

// Files: pretty-printed JSON with a trailing newline.
Status WriteSummaryFile(const std::string& path, const Summary& summary);
Result<Summary> ReadSummaryFile(const std::string& path);

}  // namespace infereng::metrics
