#include "core/rank_stats.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace infereng::stats {
namespace {

TEST(RankTest, MatchesScipyOnASmallExample) {
  // scipy.stats.mannwhitneyu(x, y, alternative="less", method="asymptotic") gives
  // U_x = 1 (pairs x > y), p = 0.01078; ours counts x < y: U = 24 of 25.
  std::vector<double> x{1, 2, 3, 4, 6}, y{5, 7, 8, 9, 10};
  RankTestResult r = MannWhitneyLess(x, y);
  EXPECT_DOUBLE_EQ(r.u, 24);
  EXPECT_DOUBLE_EQ(r.superiority, 0.96);
  EXPECT_NEAR(r.p_value, 0.01078, 1e-4);
}

TEST(RankTest, TiesAndDegenerateSamples) {
  std::vector<double> same{3, 3, 3}, empty;
  EXPECT_DOUBLE_EQ(MannWhitneyLess(same, same).p_value, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyLess(same, same).superiority, 0.5);
  EXPECT_DOUBLE_EQ(MannWhitneyLess(empty, same).p_value, 1);
}

TEST(RankTest, FalsePositiveRateStaysAtAlpha) {
  // Exchangeable samples (no effect): the share of runs below alpha is about alpha.
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(3, 0.5);
  const double alpha = 0.05;
  int rejected = 0;
  constexpr int kRuns = 2000;
  for (int run = 0; run < kRuns; ++run) {
    std::vector<double> x(20), y(20);
    for (double& v : x) v = latency(rng);
    for (double& v : y) v = latency(rng);
    if (MannWhitneyLess(x, y).p_value < alpha) ++rejected;
  }
  const double rate = static_cast<double>(rejected) / kRuns;
  EXPECT_GT(rate, 0.03);
  EXPECT_LT(rate, 0.065);
}

TEST(RankTest, PowerGrowsWithSamplesAndMatchesSimulation) {
  EXPECT_LT(MannWhitneyPower(5, 5, 0.75, 0.01), MannWhitneyPower(30, 30, 0.75, 0.01));
  EXPECT_NEAR(MannWhitneyPower(20, 20, 0.5, 0.05), 0.05, 1e-6);
  // Shift of one sd in normals: superiority Phi(1/sqrt(2)) = 0.760; simulated power at
  // n = 20, alpha 0.05 is ~0.87.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0, 1);
  int hits = 0;
  for (int run = 0; run < 1000; ++run) {
    std::vector<double> x(20), y(20);
    for (double& v : x) v = z(rng);
    for (double& v : y) v = z(rng) + 1;
    if (MannWhitneyLess(x, y).p_value < 0.05) ++hits;
  }
  EXPECT_NEAR(MannWhitneyPower(20, 20, 0.760, 0.05), hits / 1000.0, 0.06);
}

TEST(RankTest, NormalQuantileInvertsTheCdf) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-5);
  EXPECT_NEAR(NormalCdf(NormalQuantile(0.01)), 0.01, 1e-9);
}

}  // namespace
}  // namespace infereng::stats
