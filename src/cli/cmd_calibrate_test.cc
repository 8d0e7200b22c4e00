// `infereng calibrate` end to end, in-process, on a llama.cpp-like profile: the run of real
// traffic (here: the twin's own, with the table's times x1.25) sets the measured table's
// level, the calibrated profile keeps the profile's KV capacity, a bad input is exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "job/profile_fit.h"
#include "testing/cli_runner.h"
#include "twin/profile_file.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kCard = R"(name: slots
traffic:
  arrival: {process: poisson, rate: 2rps}
  input_tokens: {fixed: 200}
  output_tokens: {fixed: 32}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
bench:
  duration: 40s
  warmup: 0s
  seed: 5
)";

// A slot server's profile: a decode point and an occupancy grid (columns of 1, 100 and 300
// tokens over spans 256 .. 3,072), every time x `scale`; 4 slots of 1,024 cells.
twin::ProfileFile SlotProfile(double scale) {
  twin::ProfileFile p;
  p.provenance.target = "http://127.0.0.1:1";
  p.kv_capacity_tokens = 4096;
  p.points.push_back({.kind = "decode_context", .new_tokens = 1, .context_tokens = 40, .batch = 1,
                      .seconds = scale * 0.004, .repeats = 3});
  for (int64_t span : {256, 1024, 2048, 3072}) {
    const double extra = static_cast<double>(span) * 2e-6;
    for (auto [n, base] : {std::pair<int64_t, double>{1, 0.004}, {100, 0.040}, {300, 0.120}}) {
      p.points.push_back({.kind = "occupancy", .new_tokens = n, .batch = 1,
                          .seconds = scale * (base + extra * (n == 1 ? 1.0 : static_cast<double>(n) / 10)),
                          .repeats = 3, .kv_occupied_tokens = span});
    }
  }
  return p;
}

