// `infereng report DIR`: writes DIR/report.html (one self-contained page: charts, summary,
// metric definitions, manifest), DIR/report.md and the CSVs for a run directory (bench,
// run, simulate --out, one sweep point) or a sweep directory (sweep.json + points/).
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "report/report.h"

namespace infereng::cli {

int RunReport(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Write DIR/report.html (self-contained: inline SVG charts, no scripts, opens offline),\n"
               "DIR/report.md and CSVs for a run or sweep directory.",
               argv[0]);
  std::string dir;
  bool no_csv = false, no_points = false;
  std::size_t waterfall_rows = 40;
  app.add_option("dir", dir, "Run directory (requests.jsonl, summary.json, manifest.json) or sweep directory (sweep.json)")
      ->required();
  app.add_flag("--no-csv", no_csv, "Do not write the CSV files");
  app.add_flag("--no-point-reports", no_points, "Sweep: do not (re)write each point's own report");
  app.add_option("--waterfall-rows", waterfall_rows, "Requests shown in the waterfall")->check(CLI::Range(1, 2000));
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto files = report::WriteReport(dir, {.point_reports = !no_points, .csv = !no_csv, .waterfall_rows = waterfall_rows});
  if (!files.ok()) return ReportError(io, "report", files.status());
  // Still exit 0 (the report is written, and says what it left out), but never silently.
  for (const std::string& w : files->warnings) io.err << "infereng report: warning: " << w << "\n";
  io.out << "Wrote " << files->html << " (" << files->charts << " charts)\n";
  io.out << "      " << files->markdown << "\n";
  for (const std::string& c : files->csv) io.out << "      " << c << "\n";
  return kExitOk;
}

}  // namespace infereng::cli
