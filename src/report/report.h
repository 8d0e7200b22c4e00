// WriteReport: turns a run directory or a sweep directory into what people look at:
//   DIR/report.html  one self-contained page (inline CSS + SVG, no scripts, no external
//                    resources) with the charts, the summary, the metric boundaries and
//                    aliases, the manifest and any problems found reading the files;
//   DIR/report.md    a Markdown summary (for tickets and pull requests);
//   DIR/requests.csv (run) per-request derived metrics, DIR/timeseries.csv (run) per time
//                    bucket, DIR/sweep.csv (sweep) per point.
// A sweep directory holds sweep.json and points/<NN>-<load>/ (each a run directory, which
// gets its own report too). A run directory holds requests.jsonl, summary.json and
// manifest.json; missing or bad files become notices in the report, never a crash.
//
// `infereng report DIR` calls this; so do `run`, `bench --out` and `sweep` when they finish.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace infereng::report {

struct ReportOptions {
  bool point_reports = true;   // sweep: also (re)write each point's own report
  bool csv = true;             // write the CSV files
  std::size_t waterfall_rows = 40;
};

struct ReportFiles {
  std::string html, markdown;
  std::vector<std::string> csv;
  bool sweep = false;
  int charts = 0;              // SVG charts in report.html
  // Data the report had to leave out (malformed lines of requests.jsonl): also noted in
  // report.html and report.md; callers print them, so the terminal says so too.
  std::vector<std::string> warnings;
};

// Writes the report files into `dir` (run or sweep directory, detected by its contents).
Result<ReportFiles> WriteReport(const std::string& dir, const ReportOptions& options = {});

// Runs only: same, for callers that know the kind.
Result<ReportFiles> WriteRunReport(const std::string& run_dir, const ReportOptions& options = {});
Result<ReportFiles> WriteSweepReport(const std::string& sweep_dir, const ReportOptions& options = {});

}  // namespace infereng::report
