// `infereng characterize` end to end: the printed figures equal an independent
// computation from the raw slice, --json and --out write the same figures, --card-out
// writes a card `card check` accepts, and bad usage exits 2 with the reason.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;
using testing::RunCli;

const std::string kAzure = testing::SourceDir() + "/src/trace/testdata/azure-conv-2000.csv";
const std::string kMooncake = testing::SourceDir() + "/src/trace/testdata/mooncake-conv-1000.jsonl";

class CmdCharacterizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("infereng_cmd_characterize_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CmdCharacterizeTest, PrintsRateAndQuantilesOfTheSlice) {
  // Independent: seconds of the day from the raw rows (all on 2023-11-16).
  std::ifstream f(kAzure);
  std::string line;
  std::getline(f, line);
  std::vector<double> t, in;
  while (std::getline(f, line)) {
    int hh = 0, mm = 0, a = 0, b = 0;
    double ss = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "2023-11-16 %d:%d:%lf,%d,%d", &hh, &mm, &ss, &a, &b), 5);
    t.push_back(hh * 3600 + mm * 60 + ss);
    in.push_back(a);
  }
  std::sort(in.begin(), in.end());
  const double rank = 0.5 * static_cast<double>(in.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const double p50 = in[lo] + (rank - static_cast<double>(lo)) * (in[lo + 1] - in[lo]);
  auto run = RunCli({"characterize", kAzure});
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(fmt::format("2000 requests, mean rate {:.4g} req/s", 2000 / (t.back() - t.front()))));
  EXPECT_THAT(run.out, HasSubstr(fmt::format("input        mean {:.4g} p50 {:.4g}", 0.0 + [&] {
                                   double s = 0;
                                   for (double v : in) s += v;
                                   return s / static_cast<double>(in.size());
                                 }(), p50)));
  EXPECT_THAT(run.out, HasSubstr("(azure, sha256 "));
  EXPECT_THAT(run.out, HasSubstr("2023-11-16 18:15:46 .. 2023-11-16 18:"));
}

TEST_F(CmdCharacterizeTest, JsonOutAndCardOut) {
  const std::string out = (dir_ / "out").string(), card = (dir_ / "traffic.yaml").string();
  auto run = RunCli({"characterize", kMooncake, "--out", out, "--card-out", card, "--cache-blocks", "100",
                     "--cache-blocks", "1000", "--card", testing::SourceDir() + "/examples/chat.yaml"});
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("LRU hit rate: 100 blocks"));
  EXPECT_THAT(run.out, HasSubstr("little's law"));
  EXPECT_THAT(run.out, HasSubstr("the card's e2e p95 objective"));
  EXPECT_TRUE(std::filesystem::exists(out + "/report.html"));
  std::ifstream jf(out + "/characterize.json");
  const auto j = nlohmann::json::parse(jf);
  ASSERT_EQ(j["traces"].size(), 1u);
  EXPECT_EQ(j["traces"][0]["format"], "mooncake");
  EXPECT_EQ(j["traces"][0]["arrivals"]["requests"], 1000);
  EXPECT_EQ(j["traces"][0]["prefix"]["lru"].size(), 2u);
  EXPECT_TRUE(j["traces"][0]["arrivals"]["peak_to_mean"][2]["ratio"].is_null());  // 1 h > the slice
  auto json_run = RunCli({"characterize", kMooncake, "--json"});
  ASSERT_EQ(json_run.rc, 0) << json_run.err;
  EXPECT_EQ(nlohmann::json::parse(json_run.out)["traces"][0]["arrivals"]["mean_rate_rps"],
            j["traces"][0]["arrivals"]["mean_rate_rps"]);
  auto check = RunCli({"card", "check", card});
  ASSERT_EQ(check.rc, 0) << check.err << check.out;
  EXPECT_THAT(check.out, HasSubstr("(0 assumed,"));
  EXPECT_THAT(check.out, ::testing::Not(HasSubstr("missing  traffic.arrival")));
  EXPECT_THAT(check.out, ::testing::Not(HasSubstr("missing  traffic.input_tokens")));
  EXPECT_THAT(check.out, ::testing::Not(HasSubstr("missing  traffic.prefix")));
  EXPECT_THAT(run.out, HasSubstr("sessions inferred from hash_ids"));
  EXPECT_EQ(j["traces"][0]["sessions"]["source"], "inferred");

  // --card-sessions: the conversations, with their sidecar files beside the card.
  const std::string conv = (dir_ / "conv.yaml").string();
  auto sessions = RunCli({"characterize", kMooncake, "--card-out", conv, "--card-sessions"});
  ASSERT_EQ(sessions.rc, 0) << sessions.err;
  EXPECT_THAT(sessions.err, HasSubstr("conv.turns.txt"));
  auto conv_check = RunCli({"card", "check", conv});
  ASSERT_EQ(conv_check.rc, 0) << conv_check.err << conv_check.out;
  EXPECT_THAT(conv_check.out, HasSubstr("(0 assumed,"));
}

TEST_F(CmdCharacterizeTest, UsageErrorsExit2WithTheReason) {
  auto two = RunCli({"characterize", kAzure, kMooncake, "--card-out", (dir_ / "c.yaml").string()});
  EXPECT_EQ(two.rc, 2);
  EXPECT_THAT(two.err, HasSubstr("give exactly one trace"));
  auto sessions_alone = RunCli({"characterize", kMooncake, "--card-sessions"});
  EXPECT_EQ(sessions_alone.rc, 2);
  EXPECT_THAT(sessions_alone.err, HasSubstr("--card-sessions shapes the card --card-out writes"));
  auto no_sessions = RunCli({"characterize", kAzure, "--card-out", (dir_ / "a.yaml").string(), "--card-sessions"});
  EXPECT_EQ(no_sessions.rc, 2);
  EXPECT_THAT(no_sessions.err, HasSubstr("the trace has no sessions to write"));
  auto fmt_bad = RunCli({"characterize", kAzure, "--format", "parquet"});
  EXPECT_EQ(fmt_bad.rc, 2);
  EXPECT_THAT(fmt_bad.err, HasSubstr("unknown format \"parquet\""));
  auto missing = RunCli({"characterize", "/nonexistent.csv"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent.csv: no such file"));
  auto wrong = RunCli({"characterize", kAzure, "--format", "mooncake"});
  EXPECT_EQ(wrong.rc, 2);
  EXPECT_THAT(wrong.err, HasSubstr("azure-conv-2000.csv:1: expected a JSON object"));
}

}  // namespace
}  // namespace infereng::cli