TEST(CmdCalibrate, ARunSetsTheMeasuredTablesLevelAndTheKvCapacityIsKept) {
  const fs::path dir = fs::temp_directory_path() / ("infereng_cmd_cal_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "run");
  const std::string card = (dir / "card.yaml").string();
  std::ofstream(card) << kCard;
  // The profile as measured, and the "engine" the run saw: the same table x1.25.
  twin::ProfileFile measured = SlotProfile(1.0), slower = SlotProfile(1.25);
  ASSERT_TRUE(job::FitProfile(&measured).ok());
  ASSERT_TRUE(job::FitProfile(&slower).ok());
  ASSERT_TRUE(twin::SaveProfile(measured, (dir / "profile.json").string()).ok());
  ASSERT_TRUE(twin::SaveProfile(slower, (dir / "engine.json").string()).ok());
  const std::vector<std::string> slots = {"--set", "engine.scheduler=llamacpp", "--set", "engine.slots=4"};
  std::vector<std::string> sim = {"simulate", "--card", card, "--profile", (dir / "engine.json").string(), "--json",
                                  "--no-history", "--records", (dir / "run" / "requests.jsonl").string()};
  sim.insert(sim.end(), slots.begin(), slots.end());
  testing::CliRun run = testing::RunCli(sim);
  ASSERT_LE(run.rc, 1) << run.err;
  std::ofstream(dir / "run" / "summary.json") << run.out;

  std::vector<std::string> cal = {"calibrate", (dir / "profile.json").string(), (dir / "run").string(), "--card", card,
                                  "--out", (dir / "calibrated.json").string()};
  cal.insert(cal.end(), slots.begin(), slots.end());
  testing::CliRun c = testing::RunCli(cal);
  ASSERT_EQ(c.rc, 0) << c.err << c.out;
  EXPECT_THAT(c.out, HasSubstr("the measured table's step times x 1.2"));
  auto out = twin::LoadProfile((dir / "calibrated.json").string());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->kv_capacity_tokens.has_value());
  EXPECT_EQ(*out->kv_capacity_tokens, 4096);
  bool found = false;
  for (const twin::FittedParam& f : out->calibrated) {
    if (f.key != "table_scale") continue;
    found = true;
    // Within 5%: the replay of the run's records reads 9.41 ms at scale 1 where the run, at
    // 1.25, implies 9.73 (the records hold the requests the window finished, not the ones
    // still running at its end). Before session 18 the run's own points also entered the
    // table, which happened to land nearer 1.25.
    EXPECT_NEAR(f.value, 1.25, 0.05) << c.out;
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(out->table.occupancy.empty());

  // A run directory without requests.jsonl: exit 2 naming it.
  fs::create_directories(dir / "empty");
  std::vector<std::string> bad = {"calibrate", (dir / "profile.json").string(), (dir / "empty").string(), "--card", card,
                                  "--out", (dir / "bad.json").string()};
  testing::CliRun b = testing::RunCli(bad);
  EXPECT_EQ(b.rc, 2);
  EXPECT_THAT(b.err, HasSubstr("requests.jsonl"));
  fs::remove_all(dir);
}

// A profile with no grid (a per-slot cache: the curves price every step) and a run of the
// engine at 1.25x those steps: the table stays the profile's shape, its level from replaying
// the run (session 18: folding the run's TTFTs and decode steps into the curves priced the
// queueing and the other requests' prefills twice, TPOT +87% at light load on llama.cpp).
TEST(CmdCalibrate, ARunSetsTheLevelOfACurvesOnlyTableWithoutEnteringIt) {
  const fs::path dir = fs::temp_directory_path() / ("infereng_cmd_cal_curves_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "run");
  const std::string card = (dir / "card.yaml").string();
  std::ofstream(card) << kCard;
  auto curves = [](double scale) {
    twin::ProfileFile p;
    p.provenance.target = "http://127.0.0.1:1";
    p.kv_capacity_tokens = 65536;
    p.points = {{"decode_context", 1, 40, 1, scale * 0.004, 5},      {"decode_context", 1, 1000, 1, scale * 0.006, 5},
                {"decode_batch", 4, 160, 4, scale * 0.007, 5},       {"decode_batch", 8, 320, 8, scale * 0.012, 5},
                {"front_end", 40, 0, 1, scale * 0.004 + 0.010, 5},   {"prefill", 500, 0, 1, scale * 0.060 + 0.010, 5}};
    EXPECT_TRUE(job::FitProfile(&p).ok());
    return p;
  };
  const twin::ProfileFile measured = curves(1.0), slower = curves(1.25);
  ASSERT_TRUE(twin::SaveProfile(measured, (dir / "profile.json").string()).ok());
  ASSERT_TRUE(twin::SaveProfile(slower, (dir / "engine.json").string()).ok());
  testing::CliRun run = testing::RunCli({"simulate", "--card", card, "--profile", (dir / "engine.json").string(),
                                         "--json", "--no-history", "--records", (dir / "run" / "requests.jsonl").string()});
  ASSERT_LE(run.rc, 1) << run.err;
  std::ofstream(dir / "run" / "summary.json") << run.out;
  testing::CliRun c = testing::RunCli({"calibrate", (dir / "profile.json").string(), (dir / "run").string(), "--card",
                                       card, "--out", (dir / "calibrated.json").string()});
  ASSERT_EQ(c.rc, 0) << c.err << c.out;
  auto out = twin::LoadProfile((dir / "calibrated.json").string());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  double scale = 0;
  for (const twin::FittedParam& f : out->calibrated) {
    if (f.key == "table_scale") scale = f.value;
  }
  EXPECT_NEAR(scale, 1.25, 0.05) << c.out;
  // The curves are the profile's, scaled: no run point entered them.
  ASSERT_EQ(out->table.tokens.x, measured.table.tokens.x);
  for (std::size_t i = 0; i < out->table.tokens.y.size(); ++i) {
    EXPECT_NEAR(out->table.tokens.y[i], scale * measured.table.tokens.y[i], 1e-12) << i;
  }
  EXPECT_TRUE(out->table.occupancy.empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infereng::cli
