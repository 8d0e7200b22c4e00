#include "core/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.h"

namespace infereng {
namespace {

std::vector<double> LognormalSamples(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(3.0, 1.5);  // ms-like: median ~20, long tail
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

TEST(LogHistogram, BucketMappingContainsValue) {
  LogHistogram h;
  for (double v : {0.001, 0.0015, 1.0, 1.0078125, 3.14159, 250.0, 999999.0, 1e9}) {
    const int i = h.BucketIndex(v);
    EXPECT_LE(h.BucketLow(i), v * (1 + 1e-12)) << v;
    EXPECT_GT(h.BucketHigh(i), v * (1 - 1e-12)) << v;
    EXPECT_LE(std::abs(h.BucketValue(i) - v) / v, h.relative_error() + 1e-12) << v;
  }
  EXPECT_EQ(h.BucketIndex(0.0), 0);
  EXPECT_EQ(h.BucketIndex(-3.0), 0);
  EXPECT_EQ(h.BucketIndex(1e30), h.NumBuckets() - 1);
}

// The frexp formulation BucketIndex used before it read the double's bits directly; the
// two must agree on every value (a different index would change reported percentiles).
int FrexpBucketIndex(const HistogramOptions& o, int num_octaves, double value) {
  if (!(value >= o.lowest)) return 0;
  int exp = 0;
  const double m = std::frexp(value / o.lowest, &exp);
  const int octave = exp - 1;
  if (octave >= num_octaves) return 1 + num_octaves * o.sub_buckets - 1;
  int sub = static_cast<int>((m * 2 - 1) * o.sub_buckets);
  sub = std::clamp(sub, 0, o.sub_buckets - 1);
  return 1 + octave * o.sub_buckets + sub;
}

TEST(LogHistogram, BucketIndexMatchesFrexpFormulation) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> log10v(-5, 12);
  for (const HistogramOptions& o :
       {HistogramOptions{}, HistogramOptions{.lowest = 1e-3, .highest = 1e8, .sub_buckets = 16},
        HistogramOptions{.lowest = 0.7, .highest = 5e4, .sub_buckets = 100},
        HistogramOptions{.lowest = 1, .highest = 2, .sub_buckets = 1},
        HistogramOptions{.lowest = 3e-6, .highest = 1e12, .sub_buckets = 1024}}) {
    const LogHistogram h(o);
    const int octaves = (h.NumBuckets() - 1) / o.sub_buckets;
    std::vector<double> values;
    for (int i = 0; i < 20000; ++i) values.push_back(std::pow(10.0, log10v(rng)));
    for (int i = 0; i < h.NumBuckets(); ++i) {  // both sides of every bucket boundary
      const double low = h.BucketLow(i);
      values.insert(values.end(), {low, std::nextafter(low, 0.0), std::nextafter(low, 1e300)});
    }
    values.insert(values.end(), {o.lowest, o.highest, std::nextafter(o.lowest, 0.0), 0.0, -1.0, 1e300});
    for (double v : values) {
      ASSERT_EQ(h.BucketIndex(v), FrexpBucketIndex(o, octaves, v)) << v << " sub_buckets " << o.sub_buckets;
    }
  }
  // value / lowest overflowing to infinity lands in the top bucket (frexp's exponent is
  // unspecified there; the old formula indexed below the vector).
  const LogHistogram h;
  EXPECT_EQ(h.BucketIndex(1.7e308), h.NumBuckets() - 1);
  EXPECT_EQ(h.BucketIndex(std::numeric_limits<double>::infinity()), h.NumBuckets() - 1);
}

TEST(LogHistogram, AddAllEqualsAddingOneByOne) {
  std::vector<double> v = LognormalSamples(5000, 12);
  v.insert(v.begin() + 100, {std::nan(""), -2.0, 0.0, 5e9, 1e-7});
  for (bool start_empty : {true, false}) {
    LogHistogram one, all;
    if (!start_empty) {
      one.Add(7.5);
      all.Add(7.5);
    }
    for (double x : v) one.Add(x);
    all.AddAll(v);
    EXPECT_TRUE(all.SameBuckets(one));
    EXPECT_EQ(all.count(), one.count());
    EXPECT_EQ(all.sum(), one.sum());  // bit for bit: same order of additions
    EXPECT_EQ(all.min(), one.min());
    EXPECT_EQ(all.max(), one.max());
    EXPECT_EQ(all.overflow(), one.overflow());
    EXPECT_EQ(all.nan_count(), one.nan_count());
    EXPECT_EQ(all.Stats(), one.Stats());
  }
  LogHistogram h;
  h.AddAll({});
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0);
}

TEST(LogHistogram, PercentilesWithinRelativeErrorOfExact) {
  std::vector<double> v = LognormalSamples(20000, 1);
  LogHistogram h;
  for (double x : v) h.Add(x);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_LE(h.relative_error(), 0.01);
  for (double p : {1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99}) {
    const double exact = stats::PercentileSorted(sorted, p);
    EXPECT_LE(std::abs(h.Percentile(p) - exact) / exact, h.relative_error() + 1e-12) << "p" << p;
  }
  EXPECT_EQ(h.count(), 20000u);
  EXPECT_DOUBLE_EQ(h.min(), sorted.front());
  EXPECT_DOUBLE_EQ(h.max(), sorted.back());
  EXPECT_DOUBLE_EQ(h.Percentile(0), sorted.front());
  EXPECT_DOUBLE_EQ(h.Percentile(100), sorted.back());
  double sum = 0;
  for (double x : v) sum += x;
  EXPECT_NEAR(h.mean(), sum / 20000, 1e-9 * sum / 20000);
}

TEST(LogHistogram, StatsMatchStandardSet) {
  std::vector<double> v = LognormalSamples(5000, 2);
  LogHistogram h;
  for (double x : v) h.Add(x);
  stats::SampleStats exact = stats::Summarize(v);
  stats::SampleStats approx = h.Stats();
  EXPECT_EQ(approx.count, exact.count);
  EXPECT_DOUBLE_EQ(approx.min, exact.min);
  EXPECT_DOUBLE_EQ(approx.max, exact.max);
  for (double p : stats::kStandardPercentiles) {
    EXPECT_LE(std::abs(approx.AtStandardPercentile(p) - exact.AtStandardPercentile(p)) /
                  exact.AtStandardPercentile(p),
              0.01)
        << p;
  }
  EXPECT_NEAR(approx.stddev, exact.stddev, 0.01 * exact.stddev);
}

TEST(LogHistogram, MergeEqualsHistogramOfUnion) {
  std::vector<double> a = LognormalSamples(3000, 3), b = LognormalSamples(4000, 4);
  LogHistogram ha, hb, hu;
  for (double x : a) ha.Add(x), hu.Add(x);
  for (double x : b) hb.Add(x), hu.Add(x);
  ha.Add(0.0);
  hu.Add(0.0);
  ASSERT_TRUE(ha.Merge(hb).ok());
  EXPECT_TRUE(ha.SameBuckets(hu));
  EXPECT_EQ(ha.count(), hu.count());
  EXPECT_EQ(ha.min(), hu.min());
  EXPECT_EQ(ha.max(), hu.max());
  EXPECT_NEAR(ha.sum(), hu.sum(), 1e-9 * hu.sum());
  for (double p : stats::kStandardPercentiles) EXPECT_DOUBLE_EQ(ha.Percentile(p), hu.Percentile(p));
  // A different histogram is detected.
  hu.Add(5.0);
  EXPECT_FALSE(ha.SameBuckets(hu));
}

TEST(LogHistogram, MergeRejectsDifferentOptions) {
  LogHistogram a, b(HistogramOptions{.lowest = 1e-3, .highest = 1e9, .sub_buckets = 16});
  b.Add(3);
  EXPECT_FALSE(a.Merge(b).ok());
  EXPECT_EQ(a.count(), 0u);
}

TEST(LogHistogram, UnderflowOverflowNanAndEmpty) {
  LogHistogram h(HistogramOptions{.lowest = 1, .highest = 1000, .sub_buckets = 64});
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_TRUE(h.Stats().empty());
  h.Add(0);
  h.Add(0);
  h.Add(std::nan(""));
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.nan_count(), 1u);
  EXPECT_DOUBLE_EQ(h.Percentile(50), 0);  // clamped to the exact max 0
  h.Add(5000);
  EXPECT_EQ(h.overflow(), 1u);
  EXPECT_DOUBLE_EQ(h.Percentile(100), 5000);
  EXPECT_LE(h.bucket_counts().size(), static_cast<size_t>(h.NumBuckets()));
}

TEST(LogHistogram, MemoryDoesNotGrowWithCount) {
  LogHistogram h;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1e6);
  for (int i = 0; i < 100000; ++i) h.Add(u(rng));
  EXPECT_LE(h.bucket_counts().size(), static_cast<size_t>(h.NumBuckets()));
  EXPECT_LT(h.NumBuckets(), 4000);
}

TEST(LogHistogram, FromPartsRoundTripAndValidation) {
  LogHistogram h;
  for (double x : LognormalSamples(100, 6)) h.Add(x);
  auto r = LogHistogram::FromParts(h.options(), h.bucket_counts(), h.sum(), h.min(), h.max(), 0);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->SameBuckets(h));
  EXPECT_EQ(r->count(), h.count());
  EXPECT_DOUBLE_EQ(r->Percentile(99), h.Percentile(99));
  std::vector<uint64_t> too_many(static_cast<size_t>(h.NumBuckets()) + 1, 1);
  EXPECT_FALSE(LogHistogram::FromParts(h.options(), too_many, 1, 0, 1, 0).ok());
  EXPECT_FALSE(LogHistogram::FromParts(HistogramOptions{.lowest = 0}, {}, 0, 0, 0, 0).ok());
}

}  // namespace
}  // namespace infereng
