// Repeated trials: bounded confidence intervals, the verdict over every trial, the table.
#include "metrics/trials.h"

#include <gtest/gtest.h>

#include <cmath>

#include "metrics/trials_table.h"

namespace infereng::metrics {
namespace {

Summary Trial(double goodput, double attainment, bool slo_pass) {
  Summary s;
  s.goodput_rps = goodput;
  s.requests_per_s = goodput;
  s.slo_attainment = attainment;
  s.slo_pass = slo_pass;
  s.ttft_incl_queue_ms = stats::Summarize({10.0, 20.0});
  return s;
}

// The unbounded t interval of {0, 0, 10} goes to -7.7 (the "goodput CI low -7.73")
// and of attainment {1, 1, 0.8} above 1: both are cut to the possible range and say so.
TEST(Trials, ConfidenceIntervalsStayInsideThePossibleRange) {
  TrialStats t = AggregateTrials({Trial(0, 1, true), Trial(0, 1, true), Trial(10, 0.8, false)});
  const TrialCi& g = t.scalars.at("goodput_rps");
  EXPECT_TRUE(g.defined);
  EXPECT_DOUBLE_EQ(g.low, 0);
  EXPECT_GT(g.high, 10);
  EXPECT_TRUE(g.clamped);
  EXPECT_NEAR(g.half_width, 4.3027 * 5.7735 / std::sqrt(3.0), 1e-3);  // the t half-width is kept
  const TrialCi& a = t.scalars.at("slo_attainment");
  EXPECT_DOUBLE_EQ(a.high, 1);
  EXPECT_GT(a.low, 0);
  EXPECT_TRUE(a.clamped);
  const TrialCi& r = t.scalars.at("requests_per_s");
  EXPECT_GE(r.low, 0);
  nlohmann::json j = TrialStatsToJson(t);
  EXPECT_DOUBLE_EQ(j["scalars"]["goodput_rps"]["ci_low"].get<double>(), 0);
  EXPECT_EQ(j["scalars"]["goodput_rps"]["clamped"], true);
  EXPECT_LE(j["scalars"]["slo_attainment"]["ci_high"].get<double>(), 1);
}

TEST(Trials, FewerThanThreeTrialsHaveNoInterval) {
  TrialStats t = AggregateTrials({Trial(5, 1, true), Trial(6, 1, true)});
  EXPECT_FALSE(t.scalars.at("goodput_rps").defined);
  EXPECT_DOUBLE_EQ(t.scalars.at("goodput_rps").mean, 5.5);
  nlohmann::json j = TrialStatsToJson(t);
  EXPECT_TRUE(j["scalars"]["goodput_rps"]["ci_low"].is_null());
  EXPECT_TRUE(j["scalars"]["goodput_rps"]["half_width"].is_null());
}

// The verdict used to be trial 1's: a failing later trial now fails the run.
TEST(Trials, TheRunPassesOnlyWhenEveryTrialPasses) {
  const TrialGate gate{.has_slos = true};
  std::vector<Summary> trials = {Trial(5, 1, true), Trial(2, 0.5, false), Trial(5, 1, true)};
  TrialsVerdict v = JudgeTrials(trials, gate);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.failed_trials, std::vector<int>{2});
  EXPECT_TRUE(JudgeTrials({Trial(5, 1, true), Trial(5, 1, true)}, gate).pass);
  EXPECT_TRUE(JudgeTrials(trials, TrialGate{.has_slos = false}).pass);  // no SLOs: nothing to miss
  // The quality floor counts per trial too.
  Summary low_quality = Trial(5, 1, true);
  low_quality.counts.quality_checked = 10;
  low_quality.counts.quality_passed = 5;
  EXPECT_FALSE(TrialPasses(low_quality, TrialGate{.has_slos = true, .quality_threshold = 0.9}));
  EXPECT_TRUE(TrialPasses(low_quality, TrialGate{.has_slos = true, .quality_threshold = 0.5}));  // 50% meets 0.5
  nlohmann::json j = TrialsVerdictToJson(trials, gate);
  EXPECT_EQ(j["pass"], false);
  EXPECT_EQ(j["rule"], kTrialsRule);
  EXPECT_EQ(j["failed_trials"], nlohmann::json::array({2}));
  ASSERT_EQ(j["per_trial"].size(), 3u);
  EXPECT_EQ(j["per_trial"][1]["pass"], false);
}

TEST(Trials, TableHasALinePerTrialAndTheVerdictWithItsRule) {
  const TrialGate gate{.has_slos = true};
  const std::string t = FormatTrialsTable({Trial(5, 1, true), Trial(2, 0.5, false), Trial(5, 1, true)}, gate);
  EXPECT_NE(t.find("Trials (3)"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  2      FAIL"), std::string::npos) << t;
  EXPECT_NE(t.find("Verdict over 3 trials: FAIL (the run passes only when every trial passes); failed: trial 2"),
            std::string::npos)
      << t;
  EXPECT_EQ(FormatTrialsTable({Trial(5, 1, true)}, gate), "");
  const std::string two = FormatTrialsTable({Trial(5, 1, true), Trial(6, 1, true)}, gate);
  EXPECT_NE(two.find("[CI n/a]"), std::string::npos) << two;
}

// --trials aggregates the quality pass rate like the other rates: mean and CI in [0, 1],
// over the trials that checked eval items; the table prints it.
TEST(Trials, QualityPassRateIsAggregated) {
  std::vector<Summary> trials = {Trial(5, 1, true), Trial(5, 1, true), Trial(5, 1, true)};
  const int64_t passed[] = {7, 8, 10};
  for (size_t i = 0; i < trials.size(); ++i) {
    trials[i].counts.quality_checked = 10;
    trials[i].counts.quality_passed = passed[i];
  }
  const TrialStats t = AggregateTrials(trials);
  const TrialCi& q = t.scalars.at("quality_pass_rate");
  EXPECT_NEAR(q.mean, 25.0 / 30.0, 1e-12);
  EXPECT_LE(q.high, 1.0);
  EXPECT_TRUE(q.clamped);
  EXPECT_NE(FormatTrialsTable(trials, TrialGate{}).find("quality pass rate 83.3"), std::string::npos);
  EXPECT_EQ(TrialsVerdictToJson(trials, TrialGate{})["per_trial"][0]["quality_pass_rate"], 0.7);
  EXPECT_EQ(AggregateTrials({Trial(5, 1, true)}).scalars.count("quality_pass_rate"), 0u);
}

}  // namespace
}  // namespace infereng::metrics
