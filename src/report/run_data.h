// RunData: what `report` reads from one run directory (bench, run, simulate or one sweep
// point): requests.jsonl (raw records; records.jsonl is accepted too), summary.json and
// manifest.json, plus the per-request metrics derived once for the charts and CSVs.
//
// Missing or unreadable files do not stop a report: each one becomes a `problems` line
// shown at the top of the report, and the sections that need it say "not available".
// Malformed lines of requests.jsonl are skipped, counted in `skipped` and named in
// `problems` ("skipped 2 malformed lines in DIR/requests.jsonl (line 17: ...)"); the
// records on either side of them are kept.
// Only a directory with none of the three files is an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "metrics/derive.h"
#include "metrics/quality.h"
#include "metrics/record.h"
#include "metrics/records_io.h"
#include "metrics/summary.h"

namespace infereng::report {

// One request's row: the raw record and its derived metrics (times in ms since t0).
struct RequestRow {
  metrics::RequestRecord record;
  metrics::RequestMetrics m;
};

struct RunData {
  std::string dir;
  std::string records_file;                // path read ("" when none)
  std::optional<metrics::Summary> summary;
  nlohmann::json manifest;                 // null when absent
  nlohmann::json trials;                   // summary.json "trials" (mean and 95% CI across trials), or null
  std::optional<metrics::QualityReport> quality;  // summary.json "quality" (with an eval set)
  nlohmann::json prediction;               // a twin prediction's summary.json "prediction" (its window), or null
  std::vector<RequestRow> rows;            // in file order
  metrics::SkippedLines skipped;           // malformed lines of records_file, not in rows
  std::vector<std::string> problems;       // "summary.json: missing", parse errors, ...
  std::vector<std::string> notes;          // informational (e.g. which trial is charted)

  bool empty() const { return rows.empty() && !summary; }
};

Result<RunData> LoadRunDir(const std::string& dir);

// Milliseconds since t0 of a raw time (-1 stays negative).
inline double RelMs(Nanos t) { return t < 0 ? -1 : static_cast<double>(t) / 1e6; }

}  // namespace infereng::report
