// `infereng compare`: exit codes (0 accepted, 1 an acceptance check failed, 2 bad input),
// the table, --json, --md and --html.
#include <gtest/gtest.h>

#include <filesystem>

#include "report/test_run_dir.h"
#include "testing/cli_runner.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;
using infereng::testing::RunCli;
using report::testing::FreshDir;
using report::testing::MakeRecords;
using report::testing::ReadFile;
using report::testing::WriteRunDir;

TEST(CmdCompareTest, ExitCodesTableAndFiles) {
  const std::string dir = FreshDir("cmd-compare");
  WriteRunDir(dir + "/a", MakeRecords({.requests = 300, .ttft_ms = 120}));
  WriteRunDir(dir + "/b", MakeRecords({.requests = 300, .ttft_ms = 60}),
              {{"card", {{"name", "test-card"}}}, {"seed", 42}, {"target", "http://other:8000"}});

  auto ok = RunCli({"compare", dir + "/a", dir + "/b", "--accept", "ttft_ms.p50<=-10%", "--md", dir + "/c.md", "--html",
                    dir + "/c.html"});
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("What changed: one variable (target)"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("TTFT P50 (ms)"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("better"), std::string::npos);
  EXPECT_NE(ok.out.find("ACCEPTED"), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/c.md").find("## Metrics"), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/c.html").find("<html"), std::string::npos);

  auto fail = RunCli({"compare", dir + "/a", dir + "/b", "--accept", "ttft_ms.p50>=0"});
  EXPECT_EQ(fail.rc, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("NOT ACCEPTED"), std::string::npos);

  auto json = RunCli({"compare", dir + "/a", dir + "/b", "--json"});
  EXPECT_EQ(json.rc, 0);
  auto j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.out;
  EXPECT_EQ(j["schema"], "infereng.compare/1");

  auto bad = RunCli({"compare", dir + "/a", dir + "/b", "--accept", "ttft_ms.p99<=-10"});
  EXPECT_EQ(bad.rc, 0) << bad.err;  // absolute -10 ms: valid
  bad = RunCli({"compare", dir + "/a", dir + "/b", "--accept", "ttft.p99<=-10%"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--accept 'ttft.p99<=-10%': column 1: unknown metric"), std::string::npos) << bad.err;
  auto missing = RunCli({"compare", dir + "/a", dir + "/missing"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("missing"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infereng::cli
