// `infereng budget` end to end, in-process: the table, JSON, and exit codes (1 over budget,
// 2 for a card with no latency objective).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;

std::string Card(const std::string& slo) {
  return "name: tiny\n"
         "product:\n  network: 20ms\n  preprocess: 5ms\n"
         "traffic:\n  arrival: {process: poisson, rate: 4rps}\n"
         "  input_tokens: {fixed: 200}\n  output_tokens: {fixed: 40}\n" +
         slo +
         "model:\n  architecture: llama-3.1-8b\n"
         "deployment:\n  accelerator: h100-sxm\n"
         "bench:\n  duration: 20s\n  warmup: 0s\n  seed: 3\n";
}

std::string Write(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("infereng_budget_" + std::to_string(::getpid()) + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(CmdBudgetTest, SplitsEachObjectiveAndExitsByTheVerdict) {
  const std::string ok = Write("ok.yaml", Card("slo:\n  ttft: {p99: 2s}\n  e2e: {p95: 10s}\n"));
  testing::CliRun table = testing::RunCli({"budget", "--card", ok, "--no-load-search"});
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ttft_ms P99 <= 2000 ms"));
  EXPECT_THAT(table.out, HasSubstr("network            20.0 ms"));
  EXPECT_THAT(table.out, HasSubstr("longest prompt meeting the TTFT target:"));
  EXPECT_THAT(table.out, HasSubstr("Not in the card (counted as 0 ms): product.postprocess"));

  testing::CliRun json = testing::RunCli({"budget", "--card", ok, "--json", "--no-load-search"});
  ASSERT_EQ(json.rc, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["objectives"].size(), 2u);
  EXPECT_EQ(j["objectives"][1]["parts"].back()["name"], "postprocess");

  const std::string tight = Write("tight.yaml", Card("slo:\n  ttft: {p99: 10ms}\n"));
  testing::CliRun over = testing::RunCli({"budget", "--card", tight, "--no-load-search"});
  EXPECT_EQ(over.rc, 1) << over.err;
  EXPECT_THAT(over.out, HasSubstr("OVER BUDGET"));

  const std::string none = Write("none.yaml", Card(""));
  testing::CliRun missing = testing::RunCli({"budget", "--card", none});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_THAT(missing.err, HasSubstr("no latency objective"));
  testing::CliRun bad_duration = testing::RunCli({"budget", "--card", ok, "--duration", "soon"});
  EXPECT_EQ(bad_duration.rc, 2);
  EXPECT_THAT(bad_duration.err, HasSubstr("--duration"));
  testing::CliRun bad_set = testing::RunCli({"budget", "--card", ok, "--set", "engine.nope=1"});
  EXPECT_EQ(bad_set.rc, 2);
  EXPECT_THAT(bad_set.err, HasSubstr("engine.nope"));
  for (const std::string& f : {ok, tight, none}) std::filesystem::remove(f);
}

}  // namespace
}  // namespace infereng::cli
