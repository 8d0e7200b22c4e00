// Emission-lateness percentiles use the one percentile rule (core/histogram.h); the
// recorder's own 1 µs buckets stopped at 100 ms and answered "max" for any percentile
// that fell beyond.
#include "serve/prom_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/stats.h"

namespace infereng::serve {
namespace {

TEST(LatenessRecorder, PercentilesFollowTheOneRuleAtAnyScale) {
  LatenessRecorder r;
  std::vector<double> raw;
  for (int i = 1; i <= 10; ++i) {  // 200 ms .. 2 s: beyond the old 100 ms range
    r.Record(i * 200 * kNanosPerMilli);
    raw.push_back(static_cast<double>(i * 200 * kNanosPerMilli));
  }
  r.Record(3 * kNanosPerMicro);
  raw.push_back(static_cast<double>(3 * kNanosPerMicro));
  std::sort(raw.begin(), raw.end());
  EXPECT_EQ(r.count(), 11);
  EXPECT_EQ(r.max(), 2000 * kNanosPerMilli);
  for (double p : {50.0, 90.0, 99.0}) {
    const double want = stats::PercentileSorted(raw, p);
    EXPECT_NEAR(static_cast<double>(r.Percentile(p)), want, want * 0.008) << "p" << p;
  }
  r.Record(-5);  // clock skew: counted as on time
  EXPECT_EQ(r.count(), 12);
  r.Clear();
  EXPECT_EQ(r.count(), 0);
  EXPECT_EQ(r.Percentile(99), 0);
}

}  // namespace
}  // namespace infereng::serve
