// `infereng profile`, `calibrate` and `--profile` end to end, in-process: exit codes and
// errors that name the path and the field.
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

constexpr const char* kCard = R"(name: tiny
traffic:
  arrival: {process: poisson, rate: 2rps}
  input_tokens: {fixed: 200}
  output_tokens: {fixed: 20}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
bench:
  duration: 10s
  warmup: 0s
  seed: 3
)";

constexpr const char* kProfile = R"({"schema": "infereng.profile/1",
 "provenance": {"target": "http://127.0.0.1:8000", "engine": "test", "model": "m"},
 "measurements": [{"kind": "decode_batch", "new_tokens": 1, "batch": 1, "context_tokens": 100, "seconds": 0.05}],
 "table": {"tokens": [[1, 0.05], [8, 0.06], [1024, 0.5]], "context": [[0, 0], [4096, 0.01]], "front_end_s": 0.01}})";

class CmdProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("infereng_cmd_profile_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(CmdProfileTest, SimulateWithAProfileUsesTheMeasuredTable) {
  const std::string card = Write("c.yaml", kCard), prof = Write("p.json", kProfile);
  auto roof = testing::RunCli({"simulate", "--card", card, "--json"});
  auto meas = testing::RunCli({"simulate", "--card", card, "--profile", prof, "--json"});
  ASSERT_EQ(roof.rc, 0) << roof.err;
  ASSERT_EQ(meas.rc, 0) << meas.err;
  const auto a = nlohmann::json::parse(roof.out), b = nlohmann::json::parse(meas.out);
  EXPECT_THAT(b["twin"]["description"].get<std::string>(), HasSubstr("measured profile " + prof));
  // 50 ms decode steps instead of the roofline's few ms.
  EXPECT_GT(b["tpot_ms"]["p50"].get<double>(), 45.0);
  EXPECT_LT(a["tpot_ms"]["p50"].get<double>(), 20.0);
}

// Session 18 (llama.cpp b11669 on CPU): the profile measured a front end of 0 (a one-word
// TTFT no longer than its step), and the twin put vLLM's default 30 + 5 ms in its place:
// TTFT P50 +25% at light load. A measured front end is used as measured, 0 included; only
// a profile with no front-end point falls back to the engine default.
TEST_F(CmdProfileTest, AFrontEndMeasuredAsZeroIsNotReplacedByTheDefault) {
  const std::string card = Write("c.yaml", kCard);
  nlohmann::json j = nlohmann::json::parse(kProfile);
  j["table"]["front_end_s"] = 0;
  const std::string none = Write("none.json", j.dump());
  j["measurements"].push_back(nlohmann::json::object(
      {{"kind", "front_end"}, {"new_tokens", 8}, {"batch", 1}, {"context_tokens", 0}, {"seconds", 0.06}}));
  const std::string zero = Write("zero.json", j.dump());
  auto a = testing::RunCli({"simulate", "--card", card, "--profile", zero, "--json", "--no-history"});
  auto b = testing::RunCli({"simulate", "--card", card, "--profile", none, "--json", "--no-history"});
  ASSERT_EQ(a.rc, 0) << a.err;
  ASSERT_EQ(b.rc, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_FALSE(ja["twin"].contains("front_end"));  // none at all: the twin writes no front_end
  ASSERT_TRUE(jb["twin"].contains("front_end"));
  EXPECT_GT(jb["twin"]["front_end"]["preprocess_ms"].get<double>(), 0.0);  // not measured: the default
  EXPECT_LT(ja["ttft_ms"]["p50"].get<double>(), jb["ttft_ms"]["p50"].get<double>() - 20);
}

TEST_F(CmdProfileTest, BadProfileIsExit2NamingPathAndField) {
  const std::string card = Write("c.yaml", kCard);
  nlohmann::json j = nlohmann::json::parse(kProfile);
  j["table"]["tokens"][1][0] = 1;  // not increasing
  const std::string bad = Write("bad.json", j.dump());
  auto r = testing::RunCli({"simulate", "--card", card, "--profile", bad});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--profile: " + bad + ": table.tokens[1]"));
  const std::string notjson = Write("nj.json", "{oops");
  r = testing::RunCli({"simulate", "--card", card, "--profile", notjson});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr(notjson + ": not valid JSON"));
  r = testing::RunCli({"simulate", "--card", card, "--profile", (dir_ / "none.json").string()});
  EXPECT_EQ(r.rc, 2);
  r = testing::RunCli({"calibrate", bad, "--card", card});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr(bad + ": table.tokens[1]"));
}

