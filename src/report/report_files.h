// The non-HTML report outputs: report.md (Markdown summary) and the CSV exports
// (requests.csv per request, timeseries.csv per time bucket). Sweep CSV lives in
// sweep/sweep_io.h (sweep.csv) because `sweep` writes it as soon as the points finish.
#pragma once

#include <string>

#include "core/status.h"
#include "report/run_data.h"
#include "sweep/sweep_io.h"

namespace infereng::report {

std::string RunMarkdown(const RunData& run);
std::string SweepMarkdown(const sweep::SweepFile& sweep);

// One row per record: id, times relative to t0 (ms), derived metrics, tokens, error.
Status WriteRequestsCsv(const std::string& path, const RunData& run);
// One row per summary time bucket; an empty header-only file when there is no summary.
Status WriteTimeseriesCsv(const std::string& path, const RunData& run);

Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace infereng::report
