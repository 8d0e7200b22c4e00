// Bootstrap intervals on synthetic samples: a known shift is detected and lies inside the
// interval, identical distributions are not told apart, the cost bound keeps the interval's
// width, and the two-proportion interval matches Newcombe's published example.
#include "metrics/bootstrap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace infereng::metrics {
namespace {

// Log-normal-ish latencies (ms), deterministic.
std::vector<double> Latencies(int n, double median_ms, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> z(0, 0.5);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = median_ms * std::exp(z(rng));
  return v;
}

TEST(BootstrapTest, KnownShiftIsDetectedAndCoveredByTheInterval) {
  const auto a = UnitSample::OnePerUnit(Latencies(2000, 100, 1));
  const auto b = UnitSample::OnePerUnit(Latencies(2000, 80, 2));  // 20% faster
  for (double p : {50.0, 90.0, 99.0}) {
    DeltaCi d = BootstrapDifference(a, b, Statistic::Percentile(p), {});
    ASSERT_TRUE(d.defined);
    EXPECT_LT(d.high, 0) << "p" << p << ": [" << d.low << ", " << d.high << "]";
    ASSERT_TRUE(d.rel_low && d.rel_high);
    EXPECT_LE(*d.rel_low, -0.2 + 0.02) << p;  // the true -20% lies (about) inside
    EXPECT_GE(*d.rel_high, -0.2 - 0.02) << p;
    EXPECT_TRUE(d.ExcludesZero());
  }
  DeltaCi mean = BootstrapDifference(a, b, Statistic::Mean(), {});
  EXPECT_LT(mean.high, 0);
}

TEST(BootstrapTest, IdenticalDistributionsAreNotToldApart) {
  // Two draws of the same distribution (replicates): no interval of the usual set excludes 0.
  const auto a = UnitSample::OnePerUnit(Latencies(1000, 100, 11));
  const auto b = UnitSample::OnePerUnit(Latencies(1000, 100, 12));
  for (double p : {50.0, 90.0, 95.0}) {
    DeltaCi d = BootstrapDifference(a, b, Statistic::Percentile(p), {});
    EXPECT_FALSE(d.ExcludesZero()) << "p" << p << ": [" << d.low << ", " << d.high << "]";
    EXPECT_TRUE(RequestsToDetect(d).has_value());
    EXPECT_GT(*RequestsToDetect(d), 1000) << p;  // more than we have, or it would be detected
  }
  // The same sample on both sides: delta 0, an interval around it, nothing to detect.
  DeltaCi same = BootstrapDifference(a, a, Statistic::Percentile(99), {});
  EXPECT_EQ(same.delta, 0);
  EXPECT_LE(same.low, 0);
  EXPECT_GE(same.high, 0);
  EXPECT_FALSE(RequestsToDetect(same).has_value());
}

TEST(BootstrapTest, SameSeedSameInterval) {
  const auto a = UnitSample::OnePerUnit(Latencies(500, 100, 3));
  const auto b = UnitSample::OnePerUnit(Latencies(500, 90, 4));
  DeltaCi x = BootstrapDifference(a, b, Statistic::Percentile(90), {});
  DeltaCi y = BootstrapDifference(a, b, Statistic::Percentile(90), {});
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  BootstrapOptions other;
  other.seed = 7;
  DeltaCi z = BootstrapDifference(a, b, Statistic::Percentile(90), other);
  EXPECT_NE(x.low, z.low);
}

TEST(BootstrapTest, EstimatesMatchTheExactPercentileRule) {
  const std::vector<double> v = {1, 2, 3, 4, 10};
  EXPECT_DOUBLE_EQ(Evaluate(v, Statistic::Percentile(50)), 3);
  EXPECT_DOUBLE_EQ(Evaluate(v, Statistic::Percentile(90)), 4 + 0.6 * 6);  // numpy linear
  EXPECT_DOUBLE_EQ(Evaluate(v, Statistic::Mean()), 4);
  // Several statistics of one draw agree with each evaluated alone (the selection chain).
  const auto s = UnitSample::OnePerUnit(Latencies(300, 50, 5));
  const Statistic all[] = {Statistic::Percentile(99), Statistic::Mean(), Statistic::Percentile(50),
                           Statistic::Percentile(90), Statistic::Percentile(90)};
  BootstrapOptions o;
  o.resamples = 50;
  std::vector<Replicates> together = Bootstrap(s, all, o, 9);
  for (std::size_t k = 0; k < std::size(all); ++k) {
    const Statistic one[] = {all[k]};
    std::vector<Replicates> alone = Bootstrap(s, one, o, 9);
    EXPECT_EQ(together[k].estimate, alone[0].estimate);
    ASSERT_EQ(together[k].deviations.size(), alone[0].deviations.size());
    for (std::size_t i = 0; i < alone[0].deviations.size(); ++i) {
      EXPECT_DOUBLE_EQ(together[k].deviations[i], alone[0].deviations[i]) << k << " " << i;
    }
  }
}

TEST(BootstrapTest, RequestsAreResampledWithAllTheirValues) {
  // 100 requests of 10 identical gaps each (request i's gaps are all 10 + i % 20 ms): the
  // mean gap varies as 100 requests do, not as 1000 independent gaps, so the clustered
  // interval is about sqrt(10) times as wide as the same values drawn one by one.
  UnitSample clustered, b;
  std::vector<double> flat;
  for (int i = 0; i < 100; ++i) {
    std::vector<double> g(10, 10.0 + i % 20);
    clustered.AddUnit(g);
    b.AddUnit(g);
    flat.insert(flat.end(), g.begin(), g.end());
  }
  b.AddUnit({});  // a request without gaps adds nothing
  EXPECT_EQ(b.units(), 100);
  EXPECT_EQ(b.values(), 1000);
  BootstrapOptions o;
  o.block = 1;
  const UnitSample independent = UnitSample::OnePerUnit(flat);
  DeltaCi wide = BootstrapDifference(clustered, b, Statistic::Mean(), o);
  DeltaCi narrow = BootstrapDifference(independent, independent, Statistic::Mean(), o);
  EXPECT_GT(wide.high - wide.low, 2 * (narrow.high - narrow.low));
}

TEST(BootstrapTest, LargeRunsStayBoundedAndKeepTheirWidth) {
  // 100k requests: each replicate draws at most max_values requests (m-out-of-n), and the
  // scaled interval keeps the full sample's width: a 10k-request run's interval (drawn
  // whole) is ~sqrt(10) times wider.
  const auto a = UnitSample::OnePerUnit(Latencies(100000, 100, 21));
  const auto b = UnitSample::OnePerUnit(Latencies(100000, 101, 22));
  const Statistic p99[] = {Statistic::Percentile(99)};
  BootstrapOptions o;
  o.resamples = 300;  // enough to compare widths; keeps the test cheap
  std::vector<Replicates> ra = Bootstrap(a, p99, o, 0), rb = Bootstrap(b, p99, o, 1);
  EXPECT_EQ(ra[0].units, 100000);
  EXPECT_EQ(ra[0].drawn, o.max_values);
  DeltaCi big = CompareReplicates(ra[0], rb[0], o.confidence);
  const auto a10 = UnitSample::OnePerUnit(Latencies(10000, 100, 23));
  const auto b10 = UnitSample::OnePerUnit(Latencies(10000, 101, 24));
  DeltaCi small = BootstrapDifference(a10, b10, Statistic::Percentile(99), o);
  const double ratio = (small.high - small.low) / (big.high - big.low);
  EXPECT_GT(ratio, std::sqrt(10.0) * 0.7);
  EXPECT_LT(ratio, std::sqrt(10.0) * 1.4);
  // Clustered values: the draw is bounded by values, not requests.
  UnitSample itl;
  for (int i = 0; i < 5000; ++i) itl.AddUnit(std::vector<double>(100, 10.0 + i % 7));
  std::vector<Replicates> ri = Bootstrap(itl, p99, o, 2);
  EXPECT_EQ(ri[0].drawn, o.min_units);  // 10000 values / 100 per request = 100, floored at min_units
}

TEST(BootstrapTest, EmptySampleGivesNoInterval) {
  const auto a = UnitSample::OnePerUnit(Latencies(10, 100, 1));
  UnitSample empty;
  DeltaCi d = BootstrapDifference(a, empty, Statistic::Percentile(50), {});
  EXPECT_FALSE(d.defined);
  EXPECT_FALSE(d.ExcludesZero());
  EXPECT_FALSE(RequestsToDetect(d).has_value());
}

TEST(TwoProportionTest, MatchesNewcombesExample) {
  // Newcombe (1998), Table II example (h): 56/70 vs 48/80 -> 0.2 [0.0524, 0.3339].
  DeltaCi d = TwoProportionDelta(48, 80, 56, 70);
  EXPECT_NEAR(d.delta, 0.2, 1e-12);
  EXPECT_NEAR(d.low, 0.0524, 5e-4);
  EXPECT_NEAR(d.high, 0.3339, 5e-4);
  // No events on either side: the interval still has width and contains 0.
  DeltaCi zero = TwoProportionDelta(0, 100, 0, 100);
  EXPECT_TRUE(zero.defined);
  EXPECT_LT(zero.low, 0);
  EXPECT_GT(zero.high, 0);
  EXPECT_FALSE(zero.ExcludesZero());
  // 0 of 1000 vs 50 of 1000 errors: detected.
  EXPECT_TRUE(TwoProportionDelta(0, 1000, 50, 1000).ExcludesZero());
  EXPECT_FALSE(TwoProportionDelta(0, 0, 1, 10).defined);
}

}  // namespace
}  // namespace infereng::metrics
