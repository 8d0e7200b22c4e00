#include "sweep/saturation.h"

#include <gtest/gtest.h>

namespace infereng::sweep {
namespace {

// `n` one-second samples of an open-loop run at `rate` against a server that completes
// `capacity` per second; queueing delay grows with the backlog.
std::vector<LoadSample> Synthetic(int n, double rate, double capacity, double base_ttft_ms = 50) {
  std::vector<LoadSample> s;
  double backlog = 0;
  for (int i = 0; i < n; ++i) {
    double done = std::min(capacity, rate + backlog);
    backlog += rate - done;
    double ttft = base_ttft_ms + (capacity > 0 ? backlog / capacity * 1000 : 0);
    s.push_back({.t_s = double(i), .width_s = 1, .sent = rate, .completed = done, .in_flight = backlog + rate * 0.05,
                 .ttft_ms = ttft});
  }
  return s;
}

TEST(SaturationTest, OverloadedRunIsSaturated) {
  auto s = Synthetic(30, 12, 8);
  SaturationVerdict v = DetectSaturation(s);
  EXPECT_TRUE(v.saturated) << v.reason;
  EXPECT_NEAR(v.completion_rate, 8, 1e-9);
  EXPECT_NEAR(v.send_rate, 12, 1e-9);
  EXPECT_GT(v.backlog_slope, 3);
  EXPECT_NE(v.reason.find("over-saturated"), std::string::npos);
}

TEST(SaturationTest, HealthyRunIsNot) {
  SaturationVerdict v = DetectSaturation(Synthetic(30, 6, 8));
  EXPECT_FALSE(v.saturated) << v.reason;
  EXPECT_NE(v.reason.find("keeping up"), std::string::npos);
}

TEST(SaturationTest, NoisyButStableRunIsNot) {
  // Completions lag in bursts but there is no trend in backlog or latency.
  std::vector<LoadSample> s;
  for (int i = 0; i < 30; ++i) {
    double done = i % 2 ? 13 : 7;
    s.push_back({.t_s = double(i), .sent = 10, .completed = done, .in_flight = i % 2 ? 3.0 : 6.0,
                 .ttft_ms = i % 2 ? 60.0 : 90.0});
  }
  EXPECT_FALSE(DetectSaturation(s).saturated);
}

TEST(SaturationTest, ShortfallWithoutGrowthIsNotSaturated) {
  // A server that drops work quietly: fewer completions, but no backlog or latency growth.
  std::vector<LoadSample> s;
  for (int i = 0; i < 12; ++i) s.push_back({.t_s = double(i), .sent = 10, .completed = 5, .in_flight = 2, .ttft_ms = 40});
  SaturationVerdict v = DetectSaturation(s);
  EXPECT_FALSE(v.saturated);
  EXPECT_NE(v.reason.find("no growing backlog"), std::string::npos);
}

TEST(SaturationTest, StalledServerIsSaturated) {
  std::vector<LoadSample> s;
  for (int i = 0; i < 12; ++i) {
    s.push_back({.t_s = double(i), .sent = 10, .completed = i < 4 ? 10.0 : 0.0, .in_flight = i < 4 ? 1.0 : 10.0 * (i - 3),
                 .ttft_ms = i < 4 ? 50.0 : -1});
  }
  EXPECT_TRUE(DetectSaturation(s).saturated);
}

TEST(SaturationTest, RampUpOfInFlightIsNotSaturation) {
  // Long requests: in-flight climbs for the first seconds while nothing completes yet,
  // then holds steady at rate × latency.
  std::vector<LoadSample> s;
  for (int i = 0; i < 12; ++i) {
    double in_flight = std::min(i + 1, 4) * 10.0;
    double done = i < 3 ? 0 : 8.9;  // late completions 11% short (noise)
    s.push_back({.t_s = double(i), .sent = 10, .completed = done, .in_flight = in_flight});
  }
  EXPECT_FALSE(DetectSaturation(s).saturated) << DetectSaturation(s).reason;
}

TEST(SaturationTest, TooFewSamplesNeverGuesses) {
  auto s = Synthetic(4, 100, 1);
  SaturationVerdict v = DetectSaturation(s);
  EXPECT_FALSE(v.saturated);
  EXPECT_NE(v.reason.find("too few samples"), std::string::npos);
  EXPECT_FALSE(DetectSaturation({}).saturated);
}

TEST(SaturationTest, AdaptsSummaryTimeseries) {
  std::vector<metrics::TimeBucket> b(2);
  b[0] = {.start_s = 0, .width_s = 2, .sent = 4, .completed = 3, .errors = 1, .in_flight = 1.5, .ttft_count = 3,
          .ttft_mean_ms = 70};
  b[1].start_s = 2;
  auto s = SamplesFromTimeseries(b);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].completed, 4);
  EXPECT_EQ(s[0].ttft_ms, 70);
  EXPECT_EQ(s[1].ttft_ms, -1);
  EXPECT_EQ(s[0].width_s, 2);
}

}  // namespace
}  // namespace infereng::sweep
