#include "job/prediction.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/load_plan.h"
#include "metrics/summary_json.h"

namespace infereng::job {
namespace {

using namespace infereng::bench;  // the bench job's options and results (bench/bench_options.h)

namespace fs = std::filesystem;

card::WorkloadCard TwinCard() {
  card::WorkloadCard c;
  c.name = "predict";
  c.model.architecture = "llama-3.1-8b";
  c.deployment.accelerator = "h100-sxm";
  c.traffic.arrival.rate_rps = 5;
  c.fields["traffic.arrival.rate"] = {};
  c.traffic.input_tokens.value = 200;
  c.traffic.output_tokens.value = 20;
  c.bench.duration_s = 10;
  c.bench.warmup_s = 1;
  return c;
}

nlohmann::json Predict(const BenchOptions& o, const std::string& name, const metrics::Summary* measured = nullptr) {
  const std::string dir = (fs::temp_directory_path() / ("infereng-predict-" + name)).string();
  fs::remove_all(dir);
  Status s = WriteTwinPrediction(o, 1.0, dir, measured);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::ifstream f(dir + "/predicted/summary.json");
  nlohmann::json j = f ? nlohmann::json::parse(f) : nlohmann::json::object();
  fs::remove_all(dir);
  return j;
}

// The prediction applies the run's load: --concurrency alone is a closed loop (it used to
// be skipped), --rate with --concurrency a capped open loop, and ResolveLoadPlan agrees.
TEST(PredictionTest, ThePredictionRunsTheMeasuredLoad) {
  BenchOptions o;
  o.card = TwinCard();
  o.concurrency = 3;
  auto plan = ResolveLoadPlan(o);
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(plan->closed_loop);
  nlohmann::json j = Predict(o, "closed");
  EXPECT_EQ(j["twin"]["load"]["mode"], "closed_loop");
  EXPECT_EQ(j["twin"]["load"]["concurrency"], 3);
  EXPECT_EQ(j["open_loop"], false);

  o.rate_rps = 50;
  plan = ResolveLoadPlan(o);
  ASSERT_FALSE(plan->closed_loop);
  j = Predict(o, "capped");
  EXPECT_EQ(j["twin"]["load"]["mode"], "open_loop_capped");
  EXPECT_EQ(j["twin"]["load"]["rate_rps"], 50.0);
  EXPECT_EQ(j["open_loop"], true);

  o.concurrency.reset();
  j = Predict(o, "open");
  EXPECT_EQ(j["twin"]["load"]["mode"], "open_loop");
  EXPECT_EQ(j["twin"]["load"]["concurrency"], nullptr);
}

// run --target used to skip the prediction without a word: every skip names its reason.
TEST(PredictionTest, SkippedPredictionsSayWhy) {
  const std::string dir = (fs::temp_directory_path() / "infereng-predict-skip").string();
  BenchOptions o;
  o.card = TwinCard();
  o.card.model.architecture.clear();
  Status s = WriteTwinPrediction(o, 1.0, dir);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("model.architecture"), std::string::npos) << s.message();
  o.card = TwinCard();
  o.card.deployment.accelerator.clear();
  s = WriteTwinPrediction(o, 1.0, dir);
  EXPECT_NE(s.message().find("deployment.accelerator"), std::string::npos) << s.message();
  o.card = TwinCard();
  o.requests = 10;
  s = WriteTwinPrediction(o, 1.0, dir);
  EXPECT_NE(s.message().find("--requests"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir));
}

// fp16 and bf16 cost the same, but the twin must not relabel the card's fp16 as bf16.
TEST(PredictionTest, TheTwinKeepsTheCardsFp16Label) {
  BenchOptions o;
  o.card = TwinCard();
  o.card.model.precision = "fp16";
  EXPECT_NE(Predict(o, "fp16").dump().find("tp 1, fp16)"), std::string::npos);
  o.card.model.precision = "bf16";
  EXPECT_NE(Predict(o, "bf16").dump().find("tp 1, bf16)"), std::string::npos);
}

// An interrupted run's prediction covers the measured window only (it used to simulate the
// full planned length and overlay it on the partial measurement).
TEST(PredictionTest, AnInterruptedRunIsPredictedOverItsMeasuredWindowOnly) {
  BenchOptions o;
  o.card = TwinCard();  // warm-up 1 s, window 10 s
  nlohmann::json full = Predict(o, "full");
  EXPECT_EQ(full["prediction"]["cut_to_measured"], false);
  EXPECT_GT(full["window"]["end_s"].get<double>(), 9);

  metrics::Summary measured;
  measured.partial = true;
  measured.window_start_s = 1;
  measured.window_end_s = 4;  // interrupted 4 s in
  nlohmann::json cut = Predict(o, "cut", &measured);
  EXPECT_EQ(cut["prediction"]["cut_to_measured"], true);
  EXPECT_DOUBLE_EQ(cut["prediction"]["arrivals_s"].get<double>(), 4);
  EXPECT_LE(cut["window"]["end_s"].get<double>(), 4);
  EXPECT_GT(cut["window"]["end_s"].get<double>(), 3);
  EXPECT_LT(cut["counts"]["in_window"].get<int>(), full["counts"]["in_window"].get<int>() / 2);

  // Interrupted during the warm-up: nothing measured, nothing to predict (and it says so).
  measured.window_end_s = 0.5;
  const std::string dir = (fs::temp_directory_path() / "infereng-predict-none").string();
  Status s = WriteTwinPrediction(o, 1.0, dir, &measured);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("interrupted"), std::string::npos) << s.ToString();
  fs::remove_all(dir);
}


// Beside a measurement the prediction carries its fidelity: every row's error against the
// measured value, and the twin's own spread over three seeds. Measuring the twin against
// itself (its own seed's summary as "measured") gives zero error inside the band.
TEST(PredictionTest, FidelityComparesWithTheMeasurementAndShowsTheSeedBand) {
  BenchOptions o;
  o.card = TwinCard();
  nlohmann::json alone = Predict(o, "alone");
  EXPECT_FALSE(alone.contains("fidelity")) << "no measurement, no fidelity";
  auto self = metrics::SummaryFromJson(alone);
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  nlohmann::json j = Predict(o, "self", &*self);
  ASSERT_TRUE(j.contains("fidelity"));
  const nlohmann::json& f = j["fidelity"];
  EXPECT_EQ(f["seeds"], 3);
  ASSERT_GE(f["rows"].size(), 12u);  // 4 latencies x 3 percentiles (+ rates)
  for (const nlohmann::json& row : f["rows"]) {
    EXPECT_NEAR(row["error"].get<double>(), 0, 1e-9) << row.dump();
    EXPECT_TRUE(row["within_band"].get<bool>()) << row.dump();
    EXPECT_LE(row["band"][0].get<double>(), row["band"][1].get<double>());
  }
  EXPECT_DOUBLE_EQ(f["median_abs_error"].get<double>(), 0);
}

}  // namespace
}  // namespace infereng::job