// `run --profile`: the run's twin prediction (DIR/predicted/) prices steps with the
// profile's table (50 ms decode steps, where the roofline's are a few ms), and says so; a
// bad profile is exit 2 before any load.
TEST_F(CmdProfileTest, RunWithAProfilePredictsWithTheMeasuredTable) {
  const std::string card = Write("c.yaml", kCard), prof = Write("p.json", kProfile);
  const std::string out = (dir_ / "run").string();
  // 4 s: a 1 s window can hold no arrival of this Poisson(2 rps) schedule, or none that ends.
  auto r = testing::RunCli({"run", card, "--profile", prof, "--duration", "4s", "--out", out, "--quiet"});
  ASSERT_NE(r.rc, 2) << r.err;
  std::ifstream f(out + "/predicted/summary.json");
  ASSERT_TRUE(f.good()) << r.err;
  const auto p = nlohmann::json::parse(f);
  EXPECT_EQ(p["prediction"]["cost_model"], "measured profile " + prof);
  EXPECT_THAT(p["twin"]["description"].get<std::string>(), HasSubstr("measured profile " + prof));
  EXPECT_GT(p["tpot_ms"]["p50"].get<double>(), 45.0);

  nlohmann::json j = nlohmann::json::parse(kProfile);
  j["table"]["tokens"][1][0] = 1;  // not increasing
  const std::string bad = Write("bad.json", j.dump());
  r = testing::RunCli({"run", card, "--profile", bad, "--duration", "1s", "--out", (dir_ / "bad").string(), "--quiet"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--profile: " + bad + ": table.tokens[1]"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "bad" / "summary.json"));
}

TEST_F(CmdProfileTest, CapacityWithAProfileKeepsTheCardsDeployment) {
  const std::string card = Write("c.yaml", kCard), prof = Write("p.json", kProfile);
  auto r = testing::RunCli({"capacity", "--card", card, "--profile", prof, "--accelerators", "l40s"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--profile: a profile measured one deployment"));
  r = testing::RunCli({"capacity", "--card", card, "--profile", (dir_ / "none.json").string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--profile: "));
  r = testing::RunCli({"capacity", "--card", card, "--profile", prof, "--duration", "20s", "--max-replicas", "4", "--json"});
  EXPECT_NE(r.rc, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("h100-sxm"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("l40s")));
}

TEST_F(CmdProfileTest, SweepWithAProfileIsForTheTwinOnly) {
  const std::string card = Write("c.yaml", kCard), prof = Write("p.json", kProfile);
  auto r = testing::RunCli({"sweep", card, "--profile", prof, "--out", (dir_ / "sw").string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("not to the embedded engine"));
  r = testing::RunCli({"sweep", card, "--simulate", "--profile", (dir_ / "none.json").string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--profile: "));
}

TEST_F(CmdProfileTest, CalibrateAProfileWritesSetLinesAndSaysWhatIsNotIdentified) {
  const std::string card = Write("c.yaml", kCard), prof = Write("p.json", kProfile);
  const std::string out = (dir_ / "cal.json").string();
  auto r = testing::RunCli({"calibrate", prof, "--card", card, "--out", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cost.eff_flops"));
  EXPECT_THAT(r.out, HasSubstr("not identified"));
  EXPECT_THAT(r.out, HasSubstr("--set lines:"));
  // The calibrated profile is itself usable with --profile.
  auto s = testing::RunCli({"simulate", "--card", card, "--profile", out});
  EXPECT_EQ(s.rc, 0) << s.err;
}

TEST_F(CmdProfileTest, CalibrateReadsARunDirectorysRequests) {
  const std::string card = Write("c.yaml", kCard);
  std::filesystem::create_directories(dir_ / "run");
  auto sim = testing::RunCli({"simulate", "--card", card, "--records", (dir_ / "run" / "requests.jsonl").string()});
  ASSERT_EQ(sim.rc, 0) << sim.err;
  auto r = testing::RunCli({"calibrate", (dir_ / "run").string(), "--card", card, "--out", (dir_ / "cal.json").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cost.eff_bandwidth"));
  r = testing::RunCli({"calibrate", dir_.string(), "--card", card});  // no requests.jsonl here
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("no requests.jsonl"));
}

TEST_F(CmdProfileTest, ProfileBadInputAndUnreachableTarget) {
  auto r = testing::RunCli({"profile", "--target", "http://127.0.0.1:1", "--budget", "soon"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--budget"));
  r = testing::RunCli({"profile", "--target", "http://127.0.0.1:1", "--budget", "5s", "--out",
                       (dir_ / "p.json").string()});
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "p.json"));
}

}  // namespace
}  // namespace infereng::cli
