// `infereng report DIR` through the command table: a run directory whose requests.jsonl
// has malformed lines is still reported (exit 0), and the terminal says what was skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/exit_codes.h"
#include "report/test_run_dir.h"
#include "testing/cli_runner.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;
using report::testing::MakeRecords;
using report::testing::ReadFile;
using report::testing::WriteRunDir;

TEST(CmdReportTest, MalformedLinesAreSkippedAndSaidOnTheTerminal) {
  const std::string dir = (fs::temp_directory_path() / ("infereng_cli_report_" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  WriteRunDir(dir, MakeRecords({.requests = 20}));
  std::string text = ReadFile(dir + "/requests.jsonl");
  std::ofstream(dir + "/requests.jsonl", std::ios::trunc) << "{oops\n" << text << "[]\n";

  testing::CliRun r = testing::RunCli({"report", dir});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("Wrote " + dir + "/report.html"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("infereng report: warning: skipped 2 malformed lines in " + dir +
                       "/requests.jsonl (line 1: not valid JSON; line 22: expected a JSON object)"),
            std::string::npos)
      << r.err;
  // The records around the bad lines are all in the report's per-request export.
  std::ifstream csv(dir + "/requests.csv");
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 1 + 20);

  // A clean directory: no warning.
  WriteRunDir(dir, MakeRecords({.requests = 5}));
  r = testing::RunCli({"report", dir});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infereng::cli
