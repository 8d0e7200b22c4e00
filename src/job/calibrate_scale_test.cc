// FitTableScale: a "measured" run made by the twin itself with a hidden scale on the table
// (the llama.cpp slot engine, a measured grid), then the scale recovered by replaying that
// run's own schedule through the unscaled table; a run too small to fit is a note.
#include "job/calibrate_scale.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "metrics/records_io.h"
#include "metrics/summary_json.h"
#include "twin/engine_config.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

card::WorkloadCard Card(double rate, double duration_s) {
  card::WorkloadCard c;
  c.name = "scale";
  c.traffic.arrival.kind = card::ArrivalSpec::Kind::kPoisson;
  c.traffic.arrival.rate_rps = rate;
  c.traffic.input_tokens = card::Distribution::Fixed(200);
  c.traffic.output_tokens = card::Distribution::Fixed(32);
  c.bench.duration_s = duration_s;
  c.bench.warmup_s = 0;
  c.bench.seed = 11;
  return c;
}

// A llama.cpp-like engine (4 slots of 1,024 cells) priced by a grid: 4 ms + 2 us per span
// cell for a decode, 40 / 120 ms for 100 / 300 tokens at no span, twice that at 4,096.
twin::TwinSetup SlotTwin(double scale) {
  twin::TwinSettings s;
  EXPECT_TRUE(twin::ApplyTwinAssignment(s, "engine.scheduler=llamacpp").ok());
  s.engine.max_num_seqs = 4;
  s.engine.kv_cache_tokens = 4096;
  twin::MeasuredTable t;
  t.tokens = {{1}, {0.004}};
  t.context = {{0}, {0}};
  t.occupancy = {.batch_tokens = {1, 100, 300},
                 .kv_occupied = {0, 4096},
                 .seconds = {{0.004, 0.040, 0.120}, {0.004 + 4096 * 2e-6, 0.080, 0.240}}};
  std::shared_ptr<const twin::CostModel> cost = std::make_shared<twin::MeasuredCostModel>(t);
  if (scale != 1) cost = std::make_shared<ScaledCostModel>(cost, scale);
  return twin::ManualTwin(s, cost, 1.0);
}

// Runs the twin with `scale` and writes what bench would: requests.jsonl and summary.json.
std::string MeasuredRun(const std::string& name, double rate, double duration_s, double scale) {
  const fs::path dir = fs::temp_directory_path() / ("infereng_scale_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  twin::SimulationOptions o;
  o.records_path = (dir / "requests.jsonl").string();
  auto r = twin::RunSimulation(Card(rate, duration_s), SlotTwin(scale), o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(metrics::WriteSummaryFile((dir / "summary.json").string(), r->summary).ok());
  return dir.string();
}

TEST(FitTableScale, RecoversAHiddenScaleByReplayingTheRunsOwnSchedule) {
  const std::string run = MeasuredRun("hidden", 2.0, 60, 1.3);
  const std::string tmp = run + "/tmp";
  auto fit = FitTableScale(Card(2.0, 60), SlotTwin(1.0), {run}, tmp);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  ASSERT_TRUE(fit->ok);
  ASSERT_EQ(fit->runs.size(), 1u);
  EXPECT_NEAR(fit->scale, 1.3, 0.02);
  EXPECT_LT(fit->runs[0].simulated_tpot_ms_before, fit->runs[0].measured_tpot_ms);  // the unscaled table is fast
  EXPECT_NEAR(fit->runs[0].simulated_tpot_ms_after, fit->runs[0].measured_tpot_ms, 0.005 * fit->runs[0].measured_tpot_ms);
  // Two runs of the same engine agree; the fit is their geometric mean.
  const std::string run2 = MeasuredRun("hidden2", 1.0, 60, 1.3);
  auto two = FitTableScale(Card(2.0, 60), SlotTwin(1.0), {run, run2}, tmp);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_NEAR(two->scale, 1.3, 0.02);
  EXPECT_LT(two->spread, 0.03);
  fs::remove_all(run);
  fs::remove_all(run2);
}

// The fit is request by request: a summary whose TPOT P50 says something else (here twice
// the requests' own) does not move it, since what is matched is each replayed request's
// TPOT against the same request's. Fitting the P50 would read ~2.6.
TEST(FitTableScale, FitsTheRequestsNotTheSummaryP50) {
  const std::string run = MeasuredRun("paired", 2.0, 60, 1.3);
  nlohmann::json summary;
  std::ifstream(run + "/summary.json") >> summary;
  summary["tpot_ms"]["p50"] = 2 * summary["tpot_ms"]["p50"].get<double>();
  std::ofstream(run + "/summary.json") << summary.dump();
  auto fit = FitTableScale(Card(2.0, 60), SlotTwin(1.0), {run}, run + "/tmp");
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  ASSERT_TRUE(fit->ok);
  EXPECT_NEAR(fit->scale, 1.3, 0.02);
  fs::remove_all(run);
}

TEST(FitTableScale, ARunTooSmallOrWithoutTpotIsSkippedWithANote) {
  const std::string run = MeasuredRun("tiny", 0.1, 10, 1.0);  // a request or two
  auto fit = FitTableScale(Card(0.1, 10), SlotTwin(1.0), {run}, run + "/tmp");
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_FALSE(fit->ok);
  ASSERT_EQ(fit->notes.size(), 1u);
  EXPECT_NE(fit->notes[0].find("skipped"), std::string::npos) << fit->notes[0];
  // No requests.jsonl at all: an error naming the file.
  auto none = FitTableScale(Card(0.1, 10), SlotTwin(1.0), {run + "/absent"}, run + "/tmp");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("requests.jsonl"), std::string::npos) << none.status().ToString();
  fs::remove_all(run);
}

}  // namespace
}  // namespace infereng::job
