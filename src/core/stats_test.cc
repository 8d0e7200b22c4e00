#include "core/stats.h"

#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace infereng::stats {
namespace {

// Expected values are numpy.percentile(a, q) (default method "linear"); the first array is
// numpy's own documentation example (median of [[10, 7, 4], [3, 2, 1]] is 3.5).
TEST(Stats, PercentileMatchesNumpyLinear) {
  std::vector<double> a = {10, 7, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(PercentileInPlace(a, 50), 3.5);
  EXPECT_DOUBLE_EQ(PercentileSorted(a, 0), 1.0);
  EXPECT_DOUBLE_EQ(PercentileSorted(a, 25), 2.25);
  EXPECT_DOUBLE_EQ(PercentileSorted(a, 90), 8.5);
  EXPECT_DOUBLE_EQ(PercentileSorted(a, 95), 9.25);
  EXPECT_NEAR(PercentileSorted(a, 99), 9.85, 1e-12);
  EXPECT_NEAR(PercentileSorted(a, 99.9), 9.985, 1e-12);
  EXPECT_DOUBLE_EQ(PercentileSorted(a, 100), 10.0);

  std::vector<double> b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(PercentileInPlace(b, 90), 9.1, 1e-12);
  EXPECT_NEAR(PercentileSorted(b, 95), 9.55, 1e-12);
  EXPECT_NEAR(PercentileSorted(b, 99.9), 9.991, 1e-12);

  std::vector<double> c = {0.5, 120.25, 3.75, 88.0, 42.125, 7.0, 19.5};
  EXPECT_NEAR(PercentileInPlace(c, 25), 5.375, 1e-12);
  EXPECT_NEAR(PercentileSorted(c, 90), 100.9, 1e-12);
  EXPECT_NEAR(PercentileSorted(c, 95), 110.575, 1e-9);
  EXPECT_NEAR(PercentileSorted(c, 99), 118.315, 1e-9);
  EXPECT_NEAR(PercentileSorted(c, 99.9), 120.0565, 1e-9);
}

TEST(Stats, PercentileSelectEqualsSortedPercentile) {
  const std::vector<double> base = {0.5, 120.25, 3.75, 88.0, 42.125, 7.0, 19.5, 7.0};
  for (double p : {0.0, 12.5, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    std::vector<double> a = base, b = base;
    EXPECT_DOUBLE_EQ(PercentileSelect(a, p), PercentileInPlace(b, p)) << p;
  }
  std::vector<double> empty;
  EXPECT_DOUBLE_EQ(PercentileSelect(empty, 50), 0);
}

TEST(Stats, PercentileOfEqualsSelectWithoutReordering) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> small(0, 9);  // many ties
  std::lognormal_distribution<double> lat(1.5, 0.6);
  for (size_t n : {1, 2, 3, 7, 33, 100, 250, 1000, 3000, 3500, 20000}) {
    for (bool ties : {false, true}) {
      std::vector<double> v(n);
      for (double& x : v) x = ties ? small(rng) : lat(rng);
      const std::vector<double> before = v;
      for (double p : {0.0, 50.0, 90.0, 97.3, 99.0, 99.9, 100.0}) {
        std::vector<double> copy = v;
        EXPECT_EQ(PercentileOf(v, p), PercentileSelect(copy, p)) << n << " p" << p;
      }
      EXPECT_EQ(v, before);
    }
  }
  // Ascending and descending inputs exercise every insertion position of the tail.
  std::vector<double> up(500), down(500);
  for (size_t i = 0; i < up.size(); ++i) {
    up[i] = static_cast<double>(i);
    down[i] = static_cast<double>(up.size() - i);
  }
  for (double p : {95.0, 99.0, 99.9}) {
    std::vector<double> a = up, b = down;
    EXPECT_EQ(PercentileOf(up, p), PercentileSelect(a, p)) << p;
    EXPECT_EQ(PercentileOf(down, p), PercentileSelect(b, p)) << p;
  }
  EXPECT_EQ(PercentileOf({}, 99), 0);
}

TEST(Stats, SummarizeFillsTheStandardSet) {
  SampleStats s = Summarize({15, 20, 35, 40, 50});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.min, 15);
  EXPECT_DOUBLE_EQ(s.max, 50);
  EXPECT_DOUBLE_EQ(s.mean, 32);
  EXPECT_NEAR(s.stddev, 12.884098726725126, 1e-12);  // numpy.std (ddof=0)
  EXPECT_DOUBLE_EQ(s.p50, 35);
  EXPECT_DOUBLE_EQ(s.p90, 46);
  EXPECT_DOUBLE_EQ(s.p95, 48);
  EXPECT_NEAR(s.p99, 49.6, 1e-12);
  EXPECT_NEAR(s.p99_9, 49.96, 1e-12);
  EXPECT_DOUBLE_EQ(s.AtStandardPercentile(99.9), s.p99_9);
  EXPECT_DOUBLE_EQ(s.AtStandardPercentile(42), 0);
}

TEST(Stats, EmptyAndSingle) {
  SampleStats e = Summarize({});
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e, SampleStats{});
  SampleStats one = Summarize({7.5});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.p50, 7.5);
  EXPECT_DOUBLE_EQ(one.p99_9, 7.5);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(PercentileSorted({}, 50), 0);
}

TEST(Stats, PercentileClampsOutOfRangeP) {
  std::vector<double> a = {1, 2, 3};
  EXPECT_DOUBLE_EQ(PercentileSorted(a, -5), 1);
  EXPECT_DOUBLE_EQ(PercentileSorted(a, 150), 3);
}

TEST(Stats, StudentTTable) {
  EXPECT_NEAR(StudentT975(1), 12.7062, 1e-4);
  EXPECT_NEAR(StudentT975(4), 2.7764, 1e-4);
  EXPECT_NEAR(StudentT975(30), 2.0423, 1e-4);
  // Beyond the table: published values t(0.975, 40) = 2.0211, t(0.975, 60) = 2.0003,
  // t(0.975, 120) = 1.9799.
  EXPECT_NEAR(StudentT975(40), 2.0211, 2e-4);
  EXPECT_NEAR(StudentT975(60), 2.0003, 2e-4);
  EXPECT_NEAR(StudentT975(120), 1.9799, 2e-4);
  EXPECT_NEAR(StudentT975(1000000), 1.95996, 1e-4);
}

TEST(Stats, MeanConfidence95) {
  // x = [10, 12, 14]: mean 12, sample sd 2, t(0.975, 2) = 4.3027 -> half width
  // 4.3027 * 2 / sqrt(3) = 4.96833.
  std::vector<double> x = {10, 12, 14};
  MeanCi ci = MeanConfidence95(x);
  EXPECT_EQ(ci.n, 3);
  EXPECT_TRUE(ci.defined);
  EXPECT_DOUBLE_EQ(ci.mean, 12);
  EXPECT_DOUBLE_EQ(ci.stddev, 2);
  EXPECT_NEAR(ci.half_width, 4.96833, 1e-4);
  EXPECT_NEAR(ci.low, 12 - 4.96833, 1e-4);
  EXPECT_NEAR(ci.high, 12 + 4.96833, 1e-4);

  std::vector<double> one = {5};
  MeanCi c1 = MeanConfidence95(one);
  EXPECT_FALSE(c1.defined);
  EXPECT_DOUBLE_EQ(c1.mean, 5);
  EXPECT_DOUBLE_EQ(c1.half_width, 0);
  EXPECT_EQ(MeanConfidence95({}).n, 0);
}

}  // namespace
}  // namespace infereng::stats
