// `infereng plan` end to end, in-process: the three files, the summary, and that an
// experiment's figures are what `simulate` prints for the same override; exit 2 naming the
// path for a bad card or --run directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  return (fs::temp_directory_path() / ("infereng_plan_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(CmdPlanTest, WritesThreeFilesAndItsFiguresAreSimulates) {
  const std::string card = testing::SourceDir() + "/examples/chat.yaml";
  const std::string out = TempDir("chat");
  fs::remove_all(out);
  testing::CliRun run = testing::RunCli({"plan", card, "--out", out, "--duration", "20s", "--json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  for (const char* f : {"plan.md", "plan.html", "plan.json"}) EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j, nlohmann::json::parse(Read(out + "/plan.json")));
  const std::string md = Read(out + "/plan.md");
  for (const char* h : {"## 1. ", "## 2. ", "## 3. ", "## 4. ", "## 5. "}) EXPECT_THAT(md, HasSubstr(h));
  const std::string html = Read(out + "/plan.html");
  EXPECT_THAT(html, HasSubstr("5. Acceptance criteria and rollout"));
  EXPECT_EQ(html.find("<script"), std::string::npos);

  // The first ranked experiment made of twin knobs only, reproduced with `simulate`.
  const nlohmann::json* exp = nullptr;
  for (const nlohmann::json& e : j["experiments"]["items"]) {
    if (!e.contains("predicted")) continue;
    bool knobs = true;
    for (const nlohmann::json& o : e["overrides"]) knobs &= o["key"].get<std::string>().rfind("engine.", 0) == 0;
    if (knobs) {
      exp = &e;
      break;
    }
  }
  ASSERT_NE(exp, nullptr);
  std::vector<std::string> args = {"simulate", "--card", card, "--duration", "20s", "--json", "--no-history"};
  for (const nlohmann::json& o : (*exp)["overrides"]) {
    args.push_back("--set");
    args.push_back(o["key"].get<std::string>() + "=" + o["value"].get<std::string>());
  }
  testing::CliRun sim = testing::RunCli(args);
  ASSERT_LE(sim.rc, 1) << sim.err;
  const nlohmann::json s = nlohmann::json::parse(sim.out);
  const nlohmann::json& p = (*exp)["predicted"];
  EXPECT_DOUBLE_EQ(p["goodput_rps"].get<double>(), s["goodput_rps"].get<double>()) << (*exp)["id"];
  EXPECT_DOUBLE_EQ(p["ttft_ms.p99"].get<double>(), s["ttft_ms"]["p99"].get<double>());
  EXPECT_DOUBLE_EQ(p["e2e_ms.p50"].get<double>(), s["e2e_ms"]["p50"].get<double>());
  EXPECT_DOUBLE_EQ(p["cost_per_1m_output_tokens_usd"].get<double>(),
                   s["twin"]["cost"]["per_1m_output_tokens_usd"].get<double>());

  testing::CliRun summary = testing::RunCli({"plan", card, "--out", out, "--duration", "20s"});
  ASSERT_EQ(summary.rc, 0) << summary.err;
  EXPECT_THAT(summary.out, HasSubstr("baseline: twin prediction"));
  EXPECT_THAT(summary.out, HasSubstr("accept with: infereng compare"));
  fs::remove_all(out);
}

TEST(CmdPlanTest, BadCardOrRunDirectoryExitsTwoNamingThePath) {
  testing::CliRun missing = testing::RunCli({"plan", "/nonexistent/card.yaml"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/card.yaml"));

  const std::string bad = TempDir("bad.yaml");
  std::ofstream(bad) << "name: bad\ntraffic:\n  arrival: {process: poisson, rate: fast}\n";
  testing::CliRun bad_card = testing::RunCli({"plan", bad});
  EXPECT_EQ(bad_card.rc, 2);
  EXPECT_THAT(bad_card.err, HasSubstr(bad + ":3"));
  fs::remove(bad);

  const std::string card = testing::SourceDir() + "/examples/chat.yaml";
  testing::CliRun no_run = testing::RunCli({"plan", card, "--run", "/nonexistent/run"});
  EXPECT_EQ(no_run.rc, 2);
  EXPECT_THAT(no_run.err, HasSubstr("/nonexistent/run"));
  const std::string empty = TempDir("empty-run");
  fs::create_directories(empty);
  testing::CliRun not_run = testing::RunCli({"plan", card, "--run", empty});
  EXPECT_EQ(not_run.rc, 2);
  EXPECT_THAT(not_run.err, HasSubstr(empty));
  fs::remove_all(empty);
}

}  // namespace
}  // namespace infereng::cli
